// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-tools-git.c - the tools that read history: log and blame of the
 * base commit, and the past bug/fix pairs similar to some lines of the
 * series' tree (the history index, as `quorum similar` shows them).
 * The table, the arguments and the confinement are llm-tools.c's.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apply-int.h"
#include "llm.h"

#define FUNC_NAME_MAX 128
#define AUTHOR_SHOWN 24	  /* bytes of an author's name shown */
#define SUBJECT_SHOWN 160 /* bytes of a subject shown */
#define FUNCNAME_MAX 80	  /* bytes of a hunk's section, as git keeps */

static int base_commit(const struct rv_tool_ctx *c, git_commit **out,
		       struct errmsg *err)
{
	git_oid oid;

	*out = NULL;
	if (!c->base || strlen(c->base) != RV_OID_HEXSZ ||
	    git_oid_fromstr(&oid, c->base) < 0 ||
	    git_commit_lookup(out, c->repo->git, &oid) < 0)
		return errmsg_set(err, RV_ERR_REPO,
				  "the base commit cannot be read");
	return 0;
}

/* path without its trailing '/', in buf. */
static const char *bare_path(const char *path, struct sb *buf)
{
	size_t n = strlen(path);

	sb_reset(buf);
	sb_add(buf, path, n && path[n - 1] == '/' ? n - 1 : n);
	return sb_str(buf);
}

static void add_date(struct sb *out, git_time_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[16];

	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d", &tm))
		snprintf(buf, sizeof(buf), "unknown");
	sb_adds(out, buf);
}

/* A name or subject from history, one line, at most max bytes. */
static void add_short(struct sb *out, const char *s, size_t max)
{
	size_t n = s ? strcspn(s, "\n") : 0;

	rv_tool_line(out, s ? s : "", n > max ? max : n);
	if (n > max)
		sb_adds(out, "...");
}

/* ---- log ---------------------------------------------------------------- */

/* Lines [start, end] of each definition of a function in a file. */
struct ranges {
	int (*v)[2];
	size_t n, alloc;
};

static bool ident_char(int ch)
{
	return isalnum(ch) || ch == '_';
}

/*
 * Does the column-0 line s[0..n) name fn as a word on a line with a
 * '(' (its header, "int fn(void)", or a macro that defines it,
 * "SYMVER_FUNC(fn, 1_1, ...")?
 */
static bool names_function(const char *s, size_t n, const char *fn)
{
	size_t fl = strlen(fn), i;

	if (!n || !(isalpha((unsigned char)*s) || *s == '_') ||
	    !memchr(s, '(', n))
		return false;
	for (i = 0; i + fl <= n; i++)
		if (!memcmp(s + i, fn, fl) &&
		    (!i || !ident_char((unsigned char)s[i - 1])) &&
		    (i + fl == n || !ident_char((unsigned char)s[i + fl])))
			return true;
	return false;
}

/*
 * The definitions of fn in a C file: a column-0 line naming fn, then a
 * '{' before any line that ends with ';' (a prototype), to the next
 * column-0 '}'.
 */
static void function_ranges(const char *data, size_t len, const char *fn,
			    struct ranges *r)
{
	const char *p = data, *end = data + len, *nl;
	int line = 0, start = 0;
	bool body = false;

	r->n = 0;
	while (p < end) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl ? nl : end) - p);
		line++;
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		if (start && !body) {
			if (memchr(p, '{', n))
				body = true;
			else if (n && p[n - 1] == ';')
				start = 0; /* a prototype */
		}
		if (start && body && n && *p == '}') {
			ALLOC_GROW(r->v, r->n + 1, r->alloc);
			r->v[r->n][0] = start;
			r->v[r->n][1] = line;
			r->n++;
			start = 0;
		}
		if (!start && names_function(p, n, fn) && p[n - 1] != ';') {
			start = line;
			body = memchr(p, '{', n) != NULL;
		}
		p = nl ? nl + 1 : end;
	}
}

static bool ranges_meet(const struct ranges *r, int from, int to)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (from <= r->v[i][1] && to >= r->v[i][0])
			return true;
	return false;
}

struct touch {
	struct ranges old, new;
	bool hit;
};

/*
 * Does [from, from + n) meet a definition? An empty side (n == 0) is
 * the point between line from and the next: it meets a definition only
 * inside it, not just before its first line or after its last.
 */
static bool side_meets(const struct ranges *r, int from, int n)
{
	size_t i;

	if (n)
		return ranges_meet(r, from, from + n - 1);
	for (i = 0; i < r->n; i++)
		if (from >= r->v[i][0] && from + 1 <= r->v[i][1])
			return true;
	return false;
}

static int touch_hunk(const git_diff_delta *delta, const git_diff_hunk *h,
		      void *arg)
{
	struct touch *t = arg;

	(void)delta;
	if (side_meets(&t->old, h->old_start, h->old_lines) ||
	    side_meets(&t->new, h->new_start, h->new_lines))
		t->hit = true;
	return 0;
}

static int blob_or_null(struct rv_repo *repo, const git_oid *id, git_blob **b)
{
	*b = NULL;
	if (!id)
		return 0;
	if (git_blob_lookup(b, repo->git, id) < 0)
		return -1;
	if ((size_t)git_blob_rawsize(*b) > RV_TOOL_MAX_FILE) {
		git_blob_free(*b);
		*b = NULL;
		return -1;
	}
	return 0;
}

/* Does the change from blob old to blob new (either may be NULL) touch fn? */
static bool touches_function(struct rv_repo *repo, const git_oid *old,
			     const git_oid *new, const char *fn,
			     struct touch *t)
{
	git_diff_options o;
	git_blob *a = NULL, *b = NULL;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	t->hit = false;
	if (blob_or_null(repo, old, &a) < 0 || blob_or_null(repo, new, &b) < 0)
		goto out;
	if (a)
		function_ranges(git_blob_rawcontent(a),
				(size_t)git_blob_rawsize(a), fn, &t->old);
	else
		t->old.n = 0;
	if (b)
		function_ranges(git_blob_rawcontent(b),
				(size_t)git_blob_rawsize(b), fn, &t->new);
	else
		t->new.n = 0;
	if (!t->old.n && !t->new.n)
		goto out;
	o.context_lines = 0;
	o.flags |= GIT_DIFF_FORCE_TEXT;
	git_diff_blobs(a, NULL, b, NULL, &o, NULL, NULL, touch_hunk, NULL, t);
out:
	git_blob_free(a);
	git_blob_free(b);
	return t->hit;
}

/* The entry id of path in commit's tree into id; false when absent. */
static bool path_id(git_commit *commit, const char *path, git_oid *id,
		    git_object_t *type)
{
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	bool found = false;

	if (git_commit_tree(&t, commit) < 0)
		return false;
	if (!git_tree_entry_bypath(&e, t, path)) {
		git_oid_cpy(id, git_tree_entry_id(e));
		if (type)
			*type = git_tree_entry_type(e);
		found = true;
	}
	git_tree_entry_free(e);
	git_tree_free(t);
	return found;
}

static int check_function(const char *fn, struct errmsg *err)
{
	size_t i, n = strlen(fn);

	if (!n || n > FUNC_NAME_MAX || isdigit((unsigned char)*fn))
		return errmsg_set(err, RV_ERR_INPUT,
				  "function must be a C identifier of at most "
				  "%d bytes",
				  FUNC_NAME_MAX);
	for (i = 0; i < n; i++)
		if (!ident_char((unsigned char)fn[i]))
			return errmsg_set(err, RV_ERR_INPUT,
					  "function must be a C identifier "
					  "(letters, digits, '_')");
	return 0;
}

struct log_walk {
	size_t walked, shown;
	bool more, stopped_time, stopped_walk;
};

static void log_entry(struct sb *out, git_commit *commit, const char *mark)
{
	const git_signature *a = git_commit_author(commit);
	char hex[RV_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), git_commit_id(commit));
	sb_addf(out, "%.12s ", hex);
	add_date(out, a ? a->when.time : git_commit_time(commit));
	sb_addch(out, ' ');
	add_short(out, a ? a->name : "?", AUTHOR_SHOWN);
	sb_adds(out, ": ");
	add_short(out, git_commit_summary(commit), SUBJECT_SHOWN);
	sb_adds(out, mark);
	sb_addch(out, '\n');
}

/* Is fn defined in the file id (a blob)? */
static bool defines(struct rv_repo *repo, const git_oid *id, const char *fn)
{
	struct ranges r = {0};
	git_blob *b = NULL;
	bool found;

	if (blob_or_null(repo, id, &b) < 0 || !b)
		return false;
	function_ranges(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), fn,
			&r);
	found = r.n > 0;
	free(r.v);
	git_blob_free(b);
	return found;
}

int rv_tool_log(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		struct sb *out, struct errmsg *err)
{
	git_commit *base = NULL, *commit = NULL, *parent = NULL;
	git_revwalk *walk = NULL;
	struct touch touch = {0};
	struct log_walk w = {0};
	struct sb path = SB_INIT;
	git_object_t type;
	git_oid oid, mine, theirs, last, last_id;
	bool have_last = false, last_found = false;
	size_t body = out->len;
	double deadline = rv_tool_now() + c->seconds;
	bool undefined = false;
	int ret;

	ret = rv_tool_path_check(a->path, err);
	if (!ret && a->function)
		ret = check_function(a->function, err);
	if (!ret)
		ret = base_commit(c, &base, err);
	if (ret)
		goto out;
	bare_path(a->path, &path);
	if (a->function && path_id(base, sb_str(&path), &mine, &type)) {
		if (type != GIT_OBJECT_BLOB) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "function needs the path of a file, "
					 "not a directory");
			goto out;
		}
		undefined = !defines(c->repo, &mine, a->function);
	}
	if (git_revwalk_new(&walk, c->repo->git) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TIME) < 0 ||
	    git_revwalk_push(walk, git_commit_id(base)) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "cannot walk the history of the base");
		goto out;
	}
	while (!git_revwalk_next(&oid, walk)) {
		bool has_mine, has_theirs;

		if (w.walked >= RV_TOOL_MAX_WALK) {
			w.stopped_walk = true;
			break;
		}
		if (!(w.walked & 31) && rv_tool_now() > deadline) {
			w.stopped_time = true;
			break;
		}
		w.walked++;
		git_commit_free(commit);
		git_commit_free(parent);
		commit = parent = NULL;
		if (git_commit_lookup(&commit, c->repo->git, &oid) < 0)
			continue;
		/* As git log shows a path: merges only bring changes. */
		if (git_commit_parentcount(commit) > 1)
			continue;
		if (git_commit_parentcount(commit) == 1 &&
		    git_commit_parent(&parent, commit, 0) < 0)
			continue;
		/* Walked by date, a commit's parent is mostly the next one:
		 * what its tree holds is known already. */
		if (have_last && git_oid_equal(&oid, &last))
			has_mine = last_found, mine = last_id;
		else
			has_mine = path_id(commit, sb_str(&path), &mine, NULL);
		has_theirs =
			parent && path_id(parent, sb_str(&path), &theirs, NULL);
		have_last = parent != NULL;
		if (parent) {
			git_oid_cpy(&last, git_commit_id(parent));
			last_found = has_theirs;
			last_id = theirs;
		}
		if (has_mine == has_theirs &&
		    (!has_mine || git_oid_equal(&mine, &theirs)))
			continue;
		if (a->function &&
		    !touches_function(c->repo, has_theirs ? &theirs : NULL,
				      has_mine ? &mine : NULL, a->function,
				      &touch))
			continue;
		if (w.shown >= (size_t)c->max_entries) {
			w.more = true;
			break;
		}
		{
			size_t before = out->len;

			log_entry(out, commit,
				  !has_theirs ? " [adds the file]"
				  : !has_mine ? " [deletes the file]"
					      : "");
			if (out->len - body > c->max_bytes) {
				sb_setlen(out, before);
				w.more = true;
				break;
			}
		}
		w.shown++;
	}
	if (!w.shown) {
		sb_adds(out, "(no commit of the base touches ");
		rv_tool_path(out, sb_str(&path));
		if (a->function)
			sb_addf(out, " in %s()", a->function);
	} else if (w.more) {
		sb_addf(out, "(the newest %zu commits; older ones are left out",
			w.shown);
	} else {
		sb_addf(out, "(%zu commit%s, newest first", w.shown,
			w.shown == 1 ? "" : "s");
	}
	if (a->function)
		sb_adds(out, "; only those whose diff touches the function");
	if (undefined)
		sb_addf(out,
			"; the base's file has no definition of %s() that "
			"quorum recognises",
			a->function);
	if (w.stopped_time)
		sb_addf(out, "; the walk stopped after %.1f s and %zu commits",
			c->seconds, w.walked);
	else if (w.stopped_walk)
		sb_addf(out, "; the walk stopped after %zu commits", w.walked);
	else
		sb_addf(out, "; %zu commits read; renames are not followed",
			w.walked);
	sb_adds(out, ")\n");
out:
	free(touch.old.v);
	free(touch.new.v);
	git_commit_free(commit);
	git_commit_free(parent);
	git_commit_free(base);
	git_revwalk_free(walk);
	sb_release(&path);
	return ret;
}

/* ---- line ranges -------------------------------------------------------- */

/*
 * The lines [*from, *to] of a file of total lines asked by a: the start
 * within the file, the end clamped to it and to max lines. 0, or
 * RV_ERR_INPUT.
 */
static int line_range(const struct rv_tool_args *a, int total, int max,
		      int *from, int *to, struct errmsg *err)
{
	if (!total)
		return errmsg_set(err, RV_ERR_INPUT, "the file is empty");
	if (a->start_line > total)
		return errmsg_set(err, RV_ERR_INPUT,
				  "start_line %d is past the end of the file "
				  "(%d lines)",
				  a->start_line, total);
	if (a->end_line < a->start_line)
		return errmsg_set(err, RV_ERR_INPUT,
				  "end_line %d is before start_line %d",
				  a->end_line, a->start_line);
	*from = a->start_line;
	*to = a->end_line < total ? a->end_line : total;
	if (*to - *from >= max)
		*to = *from + max - 1;
	return 0;
}

/*
 * The starts of lines lo..hi of a text (and where line hi ends): only
 * those, so a file of millions of empty lines costs no more than the
 * lines asked for.
 */
struct window {
	const char **v; /* v[i - lo] starts line i; v[hi - lo + 1] ends hi */
	int lo, hi;
};

static void window_make(struct window *w, const char *data, size_t len, int lo,
			int hi)
{
	const char *p = data, *end = data + len, *nl;
	int line;

	w->lo = lo;
	w->hi = hi;
	w->v = xcalloc((size_t)(hi - lo) + 2, sizeof(*w->v));
	for (line = 1; line <= hi; line++) {
		if (line >= lo)
			w->v[line - lo] = p;
		nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	w->v[hi - lo + 1] = p;
}

static const char *wline(const struct window *w, int i)
{
	return w->v[i - w->lo];
}

/* Bytes of line i, without its newline. */
static size_t wbytes(const struct window *w, int i)
{
	size_t n = (size_t)(w->v[i - w->lo + 1] - w->v[i - w->lo]);

	return n && w->v[i - w->lo][n - 1] == '\n' ? n - 1 : n;
}

/* The note after a range: how much was shown of what was asked. */
static void range_note(struct sb *out, const struct rv_tool_args *a, int total,
		       int from, int shown_to, const char *cut)
{
	int asked_to = a->end_line < total ? a->end_line : total;

	if (shown_to < asked_to)
		sb_addf(out,
			"(cut at %s: lines %d-%d shown; ask for lines %d-%d; "
			"the file has %d lines)\n",
			cut, from, shown_to, shown_to + 1, asked_to, total);
	else
		sb_addf(out, "(lines %d-%d of %d)\n", from, shown_to, total);
}

/* ---- blame -------------------------------------------------------------- */

/*
 * The commit depth first-parent steps before c into id; false (id
 * untouched) when the history is shorter.
 */
static bool oldest_ancestor(git_commit *c, int depth, git_oid *id)
{
	git_commit *at = NULL, *up = NULL;
	bool found = false;
	int i;

	if (git_commit_dup(&at, c) < 0)
		return false;
	for (i = 0; i < depth; i++) {
		if (git_commit_parent(&up, at, 0) < 0)
			break;
		git_commit_free(at);
		at = up;
	}
	if (i == depth) {
		git_oid_cpy(id, git_commit_id(at));
		found = true;
	}
	git_commit_free(at);
	return found;
}

int rv_tool_blame(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		  struct sb *out, struct errmsg *err)
{
	git_blame_options o;
	git_commit *base = NULL;
	git_blame *blame = NULL;
	struct sb data = SB_INIT, path = SB_INIT;
	struct window win = {0};
	size_t body = out->len;
	int total, from, to, line, shown_to, boundary = 0;
	bool bounded;
	char cut[64];
	int ret;

	git_blame_options_init(&o, GIT_BLAME_OPTIONS_VERSION);
	ret = base_commit(c, &base, err);
	if (!ret)
		ret = rv_tool_read_blob(c->repo, c->base, a->path, &data, err);
	if (ret)
		goto out;
	total = rv_tool_count_lines(data.buf ? data.buf : "", data.len);
	ret = line_range(a, total, c->max_lines, &from, &to, err);
	if (ret)
		goto out;
	git_oid_cpy(&o.newest_commit, git_commit_id(base));
	/* libgit2's blame has no clock: bound it by the history it reads,
	 * as `git blame A..B` does (older lines stop at the boundary). */
	bounded = oldest_ancestor(base, RV_TOOL_BLAME_DEPTH, &o.oldest_commit);
	o.min_line = (size_t)from;
	o.max_line = (size_t)to;
	if (git_blame_file(&blame, c->repo->git, bare_path(a->path, &path),
			   &o) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "cannot blame the file");
		goto out;
	}
	window_make(&win, data.buf, data.len, from, to);
	snprintf(cut, sizeof(cut), "%d lines", c->max_lines);
	shown_to = from - 1;
	for (line = from; line <= to; line++) {
		const git_blame_hunk *h =
			git_blame_get_hunk_byline(blame, (size_t)line);
		size_t before = out->len;
		char hex[RV_OID_HEXSZ + 1] = "";

		if (h)
			git_oid_tostr(hex, sizeof(hex), &h->final_commit_id);
		if (h && h->boundary && bounded) {
			/* Not who wrote it: where the walk stopped. */
			boundary++;
			sb_addf(out, "^%.11s before ", hex);
			add_date(out, h->final_signature
					      ? h->final_signature->when.time
					      : 0);
			sb_adds(out, " (older)");
		} else {
			sb_addf(out, "%.12s ", h ? hex : "unknown");
			add_date(out, h && h->final_signature
					      ? h->final_signature->when.time
					      : 0);
			sb_addch(out, ' ');
			add_short(out,
				  h && h->final_signature
					  ? h->final_signature->name
					  : "?",
				  AUTHOR_SHOWN);
		}
		sb_addf(out, " %6d\t", line);
		rv_tool_line(out, wline(&win, line), wbytes(&win, line));
		sb_addch(out, '\n');
		if (out->len - body > c->max_bytes) {
			sb_setlen(out, before);
			snprintf(cut, sizeof(cut), "%zu bytes", c->max_bytes);
			break;
		}
		shown_to = line;
	}
	range_note(out, a, total, from, shown_to, cut);
	if (boundary)
		sb_addf(out,
			"(^: older than that commit, %d commits back along "
			"the base's first parents, where blame stops)\n",
			RV_TOOL_BLAME_DEPTH);
out:
	free(win.v);
	git_blame_free(blame);
	git_commit_free(base);
	sb_release(&data);
	sb_release(&path);
	return ret;
}

/* ---- similar ------------------------------------------------------------ */

/* What git puts after a hunk's @@: the last line above from that
 * starts with a letter, '_' or '$' (its default funcname). */
static char *funcname(const struct window *w, int from)
{
	int i;

	for (i = from - 1; i >= w->lo; i--) {
		const char *l = wline(w, i);
		unsigned char ch = (unsigned char)*l;
		size_t n = wbytes(w, i);

		if (n && (isalpha(ch) || ch == '_' || ch == '$')) {
			while (n && isspace((unsigned char)l[n - 1]))
				n--;
			return xstrndup(l, n > FUNCNAME_MAX ? FUNCNAME_MAX : n);
		}
	}
	return NULL;
}

/* A diff that adds lines [from, to] of path, as a patch would. */
static struct rv_diff *adding_diff(const char *path, const struct window *w,
				   int from, int to)
{
	struct rv_diff *d = xcalloc(1, sizeof(*d));
	struct rv_file *f;
	struct rv_hunk *h;
	int i;

	d->files = xcalloc(1, sizeof(*d->files));
	d->nfiles = 1;
	f = &d->files[0];
	f->old_path = xstrdup_or_null(path);
	f->new_path = xstrdup_or_null(path);
	f->status = RV_FILE_MODIFIED;
	f->hunks = xcalloc(1, sizeof(*f->hunks));
	f->nhunks = 1;
	h = &f->hunks[0];
	h->old_start = from - 1;
	h->new_start = from;
	h->new_lines = to - from + 1;
	h->section = funcname(w, from);
	h->lines = xcalloc((size_t)h->new_lines, sizeof(*h->lines));
	h->nlines = (size_t)h->new_lines;
	for (i = from; i <= to; i++) {
		struct rv_line *l = &h->lines[i - from];

		l->origin = '+';
		l->new_no = i;
		l->text = xstrndup(wline(w, i), wbytes(w, i));
	}
	return d;
}

int rv_tool_similar(const struct rv_tool_ctx *c, const struct rv_tool_args *a,
		    struct sb *out, struct errmsg *err)
{
	struct rv_similar_list l = {0};
	struct sb data = SB_INIT, text = SB_INIT, path = SB_INIT;
	struct rv_diff *d = NULL;
	struct window win = {0};
	const char *p, *nl, *end;
	int total, from, to, ret;

	ret = rv_tool_read_blob(c->repo, c->tree, a->path, &data, err);
	if (ret)
		goto out;
	total = rv_tool_count_lines(data.buf ? data.buf : "", data.len);
	ret = line_range(a, total, c->max_lines, &from, &to, err);
	if (ret)
		goto out;
	/* git looks up to 4000 lines back for a hunk's function. */
	window_make(&win, data.buf, data.len, from > 4000 ? from - 4000 : 1,
		    to);
	d = adding_diff(bare_path(a->path, &path), &win, from, to);
	ret = rv_history_similar(c->hist, d, RV_TOOL_SIMILAR_K, &l, err);
	if (ret) {
		ret = RV_ERR_INTERNAL;
		goto out;
	}
	rv_similar_format(&l, &text);
	/* Whole lines, within the answer's bytes. */
	p = sb_str(&text);
	end = p + text.len;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl + 1 : end;
		if ((size_t)(nl - sb_str(&text)) > c->max_bytes) {
			sb_addf(out, "(cut at %zu bytes)\n", c->max_bytes);
			break;
		}
		sb_add(out, p, (size_t)(nl - p));
		p = nl;
	}
	if (a->end_line > to)
		sb_addf(out, "(for lines %d-%d of %d%s)\n", from, to, total,
			to - from + 1 >= c->max_lines ? ", cut at the lines cap"
						      : "");
out:
	rv_similar_list_release(&l);
	rv_diff_free(d);
	free(win.v);
	sb_release(&data);
	sb_release(&text);
	sb_release(&path);
	return ret;
}
