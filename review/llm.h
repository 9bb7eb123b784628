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
