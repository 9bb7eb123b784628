// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * voter-rules.c - the offline `rules` voter: C heuristics over the lines a
 * patch adds.
 *
 * Each hunk's post-image (context and added lines) is lexed into tokens
 * with comments, string literals and preprocessor lines out of the way,
 * and a handful of rules look for defects that maintainers fix again and
 * again: an allocation used before its NULL check, a lock left held on
 * an early return, unbounded string copies into fixed arrays, unchecked
 * size multiplications, and use after free. quorum's point is less
 * noise than other bots, so every rule stays silent when unsure.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review.h"

/* Bounds: a hostile hunk must not make a rule slow or quadratic. */
#define RULES_MAX_LINES 20000	 /* post-image lines of a hunk we scan */
#define RULES_MAX_TOKENS 400000	 /* tokens of one hunk */
#define RULES_WINDOW 4000	 /* tokens a rule looks ahead of a candidate */
#define RULES_MAX_CANDIDATES 512 /* candidates per rule per hunk */
#define RULES_MAX_NAME 128 /* bytes of an expression we name in a finding */
#define RULES_LOOKAHEAD_LINES 300 /* file lines read past a hunk */
#define RULES_MAX_CHAIN 9 /* tokens of an lvalue chain (a->b->c->d->e) */
/* Past these, more findings are noise nobody reads: drop the rest. */
#define RULES_MAX_FINDINGS_HUNK 16
#define RULES_MAX_FINDINGS 128

enum tkind { T_ID, T_NUM, T_STR, T_CHR, T_PUNCT };

struct tok {
	const char *s;
	unsigned len;
	unsigned line; /* index into scan.pl, or file line for lookahead */
	int depth;     /* brace depth of the block the token is in */
	unsigned char kind;
};

struct toks {
	struct tok *v;
	size_t n, alloc;
	bool full;     /* hit RULES_MAX_TOKENS */
	size_t *match; /* for '(' its ')', for ')' its '(', else SIZE_MAX */
	size_t *stack;
	size_t match_alloc;
};

struct pline {
	const char *text;
	int new_no;
	bool added;
	size_t hidx; /* index in hunk->lines */
};

/* A version of the file under review, read once, on demand. */
struct image {
	struct sb *text;
	int state; /* 0 not tried, 1 read, -1 not available */
};

struct scan {
	const struct rv_context *ctx;
	const char *path;
	const struct rv_hunk *h;
	struct pline *pl;
	size_t npl;
	struct toks tk;
	struct rv_findings *out;
	struct image post;    /* the file after the patch */
	const char *old_path; /* the file before the patch, NULL if added */
	struct image pre;     /* ... and as it was */
	struct toks after;    /* the function's rest past the hunk, on demand */
	struct sb after_text; /* the lines `after` points into */
	int after_state;      /* 0 not tried, 1 lexed, -1 not available */
	size_t hunk_findings, findings; /* emitted so far */
	/* Hashes of the lines the patch removes, in diff order; 0 between
	 * hunks: a span found here was moved, not written. */
	uint64_t *removed;
	size_t nremoved;
};

/* ---- lexing --------------------------------------------------------- */

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_';
}

static bool push_tok(struct toks *tv, const char *s, size_t len, unsigned line,
		     int depth, unsigned char kind)
{
	struct tok *t;

	if (tv->n >= RULES_MAX_TOKENS) {
		tv->full = true;
		return false;
	}
	ALLOC_GROW(tv->v, tv->n + 1, tv->alloc);
	t = &tv->v[tv->n++];
	t->s = s;
	t->len = (unsigned)len;
	t->line = line;
	t->depth = depth;
	t->kind = kind;
	return true;
}

static size_t punct_len(const char *p)
{
	static const char *const three[] = {"<<=", ">>=", "..."};
	static const char *const two[] = {
		"->", "++", "--", "<<", ">>", "<=", ">=",
		"==", "!=", "&&", "||", "+=", "-=", "*=",
		"/=", "%=", "&=", "|=", "^=", "##", "::"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(three); i++)
		if (!strncmp(p, three[i], 3))
			return 3;
	for (i = 0; i < ARRAY_SIZE(two); i++)
		if (!strncmp(p, two[i], 2))
			return 2;
	return 1;
}

/*
 * Lex one line of C into tv. Comments are dropped (a block comment may
 * span lines: *in_comment carries it), string and character literals
 * become single tokens, braces move *depth. A line that starts with
 * " * " outside any comment is the middle of a comment that began above
 * the hunk.
 */
static void lex_line(struct toks *tv, const char *s, unsigned line,
		     bool *in_comment, int *depth)
{
	const char *p = s, *q, *start;
	unsigned char kind;

	if (!*in_comment) {
		for (q = p; *q == ' ' || *q == '\t'; q++)
			;
		if (q[0] == '*' && (q[1] == ' ' || q[1] == '\t' ||
				    q[1] == '\0' || q[1] == '/')) {
			q = strstr(q, "*/");
			if (!q)
				return;
			p = q + 2;
		}
	}
	while (*p) {
		unsigned char c = (unsigned char)*p;

		if (*in_comment) {
			q = strstr(p, "*/");
			if (!q)
				return;
			*in_comment = false;
			p = q + 2;
			continue;
		}
		if (c == '/' && p[1] == '/')
			return;
		if (c == '/' && p[1] == '*') {
			*in_comment = true;
			p += 2;
			continue;
		}
		if (isspace(c) || c >= 0x80 || !isprint(c)) {
			p++;
			continue;
		}
		start = p;
		if (c == '"' || c == '\'') {
			p++;
			while (*p && (unsigned char)*p != c) {
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
			if (*p)
				p++;
			kind = c == '"' ? T_STR : T_CHR;
		} else if (is_ident_start(c)) {
			while (is_ident_char((unsigned char)*p))
				p++;
			kind = T_ID;
		} else if (isdigit(c) ||
			   (c == '.' && isdigit((unsigned char)p[1]))) {
			while (is_ident_char((unsigned char)*p) || *p == '.')
				p++;
			kind = T_NUM;
		} else {
			p += punct_len(p);
			kind = T_PUNCT;
		}
		if (c == '}')
			(*depth)--;
		if (!push_tok(tv, start, (size_t)(p - start), line, *depth,
			      kind))
			return;
		if (c == '{')
			(*depth)++;
	}
}

/* Lexer state carried from line to line of a hunk. */
struct lexer {
	bool in_comment;
	bool in_pp; /* the previous line was a preprocessor line ending in \ */
	int depth;
};

/* Lex one line, skipping preprocessor lines and their continuations. */
static void lex_text_line(struct toks *tv, struct lexer *lx, const char *s,
			  unsigned line)
{
	size_t n;

	if (lx->in_pp || (!lx->in_comment && s[strspn(s, " \t")] == '#')) {
		n = strlen(s);
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		lx->in_pp = n && s[n - 1] == '\\';
		return;
	}
	lex_line(tv, s, line, &lx->in_comment, &lx->depth);
}

/* ---- token helpers -------------------------------------------------- */

static bool is(const struct tok *t, const char *s)
{
	size_t n = strlen(s);

	return t->len == n && !memcmp(t->s, s, n);
}

static bool same(const struct tok *a, const struct tok *b)
{
	return a->len == b->len && !memcmp(a->s, b->s, a->len);
}

static bool is_in(const struct tok *t, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (is(t, set[i]))
			return true;
	return false;
}

/* Token i of the scan, or NULL outside it. */
static const struct tok *tk(const struct toks *tv, size_t i)
{
	return i < tv->n ? &tv->v[i] : NULL;
}

static bool tok_is(const struct toks *tv, size_t i, const char *s)
{
	const struct tok *t = tk(tv, i);

	return t && is(t, s);
}

/* The index of the ')' matching the '(' at i, or SIZE_MAX. */
static size_t close_paren(const struct toks *tv, size_t i)
{
	if (!tok_is(tv, i, "(") || tv->match[i] == SIZE_MAX ||
	    tv->match[i] - i > RULES_WINDOW)
		return SIZE_MAX;
	return tv->match[i];
}

/* The index of the '(' matching the ')' at i, or SIZE_MAX. */
static size_t open_paren(const struct toks *tv, size_t i)
{
	if (!tok_is(tv, i, ")") || tv->match[i] == SIZE_MAX ||
	    i - tv->match[i] > RULES_WINDOW)
		return SIZE_MAX;
	return tv->match[i];
}

/*
 * Pair the parentheses of a statement once per token list, so rules can
 * jump over calls in constant time: a ';' or a brace ends every open
 * parenthesis (a `for (;;)` header is not a call we look into).
 */
static void match_parens(struct toks *tv)
{
	size_t i, sp = 0;

	if (tv->n > tv->match_alloc) {
		free(tv->match);
		free(tv->stack);
		tv->match = xcalloc(tv->n, sizeof(*tv->match));
		tv->stack = xcalloc(tv->n, sizeof(*tv->stack));
		tv->match_alloc = tv->n;
	}
	for (i = 0; i < tv->n; i++) {
		const struct tok *t = &tv->v[i];

		tv->match[i] = SIZE_MAX;
		if (t->kind != T_PUNCT)
			continue;
		if (is(t, "(")) {
			tv->stack[sp++] = i;
		} else if (is(t, ")") && sp) {
			sp--;
			tv->match[i] = tv->stack[sp];
			tv->match[tv->stack[sp]] = i;
		} else if (is(t, ";") || is(t, "{") || is(t, "}")) {
			sp = 0;
		}
	}
}

static void toks_release(struct toks *tv)
{
	free(tv->v);
	free(tv->match);
	free(tv->stack);
	memset(tv, 0, sizeof(*tv));
}

/*
 * Argument k (0-based) of the call whose '(' is at open and ')' at close:
 * [*a, *b). Returns false when there are fewer arguments.
 */
static bool call_arg(const struct toks *tv, size_t open, size_t close,
		     unsigned k, size_t *a, size_t *b)
{
	size_t j, start = open + 1;
	unsigned arg = 0;
	int d = 0;

	for (j = open + 1; j <= close; j++) {
		const struct tok *t = &tv->v[j];

		if (is(t, "(") || is(t, "[") || is(t, "{"))
			d++;
		else if ((is(t, ")") || is(t, "]") || is(t, "}")) && j != close)
			d--;
		if ((j == close || (d == 0 && is(t, ","))) && j > open) {
			if (arg == k) {
				*a = start;
				*b = j;
				return *b > *a;
			}
			arg++;
			start = j + 1;
		}
	}
	return false;
}

/* Does the token end an operand (so a following '*' is binary)? */
static bool operand_end(const struct tok *t)
{
	static const char *const kw[] = {"return", "case", "else", "do"};

	if (!t)
		return false;
	if (t->kind == T_ID)
		return !is_in(t, kw, ARRAY_SIZE(kw));
	if (t->kind != T_PUNCT)
		return true;
	return is(t, ")") || is(t, "]");
}

/* Can a statement start right after token i (i == SIZE_MAX: hunk start)? */
static bool stmt_boundary(const struct toks *tv, size_t i)
{
	const struct tok *t = i == SIZE_MAX ? NULL : tk(tv, i);

	return !t || is(t, ";") || is(t, "{") || is(t, "}") || is(t, ":");
}

static size_t prev_idx(size_t i)
{
	return i ? i - 1 : SIZE_MAX;
}

/*
 * An lvalue chain `a`, `a->b`, `a.b->c` starting at i: returns its
 * length in tokens, 0 when token i is no identifier.
 */
static size_t chain_len(const struct toks *tv, size_t i)
{
	size_t j = i;

	if (!tk(tv, i) || tv->v[i].kind != T_ID)
		return 0;
	while (j + 2 < tv->n && j - i + 3 <= RULES_MAX_CHAIN &&
	       (is(&tv->v[j + 1], "->") || is(&tv->v[j + 1], ".")) &&
	       tv->v[j + 2].kind == T_ID)
		j += 2;
	return j - i + 1;
}

/* Is the chain c0[0..clen) at position i (and not part of a longer one)? */
static bool chain_at(const struct toks *tv, size_t i, size_t c0, size_t clen)
{
	size_t k;

	if (i + clen > tv->n)
		return false;
	if (i && (is(&tv->v[i - 1], "->") || is(&tv->v[i - 1], ".")))
		return false;
	for (k = 0; k < clen; k++)
		if (!same(&tv->v[i + k], &tv->v[c0 + k]))
			return false;
	return true;
}

/* Text of tokens [a, b) joined as C writes them, into buf; false if long. */
static bool tokens_text(const struct toks *tv, size_t a, size_t b, char *buf,
			size_t bufsz)
{
	size_t n = 0, j;

	for (j = a; j < b; j++) {
		const struct tok *t = &tv->v[j];

		if (n + t->len + 2 > bufsz)
			return false;
		if (n && t->kind == T_ID && tv->v[j - 1].kind == T_ID)
			buf[n++] = ' ';
		memcpy(buf + n, t->s, t->len);
		n += t->len;
	}
	buf[n] = '\0';
	return n > 0;
}

/* Operators whose operands are not evaluated: nothing in them is used. */
static bool is_unevaluated(const struct tok *t)
{
	static const char *const uneval[] = {
		"sizeof",	   "typeof",	  "__typeof__",	  "__typeof",
		"offsetof",	   "ARRAY_SIZE",  "sizeof_field", "struct_size",
		"flex_array_size", "__alignof__", "_Alignof",	  "alignof",
	};

	return t->kind == T_ID && is_in(t, uneval, ARRAY_SIZE(uneval));
}

/*
 * If the chain at i (clen tokens) is dereferenced right there, return
 * true: `p->`, `p[`, unary `*p`, or the destination of a mem/str call.
 */
static bool chain_deref(const struct toks *tv, size_t i, size_t clen)
{
	static const char *const dest_fns[] = {
		"memcpy",	    "memset",	   "memmove",
		"strcpy",	    "strncpy",	   "strcat",
		"strncat",	    "sprintf",	   "snprintf",
		"strscpy",	    "strlcpy",	   "strlcat",
		"vsprintf",	    "vsnprintf",   "memcpy_fromio",
		"copy_from_user",   "memcpy_toio", "scnprintf",
		"memzero_explicit",
	};
	const struct tok *next = tk(tv, i + clen);

	if (next && (is(next, "->") || is(next, "[")))
		return true;
	if (i && is(&tv->v[i - 1], "*") &&
	    !operand_end(i >= 2 ? &tv->v[i - 2] : NULL))
		return true;
	if (i >= 2 && is(&tv->v[i - 1], "(") && tv->v[i - 2].kind == T_ID &&
	    is_in(&tv->v[i - 2], dest_fns, ARRAY_SIZE(dest_fns)) && next &&
	    is(next, ","))
		return true;
	return false;
}

/* ---- moved code ----------------------------------------------------- */

/* FNV-1a of a line with its blanks left out: moved code is re-indented. */
static uint64_t line_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; s && *s; s++)
		if (!isspace((unsigned char)*s)) {
			h ^= (unsigned char)*s;
			h *= 1099511628211ULL;
		}
	return h;
}

static bool blank(const char *s)
{
	return !s || !s[strspn(s, " \t")];
}

static void removed_lines(const struct rv_diff *d, uint64_t **v, size_t *n)
{
	size_t i, j, k, alloc = 0;

	*v = NULL;
	*n = 0;
	for (i = 0; i < d->nfiles; i++)
		for (j = 0; j < d->files[i].nhunks; j++) {
			const struct rv_hunk *h = &d->files[i].hunks[j];

			for (k = 0; k < h->nlines; k++)
				if (h->lines[k].origin == '-' &&
				    !blank(h->lines[k].text)) {
					ALLOC_GROW(*v, *n + 1, alloc);
					(*v)[(*n)++] =
						line_hash(h->lines[k].text);
				}
			ALLOC_GROW(*v, *n + 1, alloc);
			(*v)[(*n)++] = 0;
		}
}

/*
 * Are the post-image lines la..lb all added, and do they stand, in the
 * same order with nothing between, among the lines the patch removes?
 * Then the patch moved that code (a file renamed or split without
 * rename detection, a function moved), and what it says is as old as
 * the code: a new check dropped on the way would break the run.
 */
static bool moved_span(const struct scan *sc, size_t la, size_t lb)
{
	uint64_t seq[64];
	size_t n = 0, i, k;

	if (la > lb) {
		k = la;
		la = lb;
		lb = k;
	}
	for (k = la; k <= lb && k < sc->npl; k++) {
		if (!sc->pl[k].added)
			return false;
		if (blank(sc->pl[k].text))
			continue;
		if (n == ARRAY_SIZE(seq))
			return false;
		seq[n++] = line_hash(sc->pl[k].text);
	}
	if (!n)
		return false;
	for (i = 0; i + n <= sc->nremoved; i++)
		if (sc->removed[i] == seq[0] &&
		    !memcmp(&sc->removed[i], seq, n * sizeof(seq[0])))
			return true;
	return false;
}

/* ---- findings ------------------------------------------------------- */

static const struct sb *post_image(struct scan *sc);

static void emit(struct scan *sc, const char *category, enum rv_severity sev,
		 size_t la, size_t lb, const char *title, const char *expl)
{
	static const char *const voters[] = {"rules"};
	struct rv_finding f;
	const struct sb *file;
	struct sb quote;
	char fn[128];

	if (sc->hunk_findings >= RULES_MAX_FINDINGS_HUNK ||
	    sc->findings >= RULES_MAX_FINDINGS || moved_span(sc, la, lb))
		return;
	sc->hunk_findings++;
	sc->findings++;
	sb_init(&quote, 0);
	memset(&f, 0, sizeof(f));
	f.patch = sc->ctx->patch_index;
	f.file = (char *)sc->path;
	f.line_start = sc->pl[la].new_no;
	f.line_end = sc->pl[lb].new_no;
	if (f.line_end < f.line_start)
		f.line_end = f.line_start;
	if (rv_hunk_function(sc->h, sc->pl[la].hidx, fn, sizeof(fn)))
		f.function = fn;
	else if ((file = post_image(sc)) &&
		 rv_source_function(file->buf, file->len, f.line_start, fn,
				    sizeof(fn)))
		f.function = fn; /* the header is above the hunk */
	f.severity = sev;
	f.category = (char *)category;
	f.title = (char *)title;
	f.explanation = (char *)expl;
	if (sb_adds(&quote, sc->pl[la].text) < 0 ||
	    (lb != la && (sb_addch(&quote, '\n') < 0 ||
			  sb_adds(&quote, sc->pl[lb].text) < 0)))
		sb_reset(&quote);
	f.quote = (char *)sb_str(&quote);
	f.voters = (char **)voters;
	f.nvoters = 1;
	rv_findings_add(sc->out, &f);
	sb_release(&quote);
}

/* Is token i on a line the patch adds? */
static bool tok_added(const struct scan *sc, size_t i)
{
	return sc->pl[sc->tk.v[i].line].added;
}

static bool tok_prefix(const struct tok *t, const char *prefix)
{
	size_t n = strlen(prefix);

	return t->len >= n && !memcmp(t->s, prefix, n);
}

/* ---- rule: allocation used before its NULL check -------------------- */

static const char *const alloc_fns[] = {
	"malloc",
	"calloc",
	"realloc",
	"strdup",
	"strndup",
	"kmalloc",
	"kzalloc",
	"kcalloc",
	"kmalloc_array",
	"kvmalloc",
	"kvzalloc",
	"kvcalloc",
	"kvmalloc_array",
	"devm_kzalloc",
	"devm_kmalloc",
	"devm_kcalloc",
	"devm_kmalloc_array",
	"vmalloc",
	"vzalloc",
	"kmemdup",
	"kstrdup",
	"kstrndup",
	"kmalloc_node",
	"kzalloc_node",
	"krealloc",
	"kmem_cache_alloc",
	"kmem_cache_zalloc",
	"devm_kstrdup",
	"reallocarray",
};

/* Calls and macros whose parenthesised operand counts as a check. */
static const char *const check_words[] = {
	"if",
	"while",
	"assert",
	"likely",
	"unlikely",
	"WARN_ON",
	"WARN_ON_ONCE",
	"BUG_ON",
	"IS_ERR_OR_NULL",
	"IS_ERR",
	"ZERO_OR_NULL_PTR",
	"PTR_ERR_OR_ZERO",
	"PTR_ERR",
	"WARN",
	"g_assert",
	"VM_BUG_ON",
	"BUILD_BUG_ON",
	"ASSERT",
	"CHECK",
	"ERR_CAST",
};

/* Is the chain occurrence at i (clen tokens) a test of its value? */
static bool chain_checked(const struct toks *tv, size_t i, size_t clen)
{
	static const char *const before[] = {"!", "&&", "||", "==", "!="};
	static const char *const after[] = {"==", "!=", "?", "&&", "||"};
	const struct tok *prev = i ? &tv->v[i - 1] : NULL;
	const struct tok *next = tk(tv, i + clen);

	/* `!p->x` tests a member: that is a dereference of p */
	if (next && (is(next, "->") || is(next, "[")))
		return false;
	if (prev && is_in(prev, before, ARRAY_SIZE(before)))
		return true;
	if (next && is_in(next, after, ARRAY_SIZE(after)))
		return true;
	/* `if (p)`, `assert(p)`, `!(p)` */
	if (prev && is(prev, "(") && next && is(next, ")") && i >= 2 &&
	    (is(&tv->v[i - 2], "!") ||
	     (tv->v[i - 2].kind == T_ID &&
	      is_in(&tv->v[i - 2], check_words, ARRAY_SIZE(check_words)))))
		return true;
	return false;
}

/*
 * Is token i a call of an allocator whose result is assigned, as a
 * statement of its own, to a chain `a->b.c` we can follow? Sets the
 * call's closing parenthesis and the chain's first token and length.
 */
static bool alloc_assignment(const struct toks *tv, size_t i, size_t *close,
			     size_t *lhs, size_t *clen)
{
	/* tokens before an lvalue that make it part of a larger expression
	 * (or a chain longer than we follow) */
	static const char *const not_stmt[] = {"(", "=",  ",",	"]",  ")",
					       "!", "&&", "||", "->", "."};
	const struct tok *t = &tv->v[i];
	size_t j, k, open;

	if (t->kind != T_ID || !tok_is(tv, i + 1, "(") ||
	    !is_in(t, alloc_fns, ARRAY_SIZE(alloc_fns)))
		return false;
	open = i + 1;
	*close = close_paren(tv, open);
	if (*close == SIZE_MAX || !tok_is(tv, *close + 1, ";"))
		return false;
	for (j = open; j < *close; j++)
		if (is(&tv->v[j], "__GFP_NOFAIL"))
			return false;
	/* `= (type *)alloc(`: step over the cast */
	k = i;
	if (k && is(&tv->v[k - 1], ")")) {
		k = open_paren(tv, k - 1);
		if (k == SIZE_MAX)
			return false;
	}
	if (k < 2 || !is(&tv->v[k - 1], "="))
		return false;
	/* the lvalue: walk back over `a->b.c` */
	*lhs = k - 2;
	if (tv->v[*lhs].kind != T_ID)
		return false;
	while (*lhs >= 2 && k - 1 - *lhs + 2 <= RULES_MAX_CHAIN &&
	       (is(&tv->v[*lhs - 1], "->") || is(&tv->v[*lhs - 1], ".")) &&
	       tv->v[*lhs - 2].kind == T_ID)
		*lhs -= 2;
	*clen = k - 1 - *lhs;
	if (chain_len(tv, *lhs) < *clen)
		return false;
	/* assigned inside a condition, `*pp = `, `a[i] = `: not ours */
	if (*lhs && (is_in(&tv->v[*lhs - 1], not_stmt, ARRAY_SIZE(not_stmt)) ||
		     (is(&tv->v[*lhs - 1], "*") &&
		      (*lhs < 2 || tv->v[*lhs - 2].kind != T_ID))))
		return false;
	return true;
}

/*
 * The first token after the allocation (whose call ends at close, at
 * block depth depth) that dereferences the chain lhs/clen before
 * anything tests it, on the same path; SIZE_MAX when none.
 */
static size_t unchecked_use(const struct toks *tv, size_t close, int depth,
			    size_t lhs, size_t clen)
{
	size_t j;

	for (j = close + 2; j < tv->n && j < close + 2 + RULES_WINDOW; j++) {
		const struct tok *u = &tv->v[j];

		if (u->depth < depth)
			break; /* left the block: another path */
		if (is_unevaluated(u) && tok_is(tv, j + 1, "(")) {
			size_t e = close_paren(tv, j + 1);

			if (e == SIZE_MAX)
				break;
			j = e;
			continue;
		}
		if (u->kind == T_ID && (is(u, "return") || is(u, "goto"))) {
			/* the statement itself may use it, then the
			 * path ends unless it was a branch */
			size_t e, hit = SIZE_MAX;
			bool branch = u->depth > depth ||
				      (j && (is(&tv->v[j - 1], ")") ||
					     is(&tv->v[j - 1], "else")));

			for (e = j + 1; e < tv->n && e < j + RULES_WINDOW &&
					!is(&tv->v[e], ";");
			     e++) {
				if (!chain_at(tv, e, lhs, clen))
					continue;
				if (chain_deref(tv, e, clen))
					hit = e;
				break;
			}
			if (hit != SIZE_MAX)
				return hit;
			if (!branch ||
			    (e < tv->n && e > j + 1 && !is(&tv->v[e], ";")))
				break;
			j = e < tv->n ? e : j;
			continue;
		}
		if (!chain_at(tv, j, lhs, clen))
			continue;
		if (chain_checked(tv, j, clen))
			break;
		if (j && is(&tv->v[j - 1], "&") && !tok_is(tv, j + clen, "->"))
			break; /* its address escapes: who knows */
		if (tok_is(tv, j + clen, "=") && !(j && is(&tv->v[j - 1], "*")))
			break; /* reassigned */
		if (chain_deref(tv, j, clen))
			return j;
	}
	return SIZE_MAX;
}

/* Does text hold word w, not as part of a longer name? */
static bool word_in(const char *text, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = text; (p = strstr(p, w)); p += n)
		if ((p == text || !is_ident_char((unsigned char)p[-1])) &&
		    !is_ident_char((unsigned char)p[n]))
			return true;
	return false;
}

/*
 * Did the hunk's pre-image allocate name too, and test it nowhere? Then a
 * patch that only rewrites the allocation (`malloc() + memset()` into
 * `calloc()`), its first use untouched, leaves a defect as old as the
 * code; a patch that drops the check is still flagged.
 */
static bool rewrites_unchecked(const struct scan *sc, const char *name)
{
	const struct rv_hunk *h = sc->h;
	size_t k, n = strlen(name), a;
	bool alloc = false;

	for (k = 0; k < h->nlines; k++) {
		const char *text = h->lines[k].text, *p;

		if (h->lines[k].origin != '-' || !text)
			continue;
		for (p = text; (p = strstr(p, name)); p += n) {
			const char *q = p + n;

			if (p > text &&
			    (isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
			     p[-1] == '>' || p[-1] == '.'))
				continue;
			if (isalnum((unsigned char)*q) || *q == '_')
				continue;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '=' && q[1] != '=') {
				for (a = 0; a < ARRAY_SIZE(alloc_fns); a++) {
					const char *c = strstr(q, alloc_fns[a]);
					size_t l = strlen(alloc_fns[a]);

					if (c && c[l] == '(' &&
					    !(isalnum((unsigned char)c[-1]) ||
					      c[-1] == '_'))
						alloc = true;
				}
				continue;
			}
			/* any other mention: a test, maybe; not ours to say */
			if (word_in(text, "if") || word_in(text, "assert") ||
			    strchr(text, '?') || strstr(text, "!="))
				return false;
		}
	}
	return alloc;
}

static void rule_unchecked_alloc(struct scan *sc)
{
	const struct toks *tv = &sc->tk;
	size_t i, j, lhs, clen, close, cand = 0;
	char name[RULES_MAX_NAME], fn[64], title[512], expl[1024];

	for (i = 0; i + 1 < tv->n && cand < RULES_MAX_CANDIDATES; i++) {
		const struct tok *t = &tv->v[i];

		if (!alloc_assignment(tv, i, &close, &lhs, &clen))
			continue;
		cand++;
		j = unchecked_use(tv, close, t->depth, lhs, clen);
		if (j == SIZE_MAX)
			continue;
		/* the patch must add the allocation or the early use */
		if ((!tok_added(sc, i) && !tok_added(sc, j)) ||
		    !tokens_text(tv, lhs, lhs + clen, name, sizeof(name)) ||
		    t->len >= sizeof(fn) ||
		    (!tok_added(sc, j) && rewrites_unchecked(sc, name)))
			continue;
		memcpy(fn, t->s, t->len);
		fn[t->len] = '\0';
		snprintf(
			title, sizeof(title),
			"%s() result `%s` is dereferenced without a NULL check",
			fn, name);
		snprintf(expl, sizeof(expl),
			 "%s() returns NULL when the allocation fails, and "
			 "`%s` is used at line %d before anything tests it, so "
			 "an allocation failure becomes a NULL pointer "
			 "dereference instead of an error return. Check the "
			 "result right after the call (`if (!%s)` followed by "
			 "the function's usual error path, such as -ENOMEM) "
			 "before the first use.",
			 fn, name, sc->pl[tv->v[j].line].new_no, name);
		emit(sc, "null-deref", RV_SEV_MEDIUM, t->line, tv->v[j].line,
		     title, expl);
	}
}

/* ---- rule: lock left held on a return path -------------------------- */

struct lockfn {
	const char *lock;
	const char *unlock; /* prefix of the matching unlock calls */
};

static const struct lockfn lock_fns[] = {
	{"spin_lock", "spin_unlock"},
	{"spin_lock_irq", "spin_unlock"},
	{"spin_lock_irqsave", "spin_unlock"},
	{"spin_lock_bh", "spin_unlock"},
	{"spin_lock_nested", "spin_unlock"},
	{"raw_spin_lock", "raw_spin_unlock"},
	{"raw_spin_lock_irq", "raw_spin_unlock"},
	{"raw_spin_lock_irqsave", "raw_spin_unlock"},
	{"raw_spin_lock_bh", "raw_spin_unlock"},
	{"mutex_lock", "mutex_unlock"},
	{"mutex_lock_nested", "mutex_unlock"},
	{"read_lock", "read_unlock"},
	{"read_lock_irq", "read_unlock"},
	{"read_lock_irqsave", "read_unlock"},
	{"read_lock_bh", "read_unlock"},
	{"write_lock", "write_unlock"},
	{"write_lock_irq", "write_unlock"},
	{"write_lock_irqsave", "write_unlock"},
	{"write_lock_bh", "write_unlock"},
	{"down_read", "up_read"},
	{"down_write", "up_write"},
	{"pthread_mutex_lock", "pthread_mutex_unlock"},
	{"pthread_spin_lock", "pthread_spin_unlock"},
	{"pthread_rwlock_rdlock", "pthread_rwlock_unlock"},
	{"pthread_rwlock_wrlock", "pthread_rwlock_unlock"},
	{"rcu_read_lock", "rcu_read_unlock"},
	{"rcu_read_lock_bh", "rcu_read_unlock_bh"},
};

static const struct lockfn *find_lock_fn(const struct tok *t)
{
	size_t i;

	if (t->kind != T_ID)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(lock_fns); i++)
		if (is(t, lock_fns[i].lock))
			return &lock_fns[i];
	return NULL;
}

/* The lock object of the call at i: first argument without a leading &. */
static bool lock_object(const struct toks *tv, size_t i, char *buf,
			size_t bufsz)
{
	size_t close = close_paren(tv, i + 1), a, b;

	if (close == SIZE_MAX)
		return false;
	if (close == i + 2) { /* rcu_read_lock() */
		buf[0] = '\0';
		return true;
	}
	if (!call_arg(tv, i + 1, close, 0, &a, &b))
		return false;
	if (is(&tv->v[a], "&"))
		a++;
	return a < b && tokens_text(tv, a, b, buf, bufsz);
}

/* Is token i a call unlocking obj with an unlock of lf's family? */
static bool is_unlock_of(const struct toks *tv, size_t i,
			 const struct lockfn *lf, const char *obj)
{
	const struct tok *t = &tv->v[i];
	size_t n = strlen(lf->unlock);
	char o[RULES_MAX_NAME];

	if (t->kind != T_ID || !tok_prefix(t, lf->unlock) ||
	    (t->len > n && t->s[n] != '_') || !tok_is(tv, i + 1, "("))
		return false;
	return lock_object(tv, i, o, sizeof(o)) && !strcmp(o, obj);
}

/* Does any unlock of obj appear in tokens [from, tv->n)? */
static bool unlock_after(const struct toks *tv, size_t from,
			 const struct lockfn *lf, const char *obj)
{
	size_t j;

	for (j = from; j < tv->n && j < from + RULES_WINDOW; j++)
		if (is_unlock_of(tv, j, lf, obj))
			return true;
	return false;
}

/* Read path in tree into im once, when a repository is at hand. */
static const struct sb *image_read(struct image *im,
				   const struct rv_context *ctx,
				   const char *tree, const char *path)
{
	if (im->state)
		return im->state > 0 ? im->text : NULL;
	im->state = -1;
	if (!path || !ctx->repo || !tree || !tree[0])
		return NULL;
	im->text = xcalloc(1, sizeof(*im->text));
	sb_init(im->text, (size_t)64 << 20);
	if (rv_repo_read_file(ctx->repo, tree, path, im->text, NULL) != 0)
		return NULL;
	im->state = 1;
	return im->text;
}

/* Forget im: the next file starts untried. */
static void image_reset(struct image *im)
{
	if (im->text) {
		sb_release(im->text);
		free(im->text);
	}
	im->text = NULL;
	im->state = 0;
}

/* The post-image of the file. */
static const struct sb *post_image(struct scan *sc)
{
	return image_read(&sc->post, sc->ctx, sc->ctx->post_tree, sc->path);
}

/*
 * The tokens of the post-image lines after the hunk, up to the end of
 * the function (a '}' in column 0) or RULES_LOOKAHEAD_LINES, when a
 * repository holds the post-image; NULL otherwise. Built once per hunk.
 */
static const struct toks *after_hunk(struct scan *sc)
{
	const struct sb *file;
	struct lexer lx = {false, false, 0};
	const char *p, *end, *nl;
	int lineno = 1, last = sc->h->new_start + sc->h->new_lines - 1;
	size_t off, n;

	if (sc->after_state)
		return sc->after_state > 0 ? &sc->after : NULL;
	sc->after_state = -1;
	file = post_image(sc);
	if (!file || !file->len)
		return NULL;
	sb_reset(&sc->after_text);
	sc->after.n = 0;
	sc->after.full = false;
	p = file->buf;
	end = file->buf + file->len;
	/* each line NUL-terminated, so the lexer can read them in place */
	for (; p < end && lineno <= last + RULES_LOOKAHEAD_LINES;
	     p = nl ? nl + 1 : end, lineno++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (lineno <= last)
			continue;
		if (*p == '}')
			break;
		if (sb_add(&sc->after_text, p, n) < 0 ||
		    sb_addch(&sc->after_text, '\0') < 0)
			return NULL;
	}
	for (off = 0; off < sc->after_text.len;
	     off += strlen(sc->after_text.buf + off) + 1)
		lex_text_line(&sc->after, &lx, sc->after_text.buf + off, 0);
	if (sc->after.full)
		return NULL;
	match_parens(&sc->after);
	sc->after_state = 1;
	return &sc->after;
}

/* Is there an unlock of obj past the hunk, before the function ends? */
static bool unlock_past_hunk(struct scan *sc, const struct lockfn *lf,
			     const char *obj)
{
	const struct toks *after = after_hunk(sc);

	return after && unlock_after(after, 0, lf, obj);
}

/* Is there a label `name:` after token from? Its index, or SIZE_MAX. */
static size_t find_label(const struct toks *tv, size_t from,
			 const struct tok *name)
{
	size_t j;

	for (j = from; j + 1 < tv->n && j < from + RULES_WINDOW; j++)
		if (same(&tv->v[j], name) && is(&tv->v[j + 1], ":") &&
		    stmt_boundary(tv, prev_idx(j)))
			return j;
	return SIZE_MAX;
}

/* From label index l in tv: 0 if obj is unlocked before a return, 1 if
 * a return comes first, -1 if neither shows. */
static int label_leaks(const struct toks *tv, size_t l, const struct lockfn *lf,
		       const char *obj)
{
	size_t j;

	for (j = l + 2; j < tv->n && j < l + RULES_WINDOW; j++) {
		if (is_unlock_of(tv, j, lf, obj))
			return 0;
		if (is(&tv->v[j], "return"))
			return 1;
	}
	return -1;
}

/*
 * Where does `goto label` lead, for a lock on obj: 1 to a return with obj
 * still locked, 0 to an unlock (or a label that says so), -1 unknown.
 * The label is looked for further down the hunk, then past it in the
 * post-image when a repository is at hand.
 */
static int goto_leaks(struct scan *sc, size_t gi, const struct lockfn *lf,
		      const char *obj)
{
	const struct toks *tv = &sc->tk, *after;
	const struct tok *label = tk(tv, gi + 1);
	size_t l;

	if (!label || label->kind != T_ID)
		return -1;
	if (memmem(label->s, label->len, "unlock", 6))
		return 0;
	l = find_label(tv, gi, label);
	if (l != SIZE_MAX)
		return label_leaks(tv, l, lf, obj);
	after = after_hunk(sc);
	if (!after)
		return -1;
	l = find_label(after, 0, label);
	if (l == SIZE_MAX)
		return -1;
	return label_leaks(after, l, lf, obj);
}

/* Is the statement at i conditional: inside a deeper block, or `if (..) x`. */
static bool conditional_stmt(const struct toks *tv, size_t i, int depth)
{
	const struct tok *prev = i ? &tv->v[i - 1] : NULL;

	return tv->v[i].depth > depth ||
	       (prev && (is(prev, ")") || is(prev, "else")));
}

static void rule_lock_leak(struct scan *sc)
{
	const struct toks *tv = &sc->tk;
	size_t i, j, close, cand = 0, ret_at;
	char obj[RULES_MAX_NAME], fn[64], title[512], expl[1200];

	for (i = 0; i + 1 < tv->n && cand < RULES_MAX_CANDIDATES; i++) {
		const struct tok *t = &tv->v[i];
		const struct lockfn *lf = find_lock_fn(t);
		int depth = t->depth, released = 0;
		bool held = true, evidence = false, ended = false;
		const char *how = "return";

		if (!lf || !tok_is(tv, i + 1, "(") ||
		    !stmt_boundary(tv, prev_idx(i)))
			continue;
		close = close_paren(tv, i + 1);
		if (close == SIZE_MAX || !tok_is(tv, close + 1, ";") ||
		    !lock_object(tv, i, obj, sizeof(obj)))
			continue;
		cand++;
		ret_at = SIZE_MAX;
		for (j = close + 2; j < tv->n && j < close + 2 + RULES_WINDOW;
		     j++) {
			const struct tok *u = &tv->v[j];

			if (u->depth < depth) {
				ended = true; /* the block or function ended */
				break;
			}
			if (is(u, "}") && !held && u->depth < released) {
				/* out of the branch that unlocked */
				held = true;
				released = 0;
			}
			if (is_unlock_of(tv, j, lf, obj)) {
				if (u->depth <= depth) {
					evidence = ret_at != SIZE_MAX;
					break;
				}
				if (held) {
					held = false;
					released = u->depth;
				}
				if (ret_at != SIZE_MAX) {
					evidence = true;
					break;
				}
				continue;
			}
			if (!held || ret_at != SIZE_MAX || u->kind != T_ID)
				continue;
			if (is(u, "return")) {
				if (!conditional_stmt(tv, j, depth))
					break; /* held on purpose */
				if (tok_added(sc, i) || tok_added(sc, j))
					ret_at = j;
			} else if (is(u, "goto")) {
				int leak = goto_leaks(sc, j, lf, obj);

				if (leak < 0 && !conditional_stmt(tv, j, depth))
					break;
				if (leak > 0 &&
				    conditional_stmt(tv, j, depth) &&
				    (tok_added(sc, i) || tok_added(sc, j))) {
					ret_at = j;
					how = "goto";
				}
			}
		}
		if (ret_at == SIZE_MAX)
			continue;
		/* evidence the function means to unlock: later in the hunk,
		 * or past it in the post-image file */
		if (!evidence &&
		    (ended || j < tv->n || !unlock_past_hunk(sc, lf, obj)))
			continue;
		if (t->len >= sizeof(fn))
			continue;
		memcpy(fn, t->s, t->len);
		fn[t->len] = '\0';
		snprintf(title, sizeof(title),
			 "`%s` at line %d leaves `%s` locked", how,
			 sc->pl[tv->v[ret_at].line].new_no, obj[0] ? obj : fn);
		snprintf(expl, sizeof(expl),
			 "`%s` is taken with %s() at line %d and released "
			 "further down, but the early `%s` at line %d leaves "
			 "the function with it still held. The next caller "
			 "that takes it will deadlock (or, for RCU, the "
			 "read-side section never ends). Release it on this "
			 "path too, for example by jumping to an unlock label "
			 "instead of returning directly.",
			 obj[0] ? obj : fn, fn, sc->pl[t->line].new_no, how,
			 sc->pl[tv->v[ret_at].line].new_no);
		emit(sc, "lock-leak", RV_SEV_HIGH, t->line, tv->v[ret_at].line,
		     title, expl);
	}
}

/* ---- rule: unbounded string writes into fixed arrays ---------------- */

static bool is_macro_const(const struct tok *t);

/*
 * Is the array size that starts at token i computed at run time, from
 * variables (`char hex[len * 2 + 1]`)? Then it was sized for what it
 * holds, not fixed; sizeof() and ALL_CAPS macros are constants.
 */
static bool runtime_size(const struct toks *tv, size_t i)
{
	int d = 0;

	for (; i < tv->n; i++) {
		const struct tok *t = &tv->v[i];

		if (is(t, "[") || is(t, "("))
			d++;
		else if (is(t, "]") && --d < 0)
			return false;
		else if (is(t, ")"))
			d--;
		else if (is(t, "sizeof") && tok_is(tv, i + 1, "(")) {
			size_t e = close_paren(tv, i + 1);

			if (e == SIZE_MAX)
				return false;
			i = e;
		} else if (t->kind == T_ID && !is(t, "sizeof") &&
			   !is_macro_const(t)) {
			return true;
		} else if (is(t, ";") || is(t, "{")) {
			return false;
		}
	}
	return false;
}

/*
 * The declared size of `char name[N]` in the hunk: N (> 0) when it is a
 * number, 0 when it is a constant expression, -1 when there is no such
 * array or its size is computed at run time.
 */
static long char_array_size(const struct toks *tv, size_t call,
			    const struct tok *name)
{
	size_t j = call > RULES_WINDOW ? call - RULES_WINDOW : 1;

	for (j = j ? j : 1; j + 2 < tv->n && j < call; j++) {
		const struct tok *t = &tv->v[j];

		if (!same(t, name) || !is(&tv->v[j - 1], "char") ||
		    !is(&tv->v[j + 1], "["))
			continue;
		if (tv->v[j + 2].kind == T_NUM && tok_is(tv, j + 3, "]"))
			return strtol(tv->v[j + 2].s, NULL, 0) > 0
				       ? strtol(tv->v[j + 2].s, NULL, 0)
				       : 0;
		return runtime_size(tv, j + 2) ? -1 : 0;
	}
	return -1;
}

/* Does a printf format literal have a `%s` with no precision? */
static bool format_unbounded(const struct tok *t)
{
	const char *p = t->s + 1, *end = t->s + t->len - 1;

	while (p < end) {
		bool prec = false;

		if (*p++ != '%')
			continue;
		if (p < end && *p == '%') {
			p++;
			continue;
		}
		while (p < end && strchr("-+ #0", *p))
			p++;
		while (p < end && (isdigit((unsigned char)*p) || *p == '*'))
			p++;
		if (p < end && *p == '.') {
			prec = true;
			p++;
			while (p < end &&
			       (isdigit((unsigned char)*p) || *p == '*'))
				p++;
		}
		while (p < end && strchr("hlLqjzt", *p))
			p++;
		if (p < end && *p == 's' && !prec)
			return true;
	}
	return false;
}

/*
 * Is the operand [a, e] (a strlen() call) a term of a sum that is
 * compared: `strlen(dst) + strlen(src) + 2 > PATH_MAX` bounds src as well
 * as `strlen(src) > MAX` does. Terms are names, numbers and calls.
 */
static bool sum_compared(const struct toks *tv, size_t a, size_t e,
			 const char *const *cmp, size_t ncmp)
{
	size_t k = e + 1, o;

	for (;;) { /* forward, past `+ term` */
		const struct tok *t = tk(tv, k);

		if (!t)
			break;
		if (is_in(t, cmp, ncmp))
			return true;
		if (!is(t, "+") || !tk(tv, k + 1) ||
		    (tv->v[k + 1].kind != T_ID && tv->v[k + 1].kind != T_NUM))
			break;
		k += 2;
		if (tok_is(tv, k, "(")) {
			o = close_paren(tv, k);
			if (o == SIZE_MAX)
				break;
			k = o + 1;
		}
	}
	for (k = a; k;) { /* backward, past `term +` */
		const struct tok *t = &tv->v[k - 1];

		if (is_in(t, cmp, ncmp))
			return true;
		if (!is(t, "+") || k < 2)
			break;
		k -= 2;
		if (is(&tv->v[k], ")")) {
			o = open_paren(tv, k);
			if (o == SIZE_MAX || !o || tv->v[o - 1].kind != T_ID)
				break;
			k = o - 1;
		} else if (tv->v[k].kind != T_ID && tv->v[k].kind != T_NUM) {
			break;
		}
	}
	return false;
}

/*
 * Is strlen() of the source [sa, sb) compared with something before the
 * copy at call? Then its author bounded it (`if (strlen(s) > MAX)
 * return -1;`), and whether the bound is right is another question.
 */
static bool length_tested(const struct toks *tv, size_t call, size_t sa,
			  size_t sb)
{
	static const char *const cmp[] = {"<", ">", "<=", ">=", "==", "!="};
	size_t j = call > RULES_WINDOW ? call - RULES_WINDOW : 0, e, k;

	/* no further back than the function: another's test is not ours */
	for (k = call; k-- > j;)
		if (is(&tv->v[k], "}") && tv->v[k].depth < tv->v[call].depth) {
			j = k + 1;
			break;
		}
	for (; j + 1 < call; j++) {
		if (!is(&tv->v[j], "strlen") || !is(&tv->v[j + 1], "("))
			continue;
		e = close_paren(tv, j + 1);
		if (e == SIZE_MAX || e >= call || e - (j + 2) != sb - sa)
			continue;
		for (k = 0; k < sb - sa; k++)
			if (!same(&tv->v[j + 2 + k], &tv->v[sa + k]))
				break;
		if (k < sb - sa)
			continue;
		if (sum_compared(tv, j, e, cmp, ARRAY_SIZE(cmp)))
			return true;
	}
	return false;
}

/*
 * Does what sprintf() at call (its ')' at close) formats with fmt fit in
 * size bytes? Known when every conversion is a %c or a %s of a char
 * array declared with a number (`char addr[16]` holds at most 15):
 * `sprintf(full[17], "%s%c", addr, state)` is bounded by its sources.
 */
static bool sprintf_fits(const struct toks *tv, size_t call, size_t close,
			 const struct tok *fmt, long size)
{
	const char *p = fmt->s + 1, *end = fmt->s + fmt->len - 1;
	unsigned arg = 2;
	long need = 1, n;
	size_t a, b;

	while (p < end && need <= size) {
		if (*p == '\\') {
			p += 2;
			need++;
			continue;
		}
		if (*p++ != '%') {
			need++;
			continue;
		}
		if (p < end && (*p == '%' || *p == 'c')) {
			arg += *p++ == 'c';
			need++;
			continue;
		}
		if (p >= end || *p != 's' ||
		    !call_arg(tv, call + 1, close, arg, &a, &b) || b != a + 1 ||
		    tv->v[a].kind != T_ID)
			return false; /* widths, numbers: not worked out */
		n = char_array_size(tv, call, &tv->v[a]);
		if (n <= 0)
			return false;
		need += n - 1;
		p++;
		arg++;
	}
	return need <= size;
}

static void rule_unsafe_string(struct scan *sc)
{
	static const char *const copy_fns[] = {"strcpy", "strcat", "sprintf",
					       "vsprintf"};
	const struct toks *tv = &sc->tk;
	size_t i, close, a, b, sa, sb2, cand = 0;
	char fn[16], name[RULES_MAX_NAME], title[512], expl[1024];

	for (i = 0; i + 1 < tv->n && cand < RULES_MAX_CANDIDATES; i++) {
		const struct tok *t = &tv->v[i];
		const struct tok *prev = i ? &tv->v[i - 1] : NULL;
		long size;

		if (t->kind != T_ID || !tok_is(tv, i + 1, "(") ||
		    !tok_added(sc, i) ||
		    (prev &&
		     (is(prev, "->") || is(prev, ".") || is(prev, "*") ||
		      (prev->kind == T_ID && !is(prev, "return") &&
		       !is(prev, "else") && !is(prev, "do")))))
			continue;
		if (t->len >= sizeof(fn))
			continue;
		memcpy(fn, t->s, t->len);
		fn[t->len] = '\0';
		if (is(t, "gets")) {
			cand++;
			snprintf(title, sizeof(title),
				 "gets() cannot be used safely");
			snprintf(expl, sizeof(expl),
				 "gets() writes as many bytes as the input "
				 "holds, whatever the size of the buffer, so "
				 "any long line overflows it; it was removed "
				 "from C11. Use fgets() with the buffer's "
				 "size (and strip the newline) instead.");
			emit(sc, "unsafe-string", RV_SEV_HIGH, t->line, t->line,
			     title, expl);
			continue;
		}
		if (!is_in(t, copy_fns, ARRAY_SIZE(copy_fns)))
			continue;
		close = close_paren(tv, i + 1);
		if (close == SIZE_MAX ||
		    !call_arg(tv, i + 1, close, 0, &a, &b) || b != a + 1 ||
		    tv->v[a].kind != T_ID ||
		    !call_arg(tv, i + 1, close, 1, &sa, &sb2))
			continue;
		size = char_array_size(tv, i, &tv->v[a]);
		if (size < 0)
			continue;
		if (is(t, "strcpy") || is(t, "strcat")) {
			/* a literal source is bounded and meant */
			if (tv->v[sa].kind == T_STR ||
			    length_tested(tv, i, sa, sb2))
				continue;
		} else if (is(t, "sprintf")) {
			if (tv->v[sa].kind != T_STR || sb2 != sa + 1 ||
			    !format_unbounded(&tv->v[sa]) ||
			    (size > 0 &&
			     sprintf_fits(tv, i, close, &tv->v[sa], size)))
				continue;
		}
		cand++;
		if (!tokens_text(tv, a, b, name, sizeof(name)))
			continue;
		if (size > 0)
			snprintf(title, sizeof(title),
				 "%s() into `%s[%ld]` has no bound", fn, name,
				 size);
		else
			snprintf(title, sizeof(title),
				 "%s() into fixed-size `%s` has no bound", fn,
				 name);
		snprintf(expl, sizeof(expl),
			 "`%s` is a fixed-size array, and %s() writes as many "
			 "bytes as its input holds without knowing that size, "
			 "so a long enough %s overflows the stack or "
			 "structure it lives in. Use a bounded call that is "
			 "told sizeof(%s): strscpy() or snprintf()/scnprintf() "
			 "in the kernel, snprintf() in userspace.",
			 name, fn,
			 is(t, "strcpy") || is(t, "strcat")
				 ? "source string"
				 : "formatted string",
			 name);
		emit(sc, "unsafe-string", RV_SEV_MEDIUM, t->line, t->line,
		     title, expl);
	}
}

/* ---- rule: size multiplication that can overflow -------------------- */

struct sizefn {
	const char *name;
	unsigned size_arg;
	const char *better;
};

static const struct sizefn size_fns[] = {
	{"malloc", 0, "calloc()"},
	{"realloc", 1, "reallocarray()"},
	{"kmalloc", 0, "kmalloc_array() or kcalloc()"},
	{"kzalloc", 0, "kcalloc()"},
	{"kmalloc_node", 0, "kmalloc_array_node() or kcalloc_node()"},
	{"kzalloc_node", 0, "kcalloc_node()"},
	{"kvmalloc", 0, "kvmalloc_array() or kvcalloc()"},
	{"kvzalloc", 0, "kvcalloc()"},
	{"vmalloc", 0, "vmalloc_array() or array_size()"},
	{"vzalloc", 0, "vcalloc() or array_size()"},
	{"devm_kmalloc", 1, "devm_kmalloc_array()"},
	{"devm_kzalloc", 1, "devm_kcalloc()"},
	{"krealloc", 1, "krealloc_array()"},
};

/* Is an identifier a constant by convention (ALL_CAPS macro)? */
static bool is_macro_const(const struct tok *t)
{
	unsigned k;
	bool upper = false;

	for (k = 0; k < t->len; k++) {
		if (islower((unsigned char)t->s[k]))
			return false;
		if (isupper((unsigned char)t->s[k]))
			upper = true;
	}
	return upper;
}

/* Are tokens [a, b) a compile-time constant as far as we can tell? */
static bool expr_const(const struct toks *tv, size_t a, size_t b)
{
	size_t j;

	for (j = a; j < b; j++) {
		const struct tok *t = &tv->v[j];

		if (is_unevaluated(t) || is(t, "ARRAY_SIZE")) {
			size_t e = close_paren(tv, j + 1);

			if (e == SIZE_MAX || e >= b) {
				if (is(t, "sizeof"))
					return true; /* `sizeof x` */
				return false;
			}
			j = e;
			continue;
		}
		if (t->kind == T_ID && !is_macro_const(t))
			return false;
		if (t->kind == T_STR || t->kind == T_CHR)
			return false;
	}
	return true;
}

/*
 * In size expression [a, b): is there a product (at paren depth 0) with a
 * factor that is not constant? Terms are split at + and -.
 */
static bool count_allocated_before(struct scan *sc, const struct toks *tv,
				   size_t a, size_t b);

static bool size_product_unchecked(struct scan *sc, const struct toks *tv,
				   size_t a, size_t b)
{
	size_t j, term = a, fstart = a;
	int d = 0, factors = 0, nonconst = 0;
	bool has_sizeof = false;

	for (j = a; j <= b; j++) {
		const struct tok *t = j < b ? &tv->v[j] : NULL;
		bool binop_star = false, term_end = !t;

		if (t && (is(t, "(") || is(t, "["))) {
			d++;
			continue;
		}
		if (t && (is(t, ")") || is(t, "]"))) {
			d--;
			continue;
		}
		if (t && d == 0 && (is(t, "+") || is(t, "-")) && j > term &&
		    operand_end(&tv->v[j - 1]))
			term_end = true;
		/* `sizeof *p` dereferences p: that star multiplies nothing */
		if (t && d == 0 && is(t, "*") && j > fstart &&
		    operand_end(&tv->v[j - 1]) &&
		    !is_unevaluated(&tv->v[j - 1]))
			binop_star = true;
		if (binop_star || term_end) {
			if (j > fstart) {
				factors++;
				if (is(&tv->v[fstart], "sizeof"))
					has_sizeof = true;
				else if (!expr_const(tv, fstart, j) &&
					 !(sc && count_allocated_before(
							 sc, tv, fstart, j)))
					nonconst++;
			}
			fstart = j + 1;
		}
		if (term_end) {
			/* n * sizeof(x) or a * b; n * 2 is left alone */
			if (factors >= 2 &&
			    (nonconst >= 2 || (nonconst && has_sizeof)))
				return true;
			factors = nonconst = 0;
			has_sizeof = false;
			term = j + 1;
		}
	}
	return false;
}

/* The pre-image of the file: none for a file the patch adds. */
static const struct sb *pre_image(struct scan *sc)
{
	return image_read(&sc->pre, sc->ctx, sc->ctx->pre_tree, sc->old_path);
}

/* Does the line (blanks left out) call one of the allocators? */
static bool calls_allocator(const char *line)
{
	size_t k, n;
	const char *p;

	for (k = 0; k < ARRAY_SIZE(size_fns); k++) {
		n = strlen(size_fns[k].name);
		for (p = strstr(line, size_fns[k].name); p;
		     p = strstr(p + 1, size_fns[k].name))
			if (p[n] == '(' &&
			    (p == line || !is_ident_char((unsigned char)p[-1])))
				return true;
	}
	return false;
}

/*
 * Did the file, before the patch, already allocate by the count [a, b)
 * (`qp->sq.wqe_cnt`) times something, on one line? Then a new array of
 * that many entries next to it (rdma-core 3ad1d4c0fe33: wr_data beside
 * wrid) trusts the count as the code did, and an overflow would be as
 * old as the first allocation.
 */
static bool count_allocated_before(struct scan *sc, const struct toks *tv,
				   size_t a, size_t b)
{
	const struct sb *pre = pre_image(sc);
	char name[RULES_MAX_NAME], line[512];
	const char *p, *end, *nl, *q;
	size_t n, len, k;

	if (!pre || !tokens_text(tv, a, b, name, sizeof(name)) ||
	    !(len = strlen(name)))
		return false;
	for (p = pre->buf, end = pre->buf + pre->len; p < end;
	     p = nl ? nl + 1 : end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		for (k = 0, q = p; q < p + n && k + 1 < sizeof(line); q++)
			if (!isspace((unsigned char)*q))
				line[k++] = *q;
		line[k] = '\0';
		if (!strstr(line, name) || !calls_allocator(line))
			continue;
		for (q = strstr(line, name); q; q = strstr(q + 1, name)) {
			bool before = q > line + 1 && q[-1] == '*' &&
				      (is_ident_char((unsigned char)q[-2]) ||
				       q[-2] == ')' || q[-2] == ']') &&
				      !is_ident_char((unsigned char)q[len]) &&
				      (!q[len] || !strchr(".-[", q[len]));
			bool after = q[len] == '*' &&
				     (q == line ||
				      (!is_ident_char((unsigned char)q[-1]) &&
				       !strchr(".>*", q[-1])));

			if (before || after)
				return true;
		}
	}
	return false;
}

/*
 * Did the hunk's pre-image, on a line the patch removes, assign the same
 * lvalue from the same allocator with an unchecked product too? Then the
 * patch rewrote that allocation (renamed a factor, re-indented it) and
 * an overflow, if any, is as old as the code.
 */
static bool rewrites_product(const struct scan *sc, size_t i,
			     const struct sizefn *sf)
{
	const struct toks *tv = &sc->tk;
	const struct rv_hunk *h = sc->h;
	struct toks pre = {0};
	struct lexer lx = {false, false, 0};
	size_t close, lhs, clen, k, a, b, pclose, plhs, pclen;
	char name[RULES_MAX_NAME], pname[RULES_MAX_NAME];
	bool found = false;

	if (!alloc_assignment(tv, i, &close, &lhs, &clen) ||
	    !tokens_text(tv, lhs, lhs + clen, name, sizeof(name)))
		return false;
	for (k = 0; k < h->nlines; k++)
		if (h->lines[k].origin != '+' && h->lines[k].text)
			lex_text_line(&pre, &lx, h->lines[k].text, (unsigned)k);
	if (!pre.full)
		match_parens(&pre);
	for (k = 0; !pre.full && !found && k + 1 < pre.n; k++) {
		if (!is(&pre.v[k], sf->name) ||
		    h->lines[pre.v[k].line].origin != '-' ||
		    !alloc_assignment(&pre, k, &pclose, &plhs, &pclen) ||
		    !tokens_text(&pre, plhs, plhs + pclen, pname,
				 sizeof(pname)) ||
		    strcmp(name, pname))
			continue;
		found = call_arg(&pre, k + 1, pclose, sf->size_arg, &a, &b) &&
			size_product_unchecked(NULL, &pre, a, b);
	}
	toks_release(&pre);
	return found;
}

/*
 * Is the size [a, b) of a realloc() `(n + 1) * size`, an array grown by
 * one entry (rdma-core aac8d6f8b1b5, a config line at a time)? Each count
 * it reaches was allocated one entry smaller just before, so the product
 * cannot wrap before memory runs out.
 */
static bool grows_by_one(const struct toks *tv, const struct sizefn *sf,
			 size_t a, size_t b)
{
	size_t j, e, k;

	if (!strstr(sf->name, "realloc"))
		return false;
	for (j = a; j < b; j++) {
		if (!is(&tv->v[j], "(") || (j > a && !is(&tv->v[j - 1], "*")))
			continue;
		e = close_paren(tv, j);
		if (e == SIZE_MAX || e >= b || e < j + 4 ||
		    !is(&tv->v[e - 2], "+") || !is(&tv->v[e - 1], "1"))
			continue;
		if (e + 1 < b && !is(&tv->v[e + 1], "*"))
			continue;
		for (k = j + 1; k < e - 2; k++) /* n: a name, a.b or p->c */
			if (tv->v[k].kind != T_ID && !is(&tv->v[k], ".") &&
			    !is(&tv->v[k], "->"))
				break;
		if (k == e - 2)
			return true;
	}
	return false;
}

static void rule_alloc_overflow(struct scan *sc)
{
	static const char *const guards[] = {
		"check_mul_overflow",
		"SIZE_MAX",
		"size_mul",
		"array_size",
		"array3_size",
		"struct_size",
		"__builtin_mul_overflow",
		"INT_MAX",
		"UINT_MAX",
		"ULONG_MAX",
		"U32_MAX",
		"SSIZE_MAX",
		"overflows_type",
	};
	const struct toks *tv = &sc->tk;
	size_t i, k, close, a, b, cand = 0, guard = SIZE_MAX;
	char fn[32], expr[RULES_MAX_NAME], title[512], expl[1024];

	/* an overflow guard earlier in the hunk: trust what follows it */
	for (i = 0; i < tv->n && guard == SIZE_MAX; i++)
		if (tv->v[i].kind == T_ID &&
		    is_in(&tv->v[i], guards, ARRAY_SIZE(guards)))
			guard = i;
	for (i = 0; i + 1 < tv->n && cand < RULES_MAX_CANDIDATES; i++) {
		const struct tok *t = &tv->v[i];
		const struct sizefn *sf = NULL;

		if (t->kind != T_ID || !tok_is(tv, i + 1, "(") ||
		    !tok_added(sc, i))
			continue;
		for (k = 0; k < ARRAY_SIZE(size_fns); k++)
			if (is(t, size_fns[k].name))
				sf = &size_fns[k];
		if (!sf ||
		    (i && (is(&tv->v[i - 1], "->") || is(&tv->v[i - 1], "."))))
			continue;
		close = close_paren(tv, i + 1);
		if (close == SIZE_MAX ||
		    !call_arg(tv, i + 1, close, sf->size_arg, &a, &b) ||
		    !size_product_unchecked(sc, tv, a, b))
			continue;
		cand++;
		if (guard < i || t->len >= sizeof(fn) ||
		    rewrites_product(sc, i, sf) || grows_by_one(tv, sf, a, b))
			continue;
		memcpy(fn, t->s, t->len);
		fn[t->len] = '\0';
		if (!tokens_text(tv, a, b, expr, sizeof(expr)))
			snprintf(expr, sizeof(expr), "the size");
		snprintf(title, sizeof(title),
			 "%s(%s) can overflow the size multiplication", fn,
			 expr);
		snprintf(expl, sizeof(expl),
			 "The size passed to %s() is a product with a factor "
			 "that is not a constant (`%s`). If that factor comes "
			 "from a user, a device or a file, the product can "
			 "wrap around and a buffer smaller than intended is "
			 "allocated, which later writes overflow. Use %s, "
			 "which checks the multiplication (or struct_size()/"
			 "array_size() for mixed sizes).",
			 fn, expr, sf->better);
		emit(sc, "alloc-overflow", RV_SEV_MEDIUM, t->line, t->line,
		     title, expl);
	}
}

/* ---- rule: use after free ------------------------------------------- */

struct freefn {
	const char *name;
	unsigned arg;
};

static const struct freefn free_fns[] = {
	{"free", 0},
	{"kfree", 0},
	{"vfree", 0},
	{"kvfree", 0},
	{"kfree_sensitive", 0},
	{"kzfree", 0},
	{"devm_kfree", 1},
	{"g_free", 0},
	{"kvfree_sensitive", 0},
	{"kmem_cache_free", 1},
	{"kfree_skb", 0},
	{"consume_skb", 0},
	{"dev_kfree_skb", 0},
	{"dev_kfree_skb_any", 0},
	{"dev_kfree_skb_irq", 0},
};

static const struct freefn *find_free_fn(const struct tok *t)
{
	size_t k;

	if (t->kind != T_ID)
		return NULL;
	for (k = 0; k < ARRAY_SIZE(free_fns); k++)
		if (is(t, free_fns[k].name))
			return &free_fns[k];
	return NULL;
}

/*
 * The first dereference of the chain a/clen from token from to the end
 * of the statement (at most RULES_WINDOW tokens past start); SIZE_MAX
 * when none.
 */
static size_t deref_in_statement(const struct toks *tv, size_t from,
				 size_t start, size_t a, size_t clen)
{
	size_t e;

	for (e = from;
	     e < tv->n && e < start + RULES_WINDOW && !is(&tv->v[e], ";"); e++)
		if (chain_at(tv, e, a, clen) && chain_deref(tv, e, clen))
			return e;
	return SIZE_MAX;
}

/*
 * After a free whose call ends at close (block depth depth), the first
 * use of the freed chain a/clen on the same path: a dereference, or
 * (*dfree) a second free; SIZE_MAX when none.
 */
static size_t use_after_free(const struct toks *tv, size_t close, int depth,
			     size_t a, size_t clen, bool *dfree)
{
	size_t j, e;

	*dfree = false;
	for (j = close + 2; j < tv->n && j < close + 2 + RULES_WINDOW; j++) {
		const struct tok *u = &tv->v[j];

		if (u->depth < depth)
			break; /* the block ended: other paths join */
		if (u->kind == T_ID && tok_is(tv, j + 1, ":") &&
		    stmt_boundary(tv, prev_idx(j)))
			break; /* a label: other paths join */
		if (is_unevaluated(u) && tok_is(tv, j + 1, "(")) {
			e = close_paren(tv, j + 1);
			if (e == SIZE_MAX)
				break;
			j = e;
			continue;
		}
		if (u->kind == T_ID &&
		    (is(u, "goto") || is(u, "break") || is(u, "continue")))
			break;
		if (u->kind == T_ID && is(u, "return"))
			return deref_in_statement(tv, j + 1, j, a, clen);
		if (!chain_at(tv, j, a, clen))
			continue;
		if (j && is(&tv->v[j - 1], "&") &&
		    !tok_is(tv, j + clen, "->") && !tok_is(tv, j + clen, "["))
			break; /* its address escapes: may be reset */
		if (j >= 2 && is(&tv->v[j - 1], "(") &&
		    tv->v[j - 2].kind == T_ID &&
		    memmem(tv->v[j - 2].s, tv->v[j - 2].len, "for_each", 8))
			break; /* an iterator assigns it */
		if (j >= 2 && is(&tv->v[j - 1], "(") &&
		    find_free_fn(&tv->v[j - 2]) && tok_is(tv, j + clen, ")") &&
		    find_free_fn(&tv->v[j - 2])->arg == 0 &&
		    stmt_boundary(tv, prev_idx(j - 2))) {
			*dfree = true;
			return j;
		}
		if (tok_is(tv, j + clen, "=") && !(j && is(&tv->v[j - 1], "*")))
			/* reassigned; the right side may still use it */
			return deref_in_statement(tv, j + clen + 1, j, a, clen);
		if (chain_deref(tv, j, clen))
			return j;
	}
	return SIZE_MAX;
}

static void rule_use_after_free(struct scan *sc)
{
	const struct toks *tv = &sc->tk;
	size_t i, close, a, b, clen, use, cand = 0;
	char fn[32], name[RULES_MAX_NAME], title[512], expl[1024];

	for (i = 0; i + 1 < tv->n && cand < RULES_MAX_CANDIDATES; i++) {
		const struct tok *t = &tv->v[i];
		const struct freefn *ff = find_free_fn(t);
		bool dfree;

		if (!ff || !tok_is(tv, i + 1, "(") ||
		    !stmt_boundary(tv, prev_idx(i)))
			continue;
		close = close_paren(tv, i + 1);
		if (close == SIZE_MAX || !tok_is(tv, close + 1, ";") ||
		    !call_arg(tv, i + 1, close, ff->arg, &a, &b))
			continue;
		clen = chain_len(tv, a);
		if (!clen || a + clen != b)
			continue;
		cand++;
		use = use_after_free(tv, close, t->depth, a, clen, &dfree);
		/* the patch must add the free or the use after it */
		if (use == SIZE_MAX || t->len >= sizeof(fn) ||
		    (!tok_added(sc, i) && !tok_added(sc, use)) ||
		    !tokens_text(tv, a, b, name, sizeof(name)))
			continue;
		memcpy(fn, t->s, t->len);
		fn[t->len] = '\0';
		if (dfree) {
			snprintf(title, sizeof(title), "`%s` is freed twice",
				 name);
			snprintf(expl, sizeof(expl),
				 "%s(%s) at line %d releases the memory, and "
				 "line %d frees the same pointer again with "
				 "nothing assigning it in between. A double "
				 "free corrupts the allocator's state and is "
				 "often exploitable. Drop one of the calls, or "
				 "set the pointer to NULL after the first.",
				 fn, name, sc->pl[t->line].new_no,
				 sc->pl[tv->v[use].line].new_no);
			emit(sc, "double-free", RV_SEV_HIGH, t->line,
			     tv->v[use].line, title, expl);
			continue;
		}
		snprintf(title, sizeof(title), "`%s` is used after %s()", name,
			 fn);
		snprintf(expl, sizeof(expl),
			 "%s(%s) at line %d releases the memory, and line %d "
			 "dereferences `%s` again with nothing assigning it in "
			 "between. The memory may already belong to someone "
			 "else, so this reads or corrupts unrelated data. Use "
			 "what is needed before freeing it, or free it after "
			 "the last use.",
			 fn, name, sc->pl[t->line].new_no,
			 sc->pl[tv->v[use].line].new_no, name);
		emit(sc, "use-after-free", RV_SEV_HIGH, t->line,
		     tv->v[use].line, title, expl);
	}
}

/* ---- the voter ------------------------------------------------------ */

static bool is_c_path(const char *path)
{
	static const char *const exts[] = {".c",   ".h",  ".cc", ".cpp",
					   ".cxx", ".hh", ".hpp"};
	size_t n, k, e;

	if (!path)
		return false;
	n = strlen(path);
	for (k = 0; k < ARRAY_SIZE(exts); k++) {
		e = strlen(exts[k]);
		if (n > e && !strcmp(path + n - e, exts[k]))
			return true;
	}
	return false;
}

static void scan_hunk(struct scan *sc)
{
	const struct rv_hunk *h = sc->h;
	struct lexer lx = {false, false, 0};
	size_t k;
	bool any_added = false;

	sc->npl = 0;
	sc->tk.n = 0;
	sc->tk.full = false;
	if (h->nlines > RULES_MAX_LINES)
		return;
	for (k = 0; k < h->nlines; k++)
		if (h->lines[k].origin == '+')
			any_added = true;
	if (!any_added)
		return;
	for (k = 0; k < h->nlines; k++) {
		const struct rv_line *l = &h->lines[k];
		struct pline *p;

		if (l->origin == '-')
			continue;
		p = &sc->pl[sc->npl];
		p->text = l->text;
		p->new_no = l->new_no;
		p->added = l->origin == '+';
		p->hidx = k;
		lex_text_line(&sc->tk, &lx, l->text, (unsigned)sc->npl);
		sc->npl++;
	}
	sc->after_state = 0;
	sc->hunk_findings = 0;
	if (sc->tk.full)
		return; /* too big to judge: stay silent */
	match_parens(&sc->tk);
	rule_unchecked_alloc(sc);
	rule_lock_leak(sc);
	rule_unsafe_string(sc);
	rule_alloc_overflow(sc);
	rule_use_after_free(sc);
}

static int rules_review(const struct rv_voter *v, const struct rv_context *ctx,
			struct rv_findings *out, struct errmsg *err)
{
	struct rv_diff *own = NULL;
	const struct rv_diff *d = ctx->diff;
	struct scan sc;
	size_t fi, hi, maxl = 0;
	int ret = 0;

	if (!d && ctx->patch && ctx->patch->diff) {
		ret = rv_diff_parse(&own, ctx->patch->diff,
				    ctx->patch->diff_len, err);
		if (ret)
			return ret;
		d = own;
	}
	if (!d)
		return 0;
	memset(&sc, 0, sizeof(sc));
	sc.ctx = ctx;
	sc.out = out;
	removed_lines(d, &sc.removed, &sc.nremoved);
	for (fi = 0; fi < d->nfiles; fi++)
		for (hi = 0; hi < d->files[fi].nhunks; hi++)
			if (d->files[fi].hunks[hi].nlines > maxl)
				maxl = d->files[fi].hunks[hi].nlines;
	if (maxl > RULES_MAX_LINES)
		maxl = RULES_MAX_LINES;
	sc.pl = xcalloc(maxl ? maxl : 1, sizeof(*sc.pl));
	for (fi = 0; fi < d->nfiles; fi++) {
		const struct rv_file *f = &d->files[fi];

		if (f->binary || !f->new_path || !is_c_path(f->new_path))
			continue;
		sc.path = f->new_path;
		sc.old_path = f->old_path;
		for (hi = 0; hi < f->nhunks; hi++) {
			sc.h = &f->hunks[hi];
			scan_hunk(&sc);
		}
		image_reset(&sc.post);
		image_reset(&sc.pre);
	}
	free(sc.pl);
	free(sc.removed);
	toks_release(&sc.tk);
	toks_release(&sc.after);
	sb_release(&sc.after_text);
	rv_diff_free(own);
	return ret;
}

const struct rv_voter rv_voter_rules = {"rules", 1.0, rules_review, NULL};
