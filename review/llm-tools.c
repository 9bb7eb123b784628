// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-tools.c - the tools a model calls during a review: the table, the
 * arguments, the declarations from prompts/tools.json, paths confined to
 * the tree, and the two that read the series' applied tree (read_file,
 * grep). The ones that read history are in llm-tools-git.c.
 *
 * A model is hostile like mail is: every argument is bounded before it
 * is used, a path is checked component by component against the tree's
 * own entries, and a regular expression runs under PCRE2's match, depth
 * and heap limits and a wall-clock deadline, so no call runs away.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <cjson/cJSON.h>
#include <pcre2.h>

#include "apply-int.h"
#include "llm.h"
#include "llm.h"

#define TOOLS_FILE "tools.json"
#define TOOLS_FILE_MAX ((size_t)64 << 10)
#define BINARY_PROBE 8000 /* bytes git looks at for a NUL */
#define NOTE_MAX 1024	  /* bytes of the notes after an answer's body */

/* ---- small helpers ---------------------------------------------------- */

double rv_tool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rv_tool_caps(const struct rv_tool_ctx *c, struct rv_tool_ctx *caps)
{
	*caps = *c;
	if (!caps->max_bytes)
		caps->max_bytes = RV_TOOL_MAX_BYTES;
	if (caps->max_lines <= 0)
		caps->max_lines = RV_TOOL_MAX_LINES;
	if (caps->max_entries <= 0)
		caps->max_entries = RV_TOOL_MAX_ENTRIES;
	if (!(caps->seconds > 0))
		caps->seconds = RV_TOOL_SECONDS;
	if (!caps->max_scan)
		caps->max_scan = RV_TOOL_MAX_SCAN;
}

/* Does git quote this byte in a path (quote_c_style, core.quotePath)? */
static bool needs_quote(unsigned char ch)
{
	return ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x7f;
}

static void quote_bytes(struct sb *out, const char *s, size_t n)
{
	static const char esc[] = "\a\b\t\n\v\f\r";
	static const char letter[] = "abtnvfr";
	size_t i;

	sb_addch(out, '"');
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		const char *e = ch ? strchr(esc, ch) : NULL;

		if (ch == '"' || ch == '\\')
			sb_addf(out, "\\%c", ch);
		else if (e)
			sb_addf(out, "\\%c", letter[e - esc]);
		else if (needs_quote(ch))
			sb_addf(out, "\\%03o", ch);
		else
			sb_addch(out, ch);
	}
	sb_addch(out, '"');
}

void rv_tool_quote(struct sb *out, const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	quote_bytes(out, s ? s : "", n > max ? max : n);
	if (n > max)
		sb_adds(out, "...");
}

void rv_tool_path(struct sb *out, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (needs_quote((unsigned char)*p))
			break;
	if (*p)
		quote_bytes(out, s, strlen(s));
	else
		sb_adds(out, s);
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not text. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void rv_tool_line(struct sb *out, const char *line, size_t len)
{
	const unsigned char *s = (const unsigned char *)line;
	size_t i = 0, k;

	if (len && s[len - 1] == '\r')
		len--;
	while (i < len && i < RV_TOOL_MAX_LINE) {
		k = utf8_len(s + i, len - i);
		if (!k || (k == 1 && s[i] < 0x20 && s[i] != '\t') ||
		    s[i] == 0x7f) {
			sb_addch(out, '?');
			i += k ? k : 1;
			continue;
		}
		sb_add(out, s + i, k);
		i += k;
	}
	if (i < len)
		sb_addf(out, "... [%zu more bytes]", len - i);
}

int rv_tool_count_lines(const char *data, size_t len)
{
	const char *p = data, *end = data + len, *nl;
	long n = 0;

	while (p < end && n < INT_MAX) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n++;
		p = nl ? nl + 1 : end;
	}
	return (int)n;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static bool looks_binary(const char *data, size_t len)
{
	return memchr(data, '\0', len < BINARY_PROBE ? len : BINARY_PROBE) !=
	       NULL;
}

/* ---- paths ------------------------------------------------------------- */

int rv_tool_path_check(const char *path, struct errmsg *err)
{
	const char *p, *end, *slash;
	size_t n;

	if (!path || !*path)
		return errmsg_set(err, RV_ERR_INPUT, "the path is empty");
	n = strlen(path);
	if (n > RV_DIFF_MAX_PATH)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the path is %zu bytes long; at most %d", n,
				  RV_DIFF_MAX_PATH);
	if (*path == '/')
		return errmsg_set(err, RV_ERR_UNSAFE,
				  "absolute paths are refused: a path is "
				  "relative to the top of the tree");
	/* One trailing '/' names a directory; the rest are components. */
	end = path + n - (path[n - 1] == '/');
	if (end > path && end[-1] == '/')
		return errmsg_set(err, RV_ERR_INPUT,
				  "the path has an empty component (\"//\")");
	for (p = path; p < end; p = slash + 1) {
		slash = memchr(p, '/', (size_t)(end - p));
		if (!slash)
			slash = end;
		n = (size_t)(slash - p);
		if (!n)
			return errmsg_set(err, RV_ERR_INPUT,
					  "the path has an empty component "
					  "(\"//\")");
		if ((n == 1 && *p == '.') || (n == 2 && !strncmp(p, "..", 2)))
			return errmsg_set(err, RV_ERR_UNSAFE,
					  "'%.*s' components are refused: "
					  "paths stay inside the tree",
					  (int)n, p);
		if (n == 4 && !strncasecmp(p, ".git", 4))
			return errmsg_set(err, RV_ERR_UNSAFE,
					  ".git is refused: only the tree's "
					  "files can be read");
	}
	return 0;
}

/* What a path names in a tree, found one component at a time. */
struct entry {
	git_tree_entry *e; /* NULL: the top of the tree */
	git_tree *tree;	   /* the tree when it is one */
};

static void entry_release(struct entry *en)
{
	git_tree_entry_free(en->e);
	git_tree_free(en->tree);
	memset(en, 0, sizeof(*en));
}

static int tree_of(struct rv_repo *repo, const char *id, git_tree **out,
		   struct errmsg *err)
{
	git_object *obj = NULL;
	git_oid oid;
	int ret = 0;

	*out = NULL;
	if (!repo || !id || strlen(id) != RV_OID_HEXSZ ||
	    git_oid_fromstr(&oid, id) < 0)
		return errmsg_set(err, RV_ERR_REPO, "there is no tree to read");
	if (git_object_lookup(&obj, repo->git, &oid, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE) < 0)
		ret = errmsg_set(err, RV_ERR_REPO, "%.12s is not a tree", id);
	git_object_free(obj);
	return ret;
}

/*
 * Find path (checked) in the tree id: every component but the last must
 * be a directory; a link or a submodule on the way is refused, never
 * followed. The last may be anything: the caller decides.
 */
static int entry_find(struct rv_repo *repo, const char *id, const char *path,
		      struct entry *en, struct errmsg *err)
{
	git_tree *t = NULL;
	const char *p, *slash;
	struct sb part = SB_INIT;
	int ret;

	memset(en, 0, sizeof(*en));
	ret = rv_tool_path_check(path, err);
	if (!ret)
		ret = tree_of(repo, id, &t, err);
	for (p = path; !ret && *p; p = slash + 1) {
		const git_tree_entry *te;
		size_t n;

		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		sb_reset(&part);
		sb_add(&part, p, n);
		te = git_tree_entry_byname(t, sb_str(&part));
		if (!te) {
			ret = errmsg_set(err, RV_ERR_REPO,
					 "there is no %.*s in the tree",
					 (int)(p - path + n), path);
			break;
		}
		git_tree_entry_free(en->e);
		if (git_tree_entry_dup(&en->e, te) < 0) {
			en->e = NULL;
			ret = errmsg_set(err, RV_ERR_NOMEM, "out of memory");
			break;
		}
		if (!slash || !slash[1])
			break; /* the last component, maybe with its '/' */
		if (git_tree_entry_filemode(te) == GIT_FILEMODE_LINK) {
			ret = errmsg_set(err, RV_ERR_UNSAFE,
					 "%.*s is a symbolic link; links are "
					 "not followed",
					 (int)(p - path + n), path);
			break;
		}
		if (git_tree_entry_type(te) == GIT_OBJECT_COMMIT) {
			ret = errmsg_set(err, RV_ERR_UNSAFE,
					 "%.*s is a submodule; its files are "
					 "not part of this tree",
					 (int)(p - path + n), path);
			break;
		}
		if (git_tree_entry_type(te) != GIT_OBJECT_TREE) {
			ret = errmsg_set(err, RV_ERR_REPO,
					 "%.*s is a file, not a directory",
					 (int)(p - path + n), path);
			break;
		}
		git_tree_free(t);
		t = NULL;
		if (git_tree_lookup(&t, repo->git, git_tree_entry_id(te)) < 0)
			ret = errmsg_set(err, RV_ERR_REPO,
					 "cannot read the directory %.*s",
					 (int)(p - path + n), path);
	}
	if (!ret && en->e && git_tree_entry_type(en->e) == GIT_OBJECT_TREE &&
	    git_tree_lookup(&en->tree, repo->git, git_tree_entry_id(en->e)) < 0)
		ret = errmsg_set(err, RV_ERR_REPO, "cannot read %s", path);
	git_tree_free(t);
	sb_release(&part);
	if (ret)
		entry_release(en);
	return ret;
}

static int blob_data(struct rv_repo *repo, const git_tree_entry *e,
		     const char *path, struct sb *data, struct errmsg *err)
{
	git_blob *blob = NULL;
	size_t size;
	int ret = 0;

	if (git_blob_lookup(&blob, repo->git, git_tree_entry_id(e)) < 0)
		return errmsg_set(err, RV_ERR_REPO, "cannot read %s", path);
	size = (size_t)git_blob_rawsize(blob);
	if (size > RV_TOOL_MAX_FILE)
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is %zu bytes, over the %zu bytes a tool "
				 "reads",
				 path, size, RV_TOOL_MAX_FILE);
	else if (sb_add(data, git_blob_rawcontent(blob), size) < 0)
		ret = errmsg_set(err, RV_ERR_NOMEM, "out of memory");
	git_blob_free(blob);
	return ret;
}

int rv_tool_read_blob(struct rv_repo *repo, const char *tree, const char *path,
		      struct sb *data, struct errmsg *err)
{
	struct entry en;
	int ret = entry_find(repo, tree, path, &en, err);

	if (ret)
		return ret;
	if (!en.e || en.tree)
		ret = errmsg_set(err, RV_ERR_REPO, "%s is a directory", path);
	else if (git_tree_entry_filemode(en.e) == GIT_FILEMODE_LINK)
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is a symbolic link, not a file", path);
	else if (git_tree_entry_type(en.e) == GIT_OBJECT_COMMIT)
		ret = errmsg_set(err, RV_ERR_REPO, "%s is a submodule", path);
	else
		ret = blob_data(repo, en.e, path, data, err);
	if (!ret && looks_binary(data->buf ? data->buf : "", data->len))
		ret = errmsg_set(err, RV_ERR_REPO, "%s is a binary file", path);
	entry_release(&en);
	return ret;
}

/* ---- read_file ---------------------------------------------------------- */

static void read_dir(const struct rv_tool_ctx *c, git_tree *t, struct sb *out)
{
	size_t i, n = git_tree_entrycount(t), shown = 0;
	size_t limit = (size_t)c->max_lines;

	for (i = 0; i < n && shown < limit; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(t, i);
		size_t before = out->len;

		rv_tool_path(out, git_tree_entry_name(te));
		if (git_tree_entry_type(te) == GIT_OBJECT_TREE)
			sb_addch(out, '/');
		else if (git_tree_entry_filemode(te) == GIT_FILEMODE_LINK)
			sb_adds(out, " (symbolic link)");
		else if (git_tree_entry_type(te) == GIT_OBJECT_COMMIT)
			sb_adds(out, " (submodule)");
		sb_addch(out, '\n');
		if (out->len > c->max_bytes) {
			sb_setlen(out, before);
			break;
		}
		shown++;
	}
	if (shown < n)
		sb_addf(out,
			"(a directory: the first %zu of its %zu entries)\n",
			shown, n);
	else
		sb_addf(out, "(a directory of %zu %s)\n", n,
			plural(n, "entry", "entries"));
}

static void read_link(struct rv_repo *repo, const git_tree_entry *e,
		      struct sb *out)
{
	git_blob *blob = NULL;

	if (git_blob_lookup(&blob, repo->git, git_tree_entry_id(e)) < 0) {
		sb_adds(out, "(a symbolic link; its target cannot be read)\n");
		return;
	}
	sb_adds(out, "(a symbolic link to ");
	quote_bytes(out, git_blob_rawcontent(blob),
		    git_blob_rawsize(blob) > RV_DIFF_MAX_PATH
			    ? RV_DIFF_MAX_PATH
			    : (size_t)git_blob_rawsize(blob));
	sb_adds(out, "; links are not followed)\n");
	git_blob_free(blob);
}

static int read_lines(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		      const char *data, size_t len, struct sb *out,
		      struct errmsg *err)
{
	int total = rv_tool_count_lines(data, len);
	int start = a->start_line ? a->start_line : 1;
	int end, line, shown_to;
	const char *p = data, *stop = data + len, *nl;
	size_t body = out->len;

	if (!total) {
		sb_adds(out, "(an empty file)\n");
		return 0;
	}
	if (start > total)
		return errmsg_set(err, RV_ERR_INPUT,
				  "start_line %d is past the end of the file "
				  "(%d lines)",
				  start, total);
	if (a->end_line && a->end_line < start)
		return errmsg_set(err, RV_ERR_INPUT,
				  "end_line %d is before start_line %d",
				  a->end_line, start);
	end = a->end_line && a->end_line < total ? a->end_line : total;
	for (line = 1; line < start; line++) {
		nl = memchr(p, '\n', (size_t)(stop - p));
		p = nl ? nl + 1 : stop;
	}
	shown_to = start - 1;
	for (; line <= end; line++) {
		size_t before = out->len;

		nl = memchr(p, '\n', (size_t)(stop - p));
		if (line - start >= c->max_lines)
			break;
		sb_addf(out, "%6d\t", line);
		rv_tool_line(out, p, (size_t)((nl ? nl : stop) - p));
		sb_addch(out, '\n');
		if (out->len - body > c->max_bytes) {
			sb_setlen(out, before);
			break;
		}
		shown_to = line;
		p = nl ? nl + 1 : stop;
	}
	if (shown_to < end) {
		if (shown_to - start + 1 >= c->max_lines)
			sb_addf(out, "(cut at %d lines", c->max_lines);
		else
			sb_addf(out, "(cut at %zu bytes", c->max_bytes);
		if (shown_to >= start)
			sb_addf(out, ": lines %d-%d shown", start, shown_to);
		sb_addf(out, "; ask for lines %d-%d; the file has %d lines)\n",
			shown_to + 1, end, total);
	} else {
		sb_addf(out, "(lines %d-%d of %d%s)\n", start, end, total,
			end == total ? ", the end of the file" : "");
	}
	return 0;
}

static int tool_read_file(const struct rv_tool_ctx *c,
			  const struct rv_tool_args *a, struct sb *out,
			  struct errmsg *err)
{
	struct sb data = SB_INIT;
	struct entry en;
	int ret;

	ret = entry_find(c->repo, c->tree, a->path, &en, err);
	if (ret)
		return ret;
	if (en.tree) {
		read_dir(c, en.tree, out);
	} else if (!en.e) {
		ret = errmsg_set(err, RV_ERR_INPUT, "no file named");
	} else if (git_tree_entry_filemode(en.e) == GIT_FILEMODE_LINK) {
		read_link(c->repo, en.e, out);
	} else if (git_tree_entry_type(en.e) == GIT_OBJECT_COMMIT) {
		char hex[RV_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), git_tree_entry_id(en.e));
		sb_addf(out,
			"(a submodule at commit %.12s; its files are not part "
			"of this tree)\n",
			hex);
	} else {
		ret = blob_data(c->repo, en.e, a->path, &data, err);
		if (!ret && looks_binary(data.buf ? data.buf : "", data.len))
			sb_addf(out,
				"(a binary file of %zu bytes; not shown)\n",
				data.len);
		else if (!ret)
			ret = read_lines(c, a, data.buf ? data.buf : "",
					 data.len, out, err);
	}
	sb_release(&data);
	entry_release(&en);
	return ret;
}

/* ---- grep --------------------------------------------------------------- */

/*
 * Does the glob match path? '*' matches any run of bytes, '/' too (as
 * git's pathspecs do), '?' one byte, [...] a class ([!...] or [^...]
 * its complement), '\' quotes the next byte. A glob without wildcards
 * also matches the files under it ("lib" matches "lib/x.c"). One
 * backtracking point: linear in the path for each star, never
 * exponential like a recursive fnmatch().
 */
static bool class_match(const char **pp, unsigned char ch)
{
	const char *p = *pp + 1;
	bool neg = false, hit = false;

	if (*p == '!' || *p == '^')
		neg = true, p++;
	if (*p == ']') {
		hit = ch == ']';
		p++;
	}
	while (*p && *p != ']') {
		unsigned char lo = (unsigned char)*p, hi = lo;

		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = (unsigned char)p[2];
			p += 2;
		}
		if (ch >= lo && ch <= hi)
			hit = true;
		p++;
	}
	*pp = *p ? p + 1 : p;
	return hit != neg;
}

static bool glob_match(const char *glob, const char *path)
{
	const char *g = glob, *s = path, *star = NULL, *resume = NULL;

	while (*s) {
		if (*g == '*') {
			while (*g == '*')
				g++;
			star = g;
			resume = s;
			continue;
		}
		if (*g == '?') {
			g++, s++;
			continue;
		}
		if (*g == '[' && strchr(g + 1, ']')) {
			const char *ng = g;

			if (class_match(&ng, (unsigned char)*s)) {
				g = ng, s++;
				continue;
			}
		} else if (*g == '\\' && g[1] && g[1] == *s) {
			g += 2, s++;
			continue;
		} else if (*g && *g != '\\' && *g == *s) {
			g++, s++;
			continue;
		}
		if (!star)
			return false;
		g = star;
		s = ++resume;
	}
	while (*g == '*')
		g++;
	return !*g;
}

static bool glob_selects(const char *glob, const char *path)
{
	size_t n;

	if (!glob || !*glob)
		return true;
	if (glob_match(glob, path))
		return true;
	if (strpbrk(glob, "*?[\\"))
		return false;
	/* A directory, with or without its trailing '/'. */
	n = strlen(glob);
	while (n && glob[n - 1] == '/')
		n--;
	return n && !strncmp(glob, path, n) && path[n] == '/';
}

struct grep {
	const struct rv_tool_ctx *c;
	const char *glob;
	pcre2_code *re;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	struct sb *out;
	size_t body;	   /* where the entries start in out */
	struct sb path;	   /* of the current file */
	double deadline;   /* monotonic seconds */
	size_t scanned;	   /* bytes read */
	size_t files;	   /* files searched */
	size_t files_hit;  /* ... with a match */
	size_t matches;	   /* lines that matched */
	size_t shown;	   /* ... of them in out */
	bool full;	   /* no more entries fit: count only */
	size_t binary;	   /* binary files skipped */
	size_t large;	   /* files over RV_TOOL_MAX_FILE skipped */
	const char *stop;  /* why the search stopped early, or NULL */
	struct sb stop_at; /* ... and where */
	int error;	   /* a PCRE2 error that ends the call */
	int error_line;
};

static void grep_stop(struct grep *g, const char *why, const char *path)
{
	g->stop = why;
	sb_reset(&g->stop_at);
	rv_tool_path(&g->stop_at, path);
}

static void grep_entry(struct grep *g, const char *path, int line,
		       const char *text, size_t n)
{
	size_t before = g->out->len;

	if (g->full || g->shown >= (size_t)g->c->max_entries) {
		g->full = true;
		return;
	}
	rv_tool_path(g->out, path);
	sb_addf(g->out, ":%d: ", line);
	rv_tool_line(g->out, text, n);
	sb_addch(g->out, '\n');
	if (g->out->len - g->body > g->c->max_bytes) {
		sb_setlen(g->out, before);
		g->full = true;
		return;
	}
	g->shown++;
}

/* Search one file; false when the search must stop. */
static bool grep_blob(struct grep *g, const char *path, const char *data,
		      size_t len)
{
	const char *p = data, *end = data + len, *nl;
	bool hit = false;
	int line = 0, rc;

	g->files++;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		line++;
		rc = pcre2_match(g->re, (PCRE2_SPTR)p,
				 (size_t)((nl ? nl : end) - p), 0, 0, g->md,
				 g->mc);
		if (rc >= 0) {
			g->matches++;
			hit = true;
			grep_entry(g, path, line, p,
				   (size_t)((nl ? nl : end) - p));
		} else if (rc != PCRE2_ERROR_NOMATCH) {
			g->error = rc;
			g->error_line = line;
			sb_reset(&g->stop_at);
			rv_tool_path(&g->stop_at, path);
			return false;
		}
		p = nl ? nl + 1 : end;
		/* The clock is cheap next to a match; a bad pattern on
		 * long lines costs a match limit per line. */
		if (!(line & 63) && rv_tool_now() > g->deadline) {
			grep_stop(g, "time", path);
			return false;
		}
	}
	if (hit)
		g->files_hit++;
	if (rv_tool_now() > g->deadline) {
		grep_stop(g, "time", path);
		return false;
	}
	return true;
}

static int grep_walk(const char *root, const git_tree_entry *te, void *arg)
{
	struct grep *g = arg;
	struct rv_repo *repo = g->c->repo;
	git_blob *blob = NULL;
	const char *name = git_tree_entry_name(te);
	size_t size;
	bool go;

	/* Never into a submodule, never through a link, never .git. */
	if (!strcasecmp(name, ".git"))
		return 1;
	if (git_tree_entry_type(te) == GIT_OBJECT_TREE)
		return 0;
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    git_tree_entry_filemode(te) == GIT_FILEMODE_LINK)
		return 0;
	sb_reset(&g->path);
	sb_adds(&g->path, root);
	sb_adds(&g->path, name);
	if (!glob_selects(g->glob, sb_str(&g->path)))
		return 0;
	if (git_blob_lookup(&blob, repo->git, git_tree_entry_id(te)) < 0)
		return 0;
	size = (size_t)git_blob_rawsize(blob);
	if (size > RV_TOOL_MAX_FILE) {
		g->large++;
		git_blob_free(blob);
		return 0;
	}
	if (g->scanned + size > g->c->max_scan) {
		grep_stop(g, "bytes", sb_str(&g->path));
		git_blob_free(blob);
		return -1;
	}
	g->scanned += size;
	if (looks_binary(git_blob_rawcontent(blob), size)) {
		g->binary++;
		git_blob_free(blob);
		return 0;
	}
	go = grep_blob(g, sb_str(&g->path), git_blob_rawcontent(blob), size);
	git_blob_free(blob);
	return go ? 0 : -1;
}

static void grep_notes(struct grep *g)
{
	struct sb *out = g->out;

	if (!g->matches && !g->stop)
		sb_addf(out, "(no match in %zu %s", g->files,
			plural(g->files, "file", "files"));
	else if (g->shown < g->matches)
		sb_addf(out, "(the first %zu of %s%zu matches in %zu %s%s",
			g->shown, g->stop ? "at least " : "", g->matches,
			g->files_hit, plural(g->files_hit, "file", "files"),
			g->shown < (size_t)g->c->max_entries
				? ", cut at the answer's bytes"
				: "");
	else
		sb_addf(out, "(%zu %s in %zu of %zu %s", g->matches,
			plural(g->matches, "match", "matches"), g->files_hit,
			g->files, plural(g->files, "file", "files"));
	if (g->binary)
		sb_addf(out, "; %zu binary %s skipped", g->binary,
			plural(g->binary, "file", "files"));
	if (g->large)
		sb_addf(out, "; %zu %s over %zu bytes skipped", g->large,
			plural(g->large, "file", "files"), RV_TOOL_MAX_FILE);
	if (g->stop && !strcmp(g->stop, "time"))
		sb_addf(out,
			"; the search stopped after %.1f s at %s: narrow "
			"path_glob or the pattern",
			g->c->seconds, sb_str(&g->stop_at));
	else if (g->stop)
		sb_addf(out,
			"; the search stopped after reading %zu bytes, before "
			"%s: narrow path_glob",
			g->scanned, sb_str(&g->stop_at));
	else if (g->shown < g->matches)
		sb_adds(out, "; narrow the pattern or path_glob to see others");
	sb_adds(out, ")\n");
}

static int grep_compile(struct grep *g, const char *pattern, struct errmsg *err)
{
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE off;
	size_t n = strlen(pattern);
	int code;

	if (!n)
		return errmsg_set(err, RV_ERR_INPUT, "the pattern is empty");
	if (n > RV_TOOL_MAX_PATTERN)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the pattern is %zu bytes long; at most %d",
				  n, RV_TOOL_MAX_PATTERN);
	g->re = pcre2_compile((PCRE2_SPTR)pattern, n, 0, &code, &off, NULL);
	if (!g->re) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		return errmsg_set(err, RV_ERR_INPUT,
				  "the pattern does not compile at offset %zu: "
				  "%s",
				  (size_t)off, (const char *)msg);
	}
	/* JIT is ten times faster where there is one; the limits hold for
	 * both (JIT has its own stack limit instead of the depth). */
	pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE);
	g->md = pcre2_match_data_create(1, NULL);
	g->mc = pcre2_match_context_create(NULL);
	if (!g->md || !g->mc)
		return errmsg_set(err, RV_ERR_NOMEM, "out of memory");
	pcre2_set_match_limit(g->mc, RV_TOOL_MATCH_LIMIT);
	pcre2_set_depth_limit(g->mc, RV_TOOL_DEPTH_LIMIT);
	pcre2_set_heap_limit(g->mc, RV_TOOL_HEAP_LIMIT);
	return 0;
}

static int tool_grep(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		     struct sb *out, struct errmsg *err)
{
	struct grep g = {.c = c, .glob = a->path_glob, .out = out};
	git_tree *t = NULL;
	int ret;

	sb_init(&g.path, 0);
	sb_init(&g.stop_at, 0);
	g.body = out->len;
	if (a->path_glob && strlen(a->path_glob) > RV_TOOL_MAX_PATTERN) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "path_glob is %zu bytes long; at most %d",
				 strlen(a->path_glob), RV_TOOL_MAX_PATTERN);
		goto out;
	}
	ret = grep_compile(&g, a->pattern, err);
	if (!ret)
		ret = tree_of(c->repo, c->tree, &t, err);
	if (ret)
		goto out;
	g.deadline = rv_tool_now() + c->seconds;
	git_tree_walk(t, GIT_TREEWALK_PRE, grep_walk, &g);
	if (g.error) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(g.error, msg, sizeof(msg));
		sb_setlen(out, g.body);
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the pattern was stopped at %s line %d (%s): "
				 "it backtracks too much; simplify it",
				 sb_str(&g.stop_at), g.error_line,
				 (const char *)msg);
		goto out;
	}
	grep_notes(&g);
out:
	git_tree_free(t);
	pcre2_match_data_free(g.md);
	pcre2_match_context_free(g.mc);
	pcre2_code_free(g.re);
	sb_release(&g.path);
	sb_release(&g.stop_at);
	return ret;
}

/* ---- the table ---------------------------------------------------------- */

enum arg_type { ARG_STRING, ARG_LINE };

struct tool_arg {
	const char *name;
	enum arg_type type;
	bool required;
	size_t off; /* in struct rv_tool_args */
};

#define ARG_STR(n, req)                                                        \
	{                                                                      \
#n, ARG_STRING, req, offsetof(struct rv_tool_args, n)          \
	}
#define ARG_NUM(n, req)                                                        \
	{                                                                      \
#n, ARG_LINE, req, offsetof(struct rv_tool_args, n)            \
	}

enum need { NEED_TREE, NEED_BASE, NEED_HISTORY };

struct tool {
	const char *name;
	int (*run)(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		   struct sb *out, struct errmsg *err);
	enum need need;
	struct tool_arg args[4]; /* ends at a NULL name */
};

static const struct tool tools[] = {
	{"read_file",
	 tool_read_file,
	 NEED_TREE,
	 {ARG_STR(path, true), ARG_NUM(start_line, false),
	  ARG_NUM(end_line, false)}},
	{"grep",
	 tool_grep,
	 NEED_TREE,
	 {ARG_STR(pattern, true), ARG_STR(path_glob, false)}},
	{"log",
	 rv_tool_log,
	 NEED_BASE,
	 {ARG_STR(path, true), ARG_STR(function, false)}},
	{"blame",
	 rv_tool_blame,
	 NEED_BASE,
	 {ARG_STR(path, true), ARG_NUM(start_line, true),
	  ARG_NUM(end_line, true)}},
	{"similar",
	 rv_tool_similar,
	 NEED_HISTORY,
	 {ARG_STR(path, true), ARG_NUM(start_line, true),
	  ARG_NUM(end_line, true)}},
};

static const struct tool *tool_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(tools); i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

static bool offered(const struct rv_tool_ctx *c, const struct tool *t)
{
	switch (t->need) {
	case NEED_TREE:
		return c->repo && c->tree && *c->tree;
	case NEED_BASE:
		return c->repo && c->base && *c->base;
	case NEED_HISTORY:
		return c->repo && c->tree && *c->tree && c->hist;
	}
	return false;
}

bool rv_tool_offered(const struct rv_tool_ctx *c, const char *name)
{
	const struct tool *t = tool_find(name);

	return t && offered(c, t);
}

static void arg_names(const struct tool *t, struct sb *out)
{
	const struct tool_arg *ta;

	for (ta = t->args; ta < t->args + 4 && ta->name; ta++)
		sb_addf(out, "%s%s%s", ta == t->args ? "" : ", ", ta->name,
			ta->required ? "" : "?");
}

static int parse_args(const struct tool *t, const char *args, size_t len,
		      cJSON **json, struct rv_tool_args *a, struct errmsg *err)
{
	const struct tool_arg *ta;
	struct sb names = SB_INIT;
	const cJSON *it;
	int ret = 0;

	memset(a, 0, sizeof(*a));
	*json = NULL;
	arg_names(t, &names);
	if (len > RV_TOOL_MAX_ARGS) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the arguments are %zu bytes; at most %zu",
				 len, RV_TOOL_MAX_ARGS);
		goto out;
	}
	*json = args ? cJSON_ParseWithLength(args, len) : NULL;
	if (!cJSON_IsObject(*json)) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the arguments are not a JSON object; %s "
				 "takes {%s}",
				 t->name, sb_str(&names));
		goto out;
	}
	cJSON_ArrayForEach(it, *json)
	{
		const cJSON *dup;

		for (ta = t->args; ta < t->args + 4 && ta->name; ta++)
			if (it->string && !strcmp(it->string, ta->name))
				break;
		if (ta == t->args + 4 || !ta->name) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "unknown argument \"%.64s\"; %s takes "
					 "%s",
					 it->string ? it->string : "", t->name,
					 sb_str(&names));
			goto out;
		}
		for (dup = (*json)->child; dup != it; dup = dup->next)
			if (dup->string && !strcmp(dup->string, ta->name)) {
				ret = errmsg_set(err, RV_ERR_INPUT,
						 "%s is given twice", ta->name);
				goto out;
			}
		if (cJSON_IsNull(it))
			continue; /* what strict schemas send for "absent" */
		if (ta->type == ARG_STRING) {
			if (!cJSON_IsString(it)) {
				ret = errmsg_set(err, RV_ERR_INPUT,
						 "%s must be a string",
						 ta->name);
				goto out;
			}
			*(const char **)((char *)a + ta->off) = it->valuestring;
		} else {
			double v = it->valuedouble;

			if (!cJSON_IsNumber(it) || v != floor(v) || v < 1 ||
			    v > INT_MAX) {
				ret = errmsg_set(err, RV_ERR_INPUT,
						 "%s must be a whole number "
						 "from 1 to %d",
						 ta->name, INT_MAX);
				goto out;
			}
			*(int *)((char *)a + ta->off) = (int)v;
		}
	}
	for (ta = t->args; ta < t->args + 4 && ta->name; ta++) {
		bool has =
			ta->type == ARG_STRING
				? *(const char **)((char *)a + ta->off) != NULL
				: *(int *)((char *)a + ta->off) != 0;

		if (ta->required && !has) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "%s is missing; %s takes %s", ta->name,
					 t->name, sb_str(&names));
			goto out;
		}
	}
out:
	sb_release(&names);
	return ret;
}

/* The first line of an answer: the call, as the model asked it. */
static void header(struct sb *out, const char *name, const struct tool *t,
		   const struct rv_tool_args *a, bool parsed)
{
	if (!t) {
		rv_tool_quote(out, name, 64);
		sb_addch(out, '\n');
		return;
	}
	sb_adds(out, t->name);
	if (parsed && a->pattern) {
		sb_addch(out, ' ');
		rv_tool_quote(out, a->pattern, RV_TOOL_MAX_PATTERN);
	}
	if (parsed && a->path_glob) {
		sb_adds(out, " in ");
		rv_tool_quote(out, a->path_glob, RV_TOOL_MAX_PATTERN);
	}
	if (parsed && a->path) {
		sb_addch(out, ' ');
		rv_tool_quote(out, a->path, RV_DIFF_MAX_PATH);
	}
	if (parsed && a->function) {
		sb_adds(out, " function ");
		rv_tool_quote(out, a->function, 128);
	}
	if (parsed && a->start_line && a->end_line)
		sb_addf(out, " lines %d-%d", a->start_line, a->end_line);
	else if (parsed && a->start_line)
		sb_addf(out, " from line %d", a->start_line);
	else if (parsed && a->end_line)
		sb_addf(out, " lines 1-%d", a->end_line);
	sb_addch(out, '\n');
}

static void offered_names(const struct rv_tool_ctx *c, struct sb *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tools); i++)
		if (offered(c, &tools[i]))
			sb_addf(out, "%s%s", out->len ? ", " : "",
				tools[i].name);
}

static const char *why_not_offered(const struct tool *t)
{
	switch (t->need) {
	case NEED_BASE:
		return "there is no base commit";
	case NEED_HISTORY:
		return "the repository has no history index";
	default:
		return "there is no tree";
	}
}

int rv_tool_call(const struct rv_tool_ctx *ctx, const char *name,
		 const char *args, size_t args_len, struct sb *out,
		 struct errmsg *err)
{
	const struct tool *t = tool_find(name);
	struct rv_tool_ctx c;
	struct rv_tool_args a;
	struct errmsg e = {""};
	struct sb ans = SB_INIT, names = SB_INIT;
	cJSON *json = NULL;
	bool parsed = false;
	int ret;

	rv_tool_caps(ctx, &c);
	/* The answer's own cap: the caps, the header and the notes. */
	sb_init(&ans, c.max_bytes + 3 * RV_DIFF_MAX_PATH + NOTE_MAX +
			      4 * RV_TOOL_MAX_PATTERN);
	memset(&a, 0, sizeof(a));
	if (!t) {
		offered_names(&c, &names);
		ret = errmsg_set(&e, RV_ERR_INPUT,
				 "there is no tool of that name; the tools "
				 "are %s",
				 sb_str(&names));
	} else if (!offered(&c, t)) {
		offered_names(&c, &names);
		ret = errmsg_set(&e, RV_ERR_INPUT,
				 "%s is not offered in this review (%s); the "
				 "tools are %s",
				 t->name, why_not_offered(t), sb_str(&names));
	} else {
		ret = parse_args(t, args, args_len, &json, &a, &e);
		parsed = !ret;
	}
	header(&ans, name, t, &a, parsed);
	if (!ret)
		ret = t->run(&c, &a, &ans, &e);
	if (ret) {
		/* What the tool wrote before it failed is not the answer. */
		sb_reset(&ans);
		header(&ans, name, t, &a, parsed);
		sb_addf(&ans, "error: %s\n", e.msg);
	}
	if (sb_add(out, ans.buf ? ans.buf : "", ans.len) < 0)
		ret = errmsg_set(&e, RV_ERR_NOMEM,
				 "the answer (%zu bytes) does not fit",
				 ans.len);
	if (ret)
		errmsg_set(err, ret, "%s", e.msg);
	cJSON_Delete(json);
	sb_release(&ans);
	sb_release(&names);
	return ret;
}

/* ---- declarations ------------------------------------------------------- */

/* Does the schema of t in tools.json declare exactly t's arguments? */
static int check_schema(const struct tool *t, const cJSON *schema,
			struct errmsg *err)
{
	const cJSON *props, *req, *p, *type;
	const struct tool_arg *ta;
	size_t nargs = 0;

	if (!cJSON_IsObject(schema) ||
	    !cJSON_IsString(
		    type = cJSON_GetObjectItemCaseSensitive(schema, "type")) ||
	    strcmp(type->valuestring, "object"))
		return errmsg_set(err, RV_ERR_INPUT,
				  "tools.json: %s: parameters must be a JSON "
				  "Schema of type object",
				  t->name);
	props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	req = cJSON_GetObjectItemCaseSensitive(schema, "required");
	for (ta = t->args; ta < t->args + 4 && ta->name; ta++, nargs++) {
		const cJSON *r;
		bool listed = false;

		p = cJSON_GetObjectItemCaseSensitive(props, ta->name);
		type = cJSON_GetObjectItemCaseSensitive(p, "type");
		if (!cJSON_IsString(type) ||
		    strcmp(type->valuestring,
			   ta->type == ARG_STRING ? "string" : "integer"))
			return errmsg_set(err, RV_ERR_INPUT,
					  "tools.json: %s: argument %s must be "
					  "declared of type %s",
					  t->name, ta->name,
					  ta->type == ARG_STRING ? "string"
								 : "integer");
		cJSON_ArrayForEach(r, req)
		{
			if (cJSON_IsString(r) &&
			    !strcmp(r->valuestring, ta->name))
				listed = true;
		}
		if (listed != ta->required)
			return errmsg_set(
				err, RV_ERR_INPUT,
				"tools.json: %s: argument %s must %sbe "
				"required",
				t->name, ta->name, ta->required ? "" : "not ");
	}
	if ((size_t)cJSON_GetArraySize(props) != nargs)
		return errmsg_set(
			err, RV_ERR_INPUT,
			"tools.json: %s declares %d arguments; quorum "
			"reads %zu",
			t->name, cJSON_GetArraySize(props), nargs);
	return 0;
}

static cJSON *declaration(const char *name, const cJSON *desc,
			  const cJSON *schema, enum rv_provider api)
{
	cJSON *d = cJSON_CreateObject(), *f = d;

	if (!d)
		return NULL;
	if (api == RV_PROVIDER_OPENAI) {
		cJSON_AddStringToObject(d, "type", "function");
		f = cJSON_AddObjectToObject(d, "function");
	}
	if (!f || !cJSON_AddStringToObject(f, "name", name) ||
	    !cJSON_AddStringToObject(f, "description", desc->valuestring) ||
	    !cJSON_AddItemToObject(f,
				   api == RV_PROVIDER_OPENAI ? "parameters"
							     : "input_schema",
				   cJSON_Duplicate(schema, true))) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

int rv_tools_declare(const char *dir, const struct rv_tool_ctx *c,
		     enum rv_provider api, struct cJSON *out,
		     struct errmsg *err)
{
	struct sb text = SB_INIT;
	cJSON *root = NULL, *decls = NULL;
	const cJSON *list, *it;
	bool seen[ARRAY_SIZE(tools)] = {false};
	size_t i;
	int ret;

	ret = rv_prompt_read(dir, TOOLS_FILE, TOOLS_FILE_MAX, &text, err);
	if (ret)
		goto out;
	root = cJSON_ParseWithLength(text.buf ? text.buf : "", text.len);
	list = cJSON_GetObjectItemCaseSensitive(root, "tools");
	if (!cJSON_IsArray(list)) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "%s/%s is not JSON of the form {\"tools\": "
				 "[...]}",
				 dir, TOOLS_FILE);
		goto out;
	}
	decls = cJSON_CreateArray();
	cJSON_ArrayForEach(it, list)
	{
		const cJSON *name =
			cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *desc =
			cJSON_GetObjectItemCaseSensitive(it, "description");
		const cJSON *schema =
			cJSON_GetObjectItemCaseSensitive(it, "parameters");
		const struct tool *t = cJSON_IsString(name)
					       ? tool_find(name->valuestring)
					       : NULL;
		cJSON *d;

		if (!t) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "tools.json declares \"%.64s\", a "
					 "tool quorum does not answer",
					 cJSON_IsString(name)
						 ? name->valuestring
						 : "(no name)");
			goto out;
		}
		if (seen[t - tools]) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "tools.json declares %s twice",
					 t->name);
			goto out;
		}
		seen[t - tools] = true;
		if (!cJSON_IsString(desc) || !*desc->valuestring) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "tools.json: %s has no description",
					 t->name);
			goto out;
		}
		ret = check_schema(t, schema, err);
		if (ret)
			goto out;
		if (!offered(c, t))
			continue;
		d = declaration(t->name, desc, schema, api);
		if (!d) {
			ret = errmsg_set(err, RV_ERR_NOMEM, "out of memory");
			goto out;
		}
		cJSON_AddItemToArray(decls, d);
	}
	for (i = 0; i < ARRAY_SIZE(tools); i++)
		if (!seen[i]) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "tools.json does not declare %s",
					 tools[i].name);
			goto out;
		}
	while (cJSON_GetArraySize(decls) > 0)
		cJSON_AddItemToArray(out, cJSON_DetachItemFromArray(decls, 0));
out:
	cJSON_Delete(decls);
	cJSON_Delete(root);
	sb_release(&text);
	return ret;
}
