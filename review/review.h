/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * review.h - apply a series in memory, ask the voters, report.
 *
 * No libgit2, curl or SQLite object leaves this module: callers see
 * object ids as hex strings and plain structs that own their memory.
 *
 * Errors: functions return 0 on success or a negative enum rv_status,
 * and fill a caller-provided struct errmsg (may be NULL) with one
 * sentence a person can act on.
 */
#ifndef QUORUM_REVIEW_H
#define QUORUM_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "../mailparse/mailparse.h"
#include "../mailparse/sb.h"

enum rv_status {
	RV_OK = 0,
	RV_ERR_NOMEM = -1,
	RV_ERR_REPO = -2, /* repository missing, unreadable, bad revision */
	RV_ERR_APPLY = -3, /* a patch does not apply */
	RV_ERR_INPUT = -4, /* a malformed or hostile diff */
	RV_ERR_UNSAFE = -5, /* a path outside the repo, .git/, a symlink */
	RV_ERR_INTERNAL = -6,
};

#define RV_OID_HEXSZ 40

/* ---- diffs ---------------------------------------------------------- */

struct rv_line {
	char origin; /* ' ', '+' or '-' */
	int old_no; /* line in the pre-image, 0 for '+' */
	int new_no; /* line in the post-image, 0 for '-' */
	char *text; /* without the origin character and newline */
};

struct rv_hunk {
	int old_start, old_lines;
	int new_start, new_lines;
	char *section; /* text after the second @@ (function context), or NULL */
	struct rv_line *lines;
	size_t nlines;
};

enum rv_file_status {
	RV_FILE_MODIFIED,
	RV_FILE_ADDED,
	RV_FILE_DELETED,
	RV_FILE_RENAMED,
	RV_FILE_COPIED,
};

struct rv_file {
	char *old_path; /* NULL for an added file */
	char *new_path; /* NULL for a deleted file */
	enum rv_file_status status;
	bool binary;
	struct rv_hunk *hunks;
	size_t nhunks;
};

struct rv_diff {
	struct rv_file *files;
	size_t nfiles;
};

/* Caps on what rv_diff_parse() accepts; beyond them it is RV_ERR_INPUT. */
#define RV_DIFF_MAX_BYTES ((size_t)256 << 20)
#define RV_DIFF_MAX_FILES 10000 /* files per diff */
#define RV_DIFF_MAX_HUNKS 10000 /* hunks per file */
#define RV_DIFF_MAX_LINE (1 << 20) /* bytes per line */
#define RV_DIFF_MAX_PATH 4096 /* bytes per path */

/* Parse a unified diff (git or plain) into *out; rv_diff_free() frees it. */
int rv_diff_parse(struct rv_diff **out, const char *diff, size_t len,
		  struct errmsg *err);
void rv_diff_free(struct rv_diff *d);
/*
 * rv_diff_parse() details (owner: rules/diff work):
 * - git diffs (`diff --git`, mode, rename/copy, binary headers) and plain
 *   unified diffs (`--- x` / `+++ y`); "a/" "b/" prefixes are stripped,
 *   as are two different top directories over the same rest
 *   (linux-orig/x, linux/x); other paths are kept as given (-p0).
 *   Quoted paths are unquoted; /dev/null becomes a NULL path.
 * - CRLF line ends are accepted; `\ No newline at end of file` is skipped;
 *   an empty line inside a hunk is an empty context line.
 * - Text before the first file header and between files is ignored, and
 *   a "-- " signature line after a hunk ends the diff.
 * - Returns 0 (*out may have no files when the text holds no diff),
 *   RV_ERR_INPUT with a sentence naming the file and hunk when a hunk has
 *   more or fewer lines than its header declares, a hunk header is
 *   malformed, a line holds a NUL byte, or a cap above is exceeded;
 *   RV_ERR_INTERNAL when diff is NULL with len > 0. *out is NULL on error.
 */

/*
 * The file whose post-image path (else pre-image path) is path, or NULL.
 * The result points into d.
 */
const struct rv_file *rv_diff_find_file(const struct rv_diff *d,
					const char *path);

/*
 * The name of the C function that encloses line idx of h, found from the
 * hunk's section text and the function headers and column-0 closing
 * braces among the hunk's own post-image lines (cheap; no repository).
 * Writes the NUL-terminated name into buf and returns its length, or
 * returns 0 with buf = "" when unknown or when it does not fit in bufsz.
 * (owner: rules/diff work; never fails otherwise)
 */
size_t rv_hunk_function(const struct rv_hunk *h, size_t idx, char *buf,
			size_t bufsz);

/* ---- repository and apply ------------------------------------------- */

struct rv_repo;

/* Open the repository at or above path. Caller frees with rv_repo_free(). */
int rv_repo_open(struct rv_repo **out, const char *path, struct errmsg *err);
void rv_repo_free(struct rv_repo *repo);

/* Resolve a revision to a commit id (hex, NUL-terminated, 41 bytes). */
int rv_repo_resolve(struct rv_repo *repo, const char *rev,
		    char out[RV_OID_HEXSZ + 1], struct errmsg *err);

/*
 * Read path from the tree (hex id of a tree or commit) into out.
 * Returns 0, or RV_ERR_REPO when it is absent or not a blob.
 */
int rv_repo_read_file(struct rv_repo *repo, const char *tree_or_commit,
		      const char *path, struct sb *out, struct errmsg *err);

enum rv_base_source {
	RV_BASE_OPTION, /* --base REV */
	RV_BASE_SERIES, /* base-commit: of the series */
	RV_BASE_BRANCH, /* configured branch of the list */
	RV_BASE_HEAD, /* HEAD of the repo */
};

struct rv_apply_opts {
	unsigned version;
	const char *base; /* --base REV, or NULL */
	const char *branch; /* the list's configured branch, or NULL */
	bool three_way; /* fall back like git am -3 */
	bool store_refs; /* write refs/quorum/... for each commit */
};

#define RV_APPLY_OPTS_VERSION 1
#define RV_APPLY_OPTS_INIT { RV_APPLY_OPTS_VERSION, NULL, NULL, true, false }

struct rv_patch_result {
	int index; /* n of n/m; 1 for a single patch */
	bool applied;
	bool three_way; /* needed the 3-way fallback */
	char tree_id[RV_OID_HEXSZ + 1]; /* post-image tree, "" if not applied */
	char commit_id[RV_OID_HEXSZ + 1]; /* in-memory commit, "" if none */
	char *error; /* why it did not apply, one sentence, or NULL */
};

struct rv_apply_result {
	char base_id[RV_OID_HEXSZ + 1];
	enum rv_base_source base_source;
	char *base_note; /* e.g. "base-commit 1234abcd not in repo; used HEAD" */
	struct rv_patch_result *patches; /* one per patch present, series order */
	size_t npatches;
	int failed; /* index into patches[] of the first failure, or -1 */
};

/*
 * Apply every patch of s, in order, in memory, on the chosen base.
 * Nothing in the working tree, index or branches changes. Returns 0 when
 * all applied, RV_ERR_APPLY when one did not (*out is still filled, with
 * the reason in patches[failed].error and err), or another rv_status.
 * Caller frees *out with rv_apply_result_free().
 */
int rv_apply_series(struct rv_apply_result **out, struct rv_repo *repo,
		    const struct mp_series *s, const struct rv_apply_opts *opts,
		    struct errmsg *err);
void rv_apply_result_free(struct rv_apply_result *r);

/* ---- findings and voters -------------------------------------------- */

enum rv_severity {
	RV_SEV_LOW,
	RV_SEV_MEDIUM,
	RV_SEV_HIGH,
	RV_SEV_CRITICAL,
};

const char *rv_severity_name(enum rv_severity s);
/* Parse "low".."critical"; returns -1 when unknown. */
int rv_severity_parse(const char *s);

struct rv_finding {
	int patch; /* index into the series' patches (0-based) */
	char *file; /* post-image path */
	int line_start, line_end; /* post-image lines */
	char *function; /* enclosing function, or NULL */
	enum rv_severity severity;
	char *category; /* e.g. "null-deref", "lock-leak" */
	char *title; /* one line */
	char *explanation; /* a paragraph */
	char *quote; /* the added lines at issue, newline-separated */
	char **voters; /* names of the voters that raised it */
	size_t nvoters;
};

struct rv_findings {
	struct rv_finding *items;
	size_t n, alloc;
};

/* Append a copy of f (strings are duplicated). */
void rv_findings_add(struct rv_findings *fs, const struct rv_finding *f);
void rv_findings_release(struct rv_findings *fs);
void rv_finding_release(struct rv_finding *f);

/* What a voter sees of one patch. */
struct rv_context {
	const struct mp_series *series;
	const struct mp_patch *patch;
	int patch_index; /* 0-based index in series->patches */
	const struct rv_diff *diff; /* parsed diff of the patch */
	struct rv_repo *repo; /* may be NULL (no repo) */
	const char *pre_tree; /* hex ids, "" when not applied */
	const char *post_tree;
};

struct rv_voter {
	const char *name;
	double weight;
	/* Append this voter's findings on ctx to out. 0 or negative rv_status. */
	int (*review)(const struct rv_voter *v, const struct rv_context *ctx,
		      struct rv_findings *out, struct errmsg *err);
	void *priv;
};

/* The offline C heuristics voter. */
extern const struct rv_voter rv_voter_rules;

/* ---- the review pipeline -------------------------------------------- */

struct rv_review_opts {
	unsigned version;
	struct rv_apply_opts apply;
	const struct rv_voter *const *voters; /* NULL: the default offline set */
	size_t nvoters;
	int quorum; /* distinct voters a finding needs; 0: majority */
};

#define RV_REVIEW_OPTS_VERSION 1
#define RV_REVIEW_OPTS_INIT                                                   \
	{ RV_REVIEW_OPTS_VERSION, RV_APPLY_OPTS_INIT, NULL, 0, 0 }

struct rv_review {
	const struct mp_series *series; /* borrowed */
	struct rv_apply_result *apply; /* NULL when no repo */
	char **voters; /* names of the voters that took part */
	size_t nvoters;
	int quorum;
	struct rv_findings findings; /* at quorum, ranked */
	struct rv_findings minority; /* below quorum */
	size_t dropped; /* findings outside the patch's lines (invented) */
};

/*
 * Apply s on repo (may be NULL: review the diff alone) and run the voters.
 * Returns 0 (the review is complete, findings may be empty),
 * RV_ERR_APPLY (*out filled with the apply result; no voting), or another
 * rv_status. Caller frees *out with rv_review_free().
 */
int rv_review_series(struct rv_review **out, struct rv_repo *repo,
		     const struct mp_series *s, const struct rv_review_opts *opts,
		     struct errmsg *err);
void rv_review_free(struct rv_review *r);

/* Human-readable report (terminal text). */
int rv_report_text(const struct rv_review *r, struct sb *out);

#endif
