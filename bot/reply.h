/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reply.h - the review as a reply in the series' thread, and the daily
 * digest (bot/reply.c), built with GMime so no byte of the original mail
 * can add a header of its own.
 */
#ifndef QUORUM_REPLY_H
#define QUORUM_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "mailparse/mailparse.h"
#include "review/review.h"

/* The earlier reply that mailed a finding in full. */
struct reply_earlier {
	const char *msgid; /* its Message-ID; NULL: the finding is new */
	int version;	   /* of the series it answered */
	const char *title; /* ... and that series' title */
};

struct reply_opts {
	/* the reply's own headers */
	const char *from;	 /* "quorum <quorum@DOMAIN>" */
	const char *domain;	 /* of quorum's Message-IDs */
	const char *msgid;	 /* the reply's Message-ID, without <> */
	const char *prompt_hash; /* X-Quorum-Prompt: "none" or a hash */
	int64_t now;

	/* who receives it */
	const char *list_address;	/* the list's address */
	bool to_author, to_list;	/* reply-to policy */
	const char *const *maintainers; /* more Cc, may be NULL */
	size_t nmaintainers;

	/* what it says besides the findings */
	const char *unchanged_since; /* a RESEND: Message-ID of the earlier
					reply, or NULL for a review */
	/*
	 * Nonzero: explain finding N (1-based) in detail; -1 or a number
	 * past the findings: say there is no such finding, naming
	 * explain_arg (N as the command wrote it, already made safe).
	 */
	int explain;
	const char *explain_arg;
	/*
	 * The #quorum command mail this answers, or NULL: the reply goes
	 * in reply to it (In-Reply-To, References); with sender_only, To
	 * its sender alone, never the list.
	 */
	const struct mp_patch *command;
	bool sender_only;
	/*
	 * The command's sender as checked (bot/watch-sender.c): answers go
	 * to this address, never to the mail's in-body From:; NULL: the
	 * command's author. command_said (may be NULL) says how the sender
	 * was verified, in an explanation.
	 */
	const char *command_name, *command_addr;
	const char *command_said;
	/* declared prerequisite-message-ids not in the database */
	const char *const *missing_prereqs;
	size_t nmissing_prereqs;
	/*
	 * Per finding of the review (r->findings.n entries), the earlier
	 * reply that mailed it in full; such findings are listed in one
	 * line each, not repeated. NULL: every finding in full.
	 */
	const struct reply_earlier *earlier;
};

#define REPLY_OPTS_INIT                                                        \
	{                                                                      \
		.from = NULL,                                                  \
	}

/*
 * Compose the reply to series s reviewed as r (r may be NULL for an
 * "unchanged since" note) into out (RFC 5322, LF line ends). 0 or -1.
 */
int reply_compose(struct sb *out, const struct mp_series *s,
		  const struct rv_review *r, const struct reply_opts *o,
		  struct errmsg *err);

/*
 * A short note in reply to the #quorum command mail cmd, To its sender
 * only (From o->from, Message-ID o->msgid): text, then a footer. 0 or -1.
 */
int reply_compose_note(struct sb *out, const struct mp_patch *cmd,
		       const char *text, const struct reply_opts *o,
		       struct errmsg *err);

/*
 * The daily digest of list (mode = digest): From o->from, To the
 * maintainers, Message-ID o->msgid; lines (n of them) are the series
 * reviewed, one paragraph each. 0 or -1.
 */
int reply_compose_digest(struct sb *out, const char *list, const char *lines,
			 size_t n, const struct reply_opts *o,
			 struct errmsg *err);

#endif
