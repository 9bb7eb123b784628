// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-risk.c - the risk model: what a commit is (its size and
 * spread, the history of the code it touches, its author's experience,
 * its purpose, what its added lines do, and what the fixes known so far
 * say about its files, author and words), computed by `quorum index`
 * from the commits before it only, and a regularised logistic
 * regression fitted per repository on which commits were later named by
 * a Fixes:; a score is the commit's place among the history's.
 *
 * The same counting runs on a new patch (hist_risk_patch) from the diff
 * and the state the index left, so a review scores what eval measured.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "history-int.h"
#include "auc.h"
#include "linsolve.h"

#define DAY 86400.0
#define HALF_FIXES (365 * DAY)
#define HALF_CHURN (90 * DAY)
#define HALF_EXP (180 * DAY)
/* Blobs larger than this are not diffed (generated tables, data). */
#define RISK_MAX_BLOB ((size_t)1 << 20)
/* Files of one commit diffed with content; the rest count by size. */
#define RISK_MAX_FILES 64
#define RISK_MAX_AUTHORS 16 /* distinct authors remembered per file */
/* Commits' worth of the tree's bug rate a file's or author's starts at. */
#define RISK_RATE_PRIOR 10.0
/* Files, functions and directories a commit's label is counted in. */
#define RISK_MAX_FOOT 64

static const struct {
	const char *name;
	bool count; /* log1p in the model */
	/*
	 * Not offered to the model: counts that only grow as a tree ages
	 * (commits and fixes of a file ever, its authors ever, the
	 * author's commits ever) put next year's commits outside the range
	 * the model was fitted on. On rdma-core the author's commit count,
	 * picked on held-out rows, cost months of 2019 AUC 0.3-0.5. Their
	 * recency-weighted forms are offered instead; all are stored.
	 */
	bool grows;
} finfo[HR_N] = {
	[HR_LA] = {"la", true, false},
	[HR_LD] = {"ld", true, false},
	[HR_LA_CODE] = {"la_code", true, false},
	[HR_NF] = {"nf", true, false},
	[HR_ND] = {"nd", true, false},
	[HR_NS] = {"ns", true, false},
	[HR_ENTROPY] = {"entropy", false, false},
	[HR_NEWFILES] = {"new_files", true, false},
	[HR_FUNCS] = {"funcs", true, false},
	[HR_NUC] = {"nuc", true, true},
	[HR_FIXES] = {"file_fixes", true, true},
	[HR_FIXES_YEAR] = {"file_fixes_recent", true, false},
	[HR_FUNC_FIXES] = {"func_fixes", true, false},
	[HR_NDEV] = {"ndev", true, true},
	[HR_AGE] = {"age_days", true, false},
	[HR_CHURN] = {"churn", true, false},
	[HR_EXP] = {"exp", true, true},
	[HR_REXP] = {"rexp", true, false},
	[HR_SEXP] = {"sexp", true, true},
	[HR_ISFIX] = {"is_fix", false, false},
	[HR_REVERT] = {"is_revert", false, false},
	[HR_FEATURE] = {"is_feature", false, false},
	[HR_MSGLINES] = {"msg_lines", true, false},
	[HR_ALLOC] = {"allocs", true, false},
	[HR_FREE] = {"frees", true, false},
	[HR_LOCK] = {"locks", true, false},
	[HR_UNLOCK] = {"unlocks", true, false},
	[HR_GOTO] = {"gotos", true, false},
	[HR_ERRPATH] = {"error_paths", true, false},
	[HR_PTRARITH] = {"ptr_arith", true, false},
	[HR_CAST] = {"casts", true, false},
	[HR_SIZEMUL] = {"size_mults", true, false},
	[HR_NEWFUNC] = {"new_funcs", true, false},
	[HR_COND] = {"conditions", true, false},
	[HR_LOOP] = {"loops", true, false},
	[HR_COPY] = {"copies", true, false},
	[HR_DEL_CHECK] = {"removed_checks", true, false},
	[HR_TESTLINES] = {"test_lines", true, false},
	[HR_FILE_BUGS] = {"file_bugs", true, true},
	[HR_FILE_BUGS_RECENT] = {"file_bugs_recent", true, false},
	[HR_FILE_BUGRATE] = {"file_bug_rate", false, false},
	[HR_FUNC_BUGS] = {"func_bugs", true, false},
	[HR_DIR_BUGRATE] = {"dir_bug_rate", false, false},
	[HR_AUTHOR_BUGS] = {"author_bugs", true, true},
	[HR_AUTHOR_BUGRATE] = {"author_bug_rate", false, false},
	[HR_WORDS_CODE] = {"words_code", false, false},
	[HR_WORDS_SUBJECT] = {"words_subject", false, false},
	[HR_LA_WEIGHTED] = {"la_weighted", true, false},
	[HR_GROUND] = {"grounding", false, false},
	[HR_LA_WEIGHTED_RECENT] = {"la_weighted_recent", true, false},
};

const char *hist_feature_name(int i)
{
	return i >= 0 && i < HR_N ? finfo[i].name : "";
}

void hist_features(const struct hist_rfeat *r, double x[HF_N])
{
	int i;

	/* Counts are never below 0; a log ratio (words_*) may be. */
	for (i = 0; i < HR_N; i++)
		x[i] = finfo[i].count ? log1p(r->v[i] > 0 ? r->v[i] : 0)
				      : r->v[i];
	{
		const double *v = r->v;
		double code = v[HR_LA_CODE] + 1, la = v[HR_LA] + 1;

		x[HD_COND] = v[HR_COND] / code;
		x[HD_ERR] = (v[HR_ERRPATH] + v[HR_GOTO]) / code;
		x[HD_MEM] = (v[HR_ALLOC] + v[HR_FREE] + v[HR_COPY]) / code;
		x[HD_LOCK] = (v[HR_LOCK] + v[HR_UNLOCK]) / code;
		x[HD_CODE] = v[HR_LA_CODE] / la;
		x[HD_TEST] = v[HR_TESTLINES] / la;
		x[HD_DEL] = v[HR_LD] / (la + v[HR_LD]);
		x[HD_FIXES] = v[HR_FIXES_YEAR] / (v[HR_NF] + 1);
	}
}

static double decay(double v, int64_t from, int64_t to, double half)
{
	if (to <= from)
		return v;
	return v * exp2(-(double)(to - from) / half);
}

/* ---- what the lines do ---------------------------------------------- */

struct rfile {
	char *path;
	bool added, code, test, functions;
	double lines, la;
};

struct hist_racc {
	double v[HR_N];
	struct rfile *files;
	size_t nfiles, files_alloc;
	char **funcs; /* "path\tfunc" of the hunks, distinct */
	size_t nfuncs, funcs_alloc;
	struct rfile *cur;
	uint32_t *toks; /* the words of the added lines (TOK_CODE) */
	size_t ntoks, toks_alloc;
};

struct hist_racc *hist_racc_new(void)
{
	return xcalloc(1, sizeof(struct hist_racc));
}

void hist_racc_free(struct hist_racc *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nfiles; i++)
		free(a->files[i].path);
	for (i = 0; i < a->nfuncs; i++)
		free(a->funcs[i]);
	free(a->files);
	free(a->funcs);
	free(a->toks);
	free(a);
}

static bool is_test_path(const char *p)
{
	return !strncmp(p, "test", 4) || strstr(p, "/test") ||
	       strstr(p, "selftest");
}

/* C sources and headers: the files whose lines' words are counted. */
static bool is_code_path(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot && !strchr(dot, '/') &&
	       (!strcmp(dot, ".c") || !strcmp(dot, ".h"));
}

void hist_racc_file(struct hist_racc *a, const char *path, bool added)
{
	struct rfile *f;

	ALLOC_GROW(a->files, a->nfiles + 1, a->files_alloc);
	f = &a->files[a->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup_or_null(path);
	f->added = added;
	f->code = is_code_path(path);
	f->test = is_test_path(path);
	f->functions = hist_path_has_functions(path);
	a->cur = f;
}

void hist_racc_hunk(struct hist_racc *a, const char *section)
{
	char *func, *key;
	size_t i, n;

	if (!a->cur || !a->cur->functions)
		return;
	func = hist_function_name(section);
	if (!func)
		goto out;
	n = strlen(a->cur->path) + strlen(func) + 2;
	key = xmalloc(n);
	snprintf(key, n, "%s\t%s", a->cur->path, func);
	for (i = 0; i < a->nfuncs; i++)
		if (!strcmp(a->funcs[i], key))
			break;
	if (i < a->nfuncs || a->nfuncs >= 256) {
		free(key);
		goto out;
	}
	ALLOC_GROW(a->funcs, a->nfuncs + 1, a->funcs_alloc);
	a->funcs[a->nfuncs++] = key;
out:
	free(func);
}

static int count_str(const char *s, size_t len, const char *w)
{
	size_t wl = strlen(w);
	const char *p = s, *end = s + len, *f;
	int n = 0;

	while ((size_t)(end - p) >= wl &&
	       (f = memmem(p, (size_t)(end - p), w, wl))) {
		n++;
		p = f + wl;
	}
	return n;
}

/* The names calls are counted by (a call counts when its name has one). */
enum {
	CW_ALLOC,
	CW_STRDUP,
	CW_ASPRINTF,
	CW_FREE,
	CW_RELEASE,
	CW_DESTROY,
	CW_LOCK, /* but not unlock */
	CW_UNLOCK,
	CW_MEMCPY,
	CW_MEMMOVE,
	CW_STRCPY,
	CW_STRCAT,
	CW_SPRINTF,
	CW_N,
};

/* Count the calls of s by what their names contain, in one pass. */
static void count_calls(const char *s, size_t len, int n[CW_N])
{
	static const char *const words[CW_N] = {
		"alloc",   "strdup", "asprintf", "free",   "release",
		"destroy", "lock",   "unlock",	 "memcpy", "memmove",
		"strcpy",  "strcat", "sprintf",
	};
	size_t i = 0;

	memset(n, 0, CW_N * sizeof(*n));
	while (i < len) {
		char name[256];
		size_t b, e, k;
		int w;

		if (!(isalpha((unsigned char)s[i]) || s[i] == '_')) {
			i++;
			continue;
		}
		b = i;
		while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_'))
			i++;
		e = i;
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len || s[i] != '(' || e - b < 4)
			continue;
		if (e - b >= sizeof(name))
			e = b + sizeof(name) - 1;
		for (k = b; k < e; k++)
			name[k - b] = (char)tolower((unsigned char)s[k]);
		name[e - b] = '\0';
		for (w = 0; w < CW_N; w++)
			if (strstr(name, words[w]))
				n[w]++;
		if (n[CW_LOCK] && strstr(name, "unlock"))
			n[CW_LOCK]--;
	}
}

/* "(type *)x", "(unsigned long)x": a cast, not a call or a condition. */
static int casts(const char *s, size_t len)
{
	static const char *const types[] = {
		"struct ", "unsigned", "signed", "int",	 "char", "void",
		"long",	   "short",    "size_t", "u8",	 "u16",	 "u32",
		"u64",	   "__u",      "__be",	 "__le", "uint", "int",
	};
	size_t i, k;
	int n = 0;

	for (i = 0; i < len; i++) {
		size_t e;

		if (s[i] != '(')
			continue;
		for (k = 0; k < ARRAY_SIZE(types); k++)
			if (!strncmp(s + i + 1, types[k], strlen(types[k])))
				break;
		if (k == ARRAY_SIZE(types))
			continue;
		for (e = i + 1; e < len && e < i + 48; e++)
			if (!(isalnum((unsigned char)s[e]) || s[e] == '_' ||
			      s[e] == ' ' || s[e] == '*'))
				break;
		if (e < len && s[e] == ')' && e + 1 < len &&
		    (isalnum((unsigned char)s[e + 1]) || s[e + 1] == '_' ||
		     s[e + 1] == '(' || s[e + 1] == '&' || s[e + 1] == '*'))
			n++;
	}
	return n;
}

static bool error_return(const char *s, size_t len)
{
	return count_str(s, len, "return -") ||
	       count_str(s, len, "return NULL") ||
	       count_str(s, len, "ERR_PTR(");
}

/* What the model counts as allocations and as frees, of count_calls(). */
static int allocs_of(const int cw[CW_N])
{
	return cw[CW_ALLOC] + cw[CW_STRDUP] + cw[CW_ASPRINTF];
}

static int frees_of(const int cw[CW_N])
{
	return cw[CW_FREE] + cw[CW_RELEASE] + cw[CW_DESTROY];
}

size_t hist_line_hazards(const char *s, size_t len)
{
	int cw[CW_N];

	count_calls(s, len, cw);
	return (size_t)(count_str(s, len, "if (") + error_return(s, len) +
			count_str(s, len, "goto ") + allocs_of(cw) +
			frees_of(cw) + cw[CW_LOCK]);
}

/*
 * Words are kept as 31-bit hashes, the top bit saying where they came
 * from: the added lines, or the subject.
 */
#define TOK_SUBJECT 0x80000000u
#define RISK_MAX_TOKS 4096 /* words of one commit's added lines */
#define RISK_MAX_WORD 64   /* longer "words" are data, not names */

static uint32_t tok_hash(const char *s, size_t n, uint32_t kind)
{
	uint32_t h = (uint32_t)hist_hash(s, n) & ~TOK_SUBJECT;

	return (h ? h : 1) | kind;
}

/*
 * The next word (identifier or keyword, 2 to RISK_MAX_WORD - 1
 * characters, so identifier characters only) of s from *i: its start in
 * *start and its length, or 0 when there is none left.
 */
static size_t next_word(const char *s, size_t len, size_t *i, size_t *start)
{
	while (*i < len) {
		size_t b;

		if (!(isalpha((unsigned char)s[*i]) || s[*i] == '_')) {
			(*i)++;
			continue;
		}
		b = *i;
		while (*i < len &&
		       (isalnum((unsigned char)s[*i]) || s[*i] == '_'))
			(*i)++;
		if (*i - b < 2 || *i - b >= RISK_MAX_WORD)
			continue;
		*start = b;
		return *i - b;
	}
	return 0;
}

/* Append the words (identifiers, keywords) of s to a's, as hashes. */
static void add_words(uint32_t **v, size_t *n, size_t *alloc, const char *s,
		      size_t len, uint32_t kind, bool lower)
{
	size_t i = 0, b, wl, k;

	while (*n < RISK_MAX_TOKS && (wl = next_word(s, len, &i, &b))) {
		char w[RISK_MAX_WORD];

		for (k = 0; k < wl; k++)
			w[k] = lower ? (char)tolower((unsigned char)s[b + k])
				     : s[b + k];
		ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[(*n)++] = tok_hash(w, wl, kind);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort v and drop repeats; returns the new length. */
static size_t uniq_u32(uint32_t *v, size_t n)
{
	size_t i, k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 1; i < n; i++)
		if (v[i] != v[k])
			v[++k] = v[i];
	return k + 1;
}

/*
 * An added line past its indentation, *len cut to match; NULL for a
 * comment line: comments say nothing about behaviour.
 */
static const char *code_of_line(const char *s, size_t *len)
{
	const char *p, *end = s + *len;

	for (p = s; p < end && isspace((unsigned char)*p); p++)
		;
	if (p < end && (*p == '*' || (*p == '/' && p + 1 < end &&
				      (p[1] == '*' || p[1] == '/'))))
		return NULL;
	*len = (size_t)(end - p);
	return p;
}

void hist_racc_line(struct hist_racc *a, char origin, const char *s, size_t len)
{
	struct rfile *f = a->cur;
	const char *p;
	int cw[CW_N];

	if (!f || (origin != '+' && origin != '-'))
		return;
	f->lines++;
	if (origin == '-') {
		a->v[HR_LD]++;
		if (f->code &&
		    (count_str(s, len, "if (") || error_return(s, len)))
			a->v[HR_DEL_CHECK]++;
		return;
	}
	a->v[HR_LA]++;
	f->la++;
	if (f->test)
		a->v[HR_TESTLINES]++;
	if (!f->code)
		return;
	a->v[HR_LA_CODE]++;
	if (hist_starts_function(s, len))
		a->v[HR_NEWFUNC]++;
	p = code_of_line(s, &len);
	if (!p)
		return;
	add_words(&a->toks, &a->ntoks, &a->toks_alloc, p, len, 0, false);
	count_calls(p, len, cw);
	a->v[HR_ALLOC] += allocs_of(cw);
	a->v[HR_FREE] += frees_of(cw);
	a->v[HR_LOCK] += cw[CW_LOCK];
	a->v[HR_UNLOCK] += cw[CW_UNLOCK];
	a->v[HR_GOTO] += count_str(p, len, "goto ");
	a->v[HR_ERRPATH] += error_return(p, len);
	a->v[HR_PTRARITH] += count_str(p, len, "+=") + count_str(p, len, "-=") +
			     count_str(p, len, "[");
	a->v[HR_CAST] += casts(p, len);
	a->v[HR_SIZEMUL] +=
		count_str(p, len, "* sizeof") +
		count_str(p, len, ") *") * !!count_str(p, len, "sizeof");
	a->v[HR_COND] += count_str(p, len, "if (");
	a->v[HR_LOOP] +=
		count_str(p, len, "for (") + count_str(p, len, "while (");
	a->v[HR_COPY] += cw[CW_MEMCPY] + cw[CW_MEMMOVE] + cw[CW_STRCPY] +
			 cw[CW_STRCAT] + cw[CW_SPRINTF];
}

/* The directory of a path ("" for a top-level file), into buf. */
static void file_dir(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/*
 * File i's directory into dir (256 bytes); true when an earlier file of
 * the commit is in it too, so a commit counts once per directory.
 */
static bool dir_repeated(const struct hist_racc *a, size_t i, char dir[256])
{
	char other[256];
	size_t j;

	file_dir(a->files[i].path, dir, 256);
	for (j = 0; j < i; j++) {
		file_dir(a->files[j].path, other, sizeof(other));
		if (!strcmp(dir, other))
			return true;
	}
	return false;
}

/* Size, spread and entropy, once every line is in. */
static void racc_finish(struct hist_racc *a)
{
	char dir[256], top[128];
	char **dirs = NULL, **tops = NULL;
	size_t nd = 0, nt = 0, i, j;
	double total = 0, h = 0;

	for (i = 0; i < a->nfiles; i++) {
		const char *path = a->files[i].path;

		total += a->files[i].lines;
		a->v[HR_NEWFILES] += a->files[i].added;
		file_dir(path, dir, sizeof(dir));
		hist_top_dir(path, top, sizeof(top));
		for (j = 0; j < nd && strcmp(dirs[j], dir); j++)
			;
		if (j == nd && nd < 256) {
			dirs = xrealloc(dirs, (nd + 1) * sizeof(*dirs));
			dirs[nd++] = xstrdup_or_null(dir);
		}
		for (j = 0; j < nt && strcmp(tops[j], top); j++)
			;
		if (j == nt && nt < 256) {
			tops = xrealloc(tops, (nt + 1) * sizeof(*tops));
			tops[nt++] = xstrdup_or_null(top);
		}
	}
	for (i = 0; total > 0 && i < a->nfiles; i++) {
		double p = a->files[i].lines / total;

		if (p > 0)
			h -= p * log2(p);
	}
	a->v[HR_NF] = (double)a->nfiles;
	a->v[HR_ND] = (double)nd;
	a->v[HR_NS] = (double)nt;
	a->v[HR_ENTROPY] = h;
	a->v[HR_FUNCS] = (double)a->nfuncs;
	a->ntoks = uniq_u32(a->toks, a->ntoks);
	for (i = 0; i < nd; i++)
		free(dirs[i]);
	for (i = 0; i < nt; i++)
		free(tops[i]);
	free(dirs);
	free(tops);
}

void hist_racc_patch_done(struct hist_racc *a, struct hist_rfeat *out)
{
	racc_finish(a);
	memcpy(out->v, a->v, sizeof(out->v));
}

/* ---- the state: what the history says about files and people ------- */

/*
 * One record of state. Files: a commits, b fixes, c fixes decayed, d
 * commits decayed, t the last change, au the authors. Functions: a
 * fixes, b commits. Authors: a commits, d commits decayed, t. Author in
 * a subsystem: a commits. Directories and the whole tree ("G"): a
 * commits. Files, functions, directories, authors and the tree: e their
 * commits named by a fix since, f the same decayed from tl.
 */
struct rstate {
	double a, b, c, d, e, f;
	double g; /* commits (a) weighted to the last year, as f is */
	int64_t t, tl;
	uint32_t nau;
	uint32_t au[RISK_MAX_AUTHORS];
};

struct rent {
	char *key;
	uint64_t hash;
	struct rstate s;
	bool dirty;
};

/* Per word: the commits with it (n), of which later named by a fix (b). */
struct wstat {
	uint32_t h; /* 0: empty */
	float n, b;
};

struct wtable {
	struct wstat *v;
	size_t n, cap;
};

static struct wstat *wt_slot(struct wstat *v, size_t cap, uint32_t h)
{
	size_t i = (size_t)(h * 2654435761u) & (cap - 1);

	while (v[i].h && v[i].h != h)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static struct wstat *wt_get(struct wtable *t, uint32_t h, bool create)
{
	struct wstat *s;

	if (!t->cap) {
		if (!create)
			return NULL;
		t->cap = 4096;
		t->v = xcalloc(t->cap, sizeof(*t->v));
	}
	s = wt_slot(t->v, t->cap, h);
	if (s->h || !create)
		return s->h ? s : NULL;
	if ((t->n + 1) * 2 > t->cap) {
		struct wstat *nv = xcalloc(t->cap * 2, sizeof(*nv));
		size_t i;

		for (i = 0; i < t->cap; i++)
			if (t->v[i].h)
				*wt_slot(nv, t->cap * 2, t->v[i].h) = t->v[i];
		free(t->v);
		t->v = nv;
		t->cap *= 2;
		s = wt_slot(t->v, t->cap, h);
	}
	s->h = h;
	t->n++;
	return s;
}

static void wt_release(struct wtable *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* The table as stored: (hash, n, b) triples, in the riskstate row "W". */
static void wt_load(struct wtable *t, const void *blob, size_t len)
{
	const unsigned char *p = blob;
	size_t i;

	for (i = 0; i + 12 <= len; i += 12) {
		uint32_t h;
		struct wstat *s;

		memcpy(&h, p + i, 4);
		if (!h)
			continue;
		s = wt_get(t, h, true);
		memcpy(&s->n, p + i + 4, 4);
		memcpy(&s->b, p + i + 8, 4);
	}
}

/*
 * The commits named by a fix so far, with the words of their added
 * lines, and for each file the last GROUND_PER_FILE of them that
 * touched it: what a new commit's words are compared with.
 */
#define GROUND_PER_FILE 16

struct gbug {
	uint32_t *w;
	size_t n;
};

struct gfile {
	uint64_t h; /* of the file's state key; 0: empty */
	uint32_t n; /* bugs added; the last ones are in ring */
	uint32_t ring[GROUND_PER_FILE];
};

struct ground {
	struct gbug *b;
	size_t nb, balloc;
	struct gfile *f;
	size_t nf, cap;
};

static struct gfile *gf_get(struct ground *g, uint64_t h, bool create)
{
	size_t i;

	if (!h)
		h = 1;
	if (!g->cap) {
		if (!create)
			return NULL;
		g->cap = 256;
		g->f = xcalloc(g->cap, sizeof(*g->f));
	}
	if (create && (g->nf + 1) * 2 > g->cap) {
		struct gfile *nf = xcalloc(g->cap * 2, sizeof(*nf));

		for (i = 0; i < g->cap; i++) {
			size_t k;

			if (!g->f[i].h)
				continue;
			k = (size_t)g->f[i].h & (g->cap * 2 - 1);
			while (nf[k].h)
				k = (k + 1) & (g->cap * 2 - 1);
			nf[k] = g->f[i];
		}
		free(g->f);
		g->f = nf;
		g->cap *= 2;
	}
	i = (size_t)h & (g->cap - 1);
	while (g->f[i].h && g->f[i].h != h)
		i = (i + 1) & (g->cap - 1);
	if (g->f[i].h)
		return &g->f[i];
	if (!create)
		return NULL;
	g->f[i].h = h;
	g->nf++;
	return &g->f[i];
}

/* How many of a commit's words are words of its added lines. */
static size_t code_words(const uint32_t *w, size_t n)
{
	size_t k = 0;

	while (k < n && !(w[k] & TOK_SUBJECT))
		k++;
	return k;
}

/* A commit named by a fix: foot its state keys, w its sorted words. */
static void ground_add(struct ground *g, const char *foot, const uint32_t *w,
		       size_t n)
{
	struct gbug *b;
	const char *p, *nl;

	ALLOC_GROW(g->b, g->nb + 1, g->balloc);
	b = &g->b[g->nb];
	b->n = code_words(w, n);
	b->w = xmalloc((b->n + 1) * sizeof(*b->w));
	if (b->n)
		memcpy(b->w, w, b->n * sizeof(*b->w));
	for (p = foot; p && *p; p = nl + 1) {
		struct gfile *f;

		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (*p != 'F')
			continue;
		f = gf_get(g, hist_hash(p, (size_t)(nl - p)), true);
		f->ring[f->n++ % GROUND_PER_FILE] = (uint32_t)g->nb;
	}
	g->nb++;
}

static void ground_release(struct ground *g)
{
	size_t i;

	for (i = 0; i < g->nb; i++)
		free(g->b[i].w);
	free(g->b);
	free(g->f);
	memset(g, 0, sizeof(*g));
}

/* Shared words of two sorted lists. */
static size_t common_words(const uint32_t *a, size_t na, const uint32_t *b,
			   size_t nb)
{
	size_t i = 0, j = 0, c = 0;

	while (i < na && j < nb) {
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else {
			c++;
			i++;
			j++;
		}
	}
	return c;
}

/*
 * The best overlap (shared words over the geometric mean of the two
 * counts) of the commit's added words with an earlier named commit to
 * one of its files.
 */
static double ground_score(const struct ground *g, const struct hist_racc *a,
			   const uint32_t *w, size_t n)
{
	struct sb k = SB_INIT;
	size_t i, nc = code_words(w, n);
	double best = 0;

	for (i = 0; nc && g->nf && i < a->nfiles && i < RISK_MAX_FOOT; i++) {
		const struct gfile *f;
		uint32_t q, m;

		sb_reset(&k);
		sb_adds(&k, "F\t");
		sb_adds(&k, a->files[i].path);
		f = gf_get((struct ground *)g, hist_hash(k.buf, k.len), false);
		if (!f)
			continue;
		m = f->n < GROUND_PER_FILE ? f->n : GROUND_PER_FILE;
		for (q = 0; q < m; q++) {
			const struct gbug *b = &g->b[f->ring[q]];
			double s;

			if (!b->n)
				continue;
			s = (double)common_words(w, nc, b->w, b->n) /
			    sqrt((double)nc * (double)b->n);
			if (s > best)
				best = s;
		}
	}
	sb_release(&k);
	return best;
}

/*
 * The named commits as the db has them, in the order they were named
 * (by the first fix naming each, before before_seq): the same state an
 * index run that saw them one by one builds.
 */
static void ground_load(sqlite3 *db, int64_t before_seq, struct ground *g)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.foot, r.words, MIN(p.fix_seq) AS f"
			       " FROM pairs p JOIN risk r ON r.seq = p.bug_seq"
			       " WHERE p.fix_seq < ? GROUP BY p.bug_seq"
			       " ORDER BY f, p.bug_seq",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, before_seq);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *foot = (const char *)sqlite3_column_text(st, 0);
		const uint32_t *w = sqlite3_column_blob(st, 1);
		size_t n = (size_t)sqlite3_column_bytes(st, 1) / 4;
		uint32_t *copy = xmalloc((n + 1) * sizeof(*copy));

		if (n && w)
			memcpy(copy, w, n * 4);
		else
			n = 0;
		if (foot)
			ground_add(g, foot, copy, n);
		free(copy);
	}
	sqlite3_finalize(st);
}

/*
 * One commit on its way through the index: its content is counted by a
 * worker thread (reading blobs is most of the cost), its history
 * features by the main thread, in commit order, once all before it are
 * in the state.
 */
struct rjob {
	int64_t seq, time;
	char *author, *message;
	bool fix;
	struct hist_risk_change *ch;
	git_oid *ids; /* 2 per change: old, new */
	size_t nch;
	struct hist_racc *acc;
	int64_t *bugs; /* the commits it names */
	size_t nbugs, bugs_alloc;
	uint32_t *words; /* of the added lines, then of the subject */
	size_t nwords, words_alloc;
	int state; /* 0 queued, 1 taken, 2 counted */
};

/* Commits counted ahead of the one whose features are being written. */
#define RISK_QUEUE 256
#define RISK_THREADS 3

struct hist_risk {
	sqlite3 *db;
	struct rent *e;
	size_t n, cap;
	sqlite3_stmt *ins;
	sqlite3_stmt *named; /* was a commit named by an earlier fix? */
	sqlite3_stmt *foot;  /* a commit's footprint */
	struct wtable words;
	struct ground ground;
	int64_t newest;
	git_repository *repo; /* the caller's, for jobs no worker took */
	char *gitdir;
	struct rjob *q[RISK_QUEUE];
	size_t head, take,
		tail; /* oldest unwritten, next to count, next free */
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pthread_t tid[RISK_THREADS];
	int nthreads;
	bool stop;
};

static struct rent *rmap_slot(struct rent *e, size_t cap, const char *key,
			      uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);

	while (e[i].key && (e[i].hash != h || strcmp(e[i].key, key)))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static struct rent *rmap_get(struct hist_risk *r, const char *key, bool create)
{
	uint64_t h = hist_hash(key, strlen(key));
	struct rent *s;

	if (!r->cap) {
		if (!create)
			return NULL;
		r->cap = 1024;
		r->e = xcalloc(r->cap, sizeof(*r->e));
	}
	s = rmap_slot(r->e, r->cap, key, h);
	if (s->key || !create)
		return s->key ? s : NULL;
	if ((r->n + 1) * 2 > r->cap) {
		struct rent *ne = xcalloc(r->cap * 2, sizeof(*ne));
		size_t i;

		for (i = 0; i < r->cap; i++)
			if (r->e[i].key)
				*rmap_slot(ne, r->cap * 2, r->e[i].key,
					   r->e[i].hash) = r->e[i];
		free(r->e);
		r->e = ne;
		r->cap *= 2;
		s = rmap_slot(r->e, r->cap, key, h);
	}
	s->key = xstrdup_or_null(key);
	s->hash = h;
	r->n++;
	return s;
}

/* Where the features read state from: the index's map, or the db. */
struct rsource {
	struct hist_risk *r; /* the map, or NULL */
	sqlite3_stmt *get;   /* SELECT v FROM riskstate WHERE k = ? */
	struct wtable *words;
};

static bool rget(struct rsource *src, const char *key, struct rstate *out)
{
	memset(out, 0, sizeof(*out));
	if (src->r) {
		struct rent *e = rmap_get(src->r, key, false);

		if (e)
			*out = e->s;
		return e != NULL;
	}
	if (!src->get)
		return false;
	sqlite3_bind_text(src->get, 1, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(src->get) == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(src->get, 0);
		int n = sqlite3_column_bytes(src->get, 0);

		if (b && n == (int)sizeof(*out))
			memcpy(out, b, sizeof(*out));
		sqlite3_reset(src->get);
		return true;
	}
	sqlite3_reset(src->get);
	return false;
}

static void key2(struct sb *k, char kind, const char *a, const char *b)
{
	sb_reset(k);
	sb_addch(k, kind);
	sb_addch(k, '\t');
	sb_adds(k, a ? a : "");
	if (b) {
		sb_addch(k, '\t');
		sb_adds(k, b);
	}
}

/* The subsystem of a commit: its subject's prefix, else its first dir. */
static void subsystem_of(const char *message, const struct hist_racc *a,
			 char *buf, size_t len)
{
	char subj[256];
	const char *nl = message ? strchr(message, '\n') : NULL;
	size_t n =
		message ? (nl ? (size_t)(nl - message) : strlen(message)) : 0;

	if (n >= sizeof(subj))
		n = sizeof(subj) - 1;
	memcpy(subj, message ? message : "", n);
	subj[n] = '\0';
	hist_subsystem(subj, buf, len);
	if (!buf[0] && a->nfiles)
		hist_top_dir(a->files[0].path, buf, len);
}

/*
 * The share of a record's commits later named by a fix, shrunk towards
 * the tree's share r0 as if RISK_RATE_PRIOR more commits had it.
 */
static double shrunk_rate(const struct rstate *s, double r0)
{
	return (s->e + RISK_RATE_PRIOR * r0) / (s->a + RISK_RATE_PRIOR);
}

/* The same with both counts weighted to the last year at now. */
static double recent_rate(const struct rstate *s, double r0, int64_t now)
{
	return (decay(s->f, s->tl, now, HALF_FIXES) + RISK_RATE_PRIOR * r0) /
	       (decay(s->g, s->t, now, HALF_FIXES) + RISK_RATE_PRIOR);
}

/* The words of a commit: its added lines' (from a), its subject's. */
static void commit_words(const struct hist_racc *a, const char *message,
			 uint32_t **v, size_t *n, size_t *alloc)
{
	const char *nl = message ? strchr(message, '\n') : NULL;
	size_t len =
		message ? (nl ? (size_t)(nl - message) : strlen(message)) : 0;
	size_t from;

	*n = 0;
	ALLOC_GROW(*v, a->ntoks + 1, *alloc);
	if (a->ntoks)
		memcpy(*v, a->toks, a->ntoks * sizeof(**v));
	*n = from = a->ntoks;
	if (len > HIST_MAX_SUBJECT)
		len = HIST_MAX_SUBJECT;
	add_words(v, n, alloc, message ? message : "", len, TOK_SUBJECT, true);
	*n = from + uniq_u32(*v + from, *n - from);
}

/*
 * The mean over the commit's words of how much likelier than the tree's
 * commits (r0) the earlier commits with the word were to be named by a
 * fix, as a log ratio, shrunk for words seen in few commits.
 */
static void words_features(const struct wtable *t, const uint32_t *w, size_t n,
			   double r0, double *v)
{
	double sum[2] = {0, 0}, cnt[2] = {0, 0};
	size_t i;

	for (i = 0; i < n; i++) {
		struct wstat *s = t->cap ? wt_slot(t->v, t->cap, w[i]) : NULL;
		double wn = s && s->h ? s->n : 0, wb = s && s->h ? s->b : 0;
		int k = (w[i] & TOK_SUBJECT) != 0;

		sum[k] += log((wb + RISK_RATE_PRIOR * r0) /
			      (wn + RISK_RATE_PRIOR) / r0);
		cnt[k]++;
	}
	v[HR_WORDS_CODE] = cnt[0] ? sum[0] / cnt[0] : 0;
	v[HR_WORDS_SUBJECT] = cnt[1] ? sum[1] / cnt[1] : 0;
}

/* The tree's share of commits later named by a fix, shrunk. */
/* The tree's rate from its state g ("G"): over all time, or recent. */
static double tree_rate_of(const struct rstate *g)
{
	return (g->e + 1) / (g->a + RISK_RATE_PRIOR);
}

static double tree_recent_rate_of(const struct rstate *g, int64_t now)
{
	return (decay(g->f, g->tl, now, HALF_FIXES) + 1) /
	       (decay(g->g, g->t, now, HALF_FIXES) + RISK_RATE_PRIOR);
}

static double tree_rate(struct rsource *src)
{
	struct rstate g;

	rget(src, "G", &g);
	return tree_rate_of(&g);
}

/* The history and experience features, from the state before the commit. */
static void state_features(struct rsource *src, struct hist_racc *a,
			   const char *author, const char *message, int64_t now,
			   double *v)
{
	struct sb k = SB_INIT;
	struct rstate s;
	char subsys[64];
	size_t i, aged = 0;
	double agesum = 0, r0, rr0;

	for (i = 0; i < a->nfiles; i++) {
		key2(&k, 'F', a->files[i].path, NULL);
		if (!rget(src, sb_str(&k), &s))
			continue;
		v[HR_NUC] += s.a;
		v[HR_FIXES] += s.b;
		v[HR_FIXES_YEAR] += decay(s.c, s.t, now, HALF_FIXES);
		v[HR_CHURN] += decay(s.d, s.t, now, HALF_CHURN);
		if ((double)s.nau > v[HR_NDEV])
			v[HR_NDEV] = (double)s.nau;
		agesum += now > s.t ? (double)(now - s.t) / DAY : 0;
		aged++;
	}
	v[HR_AGE] = aged ? agesum / (double)aged : 0;
	for (i = 0; i < a->nfuncs; i++) {
		key2(&k, 'U', a->funcs[i], NULL);
		if (rget(src, sb_str(&k), &s)) {
			v[HR_FUNC_FIXES] += s.a;
			v[HR_FUNC_BUGS] += s.e;
		}
	}
	/* Rates are shrunk to the tree's, so one commit is not a rate. */
	rget(src, "G", &s);
	r0 = tree_rate_of(&s);
	rr0 = tree_recent_rate_of(&s, now);
	for (i = 0; i < a->nfiles; i++) {
		char dir[256];
		struct rstate fs;
		double dr, drr;

		key2(&k, 'F', a->files[i].path, NULL);
		rget(src, sb_str(&k), &s);
		v[HR_FILE_BUGS] += s.e;
		v[HR_FILE_BUGS_RECENT] += decay(s.f, s.tl, now, HALF_FIXES);
		v[HR_FILE_BUGRATE] += shrunk_rate(&s, r0) / (double)a->nfiles;
		fs = s;
		file_dir(a->files[i].path, dir, sizeof(dir));
		key2(&k, 'D', dir, NULL);
		rget(src, sb_str(&k), &s);
		dr = shrunk_rate(&s, r0);
		v[HR_DIR_BUGRATE] += dr / (double)a->nfiles;
		v[HR_LA_WEIGHTED] += a->files[i].la * shrunk_rate(&fs, dr) / r0;
		drr = recent_rate(&s, rr0, now);
		v[HR_LA_WEIGHTED_RECENT] +=
			a->files[i].la * recent_rate(&fs, drr, now) / rr0;
	}
	key2(&k, 'A', author, NULL);
	rget(src, sb_str(&k), &s);
	v[HR_EXP] = s.a;
	v[HR_REXP] = decay(s.d, s.t, now, HALF_EXP);
	v[HR_AUTHOR_BUGS] = s.e;
	v[HR_AUTHOR_BUGRATE] = shrunk_rate(&s, r0);
	subsystem_of(message, a, subsys, sizeof(subsys));
	key2(&k, 'S', author, subsys);
	if (rget(src, sb_str(&k), &s))
		v[HR_SEXP] = s.a;
	sb_release(&k);
}

static bool message_has_fixes(const char *msg)
{
	const char *p, *nl;

	for (p = msg; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncasecmp(p, "Fixes:", 6))
			return true;
	}
	return false;
}

static void purpose_features(const char *message, bool isfix, double *v)
{
	char subj[256];
	const char *nl = message ? strchr(message, '\n') : NULL, *p;
	size_t n =
		message ? (nl ? (size_t)(nl - message) : strlen(message)) : 0;
	double lines = 0;

	if (n >= sizeof(subj))
		n = sizeof(subj) - 1;
	memcpy(subj, message ? message : "", n);
	subj[n] = '\0';
	v[HR_ISFIX] = isfix || hist_subject_fixes(subj);
	v[HR_REVERT] = !strncmp(subj, "Revert \"", 8);
	v[HR_FEATURE] = hist_subject_adds(subj);
	for (p = message; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		lines++;
	}
	v[HR_MSGLINES] = lines;
}

/* ---- index side ----------------------------------------------------- */

int hist_risk_begin(sqlite3 *db, struct hist_risk **out, struct errmsg *err)
{
	struct hist_risk *r = xcalloc(1, sizeof(*r));
	sqlite3_stmt *st = NULL;

	*out = NULL;
	r->db = db;
	if (sqlite3_prepare_v2(db, "SELECT k, v FROM riskstate", -1, &st,
			       NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const void *b = sqlite3_column_blob(st, 1);

		if (k && b && !strcmp(k, "W"))
			wt_load(&r->words, b,
				(size_t)sqlite3_column_bytes(st, 1));
		else if (k && b &&
			 sqlite3_column_bytes(st, 1) == sizeof(r->e->s))
			memcpy(&rmap_get(r, k, true)->s, b, sizeof(r->e->s));
	}
	sqlite3_finalize(st);
	ground_load(db, INT64_MAX, &r->ground);
	if (sqlite3_prepare_v2(
		    db, "INSERT OR REPLACE INTO risk VALUES (?, ?, ?, ?)", -1,
		    &r->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT EXISTS(SELECT 1 FROM pairs"
			       " WHERE bug_seq = ? AND fix_seq < ?)",
			       -1, &r->named, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT foot, words FROM risk WHERE seq = ?",
			       -1, &r->foot, NULL) != SQLITE_OK)
		goto fail;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->work, NULL);
	pthread_cond_init(&r->done, NULL);
	*out = r;
	return 0;
fail:
	errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
		   sqlite3_errmsg(db));
	hist_risk_free(r);
	return RV_ERR_INTERNAL;
}

static void rjob_free(struct rjob *j)
{
	size_t i;

	if (!j)
		return;
	for (i = 0; i < j->nch; i++)
		free((char *)j->ch[i].path);
	free(j->ch);
	free(j->ids);
	free(j->author);
	free(j->message);
	free(j->bugs);
	free(j->words);
	hist_racc_free(j->acc);
	free(j);
}

static void stop_workers(struct hist_risk *r)
{
	int i;

	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->mu);
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->tid[i], NULL);
	r->nthreads = 0;
}

void hist_risk_free(struct hist_risk *r)
{
	size_t i;

	if (!r)
		return;
	stop_workers(r);
	for (i = r->head; i < r->tail; i++)
		rjob_free(r->q[i % RISK_QUEUE]);
	for (i = 0; i < r->cap; i++)
		free(r->e[i].key);
	free(r->e);
	wt_release(&r->words);
	ground_release(&r->ground);
	sqlite3_finalize(r->ins);
	sqlite3_finalize(r->named);
	sqlite3_finalize(r->foot);
	free(r->gitdir);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->work);
	pthread_cond_destroy(&r->done);
	free(r);
}

static int on_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *p)
{
	const char *sec = strstr(h->header + 2, "@@");

	(void)d;
	if (sec) {
		char buf[256];
		size_t n = strcspn(sec + 2, "\n");

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, sec + 2, n);
		buf[n] = '\0';
		hist_racc_hunk(p, buf);
	}
	return 0;
}

static int on_line(const git_diff_delta *d, const git_diff_hunk *h,
		   const git_diff_line *l, void *p)
{
	(void)d;
	(void)h;
	hist_racc_line(p, l->origin, l->content, l->content_len);
	return 0;
}

/* Count the lines of one changed file; by size when not diffed. */
static void diff_file(git_repository *repo, struct hist_racc *a,
		      const struct hist_risk_change *c, bool content)
{
	git_blob *ob = NULL, *nb = NULL;
	git_diff_options o;

	hist_racc_file(a, c->path, !c->old_id);
	if (!content)
		goto by_size;
	if ((c->old_id && git_blob_lookup(&ob, repo, c->old_id) < 0) ||
	    (c->new_id && git_blob_lookup(&nb, repo, c->new_id) < 0))
		goto out; /* a submodule */
	if ((ob && (git_blob_rawsize(ob) > RISK_MAX_BLOB ||
		    git_blob_is_binary(ob))) ||
	    (nb &&
	     (git_blob_rawsize(nb) > RISK_MAX_BLOB || git_blob_is_binary(nb))))
		goto out;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 0;
	git_diff_blobs(ob, NULL, nb, NULL, &o, NULL, NULL, on_hunk, on_line, a);
	goto out;
by_size:
	/* Not read: a file that was only listed counts as one line. */
	a->cur->lines = 1;
	a->v[HR_LA]++;
out:
	git_blob_free(ob);
	git_blob_free(nb);
}

/* Append key k and a newline to out, unless k has a newline itself. */
static void foot_add(struct sb *out, const struct sb *k)
{
	if (memchr(k->buf, '\n', k->len))
		return;
	sb_add(out, k->buf, k->len);
	sb_addch(out, '\n');
}

/* One more commit in s's commits weighted to the last year, at time t. */
static void recent_commit(struct rstate *s, int64_t t)
{
	s->g = decay(s->g, s->t, t, HALF_FIXES) + 1;
	if (t > s->t)
		s->t = t;
}

static void state_update(struct hist_risk *r, struct hist_racc *a,
			 const char *author, const char *message, bool isfix,
			 int64_t t)
{
	uint32_t ah = (uint32_t)hist_hash(author, strlen(author));
	struct sb k = SB_INIT;
	char subsys[64];
	struct rent *e;
	size_t i, j;

	for (i = 0; i < a->nfiles; i++) {
		key2(&k, 'F', a->files[i].path, NULL);
		e = rmap_get(r, sb_str(&k), true);
		e->s.c = decay(e->s.c, e->s.t, t, HALF_FIXES) + isfix;
		e->s.d = decay(e->s.d, e->s.t, t, HALF_CHURN) + 1;
		recent_commit(&e->s, t); /* last: it moves s.t on to t */
		e->s.a++;
		e->s.b += isfix;
		for (j = 0; j < e->s.nau && e->s.au[j] != ah; j++)
			;
		if (j == e->s.nau && j < RISK_MAX_AUTHORS)
			e->s.au[e->s.nau++] = ah;
		e->dirty = true;
	}
	for (i = 0; i < a->nfuncs; i++) {
		key2(&k, 'U', a->funcs[i], NULL);
		e = rmap_get(r, sb_str(&k), true);
		e->s.a += isfix;
		e->s.b++;
		e->dirty = true;
	}
	for (i = 0; i < a->nfiles; i++) {
		char dir[256];

		if (dir_repeated(a, i, dir))
			continue; /* counted once per commit */
		key2(&k, 'D', dir, NULL);
		e = rmap_get(r, sb_str(&k), true);
		recent_commit(&e->s, t);
		e->s.a++;
		e->dirty = true;
	}
	e = rmap_get(r, "G", true);
	recent_commit(&e->s, t);
	e->s.a++;
	e->dirty = true;
	key2(&k, 'A', author, NULL);
	e = rmap_get(r, sb_str(&k), true);
	e->s.d = decay(e->s.d, e->s.t, t, HALF_EXP) + 1;
	e->s.a++;
	if (t > e->s.t)
		e->s.t = t;
	e->dirty = true;
	subsystem_of(message, a, subsys, sizeof(subsys));
	key2(&k, 'S', author, subsys);
	e = rmap_get(r, sb_str(&k), true);
	e->s.a++;
	e->dirty = true;
	sb_release(&k);
}

/*
 * The state keys a commit counts in (its files, functions, directories
 * and author), one a line: when a fix names the commit, each counts one
 * more commit that was later fixed.
 */
static void footprint(const struct hist_racc *a, const char *author,
		      struct sb *out)
{
	struct sb k = SB_INIT;
	size_t i, n;

	for (i = 0, n = 0; i < a->nfiles && n < RISK_MAX_FOOT; i++, n++) {
		key2(&k, 'F', a->files[i].path, NULL);
		foot_add(out, &k);
	}
	for (i = 0; i < a->nfuncs && i < RISK_MAX_FOOT; i++) {
		key2(&k, 'U', a->funcs[i], NULL);
		foot_add(out, &k);
	}
	for (i = 0, n = 0; i < a->nfiles && n < RISK_MAX_FOOT; i++) {
		char dir[256];

		if (dir_repeated(a, i, dir))
			continue;
		key2(&k, 'D', dir, NULL);
		foot_add(out, &k);
		n++;
	}
	key2(&k, 'A', author, NULL);
	foot_add(out, &k);
	sb_release(&k);
}

/*
 * Fix fix_seq (of time t) names bug_seq: unless an earlier fix named it
 * already, every key of its footprint counts one more commit fixed.
 * Returns SQLITE_DONE or the error.
 */
static int apply_label(struct hist_risk *r, int64_t fix_seq, int64_t bug_seq,
		       int64_t t)
{
	const char *p, *nl;
	struct sb foot = SB_INIT;
	bool named = false;
	int rc = SQLITE_DONE;

	sqlite3_bind_int64(r->named, 1, bug_seq);
	sqlite3_bind_int64(r->named, 2, fix_seq);
	if (sqlite3_step(r->named) == SQLITE_ROW)
		named = sqlite3_column_int(r->named, 0) != 0;
	sqlite3_reset(r->named);
	if (named)
		return rc;
	sqlite3_bind_int64(r->foot, 1, bug_seq);
	if (sqlite3_step(r->foot) == SQLITE_ROW) {
		const uint32_t *w = sqlite3_column_blob(r->foot, 1);
		size_t i, n = (size_t)sqlite3_column_bytes(r->foot, 1) / 4;
		uint32_t *copy = xmalloc((n + 1) * sizeof(*copy));

		if (w && n)
			memcpy(copy, w, n * 4);
		else
			n = 0;
		for (i = 0; i < n; i++)
			if (copy[i])
				wt_get(&r->words, copy[i], true)->b++;
		if (sqlite3_column_text(r->foot, 0)) {
			sb_adds(&foot,
				(const char *)sqlite3_column_text(r->foot, 0));
			ground_add(&r->ground, sb_str(&foot), copy, n);
		}
		free(copy);
	}
	sqlite3_reset(r->foot);
	if (!foot.len)
		goto out; /* indexed before footprints were kept */
	sb_adds(&foot, "G\n");
	for (p = sb_str(&foot); *p; p = nl + 1) {
		struct rent *e;

		nl = strchr(p, '\n');
		if (!nl)
			break;
		foot.buf[nl - foot.buf] = '\0';
		e = rmap_get(r, p, true);
		e->s.f = decay(e->s.f, e->s.tl, t, HALF_FIXES) + 1;
		if (t > e->s.tl)
			e->s.tl = t;
		e->s.e++;
		e->dirty = true;
	}
out:
	sb_release(&foot);
	return rc;
}

/* Count what the job's files' lines do (any thread). */
static void count_job(git_repository *repo, struct rjob *j)
{
	size_t i, diffed = 0;

	for (i = 0; i < j->nch; i++) {
		const struct hist_risk_change *c = &j->ch[i];
		bool content = diffed < RISK_MAX_FILES;

		if (c->old_id && c->new_id &&
		    git_oid_equal(c->old_id, c->new_id)) {
			/* Renamed as it was: no line changed. */
			hist_racc_file(j->acc, c->path, false);
			continue;
		}
		diffed += content;
		diff_file(repo, j->acc, c, content);
	}
	racc_finish(j->acc);
}

static void *risk_worker(void *arg)
{
	struct hist_risk *r = arg;
	git_repository *repo = NULL;

	/*
	 * Bare: libgit2 looks up the diff driver of every blob pair in the
	 * attributes, and with a work tree that is a dozen failed stat,
	 * access and readlink calls each time, for a made-up path.
	 */
	if (git_repository_open_ext(&repo, r->gitdir,
				    GIT_REPOSITORY_OPEN_BARE |
					    GIT_REPOSITORY_OPEN_NO_SEARCH,
				    NULL) < 0)
		return NULL; /* the main thread counts what is left */
	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct rjob *j;

		while (!r->stop && r->take == r->tail)
			pthread_cond_wait(&r->work, &r->mu);
		if (r->stop)
			break;
		j = r->q[r->take++ % RISK_QUEUE];
		j->state = 1;
		pthread_mutex_unlock(&r->mu);
		count_job(repo, j);
		pthread_mutex_lock(&r->mu);
		j->state = 2;
		pthread_cond_broadcast(&r->done);
	}
	pthread_mutex_unlock(&r->mu);
	git_repository_free(repo);
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Write the oldest job's features and fold it into the state. */
static int finish_oldest(struct hist_risk *r, struct errmsg *err)
{
	struct rsource src = {r, NULL, NULL};
	struct sb foot = SB_INIT;
	struct hist_rfeat f;
	struct rjob *j;
	float x[HR_N];
	size_t i;
	int rc;

	pthread_mutex_lock(&r->mu);
	j = r->q[r->head % RISK_QUEUE];
	if (j->state == 0) {
		/* No worker got to it: count it here, in order. */
		r->take++;
		j->state = 1;
		pthread_mutex_unlock(&r->mu);
		count_job(r->repo, j);
		pthread_mutex_lock(&r->mu);
		j->state = 2;
	}
	while (j->state != 2)
		pthread_cond_wait(&r->done, &r->mu);
	r->head++;
	pthread_mutex_unlock(&r->mu);

	memcpy(f.v, j->acc->v, sizeof(f.v));
	state_features(&src, j->acc, j->author, j->message, j->time, f.v);
	purpose_features(j->message, j->fix, f.v);
	commit_words(j->acc, j->message, &j->words, &j->nwords,
		     &j->words_alloc);
	words_features(&r->words, j->words, j->nwords, tree_rate(&src), f.v);
	f.v[HR_GROUND] = ground_score(&r->ground, j->acc, j->words, j->nwords);
	for (i = 0; i < HR_N; i++)
		x[i] = (float)f.v[i];
	footprint(j->acc, j->author, &foot);
	sqlite3_bind_int64(r->ins, 1, j->seq);
	sqlite3_bind_blob(r->ins, 2, x, sizeof(x), SQLITE_TRANSIENT);
	sqlite3_bind_text(r->ins, 3, sb_str(&foot), (int)foot.len,
			  SQLITE_STATIC);
	sqlite3_bind_blob(r->ins, 4, j->words, (int)(j->nwords * 4),
			  SQLITE_STATIC);
	rc = sqlite3_step(r->ins);
	sqlite3_reset(r->ins);
	/* Only now does the commit become history for the next ones. */
	if (rc == SQLITE_DONE) {
		state_update(r, j->acc, j->author, j->message, j->fix, j->time);
		for (i = 0; i < j->nwords; i++)
			wt_get(&r->words, j->words[i], true)->n++;
	}
	/* In the order a later run rebuilds the grounding in (ground_load). */
	if (j->nbugs)
		qsort(j->bugs, j->nbugs, sizeof(*j->bugs), cmp_i64);
	for (i = 0; rc == SQLITE_DONE && i < j->nbugs; i++)
		rc = apply_label(r, j->seq, j->bugs[i], j->time);
	if (j->time > r->newest)
		r->newest = j->time;
	rjob_free(j);
	sb_release(&foot);
	if (rc != SQLITE_DONE)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "history index: cannot write: %s",
				  sqlite3_errmsg(r->db));
	return 0;
}

void hist_risk_label(struct hist_risk *r, int64_t fix_seq, int64_t bug_seq)
{
	struct rjob *j;
	size_t i;

	if (!r || r->tail == r->head)
		return;
	j = r->q[(r->tail - 1) % RISK_QUEUE];
	if (j->seq != fix_seq || bug_seq >= fix_seq)
		return;
	for (i = 0; i < j->nbugs; i++)
		if (j->bugs[i] == bug_seq)
			return;
	if (j->nbugs >= HIST_MAX_FIXES_PER_COMMIT * 2)
		return;
	ALLOC_GROW(j->bugs, j->nbugs + 1, j->bugs_alloc);
	j->bugs[j->nbugs++] = bug_seq;
}

int hist_risk_commit(struct hist_risk *r, git_repository *repo, int64_t seq,
		     int64_t time, const char *author, const char *message,
		     bool isfix, bool has_fixes,
		     const struct hist_risk_change *ch, size_t nch,
		     struct errmsg *err)
{
	struct rjob *j;
	size_t i;
	int ret;

	if (!r->repo) {
		r->repo = repo;
		r->gitdir = xstrdup_or_null(git_repository_path(repo));
		for (i = 0; r->gitdir && i < RISK_THREADS; i++)
			if (pthread_create(&r->tid[r->nthreads], NULL,
					   risk_worker, r) == 0)
				r->nthreads++;
	}
	if (r->tail - r->head == RISK_QUEUE && (ret = finish_oldest(r, err)))
		return ret;
	j = xcalloc(1, sizeof(*j));
	j->seq = seq;
	j->time = time;
	j->author = xstrdup_or_null(author ? author : "");
	j->message = xstrndup(message ? message : "",
			      strnlen(message ? message : "", HIST_MAX_MSG));
	j->fix = isfix || has_fixes;
	j->acc = hist_racc_new();
	j->ch = xcalloc(nch + 1, sizeof(*j->ch));
	j->ids = xcalloc(2 * nch + 1, sizeof(*j->ids));
	for (i = 0; i < nch; i++) {
		j->ch[i].path = xstrdup_or_null(ch[i].path);
		if (ch[i].old_id) {
			j->ids[2 * i] = *ch[i].old_id;
			j->ch[i].old_id = &j->ids[2 * i];
		}
		if (ch[i].new_id) {
			j->ids[2 * i + 1] = *ch[i].new_id;
			j->ch[i].new_id = &j->ids[2 * i + 1];
		}
	}
	j->nch = nch;
	pthread_mutex_lock(&r->mu);
	r->q[r->tail++ % RISK_QUEUE] = j;
	pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

int hist_risk_load(sqlite3 *db, int64_t seq, struct hist_rfeat *out)
{
	sqlite3_stmt *st = NULL;
	int ret = -1, i;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, "SELECT x FROM risk WHERE seq = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, seq);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_bytes(st, 0) == (int)(HR_N * sizeof(float))) {
		const float *x = sqlite3_column_blob(st, 0);

		for (i = 0; i < HR_N; i++)
			out->v[i] = x[i];
		ret = 0;
	}
	sqlite3_finalize(st);
	return ret;
}

/* ---- the model ------------------------------------------------------ */

/*
 * A tree's habits drift: older commits teach less about the next one.
 * Rows weigh by recency, halving every four years of age at fit time.
 * What size and place say about bugs drifts slowly, and the score is a
 * place, so the level of old labels does not matter: over fifteen
 * yearly eval windows the margin over lines changed was +0.025 at a
 * half-life of two years, +0.027 at three, +0.028 at four and eight,
 * +0.028 with none, where the last years of both trees lose.
 */
#define RISK_WEIGHT_HALF (1460 * DAY)

double hist_risk_weight(int64_t t, int64_t now)
{
	return decay(1.0, t, now, RISK_WEIGHT_HALF);
}

/*
 * A value far outside the rows the model was fitted on (a kind of file
 * that was rare then) counts no more than this many deviations: one new
 * test directory must not outweigh everything else the patch is.
 */
#define Z_CLIP 3.0

static double zclip(double z)
{
	return z > Z_CLIP ? Z_CLIP : z < -Z_CLIP ? -Z_CLIP : z;
}

static double model_logit(const struct hist_model *m, const double x[HF_N])
{
	double z = m->w[HF_N];
	int i;

	for (i = 0; i < HF_N; i++)
		z += m->w[i] * zclip((x[i] - m->mean[i]) / m->sd[i]);
	return z > 30 ? 30 : z < -30 ? -30 : z;
}

/*
 * The share of the rows the model was fitted on that score below z
 * (ties counted half), from the quantiles in m->q.
 */
static double model_rank(const struct hist_model *m, double z)
{
	const double *q = m->q;
	int lo = 0, hi, k, n = HIST_MODEL_Q;

	while (lo < n && q[lo] < z)
		lo++;
	for (hi = lo; hi < n && q[hi] <= z; hi++)
		;
	if (hi > lo) /* on a plateau of equal logits: its middle */
		return ((double)(lo + hi - 1) / 2.0) / (n - 1);
	if (lo == 0)
		return 0;
	if (lo == n)
		return 1;
	k = lo - 1;
	return ((double)k + (z - q[k]) / (q[lo] - q[k])) / (n - 1);
}

/*
 * A score is where a commit's logit falls among the history's: 0.97 is
 * riskier than 97% of the commits the model was fitted on (a sliver of
 * the logistic keeps the order past the ends). Not the probability:
 * refitted month after month on labels that keep arriving (a young
 * tree's fixes start naming commits years into its history), the
 * probability's level drifts while the order it gives does not, and
 * scores of different months must compare. Measured on rdma-core 2017,
 * lines added alone ranked commits at AUC 0.764 and its monthly
 * probabilities pooled at 0.698.
 */
static double logit_score(const struct hist_model *m, double z)
{
	return 0.999 * model_rank(m, z) + 0.001 / (1.0 + exp(-z));
}

double hist_model_score(const struct hist_model *m, const double x[HF_N])
{
	return m->ok ? logit_score(m, model_logit(m, x)) : -1;
}

double hist_model_rate(const struct hist_model *m, double score)
{
	double t;
	int b;

	if (!m->ok || score < 0)
		return -1;
	/* Between the bins' middles, linearly. */
	t = score * HIST_RATE_BINS - 0.5;
	if (t <= 0)
		return m->rate[0];
	if (t >= HIST_RATE_BINS - 1)
		return m->rate[HIST_RATE_BINS - 1];
	b = (int)t;
	return m->rate[b] + (t - b) * (m->rate[b + 1] - m->rate[b]);
}

/* A row's logit or score with its weight, for weighted quantiles. */
struct wrow {
	double v, w;
};

static int cmp_wrow(const void *a, const void *b)
{
	double x = ((const struct wrow *)a)->v, y = ((const struct wrow *)b)->v;

	return x < y ? -1 : x > y;
}

/* The rows' values v with their weights (all 1 without wt), sorted. */
static struct wrow *wrows(const double *v, const double *wt, size_t n,
			  double *total)
{
	struct wrow *r = xmalloc((n + 1) * sizeof(*r));
	size_t i;

	*total = 0;
	for (i = 0; i < n; i++) {
		r[i].v = v[i];
		r[i].w = wt ? wt[i] : 1;
		*total += r[i].w;
	}
	qsort(r, n, sizeof(*r), cmp_wrow);
	return r;
}

/*
 * The places: quantiles of the fitted rows' logits, each row weighing
 * what it weighs in the fit. A score says how a commit ranks among the
 * history as the model sees it, recent commits counting more, the same
 * weights as the fix rates of each score. Counted unweighted, the old
 * commits, which the model scores lower, made today's rank higher than
 * they are: the riskiest "2%" was 3.7% of the commits of eval's seven
 * development windows and 2.9% of the six held out; weighted, 3.0% and
 * 2.0%. The finding threshold comes from the same sorted rows.
 */
static void fit_places(struct hist_model *m, const double *logit,
		       const double *wt, size_t n, double top_frac)
{
	double total, cum = 0;
	struct wrow *r = wrows(logit, wt, n, &total);
	size_t a, j = 0;

	for (a = 0; a < HIST_MODEL_Q; a++) {
		double at = total * (double)a / (HIST_MODEL_Q - 1);

		while (j + 1 < n && cum + r[j].w < at)
			cum += r[j++].w;
		m->q[a] = r[j].v;
	}
	m->q[HIST_MODEL_Q - 1] = r[n - 1].v;
	/*
	 * The threshold: the score above which the rows weigh top_frac of
	 * all. A score never falls as the logit rises, so the rows in
	 * order of logit are in order of score.
	 */
	for (j = n - 1, cum = 0; j > 0 && cum + r[j].w <= total * top_frac;)
		cum += r[j--].w;
	m->threshold = logit_score(m, r[j].v);
	free(r);
}

/*
 * The fix rate of the fitted rows by bin of score, each shrunk toward
 * the base rate by RATE_PRIOR rows' worth, then pooled where a riskier
 * bin had a lower rate (isotonic): the rate a score reads as must not
 * fall as the score rises.
 */
#define RATE_PRIOR 5.0
static void fit_rates(struct hist_model *m, const double *score, const int *y,
		      const double *wt, size_t n, double base)
{
	double pw[HIST_RATE_BINS] = {0}, w[HIST_RATE_BINS] = {0};
	double val[HIST_RATE_BINS], wgt[HIST_RATE_BINS];
	int len[HIST_RATE_BINS], nb = 0, b, i;
	size_t r;

	for (r = 0; r < n; r++) {
		double wr = wt ? wt[r] : 1;

		b = (int)(score[r] * HIST_RATE_BINS);
		b = b < 0 ? 0 : b >= HIST_RATE_BINS ? HIST_RATE_BINS - 1 : b;
		w[b] += wr;
		pw[b] += y[r] ? wr : 0;
	}
	for (b = 0; b < HIST_RATE_BINS; b++) {
		val[nb] = (pw[b] + RATE_PRIOR * base) / (w[b] + RATE_PRIOR);
		wgt[nb] = w[b] + RATE_PRIOR;
		len[nb] = 1;
		while (nb > 0 && val[nb - 1] > val[nb]) {
			val[nb - 1] = (val[nb - 1] * wgt[nb - 1] +
				       val[nb] * wgt[nb]) /
				      (wgt[nb - 1] + wgt[nb]);
			wgt[nb - 1] += wgt[nb];
			len[nb - 1] += len[nb];
			nb--;
		}
		nb++;
	}
	for (b = 0, i = 0; i < nb; i++)
		for (r = 0; r < (size_t)len[i]; r++)
			m->rate[b++] = val[i];
}

/* Means and deviations of the n rows of X into m; the standardized rows. */
static double *standardize(struct hist_model *m, const double *X, size_t n,
			   bool *flat)
{
	double *Z = xmalloc(n * HF_N * sizeof(*Z));
	size_t i;
	int j;

	for (j = 0; j < HF_N; j++) {
		double s = 0, ss = 0;

		for (i = 0; i < n; i++)
			s += X[i * HF_N + j];
		m->mean[j] = s / (double)n;
		for (i = 0; i < n; i++) {
			double d = X[i * HF_N + j] - m->mean[j];

			ss += d * d;
		}
		m->sd[j] = sqrt(ss / (double)n);
		flat[j] = m->sd[j] < 1e-9;
		if (flat[j])
			m->sd[j] = 1;
		for (i = 0; i < n; i++)
			Z[i * HF_N + j] = zclip((X[i * HF_N + j] - m->mean[j]) /
						m->sd[j]);
	}
	return Z;
}

#define MAX_SEL HF_N
/* The inputs a fit barely penalizes: cols[0, RISK_NSPINE) of it. */
#define RISK_NSPINE 3

/*
 * Weighted L2 logistic regression on columns cols[0..k) of the
 * standardized rows [0, n) of Z, by Newton's method. w[0..k) are the
 * weights, w[k] the intercept; w holds the starting point on entry.
 * The spine (cols[0, RISK_NSPINE)) has penalty l_size, the rest l_rest.
 */
static void newton2(const double *Z, const int *y, const double *wt, size_t n,
		    const int *cols, int k, double l_size, double l_rest,
		    double *w)
{
	double H[(MAX_SEL + 1) * (MAX_SEL + 1)], g[MAX_SEL + 1], W = 0;
	int it, a, b, d = k + 1;
	size_t i;

	for (i = 0; i < n; i++)
		W += wt ? wt[i] : 1;
	for (it = 0; it < 8; it++) {
		double step = 0;

		memset(H, 0, sizeof(H));
		memset(g, 0, sizeof(g));
		for (i = 0; i < n; i++) {
			const double *z = &Z[i * HF_N];
			double s = w[k], p, q, c = wt ? wt[i] : 1;
			double zz[MAX_SEL + 1];

			for (a = 0; a < k; a++) {
				zz[a] = z[cols[a]];
				s += w[a] * zz[a];
			}
			zz[k] = 1;
			p = 1.0 / (1.0 + exp(-s));
			q = c * p * (1 - p);
			p = c * (p - (y[i] ? 1.0 : 0.0));
			for (a = 0; a < d; a++) {
				g[a] += p * zz[a];
				for (b = 0; b <= a; b++)
					H[a * d + b] += q * zz[a] * zz[b];
			}
		}
		for (a = 0; a < d; a++)
			for (b = a + 1; b < d; b++)
				H[a * d + b] = H[b * d + a];
		for (a = 0; a < k; a++) {
			double l = a < RISK_NSPINE ? l_size : l_rest;

			g[a] += l * W * w[a];
			H[a * d + a] += l * W;
		}
		H[k * d + k] += 1e-9 * W;
		if (rv_linsolve(H, g, (size_t)d) < 0)
			break;
		for (a = 0; a < d; a++) {
			w[a] -= g[a];
			step += fabs(g[a]);
		}
		if (step < 1e-6)
			break;
	}
}

/* The scores of rows [from, to) of Z under weights w on cols. */
static void zscores(const double *Z, size_t from, size_t to, const int *cols,
		    int k, const double *w, double *out)
{
	size_t i;
	int a;

	for (i = from; i < to; i++) {
		double s = w[k];

		for (a = 0; a < k; a++)
			s += w[a] * Z[i * HF_N + cols[a]];
		out[i - from] = s;
	}
}

#define NFOLDS 3
/* The L2 penalty of the spine: barely any. */
#define RISK_L_SIZE 1e-3

/* One time fold of chained_auc: its own thread. */
struct fold {
	const double *Z, *wt;
	const int *y, *cols;
	size_t tr, te;
	int k;
	double l_size, l_rest, *w, *scores, auc;
};

static void *fold_run(void *arg)
{
	struct fold *f = arg;

	newton2(f->Z, f->y, f->wt, f->tr, f->cols, f->k, f->l_size, f->l_rest,
		f->w);
	zscores(f->Z, f->tr, f->te, f->cols, f->k, f->w, f->scores);
	f->auc = rv_auc(f->scores, f->y + f->tr, f->te - f->tr);
	return NULL;
}

/*
 * The mean AUC of a model on cols over three time folds: fit on the
 * rows before 2/5, 3/5, 4/5 of the history, score the fifth after each.
 * The folds run at once (after an index walk the workers are idle); a
 * fold no thread took runs here. scores: room for n rows.
 */
static double chained_auc(const double *Z, const int *y, const double *wt,
			  size_t n, const int *cols, int k, double l_size,
			  double l_rest, double b0, double *scores,
			  double (*warm)[MAX_SEL + 1])
{
	double w0[NFOLDS][MAX_SEL + 1], sum = 0;
	struct fold fo[NFOLDS];
	pthread_t tid[NFOLDS];
	bool started[NFOLDS];
	size_t off = 0;
	int f, nf = 0;

	memset(w0, 0, sizeof(w0));
	for (f = 0; f < NFOLDS; f++) {
		struct fold *c = &fo[f];

		c->Z = Z;
		c->y = y;
		c->wt = wt;
		c->cols = cols;
		c->k = k;
		c->l_size = l_size;
		c->l_rest = l_rest;
		c->tr = n * (size_t)(f + 2) / 5;
		c->te = n * (size_t)(f + 3) / 5;
		c->scores = scores + off; /* the folds' test rows: 3/5 of n */
		off += c->te - c->tr;
		c->w = warm ? warm[f] : w0[f];
		/*
		 * Warm: the fold's fit at the previous penalty, a few
		 * Newton steps from this one.
		 */
		if (!warm || !c->w[k])
			c->w[k] = b0;
		started[f] = f < NFOLDS - 1 &&
			     pthread_create(&tid[f], NULL, fold_run, c) == 0;
	}
	for (f = 0; f < NFOLDS; f++)
		if (!started[f])
			fold_run(&fo[f]);
	for (f = 0; f < NFOLDS; f++) {
		if (started[f])
			pthread_join(tid[f], NULL);
		if (fo[f].auc >= 0) {
			sum += fo[f].auc;
			nf++;
		}
	}
	return nf ? sum / nf : -1;
}

void hist_model_fit(struct hist_model *m, const double *X, const int *y,
		    size_t n, double top_frac)
{
	hist_model_fit_w(m, X, y, NULL, n, top_frac);
}

void hist_model_fit_w(struct hist_model *m, const double *X, const int *y,
		      const double *wt, size_t n, double top_frac)
{
	int cols[MAX_SEL], k = 0, j, a;
	static const double l_rest[] = {0.03, 0.1, 0.3, 1, 3};
	double w[MAX_SEL + 1], best, *Z, *scores, pos = 0, wsum = 0;
	double warm[NFOLDS][MAX_SEL + 1];
	size_t g, nall;
	bool flat[HF_N];
	size_t i, npos = 0;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++) {
		npos += y[i] != 0;
		pos += y[i] ? (wt ? wt[i] : 1) : 0;
		wsum += wt ? wt[i] : 1;
	}
	m->rows = n;
	m->positives = npos;
	/* Nothing to learn from one class. */
	if (n < 20 || npos < 3 || npos == n) {
		snprintf(m->why, sizeof(m->why),
			 npos ? "the risk model cannot be fitted: %zu of %zu "
				"old enough commits were later fixed; it needs "
				"at least 3 and 20 commits"
			      : "the risk model cannot be fitted: no commit "
				"old enough (%zu of %zu) was later named by a "
				"Fixes: trailer or reverted",
			 npos, n);
		return;
	}
	Z = standardize(m, X, n, flat);
	scores = xmalloc(n * sizeof(*scores));
	/*
	 * Lines added carries most of what can be known (every study of
	 * these histories finds it, and on iproute2 and rdma-core it is
	 * the best single feature out of time), and more so when each
	 * line weighs by how often its file's commits were later fixed
	 * (a copied header or a table is big and rarely wrong), over all
	 * the history and over the last year or so (where the bugs are
	 * now: iproute2's mean margin over lines changed, eight years,
	 * +0.039 to +0.043; rdma-core's +0.016 either way): the three
	 * are the spine, barely penalized. The rest are allowed to
	 * move a score only as far as they keep helping later commits.
	 * Their penalty is chosen on time folds (fit on the older rows,
	 * score the next fifth, for the last three fifths in turn), and
	 * "lines added alone" is a candidate too. Measured: fitting them
	 * as freely as size, or adding them greedily by held-out AUC, won
	 * the past and lost the next year on both trees.
	 */
	cols[k++] = HR_LA;
	cols[k++] = HR_LA_WEIGHTED;
	cols[k++] = HR_LA_WEIGHTED_RECENT;
	best = chained_auc(Z, y, wt, n, cols, k, RISK_L_SIZE, RISK_L_SIZE,
			   log(pos / (wsum - pos)), scores, NULL);
	m->lambda = -1; /* the spine alone */
	nall = (size_t)k;
	for (j = 0; j < HF_N; j++)
		if (j != HR_LA && j != HR_LA_WEIGHTED &&
		    j != HR_LA_WEIGHTED_RECENT && !flat[j] &&
		    !(j < HR_N && finfo[j].grows))
			cols[nall++] = j;
	memset(warm, 0, sizeof(warm));
	memset(w, 0, sizeof(w));
	for (g = 0; g < ARRAY_SIZE(l_rest); g++) {
		double auc = chained_auc(Z, y, wt, n, cols, (int)nall,
					 RISK_L_SIZE, l_rest[g],
					 log(pos / (wsum - pos)), scores, warm);

		if (auc > best + 0.001) {
			best = auc;
			m->lambda = l_rest[g];
			/* The newest fold's fit: the full one starts there. */
			memcpy(w, warm[NFOLDS - 1], sizeof(w));
		}
	}
	if (getenv("QX_LAMBDA")) {
		double l = atof(getenv("QX_LAMBDA"));

		m->lambda = l > 0 ? l : -1;
		memset(w, 0, sizeof(w));
	}
	if (m->lambda > 0)
		k = (int)nall;
	else
		memset(w, 0, sizeof(w));
	if (!w[k])
		w[k] = log(pos / (wsum - pos));
	newton2(Z, y, wt, n, cols, k, RISK_L_SIZE,
		m->lambda > 0 ? m->lambda : RISK_L_SIZE, w);
	memset(m->w, 0, sizeof(m->w));
	for (a = 0; a < k; a++)
		m->w[cols[a]] = w[a];
	m->w[HF_N] = w[k];
	m->heldout_auc = best;
	m->ok = true;
	for (i = 0; i < n; i++)
		scores[i] = model_logit(m, &X[i * HF_N]);
	fit_places(m, scores, wt, n, top_frac);
	for (i = 0; i < n; i++)
		scores[i] = hist_model_score(m, &X[i * HF_N]);
	fit_rates(m, scores, y, wt, n, pos / wsum);
	free(scores);
	free(Z);
}

/* 4: the fix rates by score. */
#define MODEL_FORMAT 4

int hist_model_save(sqlite3 *db, const struct hist_model *m)
{
	struct sb s = SB_INIT;
	int i, rc;

	sb_addf(&s, "%d %d %d %.17g %.17g %.17g %zu %zu", MODEL_FORMAT, HF_N,
		m->ok ? 1 : 0, m->threshold, m->lambda, m->heldout_auc, m->rows,
		m->positives);
	for (i = 0; i < HF_N; i++)
		sb_addf(&s, " %.17g %.17g", m->mean[i], m->sd[i]);
	for (i = 0; i <= HF_N; i++)
		sb_addf(&s, " %.17g", m->w[i]);
	for (i = 0; i < HIST_MODEL_Q; i++)
		sb_addf(&s, " %.17g", m->q[i]);
	for (i = 0; i < HIST_RATE_BINS; i++)
		sb_addf(&s, " %.17g", m->rate[i]);
	rc = hist_meta_set_text(db, "model", sb_str(&s));
	if (!rc)
		rc = hist_meta_set_text(db, "model_why", m->why);
	sb_release(&s);
	return rc ? RV_ERR_INTERNAL : 0;
}

void hist_model_load(sqlite3 *db, struct hist_model *m)
{
	struct sb s = SB_INIT, why = SB_INIT;
	char *end;
	int i, ok;

	memset(m, 0, sizeof(*m));
	if (!hist_meta_text(db, "model", &s))
		goto out;
	if (strtol(sb_str(&s), &end, 10) != MODEL_FORMAT ||
	    strtol(end, &end, 10) != HF_N) {
		snprintf(m->why, sizeof(m->why),
			 "the stored risk model is of another version of "
			 "quorum; run `quorum index --rebuild`");
		sb_release(&s);
		return;
	}
	ok = (int)strtol(end, &end, 10);
	m->threshold = strtod(end, &end);
	m->lambda = strtod(end, &end);
	m->heldout_auc = strtod(end, &end);
	m->rows = (size_t)strtoull(end, &end, 10);
	m->positives = (size_t)strtoull(end, &end, 10);
	for (i = 0; i < HF_N; i++) {
		m->mean[i] = strtod(end, &end);
		m->sd[i] = strtod(end, &end);
		if (!(m->sd[i] > 0))
			goto bad;
	}
	for (i = 0; i <= HF_N; i++)
		m->w[i] = strtod(end, &end);
	for (i = 0; i < HIST_MODEL_Q; i++) {
		m->q[i] = strtod(end, &end);
		if (i && !(m->q[i] >= m->q[i - 1]))
			goto bad;
	}
	for (i = 0; i < HIST_RATE_BINS; i++) {
		m->rate[i] = strtod(end, &end);
		if (!(m->rate[i] >= 0 && m->rate[i] <= 1) ||
		    (i && m->rate[i] < m->rate[i - 1]))
			goto bad;
	}
	m->ok = ok == 1;
	goto out;
bad:
	memset(m, 0, sizeof(*m));
out:
	if (hist_meta_text(db, "model_why", &why))
		snprintf(m->why, sizeof(m->why), "%s", sb_str(&why));
	sb_release(&s);
	sb_release(&why);
}

static int save_state(struct hist_risk *r, struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(r->db,
			       "INSERT OR REPLACE INTO riskstate VALUES (?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < r->cap && rc == SQLITE_DONE; i++) {
		struct rent *e = &r->e[i];

		if (!e->key || !e->dirty)
			continue;
		sqlite3_bind_text(st, 1, e->key, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, &e->s, sizeof(e->s), SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	if (rc == SQLITE_DONE && r->words.n) {
		unsigned char *blob = xmalloc(r->words.n * 12);
		size_t n = 0;

		for (i = 0; i < r->words.cap; i++) {
			const struct wstat *w = &r->words.v[i];

			if (!w->h)
				continue;
			memcpy(blob + n, &w->h, 4);
			memcpy(blob + n + 4, &w->n, 4);
			memcpy(blob + n + 8, &w->b, 4);
			n += 12;
		}
		sqlite3_bind_text(st, 1, "W", -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, blob, (int)n, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		free(blob);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	return errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
			  sqlite3_errmsg(r->db));
}

/*
 * The rows a model is fitted on, oldest first: commits at least
 * HIST_LABEL_RIPE older than before_time, labelled by the fixes that
 * came before seq before_seq (INT64_MAX: all).
 */
int hist_risk_rows(sqlite3 *db, int64_t before_time, int64_t before_seq,
		   double **X, int **y, double **wt, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t alloc = 0, yalloc = 0, walloc = 0;

	*wt = NULL;
	*X = NULL;
	*y = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(
		    db,
		    "SELECT r.x, EXISTS(SELECT 1 FROM pairs p"
		    "  WHERE p.bug_seq = c.seq AND p.fix_seq < ?2), c.time"
		    " FROM commits c JOIN risk r ON r.seq = c.seq"
		    " WHERE c.time <= ?1 ORDER BY c.seq",
		    -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, before_time - HIST_LABEL_RIPE);
	sqlite3_bind_int64(st, 2, before_seq);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct hist_rfeat f;
		const float *x = sqlite3_column_blob(st, 0);
		int i;

		if (sqlite3_column_bytes(st, 0) != (int)(HR_N * sizeof(float)))
			continue;
		for (i = 0; i < HR_N; i++)
			f.v[i] = x[i];
		ALLOC_GROW(*X, (*n + 1) * HF_N, alloc);
		ALLOC_GROW(*y, *n + 1, yalloc);
		hist_features(&f, &(*X)[*n * HF_N]);
		(*y)[*n] = sqlite3_column_int(st, 1);
		ALLOC_GROW(*wt, *n + 1, walloc);
		(*wt)[*n] = hist_risk_weight(sqlite3_column_int64(st, 2),
					     before_time);
		(*n)++;
	}
	sqlite3_finalize(st);
	return 0;
}

/* What the floats of table risk are, in order, for a person or a test. */
static int save_feature_names(sqlite3 *db)
{
	struct sb s = SB_INIT;
	int i, rc;

	for (i = 0; i < HR_N; i++)
		sb_addf(&s, "%s%s", i ? " " : "", finfo[i].name);
	rc = hist_meta_set_text(db, "risk_features", sb_str(&s));
	sb_release(&s);
	return rc;
}

int hist_risk_finish(struct hist_risk *r, char *note, size_t note_len,
		     struct errmsg *err)
{
	struct hist_model m;
	sqlite3_stmt *st = NULL;
	int64_t newest = 0;
	double *X = NULL, *wt = NULL;
	int *y = NULL;
	size_t n = 0;
	int ret;

	while (r->head < r->tail)
		if ((ret = finish_oldest(r, err)))
			return ret;
	stop_workers(r);
	if ((ret = save_state(r, err)))
		return ret;
	if (sqlite3_prepare_v2(r->db, "SELECT MAX(time) FROM commits", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		newest = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (hist_risk_rows(r->db, newest, INT64_MAX, &X, &y, &wt, &n) < 0)
		return errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
				  sqlite3_errmsg(r->db));
	hist_model_fit_w(&m, X, y, wt, n, HIST_RISK_TOP);
	free(wt);
	free(X);
	free(y);
	if (note) {
		if (m.ok)
			snprintf(note, note_len,
				 "risk model: fitted on %zu commits, %zu later "
				 "fixed (held-out AUC %.3f)",
				 m.rows, m.positives, m.heldout_auc);
		else
			snprintf(note, note_len, "%s", m.why);
	}
	if (hist_meta_set_int(r->db, "risk_now", newest) ||
	    save_feature_names(r->db) || hist_model_save(r->db, &m) < 0)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "history index: cannot store the model: %s",
				  sqlite3_errmsg(r->db));
	return 0;
}

/* ---- a new patch ---------------------------------------------------- */

void hist_risk_patch(struct rv_history *h, const struct rv_diff *d,
		     const char *message, const char *author_email,
		     struct hist_rfeat *out)
{
	struct hist_racc *a = hist_racc_new();
	struct rsource src = {NULL, NULL, NULL};
	struct wtable words = {0};
	struct ground ground = {0};
	uint32_t *w = NULL;
	size_t i, j, k, nw = 0, walloc = 0;
	int64_t now = hist_meta_int(h->db, "risk_now", 0);

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];
		const char *path = f->new_path ? f->new_path : f->old_path;

		if (!path)
			continue;
		hist_racc_file(a, path, f->status == RV_FILE_ADDED);
		for (j = 0; j < f->nhunks; j++) {
			hist_racc_hunk(a, f->hunks[j].section);
			for (k = 0; k < f->hunks[j].nlines; k++) {
				const struct rv_line *l = &f->hunks[j].lines[k];

				if (l->text)
					hist_racc_line(a, l->origin, l->text,
						       strlen(l->text));
			}
		}
	}
	racc_finish(a);
	memcpy(out->v, a->v, sizeof(out->v));
	sqlite3_prepare_v2(h->db, "SELECT v FROM riskstate WHERE k = ?", -1,
			   &src.get, NULL);
	state_features(&src, a, author_email ? author_email : "", message, now,
		       out->v);
	purpose_features(message, message_has_fixes(message), out->v);
	sqlite3_bind_text(src.get, 1, "W", -1, SQLITE_STATIC);
	if (sqlite3_step(src.get) == SQLITE_ROW)
		wt_load(&words, sqlite3_column_blob(src.get, 0),
			(size_t)sqlite3_column_bytes(src.get, 0));
	sqlite3_reset(src.get);
	commit_words(a, message, &w, &nw, &walloc);
	words_features(&words, w, nw, tree_rate(&src), out->v);
	ground_load(h->db, INT64_MAX, &ground);
	out->v[HR_GROUND] = ground_score(&ground, a, w, nw);
	ground_release(&ground);
	sqlite3_finalize(src.get);
	wt_release(&words);
	free(w);
	hist_racc_free(a);
}

/* ---- explanations --------------------------------------------------- */

/*
 * A word is named only when at least RISK_WORD_MIN_N earlier commits had
 * it and RISK_WORD_MIN_B of those were later fixed. Below that its share
 * is one commit's story, not a rate a maintainer can weigh: the feature
 * shrinks such words towards the tree's share as if RISK_RATE_PRIOR (10)
 * more commits had them, so at 5 a word's own share is still only a
 * third of its shrunk one, and one later fixed commit among five is
 * what the grounding feature already says of the nearest one.
 */
#define RISK_WORD_MIN_N 5
#define RISK_WORD_MIN_B 2
/*
 * And only when its commits were fixed at least half again as often as
 * the tree's: nearer than that, the shares printed side by side look
 * alike and tell a maintainer nothing.
 */
#define RISK_WORD_MIN_LIFT 1.5

/*
 * Words that are grammar, not names: the feature counts them, but "its
 * code uses int" or "its subject says 'the'" points a reader nowhere.
 */
static bool grammar_word(const char *s, size_t len, bool subject)
{
	static const char *const c[] = {
		"auto",	    "bool",	"break",    "case",	"char",
		"const",    "continue", "default",  "do",	"double",
		"else",	    "enum",	"extern",   "false",	"float",
		"for",	    "goto",	"if",	    "inline",	"int",
		"long",	    "NULL",	"register", "return",	"short",
		"signed",   "sizeof",	"static",   "struct",	"switch",
		"true",	    "typedef",	"union",    "unsigned", "void",
		"volatile", "while"};
	static const char *const en[] = {
		"an",	"and", "as",   "at",  "be", "by",   "for",
		"from", "in",  "into", "is",  "it", "its",  "not",
		"of",	"on",  "or",   "the", "to", "when", "with"};
	const char *const *v = subject ? en : c;
	size_t i, n = subject ? ARRAY_SIZE(en) : ARRAY_SIZE(c);

	for (i = 0; i < n; i++)
		if (strlen(v[i]) == len &&
		    !(subject ? strncasecmp : strncmp)(v[i], s, len))
			return true;
	return false;
}

_Static_assert(sizeof(((struct hist_rword *)0)->text) >= RISK_MAX_WORD,
	       "a named word is shorter than RISK_MAX_WORD, with its NUL");

/* One word of the patch: where its text is, and what the table says. */
struct pword {
	const char *s; /* in the patch: identifier characters only */
	uint32_t h, len;
	double n, b, lr;
};

static void pword_add(struct pword **v, size_t *n, size_t *alloc, const char *s,
		      size_t len, uint32_t kind)
{
	char w[RISK_MAX_WORD];
	size_t k;

	for (k = 0; k < len; k++)
		w[k] = kind ? (char)tolower((unsigned char)s[k]) : s[k];
	ALLOC_GROW(*v, *n + 1, *alloc);
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].s = s;
	(*v)[*n].len = (uint32_t)len;
	(*v)[*n].h = tok_hash(w, len, kind);
	(*n)++;
}

static int cmp_pword_hash(const void *a, const void *b)
{
	const struct pword *x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h;
}

/* Most raising first; then the more often seen; then by text, for ties. */
static int cmp_pword_rank(const void *a, const void *b)
{
	const struct pword *x = a, *y = b;
	int c;

	if (x->lr != y->lr)
		return x->lr > y->lr ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
	return c ? c : (int)x->len - (int)y->len;
}

/*
 * The patch's words as commit_words() hashes them: the identifiers of
 * the added lines of its C files, past comments, then its subject's,
 * lowercased; at most RISK_MAX_TOKS in all, as there.
 */
static size_t patch_words(const struct rv_diff *d, const char *message,
			  struct pword **v, size_t *alloc)
{
	const char *nl = message ? strchr(message, '\n') : NULL;
	size_t i, j, k, n = 0, ntok = 0, x, b, wl, len;

	for (i = 0; i < d->nfiles && ntok < RISK_MAX_TOKS; i++) {
		const struct rv_file *f = &d->files[i];
		const char *path = f->new_path ? f->new_path : f->old_path;

		if (!path || !is_code_path(path))
			continue;
		for (j = 0; j < f->nhunks && ntok < RISK_MAX_TOKS; j++)
			for (k = 0;
			     k < f->hunks[j].nlines && ntok < RISK_MAX_TOKS;
			     k++) {
				const struct rv_line *l = &f->hunks[j].lines[k];
				const char *p;

				if (l->origin != '+' || !l->text)
					continue;
				len = strlen(l->text);
				p = code_of_line(l->text, &len);
				for (x = 0; p && ntok < RISK_MAX_TOKS &&
					    (wl = next_word(p, len, &x, &b));
				     ntok++)
					pword_add(v, &n, alloc, p + b, wl, 0);
			}
	}
	len = message ? (nl ? (size_t)(nl - message) : strlen(message)) : 0;
	if (len > HIST_MAX_SUBJECT)
		len = HIST_MAX_SUBJECT;
	for (x = 0;
	     ntok < RISK_MAX_TOKS && (wl = next_word(message, len, &x, &b));
	     ntok++)
		pword_add(v, &n, alloc, message + b, wl, TOK_SUBJECT);
	return n;
}

/* Keeps the best HIST_RWORDS of v[0..n) (ranked) into out[]. */
static size_t name_words(const struct pword *v, size_t n,
			 struct hist_rword *out)
{
	size_t i, k;

	for (i = 0; i < n && i < HIST_RWORDS; i++) {
		memcpy(out[i].text, v[i].s, v[i].len);
		out[i].text[v[i].len] = '\0';
		for (k = 0; (v[i].h & TOK_SUBJECT) && k < v[i].len; k++)
			out[i].text[k] =
				(char)tolower((unsigned char)out[i].text[k]);
		out[i].n = (unsigned int)v[i].n;
		out[i].b = (unsigned int)v[i].b;
	}
	return i;
}

void hist_place_copy(char dst[HIST_RPLACE], const char *src)
{
	size_t n = strlen(src), i;

	if (n >= HIST_RPLACE) {
		memcpy(dst, "...", 3);
		src += n - (HIST_RPLACE - 4);
		n = HIST_RPLACE - 4;
		dst += 3;
	}
	for (i = 0; i < n; i++)
		dst[i] = src[i] >= ' ' && src[i] < 127 ? src[i] : '?';
	dst[n] = '\0';
}

/* The file and function of d whose history says most (hist_rplace). */
static void risk_places(struct rsource *src, const struct rv_diff *d,
			int64_t now, struct hist_rplace *p)
{
	struct sb k = SB_INIT;
	struct rstate s;
	size_t i, j;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];
		const char *path = f->new_path ? f->new_path : f->old_path;

		if (!path)
			continue;
		key2(&k, 'F', path, NULL);
		if (!rget(src, sb_str(&k), &s))
			continue;
		if (s.e > p->file_named) {
			hist_place_copy(p->file, path);
			p->file_named = s.e;
			p->file_commits = s.a;
		}
		if (s.b > p->fixed_n) {
			hist_place_copy(p->fixed, path);
			p->fixed_n = s.b;
			p->fixed_year = decay(s.c, s.t, now, HALF_FIXES);
		}
		if (!hist_path_has_functions(path))
			continue;
		for (j = 0; j < f->nhunks; j++) {
			char *fn = hist_function_name(f->hunks[j].section);

			if (!fn)
				continue;
			key2(&k, 'U', path, fn);
			if (rget(src, sb_str(&k), &s) && s.e > p->func_named &&
			    strlen(fn) < 64) {
				hist_place_copy(p->func, fn);
				hist_place_copy(p->func_file, path);
				p->func_named = s.e;
				p->func_commits = s.b;
			}
			free(fn);
		}
	}
	sb_release(&k);
}

void hist_risk_words(struct rv_history *h, const struct rv_diff *d,
		     const char *message, struct hist_rwords *out)
{
	struct rsource src = {NULL, NULL, NULL};
	struct pword *v = NULL;
	size_t i, k, n, alloc = 0, ncand = 0;
	struct rstate g;
	double r0;

	memset(out, 0, sizeof(*out));
	out->base = -1;
	if (!h || !h->db || !d ||
	    sqlite3_prepare_v2(h->db, "SELECT v FROM riskstate WHERE k = ?", -1,
			       &src.get, NULL) != SQLITE_OK)
		goto out;
	n = patch_words(d, message, &v, &alloc);
	qsort(v, n, sizeof(*v), cmp_pword_hash);
	for (i = k = 0; i < n; i++)
		if (!k || v[i].h != v[k - 1].h)
			v[k++] = v[i];
	n = k;
	/* One pass over the table as stored, as wt_load reads it. */
	sqlite3_bind_text(src.get, 1, "W", -1, SQLITE_STATIC);
	if (n && sqlite3_step(src.get) == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(src.get, 0);
		size_t len = (size_t)sqlite3_column_bytes(src.get, 0);

		for (i = 0; p && i + 12 <= len; i += 12) {
			struct pword key = {0}, *hit;
			float wn, wb;

			memcpy(&key.h, p + i, 4);
			hit = key.h ? bsearch(&key, v, n, sizeof(*v),
					      cmp_pword_hash)
				    : NULL;
			if (!hit)
				continue;
			memcpy(&wn, p + i + 4, 4);
			memcpy(&wb, p + i + 8, 4);
			hit->n = wn;
			hit->b = wb;
		}
	}
	sqlite3_reset(src.get);
	r0 = tree_rate(&src);
	if (rget(&src, "G", &g) && g.a > 0)
		out->base = g.e / g.a;
	/* The feature's own log ratio: how far the word raised its mean. */
	for (i = 0; i < n; i++) {
		v[i].lr = log((v[i].b + RISK_RATE_PRIOR * r0) /
			      (v[i].n + RISK_RATE_PRIOR) / r0);
		if (v[i].n >= RISK_WORD_MIN_N && v[i].b >= RISK_WORD_MIN_B &&
		    v[i].lr > 0 &&
		    (out->base < 0 ||
		     v[i].b >= RISK_WORD_MIN_LIFT * out->base * v[i].n) &&
		    !grammar_word(v[i].s, v[i].len, v[i].h & TOK_SUBJECT))
			v[ncand++] = v[i];
	}
	/* Code words hash below subject ones: they come first, as sorted. */
	for (k = 0; k < ncand && !(v[k].h & TOK_SUBJECT); k++)
		;
	qsort(v, k, sizeof(*v), cmp_pword_rank);
	qsort(v + k, ncand - k, sizeof(*v), cmp_pword_rank);
	out->ncode = name_words(v, k, out->code);
	out->nsubject = name_words(v + k, ncand - k, out->subject);
	risk_places(&src, d, hist_meta_int(h->db, "risk_now", 0), &out->place);
out:
	sqlite3_finalize(src.get);
	free(v);
}

/* The separator before item i of n in "a, b and c". */
static const char *list_sep(size_t i, size_t n)
{
	return !i ? "" : i + 1 == n ? " and " : ", ";
}

/*
 * "A, B and C (in 14, 31 and 8 earlier commits, 43%, 29% and 25% of them
 * later fixed, against 9% of all)"; the words are identifier characters
 * only, so a hostile patch's text cannot say more than a name.
 */
static void say_words(const struct hist_rword *w, size_t n, bool quote,
		      const char *where, double base, struct sb *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sb_addf(out, "%s%s%s%s", list_sep(i, n), quote ? "'" : "",
			w[i].text, quote ? "'" : "");
	sb_addf(out, " (in %s", where);
	for (i = 0; i < n; i++)
		sb_addf(out, "%s%u", list_sep(i, n), w[i].n);
	sb_adds(out, " earlier commits, "); /* RISK_WORD_MIN_N of them */
	for (i = 0; i < n; i++)
		sb_addf(out, "%s%.0f%%", list_sep(i, n),
			w[i].n ? 100.0 * w[i].b / w[i].n : 0);
	sb_adds(out, " of them later fixed");
	if (base >= 0)
		sb_addf(out, ", against %.0f%% of all", 100 * base);
	sb_addch(out, ')');
}

static const char *plural(double n)
{
	return n >= 0.5 && n < 1.5 ? "" : "s";
}

/* One phrase for feature i of r, or nothing when it reads as noise. */
static void phrase(int i, const struct hist_rfeat *r,
		   const struct hist_rwords *words, struct sb *out)
{
	const double *v = r->v;
	const struct hist_rplace *place = words ? &words->place : NULL;

	switch (i) {
	case HR_LA:
	case HR_LA_CODE:
	case HR_LD:
	case HR_LA_WEIGHTED:
	case HR_LA_WEIGHTED_RECENT: {
		/* One phrase for the size, however many features say it. */
		double all = v[HR_LA] >= 0.5 ? v[HR_LA_WEIGHTED] / v[HR_LA] : 0;
		double now = v[HR_LA] >= 0.5
				     ? v[HR_LA_WEIGHTED_RECENT] / v[HR_LA]
				     : 0;

		sb_addf(out, "adds %.0f line%s", v[HR_LA], plural(v[HR_LA]));
		if (v[HR_LD] >= 0.5)
			sb_addf(out, " and removes %.0f", v[HR_LD]);
		if (all >= 1.2 || now >= 1.2)
			sb_addf(out,
				", in files whose commits were later fixed "
				"%.1f times as often as the tree's",
				all >= 1.2 ? all : now);
		if (all >= 1.2 && now >= 1.2)
			sb_addf(out, " (%.1f times in the last year)", now);
		else if (now >= 1.2)
			sb_adds(out, " in the last year");
		break;
	}
	case HR_NF:
	case HR_ND:
	case HR_NS:
	case HR_ENTROPY:
		sb_addf(out, "spreads over %.0f file%s in %.0f director%s",
			v[HR_NF], plural(v[HR_NF]), v[HR_ND],
			v[HR_ND] >= 0.5 && v[HR_ND] < 1.5 ? "y" : "ies");
		break;
	case HR_NEWFILES:
		sb_addf(out, "creates %.0f file%s", v[HR_NEWFILES],
			plural(v[HR_NEWFILES]));
		break;
	case HR_FUNCS:
		sb_addf(out, "touches %.0f function%s", v[HR_FUNCS],
			plural(v[HR_FUNCS]));
		break;
	case HR_NUC:
	case HR_CHURN:
		sb_addf(out, "touches files changed %.0f times before",
			v[HR_NUC]);
		break;
	case HR_FIXES:
	case HR_FIXES_YEAR:
		if (place && place->fixed_n >= 0.5) {
			sb_addf(out,
				"%s was fixed %.0f time%s before (%.1f "
				"weighted to the last year",
				place->fixed, place->fixed_n,
				plural(place->fixed_n), place->fixed_year);
			if (v[HR_FIXES] >= place->fixed_n + 0.5)
				sb_addf(out, "; %.0f in all its files",
					v[HR_FIXES]);
			sb_addch(out, ')');
			break;
		}
		sb_addf(out,
			"touches files fixed %.0f time%s before (%.1f "
			"weighted to the last year)",
			v[HR_FIXES], plural(v[HR_FIXES]), v[HR_FIXES_YEAR]);
		break;
	case HR_FUNC_FIXES:
		sb_addf(out, "its functions were fixed %.0f time%s before",
			v[HR_FUNC_FIXES], plural(v[HR_FUNC_FIXES]));
		break;
	case HR_NDEV:
		sb_addf(out, "touches a file %.0f people have changed",
			v[HR_NDEV]);
		break;
	case HR_AGE:
		sb_addf(out, "touches code last changed %.0f days ago",
			v[HR_AGE]);
		break;
	case HR_EXP:
	case HR_REXP:
	case HR_SEXP:
		if (v[HR_EXP] < 0.5)
			sb_adds(out, "the author's first commit here");
		else
			sb_addf(out,
				"the author has %.0f earlier commit%s here, "
				"%.0f in this subsystem",
				v[HR_EXP], plural(v[HR_EXP]), v[HR_SEXP]);
		break;
	case HR_ISFIX:
		sb_adds(out, v[HR_ISFIX] ? "is a fix" : "is not a fix");
		break;
	case HR_REVERT:
		sb_adds(out, "is a revert");
		break;
	case HR_FEATURE:
		sb_adds(out, "adds a feature");
		break;
	case HR_MSGLINES:
		sb_addf(out, "a long commit message (%.0f lines)",
			v[HR_MSGLINES]);
		break;
	case HR_ALLOC:
		sb_addf(out, "adds %.0f allocation%s", v[i], plural(v[i]));
		break;
	case HR_FREE:
		sb_addf(out, "adds %.0f free%s", v[i], plural(v[i]));
		break;
	case HR_LOCK:
	case HR_UNLOCK:
		sb_addf(out, "adds %.0f lock%s and %.0f unlock%s", v[HR_LOCK],
			plural(v[HR_LOCK]), v[HR_UNLOCK], plural(v[HR_UNLOCK]));
		break;
	case HR_GOTO:
		sb_addf(out, "adds %.0f goto%s", v[i], plural(v[i]));
		break;
	case HR_ERRPATH:
		sb_addf(out, "adds %.0f error path%s", v[i], plural(v[i]));
		break;
	case HR_PTRARITH:
		sb_addf(out, "adds %.0f index or offset computation%s", v[i],
			plural(v[i]));
		break;
	case HR_CAST:
		sb_addf(out, "adds %.0f cast%s", v[i], plural(v[i]));
		break;
	case HR_SIZEMUL:
		sb_addf(out, "multiplies sizes %.0f time%s", v[i],
			plural(v[i]));
		break;
	case HR_NEWFUNC:
		sb_addf(out, "adds %.0f new function%s", v[i], plural(v[i]));
		break;
	case HR_COND:
		sb_addf(out, "adds %.0f condition%s", v[i], plural(v[i]));
		break;
	case HR_LOOP:
		sb_addf(out, "adds %.0f loop%s", v[i], plural(v[i]));
		break;
	case HR_COPY:
		sb_addf(out, "adds %.0f memory or string cop%s", v[i],
			v[i] >= 0.5 && v[i] < 1.5 ? "y" : "ies");
		break;
	case HR_DEL_CHECK:
		sb_addf(out, "removes %.0f check%s or error return%s", v[i],
			plural(v[i]), plural(v[i]));
		break;
	case HR_TESTLINES:
		sb_addf(out, "adds %.0f test line%s", v[i], plural(v[i]));
		break;
	case HR_FILE_BUGS:
	case HR_FILE_BUGS_RECENT:
	case HR_FILE_BUGRATE:
		if (place && place->file_named >= 0.5) {
			sb_addf(out,
				"touches %s, where %.0f of %.0f earlier "
				"commits %s later fixed",
				place->file, place->file_named,
				place->file_commits,
				place->file_named < 1.5 ? "was" : "were");
			if (v[HR_FILE_BUGS] >= place->file_named + 0.5)
				sb_addf(out, " (%.0f in all its files)",
					v[HR_FILE_BUGS]);
			break;
		}
		sb_addf(out,
			"touches files where %.0f earlier commit%s %s later "
			"fixed",
			v[HR_FILE_BUGS], plural(v[HR_FILE_BUGS]),
			v[HR_FILE_BUGS] >= 0.5 && v[HR_FILE_BUGS] < 1.5
				? "was"
				: "were");
		break;
	case HR_FUNC_BUGS:
		if (place && place->func_named >= 0.5) {
			sb_addf(out,
				"touches %s() in %s, where %.0f of %.0f "
				"earlier commits %s later fixed",
				place->func, place->func_file,
				place->func_named, place->func_commits,
				place->func_named < 1.5 ? "was" : "were");
			if (v[HR_FUNC_BUGS] >= place->func_named + 0.5)
				sb_addf(out, " (%.0f in all its functions)",
					v[HR_FUNC_BUGS]);
			break;
		}
		sb_addf(out,
			"touches functions where %.0f earlier commit%s %s "
			"later fixed",
			v[i], plural(v[i]),
			v[i] >= 0.5 && v[i] < 1.5 ? "was" : "were");
		break;
	case HR_DIR_BUGRATE:
		sb_addf(out,
			"in directories where %.0f%% of the commits were "
			"later fixed",
			100 * v[i]);
		break;
	case HR_AUTHOR_BUGS:
	case HR_AUTHOR_BUGRATE:
		if (v[HR_AUTHOR_BUGS] >= 0.5)
			sb_addf(out,
				"%.0f of the author's %.0f earlier commits "
				"were later fixed",
				v[HR_AUTHOR_BUGS], v[HR_EXP]);
		break;
	/*
	 * By name when some words were seen often enough to be weighed;
	 * else the mean of many rarer ones is all there is to say.
	 */
	case HR_WORDS_CODE:
		if (!words || !words->ncode) {
			sb_adds(out, "its code uses names that earlier "
				     "commits later fixed used more often "
				     "than most");
			break;
		}
		sb_adds(out, "its code uses ");
		say_words(words->code, words->ncode, false, "", words->base,
			  out);
		break;
	case HR_WORDS_SUBJECT:
		if (!words || !words->nsubject) {
			sb_adds(out, "its subject's words were more often "
				     "those of commits later fixed");
			break;
		}
		sb_addf(out, "its subject says ");
		say_words(words->subject, words->nsubject, true,
			  "the subjects of ", words->base, out);
		break;
	case HR_GROUND:
		sb_addf(out,
			"its code resembles an earlier commit to the same "
			"file that was later fixed (%.0f%% alike in names)",
			100 * v[i]);
		break;
	}
}

/* Features whose phrase says what the patch lacks ("the author's first"). */
static bool says_lack(int i)
{
	return i == HR_EXP || i == HR_REXP || i == HR_SEXP || i == HR_AGE ||
	       i == HR_ISFIX;
}

void hist_risk_explain(const struct hist_model *m, const struct hist_rfeat *r,
		       const struct hist_rwords *words, struct sb *why)
{
	double x[HF_N], contrib[HF_N];
	int order[HF_N], i, j, said = 0;
	struct sb p = SB_INIT;

	if (!m->ok)
		return;
	hist_features(r, x);
	for (i = 0; i < HF_N; i++) {
		contrib[i] = m->w[i] * zclip((x[i] - m->mean[i]) / m->sd[i]);
		order[i] = i;
	}
	for (i = 0; i < HF_N; i++)
		for (j = i + 1; j < HF_N; j++)
			if (contrib[order[j]] > contrib[order[i]]) {
				int t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
	for (i = 0; i < HF_N && said < 3; i++) {
		int fi = order[i];
		/* A reason is a thing the patch has, not one it lacks. */
		static const int base[HF_N - HR_N] = {
			HR_COND,    HR_ERRPATH,	  HR_ALLOC, HR_LOCK,
			HR_LA_CODE, HR_TESTLINES, HR_LD,    HR_FIXES_YEAR};

		/*
		 * The first reason has to matter; the ones after it may be
		 * small (size carries most of a score, the rest nudge it)
		 * but must still raise it.
		 */
		if (contrib[fi] < (said ? 0.02 : 0.1))
			break;
		/*
		 * By having more of it than most commits: a feature that
		 * raises the score by being low (a directory where 1% of
		 * the commits were later fixed, no resemblance to an
		 * earlier bug) is no reason to look, except the author's
		 * few commits, which the phrase says as such.
		 */
		if (x[fi] < m->mean[fi] && !says_lack(fi))
			continue;
		if (fi >= HR_N)
			fi = base[fi - HR_N];
		if (finfo[fi].count && r->v[fi] < 0.5 && fi != HR_EXP &&
		    fi != HR_REXP && fi != HR_SEXP)
			continue;
		/*
		 * Words raise a score by being likelier than the tree's to
		 * be fixed (a mean log ratio above 0), or they are no reason.
		 */
		if ((fi == HR_WORDS_CODE || fi == HR_WORDS_SUBJECT) &&
		    (r->v[fi] <= 0 || m->w[fi] <= 0))
			continue;
		sb_reset(&p);
		phrase(fi, r, words, &p);
		/* Two size features give the same phrase: say it once. */
		if (!p.len || strstr(sb_str(why), sb_str(&p)))
			continue;
		if (why->len)
			sb_adds(why, "; ");
		sb_add(why, p.buf, p.len);
		said++;
	}
	sb_release(&p);
}

/* The score from which the risk line gives the model's reasons. */
#define RISK_EXPLAIN_FROM 0.5

/* How often the functions the patch touches were fixed before. */
static void add_function_fixes(struct rv_history *h, const struct rv_diff *d,
			       struct sb *why)
{
	sqlite3_stmt *st = NULL;
	size_t i, j, said = 0;

	if (sqlite3_prepare_v2(h->db,
			       "SELECT COUNT(*) FROM funcfix WHERE file = ? "
			       "AND func = ? AND fix_seq < ?",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	for (i = 0; i < d->nfiles && said < 3; i++) {
		const struct rv_file *f = &d->files[i];

		if (!hist_path_has_functions(f->new_path))
			continue;
		for (j = 0; j < f->nhunks && said < 3; j++) {
			char *func = hist_function_name(f->hunks[j].section);

			if (!func)
				continue;
			sqlite3_bind_text(st, 1, f->new_path, -1,
					  SQLITE_STATIC);
			sqlite3_bind_text(st, 2, func, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, h->horizon);
			if (sqlite3_step(st) == SQLITE_ROW &&
			    sqlite3_column_int(st, 0) > 0 &&
			    !strstr(sb_str(why), func)) {
				sb_addf(why,
					"%s%s() was fixed %d time%s before",
					why->len ? "; " : "", func,
					sqlite3_column_int(st, 0),
					sqlite3_column_int(st, 0) == 1 ? ""
								       : "s");
				said++;
			}
			sqlite3_reset(st);
			free(func);
		}
	}
	sqlite3_finalize(st);
}

int rv_history_risk(struct rv_history *h, const struct rv_diff *d,
		    const char *message, const char *author_email,
		    double *score, struct sb *why, struct errmsg *err)
{
	struct hist_rfeat f;
	double x[HF_N];

	*score = -1;
	if (!h || !h->model.ok)
		return errmsg_set(err, RV_ERR_INTERNAL, "%s",
				  h && h->model.why[0]
					  ? h->model.why
					  : "the history index has no risk "
					    "model (too few fixes in the "
					    "history to learn from)");
	hist_risk_patch(h, d, message, author_email, &f);
	hist_features(&f, x);
	*score = hist_model_score(&h->model, x);
	if (why) {
		struct hist_rwords words;

		/*
		 * Below the middle of the history, what raised the score
		 * raised it from lower still: no reason to look. What the
		 * functions went through is a fact worth saying anyway.
		 */
		if (*score >= RISK_EXPLAIN_FROM) {
			hist_risk_words(h, d, message, &words);
			hist_risk_explain(&h->model, &f, &words, why);
		}
		add_function_fixes(h, d, why);
	}
	return 0;
}
