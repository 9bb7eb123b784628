// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * voter-history.c - the offline voters that read the history index:
 * `history` (added code that resembles a past bug) and `risk` (a patch
 * that looks like the ones that needed fixes later).
 *
 * Both are conservative: a finding that is wrong teaches maintainers to
 * ignore the bot, so each speaks only on strong evidence, and both
 * abstain (no findings, no error) when there is no index.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classify-int.h"
#include "history-int.h"
#include "history-parse.h"

/* How many findings one voter may raise on one patch. */
#define HIST_MAX_FINDINGS 3
/* Past pairs the history voter weighs: the lexical and the shape ones. */
#define HIST_VOTER_TOP 20

/* Normalized hashes of the lines the patch removes (moved code is not new). */
static void removed_lines(const struct rv_diff *d, uint64_t **v, size_t *n)
{
	struct sb norm = SB_INIT;
	size_t i, j, k, alloc = 0;

	*v = NULL;
	*n = 0;
	for (i = 0; i < d->nfiles; i++)
		for (j = 0; j < d->files[i].nhunks; j++) {
			const struct rv_hunk *h = &d->files[i].hunks[j];

			for (k = 0; k < h->nlines; k++) {
				if (h->lines[k].origin != '-' ||
				    !h->lines[k].text)
					continue;
				hist_normalize(h->lines[k].text,
					       strlen(h->lines[k].text), &norm);
				ALLOC_GROW(*v, *n + 1, alloc);
				(*v)[(*n)++] = hist_hash(
					norm.buf ? norm.buf : "", norm.len);
			}
		}
	sb_release(&norm);
}

static bool in_set(const uint64_t *v, size_t n, const char *s)
{
	uint64_t h = hist_hash(s, strlen(s));
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == h)
			return true;
	return false;
}

/*
 * Words of control flow (C, Python): every other line has them, so they
 * tell one line from another no more than punctuation. A declaration's
 * type (`char *s = malloc(len);`) says what the line is about.
 */
static bool keyword(const char *w, size_t n)
{
	static const char *const kw[] = {
		"and",	  "break",  "case",   "continue", "def",   "elif",
		"else",	  "except", "for",    "goto",	  "if",	   "import",
		"in",	  "is",	    "not",    "or",	  "pass",  "raise",
		"return", "self",   "switch", "try",	  "while", "with",
		"None",	  "True",   "False",  "NULL",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kw); i++)
		if (strlen(kw[i]) == n && !strncmp(kw[i], w, n))
			return true;
	return false;
}

/*
 * A buggy line distinctive enough to stand as evidence on its own: long,
 * or three names that are not keywords ("for dev in lst:" is not).
 */
static bool distinctive(const char *line)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t idents = 0;

	while (*p) {
		if (isalpha(*p) || *p == '_') {
			const unsigned char *w = p;

			while (isalnum(*p) || *p == '_')
				p++;
			idents += p - w >= 3 &&
				  !keyword((const char *)w, (size_t)(p - w));
		} else {
			p++;
		}
	}
	return strlen(line) >= 24 || idents >= 3;
}

/* A line that starts a function's definition ("int f(int x)", col 0). */
static bool starts_function(const char *t)
{
	size_t n = t ? strlen(t) : 0;
	const char *paren;

	while (n && isspace((unsigned char)t[n - 1]))
		n--;
	if (!n || !(isalpha((unsigned char)t[0]) || t[0] == '_') ||
	    t[n - 1] == ';' || t[n - 1] == ',')
		return false;
	paren = memchr(t, '(', n);
	return paren && !memchr(t, '=', (size_t)(paren - t));
}

/*
 * Is the patch's line of m in function func? Its hunk's section names
 * the function at the hunk's start; a definition within the hunk, before
 * the line, starts another.
 */
static bool match_in_function(const struct rv_diff *d,
			      const struct rv_similar_match *m,
			      const char *func)
{
	size_t i, j, k;

	if (!hist_path_has_functions(m->file))
		return false;
	for (i = 0; func && m->file && i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		if (!f->new_path || strcmp(f->new_path, m->file))
			continue;
		for (j = 0; j < f->nhunks; j++) {
			const struct rv_hunk *hk = &f->hunks[j];
			char *cur;
			bool in;

			if (m->new_no < hk->new_start ||
			    m->new_no > hk->new_start + hk->new_lines)
				continue;
			cur = hist_function_name(hk->section);
			for (k = 0; k < hk->nlines; k++) {
				const struct rv_line *l = &hk->lines[k];

				if (l->origin == '-')
					continue;
				if (l->new_no > m->new_no)
					break;
				if (starts_function(l->text)) {
					free(cur);
					cur = hist_function_name(l->text);
				}
			}
			in = cur && !strcmp(cur, func);
			free(cur);
			return in;
		}
	}
	return false;
}

static bool near_line(const struct rv_similar_match *a,
		      const struct rv_similar_match *b)
{
	return a->file && b->file && !strcmp(a->file, b->file) &&
	       abs(a->new_no - b->new_no) <= 20;
}

/*
 * Symbols (history-shape.c) of a line that can stand alone as evidence
 * in the function a fix changed: a short one ("ret = load(obj);") comes
 * back there by chance. Measured with quorum eval on iproute2 and
 * rdma-core: 8 to 12 give the same hits, fewer false ones above 8.
 */
#define HIST_LONG_LINE 10

static size_t shape_symbols(const struct rv_history *h, const char *line)
{
	struct hist_shape s = {0};
	size_t n;

	hist_shape_lex(line, strlen(line), &h->api, &s, 256);
	n = s.n;
	hist_shape_release(&s);
	return n;
}

/*
 * A line of one of the fix's stored hunks: how the fix treated it, the
 * line normalized, and whether it starts a function definition.
 */
struct fix_line {
	char origin;
	bool defn;
	char *norm;
};

struct fix_hunk {
	struct fix_line *v;
	size_t n, alloc;
};

/* Names, each once. */
struct names {
	char **v;
	size_t n, alloc;
};

/*
 * The code of a past pair that is not its bug: what the fix wrote, what
 * it kept around its change, and the copies of a line the bug commit
 * wrote more often than the fix changed it. Normalized lines. And the
 * fix's hunks as they are, to tell what it did next to a line.
 */
struct pair_code {
	char **v;
	size_t n, alloc;
	bool loaded;
	struct fix_hunk *hunks;
	size_t nhunks, hunks_alloc, nfix_lines;
};

/* Bound on what one pair may load (and its hunks: LIMIT 64 below). */
#define PAIR_MAX_LINES 4096

static void names_release(struct names *nm)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	memset(nm, 0, sizeof(*nm));
}

static void pair_code_release(struct pair_code *pc)
{
	size_t i, j;

	for (i = 0; i < pc->n; i++)
		free(pc->v[i]);
	free(pc->v);
	for (i = 0; i < pc->nhunks; i++) {
		for (j = 0; j < pc->hunks[i].n; j++)
			free(pc->hunks[i].v[j].norm);
		free(pc->hunks[i].v);
	}
	free(pc->hunks);
	memset(pc, 0, sizeof(*pc));
}

static void lines_add(struct pair_code *pc, const char *norm)
{
	if (pc->n >= PAIR_MAX_LINES)
		return;
	ALLOC_GROW(pc->v, pc->n + 1, pc->alloc);
	pc->v[pc->n++] = xstrdup_or_null(norm);
}

/* Remove one copy of norm from pc; false when it holds none. */
static bool lines_take(struct pair_code *pc, const char *norm)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (!strcmp(pc->v[i], norm)) {
			free(pc->v[i]);
			pc->v[i] = pc->v[--pc->n];
			return true;
		}
	return false;
}

static bool is_word(const char *w, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(w, word, n);
}

/* Add the names (two characters or more) of text[0..len) to nm. */
static void add_names(struct names *nm, const char *text, size_t len)
{
	static const char *const skip[] = {
		"NULL", "sizeof", "true",  "false", "unlikely", "likely",
		"None", "True",	  "False", "not",   "and",	"or",
		"is",	"in",	  "self",  "return"};
	const char *p = text, *end = text + len, *w;
	size_t k;

	while (p < end && nm->n < 64) {
		if (*p == '"' || *p == '\'') {
			char q = *p++;

			while (p < end && *p != q)
				p += *p == '\\' && p + 1 < end ? 2 : 1;
			p += p < end;
			continue;
		}
		if (!(isalpha((unsigned char)*p) || *p == '_')) {
			p++;
			continue;
		}
		for (w = p;
		     p < end && (isalnum((unsigned char)*p) || *p == '_'); p++)
			;
		for (k = 0; k < ARRAY_SIZE(skip); k++)
			if (is_word(w, (size_t)(p - w), skip[k]))
				break;
		if (k < ARRAY_SIZE(skip) || p - w < 2)
			continue;
		for (k = 0; k < nm->n; k++)
			if (is_word(w, (size_t)(p - w), nm->v[k]))
				break;
		if (k == nm->n) {
			ALLOC_GROW(nm->v, nm->n + 1, nm->alloc);
			nm->v[nm->n++] = xstrndup(w, (size_t)(p - w));
		}
	}
}

/*
 * The names a line's conditions test: an `if (...)` or Python `if ...:`,
 * a Python `A if COND else B`, a C `COND ? A : B` (from the assignment
 * or the parenthesis that holds it).
 */
static void tested_names(struct names *nm, const char *line)
{
	const char *p, *e, *q;
	int depth = 0;

	if (!strncmp(line, "if", 2) && (line[2] == ' ' || line[2] == '(')) {
		for (p = line + 2; *p; p++)
			if (*p == '(' || *p == '[')
				depth++;
			else if ((*p == ')' || *p == ']') && --depth <= 0 &&
				 *p == ')')
				break;
			else if (*p == ':' && !depth)
				break;
		add_names(nm, line + 2, (size_t)(p - line - 2));
		return;
	}
	if ((p = strstr(line, " if ")) && (e = strstr(p + 4, " else ")))
		add_names(nm, p + 4, (size_t)(e - p - 4));
	if ((q = strchr(line, '?')) && !strchr(q, '"')) {
		for (p = q; p > line && p[-1] != '(' && p[-1] != ',' &&
			    !(p[-1] == '=' && p - 1 > line &&
			      !strchr("=!<>", p[-2]) && p[0] != '=');
		     p--)
			;
		add_names(nm, p, (size_t)(q - p));
	}
}

/* Does text hold word as a whole word? */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = text; (p = strstr(p, word)); p += n)
		if ((p == text ||
		     !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
		    !(isalnum((unsigned char)p[n]) || p[n] == '_'))
			return true;
	return false;
}

/* File a normalized line of a stored hunk by what it is to the bug. */
static void pair_line(struct pair_code *pc, struct pair_code *removed,
		      struct pair_code *added, int role, char origin,
		      const char *raw, size_t rawlen, const char *norm)
{
	struct fix_hunk *fh;
	char *line;

	if (role != 1) {
		if (origin == '+')
			lines_add(added, norm);
		return;
	}
	if (origin == '-')
		lines_add(removed, norm);
	else
		lines_add(pc, norm);
	if (!pc->nhunks || pc->nfix_lines >= PAIR_MAX_LINES)
		return;
	fh = &pc->hunks[pc->nhunks - 1];
	ALLOC_GROW(fh->v, fh->n + 1, fh->alloc);
	fh->v[fh->n].origin = origin;
	fh->v[fh->n].norm = xstrdup_or_null(norm);
	/* C at column 0, or a Python def at any depth. */
	line = xstrndup(raw, rawlen);
	fh->v[fh->n].defn = starts_function(line) || !strncmp(norm, "def ", 4);
	free(line);
	fh->n++;
	pc->nfix_lines++;
}

/*
 * Load, once per pair, its stored hunks: the fix's (role 1) kept and
 * added lines are clean; the bug's (role 0) added lines are clean once
 * the copies the fix removed are taken out.
 */
static void pair_code_load(const struct rv_history *h,
			   const struct rv_similar *s, struct pair_code *pc)
{
	struct pair_code removed = {0}, added = {0};
	struct sb norm = SB_INIT;
	sqlite3_stmt *st = NULL;
	size_t i;

	if (pc->loaded)
		return;
	pc->loaded = true;
	if (sqlite3_prepare_v2(h->db,
			       "SELECT h.role, h.lines FROM hunks h"
			       " JOIN pairs p ON p.id = h.pair_id"
			       " WHERE p.fix_oid = ?1 AND p.bug_oid = ?2"
			       " LIMIT 64",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, s->fix_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, s->bug_id, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int role = sqlite3_column_int(st, 0);
		const char *p = (const char *)sqlite3_column_text(st, 1);

		if (role == 1) {
			ALLOC_GROW(pc->hunks, pc->nhunks + 1, pc->hunks_alloc);
			memset(&pc->hunks[pc->nhunks++], 0, sizeof(*pc->hunks));
		}
		while (p && *p) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);

			if (len > 1) {
				hist_normalize(p + 1, len - 1, &norm);
				if (norm.len)
					pair_line(pc, &removed, &added, role,
						  *p, p + 1, len - 1,
						  sb_str(&norm));
			}
			p = nl ? nl + 1 : NULL;
		}
	}
	sqlite3_finalize(st);
	for (i = 0; i < added.n; i++)
		if (!lines_take(&removed, added.v[i]))
			lines_add(pc, added.v[i]);
	pair_code_release(&removed);
	pair_code_release(&added);
	sb_release(&norm);
}

/* Where in fh the fix has line as origin ('-' removed, ' ' kept); or -1. */
static long hunk_find(const struct fix_hunk *fh, char origin, const char *line)
{
	size_t i;

	for (i = 0; i < fh->n; i++)
		if (fh->v[i].origin == origin && !strcmp(fh->v[i].norm, line))
			return (long)i;
	return -1;
}

/*
 * Did the fix add, next to the kept line at, code of the function it is
 * in (a check, a call), and not only a function of its own? A new
 * function written before the next one's definition adds nothing that
 * line was missing.
 */
static bool site_in_function(const struct fix_hunk *fh, size_t at)
{
	size_t i, lo = at > 2 ? at - 2 : 0, a, b;

	for (i = lo; i < fh->n && i <= at + 2; i++) {
		bool defn = false;

		if (fh->v[i].origin != '+')
			continue;
		/* Its run of added lines: a definition in it makes it one. */
		for (a = i; a > 0 && fh->v[a - 1].origin == '+'; a--)
			;
		for (b = i; b < fh->n && fh->v[b].origin == '+'; b++)
			defn = defn || fh->v[b].defn;
		for (; a < i; a++)
			defn = defn || fh->v[a].defn;
		if (!defn)
			return true;
	}
	return false;
}

/*
 * The line the fix wrote in place of a line it removed: its most similar
 * added line of the hunk, sharing half its names; or NULL (the fix
 * removed the line outright).
 */
static const char *fix_replacement(const struct fix_hunk *fh, const char *line)
{
	const char *best = NULL;
	double bsim = 0.5, sim;
	size_t j;

	for (j = 0; j < fh->n; j++) {
		if (fh->v[j].origin != '+')
			continue;
		sim = hist_line_similarity(line, fh->v[j].norm);
		if (sim >= bsim && (!best || sim > bsim)) {
			best = fh->v[j].norm;
			bsim = sim;
		}
	}
	return best;
}

/* Does line assign name (`name = ...`, `int name = ...`)? */
static bool assigns(const char *line, const char *name)
{
	const char *eq, *w, *e;

	for (eq = line; (eq = strchr(eq, '=')); eq++)
		if (eq[1] != '=' &&
		    (eq == line || !strchr("=!<>+-*/%&|^", eq[-1])))
			break;
	if (!eq)
		return false;
	for (e = eq; e > line && isspace((unsigned char)e[-1]); e--)
		;
	for (w = e; w > line && (isalnum((unsigned char)w[-1]) || w[-1] == '_');
	     w--)
		;
	return (size_t)(e - w) == strlen(name) &&
	       !strncmp(w, name, (size_t)(e - w));
}

/*
 * The conditions a line the fix changed came to depend on: of the names
 * the fix wrote into it (`+ offset`), those it computes under a condition
 * in the hunk (`offset = GRH_SIZE if qp_type == e.IBV_QPT_UD else 0`).
 */
static void replacement_tested(const struct fix_hunk *fh, const char *line,
			       struct names *tested)
{
	const char *fixed = fix_replacement(fh, line);
	struct names added = {0};
	size_t i, j;

	if (!fixed)
		return;
	add_names(&added, fixed, strlen(fixed));
	for (i = 0; i < added.n; i++) {
		if (has_word(line, added.v[i]))
			continue;
		for (j = 0; j < fh->n; j++)
			if (fh->v[j].origin == '+' &&
			    assigns(fh->v[j].norm, added.v[i]))
				tested_names(tested, fh->v[j].norm);
	}
	names_release(&added);
}

/*
 * A fix that added a check next to a line, or made the line it changed
 * depend on one, tested something there: the names in the conditions it
 * wrote in that hunk that the line itself does not hold (`if
 * (!rd->port_idx)` before `return rd_exec_cmd(rd, cmds, "parameter");`
 * tests port_idx; `offset = GRH_SIZE if qp_type == e.IBV_QPT_UD else 0`
 * for the buffer it writes tests qp_type). The same line elsewhere misses
 * that check only when the patch's code around it uses one of them; a
 * dispatcher like every other does not, nor a buffer of a QP of another
 * type. A NULL check of the line's own result (`if (!buf)` after `buf =
 * malloc(n);`) names nothing new and asks nothing more. Next to a line
 * the fix kept, what it added must belong to the line's function.
 */
static bool check_applies(const struct rv_history *h,
			  const struct rv_similar *s, const struct rv_diff *d,
			  const struct rv_similar_match *m,
			  struct pair_code *pc)
{
	struct names tested = {0};
	char origin = m->fix_removed ? '-' : ' ';
	size_t i, j, k, others = 0, found = 0, sites = 0;
	bool ret = false;

	pair_code_load(h, s, pc);
	for (i = 0; i < pc->nhunks; i++) {
		const struct fix_hunk *fh = &pc->hunks[i];
		long at = hunk_find(fh, origin, m->past_line);

		if (at < 0)
			continue;
		found++;
		if (m->fix_removed) {
			replacement_tested(fh, m->past_line, &tested);
			continue;
		}
		if (site_in_function(fh, (size_t)at))
			sites++;
		for (j = 0; j < fh->n; j++)
			if (fh->v[j].origin == '+')
				tested_names(&tested, fh->v[j].norm);
	}
	/* The line not found (more hunks than were stored): as before. */
	for (i = 0; !found && !m->fix_removed && i < pc->nhunks; i++)
		for (j = 0; j < pc->hunks[i].n; j++)
			if (pc->hunks[i].v[j].origin == '+')
				tested_names(&tested, pc->hunks[i].v[j].norm);
	if (found && !m->fix_removed && !sites)
		goto out;
	for (i = 0; i < tested.n && !ret; i++) {
		if (has_word(m->past_line, tested.v[i]))
			continue;
		others++;
		for (j = 0; j < d->nfiles && !ret; j++) {
			const struct rv_file *f = &d->files[j];

			if (!f->new_path || !m->file ||
			    strcmp(f->new_path, m->file))
				continue;
			for (k = 0; k < f->nhunks && !ret; k++) {
				const struct rv_hunk *hk = &f->hunks[k];
				size_t l;

				for (l = 0; l < hk->nlines && !ret; l++)
					ret = hk->lines[l].origin != '-' &&
					      abs(hk->lines[l].new_no -
						  m->new_no) <= 20 &&
					      hk->lines[l].text &&
					      has_word(hk->lines[l].text,
						       tested.v[i]);
			}
		}
	}
	ret = ret || !others;
out:
	names_release(&tested);
	return ret;
}

/* Are two tokens the same text? */
static bool tok_eq(const struct hist_stok *a, const struct hist_stok *b)
{
	return a->len == b->len && !memcmp(a->s, b->s, a->len);
}

/* The longest common subsequence of a and b: for each of a, its b or -1. */
static void tok_align(const struct hist_shape *a, const struct hist_shape *b,
		      long *to)
{
	size_t n = a->n, m = b->n, i, j;
	unsigned short *L = xcalloc((n + 1) * (m + 1), sizeof(*L));

	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			L[i * (m + 1) + j] =
				tok_eq(&a->v[i], &b->v[j])
					? L[(i + 1) * (m + 1) + j + 1] + 1
				: L[(i + 1) * (m + 1) + j] >
						L[i * (m + 1) + j + 1]
					? L[(i + 1) * (m + 1) + j]
					: L[i * (m + 1) + j + 1];
	for (i = 0; i < n; i++)
		to[i] = -1;
	for (i = 0, j = 0; i < n && j < m;)
		if (tok_eq(&a->v[i], &b->v[j])) {
			to[i++] = (long)j++;
		} else if (L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1]) {
			i++;
		} else {
			j++;
		}
	free(L);
}

/*
 * A name in capitals (RDMA_NLDEV_ATTR_MAX, ETH_ALEN) is a constant: its
 * value is its definition's, not the code's around it.
 */
static bool constant(const struct hist_stok *t)
{
	uint32_t i, upper = 0;

	for (i = 0; i < t->len; i++) {
		if (islower((unsigned char)t->s[i]))
			return false;
		upper += isupper((unsigned char)t->s[i]) != 0;
	}
	return upper >= 2;
}

/*
 * Does the patch line q hold the past line's tokens p[lo..hi) as they
 * are, between p[lo - 1] and p[hi] (or the line's ends) of the same
 * shape? Where the fix only inserted (exact_sides), a constant beside
 * the insertion must be the same one: `- 1` after RDMA_NLDEV_ATTR_MAX
 * corrects that constant, not another; after a variable (`len + 1`) it
 * corrects the role the renaming maps (`n + 1`).
 */
static bool window_in(const struct hist_shape *p, long lo, long hi,
		      const struct hist_shape *q, bool exact_sides)
{
	long from = lo - 1, to = hi, n = to - from + 1, i, k;

	for (i = 0; i + n <= (long)q->n + 2; i++) {
		for (k = 0; k < n; k++) {
			long pi = from + k, qi = i - 1 + k;
			bool pin = pi >= 0 && pi < (long)p->n;
			bool qin = qi >= 0 && qi < (long)q->n;

			if (pin != qin)
				break;
			if (!pin)
				continue;
			if (pi >= lo && pi < hi) {
				if (!tok_eq(&p->v[pi], &q->v[qi]))
					break;
			} else if (!p->v[pi].ident || !q->v[qi].ident ||
				   (exact_sides && (constant(&p->v[pi]) ||
						    constant(&q->v[qi])))) {
				if (!tok_eq(&p->v[pi], &q->v[qi]))
					break;
			}
		}
		if (k == n)
			return true;
	}
	return false;
}

/*
 * Does the patch line repeat what the fix changed in the past line, given
 * the line the fix wrote in its place? Each edit (tokens deleted or
 * replaced, tokens inserted between two) has a site: the tokens it
 * deleted, between neighbours of the same shape; or, where it only
 * inserted, the two tokens it inserted between (the same constant). A
 * line that ends where the past line had `{};` (`struct sockstat stat =
 * {` of an initializer that goes on) or names another constant where the
 * fix adjusted one does not repeat it.
 */
static bool edit_repeated(const struct rv_history *h, const char *past,
			  const char *fixed, const char *patch)
{
	struct hist_shape p = {0}, r = {0}, q = {0};
	long *to = NULL, i, prev = -1, prevj = -1;
	bool ret = false;

	hist_shape_lex(past, strlen(past), &h->api, &p, 256);
	hist_shape_lex(fixed, strlen(fixed), &h->api, &r, 256);
	hist_shape_lex(patch, strlen(patch), &h->api, &q, 256);
	if (!p.n || !q.n) {
		ret = true; /* nothing to compare: do not judge */
		goto out;
	}
	to = xcalloc(p.n + 1, sizeof(*to));
	tok_align(&p, &r, to);
	for (i = 0; i <= (long)p.n && !ret; i++) {
		long j = i < (long)p.n ? to[i] : (long)r.n;

		if (i < (long)p.n && j < 0)
			continue;
		/*
		 * p[prev + 1 .. i) deleted, r[prevj + 1 .. j) inserted. No
		 * edit at all (a comment, blanks): the fix changed nothing
		 * the patch could repeat.
		 */
		if (i - prev > 1 || j - prevj > 1)
			ret = i - prev > 1
				      ? window_in(&p, prev + 1, i, &q, false)
				      : window_in(&p, i, i, &q, true);
		prev = i;
		prevj = j;
	}
out:
	free(to);
	hist_shape_release(&p);
	hist_shape_release(&r);
	hist_shape_release(&q);
	return ret;
}

/*
 * For a line the fix removed: does the patch line repeat what the fix
 * changed in it? The line the fix wrote in its place is its most similar
 * added line of the hunk (sharing half its names); none, and the whole
 * line was the bug.
 */
static bool fix_repeated(const struct rv_history *h, const struct rv_similar *s,
			 const struct rv_similar_match *m, struct pair_code *pc)
{
	size_t i, found = 0;

	pair_code_load(h, s, pc);
	for (i = 0; i < pc->nhunks; i++) {
		const struct fix_hunk *fh = &pc->hunks[i];
		const char *best;

		if (hunk_find(fh, '-', m->past_line) < 0)
			continue;
		found++;
		best = fix_replacement(fh, m->past_line);
		if (!best ||
		    edit_repeated(h, m->past_line, best, m->patch_line))
			return true;
	}
	return !found;
}

/* The shape of a line, its names abstracted ("$ = malloc ( $ ) ;"). */
static void shape_text(const struct rv_history *h, const char *line,
		       struct sb *out)
{
	struct hist_shape sh = {0};

	sb_reset(out);
	hist_shape_lex(line, strlen(line), &h->api, &sh, 256);
	hist_shape_text(&sh, out);
	hist_shape_release(&sh);
}

/* How well two normalized lines match: the same text beats the same names. */
static double line_match(const char *a, const char *b)
{
	return !strcmp(a, b) ? 2.0 : hist_line_similarity(a, b);
}

/*
 * Does the patch line match code of the pair that is not the bug (what
 * the fix wrote or kept, a copy of the line it left alone) at least as
 * well as the line the fix removed? Then the match cannot tell the bug
 * from correct code: the patch writes the fixed line (`==` where the bug
 * had `=`), or a line the tree repeats everywhere and the fix changed in
 * one place for a reason elsewhere ("fprintf(f, ...)" of a dump format).
 * A renamed match has other names: then a line of the same shape that
 * the fix left or wrote says so.
 */
static bool ambiguous(const struct rv_history *h, const struct rv_similar *s,
		      const struct rv_similar_match *m, struct pair_code *pc)
{
	double bug;
	size_t i;

	if (!m->fix_removed)
		return false; /* a missing check: the line itself was kept */
	pair_code_load(h, s, pc);
	if (m->by_shape) {
		struct sb past = SB_INIT, other = SB_INIT;
		bool same = false;

		shape_text(h, m->past_line, &past);
		for (i = 0; !same && past.len && i < pc->n; i++) {
			shape_text(h, pc->v[i], &other);
			same = !strcmp(sb_str(&past), sb_str(&other));
		}
		sb_release(&past);
		sb_release(&other);
		return same;
	}
	bug = line_match(m->patch_line, m->past_line);
	for (i = 0; i < pc->n; i++)
		if (line_match(m->patch_line, pc->v[i]) >= bug)
			return true;
	return false;
}

/*
 * Is this resemblance strong enough to speak? The patch must add, in a
 * source file the past hunk is in, a distinctive line that a fix (not a revert:
 * a revert removes a whole feature, boilerplate and all) had to remove,
 * nearly verbatim and not merely moved by the patch; and either a second
 * matching line near it or a long line, itself in the function the fix
 * changed (not merely in a patch that also touches that function).
 */
static bool strong(const struct rv_history *h, const struct rv_diff *d,
		   const struct rv_similar *s, const uint64_t *rm, size_t nrm,
		   struct pair_code *pc, size_t *first)
{
	size_t i, j;

	/* Source code only: headers synced from elsewhere, man pages and
	 * data repeat what a fix changed without repeating its bug. */
	if (!s->same_file || strcmp(s->kind, "fixes") ||
	    hist_file_kind(s->file) != 0)
		return false;
	for (i = 0; i < s->nmatches; i++) {
		const struct rv_similar_match *m = &s->matches[i];
		size_t close = 0;

		/* Shape matches have their own, stricter test. */
		if (!m->fix_removed || m->by_shape || m->similarity < 0.85 ||
		    !m->file || strcmp(m->file, s->file) ||
		    !distinctive(m->past_line) ||
		    in_set(rm, nrm, m->patch_line) || ambiguous(h, s, m, pc) ||
		    !fix_repeated(h, s, m, pc) ||
		    !check_applies(h, s, d, m, pc))
			continue;
		for (j = 0; j < s->nmatches; j++)
			if (j != i && !s->matches[j].by_shape &&
			    s->matches[j].similarity >= 0.85 &&
			    near_line(&s->matches[j], m) &&
			    !in_set(rm, nrm, s->matches[j].patch_line))
				close++;
		if (close >= 1 ||
		    (m->similarity >= 0.999 &&
		     match_in_function(d, m,
				       s->same_function ? s->function : NULL) &&
		     shape_symbols(h, m->past_line) >= HIST_LONG_LINE)) {
			*first = i;
			return true;
		}
	}
	return false;
}

/* The share of the shape score a renamed recurrence must reach. */
#define HIST_SHAPE_STRONG 0.35
/*
 * A recurrence by shape: the patch repeats, maybe with other names, code
 * that a fix (not a revert) of source code had to change. The line the
 * fix removed (and whose shape the fix changed) must be among the lines
 * matched, distinctive and not merely moved by the patch. Then either,
 * in any file, two more matched lines near it and a shape that matches
 * well as a whole (common idioms, whose shingles the retrieval skips,
 * cannot reach that); or, in the very function the fix changed, that one
 * line when it is long: the bug's own shape came back where it was.
 */
static bool strong_shape(const struct rv_history *h, const struct rv_diff *d,
			 const struct rv_similar *s, const uint64_t *rm,
			 size_t nrm, struct pair_code *pc, size_t *first)
{
	size_t i, j;

	if (strcmp(s->kind, "fixes") || !s->file || s->has_fix ||
	    hist_file_kind(s->file) != 0)
		return false;
	for (i = 0; i < s->nmatches; i++) {
		const struct rv_similar_match *m = &s->matches[i];
		size_t close = 0;

		if (!(m->fix_removed || m->fix_site) || m->similarity < 0.999 ||
		    !m->file || !distinctive(m->past_line) ||
		    in_set(rm, nrm, m->patch_line) || ambiguous(h, s, m, pc) ||
		    (m->fix_removed && !fix_repeated(h, s, m, pc)) ||
		    !check_applies(h, s, d, m, pc))
			continue;
		for (j = 0; j < s->nmatches; j++)
			if (j != i && s->matches[j].similarity >= 0.999 &&
			    near_line(&s->matches[j], m) &&
			    !in_set(rm, nrm, s->matches[j].patch_line))
				close++;
		if ((close >= 2 && s->shape >= HIST_SHAPE_STRONG) ||
		    (m->by_shape && m->fix_removed &&
		     match_in_function(d, m,
				       s->same_function ? s->function : NULL) &&
		     shape_symbols(h, m->past_line) >= HIST_LONG_LINE)) {
			*first = i;
			return true;
		}
	}
	return false;
}

/*
 * Does the patch say it fixes (or reverts) the past bug or its fix? Then
 * it is a follow-up of that pair, not a recurrence.
 */
static bool names_pair(const struct hist_refs *refs, const struct rv_similar *s)
{
	size_t i, n;

	for (i = 0; i < refs->n; i++) {
		n = strlen(refs->v[i].id);
		if (n >= 7 && (!strncasecmp(refs->v[i].id, s->bug_id, n) ||
			       !strncasecmp(refs->v[i].id, s->fix_id, n)))
			return true;
	}
	return false;
}

/*
 * Did the past fix fix a bug, by its own subject? A Fixes: trailer also
 * sits on cleanups and refactors ("tipc: Drop unused variable 'genl'",
 * "flower: Refactor matching flags"): code like their "buggy" side
 * repeats nothing wrong. Only a subject that says cleanup and nothing of
 * a fix is set aside; one that says "add" may well add a missing check.
 */
static bool fixed_a_bug(const struct rv_similar *s)
{
	const char *subj = s->fix_subject;

	return !subj || cl_subject_fix(subj) || !cl_subject_clean(subj);
}

static int history_review(const struct rv_voter *v,
			  const struct rv_context *ctx, struct rv_findings *out,
			  struct errmsg *err)
{
	struct rv_similar_list l = {0};
	struct hist_refs refs = {0};
	const char *voters[1] = {v->name};
	uint64_t *rm = NULL;
	size_t nrm = 0, i, j, raised = 0;
	int ret;

	if (!ctx->history || !ctx->diff)
		return 0;
	ret = hist_similar(ctx->history, ctx->diff, HIST_VOTER_TOP, &l, err);
	if (ret < 0)
		return ret;
	removed_lines(ctx->diff, &rm, &nrm);
	if (ctx->patch && ctx->patch->commit_message)
		hist_parse_refs(ctx->patch->commit_message, "", &refs);
	for (i = 0; i < l.n && raised < HIST_MAX_FINDINGS; i++) {
		const struct rv_similar *s = &l.items[i];
		struct rv_finding f = {0};
		struct sb title = SB_INIT, expl = SB_INIT, quote = SB_INIT;
		size_t first = 0;
		bool renamed = false;

		struct pair_code pc = {0};
		bool speak;

		if (names_pair(&refs, s) || !fixed_a_bug(s))
			continue;
		speak = strong(ctx->history, ctx->diff, s, rm, nrm, &pc,
			       &first) ||
			(renamed = strong_shape(ctx->history, ctx->diff, s, rm,
						nrm, &pc, &first));
		pair_code_release(&pc);
		if (!speak)
			continue;
		f.patch = ctx->patch_index;
		f.file = s->matches[first].file;
		f.line_start = f.line_end = s->matches[first].new_no;
		for (j = 0; j < s->nmatches; j++) {
			const struct rv_similar_match *m = &s->matches[j];

			if (!m->file || strcmp(m->file, f.file) ||
			    abs(m->new_no - f.line_start) > 20)
				continue;
			if (m->new_no < f.line_start)
				f.line_start = m->new_no;
			if (m->new_no > f.line_end)
				f.line_end = m->new_no;
			sb_addf(&quote, "%s%s", quote.len ? "\n" : "",
				m->patch_line);
		}
		/* The past hunk's function is the patch's only when they match.
		 */
		f.function = s->same_function ? s->function : NULL;
		f.severity = RV_SEV_MEDIUM;
		f.category = (char *)"history";
		if (renamed && s->renaming)
			sb_addf(&title,
				"repeats, with other names, code that %.12s "
				"had to fix",
				s->fix_id);
		else
			sb_addf(&title, "resembles code that %.12s had to %s",
				s->fix_id,
				!strcmp(s->kind, "revert") ? "revert" : "fix");
		f.title = (char *)sb_str(&title);
		sb_addf(&expl,
			"This resembles %.12s (\"%s\"), whose bug was %s by "
			"%.12s (\"%s\")",
			s->bug_id, s->bug_subject ? s->bug_subject : "",
			!strcmp(s->kind, "revert") ? "reverted" : "fixed",
			s->fix_id, s->fix_subject ? s->fix_subject : "");
		if (s->fix_explanation && *s->fix_explanation)
			sb_addf(&expl, ": %s", s->fix_explanation);
		if (renamed)
			sb_addf(&expl, "\nThe same code%s, in %s%s%s%s%s%s.",
				s->renaming ? " with other names" : "", s->file,
				s->function ? ", " : "",
				s->function ? s->function : "",
				s->function ? "()" : "",
				s->renaming ? "; renaming " : "",
				s->renaming ? s->renaming : "");
		sb_addf(&expl,
			s->matches[first].fix_removed
				? "\nThe fix changed this line: %s"
				: "\nThe fix added a check next to this "
				  "line: %s",
			s->matches[first].past_line);
		f.explanation = (char *)sb_str(&expl);
		f.quote = (char *)sb_str(&quote);
		f.voters = (char **)voters;
		f.nvoters = 1;
		rv_findings_add(out, &f);
		raised++;
		sb_release(&title);
		sb_release(&expl);
		sb_release(&quote);
	}
	free(rm);
	hist_refs_release(&refs);
	rv_similar_list_release(&l);
	return 0;
}

const struct rv_voter rv_voter_history = {"history", 1.0, history_review, NULL};

/* A function the patch adds code to: where a risk finding may sit. */
struct anchor_fn {
	const char *file;
	char *func;
	int first;	/* its first added line of code */
	size_t added;	/* its added lines of code */
	size_t hazards; /* what they add that later fixes tend to change */
};

/* Bounds on the work one patch may cause (a hunk is scanned per line). */
#define ANCHOR_MAX_FUNCS 256
#define ANCHOR_MAX_HUNK_LINES 2000

/* An added line that says something: not blank, not a comment. */
static bool code_line(const char *t)
{
	while (t && isspace((unsigned char)*t))
		t++;
	return t && *t && *t != '*' &&
	       !(t[0] == '/' && (t[1] == '*' || t[1] == '/'));
}

static bool biggest_hunk(const struct rv_diff *d, const char **file, int *line)
{
	size_t i, j, k, best = 0;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		for (j = 0; f->new_path && j < f->nhunks; j++) {
			const struct rv_hunk *h = &f->hunks[j];
			size_t plus = 0;
			int first = 0;

			for (k = 0; k < h->nlines; k++)
				if (h->lines[k].origin == '+') {
					if (!plus)
						first = h->lines[k].new_no;
					plus++;
				}
			if (plus > best) {
				best = plus;
				*file = f->new_path;
				*line = first;
			}
		}
	}
	return best > 0;
}

/* Add added line k of hunk hk of file path to the function it is in. */
static void anchor_add(struct anchor_fn **v, size_t *n, size_t *alloc,
		       const char *path, const struct rv_hunk *hk, size_t k)
{
	const struct rv_line *l = &hk->lines[k];
	char *fn = hist_hunk_function(path, hk, k);
	size_t a;

	if (!fn)
		return;
	for (a = 0; a < *n; a++)
		if (!strcmp((*v)[a].func, fn) && !strcmp((*v)[a].file, path))
			break;
	if (a < *n) {
		free(fn);
	} else if (*n >= ANCHOR_MAX_FUNCS) {
		free(fn);
		return;
	} else {
		ALLOC_GROW(*v, *n + 1, *alloc);
		memset(&(*v)[a], 0, sizeof((*v)[a]));
		(*v)[a].file = path;
		(*v)[a].func = fn;
		(*v)[a].first = l->new_no;
		(*n)++;
	}
	(*v)[a].added++;
	(*v)[a].hazards += hist_line_hazards(l->text, strlen(l->text));
}

/*
 * A risk finding names no line of its own: it points where a later fix
 * is likeliest to land. Measured with quorum eval's located precision on
 * iproute2 and rdma-core: a function, not the top of the biggest hunk
 * (often a blank line or a header comment at file scope), and the one
 * with the most hazards; the functions fixed most before, or the files,
 * did worse.
 */
bool hist_risk_anchor(const struct rv_diff *d, const char **file, int *line)
{
	struct anchor_fn *v = NULL;
	size_t i, j, k, n = 0, alloc = 0, best = 0;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		for (j = 0; f->new_path && j < f->nhunks; j++) {
			const struct rv_hunk *hk = &f->hunks[j];

			for (k = 0; k < hk->nlines && k < ANCHOR_MAX_HUNK_LINES;
			     k++)
				if (hk->lines[k].origin == '+' &&
				    code_line(hk->lines[k].text))
					anchor_add(&v, &n, &alloc, f->new_path,
						   hk, k);
		}
	}
	for (i = 1; i < n; i++)
		if (v[i].hazards > v[best].hazards ||
		    (v[i].hazards == v[best].hazards &&
		     v[i].added > v[best].added))
			best = i;
	if (n) {
		*file = v[best].file;
		*line = v[best].first;
	}
	for (i = 0; i < n; i++)
		free(v[i].func);
	free(v);
	return n ? true : biggest_hunk(d, file, line);
}

/* The share of the fitted commits later fixed. */
static double base_rate(const struct hist_model *m)
{
	return m->rows ? (double)m->positives / (double)m->rows : 0;
}

static int risk_review(const struct rv_voter *v, const struct rv_context *ctx,
		       struct rv_findings *out, struct errmsg *err)
{
	const char *voters[1] = {v->name};
	struct rv_finding f = {0};
	struct sb why = SB_INIT, title = SB_INIT, expl = SB_INIT;
	const char *file = NULL;
	double score, rate;
	int line = 0;

	if (!ctx->history || !ctx->history->model.ok || !ctx->diff)
		return 0;
	if (rv_history_risk(ctx->history, ctx->diff,
			    ctx->patch ? ctx->patch->commit_message : NULL,
			    ctx->patch ? ctx->patch->author_email : NULL,
			    &score, &why, err) < 0)
		return 0;
	if (score < ctx->history->model.threshold ||
	    !hist_risk_anchor(ctx->diff, &file, &line))
		goto out;
	f.patch = ctx->patch_index;
	f.file = (char *)file;
	f.line_start = f.line_end = line;
	f.severity = RV_SEV_LOW;
	f.category = (char *)"risk";
	sb_addf(&title,
		"risky patch: score %.2f, among the riskiest %.0f%% "
		"of this tree's commits",
		score, HIST_RISK_TOP * 100);
	f.title = (char *)sb_str(&title);
	rate = hist_model_rate(&ctx->history->model, score);
	sb_addf(&expl,
		"Commits like this one were later named by a Fixes: trailer "
		"more often than most in this tree's history (score %.2f, "
		"threshold %.2f",
		score, ctx->history->model.threshold);
	if (rate >= 0)
		sb_addf(&expl,
			"; %.0f%% of the commits scored about as high "
			"were later fixed, against %.0f%% of all",
			rate * 100, base_rate(&ctx->history->model) * 100);
	sb_addf(&expl, ")%s%s. Worth a careful look.", why.len ? ": " : "",
		sb_str(&why));
	f.explanation = (char *)sb_str(&expl);
	f.voters = (char **)voters;
	f.nvoters = 1;
	rv_findings_add(out, &f);
out:
	sb_release(&why);
	sb_release(&title);
	sb_release(&expl);
	return 0;
}

const struct rv_voter rv_voter_risk = {"risk", 1.0, risk_review, NULL};
