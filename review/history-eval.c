// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-eval.c - `quorum eval`: replay the commits of a window as if each
 * were a new patch, seeing only what was committed before it, and score the
 * risk and the offline findings against the Fixes: that came later.
 *
 * No leakage from the future: each commit's facts were computed by the
 * index from earlier commits only; the risk model is refitted on labels
 * whose fix came before the commit; the history voter sees only pairs
 * whose fix came before it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history-int.h"

/* Refit the model when the replay has moved on this far. */
#define EVAL_REFIT_SECONDS (30 * 86400)
/* How far from the line a finding points at a fix may change code. */
#define EVAL_NEAR 3

struct ecommit {
	int64_t seq, time;
	char oid[RV_OID_HEXSZ + 1];
	double x[HF_N];
	bool has_x;	   /* the index stored its features */
	int64_t first_fix; /* seq of the earliest fix naming it; 0 if none */
};

/* Where a voter pointed, to check against the later fixes. */
struct eloc {
	int voter;
	char *file;
	int line;
	char *func;
	/* the significant lines within EVAL_NEAR of it, normalized */
	char **near;
	size_t nnear;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load_commits(sqlite3 *db, struct ecommit **out, size_t *n,
			struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT c.seq, c.time, c.oid, r.x,"
			       " (SELECT MIN(p.fix_seq) FROM pairs p"
			       "  WHERE p.bug_seq = c.seq)"
			       " FROM commits c LEFT JOIN risk r"
			       " ON r.seq = c.seq ORDER BY c.seq",
			       -1, &st, NULL) != SQLITE_OK)
		return errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
				  sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct ecommit *c;
		struct hist_rfeat f;
		int i;

		ALLOC_GROW(*out, *n + 1, alloc);
		c = &(*out)[(*n)++];
		c->seq = sqlite3_column_int64(st, 0);
		c->time = sqlite3_column_int64(st, 1);
		snprintf(c->oid, sizeof(c->oid), "%s",
			 sqlite3_column_text(st, 2)
				 ? (const char *)sqlite3_column_text(st, 2)
				 : "");
		c->has_x = sqlite3_column_bytes(st, 3) ==
			   (int)(HR_N * sizeof(float));
		memset(&f, 0, sizeof(f));
		if (c->has_x) {
			const float *x = sqlite3_column_blob(st, 3);

			for (i = 0; i < HR_N; i++)
				f.v[i] = x[i];
		}
		hist_features(&f, c->x);
		c->first_fix = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * Fit on commits before index k that were old enough at commits[k]'s
 * time, labelled only by fixes that came before commits[k].
 */
static void refit(struct hist_model *m, const struct ecommit *v, size_t k)
{
	double *X = xmalloc((k + 1) * HF_N * sizeof(*X));
	int *y = xmalloc((k + 1) * sizeof(*y));
	double *wt = xmalloc((k + 1) * sizeof(*wt));
	size_t i, n = 0;

	for (i = 0; i < k; i++) {
		if (v[i].time > v[k].time - HIST_LABEL_RIPE || !v[i].has_x)
			continue;
		memcpy(&X[n * HF_N], v[i].x, sizeof(v[i].x));
		y[n] = v[i].first_fix && v[i].first_fix < v[k].seq;
		wt[n] = hist_risk_weight(v[i].time, v[k].time);
		n++;
	}
	hist_model_fit_w(m, X, y, wt, n, HIST_RISK_TOP);
	free(wt);
	free(X);
	free(y);
}

static long diff_lines(const struct rv_diff *d)
{
	size_t i, j, k;
	long n = 0;

	for (i = 0; i < d->nfiles; i++)
		for (j = 0; j < d->files[i].nhunks; j++)
			for (k = 0; k < d->files[i].hunks[j].nlines; k++)
				n += d->files[i].hunks[j].lines[k].origin !=
				     ' ';
	return n;
}

static bool in_diff(const struct rv_finding *f, const struct rv_diff *d)
{
	size_t i;

	for (i = 0; f->file && i < d->nfiles; i++)
		if (d->files[i].new_path &&
		    !strcmp(d->files[i].new_path, f->file))
			return true;
	return false;
}

/*
 * The function post-image line `line` of file in d sits in, or NULL: the
 * hunk's section names the function before the hunk, which a definition
 * the hunk adds or passes ends.
 */
static char *func_at(const struct rv_diff *d, const char *file, int line)
{
	size_t i, j, k;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		if (!f->new_path || strcmp(f->new_path, file))
			continue;
		for (j = 0; j < f->nhunks; j++) {
			const struct rv_hunk *hk = &f->hunks[j];

			for (k = 0; k < hk->nlines; k++)
				if (hk->lines[k].origin != '-' &&
				    hk->lines[k].new_no == line)
					return hist_hunk_function(file, hk, k);
		}
	}
	return NULL;
}

/*
 * Can a normalized line be told by its text, once it is the only one of
 * its file that reads so? It names something (not just "}" or "return
 * ret;") and is not a comment.
 */
static bool recognizable(const char *norm, struct sb *toks)
{
	if (strlen(norm) < 8 || norm[0] == '*' ||
	    (norm[0] == '/' && (norm[1] == '*' || norm[1] == '/')))
		return false;
	sb_reset(toks);
	hist_tokens(norm, toks, 1);
	return toks->len > 0;
}

/*
 * The post-image lines of file in d within EVAL_NEAR of line that carry
 * enough to be recognized by their text alone, into e: the place a later
 * fix changes may have moved by then.
 */
static void near_lines(const struct rv_diff *d, const char *file, int line,
		       struct eloc *e)
{
	struct sb norm = SB_INIT, toks = SB_INIT;
	size_t i, j, k, alloc = 0;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		if (!f->new_path || strcmp(f->new_path, file))
			continue;
		for (j = 0; j < f->nhunks; j++)
			for (k = 0; k < f->hunks[j].nlines; k++) {
				const struct rv_line *l = &f->hunks[j].lines[k];

				if (l->origin == '-' || !l->text ||
				    abs(l->new_no - line) > EVAL_NEAR)
					continue;
				hist_normalize(l->text, strlen(l->text), &norm);
				if (!recognizable(sb_str(&norm), &toks))
					continue;
				ALLOC_GROW(e->near, e->nnear + 1, alloc);
				e->near[e->nnear++] =
					xstrdup_or_null(sb_str(&norm));
			}
	}
	sb_release(&norm);
	sb_release(&toks);
}

struct elocs {
	struct eloc *v;
	size_t n, alloc;
};

static void elocs_add(struct elocs *l, int voter, const struct rv_diff *d,
		      const char *file, int line)
{
	struct eloc *e;

	if (l->n >= 256)
		return;
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	e = &l->v[l->n++];
	e->voter = voter;
	e->file = xstrdup_or_null(file);
	e->line = line;
	e->func = func_at(d, file, line);
	e->near = NULL;
	e->nnear = 0;
	near_lines(d, file, line, e);
}

static void elocs_reset(struct elocs *l)
{
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].file);
		free(l->v[i].func);
		for (k = 0; k < l->v[i].nnear; k++)
			free(l->v[i].near[k]);
		free(l->v[i].near);
	}
	l->n = 0;
}

static bool risk_only(void)
{
	const char *e = getenv("QUORUM_EVAL_RISK_ONLY");

	return e && *e == '1';
}

/* Which offline voters speak on this commit, as the review would ask. */
static unsigned offline_findings(struct rv_history *h, const char *msg,
				 struct rv_diff *d, const char *difftext,
				 size_t difflen, double risk,
				 struct elocs *locs)
{
	static const struct rv_voter *const voters[] = {
		&rv_voter_rules,
		&rv_voter_history,
	};
	struct mp_patch p = {0};
	struct rv_context ctx = {0};
	unsigned who = 0;
	size_t i, j;

	p.kind = MP_KIND_PATCH;
	p.commit_message = (char *)msg;
	p.subject_raw = (char *)"";
	p.diff = (char *)difftext;
	p.diff_len = difflen;
	ctx.patch = &p;
	ctx.diff = d;
	ctx.history = h;
	ctx.pre_tree = "";
	ctx.post_tree = "";
	/* Measuring the model alone (QUORUM_EVAL_RISK_ONLY=1): no voters. */
	for (i = 0; !risk_only() && i < ARRAY_SIZE(voters); i++) {
		struct rv_findings fs = {0};
		struct errmsg err;

		if (voters[i]->review(voters[i], &ctx, &fs, &err) == 0)
			for (j = 0; j < fs.n; j++)
				if (in_diff(&fs.items[j], d)) {
					who |= 1u << i;
					elocs_add(locs, (int)i, d,
						  fs.items[j].file,
						  fs.items[j].line_start);
				}
		rv_findings_release(&fs);
	}
	if (h->model.ok && risk >= h->model.threshold) {
		const char *file = NULL;
		int line = 0;

		who |= 4;
		if (hist_risk_anchor(d, &file, &line))
			elocs_add(locs, 2, d, file, line);
	}
	return who;
}

/*
 * How many lines of path, as it was just before commit fix, read norm
 * once normalized (0, 1, or 2 for more).
 */
static int copies_before(struct rv_history *h, const char *fix,
			 const char *path, const char *norm)
{
	git_object *obj = NULL;
	struct sb spec = SB_INIT, line = SB_INIT;
	const char *p, *end;
	int n = 0;

	sb_addf(&spec, "%s^:%s", fix, path);
	if (git_revparse_single(&obj, h->repo, sb_str(&spec)) < 0 ||
	    git_object_type(obj) != GIT_OBJECT_BLOB)
		goto out;
	p = git_blob_rawcontent((git_blob *)obj);
	end = p + git_blob_rawsize((git_blob *)obj);
	while (p < end && n < 2) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		hist_normalize(p, len, &line);
		n += !strcmp(sb_str(&line), norm);
		p += len + 1;
	}
out:
	git_object_free(obj);
	sb_release(&spec);
	sb_release(&line);
	return n;
}

/*
 * Is line k of hunk hk, which the fix kept or removed, one of the lines
 * near loc, and the only line of its file that reads so?
 */
static bool same_line(struct rv_history *h, const char *fix, const char *path,
		      const struct rv_hunk *hk, size_t k,
		      const struct eloc *loc, struct sb *norm)
{
	size_t i;

	if (hk->lines[k].origin == '+' || !hk->lines[k].text)
		return false;
	hist_normalize(hk->lines[k].text, strlen(hk->lines[k].text), norm);
	for (i = 0; i < loc->nnear; i++)
		if (!strcmp(loc->near[i], sb_str(norm)))
			return copies_before(h, fix, path, sb_str(norm)) == 1;
	return false;
}

/*
 * Did fix fd (commit fix) change the code at loc: a line it removed, or
 * next to which it added lines, is one of loc's (found by its text, the
 * lines may have moved since), or it changed a line of loc's function?
 */
static bool fix_hits(struct rv_history *h, const char *fix,
		     const struct rv_diff *fd, const struct eloc *loc)
{
	struct sb norm = SB_INIT;
	bool hit = false;
	size_t i, j, k;

	for (i = 0; i < fd->nfiles && !hit; i++) {
		const struct rv_file *f = &fd->files[i];
		const char *path = f->old_path ? f->old_path : f->new_path;

		if (!((f->old_path && !strcmp(f->old_path, loc->file)) ||
		      (f->new_path && !strcmp(f->new_path, loc->file))))
			continue;
		for (j = 0; j < f->nhunks && !hit; j++) {
			const struct rv_hunk *hk = &f->hunks[j];

			for (k = 0; k < hk->nlines && !hit; k++) {
				char o = hk->lines[k].origin, *fn;

				if (o == ' ')
					continue;
				if (o == '-')
					hit = same_line(h, fix, path, hk, k,
							loc, &norm);
				else if (k == 0 ||
					 hk->lines[k - 1].origin != '+') {
					/* an insertion: the lines around it */
					size_t e = k;

					while (e < hk->nlines &&
					       hk->lines[e].origin == '+')
						e++;
					hit = (k > 0 &&
					       same_line(h, fix, path, hk,
							 k - 1, loc, &norm)) ||
					      (e < hk->nlines &&
					       same_line(h, fix, path, hk, e,
							 loc, &norm));
				}
				if (hit || !loc->func)
					continue;
				fn = hist_hunk_function(path, hk, k);
				hit = fn && !strcmp(fn, loc->func);
				free(fn);
			}
		}
	}
	sb_release(&norm);
	return hit;
}

/* Mark the locations a later fix of commit seq changed. */
static void locate(struct rv_history *h, int64_t seq, struct elocs *locs,
		   bool *hit)
{
	sqlite3_stmt *st = NULL;
	struct sb diff = SB_INIT;
	size_t i;

	if (!locs->n || sqlite3_prepare_v2(h->db,
					   "SELECT DISTINCT fix_oid FROM pairs "
					   "WHERE bug_seq = ? LIMIT 8",
					   -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, seq);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *fix = (const char *)sqlite3_column_text(st, 0);
		char id[RV_OID_HEXSZ + 1];
		struct rv_diff *fd = NULL;
		struct errmsg err;

		sb_reset(&diff);
		if (!fix ||
		    rv_history_commit_diff(h, fix, &diff, NULL, id, &err) ||
		    rv_diff_parse(&fd, diff.buf ? diff.buf : "", diff.len,
				  &err))
			continue;
		for (i = 0; i < locs->n; i++)
			hit[i] = hit[i] || fix_hits(h, fix, fd, &locs->v[i]);
		rv_diff_free(fd);
	}
	sqlite3_finalize(st);
	sb_release(&diff);
}

struct rscore {
	double s, p; /* score; the fix rate it reads as */
	int y;
};

static int cmp_rscore(const void *a, const void *b)
{
	const struct rscore *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * Deciles of score: the fix rate the model said the history had at
 * those scores (predicted) against the rate observed.
 */
static int year_of(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	return gmtime_r(&tt, &tm) ? tm.tm_year + 1900 : 0;
}

/*
 * The AUCs and margin of each calendar year of the n scored commits (in
 * time order, so a year is a run), and the mean margin over the years:
 * one replay says whether the risk score beats lines changed year after
 * year, and how sure each year is.
 */
static void by_year(const double *rs, const double *bs, const int *y,
		    const int *yr, size_t n, struct rv_eval_result *res)
{
	double sum = 0, var = 0;
	size_t i, j, k = 0;
	bool all_ci = true;

	for (i = 0; i < n && res->nyears < RV_EVAL_MAX_YEARS; i = j) {
		struct rv_eval_year *e = &res->years[res->nyears++];
		struct rv_auc_ci ci;

		for (j = i; j < n && yr[j] == yr[i]; j++)
			e->positives += y[j] != 0;
		e->year = yr[i];
		e->commits = j - i;
		e->auc = rv_auc(rs + i, y + i, j - i);
		e->baseline_auc = rv_auc(bs + i, y + i, j - i);
		rv_auc_boot(rs + i, bs + i, y + i, j - i, &ci);
		e->ci_ok = ci.ok;
		e->margin_lo = ci.lo[2];
		e->margin_hi = ci.hi[2];
		if (e->auc < 0 || e->baseline_auc < 0)
			continue;
		sum += e->auc - e->baseline_auc;
		/* a 95% interval spans 3.92 standard errors */
		var += pow((ci.hi[2] - ci.lo[2]) / 3.92, 2);
		all_ci = all_ci && ci.ok;
		k++;
	}
	if (k < 2 || !all_ci)
		return;
	res->years_ok = true;
	res->years_margin = sum / (double)k;
	res->years_margin_lo = res->years_margin - 1.96 * sqrt(var) / (double)k;
	res->years_margin_hi = res->years_margin + 1.96 * sqrt(var) / (double)k;
}

static void calibrate(const double *s, const double *p, const int *y, size_t n,
		      struct rv_eval_result *res)
{
	struct rscore *v;
	size_t i, b, nb = n < RV_EVAL_NBINS ? n : RV_EVAL_NBINS;

	if (!nb)
		return;
	v = xmalloc(n * sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].s = s[i];
		v[i].p = p[i];
		v[i].y = y[i];
	}
	qsort(v, n, sizeof(*v), cmp_rscore);
	for (b = 0; b < nb; b++) {
		struct rv_eval_bin *bin = &res->bins[b];
		size_t lo = n * b / nb, hi = n * (b + 1) / nb;
		double psum = 0;

		memset(bin, 0, sizeof(*bin));
		bin->lo = v[lo].s;
		bin->hi = v[hi - 1].s;
		for (i = lo; i < hi; i++) {
			psum += v[i].p;
			bin->positives += v[i].y;
		}
		bin->n = hi - lo;
		bin->predicted = psum / (double)bin->n;
		bin->observed = (double)bin->positives / (double)bin->n;
	}
	res->nbins = nb;
	free(v);
}

static double ratio(size_t a, size_t b)
{
	return b ? (double)a / (double)b : 0;
}

static int check_fresh(struct rv_history *h, struct errmsg *err)
{
	/* Replaying a stale index would miss commits: refuse. */
	git_oid head;
	char hex[GIT_OID_HEXSZ + 1];
	sqlite3_stmt *st = NULL;
	bool fresh = false;

	if (git_reference_name_to_id(&head, h->repo, "HEAD") == 0 &&
	    sqlite3_prepare_v2(h->db,
			       "SELECT 1 FROM tips WHERE oid = ?1 UNION ALL"
			       " SELECT 1 FROM commits WHERE oid = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		git_oid_tostr(hex, sizeof(hex), &head);
		sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
		fresh = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	if (!fresh)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "the history index is older than HEAD; run "
				  "`quorum index` first");
	return 0;
}

int rv_history_eval(const char *repo_path, const struct rv_eval_opts *opts,
		    struct rv_eval_result *res, struct errmsg *err)
{
	static const char *const vnames[RV_EVAL_NVOTERS] = {"rules", "history",
							    "risk"};
	static const char *const names[] = {
		"rules",      "history",      "rules,history",	    "risk",
		"rules,risk", "history,risk", "rules,history,risk",
	};
	struct rv_history *h = NULL;
	struct ecommit *v = NULL;
	double *rs = NULL, *bs = NULL, *ps = NULL;
	int *yr = NULL;
	int *ry = NULL, *by = NULL;
	size_t n = 0, i, nwin = 0, done = 0, nscored = 0;
	int64_t fitted_at = INT64_MIN;
	double t0 = now_seconds(), last_progress = t0;
	struct sb diff = SB_INIT, msg = SB_INIT;
	struct elocs locs = {0};
	int ret;

	memset(res, 0, sizeof(*res));
	res->auc = res->baseline_auc = -1;
	res->located_precision = res->model_heldout_auc = -1;
	res->precision_ci[0] = res->precision_ci[1] = -1;
	for (i = 0; i < RV_EVAL_NVOTERS; i++) {
		res->voters[i].name = vnames[i];
		res->voters[i].located_precision = -1;
		res->voters[i].precision_ci[0] = -1;
		res->voters[i].precision_ci[1] = -1;
	}
	ret = rv_history_open(&h, repo_path, err);
	if (ret < 0)
		return ret;
	if (!h)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "no history index in %s; run `quorum index` "
				  "first",
				  repo_path ? repo_path : ".");
	if ((ret = check_fresh(h, err)) ||
	    (ret = load_commits(h->db, &v, &n, err)))
		goto out;
	for (i = 0; i < n; i++)
		nwin += v[i].time >= opts->since && v[i].time <= opts->until;
	rs = xcalloc(nwin + 1, sizeof(*rs));
	yr = xcalloc(nwin + 1, sizeof(*yr));
	ps = xcalloc(nwin + 1, sizeof(*ps));
	ry = xcalloc(nwin + 1, sizeof(*ry));
	bs = xcalloc(nwin + 1, sizeof(*bs));
	by = xcalloc(nwin + 1, sizeof(*by));
	sb_init(&diff, (size_t)64 << 20);
	for (i = 0; i < n; i++) {
		struct rv_eval_commit ec;
		struct rv_diff *d = NULL;
		struct errmsg derr;
		char id[RV_OID_HEXSZ + 1];
		unsigned who = 0;
		size_t k;
		double now;

		if (v[i].time < opts->since || v[i].time > opts->until)
			continue;
		memset(&ec, 0, sizeof(ec));
		elocs_reset(&locs);
		/* Until there is enough to learn from, try at every commit. */
		if (!h->model.ok || fitted_at == INT64_MIN ||
		    v[i].time - fitted_at > EVAL_REFIT_SECONDS) {
			refit(&h->model, v, i);
			fitted_at = v[i].time;
			if (h->model.ok)
				res->model_heldout_auc = h->model.heldout_auc;
		}
		/* The index as it was just before this commit. */
		h->horizon = v[i].seq;
		sb_reset(&diff);
		sb_reset(&msg);
		snprintf(ec.id, sizeof(ec.id), "%s", v[i].oid);
		ec.risk = v[i].has_x ? hist_model_score(&h->model, v[i].x) : -1;
		ec.buggy = v[i].first_fix != 0;
		if (rv_history_commit_diff(h, v[i].oid, &diff, &msg, id,
					   &derr) == 0 &&
		    rv_diff_parse(&d, diff.buf ? diff.buf : "", diff.len,
				  &derr) == 0) {
			ec.lines = diff_lines(d);
			who = offline_findings(h, sb_str(&msg), d,
					       sb_str(&diff), diff.len, ec.risk,
					       &locs);
		}
		rv_diff_free(d);
		ec.flagged = who != 0;
		ec.voters = who ? names[who - 1] : "";
		/* The baseline on the same commits as the risk score. */
		if (ec.risk >= 0) {
			rs[nscored] = ec.risk;
			yr[nscored] = year_of(v[i].time);
			ps[nscored] = hist_model_rate(&h->model, ec.risk);
			ry[nscored] = ec.buggy;
			bs[nscored] = (double)ec.lines;
			by[nscored++] = ec.buggy;
		} else if (!nscored) {
			bs[done] = (double)ec.lines;
			by[done] = ec.buggy;
		}
		done++;
		res->commits++;
		res->positives += ec.buggy;
		res->flagged += ec.flagged;
		res->flagged_positive += ec.flagged && ec.buggy;
		for (k = 0; k < RV_EVAL_NVOTERS; k++)
			if (who & (1u << k)) {
				res->voters[k].flagged++;
				res->voters[k].flagged_positive += ec.buggy;
			}
		if (who & 2) {
			res->history_flagged++;
			res->history_flagged_positive += ec.buggy;
		}
		if (locs.n) {
			bool *hit = xcalloc(locs.n, sizeof(*hit));

			if (ec.buggy)
				locate(h, v[i].seq, &locs, hit);
			for (k = 0; k < locs.n; k++) {
				res->voters[locs.v[k].voter].findings++;
				res->voters[locs.v[k].voter].located += hit[k];
				res->findings++;
				res->located += hit[k];
			}
			free(hit);
		}
		if (opts->each)
			opts->each(opts->each_arg, &ec);
		if (opts->progress &&
		    (now = now_seconds()) - last_progress > 0.2) {
			char line[128];

			snprintf(line, sizeof(line),
				 "replaying history: %zu/%zu commits", done,
				 nwin);
			opts->progress(opts->progress_arg, line);
			last_progress = now;
		}
	}
	/*
	 * Commits replayed before any model could be fitted have no score:
	 * both AUCs are on the rest (the baseline on all when none has).
	 */
	res->scored = nscored;
	res->auc = rv_auc(rs, ry, nscored);
	res->baseline_auc = rv_auc(bs, by, nscored ? nscored : done);
	if (nscored) {
		struct rv_auc_ci ci;

		rv_auc_boot(rs, bs, ry, nscored, &ci);
		res->auc_ci_ok = ci.ok;
		memcpy(res->auc_lo, ci.lo, sizeof(ci.lo));
		memcpy(res->auc_hi, ci.hi, sizeof(ci.hi));
	}
	calibrate(rs, ps, ry, nscored, res);
	by_year(rs, bs, ry, yr, nscored, res);
	rv_wilson(res->flagged_positive, res->flagged, res->precision_ci);
	res->precision = ratio(res->flagged_positive, res->flagged);
	res->recall = ratio(res->flagged_positive, res->positives);
	if (res->findings)
		res->located_precision =
			(double)res->located / (double)res->findings;
	for (i = 0; i < RV_EVAL_NVOTERS; i++) {
		struct rv_eval_voter *ev = &res->voters[i];

		ev->precision = ratio(ev->flagged_positive, ev->flagged);
		rv_wilson(ev->flagged_positive, ev->flagged, ev->precision_ci);
		ev->recall = ratio(ev->flagged_positive, res->positives);
		if (ev->findings)
			ev->located_precision =
				(double)ev->located / (double)ev->findings;
	}
out:
	res->seconds = now_seconds() - t0;
	elocs_reset(&locs);
	free(locs.v);
	free(v);
	free(rs);
	free(yr);
	free(ps);
	free(ry);
	free(bs);
	free(by);
	sb_release(&diff);
	sb_release(&msg);
	rv_history_free(h);
	return ret;
}
