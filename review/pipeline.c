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
	struct rv_findings pool = { 0 };
	struct rv_review *r;
	size_t nvoters, i, k, present = 0;
	int ret = 0;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	voters = opts->voters ? opts->voters : default_voters;
	nvoters = opts->voters ? opts->nvoters : ARRAY_SIZE(default_voters);

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
	r->quorum = opts->quorum > 0 ? opts->quorum : (int)nvoters / 2 + 1;

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
	free(r);
}
