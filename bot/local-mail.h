/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local-mail.h - mail read from the local notmuch database: the thread of
 * `quorum review MESSAGE-ID|URL` (opened read-only), and the threads of a
 * series' prerequisites for `quorum watch`. quorum never fetches mail.
 */
#ifndef QUORUM_LOCAL_MAIL_H
#define QUORUM_LOCAL_MAIL_H

#include "config.h"
#include "mailparse/mailparse.h"

enum local_mail_status {
	LOCAL_MAIL_SPEC = -1,	   /* neither a message-id nor a URL with one */
	LOCAL_MAIL_NOT_FOUND = -2, /* not in the database */
	LOCAL_MAIL_DB = -3, /* no database, or it cannot be opened or read */
	LOCAL_MAIL_NO_SERIES =
		-4, /* found, but no series holds or answers it */
};

/*
 * Read into *set every message of the thread of the message spec names
 * and, following prerequisite-message-id: lines of its series (5 deep),
 * the threads of prerequisites that are in the database; a missing one
 * is named in a warning. *target (caller frees) is the message-id of the
 * cover or first patch of the series the named message belongs to or
 * answers: review that series only (mp_series_has_msgid()). Prints a
 * note when the thread holds a newer version of it. Config:
 * notmuch.database, else notmuch's own config (NOTMUCH_CONFIG).
 * 0 with *set (mp_set_free()), or a negative enum local_mail_status
 * with err.
 */
int local_mail_read(struct qconfig *cfg, const char *spec, struct mp_set **set,
		    char **target, struct errmsg *err);

/*
 * Which mail a lookup may use: keep(arg, path) is true for a message
 * file it may read. A prerequisite whose own message it may not read is
 * "not in the database", exactly as one that is not there.
 */
struct local_mail_filter {
	bool (*keep)(void *arg, const char *path);
	void *arg;
};

/*
 * The threads of the prerequisites series s declares with
 * prerequisite-message-id: lines, and of theirs in turn (5 deep, at most
 * 16 threads of at most 2000 messages each), plus the nextra threads of
 * extra (ids; the caller found them by prerequisite-patch-id:), read from
 * db (open, only read; nothing in it changes) into *set as one input.
 * thread (may be NULL) is s's own thread, which is not read again.
 * Nothing is printed: the ids that are not in the database go to
 * *missing (caller frees each and the array). Returns the number of threads
 * read; *set is NULL when none was (else mp_set_free()). With filter
 * (may be NULL), only the messages it keeps are read, and a
 * prerequisite-message-id whose message it does not keep is missing.
 */
struct _notmuch_database;
int local_mail_prereqs(struct _notmuch_database *db, const struct mp_series *s,
		       const char *thread, char *const *extra, size_t nextra,
		       const struct local_mail_filter *filter,
		       struct mp_set **set, char ***missing, size_t *nmissing);

#endif
