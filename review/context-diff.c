// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * context-diff.c - parse a unified diff (git-style or plain) into struct
 * rv_diff.
 *
 * The input comes from mail and is hostile: every size is capped, hunk
 * counts are checked against the lines actually present, nothing is
 * allocated from a declared count, and the parse is one linear pass.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "review.h"

/* Lines longer than this are never function headers or prototypes. */
#define FUNC_LINE_MAX 512

/* Hunk start/count values above this are not believable. */
#define DIFF_MAX_LINENO 100000000

enum pstate {
	ST_NONE,       /* before any file, or between files in garbage */
	ST_GIT_HEADER, /* after `diff --git`, reading extended headers */
	ST_FILE,       /* after ---/+++ or a hunk: hunks may follow */
	ST_HUNK,       /* inside a hunk, counting lines */
	ST_SKIP, /* binary patch data or a combined diff: skip to next diff */
};

struct parser {
	const char *p, *end; /* the rest of the input */
	size_t lineno;	     /* 1-based number of the line just read */
	struct rv_diff *d;
	size_t files_alloc;
	struct rv_file *f; /* current file, or NULL */
	size_t hunks_alloc;
	struct rv_hunk *h; /* current hunk, or NULL */
	size_t lines_alloc;
	int old_left, new_left; /* lines the current hunk still owes */
	int old_no, new_no;	/* numbers of the next lines */
	enum pstate st;
	struct errmsg *err;
};

/* ---- small helpers -------------------------------------------------- */

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/*
 * Take the next line: *line points at it (not NUL-terminated), *len
 * excludes the newline and one trailing CR. Returns false at end of input.
 */
static bool next_line(struct parser *ps, const char **line, size_t *len)
{
	const char *nl;
	size_t n;

	if (ps->p >= ps->end)
		return false;
	nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
	n = nl ? (size_t)(nl - ps->p) : (size_t)(ps->end - ps->p);
	*line = ps->p;
	ps->p = nl ? nl + 1 : ps->end;
	if (n && (*line)[n - 1] == '\r')
		n--;
	*len = n;
	ps->lineno++;
	return true;
}

/* Look at the next line without taking it. */
static bool peek_line(const struct parser *ps, const char **line, size_t *len)
{
	struct parser tmp = *ps;

	return next_line(&tmp, line, len);
}

/* The name a person knows the current file by, for error sentences. */
static const char *file_name(const struct rv_file *f)
{
	if (!f)
		return "(no file)";
	if (f->new_path && strcmp(f->new_path, "/dev/null"))
		return f->new_path;
	if (f->old_path && strcmp(f->old_path, "/dev/null"))
		return f->old_path;
	return "(unnamed file)";
}

/*
 * Undo git's C-style quoting of a path: s points just after the opening
 * quote. On success returns the unquoted path and sets *used to the bytes
 * consumed including the closing quote; NULL when malformed or when it
 * would contain a NUL byte.
 */
static char *unquote_c(const char *s, size_t len, size_t *used)
{
	struct sb out;
	size_t i = 0;

	sb_init(&out, RV_DIFF_MAX_PATH);
	while (i < len) {
		unsigned char c = (unsigned char)s[i++];

		if (c == '"') {
			*used = i;
			if (!out.len)
				break;
			return sb_detach(&out, NULL);
		}
		if (c != '\\') {
			if (sb_addch(&out, c) < 0)
				break;
			continue;
		}
		if (i >= len)
			break;
		c = (unsigned char)s[i++];
		switch (c) {
		case 'a':
			c = '\a';
			break;
		case 'b':
			c = '\b';
			break;
		case 't':
			c = '\t';
			break;
		case 'n':
			c = '\n';
			break;
		case 'v':
			c = '\v';
			break;
		case 'f':
			c = '\f';
			break;
		case 'r':
			c = '\r';
			break;
		case '"':
		case '\\':
			break;
		case '0':
		case '1':
		case '2':
		case '3':
			if (i + 2 > len || s[i] < '0' || s[i] > '7' ||
			    s[i + 1] < '0' || s[i + 1] > '7')
				goto bad;
			c = (unsigned char)(((c - '0') << 6) |
					    ((s[i] - '0') << 3) |
					    (s[i + 1] - '0'));
			i += 2;
			if (!c)
				goto bad;
			break;
		default:
			goto bad;
		}
		if (sb_addch(&out, c) < 0)
			break;
	}
bad:
	sb_release(&out);
	return NULL;
}

/*
 * Read one path from a `---`/`+++`/`rename from` style line. A quoted
 * path is unquoted; an unquoted one ends at a tab (plain diffs put a
 * timestamp there) or at the end of the line. Returns NULL when
 * malformed.
 */
static char *read_path(const char *s, size_t len)
{
	const char *tab;
	size_t used;

	if (len && s[0] == '"')
		return unquote_c(s + 1, len - 1, &used);
	tab = memchr(s, '\t', len);
	if (tab)
		len = (size_t)(tab - s);
	while (len && s[len - 1] == ' ' && tab)
		len--;
	if (!len || len > RV_DIFF_MAX_PATH)
		return NULL;
	return xstrndup(s, len);
}

static bool is_dev_null(const char *path)
{
	return path && !strcmp(path, "/dev/null");
}

/* Strip one leading "x/" component from path in place. */
static void strip_component(char *path)
{
	char *slash = strchr(path, '/');

	if (slash && slash[1])
		memmove(path, slash + 1, strlen(slash + 1) + 1);
}

static void strip_dot_slash(char *path)
{
	size_t n = 0;

	while (path[n] == '.' && path[n + 1] == '/')
		n += 2;
	if (n)
		memmove(path, path + n, strlen(path + n) + 1);
}

/*
 * Decide how many leading components to strip from a pair of paths, the
 * way `patch -p1` or `-p0` would be chosen by a person: "a/" and "b/"
 * prefixes go; two different top directories over the same rest
 * (linux-orig/x, linux/x) go; otherwise the paths are taken as they are.
 */
static void strip_prefixes(char *old_path, char *new_path)
{
	const char *os, *ns;

	if (old_path)
		strip_dot_slash(old_path);
	if (new_path)
		strip_dot_slash(new_path);
	if (is_dev_null(old_path))
		old_path = NULL;
	if (is_dev_null(new_path))
		new_path = NULL;
	if ((!old_path || !strncmp(old_path, "a/", 2)) &&
	    (!new_path || !strncmp(new_path, "b/", 2)) &&
	    (old_path || new_path)) {
		if (old_path)
			strip_component(old_path);
		if (new_path)
			strip_component(new_path);
		return;
	}
	if (!old_path || !new_path)
		return;
	os = strchr(old_path, '/');
	ns = strchr(new_path, '/');
	if (os && ns && os[1] && !strcmp(os, ns) &&
	    (os - old_path != ns - new_path ||
	     memcmp(old_path, new_path, (size_t)(os - old_path)))) {
		strip_component(old_path);
		strip_component(new_path);
	}
}

/* ---- building the result -------------------------------------------- */

static int finish_file(struct parser *ps);

static int start_file(struct parser *ps)
{
	int ret = finish_file(ps);

	if (ret)
		return ret;
	if (ps->d->nfiles >= RV_DIFF_MAX_FILES)
		return errmsg_set(ps->err, RV_ERR_INPUT,
				  "the diff touches more than %d files; "
				  "split the series or review it in parts",
				  RV_DIFF_MAX_FILES);
	ALLOC_GROW(ps->d->files, ps->d->nfiles + 1, ps->files_alloc);
	ps->f = &ps->d->files[ps->d->nfiles++];
	memset(ps->f, 0, sizeof(*ps->f));
	ps->f->status = RV_FILE_MODIFIED;
	ps->hunks_alloc = 0;
	ps->h = NULL;
	return 0;
}

/* Settle the status of the current file once its headers are all read. */
static int finish_file(struct parser *ps)
{
	struct rv_file *f = ps->f;

	if (!f)
		return 0;
	ps->f = NULL;
	ps->h = NULL;
	if (is_dev_null(f->old_path)) {
		free(f->old_path);
		f->old_path = NULL;
	}
	if (is_dev_null(f->new_path)) {
		free(f->new_path);
		f->new_path = NULL;
	}
	if (!f->old_path && !f->new_path)
		return errmsg_set(
			ps->err, RV_ERR_INPUT,
			"diff line %zu: a file has neither an old nor "
			"a new name",
			ps->lineno);
	if (!f->old_path)
		f->status = RV_FILE_ADDED;
	else if (!f->new_path)
		f->status = RV_FILE_DELETED;
	return 0;
}

static void set_path(char **slot, char *path)
{
	free(*slot);
	*slot = path;
}

/*
 * Split the two names of `diff --git A B`. Quoted names are unquoted;
 * unquoted names with spaces are split where both halves name the same
 * file after their first component, as git itself does.
 */
static int parse_git_names(struct parser *ps, const char *s, size_t len)
{
	char *a = NULL, *b = NULL;
	size_t used, i;

	if (len && s[0] == '"') {
		a = unquote_c(s + 1, len - 1, &used);
		if (!a)
			goto bad;
		used++;
		if (used >= len || s[used] != ' ')
			goto bad;
		s += used + 1;
		len -= used + 1;
		b = read_path(s, len);
		if (!b)
			goto bad;
	} else {
		const char *sp = NULL;

		if (len && s[len - 1] == '"') {
			/* a/plain "b/quoted" */
			for (i = 0; i + 1 < len; i++)
				if (s[i] == ' ' && s[i + 1] == '"')
					sp = s + i;
			if (!sp)
				goto bad;
			b = unquote_c(sp + 2, len - (size_t)(sp + 2 - s),
				      &used);
		} else if (len <= 2 * RV_DIFF_MAX_PATH + 1) {
			/*
			 * Find the space where both halves agree after their
			 * first component. Walking right to left keeps the
			 * next slash at hand, so this stays linear.
			 */
			const char *fs = memchr(s, '/', len);
			size_t nxt = len; /* first '/' after i, or len */

			for (i = len; i-- > 0;) {
				size_t la, lb;

				if (s[i] == '/') {
					nxt = i;
					continue;
				}
				if (s[i] != ' ' || !fs || fs >= s + i ||
				    nxt == len)
					continue;
				la = i - (size_t)(fs - s);
				lb = len - nxt;
				if (la == lb && !memcmp(fs, s + nxt, la))
					sp = s + i;
			}
			if (!sp) /* a rename: take the first space */
				sp = memchr(s, ' ', len);
			if (!sp)
				goto bad;
			b = read_path(sp + 1, len - (size_t)(sp + 1 - s));
		} else {
			goto bad;
		}
		if (!b || sp == s || (size_t)(sp - s) > RV_DIFF_MAX_PATH)
			goto bad;
		a = xstrndup(s, (size_t)(sp - s));
	}
	strip_prefixes(a, b);
	set_path(&ps->f->old_path, a);
	set_path(&ps->f->new_path, b);
	return 0;
bad:
	free(a);
	free(b);
	/* A header we cannot split still starts a file; ---/+++ name it. */
	return 0;
}

static bool parse_num(const char **s, const char *end, int *out)
{
	long v = 0;
	const char *p = *s;

	if (p >= end || !isdigit((unsigned char)*p))
		return false;
	while (p < end && isdigit((unsigned char)*p)) {
		v = v * 10 + (*p - '0');
		if (v > DIFF_MAX_LINENO)
			return false;
		p++;
	}
	*s = p;
	*out = (int)v;
	return true;
}

/* "@@ -a[,b] +c[,d] @@[ section]" */
static int start_hunk(struct parser *ps, const char *line, size_t len)
{
	const char *p = line + 3, *end = line + len;
	int os, ol = 1, ns, nl = 1;
	struct rv_hunk *h;
	const char *sec;

	if (p >= end || *p++ != '-' || !parse_num(&p, end, &os))
		goto bad;
	if (p < end && *p == ',') {
		p++;
		if (!parse_num(&p, end, &ol))
			goto bad;
	}
	if (p >= end || *p++ != ' ' || p >= end || *p++ != '+' ||
	    !parse_num(&p, end, &ns))
		goto bad;
	if (p < end && *p == ',') {
		p++;
		if (!parse_num(&p, end, &nl))
			goto bad;
	}
	if (end - p < 3 || memcmp(p, " @@", 3))
		goto bad;
	p += 3;
	if (ps->f->nhunks >= RV_DIFF_MAX_HUNKS)
		return errmsg_set(ps->err, RV_ERR_INPUT,
				  "%s has more than %d hunks; the diff is not "
				  "one a person could review",
				  file_name(ps->f), RV_DIFF_MAX_HUNKS);
	ALLOC_GROW(ps->f->hunks, ps->f->nhunks + 1, ps->hunks_alloc);
	h = &ps->f->hunks[ps->f->nhunks++];
	memset(h, 0, sizeof(*h));
	h->old_start = os;
	h->old_lines = ol;
	h->new_start = ns;
	h->new_lines = nl;
	sec = p;
	while (sec < end && (*sec == ' ' || *sec == '\t'))
		sec++;
	if (sec < end)
		h->section = xstrndup(sec, (size_t)(end - sec));
	ps->h = h;
	ps->lines_alloc = 0;
	ps->old_left = ol;
	ps->new_left = nl;
	ps->old_no = os;
	ps->new_no = ns;
	ps->st = (ol || nl) ? ST_HUNK : ST_FILE;
	return 0;
bad:
	return errmsg_set(ps->err, RV_ERR_INPUT,
			  "%s: malformed hunk header at diff line %zu; "
			  "expected \"@@ -a,b +c,d @@\"",
			  file_name(ps->f), ps->lineno);
}

static int hunk_error_short(struct parser *ps)
{
	return errmsg_set(ps->err, RV_ERR_INPUT,
			  "%s hunk %zu (@@ -%d,%d +%d,%d @@) has fewer lines "
			  "than its header declares (%d old and %d new "
			  "missing at diff line %zu); the patch is truncated "
			  "or was mangled by a mailer",
			  file_name(ps->f), ps->f->nhunks, ps->h->old_start,
			  ps->h->old_lines, ps->h->new_start, ps->h->new_lines,
			  ps->old_left, ps->new_left, ps->lineno);
}

static int hunk_error_long(struct parser *ps)
{
	const struct rv_hunk *h = &ps->f->hunks[ps->f->nhunks - 1];

	return errmsg_set(ps->err, RV_ERR_INPUT,
			  "%s hunk %zu (@@ -%d,%d +%d,%d @@) has more lines "
			  "than its header declares (extra line at diff line "
			  "%zu); the patch was edited by hand or mangled",
			  file_name(ps->f), ps->f->nhunks, h->old_start,
			  h->old_lines, h->new_start, h->new_lines, ps->lineno);
}

/* One line inside a hunk. */
static int hunk_line(struct parser *ps, const char *line, size_t len)
{
	struct rv_line *l;
	char origin = len ? line[0] : ' ';

	/* Mailers strip the lone space of an empty context line. */
	if (!len)
		origin = ' ';
	if (origin == '\\')
		return 0; /* "\ No newline at end of file" */
	if (origin != ' ' && origin != '+' && origin != '-')
		return hunk_error_short(ps);
	if ((origin != '+' && ps->old_left <= 0) ||
	    (origin != '-' && ps->new_left <= 0))
		return errmsg_set(ps->err, RV_ERR_INPUT,
				  "%s hunk %zu (@@ -%d,%d +%d,%d @@) has more "
				  "'%c' lines than its header declares (diff "
				  "line %zu); the patch was edited by hand or "
				  "mangled",
				  file_name(ps->f), ps->f->nhunks,
				  ps->h->old_start, ps->h->old_lines,
				  ps->h->new_start, ps->h->new_lines,
				  origin == '+'	  ? '+'
				  : origin == '-' ? '-'
						  : ' ',
				  ps->lineno);
	ALLOC_GROW(ps->h->lines, ps->h->nlines + 1, ps->lines_alloc);
	l = &ps->h->lines[ps->h->nlines++];
	l->origin = origin;
	l->old_no = origin == '+' ? 0 : ps->old_no++;
	l->new_no = origin == '-' ? 0 : ps->new_no++;
	l->text = xstrndup(len ? line + 1 : "", len ? len - 1 : 0);
	if (origin != '+')
		ps->old_left--;
	if (origin != '-')
		ps->new_left--;
	if (!ps->old_left && !ps->new_left)
		ps->st = ST_FILE;
	return 0;
}

/* `--- X` followed by `+++ Y`: name (or start) a file. */
static int minus_plus(struct parser *ps, const char *m, size_t mlen,
		      const char *p, size_t plen)
{
	char *a = read_path(m + 4, mlen - 4);
	char *b = read_path(p + 4, plen - 4);
	int ret = 0;

	if (!a || !b) {
		ret = errmsg_set(ps->err, RV_ERR_INPUT,
				 "diff line %zu: cannot read the file names "
				 "of a ---/+++ header",
				 ps->lineno);
		goto out;
	}
	/* In a git diff the ---/+++ pair names the file `diff --git` began. */
	if (ps->st != ST_GIT_HEADER || !ps->f) {
		ret = start_file(ps);
		if (ret)
			goto out;
	}
	strip_prefixes(a, b);
	set_path(&ps->f->old_path, a);
	set_path(&ps->f->new_path, b);
	a = b = NULL;
	ps->st = ST_FILE;
out:
	free(a);
	free(b);
	return ret;
}

/* An extended header line after `diff --git`. */
static int git_header(struct parser *ps, const char *line, size_t len)
{
	struct rv_file *f = ps->f;
	char *path;

	if (has_prefix(line, len, "new file mode ")) {
		f->status = RV_FILE_ADDED;
		set_path(&f->old_path, NULL);
	} else if (has_prefix(line, len, "deleted file mode ")) {
		f->status = RV_FILE_DELETED;
		set_path(&f->new_path, NULL);
	} else if (has_prefix(line, len, "rename from ") ||
		   has_prefix(line, len, "copy from ")) {
		size_t skip = line[0] == 'r' ? 12 : 10;

		path = read_path(line + skip, len - skip);
		if (!path)
			goto bad;
		strip_dot_slash(path);
		set_path(&f->old_path, path);
		f->status = line[0] == 'r' ? RV_FILE_RENAMED : RV_FILE_COPIED;
	} else if (has_prefix(line, len, "rename to ") ||
		   has_prefix(line, len, "copy to ")) {
		size_t skip = line[0] == 'r' ? 10 : 8;

		path = read_path(line + skip, len - skip);
		if (!path)
			goto bad;
		strip_dot_slash(path);
		set_path(&f->new_path, path);
		f->status = line[0] == 'r' ? RV_FILE_RENAMED : RV_FILE_COPIED;
	} else if (has_prefix(line, len, "Binary files ")) {
		f->binary = true;
		ps->st = ST_FILE;
	} else if (has_prefix(line, len, "GIT binary patch")) {
		f->binary = true;
		ps->st = ST_SKIP;
	}
	/* old mode, new mode, index, similarity index: nothing to keep */
	return 0;
bad:
	return errmsg_set(ps->err, RV_ERR_INPUT,
			  "diff line %zu: cannot read the path of a rename or "
			  "copy header",
			  ps->lineno);
}

/* ---- the parse ------------------------------------------------------ */

static int parse(struct parser *ps)
{
	const char *line, *nline;
	size_t len, nlen;
	int ret;

	while (next_line(ps, &line, &len)) {
		if (len > RV_DIFF_MAX_LINE)
			return errmsg_set(ps->err, RV_ERR_INPUT,
					  "diff line %zu is longer than %d "
					  "bytes; it is not reviewable text",
					  ps->lineno, RV_DIFF_MAX_LINE);
		if (memchr(line, '\0', len))
			return errmsg_set(ps->err, RV_ERR_INPUT,
					  "diff line %zu contains a NUL byte; "
					  "binary content must be sent as a "
					  "git binary patch",
					  ps->lineno);
		if (ps->st == ST_HUNK) {
			ret = hunk_line(ps, line, len);
			if (ret)
				return ret;
			continue;
		}
		if (has_prefix(line, len, "diff --git ")) {
			ret = start_file(ps);
			if (ret)
				return ret;
			ret = parse_git_names(ps, line + 11, len - 11);
			if (ret)
				return ret;
			ps->st = ST_GIT_HEADER;
			continue;
		}
		if (has_prefix(line, len, "diff --cc ") ||
		    has_prefix(line, len, "diff --combined ")) {
			/* merge diffs are not patches anyone mails */
			ret = finish_file(ps);
			if (ret)
				return ret;
			ps->st = ST_SKIP;
			continue;
		}
		if (ps->st == ST_SKIP)
			continue;
		if (has_prefix(line, len, "--- ") &&
		    peek_line(ps, &nline, &nlen) &&
		    has_prefix(nline, nlen, "+++ ")) {
			next_line(ps, &nline, &nlen);
			if (nlen > RV_DIFF_MAX_LINE ||
			    memchr(nline, '\0', nlen))
				return errmsg_set(ps->err, RV_ERR_INPUT,
						  "diff line %zu is not a "
						  "readable +++ header",
						  ps->lineno);
			ret = minus_plus(ps, line, len, nline, nlen);
			if (ret)
				return ret;
			continue;
		}
		if (has_prefix(line, len, "@@ ")) {
			if (!ps->f || ps->st == ST_NONE)
				return errmsg_set(ps->err, RV_ERR_INPUT,
						  "diff line %zu: a hunk with "
						  "no file header before it",
						  ps->lineno);
			if (ps->f->binary)
				return errmsg_set(
					ps->err, RV_ERR_INPUT,
					"%s: a text hunk in a "
					"binary file at diff line %zu",
					file_name(ps->f), ps->lineno);
			ret = start_hunk(ps, line, len);
			if (ret)
				return ret;
			continue;
		}
		if (ps->st == ST_GIT_HEADER) {
			ret = git_header(ps, line, len);
			if (ret)
				return ret;
			continue;
		}
		if (ps->st == ST_FILE && ps->f && ps->f->nhunks) {
			/* right after a complete hunk */
			if (len == 2 && !memcmp(line, "--", 2))
				break; /* "-- " signature, trailing space cut */
			if (len == 3 && !memcmp(line, "-- ", 3))
				break;
			if (len && line[0] == '\\')
				continue;
			if (len && (line[0] == '+' || line[0] == '-' ||
				    line[0] == ' '))
				return hunk_error_long(ps);
		}
		/* anything else between files is commentary: ignore it */
	}
	if (ps->st == ST_HUNK)
		return hunk_error_short(ps);
	return finish_file(ps);
}

int rv_diff_parse(struct rv_diff **out, const char *diff, size_t len,
		  struct errmsg *err)
{
	struct parser ps;
	int ret;

	*out = NULL;
	if (!diff && len)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "no diff text was given to the parser");
	if (len > RV_DIFF_MAX_BYTES)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the diff is %zu bytes, more than the %zu "
				  "a review reads",
				  len, (size_t)RV_DIFF_MAX_BYTES);
	memset(&ps, 0, sizeof(ps));
	if (diff) { /* NULL + 0 is undefined behaviour */
		ps.p = diff;
		ps.end = diff + len;
	}
	ps.d = xcalloc(1, sizeof(*ps.d));
	ps.err = err;
	ps.st = ST_NONE;
	ret = parse(&ps);
	if (ret) {
		rv_diff_free(ps.d);
		return ret;
	}
	*out = ps.d;
	return 0;
}

void rv_diff_free(struct rv_diff *d)
{
	size_t i, j, k;

	if (!d)
		return;
	for (i = 0; i < d->nfiles; i++) {
		struct rv_file *f = &d->files[i];

		for (j = 0; j < f->nhunks; j++) {
			struct rv_hunk *h = &f->hunks[j];

			for (k = 0; k < h->nlines; k++)
				free(h->lines[k].text);
			free(h->lines);
			free(h->section);
		}
		free(f->hunks);
		free(f->old_path);
		free(f->new_path);
	}
	free(d->files);
	free(d);
}

/* ---- helpers for voters --------------------------------------------- */

const struct rv_file *rv_diff_find_file(const struct rv_diff *d,
					const char *path)
{
	size_t i;

	if (!d || !path)
		return NULL;
	for (i = 0; i < d->nfiles; i++)
		if (d->files[i].new_path && !strcmp(d->files[i].new_path, path))
			return &d->files[i];
	for (i = 0; i < d->nfiles; i++)
		if (d->files[i].old_path && !strcmp(d->files[i].old_path, path))
			return &d->files[i];
	return NULL;
}

static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_';
}

/* C keywords that look like `name (` at the start of a line but are not
 * function definitions. */
static bool is_control_word(const char *s, size_t n)
{
	static const char *const words[] = {
		"if", "for",  "while", "switch", "return",	 "sizeof",
		"do", "else", "case",  "typeof", "__attribute__"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !memcmp(words[i], s, n))
			return true;
	return false;
}

/*
 * If text looks like the first line of a C function definition (starts
 * at column 0, has `name(`, is not a declaration or preprocessor line),
 * copy the name into buf and return its length; else 0.
 */
static bool ends_with_semicolon(const char *text);

static size_t function_name_of(const char *text, char *buf, size_t bufsz)
{
	const char *paren, *e, *s;
	size_t n;

	if (!text || !text[0] || isspace((unsigned char)text[0]) ||
	    text[0] == '#' || text[0] == '{' || text[0] == '}' ||
	    text[0] == '/' || text[0] == '*')
		return 0;
	/* function headers are short; a long line is something else */
	n = strnlen(text, FUNC_LINE_MAX + 1);
	if (n > FUNC_LINE_MAX)
		return 0;
	paren = memchr(text, '(', n);
	if (!paren || ends_with_semicolon(text))
		return 0;
	/* `int (*fp)(void)`: a pointer declarator, not a function */
	for (e = paren + 1; *e == ' ' || *e == '\t'; e++)
		;
	if (*e == '*' || *e == '^')
		return 0;
	/* an initializer or a declaration is not a definition */
	e = strchr(text, '=');
	if (e && e < paren)
		return 0;
	e = paren;
	while (e > text && isspace((unsigned char)e[-1]))
		e--;
	s = e;
	while (s > text && is_ident_char((unsigned char)s[-1]))
		s--;
	n = (size_t)(e - s);
	if (!n || isdigit((unsigned char)*s) || is_control_word(s, n) ||
	    n + 1 > bufsz)
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}

size_t rv_hunk_function(const struct rv_hunk *h, size_t idx, char *buf,
			size_t bufsz)
{
	char cand[128];
	size_t clen = 0, i, n;
	bool in_body = false;

	if (!buf || !bufsz)
		return 0;
	buf[0] = '\0';
	if (!h || idx >= h->nlines)
		return 0;
	if (h->section) {
		clen = function_name_of(h->section, cand, sizeof(cand));
		in_body = clen != 0;
	}
	for (i = 0; i <= idx; i++) {
		const char *t = h->lines[i].text;

		if (h->lines[i].origin == '-')
			continue;
		if (t[0] == '}') {
			clen = 0; /* a function (or struct) ended here */
			in_body = false;
			continue;
		}
		if (t[0] == '{') {
			in_body = clen != 0;
			continue;
		}
		n = function_name_of(t, cand, sizeof(cand));
		if (n) {
			clen = n;
			in_body = strchr(t, '{') != NULL;
			continue;
		}
		if (!clen || in_body)
			continue;
		/* a prototype spanning lines: `int foo(int a,\n int b);` */
		if (ends_with_semicolon(t))
			clen = 0;
		else if (strchr(t, '{'))
			in_body = true;
	}
	if (!clen || clen + 1 > bufsz)
		return 0;
	memcpy(buf, cand, clen + 1);
	return clen;
}

/* Does a line end a statement (a declaration, not a definition)? */
static bool ends_with_semicolon(const char *text)
{
	size_t n = strnlen(text, FUNC_LINE_MAX + 1);

	if (n > FUNC_LINE_MAX)
		return false; /* too long to be a declaration we track */
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	return n && text[n - 1] == ';';
}

/* How far back rv_source_function() walks looking for a header. */
#define SOURCE_FUNC_MAX_LINES 4000

size_t rv_source_function(const char *src, size_t len, int line, char *buf,
			  size_t bufsz)
{
	const char *p, *end, *target = NULL, *ls, *nl;
	char copy[FUNC_LINE_MAX + 1];
	int no = 1, walked = 0;
	size_t n;

	if (!buf || !bufsz)
		return 0;
	buf[0] = '\0';
	if (!src || line < 1)
		return 0;
	end = src + len;
	/* find the start of the target line */
	for (p = src; p < end && no < line; p = nl + 1, no++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return 0;
	}
	if (p >= end)
		return 0;
	target = p;
	/* walk back over the lines before it */
	for (ls = target; ls > src && walked < SOURCE_FUNC_MAX_LINES;
	     walked++) {
		const char *le = ls - 1; /* the '\n' ending the previous line */

		ls = memrchr(src, '\n', (size_t)(le - src));
		ls = ls ? ls + 1 : src;
		if (*ls == '}')
			return 0; /* the previous function ended: none */
		n = (size_t)(le - ls);
		if (!n || n > FUNC_LINE_MAX || isspace((unsigned char)*ls))
			continue;
		memcpy(copy, ls, n);
		copy[n] = '\0';
		if (copy[n - 1] == '\r')
			copy[n - 1] = '\0';
		n = function_name_of(copy, buf, bufsz);
		if (n)
			return n;
		buf[0] = '\0';
	}
	return 0;
}

/* ---- every line's function, in one pass ----------------------------- */

/* How far rv_function_range() walks up and down from a line. */
#define RANGE_SCAN_MAX 4000
/* Names longer than this are not looked for (callers hold 128 bytes). */
#define INDEX_NAME_MAX 128

bool rv_line_is_header(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	if (s[n - 1] == ';' || s[n - 1] == ':')
		return false;
	return memchr(s, '(', n) != NULL;
}

size_t rv_source_index_line_len(const struct rv_source_index *ix, size_t i)
{
	const char *s = ix->start[i];
	const char *e = i + 1 < ix->n ? ix->start[i + 1] : ix->src + ix->len;

	while (e > s && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	return (size_t)(e - s);
}

/*
 * What rv_source_function() makes of line i when it walks over it: '}'
 * ends the walk, 'f' is a header (its name into buf), 0 is neither.
 */
static int source_line_kind(const struct rv_source_index *ix, size_t i,
			    char *buf, size_t bufsz)
{
	const char *ls = ix->start[i], *end = ix->src + ix->len, *le;
	char copy[FUNC_LINE_MAX + 1];
	size_t n;

	if (*ls == '}')
		return '}';
	le = memchr(ls, '\n', (size_t)(end - ls));
	if (!le)
		return 0; /* the last line: never above another one */
	n = (size_t)(le - ls);
	if (!n || n > FUNC_LINE_MAX || isspace((unsigned char)*ls))
		return 0;
	memcpy(copy, ls, n);
	copy[n] = '\0';
	if (copy[n - 1] == '\r')
		copy[n - 1] = '\0';
	return function_name_of(copy, buf, bufsz) ? 'f' : 0;
}

void rv_source_index_init(struct rv_source_index *ix, const char *src,
			  size_t len)
{
	const char *p = src, *end = src + len, *nl;
	size_t alloc = 0, i;
	char name[INDEX_NAME_MAX];
	int last_fn = -1, last_hdr = -1, next = 0;

	memset(ix, 0, sizeof(*ix));
	ix->src = src;
	ix->len = len;
	while (src && p < end) {
		ALLOC_GROW(ix->start, ix->n + 1, alloc);
		ix->start[ix->n++] = p;
		nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	ix->fn_mark = xcalloc(ix->n + 1, sizeof(*ix->fn_mark));
	ix->hdr_mark = xcalloc(ix->n + 1, sizeof(*ix->hdr_mark));
	ix->close_next = xcalloc(ix->n + 1, sizeof(*ix->close_next));
	for (i = 0; i < ix->n; i++) {
		size_t n = rv_source_index_line_len(ix, i);
		bool close = n && *ix->start[i] == '}';

		if (source_line_kind(ix, i, name, sizeof(name)))
			last_fn = (int)i;
		if (close || rv_line_is_header(ix->start[i], n))
			last_hdr = (int)i;
		ix->fn_mark[i] = last_fn;
		ix->hdr_mark[i] = last_hdr;
	}
	next = (int)ix->n;
	for (i = ix->n; i-- > 0;) {
		size_t n = rv_source_index_line_len(ix, i);

		if (n && *ix->start[i] == '}')
			next = (int)i;
		ix->close_next[i] = next;
	}
}

void rv_source_index_release(struct rv_source_index *ix)
{
	free(ix->start);
	free(ix->fn_mark);
	free(ix->hdr_mark);
	free(ix->close_next);
	memset(ix, 0, sizeof(*ix));
}

size_t rv_source_index_function(const struct rv_source_index *ix, int line,
				char *buf, size_t bufsz)
{
	int above, mark;

	if (!buf || !bufsz)
		return 0;
	buf[0] = '\0';
	/* Another buffer size changes which headers count: walk as it did. */
	if (bufsz != INDEX_NAME_MAX)
		return rv_source_function(ix->src, ix->len, line, buf, bufsz);
	if (line < 2 || (size_t)line > ix->n)
		return 0;
	above = line - 2; /* the line just above, 0-based */
	mark = ix->fn_mark[above];
	if (mark < 0 || above - mark >= SOURCE_FUNC_MAX_LINES)
		return 0;
	if (source_line_kind(ix, (size_t)mark, buf, bufsz) != 'f') {
		buf[0] = '\0';
		return 0;
	}
	return strlen(buf);
}

int rv_source_index_range(const struct rv_source_index *ix, int line,
			  int *start, int *end)
{
	size_t i;
	int mark;

	if (line < 1 || (size_t)line > ix->n)
		return -1;
	*start = *end = 0;
	i = (size_t)line - 1;
	/* Up to the header; a column-0 '}' above the line ends the search. */
	if (rv_line_is_header(ix->start[i], rv_source_index_line_len(ix, i))) {
		*start = line;
	} else if (i) {
		mark = ix->hdr_mark[i - 1];
		if (mark >= 0 && i - (size_t)mark < RANGE_SCAN_MAX &&
		    *ix->start[mark] != '}')
			*start = mark + 1;
	}
	if (!*start)
		return -1;
	/* Down to the column-0 '}', the line itself included. */
	mark = ix->close_next[i];
	if ((size_t)mark >= ix->n || (size_t)mark - i >= RANGE_SCAN_MAX)
		return -1;
	*end = mark + 1;
	return 0;
}
