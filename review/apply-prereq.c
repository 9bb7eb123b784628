// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-prereq.c - which of a set of series a series declares as its
 * prerequisites (prerequisite-patch-id:, -message-id:, -change-id:),
 * and theirs in turn, in the order they apply. Shared by `quorum
 * review` (the series of one input) and `quorum watch` (a thread and the
 * threads its prerequisite-message-id: lines name).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "review.h"

/* How deep declared prerequisites are followed (p needs q needs r ...). */
#define PREREQ_MAX_DEPTH 32

void rv_prereq_plan_init(struct rv_prereq_plan *pl,
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
static const char *plan_pid(struct rv_prereq_plan *pl, size_t j, size_t k)
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
static bool names_prereq(struct rv_prereq_plan *pl, const struct mp_patch *d,
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

bool rv_prereq_declares_any(const struct mp_series *s)
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
static bool declares(struct rv_prereq_plan *pl, size_t i, size_t j)
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
static void add_declared(struct rv_prereq_plan *pl, size_t i,
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

size_t rv_prereq_declared(struct rv_prereq_plan *pl, size_t i,
			  const struct mp_series **v)
{
	bool *seen = xcalloc(pl->n + 1, sizeof(*seen));
	size_t n = 0;

	seen[i] = true;
	add_declared(pl, i, v, &n, seen, 0);
	free(seen);
	return n;
}

void rv_prereq_plan_set(struct rv_prereq_plan *pl, size_t i,
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

bool rv_prereq_applies(struct rv_repo *repo, const struct mp_series *s,
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

void rv_prereq_plan_release(struct rv_prereq_plan *pl)
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

/* Earlier series tried when nothing was declared (b4 dropped the cover). */
#define PREREQ_MAX_SERIES 8

/*
 * No declaration: the fewest series just before series i that it applies
 * on, into v; their number, 0 when none does. A series in between that
 * it applies without (an independent one) is left out again.
 */
static size_t guess_prereqs(struct rv_repo *repo, const struct mp_set *set,
			    size_t i, const struct rv_apply_opts *aopts,
			    const struct mp_series **v)
{
	const struct mp_series *s = set->series[i], *drop;
	size_t n = 0, from = i, k;
	bool found = false;

	while (!found && from-- > 0 && n < PREREQ_MAX_SERIES) {
		if (set->series[from]->superseded)
			continue;
		memmove(v + 1, v, n * sizeof(*v));
		v[0] = set->series[from];
		found = rv_prereq_applies(repo, s, aopts, v, ++n);
	}
	if (!found)
		return 0;
	/* v[0] is needed: without it, it did not apply. */
	for (k = n; k-- > 1;) {
		drop = v[k];
		memmove(v + k, v + k + 1, (n - k - 1) * sizeof(*v));
		if (rv_prereq_applies(repo, s, aopts, v, n - 1)) {
			n--;
			continue;
		}
		memmove(v + k + 1, v + k, (n - k - 1) * sizeof(*v));
		v[k] = drop;
	}
	return n;
}

/*
 * Series i's prerequisites in the input: those it declares
 * (prerequisite-patch-id: or -message-id:, wherever they are in the
 * input, and theirs in turn) unless it applies without them; with no
 * declaration (b4 dropped the cover), those just before it that it needs
 * when it does not apply alone.
 */
static void plan_series(struct rv_prereq_plan *pl, struct rv_repo *repo,
			const struct mp_set *set, size_t i,
			const struct rv_apply_opts *aopts)
{
	const struct mp_series *s = set->series[i];
	const struct mp_series **v = xcalloc(set->nseries + 1, sizeof(*v));
	size_t n;

	n = rv_prereq_declared(pl, i, v);
	if (n && repo && !rv_prereq_applies(repo, s, aopts, v, n) &&
	    rv_prereq_applies(repo, s, aopts, NULL, 0))
		n = 0; /* already in the base */
	else if (!n && repo && i && !rv_prereq_applies(repo, s, aopts, NULL, 0))
		n = guess_prereqs(repo, set, i, aopts, v);
	rv_prereq_plan_set(pl, i, v, n);
}

void rv_prereq_plan_input(struct rv_prereq_plan *pl, struct rv_repo *repo,
			  const struct mp_set *set,
			  const struct rv_apply_opts *aopts,
			  const struct mp_series *only, bool only_set)
{
	size_t i;

	rv_prereq_plan_init(pl, (const struct mp_series *const *)set->series,
			    set->nseries);
	for (i = set->nseries; i-- > 0;) {
		if (only_set) {
			if (set->series[i] == only)
				plan_series(pl, repo, set, i, aopts);
			continue;
		}
		if (!set->series[i]->superseded && !pl->used[i])
			plan_series(pl, repo, set, i, aopts);
	}
}
