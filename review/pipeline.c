// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pipeline.c - one review: apply the series, ask each voter about each
 * patch, keep only the findings that enough distinct voters agree on and
 * that point at lines the patch really has.
 */
#include <stdlib.h>
#include <string.h>

#include "review.h"

static const struct rv_voter *const default_voters[] = {
	&rv_voter_rules,
};

/*
 * hist (issue 6): the default offline set grows with what the repo has:
 * history and risk with a history index, checkpatch when the tree has a
 * checker. out holds at least 4.
 */
static size_t offline_voters(const struct rv_review_opts *opts,
			     const struct rv_voter **out)
{
	size_t n = 0;

	out[n++] = &rv_voter_rules;
	if (opts->history) {
		out[n++] = &rv_voter_history;
		out[n++] = &rv_voter_risk;
	}
	if (opts->workdir && rv_checkpatch_present(opts->workdir))
		out[n++] = &rv_voter_checkpatch;
	return n;
}

/* hist: per-patch risk score and the top similar past fixes. */
#define REVIEW_SIMILAR_TOP 3

static void patch_history(struct rv_review *r, size_t k,
			  const struct rv_review_opts *opts,
			  const struct mp_patch *p, const struct rv_diff *d)
{
	struct errmsg herr;
	struct sb why = SB_INIT;

	if (!opts->history || k >= r->npatch_info)
		return;
	if (rv_history_risk(opts->history, d, p->commit_message,
			    p->author_email, &r->risk[k], &why, &herr) == 0 &&
	    why.len)
		r->risk_why[k] = sb_detach(&why, NULL);
	sb_release(&why);
	rv_history_similar(opts->history, d, REVIEW_SIMILAR_TOP,
			   &r->similar[k], &herr);
}

/* Lines apart two findings may be and still be about the same place. */
#define CLUSTER_SLACK 3

static bool ranges_meet(const struct rv_finding *a, const struct rv_finding *b)
{
	return a->line_start <= b->line_end + CLUSTER_SLACK &&
	       b->line_start <= a->line_end + CLUSTER_SLACK;
}

static bool same_issue(const struct rv_finding *a, const struct rv_finding *b)
{
	if (a->patch != b->patch || !a->file || !b->file ||
	    strcmp(a->file, b->file))
		return false;
	if (!ranges_meet(a, b))
		return false;
	return a->category && b->category && !strcmp(a->category, b->category);
}

static bool has_voter(const struct rv_finding *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nvoters; i++)
		if (!strcmp(f->voters[i], name))
			return true;
	return false;
}

/* Fold f's voters, range and severity into the cluster c. */
static void cluster_merge(struct rv_finding *c, const struct rv_finding *f)
{
	size_t i;

	for (i = 0; i < f->nvoters; i++) {
		if (has_voter(c, f->voters[i]))
			continue;
		c->voters = xrealloc(c->voters,
				     (c->nvoters + 1) * sizeof(*c->voters));
		c->voters[c->nvoters++] = xstrdup_or_null(f->voters[i]);
	}
	if (f->line_start < c->line_start)
		c->line_start = f->line_start;
	if (f->line_end > c->line_end)
		c->line_end = f->line_end;
	if (f->severity > c->severity)
		c->severity = f->severity;
}

/*
 * Does the finding point at lines the patch has? Its file must be in the
 * diff and its range must meet a hunk's post-image.
 */
static bool finding_in_diff(const struct rv_finding *f,
			    const struct rv_diff *d)
{
	size_t i, j;

	if (!d || !f->file)
		return false;
	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *file = &d->files[i];

		if (!file->new_path || strcmp(file->new_path, f->file))
			continue;
		for (j = 0; j < file->nhunks; j++) {
			const struct rv_hunk *h = &file->hunks[j];
			int end = h->new_start + h->new_lines - 1;

			if (f->line_start <= end && f->line_end >= h->new_start)
				return true;
		}
	}
	return false;
}

static int cmp_findings(const void *pa, const void *pb)
{
	const struct rv_finding *a = pa, *b = pb;

	if (a->nvoters != b->nvoters)
		return a->nvoters > b->nvoters ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch - b->patch;
	if (a->file && b->file && strcmp(a->file, b->file))
		return strcmp(a->file, b->file);
	return a->line_start - b->line_start;
}

static void vote(struct rv_review *r, struct rv_findings *pool)
{
	struct rv_findings clusters = { 0 };
	size_t i, j;

	for (i = 0; i < pool->n; i++) {
		for (j = 0; j < clusters.n; j++)
			if (same_issue(&clusters.items[j], &pool->items[i]))
				break;
		if (j < clusters.n)
			cluster_merge(&clusters.items[j], &pool->items[i]);
		else
			rv_findings_add(&clusters, &pool->items[i]);
	}
	for (i = 0; i < clusters.n; i++) {
		struct rv_findings *to = (int)clusters.items[i].nvoters >=
							 r->quorum ?
						 &r->findings :
						 &r->minority;

		/* Move the cluster without copying its strings. */
		ALLOC_GROW(to->items, to->n + 1, to->alloc);
		to->items[to->n++] = clusters.items[i];
	}
	free(clusters.items);
	if (r->findings.n > 1)
		qsort(r->findings.items, r->findings.n,
		      sizeof(*r->findings.items), cmp_findings);
	if (r->minority.n > 1)
		qsort(r->minority.items, r->minority.n,
		      sizeof(*r->minority.items), cmp_findings);
}

/* The tree each patch starts from and ends at, "" when not applied. */
static void patch_trees(const struct rv_review *r, size_t k, const char **pre,
			const char **post)
{
	*pre = "";
	*post = "";
	if (!r->apply || k >= r->apply->npatches)
		return;
	*post = r->apply->patches[k].tree_id;
	*pre = k ? r->apply->patches[k - 1].tree_id : r->apply->base_id;
}

int rv_review_series(struct rv_review **out, struct rv_repo *repo,
		     const struct mp_series *s, const struct rv_review_opts *opts,
		     struct errmsg *err)
{
	static const struct rv_review_opts defaults = RV_REVIEW_OPTS_INIT;
	const struct rv_voter *const *voters;
	const struct rv_voter *offline[4];
	struct rv_findings pool = { 0 };
	struct rv_review *r;
	size_t nvoters, i, k, present = 0;
	int ret = 0;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	voters = opts->voters ? opts->voters : default_voters;
	nvoters = opts->voters ? opts->nvoters : ARRAY_SIZE(default_voters);
	if (!opts->voters) {
		nvoters = offline_voters(opts, offline);
		voters = offline;
	}

	r = xcalloc(1, sizeof(*r));
	r->series = s;
	if (repo) {
		ret = rv_apply_series(&r->apply, repo, s, &opts->apply, err);
		if (ret < 0) {
			if (ret == RV_ERR_APPLY && r->apply) {
				*out = r;
				return ret;
			}
			rv_review_free(r);
			return ret;
		}
	}

	r->voters = xcalloc(nvoters, sizeof(*r->voters));
	for (i = 0; i < nvoters; i++)
		r->voters[r->nvoters++] = xstrdup_or_null(voters[i]->name);
	/*
	 * The offline voters look at different things (C heuristics, past
	 * bugs, risk, style), so they cannot agree on a finding: when they
	 * vote alone, each is its own quorum (hist, issue 6).
	 */
	r->quorum = opts->quorum > 0 ? opts->quorum :
		    !opts->voters    ? 1 :
				       (int)nvoters / 2 + 1;
	r->no_history = !opts->history;
	if (opts->history) {
		size_t j;

		r->npatch_info = s->npatches;
		r->risk = xcalloc(s->npatches + 1, sizeof(*r->risk));
		r->risk_why = xcalloc(s->npatches + 1, sizeof(*r->risk_why));
		r->similar = xcalloc(s->npatches + 1, sizeof(*r->similar));
		for (j = 0; j < s->npatches; j++)
			r->risk[j] = -1;
	}

	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];
		struct rv_findings mine = { 0 };
		struct rv_context ctx = { 0 };
		struct rv_diff *d = NULL;
		struct errmsg derr;
		size_t slot;

		if (!p)
			continue;
		slot = present++; /* apply results list present patches only */
		if (!p->diff)
			continue;
		if (rv_diff_parse(&d, p->diff, p->diff_len, &derr) < 0) {
			/* A diff we cannot read gets no findings, not a crash. */
			rv_diff_free(d);
			continue;
		}
		ctx.series = s;
		ctx.patch = p;
		ctx.patch_index = (int)k;
		ctx.diff = d;
		ctx.repo = repo;
		patch_trees(r, slot, &ctx.pre_tree, &ctx.post_tree);
		ctx.history = opts->history;
		ctx.workdir = opts->workdir;
		patch_history(r, k, opts, p, d);
		for (i = 0; i < nvoters; i++) {
			struct errmsg verr;

			if (voters[i]->review(voters[i], &ctx, &mine, &verr) < 0)
				continue; /* an abstaining voter */
		}
		for (i = 0; i < mine.n; i++) {
			mine.items[i].patch = (int)k;
			if (finding_in_diff(&mine.items[i], d))
				rv_findings_add(&pool, &mine.items[i]);
			else
				r->dropped++;
		}
		rv_findings_release(&mine);
		rv_diff_free(d);
	}
	vote(r, &pool);
	rv_findings_release(&pool);
	*out = r;
	return 0;
}

void rv_review_free(struct rv_review *r)
{
	size_t i;

	if (!r)
		return;
	rv_apply_result_free(r->apply);
	for (i = 0; i < r->nvoters; i++)
		free(r->voters[i]);
	free(r->voters);
	rv_findings_release(&r->findings);
	rv_findings_release(&r->minority);
	for (i = 0; i < r->npatch_info; i++) {
		rv_similar_list_release(&r->similar[i]);
		free(r->risk_why[i]);
	}
	free(r->similar);
	free(r->risk_why);
	free(r->risk);
	free(r);
}
