/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify-int.h - internals shared by review/classify*.c and the unit
 * tests. Not part of the contract (review/classify.h is).
 */
#ifndef QUORUM_CLASSIFY_INT_H
#define QUORUM_CLASSIFY_INT_H

#include <regex.h>
#include <stdint.h>

#include <git2.h>
#include <sqlite3.h>

#include "classify.h"

#define CL_NEVER INT64_MAX
#define CL_MAX_FILES 64 /* files of one commit the features look at */
#define CL_MAX_WORDS 24 /* words of one subject */
#define CL_MAX_FIXES 8	/* Fixes: of one commit */
#define CL_MAX_COMMITS 1000000

/* The model's inputs, computed for a commit from what came before it. */
enum {
	CF_FIXES,      /* has a Fixes: trailer */
	CF_SHIPPED,    /* ... naming a commit that was in a release by then */
	CF_UNSHIPPED,  /* ... naming only commits that never reached one */
	CF_SUBJ_FIX,   /* the subject says fix */
	CF_SUBJ_FEAT,  /* the subject says add, support, new */
	CF_SUBJ_CLEAN, /* the subject says cleanup, typo, doc, rename */
	CF_REVERT,     /* a revert */
	CF_DOCS,       /* touches only documentation */
	CF_FILES,      /* log1p(files) */
	CF_BYTES,      /* log1p(bytes changed) */
	CF_DIR_RATE,   /* log yes-rate of the touched directories (max) */
	CF_FILE_RATE,  /* log yes-rate of the touched files' commits (max) */
	CF_WORDS,      /* mean log lift of the subject's words */
	CF_N,
};

/* Names the reasons use, in enum order. */
extern const char *const cl_feature_names[CF_N];

struct cl_model {
	bool ok;
	double mean[CF_N], sd[CF_N];
	double w[CF_N + 1]; /* w[CF_N]: the intercept */
	double threshold;   /* probability at which the model says yes */
	double base;	    /* share of training rows labelled yes */
	size_t rows;
};

/* String -> dense id. */
struct cl_map {
	char **keys;
	uint32_t *slot; /* open addressing: id + 1, 0 empty */
	size_t n, cap, alloc;
};

uint32_t cl_map_id(struct cl_map *m, const char *key, size_t len);
/* The id of key, or UINT32_MAX when absent. */
uint32_t cl_map_find(const struct cl_map *m, const char *key, size_t len);
void cl_map_release(struct cl_map *m);

struct cl_commit {
	char hex[RV_OID_HEXSZ + 1];
	int64_t time;
	char *subject;
	char *author;
	bool merge; /* a merge or a root: not classified, not a row */
	bool flags[CF_DOCS + 1]; /* binary features as read */
	uint32_t *files, nfiles;
	uint32_t *dirs, ndirs;
	uint32_t *words, nwords;
	double bytes;
	int32_t *parents;
	uint32_t nparents;
	char *fix_refs[CL_MAX_FIXES]; /* hex prefixes until resolved */
	uint32_t nfix_refs;
	int32_t fixes[CL_MAX_FIXES]; /* resolved, -1 unresolved */
	uint32_t nfixes;
	int64_t release; /* time of the first release holding it */
	int32_t release_tag;
	int64_t label;		 /* time the label became known; CL_NEVER */
	const char *label_where; /* branch, "message" or "list" (interned) */
	int32_t label_by;	 /* the backport commit id index in where, -1 */
	double x[CF_N];
};

struct cl_stats {
	double *n, *yes; /* per id */
	size_t cap;
};

struct rv_classifier {
	git_repository *repo;
	git_odb *odb;
	sqlite3 *db; /* the cache; NULL when it cannot be written */
	struct rv_question q;
	regex_t re[RV_CL_MAX_REGEXES];
	size_t nre;
	char head[RV_OID_HEXSZ + 1];
	struct cl_commit *c;
	size_t n, alloc;
	struct cl_map oids; /* hex -> index */
	char **sorted;	    /* hex ids sorted, for abbreviated ids */
	struct cl_map paths, dirs, words, wheres;
	char **tags; /* release tag names */
	size_t ntags;
	/* The online pass leaves the stats as of now. */
	struct cl_stats sfile, sdir, sword;
	double n_all, yes_all;
	size_t labelled;
	/* Postings for the similar commits. */
	uint32_t **post_file, *npost_file;
	uint32_t **post_word, *npost_word;
	size_t npost_paths, npost_words; /* ids the postings cover */
	double *norm; /* per commit: its files' and words' idf, summed */
	struct cl_model model;
	int64_t ripe; /* seconds */
	bool model_cached;
	rv_progress_fn opts_progress;
	void *opts_progress_arg;
};

/* ---- classify-scan.c ---- */
void cl_cache_init(struct rv_classifier *c);
int cl_scan(struct rv_classifier *c, struct errmsg *err);
void cl_sort_ids(struct rv_classifier *c);
int32_t cl_resolve(const struct rv_classifier *c, const char *hex, size_t len);
void cl_resolve_fixes(struct rv_classifier *c);
void cl_releases(struct rv_classifier *c);
int cl_labels(struct rv_classifier *c, struct errmsg *err);
void cl_set_files(struct rv_classifier *c, struct cl_commit *k,
		  const char *paths);
void cl_set_subject(struct rv_classifier *c, struct cl_commit *k,
		    const char *subject);
void cl_set_fixes(struct cl_commit *k, const char *msg);
/* The id of "[ Upstream commit ID ]" in msg (len hex digits), or NULL. */
const char *cl_upstream_id(const char *msg, size_t *len);

/* ---- classify-question.c ---- */
void cl_regex_translate(const char *in, struct sb *out);
int cl_regex_compile(regex_t *re, const char *pattern, struct errmsg *err);

/* ---- classify-model.c ---- */
void cl_model_fit(struct cl_model *m, const double *X, const int *y, size_t n);
double cl_model_prob(const struct cl_model *m, const double x[CF_N]);
/* The features' contributions to the logit, standardised. */
void cl_model_terms(const struct cl_model *m, const double x[CF_N],
		    double t[CF_N]);
/* p mapped so the threshold is 0.5. */
double cl_calibrate(double p, double threshold);
char *cl_model_save(const struct cl_model *m);
int cl_model_load(struct cl_model *m, const char *s);

/* Subject words (lower case, >= 3 letters) into ids; returns how many. */
size_t cl_subject_words(const char *subject, char out[][32], size_t max);
bool cl_subject_fix(const char *subject);
bool cl_subject_feat(const char *subject);
bool cl_subject_clean(const char *subject);

/* ---- classify-llm.c ---- */
struct cl_llm_job;
/*
 * Ask every LLM voter about every input at once: res[i] gets one vote
 * per voter. diffs[i] and messages[i] are the inputs' texts.
 */
void cl_llm_run(struct rv_classifier *c, const struct rv_classify_opts *o,
		struct rv_cl_result *res, const char *const *messages,
		const char *const *diffs, size_t n);

#endif
