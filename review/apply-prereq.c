// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-prereq.c - which of a set of series a series declares as its
 * prerequisites (prerequisite-patch-id:, -message-id:, -change-id:),
 * and theirs in turn, in the order they apply. Shared by `quorum
 * review` (the series of one input) and `quorum watch` (a thread and the
 * threads its prerequisite-message-id: lines name).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <glib.h>

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
 * The candidates by what a declaration names: message-id (of a patch or
 * a cover), patch-id (of a patch), change-id (of the series). Each key
 * maps to the candidates that carry it, in order.
 */
struct rv_prereq_index {
	GHashTable *msgid, *pid, *change; /* char * -> GArray of size_t */
	GHashTable *at;			  /* series pointer -> 1 + index */
	bool pids;			  /* pid filled */
	unsigned *mark;			  /* mark[j] == gen: seen this call */
	unsigned gen;
	size_t *found; /* scratch: what one series declares */
	size_t nfound, afound;
};

static void index_add(GHashTable *h, const char *key, size_t j)
{
	GArray *a;

	if (!key || !*key)
		return;
	a = g_hash_table_lookup(h, key);
	if (!a) {
		a = g_array_new(FALSE, FALSE, sizeof(size_t));
		g_hash_table_insert(h, g_strdup(key), a);
	}
	/* A candidate once per key, however many of its mails carry it. */
	if (!a->len || g_array_index(a, size_t, a->len - 1) != j)
		g_array_append_val(a, j);
}

static void free_array(gpointer a)
{
	g_array_free(a, TRUE);
}

static struct rv_prereq_index *plan_index(struct rv_prereq_plan *pl)
{
	struct rv_prereq_index *ix = pl->ix;
	size_t j, k;

	if (ix)
		return ix;
	ix = pl->ix = xcalloc(1, sizeof(*ix));
	ix->msgid = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  free_array);
	ix->pid = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					free_array);
	ix->change = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					   free_array);
	ix->at = g_hash_table_new(g_direct_hash, g_direct_equal);
	ix->mark = xcalloc(pl->n + 1, sizeof(*ix->mark));
	for (j = 0; j < pl->n; j++) {
		const struct mp_series *p = pl->series[j];

		g_hash_table_insert(ix->at, (gpointer)p,
				    GSIZE_TO_POINTER(j + 1));
		index_add(ix->change, series_change_id(p), j);
		for (k = 0; k <= p->npatches; k++) {
			const struct mp_patch *q =
				k ? p->patches[k - 1] : p->cover;

			if (q)
				index_add(ix->msgid, q->message_id, j);
		}
	}
	return ix;
}

/* Patch-ids are worked out only when some series declares one. */
static void index_pids(struct rv_prereq_plan *pl, struct rv_prereq_index *ix)
{
	size_t j, k;

	if (ix->pids)
		return;
	ix->pids = true;
	for (j = 0; j < pl->n; j++)
		for (k = 0; k < pl->series[j]->npatches; k++) {
			char *low;
			size_t c;

			if (!pl->series[j]->patches[k])
				continue;
			low = g_strdup(plan_pid(pl, j, k));
			for (c = 0; low[c]; c++)
				low[c] = (char)tolower((unsigned char)low[c]);
			index_add(ix->pid, low, j);
			g_free(low);
		}
}

static void found_add(struct rv_prereq_index *ix, GArray *a)
{
	guint x;

	for (x = 0; a && x < a->len; x++) {
		ALLOC_GROW(ix->found, ix->nfound + 1, ix->afound);
		ix->found[ix->nfound++] = g_array_index(a, size_t, x);
	}
}

/* Those of change-id want ("ID" or "ID:vN") whose version matches. */
static void found_change(struct rv_prereq_plan *pl, struct rv_prereq_index *ix,
			 const char *want)
{
	const char *v = strstr(want, ":v");
	char *cid = g_strndup(want, v ? (size_t)(v - want) : strlen(want));
	GArray *a = g_hash_table_lookup(ix->change, cid);
	guint x;

	for (x = 0; a && x < a->len; x++) {
		size_t j = g_array_index(a, size_t, x);
		const struct mp_series *p = pl->series[j];

		if (v && atoi(v + 2) != (p->version > 0 ? p->version : 1))
			continue;
		ALLOC_GROW(ix->found, ix->nfound + 1, ix->afound);
		ix->found[ix->nfound++] = j;
	}
	g_free(cid);
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The candidates series i declares (by patch-id, message-id or
 * change-id), each once, in the order of the candidates: a copy the
 * caller frees; *n gets how many.
 */
static size_t *declared_by(struct rv_prereq_plan *pl, size_t i, size_t *n)
{
	struct rv_prereq_index *ix = plan_index(pl);
	const struct mp_series *s = pl->series[i];
	size_t k, m, x, *out;

	ix->nfound = 0;
	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *d = k ? s->patches[k - 1] : s->cover;

		if (!d)
			continue;
		for (m = 0; m < d->nprereq_message_ids; m++)
			found_add(ix,
				  g_hash_table_lookup(
					  ix->msgid, d->prereq_message_ids[m]));
		for (m = 0; m < d->nprereq_change_ids; m++)
			found_change(pl, ix, d->prereq_change_ids[m]);
		if (d->nprereq_patch_ids)
			index_pids(pl, ix);
		for (m = 0; m < d->nprereq_patch_ids; m++) {
			char *low = g_ascii_strdown(d->prereq_patch_ids[m], -1);

			found_add(ix, g_hash_table_lookup(ix->pid, low));
			g_free(low);
		}
	}
	if (ix->nfound)
		qsort(ix->found, ix->nfound, sizeof(*ix->found), by_index);
	out = xcalloc(ix->nfound + 1, sizeof(*out));
	for (x = *n = 0; x < ix->nfound; x++)
		if (!*n || out[*n - 1] != ix->found[x])
			out[(*n)++] = ix->found[x];
	return out;
}

/*
 * Append to v[*n] the series that series i declares, each after the
 * ones it declares itself (so they apply in that order); the marks of
 * this call say what is in v already, or on the way, so a loop ends.
 */
static void add_declared(struct rv_prereq_plan *pl, size_t i,
			 const struct mp_series **v, size_t *n, int depth)
{
	struct rv_prereq_index *ix = pl->ix;
	size_t *js, nj, x;

	if (depth > PREREQ_MAX_DEPTH)
		return;
	js = declared_by(pl, i, &nj);
	for (x = 0; x < nj; x++) {
		size_t j = js[x];

		if (ix->mark[j] == ix->gen || pl->series[j]->superseded)
			continue;
		ix->mark[j] = ix->gen;
		add_declared(pl, j, v, n, depth + 1);
		v[(*n)++] = pl->series[j];
	}
	free(js);
}

size_t rv_prereq_declared(struct rv_prereq_plan *pl, size_t i,
			  const struct mp_series **v)
{
	struct rv_prereq_index *ix;
	size_t n = 0;

	if (!rv_prereq_declares_any(pl->series[i]))
		return 0;
	ix = plan_index(pl);
	if (!++ix->gen) { /* wrapped: the old marks are ambiguous */
		memset(ix->mark, 0, pl->n * sizeof(*ix->mark));
		ix->gen = 1;
	}
	ix->mark[i] = ix->gen;
	add_declared(pl, i, v, &n, 0);
	return n;
}

void rv_prereq_plan_set(struct rv_prereq_plan *pl, size_t i,
			const struct mp_series **v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		size_t at = GPOINTER_TO_SIZE(
			g_hash_table_lookup(plan_index(pl)->at, v[k]));

		if (at)
			pl->used[at - 1] = true;
	}
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
	if (pl->ix) {
		g_hash_table_destroy(pl->ix->msgid);
		g_hash_table_destroy(pl->ix->pid);
		g_hash_table_destroy(pl->ix->change);
		g_hash_table_destroy(pl->ix->at);
		free(pl->ix->mark);
		free(pl->ix->found);
		free(pl->ix);
	}
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
	const struct mp_series **v = NULL;
	size_t n, room = PREREQ_MAX_SERIES;

	/* Room for what it declares only when it declares any. */
	if (rv_prereq_declares_any(s))
		room = pl->n;
	v = xcalloc(room + 1, sizeof(*v));
	n = rv_prereq_declared(pl, i, v);
	if (n && repo && !rv_prereq_applies(repo, s, aopts, v, n) &&
	    rv_prereq_applies(repo, s, aopts, NULL, 0))
		n = 0; /* already in the base */
	else if (!n && repo && i && !rv_prereq_applies(repo, s, aopts, NULL, 0))
		n = guess_prereqs(repo, set, i, aopts, v);
	if (!n) { /* most series: nothing kept for them */
		free(v);
		v = NULL;
	} else if (n < room) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
	}
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
