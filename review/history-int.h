/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * history-int.h - internals shared by review/history*.c and voter-history.c.
 * Nothing here is part of the public contract (review/review.h is).
 */
#ifndef QUORUM_HISTORY_INT_H
#define QUORUM_HISTORY_INT_H

#include <stdint.h>

#include <git2.h>
#include <sqlite3.h>

#include "auc.h"
#include "review.h"

#define HIST_SCHEMA_VERSION "10"

/*
 * A commit enters the risk fit (of the index and of each eval refit)
 * once this old. Its label is what the fixes so far say: on iproute2 and
 * rdma-core 29-31% of the fixes named their commit within 90 days, 42-44%
 * within 180 (the median is 8 to 10 months), so no delay makes labels
 * whole; a shorter one fits on fresher commits. Over fifteen yearly eval
 * windows the margin over lines changed was +0.021 at 180 days and
 * +0.025 to +0.026 at 30 to 120 (iproute2 2015, its first year of
 * Fixes:, from -0.028 to +0.013).
 */
#define HIST_LABEL_RIPE (90 * 86400)

/* Caps on what one hostile commit may make the index store. */
#define HIST_MAX_MSG ((size_t)64 << 10) /* bytes of a message we parse */
#define HIST_MAX_FIXES_PER_COMMIT 16
#define HIST_MAX_SUBJECT 400
#define HIST_MAX_FILES_PER_PAIR 24
#define HIST_MAX_HUNKS_PER_PAIR 40
#define HIST_MAX_HUNK_LINES 80 /* lines kept of one side of one hunk */
#define HIST_MAX_LINE 300      /* bytes kept of one line */
#define HIST_MAX_EXPL 400      /* bytes of the fix's explanation */

/* The share of history the risk voter calls risky (its threshold). */
#define HIST_RISK_TOP 0.02

/*
 * Risk features of a commit (history-risk.c), all computed from what
 * came before it: the size and spread of the change, the history of the
 * touched files and functions, the author's experience, the commit's
 * purpose, and what its added lines do. Counts are fed to the model as
 * log1p(count).
 */
enum {
	/* size and diffusion */
	HR_LA,	     /* lines added */
	HR_LD,	     /* lines deleted */
	HR_LA_CODE,  /* lines added to C sources and headers */
	HR_NF,	     /* files */
	HR_ND,	     /* directories */
	HR_NS,	     /* top-level directories */
	HR_ENTROPY,  /* bits: how evenly the change spreads over its files */
	HR_NEWFILES, /* files created */
	HR_FUNCS,    /* distinct functions touched */
	/* history of the touched code */
	HR_NUC,	       /* earlier commits touching the files */
	HR_FIXES,      /* earlier fixes touching the files */
	HR_FIXES_YEAR, /* ... weighted by recency (half-life a year) */
	HR_FUNC_FIXES, /* earlier fixes touching the same functions */
	HR_NDEV,       /* distinct authors of the most shared file */
	HR_AGE,	       /* days since the files were last changed (mean) */
	HR_CHURN,      /* recent commits to the files (half-life 90 days) */
	/* experience */
	HR_EXP,	 /* the author's earlier commits */
	HR_REXP, /* ... weighted by recency (half-life 180 days) */
	HR_SEXP, /* ... in this subsystem */
	/* purpose */
	HR_ISFIX,    /* the commit is a fix (subject or Fixes: trailer) */
	HR_REVERT,   /* it is a revert */
	HR_FEATURE,  /* the subject says it adds something */
	HR_MSGLINES, /* lines of the commit message */
	/* what the added lines of C do */
	HR_ALLOC,     /* allocation calls */
	HR_FREE,      /* frees and releases */
	HR_LOCK,      /* lock calls */
	HR_UNLOCK,    /* unlock calls */
	HR_GOTO,      /* gotos */
	HR_ERRPATH,   /* error returns (return -E..., return NULL, ERR_PTR) */
	HR_PTRARITH,  /* index and offset arithmetic */
	HR_CAST,      /* casts */
	HR_SIZEMUL,   /* sizes in multiplications */
	HR_NEWFUNC,   /* new function definitions */
	HR_COND,      /* conditions */
	HR_LOOP,      /* loops */
	HR_COPY,      /* memcpy/strcpy/sprintf family */
	HR_DEL_CHECK, /* conditions and error returns removed */
	HR_TESTLINES, /* lines added under a test directory */
	/*
	 * What the labels known before the commit say: earlier commits
	 * that a fix indexed before this one named (by Fixes: or revert).
	 */
	HR_FILE_BUGS,	     /* such commits that touched the files */
	HR_FILE_BUGS_RECENT, /* ... weighted by when they were named */
	HR_FILE_BUGRATE,     /* their share of the files' commits (mean) */
	HR_FUNC_BUGS,	     /* such commits that touched the functions */
	HR_DIR_BUGRATE,	     /* their share of the directories' commits */
	HR_AUTHOR_BUGS,	     /* the author's commits that were named */
	HR_AUTHOR_BUGRATE,   /* ... their share of the author's commits */
	/*
	 * How the words of the commit fared before: for each word, the
	 * share of the earlier commits with it that were named by a fix
	 * (against the tree's share, as a log ratio), averaged.
	 */
	HR_WORDS_CODE,	  /* the words of the added lines */
	HR_WORDS_SUBJECT, /* the words of the subject */
	/*
	 * Lines added, each weighted by how much likelier than the tree's
	 * its file's commits were to be named by a fix (the file's share
	 * shrunk to its directory's, that to the tree's).
	 */
	HR_LA_WEIGHTED,
	/*
	 * Grounding: how much the added lines' words overlap those of the
	 * most similar earlier commit to the same files that a fix named.
	 */
	HR_GROUND,
	/*
	 * Lines added weighted as HR_LA_WEIGHTED, with every count of the
	 * rates (commits, and those later named) halving each year: where
	 * the bugs are now, not where they were.
	 */
	HR_LA_WEIGHTED_RECENT,
	HR_N,
};
/*
 * The model's inputs: the features (counts as log1p) and, after them,
 * densities: what the lines do per line added, so a model anchored on
 * size can ask what a patch of that size does.
 */
enum {
	HD_COND = HR_N, /* conditions per added line of C */
	HD_ERR,		/* error returns and gotos per added line of C */
	HD_MEM,		/* allocations, frees and copies per added line of C */
	HD_LOCK,	/* locks and unlocks per added line of C */
	HD_CODE,	/* share of the added lines that are C */
	HD_TEST,	/* share of the added lines under a test directory */
	HD_DEL,		/* share of the changed lines that are removed */
	HD_FIXES,	/* recent fixes per touched file */
	HF_N,
};

/* Points of the fitted rows' logits a score is placed among. */
#define HIST_MODEL_Q 201
/* Bins of score for the fix rate the fitted rows had there. */
#define HIST_RATE_BINS 20

struct hist_model {
	bool ok;
	double mean[HF_N], sd[HF_N];
	double w[HF_N + 1];	/* w[HF_N] is the intercept */
	double q[HIST_MODEL_Q]; /* the fitted rows' logits, quantiles */
	/*
	 * How often the fitted rows scoring in each twentieth of [0,1]
	 * were later fixed (weighted, shrunk to the base rate, made
	 * monotone).
	 */
	double rate[HIST_RATE_BINS];
	double threshold;	/* score at which the risk voter speaks */
	double lambda;		/* L2 strength, chosen on held-out commits */
	double heldout_auc;	/* of that choice, on the newest fifth */
	size_t rows, positives; /* what it was fitted on */
	char why[200];		/* when !ok: why there is no model */
};

#define HIST_API_MAX 16	       /* API prefixes kept */
#define HIST_API_PREFIX_MAX 16 /* bytes of one, with the NUL */

/* The tree's own API prefixes ("rta_ addattr_ ..."), learned once. */
struct hist_api {
	size_t n;
	char v[HIST_API_MAX][HIST_API_PREFIX_MAX];
};

struct rv_history {
	sqlite3 *db;
	git_repository *repo;
	char *workdir;	 /* NULL for a bare repository */
	int64_t horizon; /* only fixes with seq < horizon are visible */
	struct hist_model model;
	char *embed_url, *embed_model, *embed_key; /* NULL: lexical only */
	char embed_error[256]; /* why the last search had no vectors */
	struct hist_api api;   /* calls kept in shapes */
	bool lexical_only;     /* QUORUM_SIMILAR_LEXICAL: the old ranking */
};

/* ---- embeddings (history-embed.c) ---- */

#define HIST_EMBED_MAX_DIM 8192
#define HIST_EMBED_BATCH 32
#define HIST_EMBED_MAX_TEXT 4000 /* bytes of one text sent */
#define HIST_EMBED_TIMEOUT 60	 /* seconds for one request */

/*
 * Vectors of n texts from an OpenAI-compatible /v1/embeddings endpoint,
 * each normalized to length 1, into *out (n * *dim floats; caller frees).
 * Returns 0 or RV_ERR_INTERNAL with err saying what went wrong.
 */
int hist_embed(const struct rv_embed_opts *o, const char *const *texts,
	       size_t n, float **out, size_t *dim, struct errmsg *err);
/* Give every stored hunk without a vector one; *nvec: vectors stored. */
int hist_embed_hunks(sqlite3 *db, const struct rv_embed_opts *o, size_t *nvec,
		     struct errmsg *err);
/*
 * Cosine of the query text against the visible hunks' vectors: the best
 * max hunks into ids/cos (sorted, best first). Returns how many, or
 * RV_ERR_INTERNAL (h->embed_error says why).
 */
int hist_embed_search(struct rv_history *h, const char *query, size_t max,
		      int64_t *ids, double *cos);

/* Raw per-commit facts from which the features are derived. */
struct hist_facts {
	double src, hdr, other; /* bytes changed by kind of file */
	double fixhist, author, kw, isfix;
	double files, dirs, age_days, subsys; /* facts, not model inputs */
};

/* The columns of table commits that hold the facts, in struct order. */
#define HIST_FACT_COLS                                                         \
	"src, hdr, other, fixhist, authorexp, kw, isfix, files, dirs, age,"    \
	" subsys"
#define HIST_NFACTS 11
/* Read HIST_NFACTS columns of st from col on into f. */
void hist_facts_from_row(sqlite3_stmt *st, int col, struct hist_facts *f);
/* Bind f as HIST_NFACTS parameters of st from parameter col on. */
void hist_facts_bind(sqlite3_stmt *st, int col, const struct hist_facts *f);
/* Smoothed bug rate of a subsystem with that many commits and bugs. */
double hist_subsys_rate(int64_t commits, int64_t bugs);
/* "tc" of "tc: flower: fix x", lower-cased, or "" (buf of len bytes). */
void hist_subsystem(const char *subject, char *buf, size_t len);
/* What kind of file path is: 0 source, 1 header, 2 anything else. */
int hist_file_kind(const char *path);
/* Does a subject say the commit adds something (a feature)? */
bool hist_subject_adds(const char *subject);
/* Does a subject say the commit fixes something? */
bool hist_subject_fixes(const char *subject);

double hist_model_score(const struct hist_model *m, const double x[HF_N]);
/*
 * The share of the history's commits scoring about score that were
 * later fixed: a probability, unlike the score. -1 when not known.
 */
double hist_model_rate(const struct hist_model *m, double score);
/* Fit on n rows of X (n x HF_N) with labels y; threshold from the top frac. */
void hist_model_fit(struct hist_model *m, const double *X, const int *y,
		    size_t n, double top_frac);
int hist_model_save(sqlite3 *db, const struct hist_model *m);
void hist_model_load(sqlite3 *db, struct hist_model *m);

/* Path of the db for a repository; caller frees. NULL when not a repo. */
char *hist_db_path(git_repository *repo);
/*
 * Open (and with create, create or rebuild) the db at path. On a db that
 * is unreadable, of another schema, or not a db at all: with create the
 * files are removed and made anew and *reason says why; without create
 * RV_ERR_INTERNAL with a message that says to run `quorum index`.
 */
int hist_db_open(sqlite3 **out, const char *path, bool create, char *reason,
		 size_t reason_len, struct errmsg *err);
/* Remove the db and its -wal and -shm files. */
void hist_db_remove(const char *path);
int hist_exec(sqlite3 *db, const char *sql, struct errmsg *err);
int64_t hist_meta_int(sqlite3 *db, const char *key, int64_t def);
int hist_meta_set_int(sqlite3 *db, const char *key, int64_t v);
/* Append the text value of key to out; false when there is none. */
bool hist_meta_text(sqlite3 *db, const char *key, struct sb *out);
int hist_meta_set_text(sqlite3 *db, const char *key, const char *v);

/* Identifier tokens (>= 3 chars, no C keywords) of text, space-separated. */
void hist_tokens(const char *text, struct sb *out, size_t max_tokens);
/* A line without leading/trailing blanks and with inner runs squeezed. */
void hist_normalize(const char *line, size_t len, struct sb *out);
/* True when a normalized line carries enough to be worth matching. */
bool hist_line_significant(const char *norm);
/* The function name in a hunk section ("static int foo(int)") or NULL. */
char *hist_function_name(const char *section);
/*
 * Does path name a source file, where a hunk's section or a line like
 * "foo(" can be a function? Not a man page, Makefile or spec file,
 * whose hunk sections are headings ("Capabilities (state-can-change)")
 * and conditionals ("ifeq").
 */
bool hist_path_has_functions(const char *path);
/*
 * Does s start a function's definition ("int f(int x)" at column 0, not
 * a declaration, call, label or statement)?
 */
bool hist_starts_function(const char *s, size_t len);
/*
 * The function line k of hunk hk sits in: the last definition the hunk
 * starts before it (on the line's side: pre-image for a removed line,
 * post-image otherwise), else the one its section names; NULL at file
 * scope (after a closing "}" at column 0), when none is known, or when
 * path is not a source file (hist_path_has_functions). Caller frees.
 */
char *hist_hunk_function(const char *path, const struct rv_hunk *hk, size_t k);
/* Top-level directory of a path (or "" for a top-level file), into buf. */
void hist_top_dir(const char *path, char *buf, size_t len);

/*
 * Replace control bytes (ESC and friends; tab and newline kept) with '?'
 * in place: text from a repo's history ends up on a terminal.
 */
void hist_sanitize(char *s);

/* 64-bit FNV-1a. */
uint64_t hist_hash(const void *p, size_t n);

/* ---- shapes (history-shape.c) ---- */

#define HIST_SHAPE_K 6		    /* symbols in a shingle */
#define HIST_SHAPE_W 4		    /* winnowing window, in shingles */
#define HIST_SHAPE_MAX_TOKENS 20000 /* of one text: bounded time and memory */
#define HIST_API_MIN_CALLEES 4	    /* distinct callees that make an API */
#define HIST_API_MAX_CALLEES 20000
#define HIST_API_SPREAD 3 /* files a callee is called from to be an API's */

/* Distinct callee names seen, to learn the API prefixes from. */
struct hist_api_counts {
	struct {
		char *name;
		size_t len;
		uint64_t hash;
		/* hashes of the files it is called from */
		uint64_t files[HIST_API_SPREAD];
		size_t nfiles;
	} * v;
	size_t n, alloc;
	size_t *slot; /* open addressing: index + 1 into v, or 0 */
	size_t cap;
};

/* One token of code: where it is, and the symbol it stands as. */
struct hist_stok {
	const char *s; /* into the lexed text (not owned) */
	uint32_t len;
	uint32_t line; /* 0-based line of the text */
	uint64_t sym;  /* hash of the abstracted symbol */
	bool ident;    /* a name that was abstracted */
};

struct hist_shape {
	struct hist_stok *v;
	size_t n, alloc;
};

/*
 * Append the tokens of len bytes of C text (lines without diff prefixes)
 * to out, at most max_tokens in all. Never fails; junk gives few tokens.
 */
void hist_shape_lex(const char *text, size_t len, const struct hist_api *api,
		    struct hist_shape *out, size_t max_tokens);
/* A boundary no shingle spans (between two hunks). */
void hist_shape_break(struct hist_shape *out);
void hist_shape_release(struct hist_shape *s);
/* The abstracted stream as text, "$ = malloc ( $ ) ;" (tests, debugging). */
void hist_shape_text(const struct hist_shape *s, struct sb *out);
/*
 * The distinct shingle hashes of s, sorted, into *out (caller frees);
 * winnowed when winnow. Returns how many.
 */
size_t hist_shape_shingles(const struct hist_shape *s, bool winnow,
			   uint64_t **out);
/* Is a call to w kept as itself (libc, or an API prefix of the tree)? */
bool hist_api_keeps(const struct hist_api *api, const char *w, size_t len);
/* Count the calls in text, code of file. */
void hist_api_count(struct hist_api_counts *c, const char *text,
		    const char *file);
void hist_api_counts_release(struct hist_api_counts *c);
/* The prefixes shared by the most distinct callees. */
void hist_api_choose(const struct hist_api_counts *c, struct hist_api *api);
void hist_api_format(const struct hist_api *api, struct sb *out);
void hist_api_parse(const char *s, struct hist_api *api);

/*
 * Token Jaccard of two normalized lines, as the retrieval matches lines:
 * 1 for the same line (or the same set of names and numbers), else in
 * [0,1).
 */
double hist_line_similarity(const char *a, const char *b);

/* Find a past fix's hunks that resemble d; used by similar and the voter. */
int hist_similar(struct rv_history *h, const struct rv_diff *d, size_t k,
		 struct rv_similar_list *out, struct errmsg *err);

/* Facts of a patch against the index as it is now (for a new patch). */
void hist_patch_facts(struct rv_history *h, const struct rv_diff *d,
		      const char *message, const char *author_email,
		      struct hist_facts *f);

/* ---- the risk features and model (history-risk.c) ---- */

/* Raw feature values of one commit, before the log transform. */
struct hist_rfeat {
	double v[HR_N];
};

/* The model's inputs from raw features. */
void hist_features(const struct hist_rfeat *r, double x[HF_N]);
/* Short name of feature i ("la", "func_fixes"): JSON, debugging. */
const char *hist_feature_name(int i);

/* Counts what added and removed lines of one change do. */
struct hist_racc;
struct hist_racc *hist_racc_new(void);
void hist_racc_free(struct hist_racc *a);
void hist_racc_file(struct hist_racc *a, const char *path, bool added);
void hist_racc_hunk(struct hist_racc *a, const char *section);
void hist_racc_line(struct hist_racc *a, char origin, const char *s,
		    size_t len);
/* The size, spread and content counts of what was fed in, into out. */
void hist_racc_patch_done(struct hist_racc *a, struct hist_rfeat *out);

/* Per-repository state the index keeps to compute features. */
struct hist_risk;
/* Load the state from db (tables risk, riskstate), for an index run. */
int hist_risk_begin(sqlite3 *db, struct hist_risk **out, struct errmsg *err);
struct hist_risk_change {
	const char *path;
	const git_oid *old_id, *new_id; /* NULL when absent */
};
/*
 * Compute and store commit seq's features from the state, then update
 * the state with the commit. Reads the changed blobs' content.
 */
int hist_risk_commit(struct hist_risk *r, git_repository *repo, int64_t seq,
		     int64_t time, const char *author, const char *message,
		     bool isfix, bool has_fixes,
		     const struct hist_risk_change *ch, size_t nch,
		     struct errmsg *err);
/*
 * The commit just passed to hist_risk_commit (fix_seq) names bug_seq:
 * from the commit after it on, the bug's files, functions and author
 * count one more commit that was later fixed.
 */
void hist_risk_label(struct hist_risk *r, int64_t fix_seq, int64_t bug_seq);
/* Store the state and refit the model; *note says what was fitted. */
int hist_risk_finish(struct hist_risk *r, char *note, size_t note_len,
		     struct errmsg *err);
void hist_risk_free(struct hist_risk *r);
/* Features of a new patch against the state as the index left it. */
void hist_risk_patch(struct rv_history *h, const struct rv_diff *d,
		     const char *message, const char *author_email,
		     struct hist_rfeat *out);
/*
 * The words of a patch that most raised its words features, by name:
 * those of its added C lines (code) and of its subject, each seen in
 * enough earlier commits and likelier than the tree's to be later fixed.
 */
#define HIST_RWORDS 3
struct hist_rword {
	char text[64];	   /* identifier characters only, NUL-terminated */
	unsigned int n, b; /* earlier commits with it, of which later fixed */
};
/*
 * Where the history features come from, so a reason names the place: the
 * patch's file and function with the most earlier commits later fixed,
 * and its file fixed most often. Paths are printable ASCII and space
 * only (any other byte '?'), a long one keeps its end; "" when none
 * counts.
 */
#define HIST_RPLACE 96
struct hist_rplace {
	char file[HIST_RPLACE];		 /* most commits later fixed */
	double file_named, file_commits; /* of its earlier commits */
	char func[HIST_RPLACE], func_file[HIST_RPLACE];
	double func_named, func_commits;
	char fixed[HIST_RPLACE];    /* most fixes */
	double fixed_n, fixed_year; /* fixes, and weighted to the last year */
};
/* A path as a reason may print it, into dst (see struct hist_rplace). */
void hist_place_copy(char dst[HIST_RPLACE], const char *src);
struct hist_rwords {
	struct hist_rword code[HIST_RWORDS], subject[HIST_RWORDS];
	size_t ncode, nsubject;
	double base; /* the share of all commits later fixed; <0: unknown */
	struct hist_rplace place;
};
/*
 * Fills *out from the words table and the state the index left (empty
 * without them).
 */
void hist_risk_words(struct rv_history *h, const struct rv_diff *d,
		     const char *message, struct hist_rwords *out);
/*
 * Words for the top reasons of a score ("adds 3 error paths"); words
 * (may be NULL) names the patch's words when those features are one.
 */
void hist_risk_explain(const struct hist_model *m, const struct hist_rfeat *r,
		       const struct hist_rwords *words, struct sb *why);
/* The stored features of commit seq (0, or -1 when there are none). */
int hist_risk_load(sqlite3 *db, int64_t seq, struct hist_rfeat *out);
/*
 * Rows to fit on, oldest first: commits at least the ripeness delay
 * older than before_time, labelled by fixes with seq < before_seq.
 * Caller frees *X (n x HF_N model inputs) and *y. 0 or -1.
 */
int hist_risk_rows(sqlite3 *db, int64_t before_time, int64_t before_seq,
		   double **X, int **y, double **wt, size_t *n);
/* The weight of a row of time t in a fit at time now (recency). */
double hist_risk_weight(int64_t t, int64_t now);
/* hist_model_fit() with a weight per row (NULL: all 1). */
void hist_model_fit_w(struct hist_model *m, const double *X, const int *y,
		      const double *wt, size_t n, double top_frac);
/* Area under the ROC curve of scores s against labels y; -1 undefined. */

/*
 * The constructs of a line of code the risk model counts as where fixes
 * go: conditions, error returns, gotos, allocations, frees, locks.
 */
size_t hist_line_hazards(const char *s, size_t len);

/*
 * Where a risk finding sits (voter-history.c; eval scores the same place):
 * the first added line of code of the function the patch adds the most
 * hazards to (hist_line_hazards()), then the most lines; without one,
 * the first added line of the hunk that adds the most. False when the
 * diff adds nothing.
 */
bool hist_risk_anchor(const struct rv_diff *d, const char **file, int *line);

#endif
