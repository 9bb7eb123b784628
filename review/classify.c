// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * classify.c - the AUTOSEL question on the ensemble. One pass over the
 * history, in time order, computes each commit's features from what was
 * known before it (labels known by then; an unlabelled commit counts as
 * a no only once it is ripe), so the same numbers serve a replay
 * (`quorum eval --question`) and a classification today. Voters: the
 * fitted model, the nearest past commits with their labels, and the
 * LLM voters (classify-llm.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify-int.h"

#define SMOOTH 2.0
#define KNN 8
#define WARM 3
#define KIND_PENALTY 0.5
#define DAY 86400

/* ---- stats ---- */

static void stats_fit(struct cl_stats *s, size_t n)
{
	if (n <= s->cap)
		return;
	s->n = xrealloc(s->n, n * sizeof(*s->n));
	s->yes = xrealloc(s->yes, n * sizeof(*s->yes));
	memset(s->n + s->cap, 0, (n - s->cap) * sizeof(*s->n));
	memset(s->yes + s->cap, 0, (n - s->cap) * sizeof(*s->yes));
	s->cap = n;
}

static void stats_release(struct cl_stats *s)
{
	free(s->n);
	free(s->yes);
}

static double base_rate(const struct rv_classifier *c)
{
	return (c->yes_all + 1) / (c->n_all + 2);
}

static double log_rate(const struct cl_stats *s, uint32_t id, double base)
{
	double n = id < s->cap ? s->n[id] : 0, y = id < s->cap ? s->yes[id] : 0;

	return log((y + SMOOTH * base) / (n + SMOOTH));
}

static void stats_add(struct rv_classifier *c, const struct cl_commit *k,
		      double dn, double dy)
{
	uint32_t i;

	for (i = 0; i < k->nfiles; i++) {
		c->sfile.n[k->files[i]] += dn;
		c->sfile.yes[k->files[i]] += dy;
	}
	for (i = 0; i < k->ndirs; i++) {
		c->sdir.n[k->dirs[i]] += dn;
		c->sdir.yes[k->dirs[i]] += dy;
	}
	for (i = 0; i < k->nwords; i++) {
		c->sword.n[k->words[i]] += dn;
		c->sword.yes[k->words[i]] += dy;
	}
	c->n_all += dn;
	c->yes_all += dy;
}

/* Features of k from the stats as they are, fixes shipped by now. */
static void features(struct rv_classifier *c, const struct cl_commit *k,
		     int64_t now, double x[CF_N])
{
	double base = base_rate(c), lb = log(base), best;
	bool resolved = false, shipped = false;
	uint32_t i;

	stats_fit(&c->sfile, c->paths.n);
	stats_fit(&c->sdir, c->dirs.n);
	stats_fit(&c->sword, c->words.n);
	memset(x, 0, CF_N * sizeof(*x));
	for (i = CF_FIXES; i <= CF_DOCS; i++)
		x[i] = k->flags[i];
	for (i = 0; i < k->nfixes; i++) {
		if (k->fixes[i] < 0)
			continue;
		resolved = true;
		if (c->c[k->fixes[i]].release <= now)
			shipped = true;
	}
	x[CF_SHIPPED] = shipped;
	x[CF_UNSHIPPED] = resolved && !shipped;
	x[CF_FILES] = log1p((double)k->nfiles);
	x[CF_BYTES] = log1p(k->bytes);
	for (i = 0, best = lb; i < k->ndirs; i++)
		if (!i || log_rate(&c->sdir, k->dirs[i], base) > best)
			best = log_rate(&c->sdir, k->dirs[i], base);
	x[CF_DIR_RATE] = best;
	for (i = 0, best = lb; i < k->nfiles; i++)
		if (!i || log_rate(&c->sfile, k->files[i], base) > best)
			best = log_rate(&c->sfile, k->files[i], base);
	x[CF_FILE_RATE] = best;
	for (i = 0; i < k->nwords; i++)
		x[CF_WORDS] += log_rate(&c->sword, k->words[i], base) - lb;
	if (k->nwords)
		x[CF_WORDS] /= k->nwords;
}

/* ---- the pass ---- */

enum { EV_COMMIT, EV_LABEL, EV_RIPE };

struct ev {
	int64_t t;
	int kind;
	uint32_t i;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->kind - y->kind;
}

static void pass(struct rv_classifier *c)
{
	struct ev *ev = xcalloc(3 * c->n + 1, sizeof(*ev));
	bool *counted = xcalloc(c->n + 1, sizeof(*counted));
	int64_t now = (int64_t)time(NULL);
	size_t n = 0, i;

	for (i = 0; i < c->n; i++) {
		const struct cl_commit *k = &c->c[i];

		if (k->merge)
			continue;
		ev[n++] = (struct ev){k->time, EV_COMMIT, (uint32_t)i};
		if (k->label != CL_NEVER)
			ev[n++] = (struct ev){k->label, EV_LABEL, (uint32_t)i};
		if (k->time + c->ripe <= now)
			ev[n++] = (struct ev){k->time + c->ripe, EV_RIPE,
					      (uint32_t)i};
	}
	qsort(ev, n, sizeof(*ev), cmp_ev);
	stats_fit(&c->sfile, c->paths.n);
	stats_fit(&c->sdir, c->dirs.n);
	stats_fit(&c->sword, c->words.n);
	for (i = 0; i < n; i++) {
		struct cl_commit *k = &c->c[ev[i].i];

		switch (ev[i].kind) {
		case EV_COMMIT:
			features(c, k, k->time, k->x);
			break;
		case EV_LABEL:
			stats_add(c, k, counted[ev[i].i] ? 0 : 1, 1);
			counted[ev[i].i] = true;
			break;
		case EV_RIPE:
			if (!counted[ev[i].i])
				stats_add(c, k, 1, 0);
			counted[ev[i].i] = true;
			break;
		}
	}
	free(ev);
	free(counted);
}

/* ---- training rows ---- */

/*
 * Rows known at time T: commits before T whose label is known by T or
 * that are ripe by T, from the first labelled commit on (before it the
 * tree had no such label at all, which says nothing about the commits).
 */
static size_t rows_at(const struct rv_classifier *c, int64_t T, double **X,
		      int **y)
{
	int64_t cover = CL_NEVER, first[WARM] = {0};
	size_t i, n = 0, nf = 0, j;

	/*
	 * From the WARM-th label known on: before it a row's label rates
	 * and word lifts are all prior and say nothing (before the first,
	 * the tree had no such label at all).
	 */
	for (i = 0; i < c->n; i++) {
		int64_t t = c->c[i].time;

		if (c->c[i].merge || c->c[i].label == CL_NEVER ||
		    c->c[i].label > T)
			continue;
		if (nf < WARM)
			nf++;
		else if (t >= first[WARM - 1])
			continue;
		for (j = nf - 1; j > 0 && first[j - 1] > t; j--)
			first[j] = first[j - 1];
		first[j] = t;
	}
	if (nf)
		cover = first[nf - 1];
	*X = xcalloc((c->n + 1) * CF_N, sizeof(**X));
	*y = xcalloc(c->n + 1, sizeof(**y));
	for (i = 0; i < c->n; i++) {
		const struct cl_commit *k = &c->c[i];

		if (k->merge || k->time >= T || k->time < cover)
			continue;
		if (k->label != CL_NEVER && k->label <= T)
			(*y)[n] = 1;
		else if (k->time + c->ripe <= T)
			(*y)[n] = 0;
		else
			continue;
		memcpy(*X + n * CF_N, k->x, sizeof(k->x));
		n++;
	}
	return n;
}

static void fit_at(const struct rv_classifier *c, int64_t T, struct cl_model *m)
{
	double *X;
	int *y;
	size_t n = rows_at(c, T, &X, &y);

	cl_model_fit(m, X, y, n);
	free(X);
	free(y);
}

static void model_fit_cached(struct rv_classifier *c)
{
	sqlite3_stmt *st = NULL;
	char labels[64];
	char *saved;

	snprintf(labels, sizeof(labels), "%zu/%zu/%d", c->labelled, c->n,
		 c->q.ripe_days);
	if (c->db &&
	    sqlite3_prepare_v2(c->db,
			       "SELECT model FROM models WHERE question=? AND "
			       "head=? AND labels=?",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, c->q.name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, c->head, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, labels, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    !cl_model_load(&c->model,
				   (const char *)sqlite3_column_text(st, 0)))
			c->model_cached = true;
		sqlite3_finalize(st);
		st = NULL;
	}
	if (c->model_cached)
		return;
	fit_at(c, CL_NEVER, &c->model);
	if (!c->db)
		return;
	saved = cl_model_save(&c->model);
	if (sqlite3_prepare_v2(c->db,
			       "INSERT OR REPLACE INTO models VALUES(?,?,?,?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, c->q.name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, c->head, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, labels, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, saved, -1, SQLITE_STATIC);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	free(saved);
}

/* ---- similar commits ---- */

static double norm_of(const struct rv_classifier *c, const struct cl_commit *k);

static void postings(struct rv_classifier *c)
{
	size_t i;
	uint32_t j;

	/* Mail read later adds paths and words no past commit has. */
	c->npost_paths = c->paths.n;
	c->npost_words = c->words.n;
	c->post_file = xcalloc(c->paths.n + 1, sizeof(*c->post_file));
	c->npost_file = xcalloc(c->paths.n + 1, sizeof(*c->npost_file));
	c->post_word = xcalloc(c->words.n + 1, sizeof(*c->post_word));
	c->npost_word = xcalloc(c->words.n + 1, sizeof(*c->npost_word));
	for (i = 0; i < c->n; i++) {
		const struct cl_commit *k = &c->c[i];

		if (k->merge)
			continue;
		for (j = 0; j < k->nfiles; j++) {
			uint32_t f = k->files[j];

			c->post_file[f] = xrealloc(c->post_file[f],
						   (c->npost_file[f] + 1) *
							   sizeof(uint32_t));
			c->post_file[f][c->npost_file[f]++] = (uint32_t)i;
		}
		for (j = 0; j < k->nwords; j++) {
			uint32_t w = k->words[j];

			c->post_word[w] = xrealloc(c->post_word[w],
						   (c->npost_word[w] + 1) *
							   sizeof(uint32_t));
			c->post_word[w][c->npost_word[w]++] = (uint32_t)i;
		}
	}
	c->norm = xcalloc(c->n + 1, sizeof(*c->norm));
	for (i = 0; i < c->n; i++)
		if (!c->c[i].merge)
			c->norm[i] = norm_of(c, &c->c[i]);
}

static double idf(const struct rv_classifier *c, uint32_t df)
{
	return df ? log(1 + (double)c->n / df) : 0;
}

static double norm_of(const struct rv_classifier *c, const struct cl_commit *k)
{
	double s = 0;
	uint32_t i;

	for (i = 0; i < k->nfiles; i++)
		s += idf(c, k->files[i] < c->npost_paths && c->npost_file
				    ? c->npost_file[k->files[i]]
				    : 0);
	for (i = 0; i < k->nwords; i++)
		s += 0.5 * idf(c, k->words[i] < c->npost_words && c->npost_word
					  ? c->npost_word[k->words[i]]
					  : 0);
	return s;
}

struct cand {
	int32_t i;
	double s;
	int label; /* 1 yes, 0 no, -1 not known yet */
};

static int cmp_cand(const void *a, const void *b)
{
	double x = ((const struct cand *)a)->s, y = ((const struct cand *)b)->s;

	return x > y ? -1 : x < y;
}

static int label_at_time(const struct rv_classifier *c,
			 const struct cl_commit *k, int64_t horizon)
{
	if (k->label != CL_NEVER && k->label <= horizon)
		return 1;
	if (k->time + c->ripe <= horizon)
		return 0;
	return -1;
}

/*
 * The past commits (before `before`, not self) most like q by shared
 * files and subject words, labels as known at horizon, best first;
 * returns how many (at most max) went to out.
 */
static size_t nearest(struct rv_classifier *c, const struct cl_commit *q,
		      int64_t before, int64_t horizon, int32_t self,
		      double *acc, struct cand *out, size_t max)
{
	uint32_t *touched = NULL;
	size_t nt = 0, ta = 0, i, n = 0;
	double qn = norm_of(c, q);
	uint32_t j;
	struct cand *all;

	if (qn <= 0)
		return 0;
	for (j = 0; j < q->nfiles + q->nwords; j++) {
		bool file = j < q->nfiles;
		uint32_t id = file ? q->files[j] : q->words[j - q->nfiles];
		uint32_t df =
			file ? (id < c->npost_paths ? c->npost_file[id] : 0)
			     : (id < c->npost_words ? c->npost_word[id] : 0);
		const uint32_t *post;
		double w = idf(c, df) * (file ? 1 : 0.5);

		if (!df || df > c->n / 8 + 50)
			continue; /* everyone touches it: says nothing */
		post = file ? c->post_file[id] : c->post_word[id];
		for (i = 0; i < df; i++) {
			uint32_t p = post[i];

			if ((int32_t)p == self || c->c[p].time >= before)
				continue;
			if (!acc[p]) {
				ALLOC_GROW(touched, nt + 1, ta);
				touched[nt++] = p;
			}
			acc[p] += w;
		}
	}
	all = xcalloc(nt + 1, sizeof(*all));
	for (i = 0; i < nt; i++) {
		const struct cl_commit *k = &c->c[touched[i]];
		int l = label_at_time(c, k, horizon);
		double kn = c->norm[touched[i]];

		if (l >= 0 || max > KNN) {
			all[n].i = (int32_t)touched[i];
			all[n].s = kn > 0 ? acc[touched[i]] / sqrt(qn * kn) : 0;
			/* A fix is like a fix: the same kind of change. */
			if (k->flags[CF_FIXES] != q->flags[CF_FIXES])
				all[n].s *= KIND_PENALTY;
			all[n].label = l;
			n++;
		}
		acc[touched[i]] = 0;
	}
	free(touched);
	qsort(all, n, sizeof(*all), cmp_cand);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}

static double knn_threshold(const struct rv_classifier *c,
			    const struct cl_model *m)
{
	double b = m->ok ? m->base : base_rate(c), t = 2 * b;

	return t < 0.15 ? 0.15 : t > 0.5 ? 0.5 : t;
}

/* The similar voter's score: labelled-yes share of the nearest, smoothed. */
static double knn_score(const struct rv_classifier *c, const struct cand *v,
			size_t n, const struct cl_model *m, size_t *yes,
			size_t *known)
{
	double b = m->ok ? m->base : base_rate(c), s = 0.5 * b, w = 0.5;
	size_t i;

	*yes = *known = 0;
	for (i = 0; i < n && *known < KNN; i++) {
		if (v[i].label < 0)
			continue;
		s += v[i].s * v[i].label;
		w += v[i].s;
		*yes += v[i].label == 1;
		(*known)++;
	}
	return s / w;
}

/* ---- open ---- */

int rv_classifier_open(struct rv_classifier **out, const char *repo_path,
		       const struct rv_question *q,
		       const struct rv_classify_opts *opts, struct errmsg *err)
{
	struct rv_classifier *c = xcalloc(1, sizeof(*c));
	git_oid head;
	size_t i;
	int ret;

	*out = NULL;
	if (git_repository_open_ext(&c->repo, repo_path ? repo_path : ".", 0,
				    NULL) < 0) {
		free(c);
		return errmsg_set(err, RV_ERR_REPO,
				  "%s is not in a git repository",
				  repo_path ? repo_path : ".");
	}
	if (git_reference_name_to_id(&head, c->repo, "HEAD") < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "the repository has no HEAD commit");
		goto fail;
	}
	git_oid_tostr(c->head, sizeof(c->head), &head);
	git_repository_odb(&c->odb, c->repo);
	c->q.name = xstrdup_or_null(q->name);
	c->q.prompt = xstrdup_or_null(q->prompt);
	c->q.target = xstrdup_or_null(q->target);
	for (i = 0; i < q->nregex; i++) {
		c->q.regex[c->q.nregex++] = xstrdup_or_null(q->regex[i]);
		if ((ret = cl_regex_compile(&c->re[c->nre], q->regex[i], err)))
			goto fail;
		c->nre++;
	}
	c->q.ids_file = xstrdup_or_null(q->ids_file);
	c->q.upstream_branches = xstrdup_or_null(q->upstream_branches);
	c->q.release_tags =
		xstrdup_or_null(q->release_tags ? q->release_tags : "v[0-9]*");
	c->q.ripe_days = q->ripe_days;
	c->ripe = (int64_t)q->ripe_days * DAY;
	if (opts) {
		c->opts_progress = opts->progress;
		c->opts_progress_arg = opts->progress_arg;
	}
	cl_cache_init(c);
	if ((ret = cl_scan(c, err)))
		goto fail;
	cl_sort_ids(c);
	cl_resolve_fixes(c);
	cl_releases(c);
	if ((ret = cl_labels(c, err)))
		goto fail;
	pass(c);
	model_fit_cached(c);
	postings(c);
	*out = c;
	return 0;
fail:
	rv_classifier_free(c);
	return ret;
}

size_t rv_classifier_labelled(const struct rv_classifier *c)
{
	return c->labelled;
}

static void commit_release(struct cl_commit *k)
{
	uint32_t j;

	free(k->subject);
	free(k->author);
	free(k->files);
	free(k->dirs);
	free(k->words);
	free(k->parents);
	for (j = 0; j < k->nfix_refs; j++)
		free(k->fix_refs[j]);
}

void rv_classifier_free(struct rv_classifier *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		commit_release(&c->c[i]);
	free(c->c);
	for (i = 0; i < c->nre; i++)
		regfree(&c->re[i]);
	rv_question_release(&c->q);
	cl_map_release(&c->oids);
	cl_map_release(&c->paths);
	cl_map_release(&c->dirs);
	cl_map_release(&c->words);
	cl_map_release(&c->wheres);
	free(c->sorted);
	for (i = 0; i < c->ntags; i++)
		free(c->tags[i]);
	free(c->tags);
	stats_release(&c->sfile);
	stats_release(&c->sdir);
	stats_release(&c->sword);
	for (i = 0; c->post_file && i < c->npost_paths; i++)
		free(c->post_file[i]);
	for (i = 0; c->post_word && i < c->npost_words; i++)
		free(c->post_word[i]);
	free(c->post_file);
	free(c->npost_file);
	free(c->post_word);
	free(c->npost_word);
	free(c->norm);
	sqlite3_close(c->db);
	git_odb_free(c->odb);
	git_repository_free(c->repo);
	free(c);
}

/* ---- one input ---- */

static void add_reason(struct rv_cl_result *r, const char *s)
{
	r->reasons =
		xrealloc(r->reasons, (r->nreasons + 1) * sizeof(*r->reasons));
	r->reasons[r->nreasons++] = xstrdup_or_null(s);
}

static struct rv_cl_vote *add_vote(struct rv_cl_result *r, const char *voter)
{
	struct rv_cl_vote *v;

	r->votes = xrealloc(r->votes, (r->nvotes + 1) * sizeof(*r->votes));
	v = &r->votes[r->nvotes++];
	memset(v, 0, sizeof(*v));
	v->voter = xstrdup_or_null(voter);
	return v;
}

/* One line on feature f of k pushing toward yes (up) or no. */
static void feature_reason(const struct rv_classifier *c,
			   const struct cl_commit *k, const double *x, int f,
			   bool up, struct sb *out)
{
	double base = base_rate(c);
	uint32_t i;

	switch (f) {
	case CF_FIXES:
		sb_adds(out, up ? "it has a Fixes: trailer"
				: "it has no Fixes: trailer");
		break;
	case CF_SHIPPED:
		if (!up) {
			sb_adds(out, "the bug it fixes is not known to have "
				     "shipped");
			break;
		}
		for (i = 0; i < k->nfixes; i++)
			if (k->fixes[i] >= 0 &&
			    c->c[k->fixes[i]].release_tag >= 0) {
				sb_addf(out,
					"the bug it fixes (%.12s) shipped in "
					"%s",
					c->c[k->fixes[i]].hex,
					c->tags[c->c[k->fixes[i]].release_tag]);
				return;
			}
		sb_adds(out, "the bug it fixes shipped in a release");
		break;
	case CF_UNSHIPPED:
		sb_adds(out, up ? "it fixes a bug"
				: "the bug it fixes never reached a release, "
				  "so no release needs the fix");
		break;
	case CF_SUBJ_FIX:
		sb_adds(out, up ? "the subject says it fixes something"
				: "the subject does not say fix");
		break;
	case CF_SUBJ_FEAT:
		sb_adds(out, up ? "the subject does not say it adds something"
				: "the subject says it adds something (a "
				  "feature)");
		break;
	case CF_SUBJ_CLEAN:
		sb_adds(out, up ? "not a cleanup"
				: "the subject says cleanup, docs or rename");
		break;
	case CF_REVERT:
		sb_adds(out, up ? "a revert" : "not a revert");
		break;
	case CF_DOCS:
		sb_adds(out, up ? "not documentation only"
				: "it touches documentation only");
		break;
	case CF_FILES:
	case CF_BYTES:
		sb_addf(out, "a %s change (%u file%s)",
			(up == (x[CF_FILES] < c->model.mean[CF_FILES] ||
				f == CF_BYTES))
				? (x[f] < c->model.mean[f] ? "small" : "large")
				: (x[f] < c->model.mean[f] ? "small" : "large"),
			k->nfiles, k->nfiles == 1 ? "" : "s");
		break;
	case CF_DIR_RATE: {
		uint32_t best = UINT32_MAX;
		double br = -1e9;

		for (i = 0; i < k->ndirs; i++)
			if (log_rate(&c->sdir, k->dirs[i], base) > br) {
				br = log_rate(&c->sdir, k->dirs[i], base);
				best = k->dirs[i];
			}
		if (best == UINT32_MAX) {
			sb_adds(out, "where it changes things");
			break;
		}
		sb_addf(out,
			"%.0f%% of earlier commits to %s were labelled yes",
			100 * exp(x[CF_DIR_RATE]), c->dirs.keys[best]);
		break;
	}
	case CF_FILE_RATE:
		sb_addf(out,
			"earlier commits to the files it touches were labelled "
			"yes %.0f%% of the time",
			100 * exp(x[CF_FILE_RATE]));
		break;
	case CF_WORDS:
		sb_addf(out, "its subject words are %s on commits labelled yes",
			up ? "common" : "rare");
		break;
	}
}

/*
 * Does the reason for f read true? The model may weigh a feature against
 * its plain meaning (collinear columns); a reason then says nothing.
 */
static bool reason_fits(const struct rv_classifier *c,
			const struct cl_commit *k, const double *x, int f,
			bool up)
{
	switch (f) {
	case CF_SHIPPED:
	case CF_UNSHIPPED:
		return k->nfixes > 0 && x[f] > 0;
	case CF_FIXES:
	case CF_SUBJ_FIX:
	case CF_REVERT:
		return (x[f] > 0) == up;
	case CF_SUBJ_FEAT:
	case CF_SUBJ_CLEAN:
	case CF_DOCS:
		return (x[f] > 0) == !up;
	case CF_DIR_RATE:
	case CF_FILE_RATE:
	case CF_WORDS:
		return (x[f] > c->model.mean[f]) == up;
	default:
		return true;
	}
}

static int cmp_term(const void *a, const void *b)
{
	double x = fabs(((const double *)a)[1]),
	       y = fabs(((const double *)b)[1]);

	return x > y ? -1 : x < y;
}

/* The offline votes, reasons and similar commits of k. */
static void offline_votes(struct rv_classifier *c, const struct cl_commit *k,
			  const double *x, int64_t before, int32_t self,
			  size_t nshow, struct rv_cl_result *r)
{
	struct cand v[64];
	double t[CF_N], terms[CF_N][2], *acc, p, ks;
	struct rv_cl_vote *mv, *sv;
	bool m_yes, m_answered;
	size_t n, yes, known, i;
	struct sb line = SB_INIT;
	int f;

	mv = add_vote(r, "model");
	p = cl_model_prob(&c->model, x);

	if (!c->model.ok) {
		mv->why = xstrdup_or_null(
			"too few labelled commits in this tree to fit a model");
	} else {
		mv->answered = true;
		mv->yes = p >= c->model.threshold;
		mv->score = cl_calibrate(p, c->model.threshold);
		cl_model_terms(&c->model, x, t);
		for (f = 0; f < CF_N; f++) {
			terms[f][0] = f;
			terms[f][1] = t[f];
		}
		qsort(terms, CF_N, sizeof(terms[0]), cmp_term);
		sb_addf(&line, "p=%.2f against a threshold of %.2f", p,
			c->model.threshold);
		mv->why = sb_detach(&line, NULL);
		for (i = 0, n = 0; i < CF_N && n < 3; i++) {
			bool up = terms[i][1] > 0;

			f = (int)terms[i][0];
			if (fabs(terms[i][1]) < 0.1 || up != mv->yes ||
			    !reason_fits(c, k, x, f, up))
				continue;
			sb_reset(&line);
			feature_reason(c, k, x, f, up, &line);
			add_reason(r, sb_str(&line));
			n++;
		}
	}
	acc = xcalloc(c->n + 1, sizeof(*acc));
	n = nearest(c, k, before, CL_NEVER, self, acc, v,
		    nshow > KNN ? (nshow < 64 ? nshow : 64) : KNN * 2);
	free(acc);
	/* add_vote() moves the votes: mv is stale after it. */
	m_yes = mv->yes;
	m_answered = mv->answered;
	sv = add_vote(r, "similar");
	ks = knn_score(c, v, n, &c->model, &yes, &known);
	if (!known) {
		sv->why = xstrdup_or_null("no similar past commit is labelled");
	} else {
		double thr = knn_threshold(c, &c->model);

		sv->answered = true;
		sv->yes = ks >= thr;
		sv->score = cl_calibrate(ks, thr);
		sb_reset(&line);
		sb_addf(&line,
			"%zu of the %zu most similar past commits %s labelled "
			"yes",
			yes, known, yes == 1 ? "was" : "were");
		sv->why = sb_detach(&line, NULL);
		if (sv->yes == m_yes || !m_answered)
			add_reason(r, sv->why);
	}
	r->similar = xcalloc(nshow + 1, sizeof(*r->similar));
	for (i = 0; i < n && r->nsimilar < nshow; i++) {
		struct rv_cl_similar *s = &r->similar[r->nsimilar++];
		const struct cl_commit *o = &c->c[v[i].i];

		memcpy(s->commit, o->hex, sizeof(s->commit));
		s->subject = xstrdup_or_null(o->subject);
		s->label = v[i].label == 1   ? "yes"
			   : v[i].label == 0 ? "no"
					     : "unknown";
		s->score = v[i].s;
	}
	sb_release(&line);
}

/* The tally: a weighted majority of the voters that answered. */
static void tally(struct rv_cl_result *r, const struct rv_classify_opts *o)
{
	double wy = 0, wall = 0, s = 0;
	size_t i, j;

	for (i = 0; i < r->nvotes; i++) {
		const struct rv_cl_vote *v = &r->votes[i];
		double w = 1;

		if (!v->answered)
			continue;
		for (j = 0; v->llm && o && j < o->nllm; j++)
			if (!strcmp(o->llm[j].name, v->voter) &&
			    o->llm[j].weight > 0)
				w = o->llm[j].weight;
		wall += w;
		wy += v->yes ? w : 0;
		s += w * v->score;
	}
	r->score = wall > 0 ? s / wall : 0;
	r->yes = wall > 0 &&
		 (2 * wy > wall || (2 * wy == wall && r->score >= 0.5));
	if (r->explanation)
		return;
	for (i = 0; i < r->nvotes; i++)
		if (r->votes[i].llm && r->votes[i].answered &&
		    r->votes[i].yes == r->yes && r->votes[i].why) {
			r->explanation = xstrdup_or_null(r->votes[i].why);
			break;
		}
}

/* The diff of a commit against its first parent, capped. */
static int commit_text(struct rv_classifier *c, git_commit *gc, struct sb *diff)
{
	git_tree *tree = NULL, *ptree = NULL;
	git_commit *parent = NULL;
	git_diff *d = NULL;
	git_buf buf = {0};
	int ret = -1;

	if (git_commit_tree(&tree, gc) < 0 ||
	    (git_commit_parentcount(gc) &&
	     (git_commit_parent(&parent, gc, 0) < 0 ||
	      git_commit_tree(&ptree, parent) < 0)) ||
	    git_diff_tree_to_tree(&d, c->repo, ptree, tree, NULL) < 0 ||
	    git_diff_to_buf(&buf, d, GIT_DIFF_FORMAT_PATCH) < 0)
		goto out;
	ret = sb_add(diff, buf.ptr,
		     buf.size < ((size_t)4 << 20) ? buf.size
						  : ((size_t)4 << 20));
out:
	git_buf_dispose(&buf);
	git_diff_free(d);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	return ret;
}

/* A commit from mail: its files, size, subject and Fixes: only. */
static void commit_from_patch(struct rv_classifier *c, const struct mp_patch *p,
			      struct cl_commit *k)
{
	struct sb paths = SB_INIT;
	const char *d = p->diff ? p->diff : "";
	size_t i;
	double bytes = 0;

	memset(k, 0, sizeof(*k));
	k->time = p->timestamp ? p->timestamp : (int64_t)time(NULL);
	k->label = CL_NEVER;
	k->release = CL_NEVER;
	k->label_by = -1;
	for (i = 0; i < p->nfiles; i++)
		sb_addf(&paths, "%s\n", p->files[i]);
	cl_set_files(c, k, sb_str(&paths));
	sb_release(&paths);
	/* Bytes added or removed, as the diff says. */
	while (*d) {
		const char *e = strchr(d, '\n');
		size_t len = e ? (size_t)(e - d) : strlen(d);

		if (len && (*d == '+' || *d == '-') && strncmp(d, "+++", 3) &&
		    strncmp(d, "---", 3))
			bytes += (double)len;
		d = e ? e + 1 : d + len;
	}
	k->bytes = bytes;
	cl_set_subject(c, k, mp_patch_title(p));
	if (p->commit_message) {
		char *m = xstrndup(p->commit_message, RV_CL_MAX_MESSAGE);

		cl_set_fixes(k, m);
		free(m);
	}
	for (i = 0; i < k->nfix_refs; i++) {
		k->fixes[k->nfixes++] =
			cl_resolve(c, k->fix_refs[i], strlen(k->fix_refs[i]));
		free(k->fix_refs[i]);
		k->fix_refs[i] = NULL;
	}
	k->nfix_refs = 0;
}

static void commit_from_repo(struct rv_classifier *c, git_commit *gc,
			     struct cl_commit *k)
{
	struct sb paths = SB_INIT;
	const char *msg = git_commit_message(gc);
	size_t i;

	memset(k, 0, sizeof(*k));
	git_oid_tostr(k->hex, sizeof(k->hex), git_commit_id(gc));
	k->time = (int64_t)git_commit_time(gc);
	k->label = CL_NEVER;
	k->release = CL_NEVER;
	k->label_by = -1;
	cl_set_subject(c, k, git_commit_summary(gc));
	if (msg) {
		char *m = xstrndup(msg, RV_CL_MAX_MESSAGE);

		cl_set_fixes(k, m);
		free(m);
	}
	for (i = 0; i < k->nfix_refs; i++) {
		k->fixes[k->nfixes++] =
			cl_resolve(c, k->fix_refs[i], strlen(k->fix_refs[i]));
		free(k->fix_refs[i]);
		k->fix_refs[i] = NULL;
	}
	k->nfix_refs = 0;
	{
		/* Not in HEAD's history: diff it now (not cached). */
		git_tree *tree = NULL, *ptree = NULL;
		git_commit *parent = NULL;
		git_diff *d = NULL;

		if (!git_commit_tree(&tree, gc) &&
		    (!git_commit_parentcount(gc) ||
		     (!git_commit_parent(&parent, gc, 0) &&
		      !git_commit_tree(&ptree, parent))) &&
		    !git_diff_tree_to_tree(&d, c->repo, ptree, tree, NULL)) {
			size_t n = git_diff_num_deltas(d);

			for (i = 0; i < n && i < CL_MAX_FILES; i++) {
				const git_diff_delta *dd =
					git_diff_get_delta(d, i);

				sb_addf(&paths, "%s\n",
					dd->new_file.path ? dd->new_file.path
							  : dd->old_file.path);
			}
			k->bytes = 80.0 * (double)n;
		}
		git_diff_free(d);
		git_tree_free(tree);
		git_tree_free(ptree);
		git_commit_free(parent);
	}
	cl_set_files(c, k, sb_str(&paths));
	sb_release(&paths);
}

static char *author_of(const git_signature *a)
{
	struct sb s = SB_INIT;

	if (!a)
		return NULL;
	sb_addf(&s, "%s <%s>", a->name ? a->name : "",
		a->email ? a->email : "");
	return sb_detach(&s, NULL);
}

int rv_classify(struct rv_classifier *c, const struct rv_cl_input *in, size_t n,
		const struct rv_classify_opts *opts, struct rv_cl_result *res,
		struct errmsg *err)
{
	char **msgs = xcalloc(n + 1, sizeof(*msgs));
	char **diffs = xcalloc(n + 1, sizeof(*diffs));
	size_t nshow = opts && opts->similar ? opts->similar : 5, i;
	bool want_text = opts && opts->nllm;

	if (nshow > 50)
		nshow = 50;
	for (i = 0; i < n; i++) {
		struct rv_cl_result *r = &res[i];
		struct cl_commit tmp, *k = &tmp;
		int64_t before = CL_NEVER;
		int32_t self = -1;
		double x[CF_N];

		if (in[i].patch) {
			const struct mp_patch *p = in[i].patch;
			const char *up;
			size_t len;

			commit_from_patch(c, p, &tmp);
			r->message_id = xstrdup_or_null(p->message_id);
			r->subject = xstrdup_or_null(tmp.subject);
			r->author = xstrdup_or_null(p->from);
			r->author_name = xstrdup_or_null(p->author_name);
			r->author_email = xstrdup_or_null(p->author_email);
			up = cl_upstream_id(p->commit_message, &len);
			if (up)
				r->upstream = xstrndup(up, len);
			else if (p->commit_id)
				r->upstream = xstrdup_or_null(p->commit_id);
			if (p->commit_id &&
			    strlen(p->commit_id) == RV_OID_HEXSZ)
				memcpy(r->commit, p->commit_id,
				       RV_OID_HEXSZ + 1);
			features(c, k, CL_NEVER, x);
			if (want_text) {
				msgs[i] = xstrdup_or_null(
					p->commit_message ? p->commit_message
							  : "");
				diffs[i] =
					p->diff ? xstrndup(p->diff, p->diff_len)
						: xstrdup_or_null("");
			}
		} else {
			git_object *obj = NULL;
			git_commit *gc = NULL;
			uint32_t idx;
			char hex[RV_OID_HEXSZ + 1];

			if (git_revparse_single(&obj, c->repo, in[i].rev) < 0 ||
			    git_object_peel((git_object **)&gc, obj,
					    GIT_OBJECT_COMMIT) < 0) {
				struct sb e = SB_INIT;

				sb_addf(&e,
					"'%.200s' does not name a commit in "
					"this repository",
					in[i].rev);
				r->error = sb_detach(&e, NULL);
				git_object_free(obj);
				continue;
			}
			git_object_free(obj);
			git_oid_tostr(hex, sizeof(hex), git_commit_id(gc));
			memcpy(r->commit, hex, sizeof(hex));
			r->upstream = xstrdup_or_null(hex);
			r->author = author_of(git_commit_author(gc));
			if (git_commit_author(gc)) {
				r->author_name = xstrdup_or_null(
					git_commit_author(gc)->name);
				r->author_email = xstrdup_or_null(
					git_commit_author(gc)->email);
			}
			idx = cl_map_find(&c->oids, hex, RV_OID_HEXSZ);
			if (idx != UINT32_MAX && !c->c[idx].merge) {
				k = &c->c[idx];
				memcpy(x, k->x, sizeof(x));
				before = k->time;
				self = (int32_t)idx;
				if (k->label != CL_NEVER)
					r->known = "yes";
			} else if (git_commit_parentcount(gc) != 1) {
				r->error = xstrdup_or_null(
					"a merge or root commit: not "
					"classified");
				git_commit_free(gc);
				continue;
			} else {
				commit_from_repo(c, gc, &tmp);
				features(c, k, CL_NEVER, x);
			}
			r->subject = xstrdup_or_null(k->subject);
			if (want_text) {
				struct sb d = SB_INIT;
				const char *m = git_commit_message(gc);

				msgs[i] =
					xstrndup(m ? m : "", RV_CL_MAX_MESSAGE);
				commit_text(c, gc, &d);
				diffs[i] = sb_detach(&d, NULL);
				if (!diffs[i])
					diffs[i] = xstrdup_or_null("");
			}
			git_commit_free(gc);
		}
		offline_votes(c, k, x, before, self, nshow, r);
		if (k == &tmp)
			commit_release(&tmp);
	}
	if (want_text)
		cl_llm_run(c, opts, res, (const char *const *)msgs,
			   (const char *const *)diffs, n);
	for (i = 0; i < n; i++) {
		if (!res[i].error)
			tally(&res[i], opts);
		free(msgs[i]);
		free(diffs[i]);
	}
	free(msgs);
	free(diffs);
	(void)err;
	return 0;
}

void rv_cl_result_release(struct rv_cl_result *r)
{
	size_t i;

	for (i = 0; i < r->nvotes; i++) {
		free(r->votes[i].voter);
		free(r->votes[i].why);
	}
	free(r->votes);
	for (i = 0; i < r->nreasons; i++)
		free(r->reasons[i]);
	free(r->reasons);
	for (i = 0; i < r->nsimilar; i++)
		free(r->similar[i].subject);
	free(r->similar);
	free(r->message_id);
	free(r->subject);
	free(r->author);
	free(r->author_name);
	free(r->author_email);
	free(r->upstream);
	free(r->explanation);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

/* ---- eval ---- */

static int cmp_time_idx(const void *a, const void *b, void *arg)
{
	const struct rv_classifier *c = arg;
	int64_t x = c->c[*(const uint32_t *)a].time,
		y = c->c[*(const uint32_t *)b].time;

	return x < y ? -1 : x > y;
}

int rv_classify_eval(struct rv_classifier *c, int64_t since, int64_t until,
		     struct rv_cl_eval *res, struct errmsg *err)
{
	struct timespec t0, t1;
	uint32_t *w = xcalloc(c->n + 1, sizeof(*w));
	double *ens, *pm, *pk, *hf, *sf, *fe, *fs, *ff, *acc;
	int *y, *fy;
	size_t n = 0, i, nf = 0;
	struct cl_model m = {0};
	int64_t next = CL_NEVER;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof(*res));
	for (i = 0; i < c->n; i++)
		if (!c->c[i].merge && c->c[i].time >= since &&
		    c->c[i].time <= until)
			w[n++] = (uint32_t)i;
	qsort_r(w, n, sizeof(*w), cmp_time_idx, c);
	ens = xcalloc(n + 1, sizeof(*ens));
	pm = xcalloc(n + 1, sizeof(*pm));
	pk = xcalloc(n + 1, sizeof(*pk));
	hf = xcalloc(n + 1, sizeof(*hf));
	sf = xcalloc(n + 1, sizeof(*sf));
	fe = xcalloc(n + 1, sizeof(*fe));
	fs = xcalloc(n + 1, sizeof(*fs));
	ff = xcalloc(n + 1, sizeof(*ff));
	y = xcalloc(n + 1, sizeof(*y));
	fy = xcalloc(n + 1, sizeof(*fy));
	acc = xcalloc(c->n + 1, sizeof(*acc));
	for (i = 0; i < n; i++) {
		const struct cl_commit *k = &c->c[w[i]];
		struct cand v[2 * KNN];
		size_t nn, yes, known;
		double p, ks, sm, sk;
		bool vm, vk, ans;

		/* Refit every 30 days on what was known then. */
		if (next == CL_NEVER || k->time >= next) {
			fit_at(c, k->time, &m);
			next = k->time + 30 * DAY;
		}
		p = cl_model_prob(&m, k->x);
		nn = nearest(c, k, k->time, k->time, (int32_t)w[i], acc, v,
			     2 * KNN);
		ks = knn_score(c, v, nn, &m, &yes, &known);
		sm = m.ok ? cl_calibrate(p, m.threshold) : 0;
		sk = cl_calibrate(ks, knn_threshold(c, &m));
		vm = m.ok && p >= m.threshold;
		vk = known && sk >= 0.5;
		pm[i] = m.ok ? p : 0;
		pk[i] = ks;
		ens[i] = m.ok ? (known ? (sm + sk) / 2 : sm) : sk;
		ans = (vm && vk) || ((vm || vk) && ens[i] >= 0.5);
		y[i] = k->label != CL_NEVER;
		hf[i] = k->x[CF_FIXES];
		sf[i] = k->x[CF_SUBJ_FIX];
		res->positives += y[i];
		res->yes += ans;
		res->true_yes += ans && y[i];
		if (k->x[CF_FIXES]) {
			fe[nf] = ens[i];
			fs[nf] = k->x[CF_SHIPPED];
			ff[nf] = k->x[CF_SUBJ_FIX];
			fy[nf] = y[i];
			res->fixes_positives += y[i];
			nf++;
		}
	}
	res->commits = n;
	res->fixes = nf;
	res->auc = rv_auc(ens, y, n);
	res->auc_model = rv_auc(pm, y, n);
	res->auc_similar = rv_auc(pk, y, n);
	res->auc_has_fixes = rv_auc(hf, y, n);
	res->auc_subject_fix = rv_auc(sf, y, n);
	res->fixes_auc = rv_auc(fe, fy, nf);
	res->fixes_auc_shipped = rv_auc(fs, fy, nf);
	res->fixes_auc_subject_fix = rv_auc(ff, fy, nf);
	rv_auc_boot(ens, hf, y, n, &res->ci_has_fixes);
	rv_auc_boot(ens, sf, y, n, &res->ci_subject_fix);
	rv_auc_boot(fe, fs, fy, nf, &res->ci_fixes_shipped);
	free(w);
	free(ens);
	free(pm);
	free(pk);
	free(hf);
	free(sf);
	free(fe);
	free(fs);
	free(ff);
	free(y);
	free(fy);
	free(acc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	(void)err;
	return 0;
}
