// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prereq.c - which of a set of series a series declares as its
 * prerequisites (prerequisite-patch-id:, -message-id:, -change-id:),
 * and theirs in turn, in the order they apply. Shared by `quorum
 * review` (the series of one input) and `quorum watch` (a thread and the
 * threads its prerequisite-message-id: lines name).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quorum.h"

/* How deep declared prerequisites are followed (p needs q needs r ...). */
#define PREREQ_MAX_DEPTH 32

void prereq_plan_init(struct prereq_plan *pl,
		      const struct mp_series *const *series, size_t n)
{
	memset(pl, 0, sizeof(*pl));
	pl->n = n;
	pl->series = xcalloc(n + 1, sizeof(*pl->series));
	if (n)
		memcpy(pl->series, series, n * sizeof(*pl->series));
	pl->of = xcalloc(n + 1, sizeof(*pl->of));
	pl->nof = xcalloc(n + 1, sizeof(*pl->nof));
	pl->used = xcalloc(n + 1, sizeof(*pl->used));
	pl->pid = xcalloc(n + 1, sizeof(*pl->pid));
}

/* The patch-id of patch k of series j, worked out once; "" when none. */
static const char *plan_pid(struct prereq_plan *pl, size_t j, size_t k)
{
	const struct mp_patch *q = pl->series[j]->patches[k];
	char id[RV_OID_HEXSZ + 1] = "";

	if (!pl->pid[j])
		pl->pid[j] = xcalloc(pl->series[j]->npatches + 1,
				     sizeof(*pl->pid[j]));
	if (!pl->pid[j][k]) {
		if (!q || !q->diff || rv_patch_id(q->diff, q->diff_len, id) < 0)
			id[0] = '\0';
		pl->pid[j][k] = xstrdup_or_null(id);
	}
	return pl->pid[j][k];
}

/* Does d name q (k: a patch of series j, else its cover) as a prereq? */
static bool names_prereq(struct prereq_plan *pl, const struct mp_patch *d,
			 const struct mp_patch *q, size_t j, size_t k)
{
	const char *pid;
	size_t i;

	for (i = 0; q->message_id && i < d->nprereq_message_ids; i++)
		if (!strcmp(d->prereq_message_ids[i], q->message_id))
			return true;
	if (!k || !d->nprereq_patch_ids)
		return false;
	pid = plan_pid(pl, j, k - 1);
	for (i = 0; *pid && i < d->nprereq_patch_ids; i++)
		if (!strcasecmp(d->prereq_patch_ids[i], pid))
			return true;
	return false;
}

/* The change-id of series p (b4's, in the cover or a patch), or NULL. */
static const char *series_change_id(const struct mp_series *p)
{
	size_t k;

	if (p->cover && p->cover->change_id)
		return p->cover->change_id;
	for (k = 0; k < p->npatches; k++)
		if (p->patches[k] && p->patches[k]->change_id)
			return p->patches[k]->change_id;
	return NULL;
}

/*
 * Does d name series p by b4's `prerequisite-change-id: ID[:vN]`? Without
 * a version any version of p is it; with one, only that version.
 */
static bool names_change_id(const struct mp_patch *d, const struct mp_series *p)
{
	const char *cid = series_change_id(p), *v;
	size_t i, n;

	if (!cid)
		return false;
	for (i = 0; i < d->nprereq_change_ids; i++) {
		const char *want = d->prereq_change_ids[i];

		v = strstr(want, ":v");
		n = v ? (size_t)(v - want) : strlen(want);
		if (strlen(cid) != n || strncmp(cid, want, n))
			continue;
		if (!v || atoi(v + 2) == (p->version > 0 ? p->version : 1))
			return true;
	}
	return false;
}

bool prereq_declares_any(const struct mp_series *s)
{
	size_t k;

	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *d = k ? s->patches[k - 1] : s->cover;

		if (d && (d->nprereq_patch_ids || d->nprereq_message_ids ||
			  d->nprereq_change_ids))
			return true;
	}
	return false;
}

/*
 * Does series i declare series j a prerequisite, by patch-id, message-id
 * or change-id?
 */
static bool declares(struct prereq_plan *pl, size_t i, size_t j)
{
	const struct mp_series *s = pl->series[i], *p = pl->series[j];
	size_t k, m;

	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *d = k ? s->patches[k - 1] : s->cover;

		if (!d || (!d->nprereq_patch_ids && !d->nprereq_message_ids &&
			   !d->nprereq_change_ids))
			continue;
		if (names_change_id(d, p))
			return true;
		for (m = 0; m <= p->npatches; m++) {
			const struct mp_patch *q =
				m ? p->patches[m - 1] : p->cover;

			if (q && names_prereq(pl, d, q, j, m))
				return true;
		}
	}
	return false;
}

/*
 * Append to v[*n] the series that series i declares, each after the
 * ones it declares itself (so they apply in that order); seen marks what
 * is in v already, or on the way, so a loop ends.
 */
static void add_declared(struct prereq_plan *pl, size_t i,
			 const struct mp_series **v, size_t *n, bool *seen,
			 int depth)
{
	size_t j;

	if (depth > PREREQ_MAX_DEPTH)
		return;
	for (j = 0; j < pl->n; j++) {
		if (seen[j] || pl->series[j]->superseded || !declares(pl, i, j))
			continue;
		seen[j] = true;
		add_declared(pl, j, v, n, seen, depth + 1);
		v[(*n)++] = pl->series[j];
	}
}

size_t prereq_declared(struct prereq_plan *pl, size_t i,
		       const struct mp_series **v)
{
	bool *seen = xcalloc(pl->n + 1, sizeof(*seen));
	size_t n = 0;

	seen[i] = true;
	add_declared(pl, i, v, &n, seen, 0);
	free(seen);
	return n;
}

void prereq_plan_set(struct prereq_plan *pl, size_t i,
		     const struct mp_series **v, size_t n)
{
	size_t j, k;

	for (j = 0; j < pl->n; j++)
		for (k = 0; k < n; k++)
			if (pl->series[j] == v[k])
				pl->used[j] = true;
	free(pl->of[i]);
	pl->of[i] = v;
	pl->nof[i] = n;
}

bool prereq_applies(struct rv_repo *repo, const struct mp_series *s,
		    const struct rv_apply_opts *aopts,
		    const struct mp_series *const *pre, size_t n)
{
	struct rv_apply_opts o = *aopts;
	struct rv_apply_result *res = NULL;
	int r;

	o.store_refs = false;
	o.prereqs = pre;
	o.nprereqs = n;
	r = rv_apply_series(&res, repo, s, &o, NULL);
	rv_apply_result_free(res);
	return r == 0;
}

void prereq_plan_release(struct prereq_plan *pl)
{
	size_t i, k;

	for (i = 0; pl->of && i < pl->n; i++) {
		free(pl->of[i]);
		for (k = 0; pl->pid[i] && k < pl->series[i]->npatches; k++)
			free(pl->pid[i][k]);
		free(pl->pid[i]);
	}
	free(pl->series);
	free(pl->of);
	free(pl->pid);
	free(pl->nof);
	free(pl->used);
	memset(pl, 0, sizeof(*pl));
}
