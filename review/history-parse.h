/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * history-parse.h - what a commit message says about earlier commits:
 * `Fixes:` trailers in their many spellings, and reverts.
 */
#ifndef QUORUM_HISTORY_PARSE_H
#define QUORUM_HISTORY_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* One commit a message names as the one it fixes or reverts. */
struct hist_ref {
	char id[41];   /* hex as written (7..40 digits), "" when none */
	char *subject; /* the quoted subject, or NULL */
	bool is_revert;
};

struct hist_refs {
	struct hist_ref *v;
	size_t n, alloc;
	size_t not_commit; /* Fixes: lines naming no commit (a URL, a bug) */
};

/*
 * Read the references of a commit message (subject is its first line,
 * for `Revert "..."`). At most HIST_MAX_FIXES_PER_COMMIT are kept; the
 * message is read up to HIST_MAX_MSG bytes. Release with
 * hist_refs_release().
 */
void hist_parse_refs(const char *message, const char *subject,
		     struct hist_refs *out);
void hist_refs_release(struct hist_refs *r);

/* Does the line look like a trailer ("Word-Word: value")? */
bool hist_is_trailer_line(const char *line, size_t len);

#endif
