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
	RV_ERR_REPO = -2,   /* repository missing, unreadable, bad revision */
	RV_ERR_APPLY = -3,  /* a patch does not apply */
	RV_ERR_INPUT = -4,  /* a malformed or hostile diff */
	RV_ERR_UNSAFE = -5, /* a path outside the repo, .git/, a symlink */
	RV_ERR_INTERNAL = -6,
	RV_ERR_DEADLINE = -7, /* the review's deadline passed */
};

/* Seconds on the monotonic clock, what deadlines are measured on. */
double rv_now(void);

#define RV_OID_HEXSZ 40

/* ---- diffs ---------------------------------------------------------- */

struct rv_line {
	char origin; /* ' ', '+' or '-' */
	int old_no;  /* line in the pre-image, 0 for '+' */
	int new_no;  /* line in the post-image, 0 for '-' */
	char *text;  /* without the origin character and newline */
};

struct rv_hunk {
	int old_start, old_lines;
	int new_start, new_lines;
	char *section; /* after the second @@ (function context), or NULL */
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
#define RV_DIFF_MAX_FILES 10000	   /* files per diff */
#define RV_DIFF_MAX_HUNKS 10000	   /* hunks per file */
#define RV_DIFF_MAX_LINE (1 << 20) /* bytes per line */
#define RV_DIFF_MAX_PATH 4096	   /* bytes per path */

/* Parse a unified diff (git or plain) into *out; rv_diff_free() frees it. */
int rv_diff_parse(struct rv_diff **out, const char *diff, size_t len,
		  struct errmsg *err);
void rv_diff_free(struct rv_diff *d);
/*
 * rv_diff_parse() details:
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
 * returns 0 with buf = "" when unknown or when it does not fit in bufsz
 * (it never fails otherwise).
 */
size_t rv_hunk_function(const struct rv_hunk *h, size_t idx, char *buf,
			size_t bufsz);

/*
 * The name of the C function that encloses line (1-based) of the source
 * text src[0..len): the nearest column-0 function header above it, unless
 * a column-0 '}' (the end of the function before) comes first; at most
 * 4000 lines back. Same buffer contract as rv_hunk_function().
 */
size_t rv_source_function(const char *src, size_t len, int line, char *buf,
			  size_t bufsz);

/*
 * A source text split into lines once, with what rv_source_function()
 * and the function ranges of context.c look for worked out for every
 * line in one pass, so that asking about each line of a file is linear
 * in the file, not quadratic. It borrows src, which must outlive it.
 */
struct rv_source_index {
	const char *src;
	size_t len;
	const char **start; /* start[i] is line i+1 */
	size_t n;
	/* The nearest line at or above i that is a function header as
	 * rv_source_function() sees one, or a column-0 '}'; -1 when none. */
	int *fn_mark;
	/* The same for a header as rv_function_range() sees one. */
	int *hdr_mark;
	/* The nearest line at or below i that starts with '}', or n. */
	int *close_next;
};

/* Index src[0..len); release with rv_source_index_release(). */
void rv_source_index_init(struct rv_source_index *ix, const char *src,
			  size_t len);
void rv_source_index_release(struct rv_source_index *ix);
/* Bytes of line i (0-based) without its newline and trailing CRs. */
size_t rv_source_index_line_len(const struct rv_source_index *ix, size_t i);
/* rv_source_function() of the indexed text, in constant time. */
size_t rv_source_index_function(const struct rv_source_index *ix, int line,
				char *buf, size_t bufsz);
/* rv_function_range() of the indexed text, in constant time. */
int rv_source_index_range(const struct rv_source_index *ix, int line,
			  int *start, int *end);
/*
 * Does the line s[0..n) (no newline) look like the header of a function
 * to rv_function_range(): column 0, a name, a '(', no ';' or ':' at the end?
 */
bool rv_line_is_header(const char *s, size_t n);

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

/*
 * Many files of one tree: each directory is read and parsed once, where
 * rv_repo_read_file() reads every directory above the file each time
 * (libgit2 keeps no tree above 4 KB). _new() returns NULL when the id
 * is not a tree or commit; _read() is rv_repo_read_file() of that tree.
 */
struct rv_tree_reader;
struct rv_tree_reader *rv_tree_reader_new(struct rv_repo *repo,
					  const char *tree_or_commit);
int rv_tree_reader_read(struct rv_tree_reader *tr, const char *path,
			struct sb *out, struct errmsg *err);
void rv_tree_reader_free(struct rv_tree_reader *tr);

enum rv_base_source {
	RV_BASE_OPTION, /* --base REV */
	RV_BASE_SERIES, /* base-commit: of the series */
	RV_BASE_BRANCH, /* configured branch of the list */
	RV_BASE_HEAD,	/* HEAD of the repo */
	RV_BASE_PARENT, /* the parent of a commit under review (ci) */
};

struct rv_apply_opts {
	/* Where to apply: the first of these that names a commit. */
	const char *base;   /* --base REV, or NULL */
	const char *branch; /* the list's configured branch, or NULL */
	/*
	 * Series to apply first, in order, on the chosen base (borrowed;
	 * e.g. b4 >= 0.14 puts a prerequisite series ahead of the one asked
	 * for in the same mbox). The series then applies on their result,
	 * and only its own patches are in the result.
	 */
	const struct mp_series *const *prereqs;
	size_t nprereqs;
	/* How to apply. */
	bool three_way;	 /* fall back like git am -3 (default: on) */
	bool store_refs; /* write refs/quorum/... for each commit */
	/*
	 * rv_now() past which no patch is applied: the patch that would be
	 * next fails with RV_ERR_DEADLINE. 0: no deadline.
	 */
	double deadline_at;
};

#define RV_APPLY_OPTS_INIT                                                     \
	{                                                                      \
		.three_way = true                                              \
	}

struct rv_patch_result {
	int index; /* n of n/m; 1 for a single patch */
	bool applied;
	bool three_way;			/* needed the 3-way fallback */
	char tree_id[RV_OID_HEXSZ + 1]; /* post-image tree, "" if not applied */
	char commit_id[RV_OID_HEXSZ + 1]; /* in-memory commit, "" if none */
	char *error; /* why it did not apply, one sentence, or NULL */
};

/*
 * Bytes of trees one series may write (each patch writes every directory
 * above the files it changes, whole). A real series writes a few MB; a
 * hostile one that adds a file to a directory of thousands with each of
 * 9,999 patches writes gigabytes: past this its patch fails (input).
 */
#define RV_APPLY_MAX_TREE_BYTES ((size_t)64 << 20)

struct rv_apply_result {
	/* The base chosen, and why. */
	char base_id[RV_OID_HEXSZ + 1];
	enum rv_base_source base_source;
	/* e.g. "base-commit 1234abcd not in repo; used HEAD", or NULL */
	char *base_note;
	/*
	 * The commit the series' first patch applies on: base_id, or the
	 * in-memory commit of the last prerequisite patch (their changes
	 * count as part of the base). "" when none applied.
	 */
	char start_id[RV_OID_HEXSZ + 1];
	size_t nprereq_patches; /* prerequisite patches applied first */
	/* The series' own patches: one per patch present, series order. */
	struct rv_patch_result *patches;
	size_t npatches;
	int failed; /* index into patches[] of the first failure, or -1 */
};

/*
 * Apply every patch of s, in order, in memory, on the chosen base.
 * Nothing in the working tree, index or branches changes. Returns 0 when
 * all applied, RV_ERR_APPLY when one did not (*out is still filled, with
 * the reason in patches[failed].error and err), or another rv_status.
 * With opts->prereqs, those series apply first on each base tried; when
 * one of their patches does not apply, patches[0] of s fails with a
 * reason that names that prerequisite series and patch. When there is no
 * base-commit: in s, the first prerequisite's is tried.
 * Caller frees *out with rv_apply_result_free().
 */
int rv_apply_series(struct rv_apply_result **out, struct rv_repo *repo,
		    const struct mp_series *s, const struct rv_apply_opts *opts,
		    struct errmsg *err);
void rv_apply_result_free(struct rv_apply_result *r);

/*
 * Write the tree (hex id of a tree or commit, e.g. a patch's tree_id) to
 * the directory dir, which must not exist yet; the repository itself is
 * not touched. Entries that could escape dir (.., .git, '/') are refused,
 * and so is a symlink that resolves outside dir (an absolute target,
 * .. out of the top, or through another link of the tree).
 * Returns 0, RV_ERR_REPO (dir exists or cannot be written; nothing is
 * left behind), RV_ERR_UNSAFE (nothing is left behind either), or
 * RV_ERR_INTERNAL for a bad id.
 */
int rv_worktree_checkout(struct rv_repo *repo, const char *tree_or_commit,
			 const char *dir, struct errmsg *err);
/*
 * Remove a directory made by rv_worktree_checkout(). 0, or RV_ERR_REPO
 * when something in it could not be removed (errno says why).
 */
int rv_worktree_remove(const char *dir);

/*
 * The stable patch-id of a diff, as `git patch-id --stable` prints it
 * (and as format-patch writes prerequisite-patch-id:). out gets 40 hex
 * digits. Returns 0, or RV_ERR_INPUT when the text has no diff.
 */
int rv_patch_id(const char *diff, size_t len, char out[RV_OID_HEXSZ + 1]);

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
	int patch;		  /* index into the series' patches (0-based) */
	char *file;		  /* post-image path */
	int line_start, line_end; /* post-image lines */
	char *function;		  /* enclosing function, or NULL */
	enum rv_severity severity;
	char *category;	   /* e.g. "null-deref", "lock-leak" */
	char *title;	   /* one line */
	char *explanation; /* a paragraph */
	char *quote;	   /* the added lines at issue, newline-separated */
	bool preexisting;  /* about code the patch did not touch */
	char cites[2][RV_OID_HEXSZ + 1]; /* past fix ids the finding cites */
	/* Who raised it. */
	char **voters; /* names of the voters that raised it */
	size_t nvoters;
	double votes; /* sum of the weights of voters; set by the vote */
	/*
	 * Where the lines are at the series tip (the last patch's
	 * post-image; the same as file/lines for the last patch), set for
	 * the findings the vote keeps; tip_file is NULL when unknown.
	 */
	char *tip_file;
	int tip_line_start, tip_line_end;
};

struct rv_findings {
	struct rv_finding *items;
	size_t n, alloc;
};

/*
 * The stable id of a category: one of quorum's own (null-deref, leak,
 * lock-leak, use-after-free, double-free, bounds, integer-overflow,
 * alloc-overflow, unsafe-string, error-handling, race, logic,
 * api-misuse, history, risk, style), synonyms and case folded, else
 * "other". A static string. rv_category_text(): its one-line
 * description.
 */
const char *rv_category_id(const char *category);
const char *rv_category_text(const char *id);

/* Append a copy of f (strings are duplicated). */
void rv_findings_add(struct rv_findings *fs, const struct rv_finding *f);
void rv_findings_release(struct rv_findings *fs);
void rv_finding_release(struct rv_finding *f);

/* What a voter sees of one patch. */
struct rv_context {
	const struct mp_series *series;
	const struct mp_patch *patch;
	int patch_index;	    /* 0-based index in series->patches */
	const struct rv_diff *diff; /* parsed diff of the patch */
	struct rv_repo *repo;	    /* may be NULL (no repo) */
	const char *pre_tree;	    /* hex ids, "" when not applied */
	const char *post_tree;
	struct rv_history *history; /* the history index, NULL when none */
	const char *workdir;	    /* the repo's work tree, NULL when none */
};

struct rv_voter {
	const char *name;
	double weight;
	/* Append this voter's findings on ctx to out; 0 or an rv_status. */
	int (*review)(const struct rv_voter *v, const struct rv_context *ctx,
		      struct rv_findings *out, struct errmsg *err);
	void *priv;
};

/*
 * The offline C heuristics voter. Reads
 * ctx->diff (or parses ctx->patch->diff when diff is NULL; a malformed
 * diff returns that RV_ERR_INPUT), looks only at .c .h .cc .cpp .cxx .hh
 * .hpp files, and reports defects the patch adds, never ones only in
 * context. Categories (stable ids): "null-deref", "lock-leak",
 * "unsafe-string", "alloc-overflow", "use-after-free", "double-free".
 * Works with ctx->repo NULL; with repo and post_tree it reads the
 * post-image past a hunk for unlocks and goto labels (an unreadable file
 * is "not available", never an error). At most 16 findings per hunk and
 * 128 per call; otherwise returns 0.
 */
extern const struct rv_voter rv_voter_rules;

/* ---- the review pipeline -------------------------------------------- */

/* Requests built by a dry run, for the review that sends them. */
struct rv_built;
/* Free what rv_review_series() kept in r->built (NULL is fine). */
void rv_built_free(struct rv_built *b);

struct rv_review_opts {
	struct rv_apply_opts apply;
	/* The vote. */
	const struct rv_voter *const
		*voters; /* NULL: the default offline set */
	size_t nvoters;
	int quorum; /* distinct voters a finding needs; 0: majority */
	/* What the offline voters read; NULL when there is none. */
	struct rv_history *history; /* borrowed; NULL: no history index */
	const char *workdir; /* the repo's work tree (checkpatch), or NULL */
	/* LLM voters, asked concurrently; none when nllm is 0. */
	const struct rv_llm_voter *llm;
	size_t nllm;
	const struct rv_prompts *prompts; /* required when nllm > 0 */
	/*
	 * The whole review's time, in seconds (0: 600): applying, the
	 * offline voters, building the prompts, the requests and checking
	 * their answers. Past it the review stops with RV_ERR_DEADLINE, but
	 * for the requests: those not answered by then abstain (they end a
	 * tenth of it early, at least 0.25 s and at most 10 s, so that the
	 * answers can be checked in time).
	 */
	double deadline;
	/* rv_now() when the deadline passes; 0: deadline seconds from the
	 * call (a caller that also reads the input starts it earlier). */
	double deadline_at;
	int retries;	/* per request on 429/5xx/reset; 0: 2; < 0: none */
	double backoff; /* first retry delay in seconds; 0: 1.0 */
	/*
	 * Money. With a ledger, every LLM request reserves its worst case
	 * against each cap that applies (a cap <= 0 does not), is recorded,
	 * and answers are reused from its cache (review/cost.h).
	 */
	struct rv_ledger *ledger; /* borrowed; NULL: no caps, no cache */
	const char *list;	  /* the list the series came from, or NULL */
	/*
	 * Answers are cached apart under this name, never reused by a
	 * review without it nor it by one of theirs (an embargoed list's),
	 * or NULL: the shared cache.
	 */
	const char *cache_scope;
	const char *series_key; /* recorded in the ledger, or NULL */
	double budget_review;	/* USD per review (review.budget-per-review) */
	double budget_day;	/* USD per UTC day for list */
	double budget_run;	/* USD for this ledger handle (ci --budget) */
	double budget_month;	/* USD per calendar month, all lists */
	bool no_cache; /* ask the models even when an answer is cached */
	/*
	 * Build every prompt, count its tokens where that is free, price
	 * it and plan, but send nothing: r->dry gets the requests.
	 */
	bool dry_run;
	/*
	 * With dry_run: keep the requests built (r->built), so that the
	 * review that sends them (opts.reuse) does not build them again.
	 */
	bool keep_built;
	/*
	 * Requests a dry run of the same series built (borrowed): one is
	 * sent as it is when its voter and patch match and the patch
	 * applied to the same tree; the others are built as usual.
	 */
	const struct rv_built *reuse;
	/*
	 * What a run (ci range, watch pass) learns across its reviews: the
	 * voters whose circuit is open, those without a token counter.
	 * Borrowed; NULL: each review starts afresh.
	 */
	struct rv_llm_state *state;
};

/* Caller frees with rv_llm_state_free(). */
struct rv_llm_state *rv_llm_state_new(void);
void rv_llm_state_free(struct rv_llm_state *st);

/* One request a dry run would have sent. */
struct rv_dry_request {
	char *voter;
	char *label; /* "2/3", "1-3 combined (the series tip)" */
	char *url;
	char *body; /* the exact request body */
	size_t bytes;
	long tokens_in; /* the bound: counted tokens, or bytes */
	bool counted;
	int max_tokens;
	double worst;	 /* USD at the bound and max_tokens */
	double estimate; /* USD at the voter's usual answer length */
	double floor;	 /* USD at the fewest answer tokens it is sent with */
	bool planned;	 /* fits the caps in the plan */
};

/* The plan of a review's spend, made before its first request. */
struct rv_plan {
	bool made;	  /* a cap applied: the rest is filled */
	double left;	  /* USD under the tightest cap */
	char *cap;	  /* which cap that is */
	double worst;	  /* USD every request would reserve, unplanned */
	double planned;	  /* USD the planned requests reserve */
	size_t nrequests; /* requests the review wants */
	size_t nplanned;  /* of them, in the plan */
	size_t ncounted;  /* inputs bounded by a token count */
	char *order;	  /* patches in the order money goes to them */
	char *text;	  /* the plan in one sentence */
};

#define RV_REVIEW_OPTS_INIT                                                    \
	{                                                                      \
		.apply = RV_APPLY_OPTS_INIT                                    \
	}

struct rv_review {
	const struct mp_series *series; /* borrowed */
	/*
	 * opts->apply.prereqs, applied before the series and not reviewed
	 * (the array is owned, the series borrowed).
	 */
	const struct mp_series **prereqs;
	size_t nprereqs;
	struct rv_apply_result *apply; /* NULL when no repo */

	/* The voters and the vote. */
	char **voters;	 /* names of the voters that took part */
	double *weights; /* parallel to voters[] */
	bool *is_llm;	 /* parallel to voters[]: an LLM voter */
	size_t nvoters;
	int quorum;
	struct rv_findings findings; /* at quorum, ranked */
	struct rv_findings minority; /* below quorum */
	size_t dropped;	     /* findings outside the patch's lines (invented) */
	size_t hallucinated; /* dropped: quoted code not in the post-image */
	size_t preexisting;  /* clusters about untouched code (in minority) */
	size_t fixed_later;  /* dropped: a later patch changes those lines */

	/* History, per patch slot k of series->patches. */
	double *risk;	 /* npatch_info entries; < 0 when not scored */
	char **risk_why; /* per patch: the factors behind the score, or NULL */
	struct rv_similar_list *similar; /* top similar past fixes per patch */
	size_t npatch_info; /* == series->npatches when filled, else 0 */
	bool no_history;    /* no history index: the report says so once */

	/* LLM requests. */
	struct rv_llm_call *calls; /* one per (LLM voter, patch) asked */
	size_t ncalls;
	size_t nllm;	     /* LLM voters asked */
	size_t llm_answered; /* ... that answered at least one patch */
	char **left_out;     /* context left out of prompts, one line each */
	size_t nleft_out;

	/* Money. */
	struct rv_plan plan;
	char **breakers; /* "e: circuit opened at ..." one line each */
	size_t nbreakers;
	/*
	 * opts->dry_run: what would be sent; what would not (a patch over
	 * a voter's context budget) is in calls, as abstentions.
	 */
	struct rv_dry_request *dry;
	size_t ndry;
	struct rv_built *built; /* opts->keep_built: the requests, kept */
	char *stepdown;	   /* the step taken because the budget was short */
	size_t ncached;	   /* calls whose answer came from the cache */
	double day_left;   /* USD left today for the list; < 0: no daily cap */
	double day_budget; /* the list's daily cap, 0 when none */
	char *list;	   /* the list whose budget day_left is, or NULL */
};

/*
 * Apply s on repo (may be NULL: review the diff alone) and run the voters.
 * Returns 0 (the review is complete, findings may be empty),
 * RV_ERR_APPLY (*out filled with the apply result; no voting),
 * RV_ERR_DEADLINE (*out NULL; err says at which stage), or another
 * rv_status. Caller frees *out with rv_review_free().
 */
int rv_review_series(struct rv_review **out, struct rv_repo *repo,
		     const struct mp_series *s,
		     const struct rv_review_opts *opts, struct errmsg *err);
void rv_review_free(struct rv_review *r);

/* The commits of a range, as patches (review/apply-range.c; `quorum ci`). */
struct rv_range {
	char (*ids)[RV_OID_HEXSZ + 1]; /* non-merge commits, oldest first */
	size_t n;
	size_t nmerges; /* merges (and root commits) left out */
};

/*
 * The commits of range "A..B" (reachable from B, not from A), oldest
 * first, merges and root commits counted but left out. Returns 0,
 * RV_ERR_INPUT (not A..B, over 100000 commits) or RV_ERR_REPO (a side
 * that names no commit, as for a --base that does not resolve). Caller
 * releases out with rv_range_release().
 */
int rv_range_commits(struct rv_range *out, struct rv_repo *repo,
		     const char *range, struct errmsg *err);
void rv_range_release(struct rv_range *r);

/*
 * Append commit id (hex) to mail as the mail `git format-patch -1` would
 * write, and its parent's id to parent (the base to apply it on).
 * Returns 0, RV_ERR_REPO (not a commit) or RV_ERR_INPUT (a merge or a
 * root commit).
 */
int rv_commit_email(struct rv_repo *repo, const char *id, struct sb *mail,
		    char parent[RV_OID_HEXSZ + 1], struct errmsg *err);

/*
 * Append text to out wrapped at width columns, each line starting with
 * indent. Blank lines always break paragraphs; single newlines are kept
 * when keep_lines, else reflowed like spaces.
 */
void rv_wrap(struct sb *out, const char *text, const char *indent, size_t width,
	     bool keep_lines);

/*
 * Add s (NULL: null) to obj under key as valid UTF-8: mail is not
 * always. Shared by every JSON quorum prints (reports, parse).
 */
struct cJSON;
void rv_json_put_str(struct cJSON *obj, const char *key, const char *s);

/* Human-readable report (terminal text). */
int rv_report_text(const struct rv_review *r, struct sb *out);

/*
 * Machine-readable reports of one or more reviews: JSON
 * (contrib/review-json.md) and SARIF 2.1.0 for code-scanning UIs.
 * Reviews are added one at a time and the document is printed at the
 * end (SARIF lists every rule before the results that refer to it).
 *
 * _new() sets *out (NULL on error) and returns 0 or RV_ERR_NOMEM;
 * version (quorum's, copied) is written in the document. _add() takes
 * ids[0..n): the commits the review covers (`quorum ci`: patch k is
 * ids[k], oldest first), or NULL and 0. _print() returns the document
 * without a final newline, for the caller to free(), or NULL when memory
 * ran out. Caller frees the report with _free().
 */
struct rv_json_report;
int rv_json_report_new(struct rv_json_report **out, const char *version);
void rv_json_report_add(struct rv_json_report *j, const struct rv_review *r,
			const char (*ids)[RV_OID_HEXSZ + 1], size_t n);
/* A commit `quorum ci` left out of the review (risk < 0: unknown). */
void rv_json_report_skip(struct rv_json_report *j, const char *commit,
			 const char *title, double risk);
char *rv_json_report_print(const struct rv_json_report *j);
void rv_json_report_free(struct rv_json_report *j);

/*
 * SARIF results are placed in the tree a code-scanning UI shows, the
 * series tip (for `ci`, the newest commit of the run): a finding on an
 * earlier patch is at its lines at the tip. Skipped commits are not
 * listed.
 */
struct rv_sarif_report;
int rv_sarif_report_new(struct rv_sarif_report **out, const char *version);
void rv_sarif_report_add(struct rv_sarif_report *sr, const struct rv_review *r,
			 const char (*ids)[RV_OID_HEXSZ + 1], size_t n);
char *rv_sarif_report_print(const struct rv_sarif_report *sr);
void rv_sarif_report_free(struct rv_sarif_report *sr);

/* ---- LLM voters (review/llm-*.c, context*.c, vote*.c) -------------
 *
 * Every (LLM voter, patch) pair is one HTTP request; all of a series'
 * requests run concurrently on one curl multi handle. A voter that fails
 * abstains: the review completes with the others and says why.
 */

enum rv_provider {
	RV_PROVIDER_OPENAI, /* chat completions, any OpenAI-compatible server */
	RV_PROVIDER_ANTHROPIC, /* messages API */
};

/* Parse "openai" / "anthropic"; -1 when unknown. */
int rv_provider_parse(const char *s);

/*
 * Where a voter's input tokens are counted before a request, for free,
 * to bound its cost tighter than a token per byte.
 */
enum rv_count_tokens {
	RV_COUNT_AUTO,	    /* anthropic for that provider, else tokenize */
	RV_COUNT_NONE,	    /* a token per byte of the request */
	RV_COUNT_ANTHROPIC, /* POST .../messages/count_tokens */
	RV_COUNT_TOKENIZE,  /* POST /tokenize of llama.cpp and vLLM */
};

/* Parse "auto" / "none" / "anthropic" / "tokenize"; -1 when unknown. */
int rv_count_tokens_parse(const char *s);

/* One configured LLM voter. Strings are borrowed for the review. */
struct rv_llm_voter {
	const char *name;
	enum rv_provider provider;
	const char *url; /* base (.../v1) or the full endpoint */
	const char *model;
	const char *key; /* secret or NULL; never logged, never in an error */
	double weight;	 /* 0: 1.0 */
	double price_in, price_out; /* USD per million tokens */
	double price_cached; /* per million cached input tokens; 0: price_in */
	int max_tokens;	     /* of the answer; 0: 2048 */
	double timeout;	     /* seconds per request; 0: 120 */
	int context_tokens;  /* prompt budget (~4 bytes a token); 0: 24000 */
	int max_parallel;    /* of its requests at once; 0: 4 */
	enum rv_count_tokens count_tokens;
};

/* What one request did; the report and the cost ledger read it. */
struct rv_llm_call {
	char *voter;
	int patch; /* index into series->patches */
	/* What came of it. */
	bool answered;	  /* a valid answer was parsed */
	char *reason;	  /* why the voter abstained on this patch, or NULL */
	bool cached;	  /* the answer was reused from the cache, at no cost */
	bool budget;	  /* not sent: a cap would have been passed */
	size_t nfindings; /* findings in the answer */
	/* The request. */
	long http_status; /* of the last attempt, 0 when none */
	int attempts;
	size_t prompt_bytes; /* bytes of the request body */
	double seconds;	     /* wall time from first send to last byte */
	/* What it cost. */
	long tokens_in, tokens_out; /* from the answer's usage, 0 when absent */
	long tokens_cached; /* of tokens_in, read from the provider's cache */
	double reserved;    /* USD reserved for it before it was sent */
	double cost;	    /* USD from tokens and the voter's prices */
	long est_in;	    /* bound on its input tokens it was priced at */
	bool counted;	    /* est_in is a token count, not the bytes */
	int max_tokens;	    /* of the answer as sent (may be clamped) */
	bool clamped;	    /* max_tokens cut to what the budget left */
	bool breaker;	    /* not sent: the voter's circuit was open */
};

/*
 * The prompt files: review.md (instructions; {{BOUNDARY}} names the data
 * delimiter), false-positives.md, schema.json, and subsystems/ (one
 * file per path pattern, listed in subsystems/index: "PATTERN FILE").
 */
struct rv_prompts;

/*
 * Load the prompts from dir. Returns 0, or RV_ERR_INPUT when a file is
 * missing or too large (the message names it). Caller frees *out with
 * rv_prompts_free().
 */
int rv_prompts_load(struct rv_prompts **out, const char *dir,
		    struct errmsg *err);
void rv_prompts_free(struct rv_prompts *p);

/* ---- history index (review/history*.c) -------------------------------
 *
 * The tree's own past bugs: every commit with a `Fixes:` trailer (or a
 * `Revert "..."` with `This reverts commit X.`) names the commit that
 * introduced a bug. The index lives in <git dir>/quorum/history.db
 * (SQLite, WAL, FTS5) and is built and updated by rv_history_index().
 */

struct rv_history;

/* A progress line for a terminal; bot/ decides whether to print it. */
typedef void (*rv_progress_fn)(void *arg, const char *line);

/*
 * An OpenAI-compatible /v1/embeddings endpoint (optional): hunks get
 * vectors, and similar combines their cosine with BM25.
 */
struct rv_embed_opts {
	const char *url;   /* .../v1/embeddings; NULL: no embeddings */
	const char *model; /* sent as "model" */
	const char *key;   /* bearer token, or NULL */
};

struct rv_index_opts {
	rv_progress_fn progress; /* may be NULL */
	void *progress_arg;
	bool rebuild;		    /* throw the index away and build it anew */
	struct rv_embed_opts embed; /* url NULL: no embeddings */
};

#define RV_INDEX_OPTS_INIT                                                     \
	{                                                                      \
		.progress = NULL                                               \
	}

/* What an index run did; the Fixes: counts are for the whole index. */
struct rv_index_stats {
	size_t commits;		 /* non-merge commits read by this run */
	size_t merges;		 /* merge commits skipped by this run */
	size_t total_commits;	 /* non-merge commits in the index */
	size_t fixes_trailers;	 /* Fixes: trailers naming a commit */
	size_t resolved_id;	 /* ... resolved by their (abbreviated) id */
	size_t resolved_subject; /* ... resolved by the quoted subject */
	size_t unresolved;	 /* ... that name nothing we can find */
	size_t ambiguous;	 /* ... ids that matched several objects */
	size_t not_commit;	 /* Fixes: lines with no id and no subject */
	size_t reverts;		 /* reverts whose reverted commit was found */
	size_t pairs;		 /* fix/bug pairs in the index */
	size_t hunks;		 /* hunks stored for lexical retrieval */
	size_t vectors;		 /* hunks with an embedding vector */
	char embed_error[256];	 /* why embeddings were skipped, or "" */
	bool up_to_date;	 /* nothing new: the index was not written */
	bool rebuilt; /* the db was missing, corrupt or old: made anew */
	char rebuilt_reason[256]; /* why, when rebuilt */
	char model_note[200];	  /* the risk model fitted, or why none was */
	double seconds;
};

/*
 * Build or update the index of repo_path's history (HEAD). Only commits
 * not read before are read. A corrupt or old db is removed and rebuilt
 * (st->rebuilt and st->rebuilt_reason say so; the caller warns).
 * Returns 0, RV_ERR_REPO (not a repository, no HEAD) or RV_ERR_INTERNAL
 * (the db cannot be written), with err filled.
 */
int rv_history_index(const char *repo_path, const struct rv_index_opts *opts,
		     struct rv_index_stats *st, struct errmsg *err);

/* What a symbol index run did (rv_symbols_index()). */
struct rv_symbols_stats {
	size_t files;	 /* .c and .h files in HEAD's tree */
	size_t parsed;	 /* blobs parsed by this run */
	size_t reused;	 /* files whose blob the index already held */
	size_t too_big;	 /* files over the size cap, not parsed */
	size_t failed;	 /* files the parser gave up on (time limit) */
	size_t defs;	 /* definitions in the index */
	size_t refs;	 /* calls and addresses taken in the index */
	bool up_to_date; /* HEAD's tree is the one indexed: nothing read */
	bool rebuilt;	 /* the db was corrupt or old: made anew */
	char rebuilt_reason[256];
	double seconds;
};

/*
 * Build or update the symbol index (definitions, calls, functions taken
 * as values) of the .c and .h files of HEAD's tree in
 * <git dir>/quorum/symbols.db: only blobs it does not hold yet are
 * parsed, and when HEAD's tree is the one indexed nothing is read.
 * opts->rebuild throws it away first; opts->progress gets a line now and
 * then. Returns 0, RV_ERR_REPO (not a repository, no HEAD) or
 * RV_ERR_INTERNAL (the db cannot be written, the grammar cannot be
 * loaded), with err filled. The queries are in review/llm.h.
 */
int rv_symbols_index(const char *repo_path, const struct rv_index_opts *opts,
		     struct rv_symbols_stats *st, struct errmsg *err);

/*
 * Open repo_path's index for reading. Returns 0 with *out set, or 0 with
 * *out NULL when the repository has no index yet; RV_ERR_REPO when
 * repo_path is not a repository; RV_ERR_INTERNAL when the index is
 * unreadable (the message says to run `quorum index`). Caller frees *out
 * with rv_history_free().
 */
int rv_history_open(struct rv_history **out, const char *repo_path,
		    struct errmsg *err);
void rv_history_free(struct rv_history *h);

/* A line of the patch and the past line it resembles. */
struct rv_similar_match {
	char *file; /* the patch's file */
	int new_no; /* the patch line's post-image number */
	char *patch_line;
	char *past_line;
	bool fix_removed; /* the past line is one the fix removed */
	/* token Jaccard in [0.75,1]; 1 for the same line or the same shape */
	double similarity;
	bool by_shape; /* same code with other names (the shape matched) */
	/*
	 * The past line is where a fix that removed nothing added its code
	 * (a missing check): next to the lines the fix added.
	 */
	bool fix_site;
};

/* A past bug/fix pair that resembles a patch. */
struct rv_similar {
	char bug_id[RV_OID_HEXSZ + 1];
	char fix_id[RV_OID_HEXSZ + 1];
	char *bug_subject;
	char *fix_subject;
	char *fix_explanation; /* first lines of the fix's message body */
	const char *kind;      /* "fixes" or "revert" (static) */
	char *file;	       /* file of the past hunk */
	char *function;	       /* function of the past hunk, or NULL */
	double score;	       /* in [0,1], higher is closer */
	bool same_file;	    /* the past hunk is in a file the patch touches */
	bool same_function; /* ... and in a function the patch touches */
	struct rv_similar_match *matches;
	size_t nmatches;
	double lexical; /* the part of score from shared names, in [0,1] */
	double shape;	/* ... from the same code shape, names abstracted */
	/*
	 * For a shape match, the names of the patch and of the past code
	 * that map one onto the other, "out <-> s, n <-> len" (UTF-8 arrows),
	 * or NULL when the names are the same.
	 */
	char *renaming;
	/* The patch also holds, near the match, the shape of what the fix
	 * added: it repeats the fixed code, not the bug. */
	bool has_fix;
};

struct rv_similar_list {
	struct rv_similar *items; /* best first */
	size_t n;
};

/*
 * The k past bug/fix pairs whose buggy code most resembles what d adds:
 * by shared names (lexical) and by shape (the same code with names and
 * literals abstracted, so a renamed recurrence in another file matches).
 * Fills out (caller releases with rv_similar_list_release()). Returns 0
 * (maybe with no items) or RV_ERR_INTERNAL on a db error.
 */
int rv_history_similar(struct rv_history *h, const struct rv_diff *d, size_t k,
		       struct rv_similar_list *out, struct errmsg *err);
void rv_similar_list_release(struct rv_similar_list *l);

/*
 * Append l as `quorum similar` prints it (review/history-show.c): per
 * pair its score, the bug and fix commits, where, and the lines that
 * matched; subjects and code cleaned of control characters.
 */
void rv_similar_format(const struct rv_similar_list *l, struct sb *out);

/*
 * Use an embeddings endpoint in rv_history_similar() (o is copied;
 * url NULL turns it off). When the endpoint fails, similar falls back to
 * lexical retrieval and rv_history_embed_error() says why.
 */
void rv_history_set_embeddings(struct rv_history *h,
			       const struct rv_embed_opts *o);
/* Why the last search ran without embeddings, or NULL. Owned by h. */
const char *rv_history_embed_error(const struct rv_history *h);

/*
 * Look at the index as it was just before commit id (hex): pairs whose
 * fix is id or came after it are hidden from rv_history_similar() and the
 * history voter. An id the index does not hold hides nothing. Returns 0.
 */
int rv_history_set_horizon(struct rv_history *h, const char *id);

/*
 * The full id of the one past fix of the index (a fix of a bug/fix pair,
 * visible under the horizon) whose id starts with prefix (7 to 40 hex
 * digits, any case), into out. Returns 1 when exactly one fix has that
 * prefix, 0 when none or several do (out is then ""), or RV_ERR_INTERNAL
 * on a db error. What a model cites is checked with it.
 */
int rv_history_fix_id(struct rv_history *h, const char *prefix,
		      char out[RV_OID_HEXSZ + 1]);

/*
 * The unified diff of commit rev against its first parent (diff), its
 * message (message, may be NULL) and full id. RV_ERR_REPO when rev does
 * not name a commit.
 */
int rv_history_commit_diff(struct rv_history *h, const char *rev,
			   struct sb *diff, struct sb *message,
			   char id[RV_OID_HEXSZ + 1], struct errmsg *err);

/*
 * Risk score in [0,1] of a patch (its diff, commit message and author
 * address, both may be NULL), from weights fitted on this repo's history
 * by rv_history_index(). why (may be NULL) gets one line on the largest
 * factors. Returns 0, or RV_ERR_INTERNAL when the index has no model
 * (*score is then -1).
 */
int rv_history_risk(struct rv_history *h, const struct rv_diff *d,
		    const char *message, const char *author_email,
		    double *score, struct sb *why, struct errmsg *err);

/* Does the tree at workdir carry a checker the checkpatch voter runs? */
bool rv_checkpatch_present(const char *workdir);

/*
 * The work tree of the repository at or above path, or NULL (not a
 * repository, or a bare one). Caller frees with free().
 */
char *rv_workdir_of(const char *path);

/* Offline voters; each abstains (0, no findings) without what it needs. */
extern const struct rv_voter rv_voter_history;	  /* needs ctx->history */
extern const struct rv_voter rv_voter_risk;	  /* needs ctx->history */
extern const struct rv_voter rv_voter_checkpatch; /* needs ctx->workdir */

/* One replayed commit, for a verbose report. */
struct rv_eval_commit {
	char id[RV_OID_HEXSZ + 1];
	double risk;	    /* -1 when no model could be fitted yet */
	long lines;	    /* lines added + removed */
	bool buggy;	    /* later named by a Fixes: or reverted */
	bool flagged;	    /* a finding at quorum */
	const char *voters; /* "history,risk": who flagged it (static) */
};

struct rv_eval_opts {
	int64_t since, until; /* commit times, seconds since the epoch */
	rv_progress_fn progress;
	void *progress_arg;
	/* Called for each replayed commit when not NULL. */
	void (*each)(void *arg, const struct rv_eval_commit *c);
	void *each_arg;
};

#define RV_EVAL_OPTS_INIT                                                      \
	{                                                                      \
		.progress = NULL                                               \
	}

/* One offline voter's record over a replay. */
struct rv_eval_voter {
	const char *name;	  /* "rules", "history", "risk" (static) */
	size_t flagged;		  /* commits it had a finding on */
	size_t flagged_positive;  /* ... that were later fixed */
	double precision, recall; /* commit-level; 0 when undefined */
	double precision_ci[2];	  /* 95% Wilson; -1s when none flagged */
	size_t findings;	  /* findings it made */
	size_t located;		  /* ... where a later fix changed the lines
				   * (+-3) or the function they point at */
	double located_precision; /* located / findings; -1 when none */
};

/* Commits whose predicted risk fell in one decile of the replay. */
struct rv_eval_bin {
	size_t n, positives;
	double lo, hi;	  /* predicted risk range */
	double predicted; /* mean predicted risk */
	double observed;  /* positives / n */
};

#define RV_EVAL_NVOTERS 3
#define RV_EVAL_NBINS 10
#define RV_EVAL_MAX_YEARS 64

/* The scored commits of one calendar year (UTC) of the replay. */
struct rv_eval_year {
	int year;
	size_t commits, positives;
	double auc, baseline_auc; /* -1 when undefined */
	bool ci_ok;		  /* margin_lo/hi: 95%, paired bootstrap */
	double margin_lo, margin_hi;
};

struct rv_eval_result {
	size_t commits;	  /* non-merge commits replayed */
	size_t positives; /* ... later named by a Fixes: (or reverted) */
	size_t flagged;	  /* ... with a finding at quorum */
	size_t flagged_positive;
	size_t history_flagged;		 /* ... with a history voter finding */
	size_t history_flagged_positive; /* ... of them later fixed */
	double auc;	     /* of the risk score; -1 when undefined */
	double baseline_auc; /* of lines changed; -1 when undefined */
	/*
	 * 95% intervals, bootstrap draws of the scored commits (rv_auc_boot
	 * in review/auc.h), the same for both: [0] auc, [1] baseline_auc,
	 * [2] auc - baseline_auc.
	 */
	bool auc_ci_ok;
	double auc_lo[3], auc_hi[3];
	double precision, recall; /* of findings at quorum; 0 when undefined */
	double precision_ci[2];	  /* 95% Wilson; -1s when none flagged */
	size_t findings, located; /* all voters' findings, and located */
	double located_precision; /* located / findings; -1 when none */
	struct rv_eval_voter voters[RV_EVAL_NVOTERS];
	struct rv_eval_bin bins[RV_EVAL_NBINS];
	size_t nbins; /* bins filled (fewer when few commits) */
	struct rv_eval_year years[RV_EVAL_MAX_YEARS];
	size_t nyears; /* the first RV_EVAL_MAX_YEARS years replayed */
	/*
	 * The mean over the years of their margins (auc - baseline_auc),
	 * and its 95% interval with the years taken as independent; ok
	 * when at least two years have a margin with an interval.
	 */
	bool years_ok;
	double years_margin, years_margin_lo, years_margin_hi;
	size_t scored;		  /* commits with a risk score (a model) */
	double model_heldout_auc; /* the last refit's own held-out AUC */
	double seconds;
};

/*
 * Replay every non-merge commit of HEAD's history committed in
 * [since, until] as a new patch, using only what the index holds from
 * before that commit, and score the risk and the offline findings
 * against later Fixes:. The index must be up to date (run
 * rv_history_index() first). Returns 0, RV_ERR_REPO, or RV_ERR_INTERNAL
 * (no index, db error).
 */
int rv_history_eval(const char *repo_path, const struct rv_eval_opts *opts,
		    struct rv_eval_result *res, struct errmsg *err);

/*
 * Prerequisites (review/apply-prereq.c): which of a set of candidate series a
 * series declares as its prerequisites, by prerequisite-patch-id: (a patch of
 * it), prerequisite-message-id: (its cover or a patch) or b4's
 * prerequisite-change-id: ID[:vN]; shared by review and watch.
 */
struct rv_prereq_index;

struct rv_prereq_plan {
	const struct mp_series **series; /* candidates (array owned) */
	size_t n;
	const struct mp_series ***of; /* of[i]: applied first for series i */
	size_t *nof;
	bool *used;  /* used[j]: series j is applied for another one */
	char ***pid; /* pid[j][k]: patch-id of patch k of series j, or "" */
	/* The candidates by message-id, patch-id and change-id, made when
	 * first needed, so that what one series declares is found without
	 * looking at every other one. */
	struct rv_prereq_index *ix;
};

/* Plan over the n series (borrowed); release with rv_prereq_plan_release(). */
void rv_prereq_plan_init(struct rv_prereq_plan *pl,
			 const struct mp_series *const *series, size_t n);
/* Does s declare any prerequisite at all (in its cover or a patch)? */
bool rv_prereq_declares_any(const struct mp_series *s);
/*
 * Into v (room for pl->n): the candidates series i declares, and theirs
 * in turn, each after its own (the order they apply in); superseded
 * ones are left out and a loop ends. Returns how many.
 */
size_t rv_prereq_declared(struct rv_prereq_plan *pl, size_t i,
			  const struct mp_series **v);
/* Series i applies on v[0..n) (v is the plan's now): marks them used. */
void rv_prereq_plan_set(struct rv_prereq_plan *pl, size_t i,
			const struct mp_series **v, size_t n);
/* Does s apply on its base with the n series of pre applied first? */
bool rv_prereq_applies(struct rv_repo *repo, const struct mp_series *s,
		       const struct rv_apply_opts *aopts,
		       const struct mp_series *const *pre, size_t n);
void rv_prereq_plan_release(struct rv_prereq_plan *pl);
/*
 * Series one input (an mbox, a thread) may hold for `quorum review` and
 * `quorum apply`: a real mbox (b4 am, format-patch, a list's month) has a
 * few hundred; past this it is refused with one line, not planned.
 */
#define RV_MAX_SERIES_PER_INPUT 10000

/*
 * Plan every series of an input (review, apply), latest first; a series
 * another needs is not planned itself and is marked used. A series
 * applies on the ones it declares, unless it applies without them; with
 * no declaration (b4 dropped the cover letter) and not applying alone,
 * on the fewest series just before it in the input that it applies on
 * (up to 8). With only_set, only the series only (may be NULL: none).
 */
void rv_prereq_plan_input(struct rv_prereq_plan *pl, struct rv_repo *repo,
			  const struct mp_set *set,
			  const struct rv_apply_opts *aopts,
			  const struct mp_series *only, bool only_set);

#endif
