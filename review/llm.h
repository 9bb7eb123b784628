/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm.h - the LLM voter's stage group: what review/llm-*.c share with
 * each other and with the unit tests: the providers, the answer parser,
 * the concurrent runner, the prompt builder (context.c) and the verifier
 * (vote-verify.c) they use, the symbol index, and the tools a model calls
 * over a series' applied tree. Not for bot/.
 */
#ifndef QUORUM_REVIEW_LLM_GROUP_H
#define QUORUM_REVIEW_LLM_GROUP_H

#include "review.h"

/* Caps on what a model may make us hold. */
#define RV_LLM_MAX_ANSWER ((size_t)1 << 20) /* bytes of an HTTP answer */
#define RV_LLM_MAX_FINDINGS 50 /* per answer; more is an invalid answer */
#define RV_LLM_MAX_TITLE 300
#define RV_LLM_MAX_TEXT 8000 /* explanation, quote */

struct rv_llm_req;

/* ---- llm-provider.c ---------------------------------------------- */

/* The endpoint to POST to: url itself or url + the API's path. */
char *rv_llm_endpoint(const struct rv_llm_voter *v);

/*
 * Append the JSON request body for v with the system and user texts to
 * out. 0, RV_ERR_NOMEM, or RV_ERR_INPUT when it is over out's cap.
 */
int rv_llm_request_body(const struct rv_llm_voter *v, const char *system,
			const char *user, struct sb *out);

/*
 * Fill r's url, body, headers (with v's key), timeout and group limit
 * for asking v with the system and user texts. 0, or -1 with *reason
 * (static text) when the body cannot be built.
 */
int rv_llm_req_prepare(const struct rv_llm_voter *v, const char *system,
		       const char *user, struct rv_llm_req *r,
		       const char **reason);
/* The same, with a body already built (taken over: freed with r). */
void rv_llm_req_with_body(const struct rv_llm_voter *v, char *body,
			  struct rv_llm_req *r);

/*
 * Take the model's text and token usage out of an HTTP answer body.
 * Returns 0, or RV_ERR_INPUT with a reason (never quoting the body at
 * length) when it is not an answer of v's API.
 */
int rv_llm_extract(const struct rv_llm_voter *v, const char *body, size_t len,
		   struct sb *text, long *tokens_in, long *tokens_out,
		   struct errmsg *err);

/* The token counter v uses: its count_tokens, auto resolved. */
enum rv_count_tokens rv_llm_count_mode(const struct rv_llm_voter *v);

/* The endpoint that counts a request's input tokens for v. */
char *rv_llm_count_endpoint(const struct rv_llm_voter *v);

/*
 * Append to out the body that asks v's counter about request (a body
 * of rv_llm_request_body()). 0, RV_ERR_INPUT or RV_ERR_NOMEM.
 */
int rv_llm_count_body(const struct rv_llm_voter *v, const char *request,
		      struct sb *out);

/*
 * The token count in a counter's answer; -1 when there is none. The
 * caller decides whether to believe it.
 */
long rv_llm_count_parse(const struct rv_llm_voter *v, const char *body,
			size_t len);

/* Set the max_tokens of request *body (replaced) to max_tokens. */
int rv_llm_body_max_tokens(const struct rv_llm_voter *v, char **body,
			   int max_tokens);

/* Did the model stop at max_tokens (its answer is cut short)? */
bool rv_llm_cut_short(const struct rv_llm_voter *v, const char *body,
		      size_t len);

/* ---- llm-answer.c -------------------------------------------------- */

/*
 * Parse a model's text (JSON per prompts/schema.json, maybe in a code
 * fence or after prose) into findings raised by voter on patch. Returns
 * the number of findings appended, or RV_ERR_INPUT with the reason; on
 * error nothing is appended.
 */
int rv_llm_parse_answer(const char *text, size_t len, const char *voter,
			int patch, struct rv_findings *out, struct errmsg *err);

/* ---- llm-run.c ----------------------------------------------------- */

struct rv_llm_req {
	/* in */
	char *url;
	char *body;
	struct curl_slist *headers; /* owned; freed by rv_llm_req_release() */
	double timeout;		    /* seconds per attempt */
	/* out */
	struct sb answer; /* the last answer body, capped */
	long status;
	int attempts;
	double seconds;
	bool ok;	 /* a 2xx answer arrived whole */
	char error[256]; /* why not, when !ok */
	bool body_sent;	 /* the body went out, so it may be billed */
	/* private */
	void *easy;
	double not_before; /* monotonic seconds: do not start before */
	double started;
	double retry_after; /* from the last answer, -1 when none */
	int state;
	size_t group;  /* requests of one voter */
	int group_max; /* at most this many of a group at once; 0: any */
	bool held;     /* waits for its group's probe to succeed or fail */
	bool breaker;  /* done: its group's circuit was open */
};

void rv_llm_req_release(struct rv_llm_req *r);

struct rv_ledger;
struct rv_charge;
/*
 * Close reservation *resv of voter v's finished request r in ledger l:
 * an HTTP error is not billed, nor is a request that never went out
 * (released); an answer is charged what it says it used, and one that
 * went out and got no whole answer (a timeout, a reset, a cut body), or
 * that says nothing usable, is charged worst. c names the charge; its
 * tokens and cost are filled here. *resv is 0 after.
 */
void rv_llm_req_settle(struct rv_ledger *l, int64_t *resv,
		       const struct rv_llm_voter *v, const struct rv_llm_req *r,
		       struct rv_charge *c, double worst);

struct rv_llm_run_opts {
	double deadline;      /* seconds from now for everything */
	double deadline_said; /* the deadline messages name; 0: deadline */
	int retries;	      /* retries per request on 429, 5xx, reset */
	double backoff;	      /* first retry delay; doubles, with jitter */
	size_t max_answer;    /* bytes per answer */
	/*
	 * Both may be NULL. admit is called just before request i is first
	 * sent, in order of i; RV_ADMIT_SEND: send it; RV_ADMIT_REFUSE: it
	 * is not sent, done with error (admit may have written it);
	 * RV_ADMIT_LATER: ask again once another request is done, and
	 * admit no request after i until then (i goes first). done is
	 * called once when request i is done (sent or not), so a
	 * reservation is settled as soon as its answer is in.
	 */
	int (*admit)(void *arg, size_t i, struct rv_llm_req *r);
	void (*done)(void *arg, size_t i, struct rv_llm_req *r);
	/*
	 * The circuit breaker, per group: once a request of a group failed
	 * with a server error or a reset, only it is tried again (the
	 * probe) while the group's other requests wait; when it has failed
	 * every try that way, the group's circuit opens: every request of
	 * the group not yet answered is done with breaker set, and opened
	 * (may be NULL) is told which request opened it.
	 */
	bool breaker;
	void (*opened)(void *arg, size_t i, struct rv_llm_req *r);
	void *arg;
};

enum { RV_ADMIT_SEND, RV_ADMIT_REFUSE, RV_ADMIT_LATER };

/* Run every request concurrently on one curl multi handle. */
void rv_llm_run(struct rv_llm_req *reqs, size_t n,
		const struct rv_llm_run_opts *o);

/* ---- llm-count.c --------------------------------------------------- */

/*
 * Count the input tokens of bodies[i] (a request to voters[i]; NULL:
 * none) with each voter's counter, concurrently: counts[i] gets the
 * count, or -1 when there is none (no counter, it failed). A voter
 * whose counter is not there is asked once per run (st).
 */
void rv_llm_count_inputs(struct rv_llm_state *st,
			 const struct rv_llm_voter *const *voters,
			 char *const *bodies, long *counts, size_t n);

/*
 * The bound on the input tokens of a request of bytes bytes that a
 * counter said holds count tokens (-1: none): the count with a margin,
 * never above the bytes; the bytes when the count is not believable.
 */
long rv_llm_input_bound(long count, size_t bytes);

/* Why voter's circuit is open in st, or NULL when it is closed. */
const char *rv_llm_state_open(struct rv_llm_state *st, const char *voter);
void rv_llm_state_set_open(struct rv_llm_state *st, const char *voter,
			   const char *why);

/* ---- context.c ----------------------------------------------------- */

/*
 * The C function around line (1-based) of src: *start is its header
 * line, *end its column-0 closing brace. Returns 0, or -1 when the line
 * is not inside a function.
 */
int rv_function_range(const char *src, size_t len, int line, int *start,
		      int *end);

/* What goes into one prompt about one patch. */
struct rv_context_in {
	const struct mp_patch *patch;
	const struct rv_diff *diff;
	struct rv_repo *repo;		       /* may be NULL */
	const char *post_tree;		       /* "" when not applied */
	const struct rv_similar_list *similar; /* NULL: no history index */
	const char *patch_label;	       /* "2/3" */
};

/*
 * Write the data blocks of one patch into user, fitted to budget bytes,
 * each block delimited by boundary. What was left out is appended to
 * left_out as "; "-separated phrases, and named to the model in a
 * left-out block: no text from mail or the tree is ever outside a block.
 * 0 or RV_ERR_INPUT when the budget cannot hold even the commit message
 * and one hunk header.
 */
int rv_context_build(const struct rv_context_in *in, size_t budget,
		     const char *boundary, struct sb *user,
		     struct sb *left_out);

/*
 * Append s as an attribute value of a block's opening line: bare when it
 * is letters, digits and ._/+,@~:- only, else in double quotes with C
 * escapes as git quotes a path (\n, \", \\, \ooo for other control and
 * non-ASCII bytes), '<' and '>' escaped too: no value can end the line,
 * the attribute or the opening line, or look like a fence.
 */
void rv_prompt_attr(struct sb *out, const char *s);

/*
 * A boundary token (32 hex digits from the kernel's random source) that
 * occurs in none of the texts. 0, or RV_ERR_INTERNAL when none could
 * be made (no random source).
 */
int rv_boundary_make(char out[40], const char *const *texts, size_t n);

/*
 * Append file dir/name, at most cap bytes, to out. 0, or RV_ERR_INPUT
 * with a reason naming the file when it cannot be read or is larger.
 */
int rv_prompt_read(const char *dir, const char *name, size_t cap,
		   struct sb *out, struct errmsg *err);

/*
 * Append the system prompt for a patch touching d's files to out. 0, or
 * RV_ERR_INPUT when it is over out's cap.
 */
int rv_prompts_system(const struct rv_prompts *p, const struct rv_diff *d,
		      const char *boundary, struct sb *out);

/* ---- vote-verify.c ------------------------------------------------------ */

enum rv_verdict {
	RV_VERDICT_KEEP,
	RV_VERDICT_OUTSIDE, /* not in the patch's files, hunks or functions */
	/* quotes code the post-image does not have, or lines past its end */
	RV_VERDICT_HALLUCINATED,
	RV_VERDICT_PREEXISTING, /* inside, but not near a line it changed */
};

/*
 * Check f against the patch's diff and the post-image of f->file (post,
 * NULL when unreadable: then the diff's own lines are the reference).
 */
enum rv_verdict rv_verify_finding(const struct rv_finding *f,
				  const struct rv_diff *d, const char *post,
				  size_t postlen);

/*
 * Does a later patch of the series change the lines f points at?
 * diffs[k] is patch k's diff (NULL when absent); f->patch is f's patch.
 */
bool rv_verify_fixed_later(const struct rv_finding *f,
			   struct rv_diff *const *diffs, size_t ndiffs);

/*
 * Where f's lines are at the series tip: f->tip_file, tip_line_start and
 * tip_line_end get the place in the last patch's post-image (diffs[0..
 * ndiffs) are the patches). Returns 0, or -1 (tip fields cleared) when
 * a later patch changes the lines or f has no file.
 */
int rv_verify_at_tip(struct rv_finding *f, struct rv_diff *const *diffs,
		     size_t ndiffs);

/*
 * A finding on the series tip (lines of the tip's post-image) belongs
 * to the patch that added its lines: f's patch, file and lines become
 * that patch's. diffs[0..np) are the patches. When no patch added them,
 * f->patch is the last patch that changes the file (lines unchanged).
 * Returns f->patch, or -1 when no patch changes the file.
 */
int rv_verify_tip_owner(struct rv_finding *f, struct rv_diff *const *diffs,
			size_t np);

/* A category as the vote compares it: lower case, synonyms folded. */
void rv_category_normalise(const char *in, char *out, size_t outsz);

/* Do two titles share enough words to be about the same problem? */
bool rv_titles_similar(const char *a, const char *b);

/* ---- context-tip.c ----------------------------------------------------- */

/*
 * The unified diff from one tree (or commit) to another, hex ids, as
 * text in out. 0, RV_ERR_REPO (an id is not there) or RV_ERR_INPUT (too
 * large for out's cap).
 */
int rv_tree_diff(struct rv_repo *repo, const char *old_tree,
		 const char *new_tree, struct sb *out);

/* ---- llm-ensemble.c ---------------------------------------------------- */

/*
 * Per patch k of the series, what the pipeline prepared; one more slot
 * after the series' patches may hold the whole series (its tip).
 */
struct rv_ensemble_patch {
	const struct rv_diff *diff; /* NULL: skipped */
	const char *post_tree;
	const struct mp_patch *patch; /* NULL: series->patches[k] */
	const char *label;	      /* NULL: "n/m" */
};

/*
 * Ask every LLM voter of opts about every prepared patch, concurrently;
 * record the calls, abstentions and left-out context in r and append
 * the parsed findings to pool (unverified). 0, or RV_ERR_DEADLINE when
 * the deadline passed while the prompts were built (nothing was sent).
 */
int rv_ensemble_run(struct rv_review *r, struct rv_repo *repo,
		    const struct rv_review_opts *opts,
		    const struct rv_ensemble_patch *pp, size_t np,
		    struct rv_findings *pool, struct errmsg *err);
/*
 * Past opts->deadline_at? Then err says so ("... while STAGE") and it
 * returns true (pipeline.c).
 */
bool rv_review_past_deadline(const struct rv_review_opts *opts,
			     const char *stage, struct errmsg *err);

/* ---- llm-symbols.c: the symbol index ------------------------------------ */

/*
 * Where the C of a tree defines and uses its names, parsed with
 * tree-sitter's C grammar: built by rv_symbols_index() (review.h) into
 * <git dir>/quorum/symbols.db for HEAD's tree, keyed by blob id, and
 * brought to a series' tree by rv_symbols_overlay(), which parses only
 * the files that differ. Files other than .c and .h, over
 * RV_SYMBOLS_MAX_FILE bytes, or that the parser gave up on (a time limit
 * per file, or a crash) are not indexed; each answer counts them.
 *
 * Parsing runs in a child process (fork, one per batch of files): Debian
 * 12's libtree-sitter 0.20.7 frees a bad pointer on some hostile input,
 * and a crash must cost the file, not the review. Callers need nothing
 * but a process that may fork.
 */
struct rv_symbols;

enum rv_sym_kind {
	RV_SYM_ANY = 0,	   /* a query for every kind */
	RV_SYM_FUNCTION,   /* a function definition (with its body) */
	RV_SYM_STRUCT,	   /* struct NAME { ... } */
	RV_SYM_UNION,	   /* union NAME { ... } */
	RV_SYM_ENUM,	   /* enum NAME { ... } */
	RV_SYM_TYPEDEF,	   /* typedef ... NAME; */
	RV_SYM_MACRO,	   /* #define NAME value */
	RV_SYM_FUNC_MACRO, /* #define NAME(args) value */
	RV_SYM_ENUMERATOR, /* NAME inside enum { ... } */
	RV_SYM_VARIABLE,   /* a file-scope variable (not extern) */
	RV_SYM_KIND_N,
};

enum rv_ref_kind {
	RV_REF_CALL = 1, /* NAME(...) in a function or an initialiser */
	RV_REF_ADDRESS,	 /* NAME as a value: `.open = NAME`, `p = &NAME`,
			  * `f(NAME)`: how ops tables call a function */
	RV_REF_MACRO,	 /* NAME(...) in the body of a #define */
};

/* Bytes of a file past which it is not parsed. */
#define RV_SYMBOLS_MAX_FILE ((size_t)2 << 20)
/* What one overlay parses at most; past it, changed files are masked. */
#define RV_SYMBOLS_OVERLAY_MAX_FILES 500
#define RV_SYMBOLS_OVERLAY_MAX_BYTES ((size_t)32 << 20)

/* "function", "struct", ... "variable" ("any" for RV_SYM_ANY). */
const char *rv_sym_kind_name(enum rv_sym_kind kind);
/* The kind named s (as rv_sym_kind_name() spells it), or -1. */
int rv_sym_kind_parse(const char *s);
/* "call", "address" or "macro". */
const char *rv_ref_kind_name(enum rv_ref_kind kind);

struct rv_sym_def {
	char *name;
	char *path;
	enum rv_sym_kind kind;
	int line, end_line; /* 1-based, inclusive */
};

struct rv_sym_ref {
	char *name; /* the name used (the callee) */
	char *path;
	char *scope; /* the function, macro or variable it is in; "" if none */
	enum rv_ref_kind kind;
	int line;
};

/*
 * An answer: at most the max asked for, of total found. unindexed counts
 * the .c and .h files of the tree that were not parsed (too big, the
 * parser gave up, or past an overlay's caps): the answer may miss what
 * they hold. Release with rv_sym_defs_release() / rv_sym_refs_release().
 */
struct rv_sym_defs {
	struct rv_sym_def *items;
	size_t n, alloc;
	size_t total;
	size_t unindexed;
};

struct rv_sym_refs {
	struct rv_sym_ref *items;
	size_t n, alloc;
	size_t total;
	size_t unindexed;
};

void rv_sym_defs_release(struct rv_sym_defs *d);
void rv_sym_refs_release(struct rv_sym_refs *r);

/*
 * Parse one file's text src[0..len) (hostile: bounded in time and size)
 * and append what it defines to defs and what it uses to refs (either
 * may be NULL), with path as their path, all of them (total == n).
 * Returns 0; RV_ERR_INPUT when the file is over RV_SYMBOLS_MAX_FILE or
 * the parser gave up on it (nothing appended); RV_ERR_INTERNAL when the
 * grammar cannot be loaded (a libtree-sitter of another ABI).
 */
int rv_symbols_parse(const char *path, const char *src, size_t len,
		     struct rv_sym_defs *defs, struct rv_sym_refs *refs,
		     struct errmsg *err);

/*
 * Open the symbol index of the repository at or above repo_path, as
 * built for the tree of the last `quorum index`. Returns 0 with *out
 * set; 0 with *out NULL when there is no symbol index yet; RV_ERR_REPO
 * when repo_path is not a repository; RV_ERR_INTERNAL when the index is
 * unreadable or of another schema (the message says to run `quorum
 * index`). Caller frees *out with rv_symbols_free().
 */
int rv_symbols_open(struct rv_symbols **out, const char *repo_path,
		    struct errmsg *err);
void rv_symbols_free(struct rv_symbols *s);

/*
 * The tree (hex id) the answers are for: the indexed tree, or the one of
 * the last overlay. Points into s.
 */
const char *rv_symbols_tree(const struct rv_symbols *s);

/*
 * Bring s to tree_id (hex id of a tree or a commit, read through repo,
 * so the trees of an applied series in memory work): the paths that
 * differ between the indexed tree and tree_id are masked and their new
 * .c and .h blobs parsed in memory, never the whole tree. It replaces
 * the overlay before it (a file both overlays hold is not parsed
 * again). Past RV_SYMBOLS_OVERLAY_MAX_FILES or _MAX_BYTES of parsing,
 * the remaining changed files are masked without being parsed and
 * counted as unindexed in every answer. Returns 0, RV_ERR_REPO (tree_id
 * is not a tree or commit of repo) or RV_ERR_INTERNAL (a diff or db
 * error); on error the overlay before it is kept.
 */
int rv_symbols_overlay(struct rv_symbols *s, struct rv_repo *repo,
		       const char *tree_id, struct errmsg *err);

/*
 * The definitions of name (a C identifier) of kind (RV_SYM_ANY: all),
 * at most max into *out (which the caller zeroed or released), the files
 * the overlay parsed first, then by path and line; out->total counts
 * them all. Returns 0 (maybe with none), RV_ERR_INPUT when name is not
 * a C identifier of at most 255 bytes, RV_ERR_INTERNAL on a db error.
 */
int rv_symbols_definitions(struct rv_symbols *s, const char *name,
			   enum rv_sym_kind kind, size_t max,
			   struct rv_sym_defs *out, struct errmsg *err);

/*
 * The places that call name or take it as a value (struct rv_sym_ref
 * says which, and in which function), at most max into *out, in the same
 * order and with the same returns as rv_symbols_definitions().
 */
int rv_symbols_callers(struct rv_symbols *s, const char *name, size_t max,
		       struct rv_sym_refs *out, struct errmsg *err);

/* ---- llm-tools.c: the tools --------------------------------------------- */

/*
 * The tools a model calls during a review, answered in-process from the
 * series' applied tree with libgit2: no worktree on disk, no shell, no
 * network. Each answer is text (data: the loop puts it inside a fenced
 * block) that starts with one line naming the call, its paths and
 * strings C-quoted as git quotes paths, is bounded in bytes, lines and
 * entries, and says where and why it was cut. Paths are confined to the
 * tree: no absolute path, no `..` or `.git` component, no symbolic link
 * followed (a link is answered as "a symbolic link to X"), no submodule
 * entered. The tools' declarations (names, descriptions, JSON Schemas)
 * are data: prompts/tools.json.
 *
 *   read_file(path, start_line?, end_line?)  numbered lines of a file of
 *                                the tree (or a directory's entries)
 *   grep(pattern, path_glob?)    "path:line: text" of each line matching
 *                                a PCRE2 pattern, over the tree or the
 *                                files the glob matches
 *   log(path, function?)         commits of the base touching the path
 *                                (and that function), newest first
 *   blame(path, start_line, end_line)  who last changed those lines of
 *                                the base
 *   similar(path, start_line, end_line)  the past bug/fix pairs that
 *                                resemble those lines of the tree, as
 *                                `quorum similar` shows them
 */

/* Caps of one answer, the defaults of struct rv_tool_ctx's fields. */
#define RV_TOOL_MAX_BYTES ((size_t)16 << 10) /* bytes of the answer */
#define RV_TOOL_MAX_LINES 200  /* lines of read_file, blame, similar */
#define RV_TOOL_MAX_ENTRIES 50 /* grep matches, log commits, entries */
#define RV_TOOL_SECONDS 1.0    /* wall time of a grep or a log walk */
#define RV_TOOL_MAX_SCAN ((size_t)64 << 20) /* bytes one grep reads */

/* Limits no context raises. */
#define RV_TOOL_MAX_ARGS ((size_t)64 << 10) /* bytes of a call's arguments */
#define RV_TOOL_MAX_PATTERN 1000 /* bytes of a grep pattern or glob */
#define RV_TOOL_MAX_FILE ((size_t)32 << 20) /* bytes of a file read */
#define RV_TOOL_MAX_LINE 512	 /* bytes shown of one line; the rest is cut */
#define RV_TOOL_MAX_WALK 200000	 /* commits one log call walks */
#define RV_TOOL_BLAME_DEPTH 1000 /* first-parent commits blame reads */
#define RV_TOOL_SIMILAR_K 5	 /* pairs similar shows, as quorum similar */
/* PCRE2 limits of one match of a grep pattern against one line. */
#define RV_TOOL_MATCH_LIMIT 1000000
#define RV_TOOL_DEPTH_LIMIT 10000
#define RV_TOOL_HEAP_LIMIT 16384 /* KiB */

struct rv_symbols;

/* What the tools read, and their caps. Everything is borrowed. */
struct rv_tool_ctx {
	struct rv_repo *repo;
	/* The series' applied tree (hex id of a tree or a commit): what
	 * read_file, grep and similar read. */
	const char *tree;
	/* The base commit (hex id): what log and blame read; NULL or "":
	 * those two are not offered. */
	const char *base;
	struct rv_history *hist; /* NULL: similar is not offered */
	struct rv_symbols *syms; /* the symbol index, or NULL */
	/* Caps; a field left 0 takes its RV_TOOL_ default. */
	size_t max_bytes;
	int max_lines;
	int max_entries;
	double seconds;
	size_t max_scan;
};

#define RV_TOOL_CTX_INIT                                                       \
	{                                                                      \
		.repo = NULL                                                   \
	}

/*
 * Answer a model's call of tool name with the arguments args[0..
 * args_len): the JSON object text the API carried (OpenAI's
 * function.arguments, Anthropic's input printed). The answer is appended
 * to out; it starts with a line naming the call, stays within c's caps
 * (plus its header and a note of a few hundred bytes) and ends with a
 * note saying how much there was and what was left out.
 *
 * Returns 0 when out holds an answer (an empty result, a symbolic link
 * or a submodule named instead of followed, are answers). On error, out
 * holds the header line and "error: " and one sentence the model can act
 * on, and err gets that sentence; the caller sends it back as a tool
 * error (Anthropic's is_error). The errors:
 *   RV_ERR_INPUT    an unknown tool or one not offered in this review;
 *                   arguments that are not a JSON object, larger than
 *                   RV_TOOL_MAX_ARGS, an unknown, missing or wrong-typed
 *                   argument; a line range out of the file; a pattern
 *                   that does not compile or needs more backtracking
 *                   than the match limits allow (it never runs away);
 *   RV_ERR_UNSAFE   a path that leaves the tree (absolute, `..`, `.git`)
 *                   or goes through a symbolic link or a submodule;
 *   RV_ERR_REPO     the path is not in the tree, the tree or base is not
 *                   readable;
 *   RV_ERR_INTERNAL the history index failed (similar);
 *   RV_ERR_NOMEM    out's cap was reached (out is left as it was).
 * Nothing is cached between calls: a thousand calls hold no more memory
 * than one. Calls that read one repo must not run at the same time on
 * several threads (libgit2's repository is not shared that way).
 */
int rv_tool_call(const struct rv_tool_ctx *c, const char *name,
		 const char *args, size_t args_len, struct sb *out,
		 struct errmsg *err);

/*
 * Is tool name offered with c (read_file and grep always; log and blame
 * with a base; similar with a history index)? False for unknown names.
 */
bool rv_tool_offered(const struct rv_tool_ctx *c, const char *name);

/*
 * Append to tools (a cJSON array) the declarations, read from
 * dir/tools.json, of the tools offered with c, in the file's order, in
 * api's shape: OpenAI {"type": "function", "function": {"name",
 * "description", "parameters"}}, Anthropic {"name", "description",
 * "input_schema"}. Returns 0, RV_ERR_INPUT when the file is missing, not
 * JSON, or does not declare exactly the tools quorum answers with the
 * arguments it reads (the message names the tool and the argument), or
 * RV_ERR_NOMEM. On error tools is left as it was.
 */
int rv_tools_declare(const char *dir, const struct rv_tool_ctx *c,
		     enum rv_provider api, struct cJSON *tools,
		     struct errmsg *err);

/* ---- shared by llm-tools*.c ---- */

/* A call's arguments, as read by rv_tool_call() (strings borrowed). */
struct rv_tool_args {
	const char *path, *pattern, *path_glob, *function;
	int start_line, end_line; /* 0 when not given */
};

/* c's caps with the defaults filled in. */
void rv_tool_caps(const struct rv_tool_ctx *c, struct rv_tool_ctx *caps);

/* Append s C-quoted as git quotes a path ("a\tb", octal for bytes >= 0x80),
 * always in double quotes, at most max bytes of s ("..." after). */
void rv_tool_quote(struct sb *out, const char *s, size_t max);

/* Append s as git shows a path: bare, or C-quoted when it needs to be. */
void rv_tool_path(struct sb *out, const char *s);

/*
 * Append line[0..len) as valid UTF-8 with C0 controls but tab shown as
 * '?' and a trailing CR dropped, at most RV_TOOL_MAX_LINE bytes (then
 * "... [N more bytes]").
 */
void rv_tool_line(struct sb *out, const char *line, size_t len);

/*
 * Check that path stays in a tree: relative, no empty, `.`, `..` or
 * `.git` component (any case), at most RV_DIFF_MAX_PATH bytes; one
 * trailing '/' is allowed. 0 or RV_ERR_UNSAFE/RV_ERR_INPUT with err.
 */
int rv_tool_path_check(const char *path, struct errmsg *err);

/* Monotonic seconds. */
double rv_tool_now(void);

/*
 * llm-tools-git.c: the tools that read history. Same contract as
 * rv_tool_call(), once it has written the header line and filled c's
 * caps (rv_tool_caps()); a's arguments are those the table requires.
 */
int rv_tool_log(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		struct sb *out, struct errmsg *err);
int rv_tool_blame(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		  struct sb *out, struct errmsg *err);
int rv_tool_similar(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		    struct sb *out, struct errmsg *err);

/*
 * The lines of path in tree (hex tree or commit), confined as
 * rv_tool_path_check() says and never through a link or a submodule:
 * the blob's bytes into data (at most RV_TOOL_MAX_FILE). Returns 0,
 * RV_ERR_UNSAFE, RV_ERR_REPO (absent, a directory, a link, a
 * submodule, too large, binary: the message says which), RV_ERR_NOMEM.
 */
int rv_tool_read_blob(struct rv_repo *repo, const char *tree, const char *path,
		      struct sb *data, struct errmsg *err);

/* Lines in data[0..len): a last line without a newline counts. */
int rv_tool_count_lines(const char *data, size_t len);

#endif
