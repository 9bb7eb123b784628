/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mailparse.h - list mail -> patches -> series.
 *
 * Reads the mail a patch list really carries (git send-email, b4, web
 * mailers; inline or attached diffs; `git show` output; AUTOSEL-style
 * mails with a review after `---`) into plain structs that own their
 * memory. No GMime object ever leaves this module.
 *
 * Errors: functions return 0 (or a count) on success, or a negative
 * enum mp_status; they fill a caller-provided struct errmsg (may be NULL)
 * with one sentence a person can act on.
 */
#ifndef QUORUM_MAILPARSE_H
#define QUORUM_MAILPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sb.h"

enum mp_status {
	MP_OK = 0,
	MP_ERR_NOMEM = -1,
	MP_ERR_IO = -2,	       /* cannot read a file */
	MP_ERR_TOO_BIG = -3,   /* over one of struct mp_limits */
	MP_ERR_EMPTY = -4,     /* no bytes, or no message at all */
	MP_ERR_NOT_MAIL = -5,  /* binary or not RFC 822 at all */
	MP_ERR_NOT_PATCH = -6, /* a message, but no diff in it */
	MP_ERR_MALFORMED = -7, /* a diff that cannot be read */
};

/* Caps on what one message may make us allocate. */
struct mp_limits {
	size_t max_message;	/* bytes of one raw message */
	size_t max_headers;	/* header fields in one message */
	size_t max_mime_depth;	/* nesting of multiparts */
	size_t max_attachments; /* MIME parts in one message */
	size_t max_diff;	/* bytes of the diff of one patch */
};

#define MP_LIMITS_INIT                                                         \
	{                                                                      \
		.max_message = (size_t)64 << 20, .max_headers = 1000,          \
		.max_mime_depth = 16, .max_attachments = 64,                   \
		.max_diff = (size_t)32 << 20,                                  \
	}

struct mp_trailer {
	char *key;   /* as written, e.g. "Signed-off-by" */
	char *value; /* trimmed */
};

/* What a subject line says, e.g. "[PATCH net-next v3 02/10] foo: bar". */
struct mp_subject {
	char *title;	    /* the clean title: "foo: bar" */
	int version;	    /* 1 when not given */
	int index;	    /* 2; 0 when not numbered */
	int total;	    /* 10; 0 when not numbered */
	bool has_patch_tag; /* [PATCH ...] or [RFC ...] present */
	bool rfc;
	bool resend;
	bool reply;  /* started with Re:/Aw:/Fwd: etc. */
	char **tags; /* other bracketed words: "net-next", "bpf", "AUTOSEL" */
	size_t ntags;
};

enum mp_kind {
	MP_KIND_PATCH, /* carries a diff */
	MP_KIND_COVER, /* n = 0 of a series, or a cover with no diff */
	MP_KIND_REPLY, /* a reply in a thread, no diff */
	MP_KIND_PULL,  /* git request-pull output */
	MP_KIND_OTHER, /* anything else */
};

/* Repairs made (or refused) while reading a message. */
enum mp_repair {
	MP_REPAIRED_CRLF = 1 << 0,
	MP_REPAIRED_FLOWED = 1 << 1,
	/* undeclared 8-bit bytes decoded by guess */
	MP_CHARSET_GUESSED = 1 << 2,
	MP_DIFF_FROM_ATTACHMENT = 1 << 3,
	MP_FROM_GIT_SHOW = 1 << 4, /* `commit <sha>` header, not mail */
	MP_FLOWED_UNSAFE = 1 << 5, /* format=flowed diff left as is */
};

/*
 * One message, understood. Every string is NUL-terminated UTF-8 owned by
 * the struct, or NULL when absent. Free with mp_patch_free().
 */
struct mp_patch {
	enum mp_kind kind;
	/* The mail and its thread. */
	char *message_id;  /* without <>; "quorum-<hash>@local" when none */
	char *in_reply_to; /* without <> */
	char **references; /* without <>, oldest first */
	size_t nreferences;
	char *list_id; /* List-Id, when present */
	/* Auto-Submitted other than "no", or Precedence: bulk/junk/list-auto */
	bool auto_submitted;
	/* Who and when. */
	char *from;	   /* decoded "Name <addr>" of the mail */
	char *author_name; /* from the in-body From: when present, else mail */
	char *author_email;
	char *date;	   /* the Date header as written (RFC 2822) */
	int64_t timestamp; /* seconds since the epoch; 0 when unknown */
	int tz_offset;	   /* minutes east of UTC */
	/* What it says. */
	char *subject_raw; /* decoded, unfolded */
	struct mp_subject subject;
	/*
	 * As git am commits it: the title, a blank line, the body up to
	 * `---` with trailers, after git stripspace (trailing whitespace
	 * cut, blank runs merged, no leading/trailing blank line), ending
	 * in a newline.
	 */
	char *commit_message;
	/* Text after `---` before the diff (diffstat, AUTOSEL review). */
	char *notes;
	struct mp_trailer *trailers; /* trailers of the commit message */
	size_t ntrailers;
	/* Trailers sent later as replies in the thread. */
	struct mp_trailer *followups;
	size_t nfollowups;
	/*
	 * The unified diff, from the first `diff --git` or `--- `: the bytes
	 * as sent (transfer-decoded, CRLF repaired, never charset-converted),
	 * so it applies byte-exact like git am; it may hold non-UTF-8 bytes.
	 */
	char *diff;
	size_t diff_len;
	/*
	 * A checksum of diff, set when a collector that keeps no bodies
	 * drops it (mp_collector_set_keep_bodies()), so that two postings
	 * can still be compared; 0 otherwise.
	 */
	uint64_t diff_hash;
	/* Paths touched (post-image name; pre-image for deletions). */
	char **files;
	size_t nfiles;
	unsigned repairs; /* enum mp_repair bits */
	/* Where it applies: b4 and format-patch metadata. */
	char *commit_id; /* from a `From <sha> <date>` line or `commit <sha>` */
	char *base_commit;	 /* `base-commit:` */
	char *change_id;	 /* `change-id:` */
	char **prereq_patch_ids; /* `prerequisite-patch-id:` */
	size_t nprereq_patch_ids;
	char **prereq_message_ids; /* `prerequisite-message-id:`, without <> */
	size_t nprereq_message_ids;
	/* `prerequisite-change-id:` (b4 >= 0.14): "ID" or "ID:vN" */
	char **prereq_change_ids;
	size_t nprereq_change_ids;
};

/*
 * Parse one raw message (RFC 822 bytes, or `git show` / `git log -p`
 * output) into *out. Messages with no diff still parse (kind COVER, REPLY,
 * PULL or OTHER); the caller decides whether that is an error. A mail
 * that is not text at all returns MP_ERR_NOT_MAIL.
 * lim may be NULL for MP_LIMITS_INIT. Caller frees *out with mp_patch_free().
 */
int mp_patch_parse(struct mp_patch **out, const char *raw, size_t len,
		   const struct mp_limits *lim, struct errmsg *err);

void mp_patch_free(struct mp_patch *p);

/* Parse a subject line into s (caller releases with mp_subject_release()). */
void mp_subject_parse(struct mp_subject *s, const char *subject);
void mp_subject_release(struct mp_subject *s);

/*
 * Split the trailers off the last paragraph of a commit message.
 * Returns the number found (>= 0) and appends them to *arr / *n.
 */
size_t mp_trailers_parse(const char *message, struct mp_trailer **arr,
			 size_t *n);

/* Value of the first trailer named key (case-insensitive), or NULL. */
const char *mp_trailer_get(const struct mp_trailer *arr, size_t n,
			   const char *key);

/*
 * Streaming reader over an mbox (mboxo or mboxrd: `>From ` unescaped),
 * a single message file with no From_ line, or a maildir directory.
 * Memory stays bounded by the largest message, not the file size.
 */
struct mp_mbox;

/* Open path ("-" is standard input). Caller frees with mp_mbox_free(). */
int mp_mbox_open(struct mp_mbox **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err);
/* Read from an open stream the caller keeps owning. */
int mp_mbox_open_fp(struct mp_mbox **out, FILE *fp, const char *name,
		    const struct mp_limits *lim, struct errmsg *err);
/*
 * Read the next message into msg (reset first). Returns 1 when a message
 * was read, 0 at the end, or a negative mp_status; MP_ERR_TOO_BIG skips
 * the oversized message (the next call goes on with the one after it).
 * *where (may be NULL) is set to a description such as "FILE message 3".
 */
int mp_mbox_next(struct mp_mbox *mb, struct sb *msg, const char **where);
void mp_mbox_free(struct mp_mbox *mb);

/* A series: a cover letter (maybe absent) and patches 1..total. */
struct mp_series {
	struct mp_patch *cover; /* NULL when there is none */
	/* Ordered by index; NULL holes for missing. */
	struct mp_patch **patches;
	/* Length of patches[] (== total for numbered series). */
	size_t npatches;
	int version;
	int total;     /* m of n/m; 1 for a single unnumbered patch */
	bool complete; /* every index 1..total present */
	int *missing;  /* indexes not present */
	size_t nmissing;
	/*
	 * Not to be reviewed: a newer version of this series is in the same
	 * set, or it was posted twice (see repost_of) and the other posting
	 * is the one to review.
	 */
	bool superseded;
	/*
	 * 1 + the index in mp_set.series of an earlier posting of the same
	 * version and total that this one was sent again in reply to (a
	 * resend in its thread); 0 when none. resend: both postings carry
	 * the same patches (titles, files, diffs when kept); then the
	 * earlier one is reviewed, unless this one has more of its patches.
	 */
	size_t repost_of;
	bool resend;
	struct mp_trailer *followups; /* trailers sent to the cover letter */
	size_t nfollowups;
};

/* What reading some mail produced: series, plus the mails we could not use. */
struct mp_error_entry {
	char *where;   /* "FILE message N" or the message-id */
	char *message; /* one sentence */
};

struct mp_set {
	struct mp_series **series; /* oldest first; newest version last */
	size_t nseries;
	struct mp_patch **others; /* replies, pull requests, non-patches kept */
	size_t nothers;
	struct mp_error_entry *errors;
	size_t nerrors;
};

/* Series assembly: add messages, then finish. */
struct mp_collector;

struct mp_collector *mp_collector_new(void);
/* Takes ownership of p in every case. */
void mp_collector_add(struct mp_collector *c, struct mp_patch *p);
/*
 * Keep each patch's diff, commit message and notes (the default: true)?
 * With false the collector drops them as soon as a message is added and
 * keeps only metadata (ids, subject, author, files, trailers, base-commit,
 * and the commit message of a patch or cover when under 256 KiB), so
 * reading a huge mbox stays within bounded memory (`quorum parse`).
 * Follow-up trailers of replies are still collected. Cannot fail.
 */
void mp_collector_set_keep_bodies(struct mp_collector *c, bool keep);
/* Record a message that could not be used. */
void mp_collector_error(struct mp_collector *c, const char *where,
			const char *message);
/*
 * Group what was added into series (by thread, then by sender + version +
 * total), attach follow-up trailers, mark superseded versions. Frees c.
 * Caller frees the result with mp_set_free().
 */
struct mp_set *mp_collector_finish(struct mp_collector *c);

void mp_set_free(struct mp_set *set);

/*
 * Messages named on the command line (mailparse/msgid.c). An argument
 * that is not an existing file is meant as a message when it is <ID>,
 * has an '@', is an http(s):// URL, or is too long or odd (control
 * characters) to be a path a user typed (mp_msgid_is_spec()), so that
 * mp_msgid_from_spec() refuses it in one line.
 */
#define MP_MSGID_MAX 998 /* RFC 5322 line limit: no id or URL is longer */
bool mp_msgid_is_spec(const char *arg);
/*
 * The message-id (without <>) that spec names: <ID>, ID (an '@', no
 * '/'), or a public-inbox URL (https://lore.kernel.org/LIST/ID/...,
 * .../r/ID, https://patch.msgid.link/ID), percent-decoded; at most
 * MP_MSGID_MAX bytes of printable ASCII. 0 with *id (caller frees), or
 * -1 with err.
 */
int mp_msgid_from_spec(const char *spec, char **id, struct errmsg *err);
/*
 * A message-id (without <>) safe to write between <> in a header:
 * printable ASCII, no space, <>, '"' or '\\', 1 to MP_MSGID_ID_MAX bytes
 * (false for NULL).
 */
#define MP_MSGID_ID_MAX 250
bool mp_msgid_valid(const char *id);
/*
 * s for a one-line message, made visible as sb_add_visible() does, cut
 * with "..." to fit size.
 */
const char *mp_shown(const char *s, char *buf, size_t size);
/* Is code point cp one sb_add_visible() shows as <U+XXXX>? */
bool mp_codepoint_hidden(long cp);
/* The most bytes of s, up to max, that end on a UTF-8 character. */
size_t mp_utf8_cut(const char *s, size_t max);
/* Is v the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*)? */
bool mp_env_name_ok(const char *v);
/*
 * Does v look like an API key or token rather than a name (a known key
 * prefix such as sk- or ghp_, or a long run of letters and digits
 * mixed)? Such a value is never echoed in a message.
 */
bool mp_looks_like_key(const char *v);

/* The cover letter, else the first patch present; NULL when none. */
const struct mp_patch *mp_series_first(const struct mp_series *s);
/* The clean title, else the subject as written; NULL when none. */
const char *mp_patch_title(const struct mp_patch *p);
/* Is id (without <>) the message-id of s's cover or one of its patches? */
bool mp_series_has_msgid(const struct mp_series *s, const char *id);
/*
 * The title of mp_series_first(s), or of the first patch when the cover
 * letter's subject is format-patch's untouched "*** SUBJECT HERE ***";
 * NULL when none.
 */
const char *mp_series_title(const struct mp_series *s);

/*
 * Convenience: read every message of path (mbox, single message, maildir
 * or "-") and assemble series. Unreadable or over-cap messages are listed
 * in (*out)->errors, not fatal. Returns 0, or a negative mp_status when
 * the file itself cannot be read.
 */
int mp_read_path(struct mp_set **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err);

/*
 * Add every message of path to an existing collector (for several FILEs).
 * Returns the number of messages read (> 0), MP_ERR_IO when path cannot
 * be opened or read, or MP_ERR_EMPTY when it holds no message at all; a
 * message that cannot be parsed or is over a cap becomes an errors entry.
 */
int mp_collect_path(struct mp_collector *c, const char *path,
		    const struct mp_limits *lim, struct errmsg *err);

#endif
