// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vote-verify.c - the guard against invented findings. A finding must point
 * at a file the patch has, at lines that exist in it, in its hunks or in
 * the functions around them, and any code it quotes must exist in the
 * post-image. A finding about code the patch did not touch is
 * pre-existing, and one whose lines a later patch of the series changes
 * is fixed later.
 * Also how the vote tells that two voters mean the same problem.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* Lines from a changed line that still count as touching it. */
#define TOUCH_SLACK 3

static const struct rv_file *post_file(const struct rv_diff *d,
				       const char *path)
{
	size_t i;

	for (i = 0; d && i < d->nfiles; i++)
		if (d->files[i].new_path && !strcmp(d->files[i].new_path, path))
			return &d->files[i];
	return NULL;
}

static bool meets_hunks(const struct rv_file *f, int a, int b)
{
	size_t j;

	for (j = 0; j < f->nhunks; j++) {
		const struct rv_hunk *h = &f->hunks[j];
		int end = h->new_start + h->new_lines - 1;

		if (a <= end && b >= h->new_start)
			return true;
	}
	return false;
}

static bool touched(const struct rv_file *f, int a, int b)
{
	size_t j, k;

	if (f->status == RV_FILE_ADDED)
		return true;
	for (j = 0; j < f->nhunks; j++) {
		const struct rv_hunk *h = &f->hunks[j];
		int at = h->new_start; /* post-image position of a deletion */

		for (k = 0; k < h->nlines; k++) {
			const struct rv_line *l = &h->lines[k];
			int pos = l->origin == '-' ? at : l->new_no;

			if (l->origin != '-')
				at = l->new_no + 1;
			if (l->origin == ' ')
				continue;
			if (pos >= a - TOUCH_SLACK && pos <= b + TOUCH_SLACK)
				return true;
		}
	}
	return false;
}

/* s without any whitespace, for matching code however it was indented. */
static char *squeeze(const char *s, size_t len)
{
	char *out = xmalloc(len + 1), *o = out;
	size_t i;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			*o++ = s[i];
	*o = '\0';
	return out;
}

/* One quoted line, without a diff origin or our line-number gutter. */
static char *quote_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && isdigit((unsigned char)s[i])) {
		size_t j = i;

		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		if (j < n && (s[j] == ' ' || s[j] == ':' || s[j] == '|'))
			i = j + 1;
		while (i < n && s[i] == ' ')
			i++;
	}
	if (i < n && (s[i] == '+' || s[i] == ' '))
		i++;
	return squeeze(s + i, n - i);
}

static bool elided(const char *q)
{
	return !*q || strstr(q, "...") || strstr(q, "\xe2\x80\xa6") ||
	       strlen(q) < 3;
}

static bool quote_exists(const char *quote, const char *ref)
{
	const char *p = quote, *nl;
	bool ok = true;

	while (ok && p && *p) {
		char *q;
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		q = quote_line(p, n);
		if (!elided(q) && !strstr(ref, q))
			ok = false;
		free(q);
		p = nl ? nl + 1 : NULL;
	}
	return ok;
}

/*
 * The diff's lines of f: its post-image lines when the tree cannot be
 * read (removed false), or only the lines it removes (removed true),
 * which a finding about a removal may quote too.
 */
static char *diff_lines(const struct rv_file *f, bool removed)
{
	struct sb sb = SB_INIT;
	size_t j, k;

	for (j = 0; j < f->nhunks; j++)
		for (k = 0; k < f->hunks[j].nlines; k++) {
			const struct rv_line *l = &f->hunks[j].lines[k];

			if ((l->origin == '-') == removed) {
				sb_adds(&sb, l->text ? l->text : "");
				sb_addch(&sb, '\n');
			}
		}
	return sb_detach(&sb, NULL);
}

/*
 * Do lines a..b exist? In the post-image when we have it. Without it, up
 * to the last line the diff shows of the file: past it the model was
 * shown nothing (for a new file that is the whole file).
 */
static bool lines_exist(const struct rv_file *f, int a, int b, const char *post,
			size_t postlen)
{
	int n = 0;
	size_t i;

	if (a < 1 || b < a)
		return false;
	if (post) {
		for (i = 0; i < postlen; i++)
			n += post[i] == '\n';
		n += postlen && post[postlen - 1] != '\n';
		return b <= n;
	}
	for (i = 0; i < f->nhunks; i++) {
		int end = f->hunks[i].new_start + f->hunks[i].new_lines - 1;

		if (end > n)
			n = end;
	}
	return b <= n;
}

enum rv_verdict rv_verify_finding(const struct rv_finding *f,
				  const struct rv_diff *d, const char *post,
				  size_t postlen)
{
	const struct rv_file *file;
	bool inside;

	if (!f->file || !(file = post_file(d, f->file)) ||
	    file->status == RV_FILE_DELETED)
		return RV_VERDICT_OUTSIDE;
	inside = meets_hunks(file, f->line_start, f->line_end);
	if (!inside && post) {
		int s, e;

		inside = rv_function_range(post, postlen, f->line_start, &s,
					   &e) == 0 &&
			 meets_hunks(file, s, e);
	}
	if (!inside)
		return RV_VERDICT_OUTSIDE;
	/*
	 * Lines past the end of the file are made up. Dropped, not clamped:
	 * the claim of where the problem is is wrong, and a clamped range
	 * would still point at most of the file as if it were the place.
	 */
	if (!lines_exist(file, f->line_start, f->line_end, post, postlen))
		return RV_VERDICT_HALLUCINATED;
	if (f->quote && *f->quote) {
		char *raw = post ? NULL : diff_lines(file, false);
		char *gone = diff_lines(file, true);
		struct sb all = SB_INIT;
		char *ref;
		bool ok;

		sb_add(&all, post ? post : raw, post ? postlen : strlen(raw));
		sb_addch(&all, '\n');
		sb_adds(&all, gone);
		ref = squeeze(sb_str(&all), all.len);
		ok = quote_exists(f->quote, ref);
		free(raw);
		free(gone);
		free(ref);
		sb_release(&all);
		if (!ok)
			return RV_VERDICT_HALLUCINATED;
	}
	if (!touched(file, f->line_start, f->line_end))
		return RV_VERDICT_PREEXISTING;
	return RV_VERDICT_KEEP;
}

static const struct rv_file *pre_file(const struct rv_diff *d, const char *path)
{
	size_t i;

	for (i = 0; d && i < d->nfiles; i++)
		if (d->files[i].old_path && !strcmp(d->files[i].old_path, path))
			return &d->files[i];
	return NULL;
}

/*
 * Follow lines a..b of path in patch k's post-image through the later
 * patches k+1..ndiffs-1. Returns true when one of them changes (or
 * deletes) those lines; else *a, *b and *path are where the lines are in
 * the last patch's post-image (*path is replaced, caller frees it).
 */
static bool follow_lines(struct rv_diff *const *diffs, size_t from,
			 size_t ndiffs, char **path, int *a, int *b)
{
	size_t k, j, i;

	for (k = from; k < ndiffs; k++) {
		const struct rv_file *file = pre_file(diffs[k], *path);
		int delta = 0;

		if (!file)
			continue;
		if (!file->new_path)
			return true; /* the file is deleted later */
		for (j = 0; j < file->nhunks; j++) {
			const struct rv_hunk *h = &file->hunks[j];
			int prev_old = h->old_start - 1;

			for (i = 0; i < h->nlines; i++) {
				const struct rv_line *l = &h->lines[i];

				if (l->origin == '-' && l->old_no >= *a &&
				    l->old_no <= *b)
					return true;
				/* A line added right inside or after the range.
				 */
				if (l->origin == '+' && prev_old >= *a - 1 &&
				    prev_old <= *b)
					return true;
				if (l->origin != '+')
					prev_old = l->old_no;
			}
			if (h->old_start + h->old_lines <= *a)
				delta += h->new_lines - h->old_lines;
		}
		*a += delta;
		*b += delta;
		free(*path);
		*path = xstrdup_or_null(file->new_path);
	}
	return false;
}

bool rv_verify_fixed_later(const struct rv_finding *f,
			   struct rv_diff *const *diffs, size_t ndiffs)
{
	char *path;
	int a = f->line_start, b = f->line_end;
	bool fixed;

	if (!f->file || f->patch < 0)
		return false;
	path = xstrdup_or_null(f->file);
	fixed = follow_lines(diffs, (size_t)f->patch + 1, ndiffs, &path, &a,
			     &b);
	free(path);
	return fixed;
}

int rv_verify_at_tip(struct rv_finding *f, struct rv_diff *const *diffs,
		     size_t ndiffs)
{
	char *path;
	int a = f->line_start, b = f->line_end;

	free(f->tip_file);
	f->tip_file = NULL;
	f->tip_line_start = f->tip_line_end = 0;
	if (!f->file || f->patch < 0)
		return -1;
	path = xstrdup_or_null(f->file);
	if (follow_lines(diffs, (size_t)f->patch + 1, ndiffs, &path, &a, &b)) {
		free(path);
		return -1;
	}
	f->tip_file = path;
	f->tip_line_start = a;
	f->tip_line_end = b;
	return 0;
}

/* The pre-image line of post-image line x of f (x not an added line). */
static int map_back(const struct rv_file *f, int x)
{
	int delta = 0;
	size_t j, k;

	for (j = 0; j < f->nhunks; j++) {
		const struct rv_hunk *h = &f->hunks[j];

		if (x >= h->new_start && x < h->new_start + h->new_lines) {
			for (k = 0; k < h->nlines; k++)
				if (h->lines[k].origin == ' ' &&
				    h->lines[k].new_no == x)
					return h->lines[k].old_no;
			return x - delta;
		}
		if (h->new_start + h->new_lines <= x)
			delta += h->new_lines - h->old_lines;
	}
	return x - delta;
}

static bool adds_within(const struct rv_file *f, int a, int b)
{
	size_t j, k;

	for (j = 0; j < f->nhunks; j++)
		for (k = 0; k < f->hunks[j].nlines; k++) {
			const struct rv_line *l = &f->hunks[j].lines[k];

			if (l->origin == '+' && l->new_no >= a &&
			    l->new_no <= b)
				return true;
		}
	return false;
}

int rv_verify_tip_owner(struct rv_finding *f, struct rv_diff *const *diffs,
			size_t np)
{
	char *path = xstrdup_or_null(f->file);
	int a = f->line_start, b = f->line_end, last = -1;
	size_t k = np;

	while (k-- && path) {
		const struct rv_file *file = post_file(diffs[k], path);

		if (!file)
			continue;
		if (last < 0)
			last = (int)k;
		if (adds_within(file, a, b) || !file->old_path) {
			free(f->file);
			f->file = path;
			f->line_start = a;
			f->line_end = b;
			f->patch = (int)k;
			return (int)k;
		}
		a = map_back(file, a);
		b = map_back(file, b);
		free(path);
		path = xstrdup_or_null(file->old_path);
	}
	free(path);
	/* Lines no patch added: the last patch that changed the file. */
	f->patch = last;
	return last;
}

/* ---- what the vote compares ----------------------------------------- */

static const struct {
	const char *from, *to;
} synonyms[] = {
	{"null", "null-deref"},
	{"null-pointer", "null-deref"},
	{"null-dereference", "null-deref"},
	{"null-pointer-dereference", "null-deref"},
	{"null-ptr-deref", "null-deref"},
	{"missing-null-check", "null-deref"},
	{"unchecked-allocation", "null-deref"},
	{"unchecked-malloc", "null-deref"},
	{"npd", "null-deref"},
	{"memory-leak", "leak"},
	{"resource-leak", "leak"},
	{"mem-leak", "leak"},
	{"missing-unlock", "lock-leak"},
	{"unbalanced-lock", "lock-leak"},
	{"lock-imbalance", "lock-leak"},
	{"race-condition", "race"},
	{"data-race", "race"},
	{"missing-lock", "race"},
	{"concurrency", "race"},
	{"locking", "race"},
	{"uaf", "use-after-free"},
	{"buffer-overflow", "bounds"},
	{"out-of-bounds", "bounds"},
	{"oob", "bounds"},
	{"off-by-one", "bounds"},
	{"array-bounds", "bounds"},
	{"missing-error-check", "error-handling"},
	{"unchecked-return", "error-handling"},
	{"error-path", "error-handling"},
};

void rv_category_normalise(const char *in, char *out, size_t outsz)
{
	size_t i, n = 0;

	if (!outsz)
		return;
	for (; in && *in && n + 1 < outsz; in++) {
		char c = (char)tolower((unsigned char)*in);

		out[n++] = (c == '_' || c == ' ') ? '-' : c;
	}
	out[n] = '\0';
	for (i = 0; i < ARRAY_SIZE(synonyms); i++)
		if (!strcmp(out, synonyms[i].from)) {
			snprintf(out, outsz, "%s", synonyms[i].to);
			break;
		}
}

/*
 * quorum's categories: what its own voters emit and review.md asks the
 * models for. Anything else is "other" where a stable id is promised.
 */
static const struct {
	const char *id, *text;
} categories[] = {
	{"null-deref", "NULL pointer dereference"},
	{"leak", "memory or resource leak"},
	{"lock-leak", "lock not released on a path"},
	{"use-after-free", "use after free"},
	{"double-free", "double free"},
	{"bounds", "out-of-bounds access"},
	{"integer-overflow", "integer overflow"},
	{"alloc-overflow", "overflow in an allocation size"},
	{"unsafe-string", "unbounded string copy"},
	{"error-handling", "missing or wrong error handling"},
	{"race", "race condition"},
	{"logic", "logic error"},
	{"api-misuse", "wrong use of an API"},
	{"history", "code like a bug this tree fixed before"},
	{"risk", "a change like those that needed fixes later"},
	{"style", "the tree's coding style"},
	{"other", "another kind of defect"},
};

const char *rv_category_id(const char *category)
{
	char norm[64];
	size_t i;

	rv_category_normalise(category, norm, sizeof(norm));
	for (i = 0; i < ARRAY_SIZE(categories); i++)
		if (!strcmp(norm, categories[i].id))
			return categories[i].id;
	return "other";
}

const char *rv_category_text(const char *id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(categories); i++)
		if (id && !strcmp(id, categories[i].id))
			return categories[i].text;
	return "another kind of defect";
}

#define MAX_WORDS 32

static bool stopword(const char *w)
{
	static const char *const stop[] = {
		"the",	   "and",  "for",  "with", "not",   "may",   "can",
		"without", "when", "this", "that", "from",  "into",  "after",
		"before",  "are",  "its",  "has",  "could", "might", "will",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stop); i++)
		if (!strcmp(w, stop[i]))
			return true;
	return false;
}

static size_t words(const char *s, char w[MAX_WORDS][24])
{
	size_t n = 0, len;

	while (s && *s && n < MAX_WORDS) {
		while (*s && !isalnum((unsigned char)*s) && *s != '_')
			s++;
		for (len = 0; *s && (isalnum((unsigned char)*s) || *s == '_');
		     s++)
			if (len + 1 < sizeof(w[0]))
				w[n][len++] = (char)tolower((unsigned char)*s);
		if (len < 3)
			continue;
		w[n][len] = '\0';
		if (!stopword(w[n]))
			n++;
	}
	return n;
}

bool rv_titles_similar(const char *a, const char *b)
{
	char wa[MAX_WORDS][24], wb[MAX_WORDS][24];
	size_t na = words(a, wa), nb = words(b, wb), i, j, common = 0;
	size_t least = na < nb ? na : nb;

	if (least < 2)
		return false;
	for (i = 0; i < na; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(wa[i], wa[j]))
				break;
		if (j < i)
			continue;
		for (j = 0; j < nb; j++)
			if (!strcmp(wa[i], wb[j])) {
				common++;
				break;
			}
	}
	return common * 2 >= least;
}
