/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state.h - what `quorum watch` must remember across a crash: messages
 * seen, series and their review status, and every reply, recorded as
 * intended before delivery and marked sent after (SQLite, WAL).
 */
#ifndef QUORUM_STATE_H
#define QUORUM_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "mailparse/sb.h"

struct state;

/* Open (creating) the db at path; parent directories are made. 0 or -1. */
int state_open(struct state **out, const char *path, struct errmsg *err);
void state_close(struct state *st);

/* The default path: $XDG_STATE_HOME/quorum/state.db. Caller frees. */
char *state_default_path(void);

/* One transaction around several calls; 0 or -1. */
int state_begin(struct state *st);
int state_commit(struct state *st);
void state_rollback(struct state *st);

/*
 * Record message msgid of list as seen at now (kept when already seen);
 * *first_seen gets the time it was first seen. 0 or -1.
 */
/* As state_message_seen(), recording nothing: *first_seen is now if new. */
int state_message_first_seen(struct state *st, const char *msgid, int64_t now,
			     int64_t *first_seen);
int state_message_seen(struct state *st, const char *msgid, const char *list,
		       int64_t now, int64_t *first_seen);

enum series_status {
	SERIES_NEW = 0,	 /* no row */
	SERIES_WAITING,	 /* incomplete, waiting for the rest */
	SERIES_REVIEWED, /* answered (a reply is recorded) */
	SERIES_SKIPPED,	 /* not reviewed, on purpose (muted, superseded) */
	SERIES_FAILED,	 /* could not be reviewed (apply failure is REVIEWED) */
};

struct series_row {
	bool exists; /* a row was found */
	enum series_status status;
	char list[128];	  /* the list it was recorded for */
	char thread[128]; /* notmuch thread id, to look at it again */
	char reply_msgid[256];
	int generation; /* reruns asked for */
};

/* Look up series key; row->status is SERIES_NEW when absent. 0 or -1. */
int state_series_get(struct state *st, const char *key, struct series_row *row);
/* Insert or update series key. patch_ids may be NULL. 0 or -1. */
int state_series_set(struct state *st, const char *key, const char *list,
		     const char *thread, enum series_status status,
		     const char *patch_ids, const char *reply_msgid,
		     int64_t now);
/*
 * The reply Message-ID of another reviewed series of list with the same
 * patch_ids (a RESEND), copied into out; 1 when found, 0 when not, -1
 * on error.
 */
int state_series_same_patches(struct state *st, const char *key,
			      const char *list, const char *patch_ids,
			      char *out, size_t outsz);
/*
 * The threads of other series of list whose patches include
 * patch_id (a prerequisite-patch-id: of a series), appended to
 * *threads (caller frees each and the array) while *n < max, never one
 * twice nor not_thread. 0, or -1 on a state error.
 */
int state_threads_with_patch(struct state *st, const char *list,
			     const char *patch_id, const char *not_thread,
			     char ***threads, size_t *n, size_t max);
/* A rerun: the series is new again, in its next generation. 0 or -1. */
int state_series_rerun(struct state *st, const char *key, int64_t now);

/*
 * Has mail of list come DKIM-signed (then its commands want a signature
 * by default)? 1, 0, or -1 on error; _add records that it has, for good.
 */
int state_list_signed(struct state *st, const char *list);
int state_list_signed_add(struct state *st, const char *list, int64_t now);

/* Record email command msgid; 1 when new, 0 when done before, -1 error. */
int state_command_once(struct state *st, const char *msgid, int64_t now);
/* Was email command msgid carried out? 1, 0, or -1; nothing recorded. */
int state_command_done(struct state *st, const char *msgid);
/* Mute address on list (case-insensitive). 0 or -1. */
int state_mute_add(struct state *st, const char *list, const char *address,
		   int64_t now);
/* Unmute address on list; 1 when it was muted, 0 when not, -1 on error. */
int state_mute_remove(struct state *st, const char *list, const char *address);
/* 1 when address is muted on list, 0 when not, -1 on error. */
int state_is_muted(struct state *st, const char *list, const char *address);

/*
 * Has a series of list with these patch_ids already had an "unchanged
 * since" note? 1 yes, 0 no, -1 on error.
 */
int state_series_unchanged_noted(struct state *st, const char *list,
				 const char *patch_ids);
/* Call fn for each thread id of a series of list that is waiting. */
int state_series_waiting(struct state *st, const char *list,
			 int (*fn)(void *arg, const char *thread), void *arg);

enum reply_state {
	REPLY_INTENDED = 0, /* recorded, not confirmed delivered */
	REPLY_SENT,	    /* delivered (or written to the outbox) */
	REPLY_HELD,	    /* gave up after too many failures; in the outbox */
};

/* Record a reply before delivery (state intended). 0 or -1. */
int state_reply_add(struct state *st, const char *msgid, const char *key,
		    const char *list, const char *author, const char *method,
		    const char *raw, size_t len, int64_t now);
/* Replies recorded for list (and author, when not NULL) since since. */
long state_replies_since(struct state *st, const char *list, const char *author,
			 int64_t since);
/* Mark a reply sent at now. 0 or -1. */
int state_reply_sent(struct state *st, const char *msgid, int64_t now);
/*
 * A delivery failed: count it, keep the reason, retry after next_try;
 * held marks it given up. 0 or -1.
 */
int state_reply_failed(struct state *st, const char *msgid, const char *reason,
		       int64_t next_try, bool held);

struct reply_row {
	char *msgid;
	char *list;
	char *method;
	char *raw;
	size_t len;
	int attempts;
};

/*
 * Call fn for each reply still intended whose next try is due at now.
 * Stops at fn's first nonzero result and returns it; -1 on db error.
 */
int state_replies_pending(struct state *st, int64_t now,
			  int (*fn)(void *arg, const struct reply_row *r),
			  void *arg);

/*
 * A finding's fingerprint (list, author, file, function, category,
 * quoted code; bot/watch-fingerprint.c) is recorded for the reply that
 * mailed it in full, in the transaction that records that reply.
 */
struct fingerprint_row {
	char reply_msgid[256];
	int version;	 /* of the series that reply answered */
	char title[256]; /* ... and its title */
};

/*
 * Record fp as mailed in full in reply_msgid, for series key (version,
 * title) of list. The first reply to mail it is kept while it counts;
 * one recorded before since (expired) or whose reply was held is
 * replaced. 0 or -1.
 */
int state_fingerprint_add(struct state *st, const char *fp, const char *list,
			  const char *key, const char *reply_msgid, int version,
			  const char *title, int64_t now, int64_t since);
/*
 * The reply that mailed fp in full for a series other than key (a rerun
 * of key itself shows its findings again) at since or later, not
 * counting replies held undelivered. 1 with row filled, 0 when none, -1
 * on error.
 */
int state_fingerprint_get(struct state *st, const char *fp, const char *key,
			  int64_t since, struct fingerprint_row *row);
/*
 * Forget list's fingerprints recorded before before, and all but the
 * newest max. 0 or -1.
 */
int state_fingerprints_prune(struct state *st, const char *list, int64_t before,
			     long max);

/* Count rows: replies in state s (-1: all), or series in status. */
long state_count_replies(struct state *st, int s);

/* mode = digest: one line for series key of list, once. 0 or -1. */
int state_digest_add(struct state *st, const char *key, const char *list,
		     const char *line, int64_t now);
/*
 * Is a digest of list due at now (period seconds after the last one, or
 * after the first line waiting when there was none)? 1 with the lines
 * appended to lines and their count in *n, 0 when not, -1 on error.
 */
int state_digest_due(struct state *st, const char *list, int64_t now,
		     int64_t period, struct sb *lines, size_t *n);
/* The waiting lines of list went out in digest msgid. 0 or -1. */
int state_digest_mark(struct state *st, const char *list, const char *msgid,
		      int64_t now);

/* The last SQLite error of st, for messages. */
const char *state_error(struct state *st);

#endif
