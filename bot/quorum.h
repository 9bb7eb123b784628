/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quorum.h - the quorum program's internals: command table, config,
 * output helpers. Only bot/ prints, exits, reads config or the environment.
 */
#ifndef QUORUM_BOT_H
#define QUORUM_BOT_H

#include <stdbool.h>

#include "cmd.h"
#include "mailparse/mailparse.h"
#include "review/review.h"

/*
 * Config: git-config syntax, read with libgit2 from $QUORUM_CONFIG, else
 * $XDG_CONFIG_HOME/quorum/config (or ~/.config/quorum/config), then the
 * repo's .git/quorum.conf (which wins).
 */
struct qconfig;

/* repo may be NULL. Returns 0, or -1 with a one-line reason in err. */
int qconfig_load(struct qconfig **out, const char *repo, struct errmsg *err);
void qconfig_free(struct qconfig *cfg);
/* Value of "section.name" or "section.sub.name", or NULL. Owned by cfg. */
const char *qconfig_get(struct qconfig *cfg, const char *key);
/* Integer value, or def when absent; -1 with err when malformed. */
int qconfig_get_int(struct qconfig *cfg, const char *key, int def, int *out,
		    struct errmsg *err);
/*
 * Call fn(arg, NAME) once for each [section "NAME"] in the config, in
 * the order first seen; stops at and returns fn's first nonzero result.
 * (Added by llm, issue 7.)
 */
int qconfig_subsections(struct qconfig *cfg, const char *section,
			int (*fn)(void *arg, const char *name), void *arg);

/* LLM voters from [voter "NAME"] sections (bot/llm-voters.c; llm). */
struct llm_voters {
	struct rv_llm_voter *v;
	size_t n;
	char **owned; /* strings (names, keys) to free; keys are wiped */
	size_t nowned;
};

/*
 * Read every [voter] section whose provider is openai or anthropic,
 * with its key from key-env or a 0600 key-file. 0, or -1 with err (a
 * sentence that never holds a key).
 */
int llm_voters_load(struct qconfig *cfg, struct llm_voters *out,
		    struct errmsg *err);
void llm_voters_release(struct llm_voters *lv);
/*
 * The prompts directory: $QUORUM_PROMPTS, else prompts/ next to (or one
 * up from) the binary, else share/quorum/prompts one up from it, else
 * the compiled-in default. Caller frees.
 */
char *prompts_dir(void);

/* The files that were read, for `quorum review -v`. */
const char *qconfig_sources(struct qconfig *cfg);

/*
 * ci (issue 10, bot/report-json.c): a report in one of the output
 * formats. Reviews are added one by one and the document is written at
 * the end (SARIF lists its rules before the results).
 */
/*
 * One line of mail text for a terminal: C0 controls (tab kept), newlines,
 * DEL and C1 controls (U+0080..U+009F, e.g. CSI) shown as '?'. text_clean
 * returns buf's text (buf is reset first); fput_clean writes it to f.
 */
const char *text_clean(struct sb *buf, const char *s);
void fput_clean(const char *s, FILE *f);

struct report;
/* NULL when memory ran out. Caller frees with report_free(). */
struct report *report_new(enum report_format fmt);
void report_add(struct report *rp, const struct rv_review *r);
/*
 * The same for a review of commits ids[0..n) (`ci`: a run of commits
 * reviewed as one series, oldest first, patch k being ids[k]): the
 * reports say which.
 */
void report_add_commits(struct report *rp, const struct rv_review *r,
			const char (*ids)[RV_OID_HEXSZ + 1], size_t n);
/* A commit `ci` left out of the review (risk < 0: unknown). */
void report_skip(struct report *rp, const char *commit, const char *title,
		 double risk);
/*
 * FMT_EMAIL: the From: and Message-ID domain of the replies (borrowed;
 * NULL: quorum@quorum.invalid), as `quorum watch` has them.
 */
void report_set_email(struct report *rp, const char *from,
		      const char *domain);
/* Write to path (NULL or "-": stdout). 0, or -1 with err. */
int report_write(struct report *rp, const char *path, struct errmsg *err);
void report_free(struct report *rp);

/*
 * A config path with a leading ~/ expanded from $HOME (watch, and the
 * notmuch database of `quorum review MESSAGE-ID`). Caller frees.
 */
char *expand_home(const char *p);

/* Read all of path ("-" for stdin) with a size cap. 0 or -1 with err. */
int read_file_capped(const char *path, size_t cap, struct sb *out,
		     struct errmsg *err);

/*
 * msgid (bot/local-mail.c): `quorum review MESSAGE-ID|URL` reads the
 * named message's thread from the local notmuch database, opened
 * read-only; quorum never fetches mail.
 */
enum local_mail_status {
	LOCAL_MAIL_SPEC = -1, /* neither a message-id nor a URL with one */
	LOCAL_MAIL_NOT_FOUND = -2, /* not in the database */
	LOCAL_MAIL_DB = -3, /* no database, or it cannot be opened or read */
	LOCAL_MAIL_NO_SERIES = -4, /* found, but no series holds or answers it */
};

/*
 * Is arg, which is not an existing file, meant as a message? True for
 * <ID>, anything with an '@', http(s):// URLs, and arguments too long
 * or too odd (control characters) to be a path a user typed, so that
 * local_mail_parse_spec() refuses them in one line.
 */
bool local_mail_is_spec(const char *arg);

/*
 * The message-id (without <>) that spec names: <ID>, ID (an '@', no
 * '/'), or a public-inbox URL (https://lore.kernel.org/LIST/ID/..., .../r/ID,
 * https://patch.msgid.link/ID), percent-decoded. At most 998 bytes of
 * printable ASCII. 0 with *id (caller frees), or LOCAL_MAIL_SPEC with err.
 */
int local_mail_parse_spec(const char *spec, char **id, struct errmsg *err);

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
int local_mail_read(struct qconfig *cfg, const char *spec,
		    struct mp_set **set, char **target, struct errmsg *err);


/*
 * watch: the threads of the prerequisites series s declares with
 * prerequisite-message-id: lines, and of theirs in turn (5 deep, at most
 * 16 threads of at most 2000 messages each), plus the nextra threads of
 * extra (ids; the caller found them by prerequisite-patch-id:), read from
 * db (open, only read; nothing in it changes) into *set as one input.
 * thread (may be NULL) is s's own thread, which is not read again. Nothing is printed:
 * the ids that are not in the database go to *missing (caller frees
 * each and the array). Returns the number of threads read; *set is NULL
 * when none was (else mp_set_free()).
 */
struct _notmuch_database;
int local_mail_prereqs(struct _notmuch_database *db, const struct mp_series *s,
		       const char *thread, char *const *extra, size_t nextra,
		       struct mp_set **set, char ***missing, size_t *nmissing);

#endif
