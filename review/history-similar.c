// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-similar.c - which past bug/fix pairs resemble a patch, and how
 * risky a patch looks next to this tree's history.
 *
 * Two retrievals, one ranking. Lexical: the identifiers the patch adds
 * are looked up in the FTS5 index of past buggy hunks (BM25). Shape: the
 * shingles of the added code with names abstracted (history-shape.c) are
 * looked up in the shapes table, each weighted by its rarity in the
 * history, so a bug that comes back renamed in another file is found and
 * common idioms weigh next to nothing. The best candidates of both are
 * re-ranked line by line, so every result can show the lines that
 * matched and, for a shape match, the renaming from one to the other.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history-int.h"

#define SIM_MAX_PATCH_LINES 2000
#define SIM_MAX_QUERY_TOKENS 48
#define SIM_CANDIDATES 80
#define SIM_LINE_MIN 0.75     /* token Jaccard for two lines to "match" */
#define SIM_MAX_TOK 48	      /* tokens kept of one line */
#define SIM_EMBED_TOP 20      /* hunks nearest by cosine added as candidates */
#define SIM_EMBED_WEIGHT 0.25 /* share of the cosine in a score */

/* A line as a sorted set of token hashes. */
struct tline {
	uint64_t tok[SIM_MAX_TOK];
	size_t ntok;
	uint64_t whole; /* hash of the normalized line */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Identifiers and numbers of a normalized line, as a sorted set. */
static void line_tokens(const char *s, struct tline *t)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, j;

	t->ntok = 0;
	t->whole = hist_hash(s, strlen(s));
	while (*p && t->ntok < SIM_MAX_TOK) {
		const unsigned char *w = p;

		if (!isalnum(*p) && *p != '_') {
			p++;
			continue;
		}
		while (isalnum(*p) || *p == '_')
			p++;
		t->tok[t->ntok++] = hist_hash(w, (size_t)(p - w));
	}
	qsort(t->tok, t->ntok, sizeof(t->tok[0]), cmp_u64);
	for (i = j = 0; i < t->ntok; i++)
		if (!j || t->tok[j - 1] != t->tok[i])
			t->tok[j++] = t->tok[i];
	t->ntok = j;
}

static double line_sim(const struct tline *a, const struct tline *b)
{
	size_t i = 0, j = 0, shared = 0;

	if (a->whole == b->whole)
		return 1.0;
	if (!a->ntok || !b->ntok)
		return 0;
	while (i < a->ntok && j < b->ntok) {
		if (a->tok[i] == b->tok[j]) {
			shared++;
			i++;
			j++;
		} else if (a->tok[i] < b->tok[j]) {
			i++;
		} else {
			j++;
		}
	}
	return (double)shared / (double)(a->ntok + b->ntok - shared);
}

double hist_line_similarity(const char *a, const char *b)
{
	struct tline x, y;

	line_tokens(a, &x);
	line_tokens(b, &y);
	return line_sim(&x, &y);
}

struct pline {
	const char *file;
	const char *func; /* of its hunk, may be NULL (owned by plines) */
	int new_no;
	char *text; /* normalized */
	struct tline t;
};

struct plines {
	struct pline *v;
	size_t n, alloc;
	char **funcs; /* owned function names */
	size_t nfuncs;
};

static void plines_release(struct plines *pl)
{
	size_t i;

	for (i = 0; i < pl->n; i++)
		free(pl->v[i].text);
	for (i = 0; i < pl->nfuncs; i++)
		free(pl->funcs[i]);
	free(pl->funcs);
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
}

/* "int foo(int x)" at column 0, not a declaration or a statement. */
static bool looks_like_definition(const char *t)
{
	size_t n = strlen(t);

	while (n && isspace((unsigned char)t[n - 1]))
		n--;
	return (isalpha((unsigned char)t[0]) || t[0] == '_') &&
	       strchr(t, '(') && n && t[n - 1] != ';' && t[n - 1] != ',';
}

static void collect_plines(const struct rv_diff *d, struct plines *pl,
			   struct sb *tokens)
{
	struct sb norm = SB_INIT, all = SB_INIT;
	size_t i, j, k;

	sb_init(&all, (size_t)1 << 20);
	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];
		bool fns = hist_path_has_functions(f->new_path);

		if (!f->new_path || f->binary)
			continue;
		for (j = 0; j < f->nhunks; j++) {
			const struct rv_hunk *h = &f->hunks[j];
			char *func =
				fns ? hist_function_name(h->section) : NULL;

			if (func) {
				pl->funcs = xrealloc(
					pl->funcs,
					(pl->nfuncs + 1) * sizeof(*pl->funcs));
				pl->funcs[pl->nfuncs++] = func;
			}
			for (k = 0; k < h->nlines; k++) {
				const struct rv_line *l = &h->lines[k];
				struct pline *p;
				char *nf;

				/* A definition inside the hunk starts a
				 * function. */
				if (fns && l->origin != '-' && l->text &&
				    looks_like_definition(l->text) &&
				    (nf = hist_function_name(l->text))) {
					pl->funcs = xrealloc(
						pl->funcs,
						(pl->nfuncs + 1) *
							sizeof(*pl->funcs));
					pl->funcs[pl->nfuncs++] = nf;
					func = nf;
				}
				if (l->origin != '+' || !l->text ||
				    pl->n >= SIM_MAX_PATCH_LINES)
					continue;
				hist_normalize(l->text, strlen(l->text), &norm);
				if (!hist_line_significant(sb_str(&norm)))
					continue;
				ALLOC_GROW(pl->v, pl->n + 1, pl->alloc);
				p = &pl->v[pl->n++];
				p->file = f->new_path;
				p->func = func;
				p->new_no = l->new_no;
				p->text = xstrdup_or_null(sb_str(&norm));
				line_tokens(p->text, &p->t);
				sb_adds(&all, p->text);
				sb_addch(&all, '\n');
			}
		}
	}
	hist_tokens(sb_str(&all), tokens, 100000);
	sb_release(&all);
	sb_release(&norm);
}

/* "a" OR "b" ... over distinct tokens, at most SIM_MAX_QUERY_TOKENS. */
static void build_query(const char *tokens, struct sb *q)
{
	uint64_t seen[SIM_MAX_QUERY_TOKENS];
	size_t nseen = 0, i;
	const char *p = tokens;

	while (*p && nseen < SIM_MAX_QUERY_TOKENS) {
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		uint64_t h = hist_hash(p, n);

		for (i = 0; i < nseen; i++)
			if (seen[i] == h)
				break;
		if (i == nseen) {
			seen[nseen++] = h;
			/* Tokens are [A-Za-z0-9_] only: quoting is safe. */
			sb_addf(q, "%s\"%.*s\"", q->len ? " OR " : "", (int)n,
				p);
		}
		p = e ? e + 1 : p + n;
	}
}

struct cand {
	int64_t pair, hunk;
	double score; /* lexical, then the combined score */
	double shape; /* from the shingles, before the line matching */
	char *file, *func;
	bool same_file, same_function;
	struct rv_similar_match *m;
	size_t nm;
	char *renaming;
	double lex;   /* the lexical part of score */
	bool has_fix; /* the patch holds what the fix added, near the match */
};

static void cand_release(struct cand *c)
{
	size_t i;

	for (i = 0; i < c->nm; i++) {
		free(c->m[i].file);
		free(c->m[i].patch_line);
		free(c->m[i].past_line);
	}
	free(c->m);
	free(c->file);
	free(c->func);
	free(c->renaming);
	memset(c, 0, sizeof(*c));
}

/*
 * Score one past hunk against the patch lines: which patch lines match
 * which of its lines, and how closely.
 */
static void score_hunk(const struct plines *pl, int role, const char *lines,
		       const char *file, const char *func, double bm,
		       struct cand *c)
{
	struct sb norm = SB_INIT;
	bool *used = xcalloc(pl->n + 1, sizeof(*used));
	const char *p = lines;
	double simsum = 0;
	size_t i;

	c->file = xstrdup_or_null(file);
	c->func = xstrdup_or_null(func);
	for (i = 0; i < pl->n; i++) {
		if (!strcmp(pl->v[i].file, file)) {
			c->same_file = true;
			if (func && pl->v[i].func &&
			    !strcmp(pl->v[i].func, func))
				c->same_function = true;
		}
	}
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* Buggy code: what the bug added, or what the fix removed. */
		bool want = role == 0 ? *p == '+' : *p == '-';
		struct tline t;
		double best = 0;
		size_t bi = 0;

		if (want && len > 1) {
			hist_normalize(p + 1, len - 1, &norm);
			if (hist_line_significant(sb_str(&norm))) {
				line_tokens(sb_str(&norm), &t);
				for (i = 0; i < pl->n; i++) {
					double s;

					if (used[i])
						continue;
					s = line_sim(&pl->v[i].t, &t);
					if (s > best) {
						best = s;
						bi = i;
					}
				}
			}
		}
		if (best >= SIM_LINE_MIN && c->nm < 8) {
			struct rv_similar_match *m;

			used[bi] = true;
			c->m = xrealloc(c->m, (c->nm + 1) * sizeof(*c->m));
			m = &c->m[c->nm++];
			memset(m, 0, sizeof(*m));
			m->file = xstrdup_or_null(pl->v[bi].file);
			m->new_no = pl->v[bi].new_no;
			m->patch_line = xstrdup_or_null(pl->v[bi].text);
			m->past_line = xstrdup_or_null(sb_str(&norm));
			m->fix_removed = role == 1;
			m->similarity = best;
			simsum += best;
		}
		p = nl ? nl + 1 : NULL;
	}
	c->score = 0.45 * (c->nm ? fmin(1.0, (double)c->nm / 3.0) *
					   (simsum / (double)c->nm)
				 : 0) +
		   0.25 * bm + 0.15 * (c->same_file ? 1 : 0) +
		   0.15 * (c->same_function ? 1 : 0);
	free(used);
	sb_release(&norm);
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->score < y->score ? 1 : x->score > y->score ? -1 : 0;
}

static int fill_pair(struct rv_history *h, struct cand *c, struct rv_similar *s)
{
	sqlite3_stmt *st = NULL;
	int ret = RV_ERR_INTERNAL;

	if (sqlite3_prepare_v2(h->db,
			       "SELECT kind, fix_oid, fix_subject, fix_expl,"
			       " bug_oid, bug_subject FROM pairs WHERE id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return RV_ERR_INTERNAL;
	sqlite3_bind_int64(st, 1, c->pair);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);

		memset(s, 0, sizeof(*s));
		s->kind = kind && !strcmp(kind, "revert") ? "revert" : "fixes";
		snprintf(s->fix_id, sizeof(s->fix_id), "%s",
			 sqlite3_column_text(st, 1)
				 ? (const char *)sqlite3_column_text(st, 1)
				 : "");
		s->fix_subject = xstrdup_or_null(
			(const char *)sqlite3_column_text(st, 2));
		s->fix_explanation = xstrdup_or_null(
			(const char *)sqlite3_column_text(st, 3));
		snprintf(s->bug_id, sizeof(s->bug_id), "%s",
			 sqlite3_column_text(st, 4)
				 ? (const char *)sqlite3_column_text(st, 4)
				 : "");
		s->bug_subject = xstrdup_or_null(
			(const char *)sqlite3_column_text(st, 5));
		s->file = c->file;
		s->function = c->func;
		s->score = c->score;
		s->same_file = c->same_file;
		s->same_function = c->same_function;
		s->matches = c->m;
		s->nmatches = c->nm;
		s->lexical = c->lex;
		s->shape = c->shape;
		s->renaming = c->renaming;
		s->has_fix = c->has_fix;
		c->renaming = NULL;
		c->file = c->func = NULL;
		c->m = NULL;
		c->nm = 0;
		ret = 0;
	}
	sqlite3_finalize(st);
	return ret;
}

static int cmp_similar(const void *a, const void *b)
{
	const struct rv_similar *x = a, *y = b;

	return x->score < y->score ? 1 : x->score > y->score ? -1 : 0;
}

/* Fold another hunk of the same pair into s: more matches, a function. */
static void merge_cand(struct rv_similar *s, struct cand *c)
{
	size_t i, j;

	for (i = 0; i < c->nm; i++) {
		struct rv_similar_match *m = &c->m[i];

		for (j = 0; j < s->nmatches; j++)
			if (s->matches[j].new_no == m->new_no &&
			    s->matches[j].file && m->file &&
			    !strcmp(s->matches[j].file, m->file))
				break;
		if (j < s->nmatches) {
			struct rv_similar_match *e = &s->matches[j];

			/*
			 * Prefer what the fix removed, or where it added a
			 * check: that is the bug.
			 */
			if ((m->fix_removed && !e->fix_removed) ||
			    (m->fix_site && !e->fix_removed && !e->fix_site)) {
				free(e->past_line);
				e->past_line = m->past_line;
				m->past_line = NULL;
				e->fix_removed = m->fix_removed;
				e->fix_site = m->fix_site;
				e->by_shape = m->by_shape;
				e->similarity = m->similarity;
			}
			continue;
		}
		if (s->nmatches >= 12)
			continue;
		s->matches = xrealloc(s->matches,
				      (s->nmatches + 1) * sizeof(*s->matches));
		s->matches[s->nmatches++] = *m;
		memset(m, 0, sizeof(*m));
	}
	if (c->same_function && !s->same_function) {
		s->same_function = true;
		free(s->function);
		s->function = c->func;
		c->func = NULL;
	} else if (!s->function && c->func) {
		s->function = c->func;
		c->func = NULL;
	}
	if (!s->renaming && c->renaming) {
		s->renaming = c->renaming;
		c->renaming = NULL;
	}
	if (c->score > s->score)
		s->score = c->score;
	s->lexical = fmax(s->lexical, c->lex);
	s->has_fix = s->has_fix || c->has_fix;
	s->shape = fmax(s->shape, c->shape);
}

/*
 * With embeddings: the hunks nearest to the patch's added code by cosine
 * join the candidates, and every candidate's score gets a share of its
 * cosine. When the endpoint fails the lexical candidates stand alone.
 */
static size_t add_embedded(struct rv_history *h, const struct plines *pl,
			   struct cand *cands, size_t ncands)
{
	int64_t ids[SIM_EMBED_TOP];
	double cosv[SIM_EMBED_TOP];
	struct sb query = SB_INIT;
	sqlite3_stmt *st = NULL;
	size_t i, j, n0 = ncands;
	int n;

	sb_init(&query, HIST_EMBED_MAX_TEXT);
	for (i = 0; i < pl->n; i++)
		if (sb_adds(&query, pl->v[i].text) < 0 ||
		    sb_addch(&query, '\n') < 0)
			break;
	n = query.len ? hist_embed_search(h, sb_str(&query), SIM_EMBED_TOP, ids,
					  cosv)
		      : 0;
	sb_release(&query);
	if (n <= 0)
		return ncands;
	for (j = 0; j < (size_t)n; j++) {
		for (i = 0; i < n0; i++)
			if (cands[i].hunk == ids[j])
				break;
		if (i == n0 && ncands < SIM_CANDIDATES + SIM_EMBED_TOP) {
			/* Not found by words: read it and score its lines. */
			if (!st &&
			    sqlite3_prepare_v2(h->db,
					       "SELECT pair_id, role, "
					       "file, func, lines FROM "
					       "hunks WHERE id = ?",
					       -1, &st, NULL) != SQLITE_OK)
				break;
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, ids[j]);
			if (sqlite3_step(st) != SQLITE_ROW ||
			    !sqlite3_column_text(st, 2) ||
			    !sqlite3_column_text(st, 4))
				continue;
			i = ncands++;
			cands[i].pair = sqlite3_column_int64(st, 0);
			cands[i].hunk = ids[j];
			score_hunk(pl, sqlite3_column_int(st, 1),
				   (const char *)sqlite3_column_text(st, 4),
				   (const char *)sqlite3_column_text(st, 2),
				   (const char *)sqlite3_column_text(st, 3), 0,
				   &cands[i]);
		}
		if (i < ncands)
			cands[i].score +=
				SIM_EMBED_WEIGHT * (cosv[j] > 0 ? cosv[j] : 0);
	}
	sqlite3_finalize(st);
	for (i = 0; i < ncands; i++)
		if (cands[i].score > 1)
			cands[i].score = 1;
	return ncands;
}

/* ---- shape retrieval ------------------------------------------------- */

#define SIM_SHAPE_MAX_LINES 4000  /* added lines of a patch lexed */
#define SIM_SHAPE_MAX_QUERY 3000  /* shingles looked up; more: winnowed */
#define SIM_SHAPE_CANDIDATES 40	  /* hunks re-ranked from the shapes */
#define SIM_SHAPE_LINE_MIN_TOK 6  /* symbols of a line that can match */
#define SIM_SHAPE_FULL_IDF 5.0	  /* rare shingles that make full evidence */
#define SIM_SHAPE_MAX_DF_SHARE 50 /* a shingle in 1/50 of hunks is common */
#define SIM_SHAPE_EXPLAIN_MIN                                                  \
	0.15 /* shape score from which lines are shown                         \
	      */

/* The added lines of a patch as one token stream, hunk by hunk. */
struct pshape {
	struct sb text;	     /* the lines, '\n'-joined; tokens point in */
	struct hist_shape s; /* their tokens, a break between hunks */
	struct pshape_line {
		const char *file;
		int new_no;
		size_t hunk;	    /* which hunk of the patch */
		size_t off, len;    /* in text */
		uint64_t sig;	    /* hash of the line's symbols */
		size_t first, ntok; /* its tokens in s */
	} * lines;
	size_t nlines, alloc;
};

static void pshape_release(struct pshape *ps)
{
	sb_release(&ps->text);
	hist_shape_release(&ps->s);
	free(ps->lines);
	memset(ps, 0, sizeof(*ps));
}

/* Per line of a lexed text: the hash of its symbols and its tokens. */
static void line_signatures(const struct hist_shape *s, size_t from,
			    struct pshape_line *lines, size_t nlines,
			    size_t line0)
{
	size_t i;

	for (i = from; i < s->n; i++) {
		const struct hist_stok *t = &s->v[i];
		struct pshape_line *l;

		if (t->line < line0 || t->line - line0 >= nlines)
			continue;
		l = &lines[t->line - line0];
		if (!l->ntok) {
			l->first = i;
			l->sig = 1469598103934665603ULL;
		}
		l->sig = (l->sig ^ t->sym) * 1099511628211ULL;
		l->ntok++;
	}
}

static void collect_pshape(const struct rv_diff *d, const struct hist_api *api,
			   struct pshape *ps)
{
	size_t i, j, k, nh = 0;

	sb_init(&ps->text, (size_t)4 << 20);
	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		if (!f->new_path || f->binary)
			continue;
		for (j = 0; j < f->nhunks; j++, nh++) {
			const struct rv_hunk *h = &f->hunks[j];

			for (k = 0; k < h->nlines; k++) {
				const struct rv_line *l = &h->lines[k];
				struct pshape_line *pl;
				size_t len;

				if (l->origin != '+' || !l->text ||
				    ps->nlines >= SIM_SHAPE_MAX_LINES)
					continue;
				len = strnlen(l->text, HIST_MAX_LINE * 4);
				if (sb_grow(&ps->text, len + 1) < 0)
					break;
				ALLOC_GROW(ps->lines, ps->nlines + 1,
					   ps->alloc);
				pl = &ps->lines[ps->nlines++];
				memset(pl, 0, sizeof(*pl));
				pl->file = f->new_path;
				pl->new_no = l->new_no;
				pl->hunk = nh;
				pl->off = ps->text.len;
				pl->len = len;
				sb_add(&ps->text, l->text, len);
				sb_addch(&ps->text, '\n');
			}
		}
	}
	/* The text no longer moves: lex it hunk by hunk, a break between. */
	for (i = 0; i < ps->nlines;) {
		const char *start = ps->text.buf + ps->lines[i].off;
		size_t e = i + 1, tok0, t;

		while (e < ps->nlines && ps->lines[e].hunk == ps->lines[i].hunk)
			e++;
		if (ps->s.n)
			hist_shape_break(&ps->s);
		tok0 = ps->s.n;
		hist_shape_lex(start,
			       ps->lines[e - 1].off + ps->lines[e - 1].len -
				       ps->lines[i].off,
			       api, &ps->s, HIST_SHAPE_MAX_TOKENS);
		for (t = tok0; t < ps->s.n; t++)
			ps->s.v[t].line += (uint32_t)i;
		line_signatures(&ps->s, tok0, ps->lines + i, e - i, i);
		i = e;
	}
}

/* Past hunks hit by the patch's shingles, with their rarity-weighted sum. */
struct shit {
	int64_t hunk;
	double w;
	size_t hits;
};

struct shits {
	struct shit *v; /* open addressing on hunk id */
	size_t n, cap;
};

static struct shit *shits_get(struct shits *m, int64_t hunk)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct shits g = {
			xcalloc(m->cap ? m->cap * 2 : 256, sizeof(struct shit)),
			0, m->cap ? m->cap * 2 : 256};

		for (i = 0; i < m->cap; i++)
			if (m->v[i].hunk)
				*shits_get(&g, m->v[i].hunk) = m->v[i];
		free(m->v);
		*m = g;
	}
	i = (size_t)hist_hash(&hunk, sizeof(hunk)) & (m->cap - 1);
	while (m->v[i].hunk && m->v[i].hunk != hunk)
		i = (i + 1) & (m->cap - 1);
	if (!m->v[i].hunk) {
		m->v[i].hunk = hunk;
		m->n++;
	}
	return &m->v[i];
}

static int cmp_shit(const void *a, const void *b)
{
	const struct shit *x = a, *y = b;

	return x->w < y->w ? 1 : x->w > y->w ? -1 : 0;
}

static int64_t count_hunks(struct rv_history *h)
{
	sqlite3_stmt *st = NULL;
	int64_t n = 0;

	if (sqlite3_prepare_v2(h->db, "SELECT MAX(id) FROM hunks", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/*
 * Look the patch's shingles up; a shingle's weight is its idf, and one
 * found in more than 1/SIM_SHAPE_MAX_DF_SHARE of the hunks (a common
 * idiom) is skipped. Into *out the hunks hit, heaviest first.
 */
static size_t shape_lookup(struct rv_history *h, const struct pshape *ps,
			   int64_t nh, struct shit **out, struct errmsg *err,
			   int *ret)
{
	struct shits m = {0};
	sqlite3_stmt *st = NULL;
	uint64_t *sh = NULL;
	int64_t *ids = NULL;
	size_t nsh, i, j, n = 0, ids_alloc = 0, maxdf;

	*out = NULL;
	*ret = 0;
	nsh = hist_shape_shingles(&ps->s, false, &sh);
	if (nsh > SIM_SHAPE_MAX_QUERY) {
		free(sh);
		nsh = hist_shape_shingles(&ps->s, true, &sh);
	}
	if (!nsh || nh <= 0)
		goto out;
	maxdf = (size_t)nh / SIM_SHAPE_MAX_DF_SHARE;
	if (maxdf < 8)
		maxdf = 8;
	if (sqlite3_prepare_v2(h->db,
			       "SELECT hunk_id FROM shapes WHERE h = ? LIMIT ?",
			       -1, &st, NULL) != SQLITE_OK) {
		*ret = errmsg_set(err, RV_ERR_INTERNAL,
				  "history index: cannot search shapes: %s",
				  sqlite3_errmsg(h->db));
		goto out;
	}
	for (i = 0; i < nsh && i < SIM_SHAPE_MAX_QUERY; i++) {
		size_t df = 0;
		double idf;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (int64_t)sh[i]);
		sqlite3_bind_int64(st, 2, (int64_t)maxdf + 1);
		while (sqlite3_step(st) == SQLITE_ROW) {
			ALLOC_GROW(ids, df + 1, ids_alloc);
			ids[df++] = sqlite3_column_int64(st, 0);
		}
		if (!df || df > maxdf)
			continue;
		idf = log((double)(nh + 1) / (double)df);
		for (j = 0; j < df; j++) {
			struct shit *e = shits_get(&m, ids[j]);

			e->w += idf;
			e->hits++;
		}
	}
	if (m.n) {
		*out = xcalloc(m.n, sizeof(**out));
		for (i = 0; i < m.cap; i++)
			if (m.v[i].hunk && m.v[i].hits >= 2)
				(*out)[n++] = m.v[i];
		qsort(*out, n, sizeof(**out), cmp_shit);
	}
out:
	sqlite3_finalize(st);
	free(sh);
	free(ids);
	free(m.v);
	return n;
}

/* A name pair of a renaming, and how often the matched lines show it. */
struct npair {
	const char *a, *b; /* the patch's, the past code's (into texts) */
	size_t alen, blen, n;
};

static void npair_add(struct npair *v, size_t *n, size_t max,
		      const struct hist_stok *a, const struct hist_stok *b)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (v[i].alen == a->len && v[i].blen == b->len &&
		    !memcmp(v[i].a, a->s, a->len) &&
		    !memcmp(v[i].b, b->s, b->len)) {
			v[i].n++;
			return;
		}
	if (*n >= max)
		return;
	v[*n].a = a->s;
	v[*n].alen = a->len;
	v[*n].b = b->s;
	v[*n].blen = b->len;
	v[*n].n = 1;
	(*n)++;
}

static int cmp_npair(const void *x, const void *y)
{
	const struct npair *a = x, *b = y;

	return a->n < b->n ? 1 : a->n > b->n ? -1 : 0;
}

/*
 * The share of the name occurrences on the matched lines that a
 * consistent renaming explains: pairs seen twice or more, whose names
 * pair with no other. A renamed clone reuses its names line after line
 * (out in malloc, memcpy and out[n - 1]); lines that merely look alike
 * (".name = x," and ".id = y,") pair each name once.
 */
static double renaming_consistency(const struct npair *v, size_t n)
{
	size_t i, j, all = 0, good = 0;

	for (i = 0; i < n; i++) {
		bool clash = false;

		all += v[i].n;
		if (v[i].n < 2)
			continue;
		for (j = 0; j < n && !clash; j++)
			clash = j != i &&
				((v[j].alen == v[i].alen &&
				  !memcmp(v[j].a, v[i].a, v[i].alen)) ||
				 (v[j].blen == v[i].blen &&
				  !memcmp(v[j].b, v[i].b, v[i].blen)));
		if (!clash)
			good += v[i].n;
	}
	return all ? (double)good / (double)all : 0;
}

/* "out <-> s, n <-> len": each name once, the most frequent pairs first. */
static char *format_renaming(struct npair *v, size_t n)
{
	struct sb out = SB_INIT;
	size_t i, j, shown = 0;

	qsort(v, n, sizeof(*v), cmp_npair);
	for (i = 0; i < n && shown < 8; i++) {
		if (v[i].alen == v[i].blen &&
		    !memcmp(v[i].a, v[i].b, v[i].alen))
			continue;
		for (j = 0; j < i; j++)
			if ((v[j].alen == v[i].alen &&
			     !memcmp(v[j].a, v[i].a, v[i].alen)) ||
			    (v[j].blen == v[i].blen &&
			     !memcmp(v[j].b, v[i].b, v[i].blen)))
				break;
		if (j < i)
			continue;
		sb_addf(&out, "%s%.*s \xe2\x86\x94 %.*s", shown ? ", " : "",
			(int)v[i].alen, v[i].a, (int)v[i].blen, v[i].b);
		shown++;
	}
	if (!out.len)
		return NULL;
	hist_sanitize(out.buf);
	return sb_detach(&out, NULL);
}

/* Does an added line of the fix have the shape of removed line pl? */
static bool shape_kept(const struct pshape_line *past, const char *origin,
		       size_t npast, const struct pshape_line *pl)
{
	size_t i;

	for (i = 0; i < npast; i++)
		if (origin[i] == '+' && past[i].sig == pl->sig &&
		    past[i].ntok == pl->ntok)
			return true;
	return false;
}

/*
 * Of a fix that removed nothing (it added a missing check), the context
 * lines next to what it added: there the bug was. NULL for other hunks.
 */
static bool *fix_sites(const char *origin, size_t n, int role)
{
	bool *site;
	size_t i, j;

	if (role != 1 || memchr(origin, '-', n))
		return NULL;
	site = xcalloc(n + 1, sizeof(*site));
	for (i = 0; i < n; i++) {
		if (origin[i] != '+')
			continue;
		for (j = i > 2 ? i - 2 : 0; j < n && j <= i + 2; j++)
			site[j] = origin[j] == ' ';
	}
	return site;
}

/* Has the fix's pre-image a line of pl's shape (pl only moved)? */
static bool in_preimage(const struct pshape_line *past, const char *origin,
			size_t npast, const struct pshape_line *pl)
{
	size_t i;

	for (i = 0; i < npast; i++)
		if (origin[i] != '+' && past[i].sig == pl->sig &&
		    past[i].ntok == pl->ntok)
			return true;
	return false;
}

/*
 * Does the patch hold, among or next to its lines lo..hi that matched,
 * the shape of a line the fix added? Then it repeats the fixed code.
 */
static bool patch_has_fix(const struct pshape *ps,
			  const struct pshape_line *past, const char *origin,
			  size_t npast, size_t lo, size_t hi)
{
	size_t i, j, from = lo > 3 ? lo - 3 : 0;
	size_t to = hi + 3 < ps->nlines ? hi + 3 : ps->nlines;

	for (i = 0; i < npast; i++) {
		if (origin[i] != '+' || past[i].ntok < 3)
			continue;
		for (j = from; j < to; j++)
			if (ps->lines[j].sig == past[i].sig &&
			    ps->lines[j].ntok == past[i].ntok &&
			    !in_preimage(past, origin, npast, &past[i]))
				return true;
	}
	return false;
}

/*
 * The lines of a past hunk whose shape the patch repeats, as matches,
 * and the renaming that maps the patch's names onto the past ones. Past
 * buggy code: what the bug added (role 0), or the fix's pre-image, its
 * removed lines and their context (role 1).
 */
static void shape_explain(const struct pshape *ps, const struct hist_api *api,
			  int role, const char *lines, struct cand *c)
{
	struct sb text = SB_INIT, norm = SB_INIT;
	struct hist_shape s = {0};
	struct pshape_line *past = NULL;
	char *origin = NULL;
	size_t npast = 0, alloc = 0, oalloc = 0, i, j, next = 0;
	size_t lo = SIZE_MAX, hi = 0; /* the patch lines matched */
	bool *used = xcalloc(ps->nlines + 1, sizeof(*used)), *site = NULL;
	struct npair names[64];
	size_t nnames = 0;
	const char *p = lines;

	while (p && *p && npast < 4 * HIST_MAX_HUNK_LINES) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* The fix's added lines too: did it change the shape? */
		bool want = role == 0 || *p == '-' || *p == ' ' || *p == '+';

		if (want && len > 1) {
			ALLOC_GROW(past, npast + 1, alloc);
			ALLOC_GROW(origin, npast + 1, oalloc);
			memset(&past[npast], 0, sizeof(*past));
			past[npast].off = text.len;
			past[npast].len = len - 1;
			origin[npast] = *p;
			sb_add(&text, p + 1, len - 1);
			sb_addch(&text, '\n');
			npast++;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!npast)
		goto out;
	hist_shape_lex(sb_str(&text), text.len, api, &s, HIST_SHAPE_MAX_TOKENS);
	line_signatures(&s, 0, past, npast, 0);
	site = fix_sites(origin, npast, role);
	for (i = 0; i < npast && c->nm < 12; i++) {
		const struct pshape_line *pl = &past[i];
		struct rv_similar_match *m;
		size_t bi = SIZE_MAX, t;

		if (pl->ntok < SIM_SHAPE_LINE_MIN_TOK ||
		    (role == 1 && origin[i] == '+'))
			continue;
		/* In order after the last match, else anywhere unused. */
		for (j = next; j < ps->nlines && bi == SIZE_MAX; j++)
			if (!used[j] && ps->lines[j].sig == pl->sig &&
			    ps->lines[j].ntok == pl->ntok)
				bi = j;
		for (j = 0; j < next && bi == SIZE_MAX; j++)
			if (!used[j] && ps->lines[j].sig == pl->sig &&
			    ps->lines[j].ntok == pl->ntok)
				bi = j;
		if (bi == SIZE_MAX)
			continue;
		used[bi] = true;
		next = bi + 1;
		for (t = 0; t < pl->ntok; t++) {
			const struct hist_stok *a =
				&ps->s.v[ps->lines[bi].first + t];
			const struct hist_stok *b = &s.v[pl->first + t];

			if (a->ident && b->ident)
				npair_add(names, &nnames, ARRAY_SIZE(names), a,
					  b);
		}
		/* The lexical pass may have matched this line already. */
		for (j = 0; j < c->nm; j++)
			if (c->m[j].new_no == ps->lines[bi].new_no &&
			    c->m[j].file &&
			    !strcmp(c->m[j].file, ps->lines[bi].file))
				break;
		if (j < c->nm)
			continue;
		c->m = xrealloc(c->m, (c->nm + 1) * sizeof(*c->m));
		m = &c->m[c->nm++];
		memset(m, 0, sizeof(*m));
		m->file = xstrdup_or_null(ps->lines[bi].file);
		m->new_no = ps->lines[bi].new_no;
		hist_normalize(ps->text.buf + ps->lines[bi].off,
			       ps->lines[bi].len, &norm);
		m->patch_line = xstrdup_or_null(sb_str(&norm));
		hist_normalize(text.buf + pl->off, pl->len, &norm);
		m->past_line = xstrdup_or_null(sb_str(&norm));
		/*
		 * A line the fix removed only to add it back with other
		 * names or literals (a message, a constant) keeps its shape:
		 * the shape of that line is not what the fix changed.
		 */
		m->fix_removed = role == 1 && origin[i] == '-' &&
				 !shape_kept(past, origin, npast, pl);
		m->fix_site = site && site[i];
		m->similarity = 1.0;
		/* The same line verbatim is no renaming. */
		m->by_shape = strcmp(m->patch_line, m->past_line) != 0;
		lo = bi < lo ? bi : lo;
		hi = bi + 1 > hi ? bi + 1 : hi;
	}
	if (role == 1 && hi > lo)
		c->has_fix = c->has_fix ||
			     patch_has_fix(ps, past, origin, npast, lo, hi);
	free(c->renaming);
	c->renaming = format_renaming(names, nnames);
	/* Names that map one onto the other line after line: a real clone. */
	c->shape *= 0.4 + 0.6 * renaming_consistency(names, nnames);
out:
	free(used);
	free(site);
	free(past);
	free(origin);
	hist_shape_release(&s);
	sb_release(&text);
	sb_release(&norm);
}

/*
 * The shape candidates, read and explained, joined to the lexical ones
 * (cands has room for SIM_SHAPE_CANDIDATES more). Their shape score:
 * how much of the past hunk's shape the patch holds, times how much rare
 * evidence that is.
 */
static size_t add_shape_cands(struct rv_history *h, const struct plines *pl,
			      const struct pshape *ps, struct cand *cands,
			      size_t ncands, struct errmsg *err, int *ret)
{
	struct shit *hits = NULL;
	sqlite3_stmt *st = NULL;
	int64_t nh = count_hunks(h); /* ids from 1: an upper bound, cheap */
	size_t nhits, i, j, n0 = ncands, took = 0;

	nhits = shape_lookup(h, ps, nh, &hits, err, ret);
	if (*ret || !nhits)
		goto out;
	if (sqlite3_prepare_v2(h->db,
			       "SELECT h.pair_id, h.role, h.file, h.func,"
			       " h.lines, h.nshape FROM hunks h"
			       " JOIN pairs p ON p.id = h.pair_id"
			       " WHERE h.id = ? AND p.fix_seq < ?",
			       -1, &st, NULL) != SQLITE_OK) {
		*ret = errmsg_set(err, RV_ERR_INTERNAL,
				  "history index: cannot read a hunk: %s",
				  sqlite3_errmsg(h->db));
		goto out;
	}
	for (i = 0; i < nhits && took < SIM_SHAPE_CANDIDATES; i++) {
		double cov, strength, shape;
		int64_t nshape;
		struct cand *c;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, hits[i].hunk);
		sqlite3_bind_int64(st, 2, h->horizon);
		if (sqlite3_step(st) != SQLITE_ROW ||
		    !sqlite3_column_text(st, 2) || !sqlite3_column_text(st, 4))
			continue;
		took++;
		nshape = sqlite3_column_int64(st, 5);
		cov = nshape > 0 ? (double)hits[i].hits / (double)nshape : 0;
		strength =
			hits[i].w / (SIM_SHAPE_FULL_IDF * log((double)nh + 1));
		shape = fmin(1.0, cov) * fmin(1.0, strength);
		for (j = 0; j < n0; j++)
			if (cands[j].hunk == hits[i].hunk)
				break;
		if (j < n0) {
			c = &cands[j];
		} else {
			c = &cands[ncands++];
			c->pair = sqlite3_column_int64(st, 0);
			c->hunk = hits[i].hunk;
			score_hunk(pl, sqlite3_column_int(st, 1),
				   (const char *)sqlite3_column_text(st, 4),
				   (const char *)sqlite3_column_text(st, 2),
				   (const char *)sqlite3_column_text(st, 3), 0,
				   c);
		}
		c->shape = shape;
		/* A faint resemblance is no reason to show lines. */
		if (shape >= SIM_SHAPE_EXPLAIN_MIN)
			shape_explain(ps, &h->api, sqlite3_column_int(st, 1),
				      (const char *)sqlite3_column_text(st, 4),
				      c);
	}
out:
	sqlite3_finalize(st);
	free(hits);
	return ncands;
}

/*
 * One score from both: the stronger of the two, plus a little of the
 * other. A shape match counts only as far as lines matched: evidence a
 * maintainer can see.
 */
static void combine_scores(struct cand *c)
{
	double shape = 0;
	size_t i, nshape = 0;

	c->lex = c->score;
	for (i = 0; i < c->nm; i++)
		nshape += c->m[i].by_shape;
	if (c->shape > 0 && c->nm) {
		shape = 0.7 * c->shape * fmin(1.0, (double)c->nm / 3.0) +
			0.15 * (c->same_file ? 1 : 0) +
			0.15 * (c->same_function ? 1 : 0);
		if (!nshape && c->lex >= shape)
			shape = 0;
	}
	c->shape = shape;
	c->score = fmin(1.0, fmax(c->lex, shape) + 0.1 * fmin(c->lex, shape));
}

/* The lexical candidates: BM25 over the names the patch adds. */
static size_t lexical_cands(struct rv_history *h, const struct plines *pl,
			    const char *query, struct cand *cands,
			    struct errmsg *err, int *ret)
{
	sqlite3_stmt *st = NULL;
	double best_rank = 0;
	size_t n = 0;

	*ret = 0;
	if (!*query)
		return 0;
	if (sqlite3_prepare_v2(
		    h->db,
		    "SELECT h.pair_id, h.role, h.file, h.func, h.lines, f.rank,"
		    " h.id FROM hunks_fts f JOIN hunks h ON h.id = f.rowid"
		    " JOIN pairs p ON p.id = h.pair_id"
		    " WHERE hunks_fts MATCH ?1 AND p.fix_seq < ?2"
		    " ORDER BY f.rank LIMIT ?3",
		    -1, &st, NULL) != SQLITE_OK) {
		*ret = errmsg_set(err, RV_ERR_INTERNAL,
				  "history index: cannot search: %s",
				  sqlite3_errmsg(h->db));
		return 0;
	}
	sqlite3_bind_text(st, 1, query, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->horizon);
	sqlite3_bind_int(st, 3, SIM_CANDIDATES);
	while (sqlite3_step(st) == SQLITE_ROW && n < SIM_CANDIDATES) {
		double rank = sqlite3_column_double(st, 5);
		const char *lines = (const char *)sqlite3_column_text(st, 4);
		const char *file = (const char *)sqlite3_column_text(st, 2);

		if (!n)
			best_rank = rank;
		if (!lines || !file)
			continue;
		cands[n].pair = sqlite3_column_int64(st, 0);
		cands[n].hunk = sqlite3_column_int64(st, 6);
		score_hunk(pl, sqlite3_column_int(st, 1), lines, file,
			   (const char *)sqlite3_column_text(st, 3),
			   best_rank < 0 ? rank / best_rank : 0, &cands[n]);
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

/* One result per pair, best first: its best hunk, plus what others add. */
static void group_by_pair(struct rv_history *h, struct cand *cands,
			  size_t ncands, size_t k, struct rv_similar_list *out)
{
	int64_t *pairs = xcalloc(k, sizeof(*pairs));
	size_t i, j;

	qsort(cands, ncands, sizeof(*cands), cmp_cand);
	out->items = xcalloc(k, sizeof(*out->items));
	for (i = 0; i < ncands; i++) {
		if (!cands[i].nm)
			continue;
		for (j = 0; j < out->n; j++)
			if (pairs[j] == cands[i].pair)
				break;
		if (j < out->n) {
			merge_cand(&out->items[j], &cands[i]);
			continue;
		}
		if (out->n < k &&
		    fill_pair(h, &cands[i], &out->items[out->n]) == 0)
			pairs[out->n++] = cands[i].pair;
	}
	for (i = 0; i < out->n; i++) {
		/* The buggy line itself matched: the strongest evidence. */
		for (j = 0; j < out->items[i].nmatches; j++)
			if (out->items[i].matches[j].fix_removed)
				break;
		if (j < out->items[i].nmatches)
			out->items[i].score =
				fmin(1.0, out->items[i].score + 0.1);
	}
	if (out->n > 1)
		qsort(out->items, out->n, sizeof(*out->items), cmp_similar);
	free(pairs);
}

int hist_similar(struct rv_history *h, const struct rv_diff *d, size_t k,
		 struct rv_similar_list *out, struct errmsg *err)
{
	struct plines pl = {0};
	struct pshape ps = {0};
	struct sb tokens = SB_INIT, q = SB_INIT;
	struct cand *cands = NULL;
	size_t ncands = 0, i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!h || !d || !k)
		return 0;
	collect_plines(d, &pl, &tokens);
	build_query(sb_str(&tokens), &q);
	cands = xcalloc(SIM_CANDIDATES + SIM_EMBED_TOP + SIM_SHAPE_CANDIDATES,
			sizeof(*cands));
	ncands = lexical_cands(h, &pl, sb_str(&q), cands, err, &ret);
	if (ret)
		goto out;
	if (h->embed_url && pl.n)
		ncands = add_embedded(h, &pl, cands, ncands);
	if (!h->lexical_only) {
		collect_pshape(d, &h->api, &ps);
		ncands = add_shape_cands(h, &pl, &ps, cands, ncands, err, &ret);
		if (ret)
			goto out;
	}
	for (i = 0; i < ncands; i++)
		combine_scores(&cands[i]);
	group_by_pair(h, cands, ncands, k, out);
out:
	for (i = 0; i < ncands; i++)
		cand_release(&cands[i]);
	free(cands);
	plines_release(&pl);
	pshape_release(&ps);
	sb_release(&tokens);
	sb_release(&q);
	return ret;
}

int rv_history_similar(struct rv_history *h, const struct rv_diff *d, size_t k,
		       struct rv_similar_list *out, struct errmsg *err)
{
	return hist_similar(h, d, k, out, err);
}

void rv_similar_list_release(struct rv_similar_list *l)
{
	size_t i, j;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		struct rv_similar *s = &l->items[i];

		free(s->bug_subject);
		free(s->fix_subject);
		free(s->fix_explanation);
		free(s->file);
		free(s->function);
		free(s->renaming);
		for (j = 0; j < s->nmatches; j++) {
			free(s->matches[j].file);
			free(s->matches[j].patch_line);
			free(s->matches[j].past_line);
		}
		free(s->matches);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* ---- risk of a new patch ------------------------------------------- */

static int64_t path_stat(sqlite3 *db, const char *path, int64_t *fixes,
			 int64_t *last)
{
	sqlite3_stmt *st = NULL;
	int64_t commits = 0;

	*fixes = *last = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT commits, fixes, last_time FROM paths"
			       " WHERE path = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		commits = sqlite3_column_int64(st, 0);
		*fixes = sqlite3_column_int64(st, 1);
		*last = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return commits;
}

/* The subject (first line) of a commit message, into buf. */
static void first_line(const char *msg, char *buf, size_t len)
{
	const char *nl = msg ? strchr(msg, '\n') : NULL;

	snprintf(buf, len, "%.*s",
		 (int)(msg ? (nl ? (size_t)(nl - msg) : strlen(msg)) : 0),
		 msg ? msg : "");
}

static bool message_names_fix(const char *msg)
{
	const char *p, *nl;

	for (p = msg; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncasecmp(p, "Fixes:", 6) ||
		    !strncmp(p, "This reverts commit ", 20))
			return true;
	}
	return false;
}

void hist_patch_facts(struct rv_history *h, const struct rv_diff *d,
		      const char *message, const char *author_email,
		      struct hist_facts *f)
{
	char dir[128], **dirs = NULL, subject[256], name[48];
	size_t ndirs = 0, i, j, k, aged = 0, nfiles = 0;
	int64_t now = (int64_t)time(NULL);
	sqlite3_stmt *st = NULL;
	double agesum = 0;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *file = &d->files[i];
		const char *path =
			file->new_path ? file->new_path : file->old_path;
		double plus = 0, minus = 0, delta;
		int64_t fixes, last;

		if (!path)
			continue;
		nfiles++;
		/* The size change, as the index measures it on blobs. */
		for (j = 0; j < file->nhunks; j++)
			for (k = 0; k < file->hunks[j].nlines; k++) {
				const struct rv_line *l =
					&file->hunks[j].lines[k];
				double n = l->text ? (double)strlen(l->text) + 1
						   : 1;

				if (l->origin == '+')
					plus += n;
				else if (l->origin == '-')
					minus += n;
			}
		delta = fabs(plus - minus) + 1;
		switch (hist_file_kind(path)) {
		case 0:
			f->src += delta;
			break;
		case 1:
			f->hdr += delta;
			break;
		default:
			f->other += delta;
			break;
		}
		hist_top_dir(path, dir, sizeof(dir));
		for (j = 0; j < ndirs; j++)
			if (!strcmp(dirs[j], dir))
				break;
		if (j == ndirs) {
			dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
			dirs[ndirs++] = xstrdup_or_null(dir);
		}
		if (path_stat(h->db, path, &fixes, &last) > 0 &&
		    file->status != RV_FILE_ADDED) {
			agesum +=
				(double)(now > last ? now - last : 0) / 86400.0;
			aged++;
		}
		f->fixhist += (double)fixes;
	}
	f->files = (double)nfiles;
	f->dirs = (double)ndirs;
	f->age_days = aged ? agesum / (double)aged : 0;
	first_line(message, subject, sizeof(subject));
	f->kw = hist_subject_adds(subject);
	f->isfix = message_names_fix(message) || hist_subject_fixes(subject);
	hist_subsystem(subject, name, sizeof(name));
	f->subsys = hist_subsys_rate(0, 0);
	if (sqlite3_prepare_v2(h->db,
			       "SELECT commits, bugs FROM subsystems "
			       "WHERE name = ?",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			f->subsys =
				hist_subsys_rate(sqlite3_column_int64(st, 0),
						 sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (author_email &&
	    sqlite3_prepare_v2(h->db,
			       "SELECT commits FROM authors WHERE "
			       "email = ?",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, author_email, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			f->author = sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
}
