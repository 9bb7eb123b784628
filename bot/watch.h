/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.h - `quorum watch` internals: reply composition and delivery.
 */
#ifndef QUORUM_WATCH_H
#define QUORUM_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "quorum.h"

/* ---- reply composition (bot/reply.c) ---------------------------------- */

/* norepeat: the earlier reply that mailed a finding in full. */
struct reply_earlier {
	const char *msgid; /* its Message-ID; NULL: the finding is new */
	int version; /* of the series it answered */
	const char *title; /* ... and that series' title */
};

struct reply_opts {
	const char *from; /* "quorum <quorum@DOMAIN>" */
	const char *domain; /* of quorum's Message-IDs */
	const char *msgid; /* the reply's Message-ID, without <> */
	const char *list_address; /* the list's address */
	bool to_author, to_list; /* reply-to policy */
	const char *const *maintainers; /* more Cc, may be NULL */
	size_t nmaintainers;
	const char *prompt_hash; /* X-Quorum-Prompt: "none" or a hash */
	const char *unchanged_since; /* a RESEND: Message-ID of the earlier
					reply, or NULL for a review */
	int explain; /* > 0: explain finding N (1-based) in detail */
	int64_t now;
	/* prereq: declared prerequisite-message-ids not in the database */
	const char *const *missing_prereqs;
	size_t nmissing_prereqs;
	/*
	 * norepeat: per finding of the review (r->findings.n entries), the
	 * earlier reply that mailed it in full; such findings are listed in
	 * one line each, not repeated. NULL: every finding in full.
	 */
	const struct reply_earlier *earlier;
};

/*
 * Compose the reply to series s reviewed as r (r may be NULL for an
 * "unchanged since" note) into out (RFC 5322, LF line ends). 0 or -1.
 */
int reply_compose(struct sb *out, const struct mp_series *s,
		  const struct rv_review *r, const struct reply_opts *o,
		  struct errmsg *err);

/*
 * The daily digest of list (mode = digest): From o->from, To the
 * maintainers, Message-ID o->msgid; lines (n of them) are the series
 * reviewed, one paragraph each. 0 or -1.
 */
int reply_compose_digest(struct sb *out, const char *list, const char *lines,
			 size_t n, const struct reply_opts *o,
			 struct errmsg *err);

/* The mail the reply answers: the cover, else patch 1, else the first. */
const struct mp_patch *reply_parent(const struct mp_series *s);

/* Is id safe to put in a header between <>: printable, no space or <>? */
bool msgid_is_safe(const char *id);

/* ---- delivery (bot/deliver.c) ----------------------------------------- */

/*
 * Write raw into the maildir dir (made when missing) under a name that
 * derives from msgid: tmp/ then link into new/. A second delivery of the
 * same msgid finds it in new/ or cur/ and writes nothing (returns 0).
 * held_reason, when not NULL, is added as an X-Quorum-Held header.
 * 0 or -1 with err.
 */
int deliver_outbox(const char *dir, const char *msgid, const char *raw,
		   size_t len, const char *held_reason, struct errmsg *err);

/* Is msgid already in the maildir dir? */
bool outbox_has(const char *dir, const char *msgid);

/*
 * Run argv (argv[0] looked up in PATH) with raw on its standard input,
 * no shell. 0 when it exits 0, else -1 with err naming the status.
 */
int deliver_command(char *const argv[], const char *raw, size_t len,
		    struct errmsg *err);

struct smtp_opts {
	const char *url; /* smtp://host:587 or smtps://host:465 */
	const char *mail_from; /* envelope sender address */
	const char *user, *password; /* may be NULL */
	bool starttls; /* require STARTTLS on smtp:// (default) */
};

/*
 * Send raw over SMTP (libcurl) to every To and Cc address in it.
 * 0, or -1 with err (never naming the password).
 */
int deliver_smtp(const struct smtp_opts *o, const char *raw, size_t len,
		 struct errmsg *err);

/*
 * Split a command line from the config into argv on blanks, honouring
 * '...' and "..." quoting (no expansion of any kind). NULL-terminated;
 * caller frees with argv_free(). -1 when empty or quotes are unbalanced.
 */
int argv_split(const char *cmd, char ***out);
void argv_free(char **argv);

#endif
