// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-shape.c - code as a shape: a C token stream with the names and
 * literals abstracted, so a past bug that comes back with every variable,
 * field, type and function renamed still matches it.
 *
 * What stays: keywords, operators, punctuation, 0 and 1, and calls into
 * well-known APIs (libc, and the tree's own API prefixes, learned from
 * the history as the prefixes shared by the most distinct callees). What
 * goes: other names (one symbol for all), other numbers, strings,
 * comments, preprocessor lines and whitespace. A stream is cut into
 * shingles of HIST_SHAPE_K symbols; winnowing (the smallest hash of every
 * window of HIST_SHAPE_W shingles) keeps about a third of them and still
 * finds every shared run of K + W - 1 symbols.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "history-int.h"

/* Symbols of what is abstracted. */
#define SYM_IDENT "$"
#define SYM_NUM "#"
#define SYM_STR "\""
#define SYM_CHAR "'"
#define SYM_BREAK "\n" /* between hunks: no shingle spans two */

static const char *const c_keywords[] = {
	"auto",	    "break",	"case",	    "char",	     "const",
	"continue", "default",	"do",	    "double",	     "else",
	"enum",	    "extern",	"float",    "for",	     "goto",
	"if",	    "inline",	"int",	    "long",	     "register",
	"return",   "short",	"signed",   "sizeof",	     "static",
	"struct",   "switch",	"typedef",  "union",	     "unsigned",
	"void",	    "volatile", "while",    "bool",	     "true",
	"false",    "NULL",	"size_t",   "ssize_t",	     "uint8_t",
	"uint16_t", "uint32_t", "uint64_t", "int8_t",	     "int16_t",
	"int32_t",  "int64_t",	"__u8",	    "__u16",	     "__u32",
	"__u64",    "__s8",	"__s16",    "__s32",	     "__s64",
	"__be16",   "__be32",	"__be64",   "__le16",	     "__le32",
	"__le64",   "u8",	"u16",	    "u32",	     "u64",
	"off_t",    "FILE",	"errno",    "__attribute__",
};

/* libc calls whose misuse is a bug class of its own. */
static const char *const libc_calls[] = {
	"malloc",
	"calloc",
	"realloc",
	"free",
	"strdup",
	"strndup",
	"memcpy",
	"memmove",
	"memset",
	"memcmp",
	"strcpy",
	"strncpy",
	"strcat",
	"strncat",
	"strlen",
	"strnlen",
	"strcmp",
	"strncmp",
	"strcasecmp",
	"strchr",
	"strrchr",
	"strstr",
	"strtok",
	"strtol",
	"strtoul",
	"strtoull",
	"strtoll",
	"atoi",
	"atol",
	"sprintf",
	"snprintf",
	"vsnprintf",
	"printf",
	"fprintf",
	"sscanf",
	"fopen",
	"fclose",
	"fread",
	"fwrite",
	"fgets",
	"fputs",
	"open",
	"close",
	"read",
	"write",
	"socket",
	"bind",
	"connect",
	"send",
	"recv",
	"sendmsg",
	"recvmsg",
	"ioctl",
	"mmap",
	"munmap",
	"getenv",
	"exit",
	"abort",
	"assert",
	"perror",
	"qsort",
	"asprintf",
	"getline",
	"opendir",
	"readdir",
	"closedir",
	"pthread_mutex_lock",
	"pthread_mutex_unlock",
};

static bool in_list(const char *const *v, size_t n, const char *w, size_t len)
{
	size_t i;

	/* The first byte first: most names differ there. */
	for (i = 0; i < n; i++)
		if (v[i][0] == w[0] && !strncmp(v[i], w, len) && !v[i][len])
			return true;
	return false;
}

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_';
}

/* "rta_" of "rta_getattr_u32": up to the first '_' after 2+ characters. */
static size_t api_prefix_len(const char *w, size_t len)
{
	size_t i;

	for (i = 2; i + 1 < len && i < HIST_API_PREFIX_MAX - 1; i++)
		if (w[i] == '_')
			return i + 1;
	return 0;
}

bool hist_api_keeps(const struct hist_api *api, const char *w, size_t len)
{
	size_t p, i;

	if (in_list(libc_calls, ARRAY_SIZE(libc_calls), w, len))
		return true;
	if (!api || !(p = api_prefix_len(w, len)))
		return false;
	for (i = 0; i < api->n; i++)
		if (strlen(api->v[i]) == p && !memcmp(api->v[i], w, p))
			return true;
	return false;
}

/* Three- and two-character operators, longest first. */
static size_t op_len(const char *p)
{
	static const char *const ops3[] = {"<<=", ">>=", "..."};
	static const char *const ops2[] = {
		"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
		"||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops3); i++)
		if (!strncmp(p, ops3[i], 3))
			return 3;
	for (i = 0; i < ARRAY_SIZE(ops2); i++)
		if (!strncmp(p, ops2[i], 2))
			return 2;
	return 1;
}

static void push(struct hist_shape *out, const char *s, size_t len,
		 const char *sym, size_t symlen, uint32_t line, bool ident)
{
	struct hist_stok *t;

	ALLOC_GROW(out->v, out->n + 1, out->alloc);
	t = &out->v[out->n++];
	t->s = s;
	t->len = (uint32_t)len;
	t->line = line;
	t->sym = hist_hash(sym, symlen);
	t->ident = ident;
}

/* Is the rest of this line (after blanks) a comment continuation? */
static bool comment_line(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p != '*')
		return false;
	/* A star alone, then a blank or a slash: a block comment's line. */
	return p + 1 >= end || p[1] == '/' || p[1] == ' ' || p[1] == '\t' ||
	       p[1] == '\n';
}

void hist_shape_lex(const char *text, size_t len, const struct hist_api *api,
		    struct hist_shape *out, size_t max_tokens)
{
	const char *p = text, *end = text + len;
	uint32_t line = 0;
	bool bol = true, in_comment = false;

	while (p < end && *p && out->n < max_tokens) {
		const char *w = p;
		size_t n;

		if (*p == '\n') {
			line++;
			bol = true;
			p++;
			continue;
		}
		if (in_comment) {
			if (p + 1 < end && p[0] == '*' && p[1] == '/') {
				in_comment = false;
				p += 2;
			} else {
				p++;
			}
			continue;
		}
		if (bol) {
			const char *q = p;

			bol = false;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			/* A preprocessor line or a comment's inner line. */
			if ((q < end && *q == '#') || comment_line(q, end)) {
				while (p < end && *p && *p != '\n')
					p++;
				continue;
			}
		}
		if (isspace((unsigned char)*p) || (unsigned char)*p < 0x20 ||
		    (unsigned char)*p >= 0x7f) {
			p++; /* blanks, and junk that is no C token */
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '/') {
			while (p < end && *p && *p != '\n')
				p++;
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			in_comment = true;
			p += 2;
			continue;
		}
		if (is_ident_start((unsigned char)*p)) {
			const char *q;

			while (p < end && is_ident_char((unsigned char)*p))
				p++;
			n = (size_t)(p - w);
			for (q = p; q < end && (*q == ' ' || *q == '\t'); q++)
				;
			if (in_list(c_keywords, ARRAY_SIZE(c_keywords), w, n) ||
			    (q < end && *q == '(' && hist_api_keeps(api, w, n)))
				push(out, w, n, w, n, line, false);
			else
				push(out, w, n, SYM_IDENT, 1, line, true);
			continue;
		}
		if (isdigit((unsigned char)*p) ||
		    (*p == '.' && p + 1 < end &&
		     isdigit((unsigned char)p[1]))) {
			while (p < end &&
			       (is_ident_char((unsigned char)*p) || *p == '.'))
				p++;
			n = (size_t)(p - w);
			/* 0 and 1 carry meaning: "len - 1", "== 0". */
			if (n == 1 && (*w == '0' || *w == '1'))
				push(out, w, n, w, n, line, false);
			else
				push(out, w, n, SYM_NUM, 1, line, false);
			continue;
		}
		if (*p == '"' || *p == '\'') {
			char quote = *p++;

			/* A literal ends at its quote or at the line's end. */
			while (p < end && *p && *p != quote && *p != '\n') {
				if (*p == '\\' && p + 1 < end && p[1] != '\n')
					p++;
				p++;
			}
			if (p < end && *p == quote)
				p++;
			push(out, w, (size_t)(p - w),
			     quote == '"' ? SYM_STR : SYM_CHAR, 1, line, false);
			continue;
		}
		n = op_len(p);
		if (p + n > end)
			n = 1;
		push(out, w, n, w, n, line, false);
		p += n;
	}
}

void hist_shape_break(struct hist_shape *out)
{
	push(out, "", 0, SYM_BREAK, 1, out->n ? out->v[out->n - 1].line : 0,
	     false);
}

void hist_shape_release(struct hist_shape *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void hist_shape_text(const struct hist_shape *s, struct sb *out)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct hist_stok *t = &s->v[i];

		if (out->len)
			sb_addch(out, ' ');
		if (t->ident)
			sb_adds(out, SYM_IDENT);
		else if (t->sym == hist_hash(SYM_NUM, 1))
			sb_adds(out, SYM_NUM);
		else if (t->sym == hist_hash(SYM_STR, 1))
			sb_adds(out, SYM_STR);
		else if (t->sym == hist_hash(SYM_CHAR, 1))
			sb_adds(out, SYM_CHAR);
		else if (t->sym == hist_hash(SYM_BREAK, 1))
			sb_adds(out, "|");
		else
			sb_add(out, t->s, t->len);
	}
}

static uint64_t shingle_at(const struct hist_shape *s, size_t i)
{
	uint64_t h = 1469598103934665603ULL;
	size_t j;

	for (j = 0; j < HIST_SHAPE_K; j++) {
		h ^= s->v[i + j].sym;
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	/* Positive as an SQLite integer. */
	return h & 0x7fffffffffffffffULL;
}

static bool spans_break(const struct hist_shape *s, size_t i)
{
	static uint64_t brk;
	size_t j;

	if (!brk)
		brk = hist_hash(SYM_BREAK, 1);
	for (j = 0; j < HIST_SHAPE_K; j++)
		if (s->v[i + j].sym == brk)
			return true;
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t hist_shape_shingles(const struct hist_shape *s, bool winnow,
			   uint64_t **out)
{
	size_t n = s->n >= HIST_SHAPE_K ? s->n - HIST_SHAPE_K + 1 : 0;
	uint64_t *all, *v;
	size_t i, j, nv = 0, last = (size_t)-1;

	*out = NULL;
	if (!n)
		return 0;
	all = xmalloc(n * sizeof(*all));
	for (i = 0; i < n; i++)
		all[i] = spans_break(s, i) ? UINT64_MAX : shingle_at(s, i);
	v = xmalloc(n * sizeof(*v));
	if (!winnow || n <= HIST_SHAPE_W) {
		for (i = 0; i < n; i++)
			if (all[i] != UINT64_MAX)
				v[nv++] = all[i];
	} else {
		for (i = 0; i + HIST_SHAPE_W <= n; i++) {
			size_t m = i;

			/* The rightmost minimum, as in Schleimer et al. */
			for (j = i + 1; j < i + HIST_SHAPE_W; j++)
				if (all[j] <= all[m])
					m = j;
			if (m != last && all[m] != UINT64_MAX)
				v[nv++] = all[m];
			last = m;
		}
	}
	free(all);
	if (nv > 1) {
		qsort(v, nv, sizeof(*v), cmp_u64);
		for (i = j = 0; i < nv; i++)
			if (!j || v[j - 1] != v[i])
				v[j++] = v[i];
		nv = j;
	}
	if (!nv) {
		free(v);
		v = NULL;
	}
	*out = v;
	return nv;
}

/* ---- learning the tree's API prefixes -------------------------------- */

static size_t *callee_slot(size_t *slot, size_t cap,
			   const struct hist_api_counts *c, const char *w,
			   size_t n, uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);

	while (slot[i] &&
	       (c->v[slot[i] - 1].hash != h || c->v[slot[i] - 1].len != n ||
		memcmp(c->v[slot[i] - 1].name, w, n)))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

/* The index of callee w in c, or c->n when it is not there. */
static size_t callee_find(const struct hist_api_counts *c, const char *w,
			  size_t n)
{
	size_t *s;

	if (!c->cap)
		return c->n;
	s = callee_slot(c->slot, c->cap, c, w, n, hist_hash(w, n));
	return *s ? *s - 1 : c->n;
}

static void callee_slot_set(struct hist_api_counts *c, size_t idx)
{
	size_t i;

	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		size_t *slot = xcalloc(cap, sizeof(*slot));

		for (i = 0; i + 1 < c->n; i++)
			*callee_slot(slot, cap, c, c->v[i].name, c->v[i].len,
				     c->v[i].hash) = i + 1;
		free(c->slot);
		c->slot = slot;
		c->cap = cap;
	}
	*callee_slot(c->slot, c->cap, c, c->v[idx].name, c->v[idx].len,
		     c->v[idx].hash) = idx + 1;
}

void hist_api_count(struct hist_api_counts *c, const char *text,
		    const char *file)
{
	uint64_t fh = hist_hash(file ? file : "", file ? strlen(file) : 0);
	const char *p = text;

	while (p && *p) {
		const char *w;
		size_t n, pl, i;

		if (!is_ident_start((unsigned char)*p)) {
			if (isdigit((unsigned char)*p))
				while (is_ident_char((unsigned char)*p))
					p++;
			else
				p++;
			continue;
		}
		w = p;
		while (is_ident_char((unsigned char)*p))
			p++;
		n = (size_t)(p - w);
		if (*p != '(' || !(pl = api_prefix_len(w, n)))
			continue;
		i = callee_find(c, w, n);
		if (i == c->n) {
			if (c->n >= HIST_API_MAX_CALLEES)
				continue;
			ALLOC_GROW(c->v, c->n + 1, c->alloc);
			memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
			c->v[c->n].name = xstrndup(w, n);
			c->v[c->n].len = n;
			c->v[c->n].hash = hist_hash(w, n);
			c->n++;
			callee_slot_set(c, c->n - 1);
		}
		/* The files it is called from, up to HIST_API_SPREAD. */
		for (pl = 0; pl < c->v[i].nfiles; pl++)
			if (c->v[i].files[pl] == fh)
				break;
		if (pl == c->v[i].nfiles && pl < HIST_API_SPREAD)
			c->v[i].files[c->v[i].nfiles++] = fh;
	}
}

void hist_api_counts_release(struct hist_api_counts *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	free(c->slot);
	memset(c, 0, sizeof(*c));
}

struct pcount {
	char p[HIST_API_PREFIX_MAX];
	size_t n;
};

static int cmp_pcount(const void *a, const void *b)
{
	const struct pcount *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->p, y->p);
}

void hist_api_choose(const struct hist_api_counts *c, struct hist_api *api)
{
	struct pcount *pc = NULL;
	size_t npc = 0, alloc = 0, i, j;

	memset(api, 0, sizeof(*api));
	for (i = 0; i < c->n; i++) {
		size_t pl = api_prefix_len(c->v[i].name, c->v[i].len);

		/*
		 * An API is called from many files; a file's own helpers
		 * (do_show(), parse_args()) share a prefix but not files.
		 */
		if (c->v[i].nfiles < HIST_API_SPREAD)
			continue;
		for (j = 0; j < npc; j++)
			if (strlen(pc[j].p) == pl &&
			    !memcmp(pc[j].p, c->v[i].name, pl))
				break;
		if (j == npc) {
			ALLOC_GROW(pc, npc + 1, alloc);
			memcpy(pc[npc].p, c->v[i].name, pl);
			pc[npc].p[pl] = '\0';
			pc[npc].n = 0;
			npc++;
		}
		pc[j].n++;
	}
	if (npc)
		qsort(pc, npc, sizeof(*pc), cmp_pcount);
	for (i = 0; i < npc && api->n < HIST_API_MAX; i++)
		if (pc[i].n >= HIST_API_MIN_CALLEES)
			memcpy(api->v[api->n++], pc[i].p, sizeof(pc[i].p));
	free(pc);
}

void hist_api_format(const struct hist_api *api, struct sb *out)
{
	size_t i;

	for (i = 0; i < api->n; i++)
		sb_addf(out, "%s%s", i ? " " : "", api->v[i]);
}

void hist_api_parse(const char *s, struct hist_api *api)
{
	const char *p = s;

	memset(api, 0, sizeof(*api));
	while (p && *p && api->n < HIST_API_MAX) {
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n && n < HIST_API_PREFIX_MAX) {
			memcpy(api->v[api->n], p, n);
			api->v[api->n][n] = '\0';
			api->n++;
		}
		p = e ? e + 1 : p + n;
	}
}
