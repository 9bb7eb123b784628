// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-patch.c - read one patch's diff the way `git apply` does, refuse paths
 * that could escape the repo, and apply text hunks with git's rules so
 * the resulting blobs are byte-for-byte what `git am` writes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "apply-int.h"

/* Hunk line counts beyond this are not a real patch. */
#define AP_MAX_COUNT 50000000
#define AP_MAX_PATH 4096
/* Files one patch may touch; more is not a patch a list would carry. */
#define AP_MAX_FILES 10000
/* Line comparisons and copies allowed per file: ~1 s, then refuse. */
#define AP_MAX_WORK ((size_t)300 * 1000 * 1000)

struct cursor {
	const char *buf, *end;
	const char *line; /* current line start */
	size_t len;	  /* without the '\n' */
	bool has_nl;
	size_t lineno;
};

static bool cur_next(struct cursor *c, const char **pos)
{
	const char *nl;

	if (*pos >= c->end)
		return false;
	c->line = *pos;
	nl = memchr(c->line, '\n', (size_t)(c->end - c->line));
	c->len = nl ? (size_t)(nl - c->line) : (size_t)(c->end - c->line);
	c->has_nl = nl != NULL;
	*pos = nl ? nl + 1 : c->end;
	c->lineno++;
	return true;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* ---- paths ---------------------------------------------------------- */

static bool is_dotgit(const char *c, size_t n)
{
	/* ".git" in any case, and the NTFS/HFS spellings git also refuses. */
	while (n > 4 && (c[n - 1] == '.' || c[n - 1] == ' '))
		n--;
	if (n == 4 && c[0] == '.' && !strncasecmp(c + 1, "git", 3))
		return true;
	if (n == 5 && !strncasecmp(c, "git~1", 5))
		return true;
	return false;
}

int ap_path_check(const char *path, struct errmsg *err)
{
	const char *p = path, *slash;
	size_t n;

	if (!*path)
		return errmsg_set(err, RV_ERR_UNSAFE,
				  "the patch has an empty file name");
	if (strlen(path) > AP_MAX_PATH)
		return errmsg_set(err, RV_ERR_UNSAFE,
				  "the patch has a file name over %d bytes",
				  AP_MAX_PATH);
	if (*path == '/')
		return errmsg_set(
			err, RV_ERR_UNSAFE,
			"the patch writes to the absolute path %.200s", path);
	if (strchr(path, '\\'))
		return errmsg_set(
			err, RV_ERR_UNSAFE,
			"the patch has a backslash in the path %.200s", path);
	for (;;) {
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0)
			return errmsg_set(
				err, RV_ERR_UNSAFE,
				"the patch has an empty component in %.200s",
				path);
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return errmsg_set(err, RV_ERR_UNSAFE,
					  "the patch writes outside the "
					  "repository: %.200s",
					  path);
		if (is_dotgit(p, n))
			return errmsg_set(err, RV_ERR_UNSAFE,
					  "the patch writes into the .git "
					  "directory: %.200s",
					  path);
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

/* Unquote a C-style quoted name at s ("..."); *used gets the bytes read. */
static int unquote(const char *s, size_t len, size_t *used, struct sb *out)
{
	size_t i = 1;

	if (!len || s[0] != '"')
		return -1;
	while (i < len) {
		char ch = s[i++];

		if (ch == '"') {
			*used = i;
			return 0;
		}
		if (ch != '\\') {
			if (sb_addch(out, ch) < 0)
				return -1;
			continue;
		}
		if (i >= len)
			return -1;
		ch = s[i++];
		switch (ch) {
		case 'a':
			ch = '\a';
			break;
		case 'b':
			ch = '\b';
			break;
		case 't':
			ch = '\t';
			break;
		case 'n':
			ch = '\n';
			break;
		case 'v':
			ch = '\v';
			break;
		case 'f':
			ch = '\f';
			break;
		case 'r':
			ch = '\r';
			break;
		case '"':
		case '\\':
			break;
		case '0':
		case '1':
		case '2':
		case '3': {
			int v = ch - '0', k;

			for (k = 0; k < 2; k++) {
				if (i >= len || s[i] < '0' || s[i] > '7')
					return -1;
				v = v * 8 + (s[i++] - '0');
			}
			ch = (char)v;
			break;
		}
		default:
			return -1;
		}
		if (ch == '\0' || sb_addch(out, ch) < 0)
			return -1;
	}
	return -1;
}

/*
 * Read a name at s: quoted, or up to a tab (or the end). strip removes
 * the first path component (a/ b/, -p1). "/dev/null" gives *out NULL.
 */
static int read_name(const char *s, size_t len, bool strip, char **out,
		     size_t *used, struct errmsg *err)
{
	struct sb name = SB_INIT;
	const char *p;
	size_t n;
	int ret = 0;

	*out = NULL;
	sb_init(&name, AP_MAX_PATH + 64);
	if (len && s[0] == '"') {
		if (unquote(s, len, &n, &name) < 0) {
			ret = errmsg_set(
				err, RV_ERR_INPUT,
				"the patch has a badly quoted file name");
			goto out;
		}
	} else {
		const char *tab = memchr(s, '\t', len);

		n = tab ? (size_t)(tab - s) : len;
		if (memchr(s, '\0', n) || sb_add(&name, s, n) < 0) {
			ret = errmsg_set(
				err, RV_ERR_INPUT,
				"the patch has an unreadable file name");
			goto out;
		}
	}
	if (used)
		*used = n;
	if (!strcmp(sb_str(&name), "/dev/null"))
		goto out;
	p = sb_str(&name);
	if (strip) {
		const char *slash = strchr(p, '/');

		if (!slash) {
			ret = errmsg_set(
				err, RV_ERR_INPUT,
				"the file name %.200s has no a/ or b/ prefix",
				p);
			goto out;
		}
		p = slash + 1;
	}
	ret = ap_path_check(p, err);
	if (ret == 0)
		*out = xstrdup_or_null(p);
out:
	sb_release(&name);
	return ret;
}

/* The name in "diff --git a/X b/X" when both sides agree, else NULL. */
static char *git_line_name(const char *s, size_t len)
{
	char *a = NULL, *b = NULL;
	size_t used, half;

	if (len && s[0] == '"') {
		if (read_name(s, len, true, &a, &used, NULL) < 0 || !a)
			goto fail;
		if (used + 1 >= len || s[used] != ' ')
			goto fail;
		if (read_name(s + used + 1, len - used - 1, true, &b, NULL,
			      NULL) < 0 ||
		    !b)
			goto fail;
	} else if (len >= 2 && s[len - 1] == '"') {
		const char *q = NULL, *p;

		for (p = s; p + 1 < s + len; p++)
			if (p[0] == ' ' && p[1] == '"')
				q = p;
		if (!q ||
		    read_name(s, (size_t)(q - s), true, &a, NULL, NULL) < 0 ||
		    !a)
			goto fail;
		if (read_name(q + 1, len - (size_t)(q + 1 - s), true, &b, NULL,
			      NULL) < 0 ||
		    !b)
			goto fail;
	} else {
		/* "a/NAME b/NAME": symmetric, so split in the middle. */
		const char *sa, *sb2;

		if (len < 5 || (len - 1) % 2)
			goto fail;
		half = (len - 1) / 2;
		if (s[half] != ' ')
			goto fail;
		sa = memchr(s, '/', half);
		sb2 = memchr(s + half + 1, '/', half);
		if (!sa || !sb2 || (sa - s) != (sb2 - (s + half + 1)))
			goto fail;
		if (memcmp(sa, sb2, half - (size_t)(sa - s)))
			goto fail;
		if (read_name(s, half, true, &a, NULL, NULL) < 0 || !a)
			goto fail;
		return a;
	}
	if (strcmp(a, b))
		goto fail;
	free(b);
	return a;
fail:
	free(a);
	free(b);
	return NULL;
}

static unsigned parse_mode(const char *s, size_t len)
{
	unsigned m = 0;
	size_t i;

	for (i = 0; i < len && s[i] >= '0' && s[i] <= '7' && i < 7; i++)
		m = m * 8 + (unsigned)(s[i] - '0');
	return i ? m : 0;
}

static void parse_index(struct ap_file *f, const char *s, size_t len)
{
	size_t i = 0, a, b;

	while (i < len && i < GIT_OID_HEXSZ && isxdigit((unsigned char)s[i]))
		i++;
	a = i;
	if (a < 4 || i + 2 > len || s[i] != '.' || s[i + 1] != '.')
		return;
	i += 2;
	while (i < len && i - a - 2 < GIT_OID_HEXSZ &&
	       isxdigit((unsigned char)s[i]))
		i++;
	b = i - a - 2;
	if (b < 4)
		return;
	memcpy(f->old_idx, s, a);
	f->old_idx[a] = '\0';
	memcpy(f->new_idx, s + a + 2, b);
	f->new_idx[b] = '\0';
	if (i < len && s[i] == ' ')
		f->old_mode = f->new_mode = parse_mode(s + i + 1, len - i - 1);
}

static int parse_int(const char **s, const char *end, int *out)
{
	long v = 0;

	if (*s >= end || !isdigit((unsigned char)**s))
		return -1;
	while (*s < end && isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v > AP_MAX_COUNT)
			return -1;
		(*s)++;
	}
	*out = (int)v;
	return 0;
}

static int parse_range(const char **s, const char *end, int *start, int *n)
{
	if (parse_int(s, end, start) < 0)
		return -1;
	*n = 1;
	if (*s < end && **s == ',') {
		(*s)++;
		if (parse_int(s, end, n) < 0)
			return -1;
	}
	return 0;
}

static struct ap_file *new_file(struct ap_patch *p)
{
	/* Callers check p->nfiles against AP_MAX_FILES first. */
	ALLOC_GROW(p->files, p->nfiles + 1, p->afiles);
	memset(&p->files[p->nfiles], 0, sizeof(p->files[0]));
	return &p->files[p->nfiles++];
}

/* Read the hunks that follow; pos is just past the first "@@" line. */
static int parse_hunks(struct ap_file *f, struct cursor *c, const char **pos,
		       struct errmsg *err)
{
	const char *save;
	struct cursor sc;

	for (;;) {
		struct ap_hunk *h;
		const char *s = c->line + 4, *e = c->line + c->len;
		int oldc, newc;

		ALLOC_GROW(f->hunks, f->nhunks + 1, f->ahunks);
		h = &f->hunks[f->nhunks++];
		memset(h, 0, sizeof(*h));
		h->diff_lineno = c->lineno;
		if (parse_range(&s, e, &h->old_start, &h->old_lines) < 0 ||
		    s + 2 > e || s[0] != ' ' || s[1] != '+')
			goto bad_header;
		s += 2;
		if (parse_range(&s, e, &h->new_start, &h->new_lines) < 0 ||
		    s + 3 > e || memcmp(s, " @@", 3))
			goto bad_header;
		h->header = c->line;
		h->header_len = (size_t)(s + 3 - c->line);
		h->first = f->nlines;
		oldc = h->old_lines;
		newc = h->new_lines;
		while (oldc > 0 || newc > 0) {
			struct ap_line *l;
			char o;

			if (!cur_next(c, pos))
				return errmsg_set(
					err, RV_ERR_INPUT,
					"corrupt patch: %s hunk %zu (%.*s) "
					"ends before its last line",
					f->new_path ? f->new_path : f->old_path,
					f->nhunks, (int)h->header_len,
					h->header);
			o = c->len ? c->line[0] : ' ';
			if (o == '\\') {
				if (f->nlines > h->first &&
				    f->lines[f->nlines - 1].len &&
				    f->lines[f->nlines - 1].text
						    [f->lines[f->nlines - 1]
							     .len -
						     1] == '\n')
					f->lines[f->nlines - 1].len--;
				continue;
			}
			if (o == ' ')
				oldc--, newc--;
			else if (o == '-')
				oldc--;
			else if (o == '+')
				newc--;
			else
				goto corrupt;
			if (oldc < 0 || newc < 0)
				goto corrupt;
			ALLOC_GROW(f->lines, f->nlines + 1, f->alines);
			l = &f->lines[f->nlines++];
			l->origin = o;
			if (c->len) {
				l->text = c->line + 1;
				l->len = c->len - 1 + (c->has_nl ? 1 : 0);
			} else {
				/* An empty line is context whose space was
				 * eaten. */
				l->text = c->line;
				l->len = c->has_nl ? 1 : 0;
			}
		}
		h->n = f->nlines - h->first;
		/* A "\ No newline" after the last line; then maybe another
		 * hunk. */
		for (;;) {
			save = *pos;
			sc = *c;
			if (!cur_next(c, pos))
				return 0;
			if (c->len && c->line[0] == '\\') {
				if (h->n && f->lines[f->nlines - 1].len &&
				    f->lines[f->nlines - 1].text
						    [f->lines[f->nlines - 1]
							     .len -
						     1] == '\n')
					f->lines[f->nlines - 1].len--;
				continue;
			}
			break;
		}
		if (!starts(c->line, c->len, "@@ -")) {
			*pos = save;
			*c = sc;
			return 0;
		}
	}
bad_header:
	return errmsg_set(
		err, RV_ERR_INPUT,
		"corrupt patch: bad hunk header \"%.*s\" at diff line %zu",
		(int)(c->len > 80 ? 80 : c->len), c->line, c->lineno);
corrupt:
	return errmsg_set(err, RV_ERR_INPUT,
			  "corrupt patch: %s hunk %zu has a stray line at diff "
			  "line %zu: \"%.*s\"",
			  f->new_path ? f->new_path : f->old_path, f->nhunks,
			  c->lineno, (int)(c->len > 60 ? 60 : c->len), c->line);
}

/* Skip a "GIT binary patch" body: one or two sections ending in a blank line.
 */
static void skip_binary(struct cursor *c, const char **pos)
{
	int sections = 0;

	while (sections < 2) {
		const char *save = *pos;
		struct cursor sc = *c;

		if (!cur_next(c, pos))
			return;
		if (!starts(c->line, c->len, "literal ") &&
		    !starts(c->line, c->len, "delta ")) {
			*pos = save;
			*c = sc;
			return;
		}
		while (cur_next(c, pos) && c->len)
			;
		sections++;
	}
}

/* The text after prefix when line starts with it, else NULL. */
static const char *after(const char *l, size_t n, const char *prefix)
{
	return starts(l, n, prefix) ? l + strlen(prefix) : NULL;
}

static bool is_git_header(const char *l, size_t n)
{
	static const char *const hdrs[] = {
		"old mode ",	  "new mode ",	       "deleted file mode ",
		"new file mode ", "copy from ",	       "copy to ",
		"rename old ",	  "rename new ",       "rename from ",
		"rename to ",	  "similarity index ", "dissimilarity index ",
		"index ",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hdrs); i++)
		if (starts(l, n, hdrs[i]))
			return true;
	return false;
}

/* After "--- " and "+++ " lines: take their names where git would. */
static int take_names(struct ap_file *f, struct cursor *c, const char **pos,
		      bool have_header, struct errmsg *err)
{
	char *old = NULL, *new = NULL;
	int ret;

	ret = read_name(c->line + 4, c->len - 4, true, &old, NULL, err);
	if (ret < 0)
		return ret;
	if (!cur_next(c, pos) || !starts(c->line, c->len, "+++ ")) {
		free(old);
		return errmsg_set(err, RV_ERR_INPUT,
				  "corrupt patch: a \"---\" line without "
				  "\"+++\" at diff line %zu",
				  c->lineno);
	}
	ret = read_name(c->line + 4, c->len - 4, true, &new, NULL, err);
	if (ret < 0) {
		free(old);
		return ret;
	}
	if (!have_header) {
		f->old_path = old;
		f->new_path = new;
		f->is_new = !old;
		f->is_delete = !new;
		if (!old && !new)
			return errmsg_set(
				err, RV_ERR_INPUT,
				"corrupt patch: both sides are /dev/null");
		return 0;
	}
	/* A git diff: the extended header decides; fill what is missing. */
	if (!f->is_new && !f->old_path)
		f->old_path = old, old = NULL;
	if (!f->is_delete && !f->new_path)
		f->new_path = new, new = NULL;
	free(old);
	free(new);
	return 0;
}

static int parse_git_file(struct ap_patch *p, struct cursor *c,
			  const char **pos, struct errmsg *err)
{
	struct ap_file *f = new_file(p);
	char *name;
	const char *start = c->line, *save;
	struct cursor sc;
	bool eof = false;
	int ret = 0;

	f->diff_lineno = c->lineno;
	name = git_line_name(c->line + 11, c->len - 11);
	for (;;) {
		const char *l, *v;
		size_t n;

		save = *pos;
		sc = *c;
		if (!cur_next(c, pos)) {
			eof = true;
			break;
		}
		l = c->line;
		n = c->len;
		if (!is_git_header(l, n))
			break;
		if (starts(l, n, "old mode ")) {
			f->old_mode = parse_mode(l + 9, n - 9);
		} else if (starts(l, n, "new mode ")) {
			f->new_mode = parse_mode(l + 9, n - 9);
		} else if (starts(l, n, "deleted file mode ")) {
			f->is_delete = true;
			f->old_mode = parse_mode(l + 18, n - 18);
		} else if (starts(l, n, "new file mode ")) {
			f->is_new = true;
			f->new_mode = parse_mode(l + 14, n - 14);
		} else if (starts(l, n, "index ")) {
			parse_index(f, l + 6, n - 6);
		} else if ((v = after(l, n, "copy from ")) ||
			   (v = after(l, n, "rename from ")) ||
			   (v = after(l, n, "rename old "))) {
			free(f->old_path);
			f->old_path = NULL;
			ret = read_name(v, n - (size_t)(v - l), false,
					&f->old_path, NULL, err);
			if (ret < 0)
				goto out;
			if (l[0] == 'c')
				f->is_copy = true;
			else
				f->is_rename = true;
		} else if ((v = after(l, n, "copy to ")) ||
			   (v = after(l, n, "rename to ")) ||
			   (v = after(l, n, "rename new "))) {
			free(f->new_path);
			f->new_path = NULL;
			ret = read_name(v, n - (size_t)(v - l), false,
					&f->new_path, NULL, err);
			if (ret < 0)
				goto out;
		}
	}
	if (!f->is_rename && !f->is_copy) {
		if (!f->is_new && !f->old_path && name)
			f->old_path = xstrdup_or_null(name);
		if (!f->is_delete && !f->new_path && name)
			f->new_path = xstrdup_or_null(name);
	}
	/* What follows the header: ---/+++ and hunks, binary, or nothing. */
	if (!eof && starts(c->line, c->len, "--- ")) {
		ret = take_names(f, c, pos, true, err);
		if (ret < 0)
			goto out;
		save = *pos;
		sc = *c;
		if (cur_next(c, pos) && starts(c->line, c->len, "@@ -")) {
			ret = parse_hunks(f, c, pos, err);
			if (ret < 0)
				goto out;
		} else {
			*pos = save;
			*c = sc;
		}
	} else if (!eof && starts(c->line, c->len, "GIT binary patch")) {
		f->binary = f->binary_has_data = true;
		skip_binary(c, pos);
	} else if (!eof && starts(c->line, c->len, "Binary files ")) {
		f->binary = true;
	} else if (!eof) {
		*pos = save;
		*c = sc;
	}
	/* A rename's new side with no "rename to" is not a patch we can use. */
	if ((!f->is_new && !f->old_path) || (!f->is_delete && !f->new_path)) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "corrupt patch: cannot tell the file name at "
				 "diff line %zu",
				 f->diff_lineno);
		goto out;
	}
	if (f->is_new && f->is_delete) {
		ret = errmsg_set(
			err, RV_ERR_INPUT,
			"corrupt patch: %s is both created and deleted",
			f->new_path ? f->new_path : f->old_path);
		goto out;
	}
	f->text = start;
	f->text_len = (size_t)(*pos - start);
out:
	free(name);
	return ret;
}

int ap_patch_parse(struct ap_patch *p, const char *diff, size_t len,
		   struct errmsg *err)
{
	struct cursor c = {0};
	const char *pos = diff;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	c.buf = diff;
	c.end = diff + len;
	while (cur_next(&c, &pos)) {
		if (p->nfiles >= AP_MAX_FILES) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "the patch touches more than %d files",
					 AP_MAX_FILES);
			goto out;
		}
		if (starts(c.line, c.len, "diff --git ")) {
			ret = parse_git_file(p, &c, &pos, err);
			if (ret < 0)
				goto out;
			continue;
		}
		/* A plain unified diff: "--- a/x", "+++ b/x", then "@@ -". */
		if (starts(c.line, c.len, "--- ") && pos < c.end &&
		    starts(pos, (size_t)(c.end - pos), "+++ ")) {
			struct cursor peek = c;
			const char *pp = pos;
			struct ap_file *f;
			const char *start = c.line;

			cur_next(&peek, &pp);
			if (!cur_next(&peek, &pp) ||
			    !starts(peek.line, peek.len, "@@ -"))
				continue;
			f = new_file(p);
			f->diff_lineno = c.lineno;
			ret = take_names(f, &c, &pos, false, err);
			if (ret < 0)
				goto out;
			cur_next(&c, &pos);
			ret = parse_hunks(f, &c, &pos, err);
			if (ret < 0)
				goto out;
			f->text = start;
			f->text_len = (size_t)(pos - start);
		}
	}
	if (!p->nfiles)
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the mail has no diff in it");
out:
	if (ret < 0)
		ap_patch_release(p);
	return ret;
}

void ap_patch_release(struct ap_patch *p)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		free(p->files[i].old_path);
		free(p->files[i].new_path);
		free(p->files[i].hunks);
		free(p->files[i].lines);
	}
	free(p->files);
	memset(p, 0, sizeof(*p));
}

/* ---- applying text hunks ------------------------------------------- */

struct img_line {
	const char *p;
	size_t len;
	bool patched; /* written by an earlier hunk: never matched again */
};

struct image {
	struct img_line *l;
	size_t n, alloc;
};

static void image_add(struct image *img, const char *p, size_t len,
		      bool patched)
{
	ALLOC_GROW(img->l, img->n + 1, img->alloc);
	img->l[img->n].p = p;
	img->l[img->n].len = len;
	img->l[img->n].patched = patched;
	img->n++;
}

static void image_split(struct image *img, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		image_add(img, p, n, false);
		p += n;
	}
}

static bool line_eq(const struct img_line *a, const struct ap_line *b)
{
	return !a->patched && a->len == b->len &&
	       !memcmp(a->p, b->text, a->len);
}

/* git apply's match_fragment for the no-whitespace-options case. */
static bool match_at(const struct image *img, const struct ap_line *const *pre,
		     size_t npre, size_t at, bool match_beginning,
		     bool match_end, size_t *work)
{
	size_t i;

	if (npre + at > img->n)
		return false;
	if (match_end && npre + at != img->n)
		return false;
	if (match_beginning && at)
		return false;
	for (i = 0; i < npre; i++) {
		++*work;
		if (!line_eq(&img->l[at + i], pre[i]))
			return false;
	}
	return true;
}

/* git apply's find_pos: from line, alternately forwards and backwards. */
static long find_pos(const struct image *img, const struct ap_line *const *pre,
		     size_t npre, long line, bool match_beginning,
		     bool match_end, size_t *work)
{
	long back, fwd, cur;
	unsigned long i;

	if (match_beginning)
		line = 0;
	else if (match_end)
		line = (long)img->n - (long)npre;
	if (line < 0 || (size_t)line > img->n)
		line = (long)img->n;
	back = fwd = cur = line;
	for (i = 0;; i++) {
		if (match_at(img, pre, npre, (size_t)cur, match_beginning,
			     match_end, work))
			return cur;
		if (*work > AP_MAX_WORK)
			return -2;
	again:
		if (back == 0 && (size_t)fwd == img->n)
			break;
		if (i & 1) {
			if (back == 0) {
				i++;
				goto again;
			}
			cur = --back;
		} else {
			if ((size_t)fwd == img->n) {
				i++;
				goto again;
			}
			cur = ++fwd;
		}
	}
	return -1;
}

static void describe_failure(const struct image *img,
			     const struct ap_line *const *pre, size_t npre,
			     long line, const struct ap_hunk *h, bool match_end,
			     struct ap_fail *fail)
{
	size_t i, at = line < 0 ? 0 : (size_t)line;

	for (i = 0; i < npre; i++) {
		if (at + i >= img->n || !line_eq(&img->l[at + i], pre[i])) {
			fail->line = (h->old_start ? h->old_start : 1) + (int)i;
			fail->expected = pre[i]->text;
			fail->expected_len = pre[i]->len;
			if (at + i < img->n) {
				fail->found = img->l[at + i].p;
				fail->found_len = img->l[at + i].len;
			}
			return;
		}
	}
	/* The context matched but the hunk must end the file, and does not. */
	fail->line = (h->old_start ? h->old_start : 1) + (int)npre;
	if (match_end && at + npre < img->n) {
		fail->found = img->l[at + npre].p;
		fail->found_len = img->l[at + npre].len;
	}
}

int ap_apply_text(const struct ap_file *f, const char *buf, size_t len,
		  struct sb *out, struct ap_fail *fail)
{
	struct image img = {0}, next = {0};
	const struct ap_line **pre = NULL, **post = NULL;
	size_t h, i, npre, npost, apre = 0, apost = 0, work = 0;
	int ret = 0;

	memset(fail, 0, sizeof(*fail));
	image_split(&img, buf, len);
	for (h = 0; h < f->nhunks; h++) {
		const struct ap_hunk *hk = &f->hunks[h];
		const struct ap_line *L = f->lines + hk->first;
		size_t leading = 0, trailing = 0;
		bool mb, me;
		long at, line;

		npre = npost = 0;
		for (i = 0; i < hk->n; i++) {
			if (L[i].origin != '+') {
				ALLOC_GROW(pre, npre + 1, apre);
				pre[npre++] = &L[i];
			}
			if (L[i].origin != '-') {
				ALLOC_GROW(post, npost + 1, apost);
				post[npost++] = &L[i];
			}
		}
		while (leading < hk->n && L[leading].origin == ' ')
			leading++;
		while (trailing < hk->n &&
		       L[hk->n - 1 - trailing].origin == ' ')
			trailing++;
		mb = hk->old_start == 0 || hk->old_start == 1;
		me = trailing == 0;
		line = hk->new_start ? hk->new_start - 1 : 0;
		at = find_pos(&img, pre, npre, line, mb, me, &work);
		work += img.n;
		if (at == -2 || work > AP_MAX_WORK) {
			fail->hunk = h;
			fail->too_costly = true;
			ret = RV_ERR_INPUT;
			goto out;
		}
		if (at < 0) {
			/*
			 * Compare where the hunk says it is, even when it
			 * must end the file: what the base has there is
			 * what the author needs to see.
			 */
			long want = mb ? 0
				    : me && (size_t)line + npre > img.n
					    ? (long)img.n - (long)npre
					    : line;

			fail->hunk = h;
			describe_failure(&img, pre, npre, want, hk, me, fail);
			ret = RV_ERR_APPLY;
			goto out;
		}
		next.n = 0;
		for (i = 0; i < (size_t)at; i++)
			image_add(&next, img.l[i].p, img.l[i].len,
				  img.l[i].patched);
		for (i = 0; i < npost; i++)
			image_add(&next, post[i]->text, post[i]->len, true);
		for (i = (size_t)at + npre; i < img.n; i++)
			image_add(&next, img.l[i].p, img.l[i].len,
				  img.l[i].patched);
		{
			struct image t = img;

			img = next;
			next = t;
		}
	}
	sb_reset(out);
	for (i = 0; i < img.n; i++)
		if (sb_add(out, img.l[i].p, img.l[i].len) < 0) {
			ret = RV_ERR_NOMEM;
			goto out;
		}
	if (f->is_delete && out->len) {
		fail->corrupt_delete = true;
		ret = RV_ERR_APPLY;
	}
out:
	free(img.l);
	free(next.l);
	free(pre);
	free(post);
	return ret;
}
