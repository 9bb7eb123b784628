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

#endif
