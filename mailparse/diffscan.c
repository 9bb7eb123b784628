// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * diffscan.c - find the diff in a mail body and the paths it touches.
 *
 * A diff starts at a real diff header, not at diff-looking lines quoted
 * in the notes (AUTOSEL mails carry ```c fences with `- foo`/`+ bar`),
 * and ends where its hunk line counts say, not at the first line that
 * happens to start with '-' (the `-- ` signature does).
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "mp-internal.h"

static bool starts(const char *p, const char *e, const char *s)
{
	return mp_line_starts(p, e, s);
}

/* Lines that may follow `diff --git` in a git diff header. */
static bool git_header_line(const char *p, const char *e)
{
	static const char *const kw[] = {
		"index ",
		"old mode ",
		"new mode ",
		"deleted file mode ",
		"new file mode ",
		"similarity index ",
		"dissimilarity index ",
		"rename from ",
		"rename to ",
		"copy from ",
		"copy to ",
		"--- ",
		"+++ ",
		"Binary files ",
		"GIT binary patch",
		"rename old ",
		"rename new ",
	};

	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (starts(p, e, kw[i]))
			return true;
	return false;
}

/* `@@ -a[,b] +c[,d] @@`: fills counts; false when not a hunk header. */
static bool parse_hunk_header(const char *p, const char *e, long *nold,
			      long *nnew)
{
	long v[4] = {0, 1, 0, 1};
	int k = 0;

	/* "@@ -a,b +c,d @@"; hand-made mail also has "@@@ -a,b +c,d @@" */
	if (!starts(p, e, "@@"))
		return false;
	while (p < e && *p == '@')
		p++;
	if (!starts(p, e, " -"))
		return false;
	p += 2;
	for (k = 0; k < 4; k += 2) {
		if (k == 2) {
			if (p >= e || *p != '+')
				return false;
			p++;
		}
		if (p >= e || *p < '0' || *p > '9')
			return false;
		v[k] = 0;
		while (p < e && *p >= '0' && *p <= '9') {
			if (v[k] < 100000000)
				v[k] = v[k] * 10 + (*p - '0');
			p++;
		}
		if (p < e && *p == ',') {
			p++;
			if (p >= e || *p < '0' || *p > '9')
				return false;
			v[k + 1] = 0;
			while (p < e && *p >= '0' && *p <= '9') {
				if (v[k + 1] < 100000000)
					v[k + 1] = v[k + 1] * 10 + (*p - '0');
				p++;
			}
		}
		if (p >= e || *p != ' ')
			return false;
		p++;
	}
	if (!starts(p, e, "@@"))
		return false;
	*nold = v[1];
	*nnew = v[3];
	return true;
}

/*
 * A binary file in a diff with no `diff --git` header: GNU diff -r
 * writes `Binary files a/X and b/X differ`, Mercurial without --git
 * `Binary file X has changed`. Patchwork counts both as a diff.
 */
static bool binary_line(const char *p, const char *e)
{
	while (e > p && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	if (starts(p, e, "Binary files "))
		return e - p > 20 && !memcmp(e - 7, " differ", 7) &&
		       memmem(p + 13, (size_t)(e - p - 13), " and ", 5);
	return starts(p, e, "Binary file ") && e - p > 24 &&
	       !memcmp(e - 12, " has changed", 12);
}

bool mp_diff_starts_here(const char *p, const char *end)
{
	const char *e = mp_eol(p, end), *n, *ne, *n2, *n2e;
	long o, w;

	if (*p == 'B')
		return binary_line(p, e);

	if (starts(p, e, "diff --git ")) {
		n = mp_next_line(p, end);
		return n < end && git_header_line(n, mp_eol(n, end));
	}
	if (starts(p, e, "diff ") || starts(p, e, "Index: ")) {
		/* `diff -u a b` / svn `Index:` + `====` before `---` */
		n = mp_next_line(p, end);
		ne = mp_eol(n, end);
		if (starts(p, e, "Index: ") && starts(n, ne, "====")) {
			n = mp_next_line(n, end);
			ne = mp_eol(n, end);
		}
		return n < end && starts(n, ne, "--- ") &&
		       mp_diff_starts_here(n, end);
	}
	if (!starts(p, e, "--- "))
		return false;
	n = mp_next_line(p, end);
	ne = mp_eol(n, end);
	if (n >= end || !starts(n, ne, "+++ "))
		return false;
	n2 = mp_next_line(n, end);
	n2e = mp_eol(n2, end);
	return n2 < end && parse_hunk_header(n2, n2e, &o, &w);
}

static bool is_fence(const char *p, const char *e)
{
	int sp = 0;

	while (p < e && *p == ' ' && sp < 4) {
		p++;
		sp++;
	}
	return starts(p, e, "```") || starts(p, e, "~~~");
}

/* Offset of the first diff start, or len when none. */
static size_t find_start(const char *text, size_t len, bool skip_fences)
{
	const char *p = text, *end = text + len;
	bool in_fence = false;

	while (p < end) {
		const char *e = mp_eol(p, end);

		if (skip_fences && is_fence(p, e))
			in_fence = !in_fence;
		else if (!in_fence &&
			 (*p == 'd' || *p == '-' || *p == 'I' || *p == 'B') &&
			 mp_diff_starts_here(p, end))
			return (size_t)(p - text);
		p = e < end ? e + 1 : end;
	}
	return len;
}

enum wstate { W_BETWEEN, W_HEADER, W_HUNK, W_BINARY, W_BINARY_GAP };

/* Per-file names seen while walking, for the files list. */
struct section {
	char *git_old, *git_new; /* from `diff --git` */
	char *old, *new;	 /* from ---/+++ or rename/copy */
	bool active;
	bool minus; /* its `--- ` line was seen */
};

struct filelist {
	char ***files;
	size_t *nfiles;
	size_t alloc;
	GHashTable *seen; /* only once the list grows past a few entries */
};

static void filelist_add(struct filelist *fl, char *path)
{
	size_t n = *fl->nfiles;

	if (!path || !*path) {
		free(path);
		return;
	}
	if (fl->seen) {
		if (g_hash_table_contains(fl->seen, path)) {
			free(path);
			return;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			if (!strcmp((*fl->files)[i], path)) {
				free(path);
				return;
			}
	}
	if (n + 1 > fl->alloc) {
		fl->alloc = fl->alloc ? fl->alloc * 2 : 8;
		while (fl->alloc < n + 1)
			fl->alloc *= 2;
		*fl->files = xrealloc(*fl->files, fl->alloc * sizeof(char *));
	}
	(*fl->files)[n] = path;
	*fl->nfiles = n + 1;
	if (!fl->seen && n + 1 > 16) {
		fl->seen = g_hash_table_new(g_str_hash, g_str_equal);
		for (size_t i = 0; i <= n; i++)
			g_hash_table_add(fl->seen, (*fl->files)[i]);
	} else if (fl->seen) {
		g_hash_table_add(fl->seen, path);
	}
}

static bool is_devnull(const char *s)
{
	return s && !strcmp(s, "/dev/null");
}

static void section_flush(struct section *s, struct filelist *fl)
{
	char *pick = NULL;

	if (s->active && fl) {
		const char *n = s->new ? s->new : s->git_new;
		const char *o = s->old ? s->old : s->git_old;

		if (n && !is_devnull(n))
			pick = xstrdup_or_null(n);
		else if (o && !is_devnull(o))
			pick = xstrdup_or_null(o);
		filelist_add(fl, pick);
	}
	free(s->git_old);
	free(s->git_new);
	free(s->old);
	free(s->new);
	memset(s, 0, sizeof(*s));
}

/* Unquote a C-style quoted git path starting at p ("..."); sets *after. */
static char *unquote(const char *p, const char *e, const char **after)
{
	struct sb out = SB_INIT;
	char *r;

	p++; /* opening quote */
	while (p < e && *p != '"') {
		if (*p == '\\' && p + 1 < e) {
			p++;
			if (*p >= '0' && *p <= '7') {
				int v = 0, k = 0;

				while (k < 3 && p < e && *p >= '0' &&
				       *p <= '7') {
					v = v * 8 + (*p - '0');
					p++;
					k++;
				}
				if (v)
					sb_addch(&out, v & 0xff);
				continue;
			}
			switch (*p) {
			case 'n':
				sb_addch(&out, '\n');
				break;
			case 't':
				sb_addch(&out, '\t');
				break;
			case 'a':
				sb_addch(&out, '\a');
				break;
			case 'b':
				sb_addch(&out, '\b');
				break;
			case 'f':
				sb_addch(&out, '\f');
				break;
			case 'r':
				sb_addch(&out, '\r');
				break;
			case 'v':
				sb_addch(&out, '\v');
				break;
			default:
				sb_addch(&out, *p);
			}
			p++;
			continue;
		}
		sb_addch(&out, *p);
		p++;
	}
	if (p < e)
		p++; /* closing quote */
	*after = p;
	r = mp_strdup_utf8(sb_str(&out), out.len);
	sb_release(&out);
	return r;
}

/* Strip a leading "a/" or "b/" (the standard diff prefixes). */
static char *strip_prefix(char *s, char which)
{
	if (s && s[0] == which && s[1] == '/') {
		memmove(s, s + 2, strlen(s + 2) + 1);
	}
	return s;
}

/* Path of a `--- X` / `+++ X` / `rename to X` line, from p to e. */
static char *path_of(const char *p, const char *e, char which)
{
	const char *after, *t;

	while (e > p && (e[-1] == '\r' || e[-1] == '\n'))
		e--;
	if (p < e && *p == '"')
		return strip_prefix(unquote(p, e, &after), which);
	/* plain diffs put a timestamp after a tab; git only a lone tab */
	t = memchr(p, '\t', (size_t)(e - p));
	if (t)
		e = t;
	while (e > p && e[-1] == ' ' && which != 0)
		e--;
	if (e == p)
		return NULL;
	return strip_prefix(mp_strdup_utf8(p, (size_t)(e - p)), which);
}

/* `diff --git a/X b/Y`: the two names, when they can be told apart. */
static void parse_git_line(struct section *s, const char *p, const char *e)
{
	const char *a = p + strlen("diff --git "), *after;

	while (e > a && (e[-1] == '\r' || e[-1] == '\n'))
		e--;
	if (a < e && *a == '"') {
		s->git_old = strip_prefix(unquote(a, e, &after), 'a');
		while (after < e && *after == ' ')
			after++;
		if (after < e && *after == '"')
			s->git_new =
				strip_prefix(unquote(after, e, &after), 'b');
		else if (after < e)
			s->git_new = strip_prefix(
				mp_strdup_utf8(after, (size_t)(e - after)),
				'b');
		return;
	}
	/* Same name on both sides is by far the common case: split mid. */
	if ((e - a) % 2 == 1) {
		size_t half = (size_t)(e - a) / 2;

		if (a[half] == ' ' && starts(a, e, "a/") &&
		    starts(a + half + 1, e, "b/") &&
		    !memcmp(a + 2, a + half + 3, half - 2)) {
			s->git_old = mp_strdup_utf8(a + 2, half - 2);
			s->git_new = mp_strdup_utf8(a + 2, half - 2);
			return;
		}
	}
	/* Else split at the last " b/". */
	for (const char *q = e - 3; q > a; q--) {
		if (q[0] == ' ' && q[1] == 'b' && q[2] == '/') {
			s->git_old = strip_prefix(
				mp_strdup_utf8(a, (size_t)(q - a)), 'a');
			s->git_new = mp_strdup_utf8(q + 3, (size_t)(e - q - 3));
			return;
		}
	}
}

/* The names of a binary_line(): old and new (one name for Mercurial's). */
static void binary_names(struct section *s, const char *p, const char *e)
{
	const char *a, *z, *and = NULL, *q;

	while (e > p && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	if (starts(p, e, "Binary file ")) {
		s->new = path_of(p + 12, e - 12, 0);
		return;
	}
	a = p + 13;
	z = e - 7;
	/* split at the " and " whose right side looks like the new name */
	for (q = a; q + 5 <= z && (q = memmem(q, (size_t)(z - q), " and ", 5));
	     q++) {
		if (!and || starts(q + 5, z, "b/") ||
		    starts(q + 5, z, "/dev/null"))
			and = q;
		if (starts(q + 5, z, "b/"))
			break;
	}
	if (!and)
		return;
	s->old = path_of(a, and, 'a');
	s->new = path_of(and+5, z, 'b');
}

static void set_name(char **slot, char *v)
{
	free(*slot);
	*slot = v;
}

/* `rename from X`, `copy to X`, ...: record the name; false if not one. */
static bool rename_line(const char *p, const char *e, struct section *sec,
			const struct filelist *fl)
{
	static const struct {
		const char *kw;
		bool to;
	} kws[] = {
		{"rename from ", false}, {"rename to ", true},
		{"copy from ", false},	 {"copy to ", true},
		{"rename old ", false},	 {"rename new ", true},
	};

	for (size_t i = 0; i < ARRAY_SIZE(kws); i++) {
		if (!starts(p, e, kws[i].kw))
			continue;
		if (fl)
			set_name(kws[i].to ? &sec->new : &sec->old,
				 path_of(p + strlen(kws[i].kw), e, 0));
		return true;
	}
	return false;
}

/* `-- ` (signature) or `---` (b4's separator): never hunk lines. */
static bool sig_or_sep(const char *p, const char *e)
{
	if (e > p && e[-1] == '\r')
		e--;
	if (e - p == 3 && !memcmp(p, "-- ", 3))
		return true;
	return starts(p, e, "---") && mp_line_blank(p + 3, e);
}

/*
 * After a hunk whose counts ran out, more hunk-looking lines with at
 * least one change among them mean the counts were wrong (hand-edited
 * patches; b4 takes them too). Returns where they end, or p.
 */
static const char *miscounted_tail(const char *p, const char *end)
{
	const char *q = p, *good = p;
	bool change = false;

	while (q < end) {
		const char *e = mp_eol(q, end), *n = e < end ? e + 1 : end;

		if (e == q || (e == q + 1 && *q == '\r')) {
			q = n; /* an empty context line a mailer stripped */
			continue;
		}
		if (*q == ' ') {
			good = n;
		} else if ((*q == '+' || *q == '-') && !sig_or_sep(q, e) &&
			   !mp_diff_starts_here(q, end)) {
			change = true;
			good = n;
		} else {
			break;
		}
		q = n;
	}
	return change ? good : p;
}

/*
 * Walk a diff from text (which starts with a diff header) and return the
 * offset just past its last line; *clean tells whether it was well formed.
 * When fl is not NULL, collect the paths.
 */
static size_t walk(const char *text, size_t len, bool *clean,
		   struct filelist *fl)
{
	const char *p = text, *end = text + len, *last = text;
	enum wstate st = W_BETWEEN;
	struct section sec = {0};
	long nold = 0, nnew = 0;
	bool ok = true, after_hunk = false;

	while (p < end) {
		const char *e = mp_eol(p, end);
		const char *next = e < end ? e + 1 : end, *stop;
		char c = *p;

		switch (st) {
		case W_HUNK:
			if (p == e || c == ' ' || (c == '\r' && e == p + 1)) {
				nold--;
				nnew--;
			} else if (c == '-') {
				nold--;
			} else if (c == '+') {
				nnew--;
			} else if (c != '\\') {
				ok = false; /* hunk cut short */
				goto done;
			}
			last = next;
			if (nold <= 0 && nnew <= 0) {
				if (nold < 0 || nnew < 0)
					ok = false;
				st = W_BETWEEN;
				after_hunk = true;
			}
			break;
		case W_BINARY:
			if (mp_line_blank(p, e))
				st = W_BINARY_GAP;
			last = next;
			break;
		case W_BINARY_GAP:
			if (starts(p, e, "literal ") ||
			    starts(p, e, "delta ")) {
				st = W_BINARY;
				last = next;
				break;
			}
			st = W_BETWEEN;
			/* fall through */
		case W_BETWEEN:
		case W_HEADER:
			if (c == 'B' && st == W_BETWEEN && binary_line(p, e)) {
				section_flush(&sec, fl);
				sec.active = true;
				after_hunk = false;
				if (fl)
					binary_names(&sec, p, e);
			} else if (starts(p, e, "diff ") ||
				   starts(p, e, "Index: ")) {
				if (st == W_BETWEEN &&
				    !mp_diff_starts_here(p, end))
					goto done;
				section_flush(&sec, fl);
				sec.active = true;
				after_hunk = false;
				if (starts(p, e, "diff --git ") && fl)
					parse_git_line(&sec, p, e);
				st = W_HEADER;
			} else if (starts(p, e, "--- ")) {
				if (st == W_BETWEEN) {
					if (!mp_diff_starts_here(p, end))
						goto done;
					section_flush(&sec, fl);
					sec.active = true;
					after_hunk = false;
				} else if (sec.minus) {
					goto done;
				}
				sec.minus = true;
				if (fl)
					set_name(&sec.old,
						 path_of(p + 4, e, 'a'));
				st = W_HEADER;
			} else if (st == W_HEADER && starts(p, e, "+++ ")) {
				if (fl)
					set_name(&sec.new,
						 path_of(p + 4, e, 'b'));
			} else if (parse_hunk_header(p, e, &nold, &nnew)) {
				if (!sec.active)
					goto done;
				st = nold > 0 || nnew > 0 ? W_HUNK : W_BETWEEN;
			} else if (c == '\\' && st == W_BETWEEN && sec.active) {
				/* "\ No newline at end of file" */
			} else if (st == W_HEADER &&
				   starts(p, e, "GIT binary patch")) {
				st = W_BINARY;
			} else if (st == W_HEADER &&
				   rename_line(p, e, &sec, fl)) {
				/* rename/copy from/to */
			} else if (st == W_HEADER && (git_header_line(p, e) ||
						      starts(p, e, "===="))) {
				/* mode, index, similarity, Binary files ... */
			} else if (st == W_BETWEEN && after_hunk &&
				   (stop = miscounted_tail(p, end)) > p) {
				/* hunk counts were wrong: keep what follows */
				ok = false;
				next = stop;
			} else {
				goto done;
			}
			last = next;
			break;
		}
		p = next;
	}
	if (st == W_HUNK)
		ok = false;
done:
	section_flush(&sec, fl);
	*clean = ok;
	return (size_t)(last - text);
}

void mp_diff_find_files(const char *text, size_t len, struct mp_diffspan *span,
			char ***files, size_t *nfiles)
{
	size_t start = find_start(text, len, true);
	struct filelist fl = {files, nfiles, nfiles ? *nfiles : 0, NULL};

	memset(span, 0, sizeof(*span));
	if (start == len)
		start = find_start(text, len, false);
	if (start == len)
		return;
	span->found = true;
	span->start = start;
	span->end = start + walk(text + start, len - start, &span->clean,
				 files ? &fl : NULL);
	if (fl.seen)
		g_hash_table_destroy(fl.seen);
}

void mp_diff_find(const char *text, size_t len, struct mp_diffspan *span)
{
	mp_diff_find_files(text, len, span, NULL, NULL);
}

void mp_diff_files(const char *diff, size_t len, char ***files, size_t *nfiles)
{
	struct filelist fl = {files, nfiles, *nfiles, NULL};
	bool clean;

	walk(diff, len, &clean, &fl);
	if (fl.seen)
		g_hash_table_destroy(fl.seen);
}
