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
/* Labels of commits younger than this at fit time are not yet known. */
#define EVAL_LABEL_RIPE (180 * 86400)

struct ecommit {
	int64_t seq, time;
	char oid[RV_OID_HEXSZ + 1];
	double x[HF_N];
	int64_t first_fix; /* seq of the earliest fix naming it; 0 if none */
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
			       "SELECT c.seq, c.time, c.oid, " HIST_FACT_COLS
			       ","
			       " (SELECT MIN(p.fix_seq) FROM pairs p"
			       "  WHERE p.bug_seq = c.seq)"
			       " FROM commits c ORDER BY c.seq",
			       -1, &st, NULL) != SQLITE_OK)
		return errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
				  sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct ecommit *c;
		struct hist_facts f;

		ALLOC_GROW(*out, *n + 1, alloc);
		c = &(*out)[(*n)++];
		c->seq = sqlite3_column_int64(st, 0);
		c->time = sqlite3_column_int64(st, 1);
		snprintf(c->oid, sizeof(c->oid), "%s",
			 sqlite3_column_text(st, 2)
				 ? (const char *)sqlite3_column_text(st, 2)
				 : "");
		hist_facts_from_row(st, 3, &f);
		hist_features(&f, c->x);
		c->first_fix = sqlite3_column_int64(st, 3 + HIST_NFACTS);
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
	size_t i, n = 0;

	for (i = 0; i < k; i++) {
		if (v[i].time > v[k].time - EVAL_LABEL_RIPE)
			continue;
		memcpy(&X[n * HF_N], v[i].x, sizeof(v[i].x));
		y[n] = v[i].first_fix && v[i].first_fix < v[k].seq;
		n++;
	}
	hist_model_fit(m, X, y, n, HIST_RISK_TOP);
	free(X);
	free(y);
}

struct scored {
	double s;
	int y;
};

static int cmp_scored(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Area under the ROC curve (Mann-Whitney, ties share their rank). */
static double auc(struct scored *v, size_t n)
{
	double ranksum = 0, pos = 0, neg;
	size_t i, j, t;

	qsort(v, n, sizeof(*v), cmp_scored);
	for (i = 0; i < n; i = j) {
		double rank;

		for (j = i; j < n && v[j].s == v[i].s; j++)
			;
		rank = ((double)i + 1 + (double)j) / 2.0;
		for (t = i; t < j; t++)
			if (v[t].y) {
				ranksum += rank;
				pos++;
			}
	}
	neg = (double)n - pos;
	if (!pos || !neg)
		return -1;
	return (ranksum - pos * (pos + 1) / 2.0) / (pos * neg);
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

/* Which offline voters speak on this commit, as the review would ask. */
static const char *offline_findings(struct rv_history *h, const char *msg,
				    const char *author, struct rv_diff *d,
				    const char *difftext, size_t difflen,
				    double risk)
{
	static const struct rv_voter *const voters[] = {
		&rv_voter_rules,
		&rv_voter_history,
	};
	static const char *const names[] = {
		"rules",      "history",      "rules,history",	    "risk",
		"rules,risk", "history,risk", "rules,history,risk",
	};
	struct mp_patch p = {0};
	struct rv_context ctx = {0};
	unsigned who = 0;
	size_t i, j;

	p.kind = MP_KIND_PATCH;
	p.commit_message = (char *)msg;
	p.subject_raw = (char *)"";
	p.author_email = (char *)author;
	p.diff = (char *)difftext;
	p.diff_len = difflen;
	ctx.patch = &p;
	ctx.diff = d;
	ctx.history = h;
	ctx.pre_tree = "";
	ctx.post_tree = "";
	for (i = 0; i < ARRAY_SIZE(voters); i++) {
		struct rv_findings fs = {0};
		struct errmsg err;

		if (voters[i]->review(voters[i], &ctx, &fs, &err) == 0)
			for (j = 0; j < fs.n; j++)
				if (in_diff(&fs.items[j], d))
					who |= 1u << i;
		rv_findings_release(&fs);
	}
	if (h->model.ok && risk >= h->model.threshold)
		who |= 4;
	return who ? names[who - 1] : NULL;
}

int rv_history_eval(const char *repo_path, const struct rv_eval_opts *opts,
		    struct rv_eval_result *res, struct errmsg *err)
{
	struct rv_history *h = NULL;
	struct ecommit *v = NULL;
	struct scored *risk = NULL, *base = NULL;
	size_t n = 0, i, nwin = 0, done = 0;
	int64_t fitted_at = INT64_MIN;
	double t0 = now_seconds(), last_progress = t0;
	struct sb diff = SB_INIT, msg = SB_INIT;
	int ret;

	memset(res, 0, sizeof(*res));
	res->auc = res->baseline_auc = -1;
	ret = rv_history_open(&h, repo_path, err);
	if (ret < 0)
		return ret;
	if (!h)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "no history index in %s; run `quorum index` "
				  "first",
				  repo_path ? repo_path : ".");
	{
		/* Replaying a stale index would miss commits: refuse. */
		git_oid head;
		char hex[GIT_OID_HEXSZ + 1];
		sqlite3_stmt *st = NULL;
		bool fresh = false;

		if (git_reference_name_to_id(&head, h->repo, "HEAD") == 0 &&
		    sqlite3_prepare_v2(
			    h->db,
			    "SELECT 1 FROM tips WHERE oid = ?1 UNION ALL"
			    " SELECT 1 FROM commits WHERE oid = ?1",
			    -1, &st, NULL) == SQLITE_OK) {
			git_oid_tostr(hex, sizeof(hex), &head);
			sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
			fresh = sqlite3_step(st) == SQLITE_ROW;
		}
		sqlite3_finalize(st);
		if (!fresh) {
			ret = errmsg_set(err, RV_ERR_INTERNAL,
					 "the history index is older than "
					 "HEAD; run `quorum index` first");
			goto out;
		}
	}
	if ((ret = load_commits(h->db, &v, &n, err)))
		goto out;
	for (i = 0; i < n; i++)
		nwin += v[i].time >= opts->since && v[i].time <= opts->until;
	risk = xcalloc(nwin + 1, sizeof(*risk));
	base = xcalloc(nwin + 1, sizeof(*base));
	sb_init(&diff, (size_t)64 << 20);
	for (i = 0; i < n; i++) {
		struct rv_eval_commit ec;
		struct rv_diff *d = NULL;
		struct errmsg derr;
		char id[RV_OID_HEXSZ + 1];
		const char *who = NULL;
		double now;

		if (v[i].time < opts->since || v[i].time > opts->until)
			continue;
		memset(&ec, 0, sizeof(ec));
		/* Until there is enough to learn from, try at every commit. */
		if (!h->model.ok || fitted_at == INT64_MIN ||
		    v[i].time - fitted_at > EVAL_REFIT_SECONDS) {
			refit(&h->model, v, i);
			fitted_at = v[i].time;
		}
		/* The index as it was just before this commit. */
		h->horizon = v[i].seq;
		sb_reset(&diff);
		sb_reset(&msg);
		snprintf(ec.id, sizeof(ec.id), "%s", v[i].oid);
		ec.risk = hist_model_score(&h->model, v[i].x);
		ec.buggy = v[i].first_fix != 0;
		if (rv_history_commit_diff(h, v[i].oid, &diff, &msg, id,
					   &derr) == 0 &&
		    rv_diff_parse(&d, diff.buf ? diff.buf : "", diff.len,
				  &derr) == 0) {
			ec.lines = diff_lines(d);
			who = offline_findings(h, sb_str(&msg), NULL, d,
					       sb_str(&diff), diff.len,
					       ec.risk);
		}
		rv_diff_free(d);
		ec.flagged = who != NULL;
		ec.voters = who ? who : "";
		risk[done].s = ec.risk;
		risk[done].y = ec.buggy;
		base[done].s = (double)ec.lines;
		base[done].y = ec.buggy;
		done++;
		res->commits++;
		res->positives += ec.buggy;
		res->flagged += ec.flagged;
		if (who && strstr(who, "history")) {
			res->history_flagged++;
			res->history_flagged_positive += ec.buggy;
		}
		res->flagged_positive += ec.flagged && ec.buggy;
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
	res->auc = auc(risk, done);
	res->baseline_auc = auc(base, done);
	res->precision = res->flagged ? (double)res->flagged_positive /
						(double)res->flagged
				      : 0;
	res->recall = res->positives ? (double)res->flagged_positive /
					       (double)res->positives
				     : 0;
out:
	res->seconds = now_seconds() - t0;
	free(v);
	free(risk);
	free(base);
	sb_release(&diff);
	sb_release(&msg);
	rv_history_free(h);
	return ret;
}
