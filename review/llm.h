/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm.h - the LLM voter's stage group: what review/llm-*.c share with
 * each other and with the unit tests (the symbol index, the tools a model
 * calls over a series' applied tree). Not for bot/.
 */
#ifndef QUORUM_REVIEW_LLM_GROUP_H
#define QUORUM_REVIEW_LLM_GROUP_H

#include "review.h"

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
