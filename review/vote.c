// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vote.c - the tally: cluster the findings of every voter by place and
 * problem, count each cluster's distinct voters by weight, and keep the
 * clusters that reach the quorum. See vote.h.
 */
#include <stdlib.h>
#include <string.h>

#include "llm.h"
#include "review.h"
#include "vote.h"

/* Lines apart two findings may be and still be about the same place. */
#define CLUSTER_SLACK 3

static bool ranges_meet(const struct rv_finding *a, const struct rv_finding *b)
{
	return a->line_start <= b->line_end + CLUSTER_SLACK &&
	       b->line_start <= a->line_end + CLUSTER_SLACK;
}

/* Is any of f's voters an LLM voter? */
static bool from_llm(const struct rv_review *r, const struct rv_finding *f)
{
	size_t i, j;

	for (i = 0; r->is_llm && i < f->nvoters; i++)
		for (j = 0; j < r->nvoters; j++)
			if (r->is_llm[j] && !strcmp(r->voters[j], f->voters[i]))
				return true;
	return false;
}

/*
 * Same file, overlapping lines, and the same problem: the same category
 * once synonyms are folded (models name categories differently), or,
 * for an LLM's finding, titles that share most of their words.
 */
static bool same_issue(const struct rv_review *r, const struct rv_finding *a,
		       const struct rv_finding *b)
{
	char ca[64], cb[64];

	if (a->patch != b->patch || !a->file || !b->file ||
	    strcmp(a->file, b->file))
		return false;
	if (!ranges_meet(a, b))
		return false;
	if (a->category && b->category) {
		rv_category_normalise(a->category, ca, sizeof(ca));
		rv_category_normalise(b->category, cb, sizeof(cb));
		if (!strcmp(ca, cb))
			return true;
	}
	return (from_llm(r, a) || from_llm(r, b)) && a->title && b->title &&
	       rv_titles_similar(a->title, b->title);
}

/* The weight of the voter called name (1 when unknown). */
static double voter_weight(const struct rv_review *r, const char *name)
{
	size_t i;

	for (i = 0; r->weights && i < r->nvoters; i++)
		if (!strcmp(r->voters[i], name))
			return r->weights[i];
	return 1.0;
}

static bool has_voter(const struct rv_finding *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nvoters; i++)
		if (!strcmp(f->voters[i], name))
			return true;
	return false;
}

/*
 * Fold f's voters, range and severity into the cluster c. The place is
 * the narrowest range a voter gave (the lower one of two as narrow):
 * the most precise claim of where the problem is, and always one a voter
 * made, so a sloppy wide range never widens a finding the others placed.
 */
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
	if (f->line_end - f->line_start < c->line_end - c->line_start ||
	    (f->line_end - f->line_start == c->line_end - c->line_start &&
	     f->line_start < c->line_start)) {
		c->line_start = f->line_start;
		c->line_end = f->line_end;
	}
	if (f->severity > c->severity)
		c->severity = f->severity;
	/* Untouched code only when every voter says so; keep cites. */
	c->preexisting = c->preexisting && f->preexisting;
	for (i = 0; i < ARRAY_SIZE(c->cites); i++) {
		if (!f->cites[i][0])
			continue;
		if (!c->cites[0][0])
			memcpy(c->cites[0], f->cites[i], sizeof(c->cites[0]));
		else if (!c->cites[1][0] && strcmp(c->cites[0], f->cites[i]))
			memcpy(c->cites[1], f->cites[i], sizeof(c->cites[1]));
	}
}

/*
 * Does the finding point at lines the patch has? Its file must be in the
 * diff and its range must meet a hunk's post-image.
 */
bool rv_finding_in_diff(const struct rv_finding *f, const struct rv_diff *d)
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

	if (a->votes != b->votes)
		return a->votes > b->votes ? -1 : 1;
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

void rv_vote(struct rv_review *r, struct rv_findings *pool)
{
	struct rv_findings clusters = {0};
	size_t i, j;

	for (i = 0; i < pool->n; i++) {
		for (j = 0; j < clusters.n; j++)
			if (same_issue(r, &clusters.items[j], &pool->items[i]))
				break;
		if (j < clusters.n)
			cluster_merge(&clusters.items[j], &pool->items[i]);
		else
			rv_findings_add(&clusters, &pool->items[i]);
	}
	for (i = 0; i < clusters.n; i++) {
		struct rv_finding *c = &clusters.items[i];
		struct rv_findings *to;

		/* Distinct voters count with their weights. */
		c->votes = 0;
		for (j = 0; j < c->nvoters; j++)
			c->votes += voter_weight(r, c->voters[j]);
		to = c->votes + 1e-9 >= r->quorum ? &r->findings : &r->minority;
		if (to == &r->findings && c->preexisting) {
			to = &r->minority; /* kept for JSON, never mailed */
			r->preexisting++;
		}

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

/* The summed weight of the LLM voters that answered a request. */
double rv_vote_answered_weight(const struct rv_review *r)
{
	double w = 0;
	size_t i, j;

	for (i = 0; i < r->nvoters; i++) {
		if (!r->is_llm[i])
			continue;
		for (j = 0; j < r->ncalls; j++)
			if (r->calls[j].answered &&
			    !strcmp(r->calls[j].voter, r->voters[i])) {
				w += r->weights[i];
				break;
			}
	}
	return w;
}
