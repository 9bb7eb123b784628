// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * classify-scan.c - read HEAD's history once, oldest first: per commit
 * its time, subject, Fixes: targets, touched files and size; which
 * release tag first held it; when (if ever) it was labelled yes. The
 * touched files cost a tree diff, so they are cached by commit id in
 * <git dir>/quorum/classify.db (our own file: the history index is not
 * touched) and a moved HEAD diffs only its new commits.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "classify-int.h"

/* ---- string map ---- */

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint32_t *probe(const struct cl_map *m, const char *key, size_t len)
{
	size_t i = (size_t)hash(key, len) & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		uint32_t s = m->slot[i];

		if (!s)
			return &m->slot[i];
		if (!strncmp(m->keys[s - 1], key, len) && !m->keys[s - 1][len])
			return &m->slot[i];
	}
}

uint32_t cl_map_find(const struct cl_map *m, const char *key, size_t len)
{
	uint32_t *s;

	if (!m->cap)
		return UINT32_MAX;
	s = probe(m, key, len);
	return *s ? *s - 1 : UINT32_MAX;
}

uint32_t cl_map_id(struct cl_map *m, const char *key, size_t len)
{
	uint32_t *s;

	if ((m->n + 1) * 2 > m->cap) {
		size_t old = m->cap, i;
		uint32_t *os = m->slot;

		m->cap = old ? old * 2 : 256;
		m->slot = xcalloc(m->cap, sizeof(*m->slot));
		for (i = 0; i < old; i++)
			if (os[i])
				*probe(m, m->keys[os[i] - 1],
				       strlen(m->keys[os[i] - 1])) = os[i];
		free(os);
	}
	s = probe(m, key, len);
	if (*s)
		return *s - 1;
	ALLOC_GROW(m->keys, m->n + 1, m->alloc);
	m->keys[m->n] = xstrndup(key, len);
	*s = (uint32_t)++m->n;
	return (uint32_t)(m->n - 1);
}

void cl_map_release(struct cl_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* ---- the cache ---- */

static void cache_open(struct rv_classifier *c)
{
	const char *gd = git_repository_path(c->repo);
	struct sb p = SB_INIT;

	sb_addf(&p, "%s%squorum", gd, gd[strlen(gd) - 1] == '/' ? "" : "/");
	mkdir(p.buf, 0755);
	sb_adds(&p, "/classify.db");
	if (sqlite3_open_v2(p.buf, &c->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(c->db,
			 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE TABLE IF NOT EXISTS facts(oid TEXT PRIMARY "
			 "KEY, files TEXT, bytes REAL);"
			 "CREATE TABLE IF NOT EXISTS models(question TEXT "
			 "PRIMARY KEY, head TEXT, labels TEXT, model TEXT);",
			 NULL, NULL, NULL) != SQLITE_OK) {
		/* A read-only repo classifies too, just without the cache. */
		sqlite3_close(c->db);
		c->db = NULL;
	}
	sb_release(&p);
}

/* ---- one commit ---- */

static const char *top_dir_key(const char *path, char *buf, size_t len)
{
	const char *a = strchr(path, '/'), *b = a ? strchr(a + 1, '/') : NULL;

	if (b) /* providers/mlx5/x.c -> providers/mlx5 */
		snprintf(buf, len, "%.*s", (int)(b - path), path);
	else if (a)
		snprintf(buf, len, "%.*s", (int)(a - path), path);
	else
		snprintf(buf, len, "(top)");
	return buf;
}

static bool is_doc(const char *path)
{
	size_t n = strlen(path);

	return !strncmp(path, "Documentation/", 14) ||
	       !strncmp(path, "doc/", 4) || !strncmp(path, "docs/", 5) ||
	       (n > 3 && !strcmp(path + n - 3, ".md")) ||
	       (n > 4 && !strcmp(path + n - 4, ".rst")) ||
	       (n > 4 && !strcmp(path + n - 4, ".txt")) ||
	       strstr(path, "/man/") || !strncmp(path, "man/", 4);
}

/* Set the commit's files, dirs and docs flag from newline-separated paths. */
void cl_set_files(struct rv_classifier *c, struct cl_commit *k,
		  const char *paths)
{
	const char *p = paths;
	uint32_t files[CL_MAX_FILES], dirs[CL_MAX_FILES];
	size_t nf = 0, nd = 0, i;
	bool docs = true;

	while (p && *p && nf < CL_MAX_FILES) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char path[512], dk[512];
		uint32_t d;

		if (len && len < sizeof(path)) {
			memcpy(path, p, len);
			path[len] = '\0';
			files[nf++] = cl_map_id(&c->paths, path, len);
			docs = docs && is_doc(path);
			top_dir_key(path, dk, sizeof(dk));
			d = cl_map_id(&c->dirs, dk, strlen(dk));
			for (i = 0; i < nd && dirs[i] != d; i++)
				;
			if (i == nd)
				dirs[nd++] = d;
		}
		p = e ? e + 1 : p + len;
	}
	k->files = nf ? xmalloc(nf * sizeof(*files)) : NULL;
	if (nf)
		memcpy(k->files, files, nf * sizeof(*files));
	k->nfiles = (uint32_t)nf;
	k->dirs = nd ? xmalloc(nd * sizeof(*dirs)) : NULL;
	if (nd)
		memcpy(k->dirs, dirs, nd * sizeof(*dirs));
	k->ndirs = (uint32_t)nd;
	k->flags[CF_DOCS] = nf && docs;
}

void cl_set_subject(struct rv_classifier *c, struct cl_commit *k,
		    const char *subject)
{
	char w[CL_MAX_WORDS][32];
	size_t n, i;

	k->subject = xstrndup(subject ? subject : "", 400);
	for (i = 0; k->subject[i]; i++)
		if ((unsigned char)k->subject[i] < 0x20)
			k->subject[i] = ' ';
	n = cl_subject_words(k->subject, w, CL_MAX_WORDS);
	k->words = n ? xmalloc(n * sizeof(*k->words)) : NULL;
	for (i = 0; i < n; i++)
		k->words[i] = cl_map_id(&c->words, w[i], strlen(w[i]));
	k->nwords = (uint32_t)n;
	k->flags[CF_SUBJ_FIX] = cl_subject_fix(k->subject);
	k->flags[CF_SUBJ_FEAT] = cl_subject_feat(k->subject);
	k->flags[CF_SUBJ_CLEAN] = cl_subject_clean(k->subject);
	k->flags[CF_REVERT] = !strncmp(k->subject, "Revert ", 7);
}

/* Fixes: lines of a message: their (abbreviated) ids. */
void cl_set_fixes(struct cl_commit *k, const char *msg)
{
	const char *p = msg;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p), h = 0;

		if (len > 6 && !strncasecmp(p, "Fixes:", 6)) {
			const char *q = p + 6;

			k->flags[CF_FIXES] = true;
			while (q < p + len && (*q == ' ' || *q == '\t'))
				q++;
			while (q + h < p + len && isxdigit((unsigned char)q[h]))
				h++;
			if (h >= 7 && h <= 40 && k->nfix_refs < CL_MAX_FIXES)
				k->fix_refs[k->nfix_refs++] = xstrndup(q, h);
		}
		p = e ? e + 1 : p + len;
	}
}

static int diff_files(struct rv_classifier *c, git_commit *gc, struct sb *paths,
		      double *bytes)
{
	git_tree *tree = NULL, *ptree = NULL;
	git_commit *parent = NULL;
	git_diff *d = NULL;
	git_diff_options o;
	size_t i, n;
	int ret = -1;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_SKIP_BINARY_CHECK;
	if (git_commit_tree(&tree, gc) < 0 ||
	    (git_commit_parentcount(gc) &&
	     (git_commit_parent(&parent, gc, 0) < 0 ||
	      git_commit_tree(&ptree, parent) < 0)) ||
	    git_diff_tree_to_tree(&d, c->repo, ptree, tree, &o) < 0)
		goto out;
	n = git_diff_num_deltas(d);
	*bytes = 0;
	for (i = 0; i < n; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		const char *path = dd->new_file.path ? dd->new_file.path
						     : dd->old_file.path;
		size_t os = 0, ns = 0;
		git_object_t t;

		if (i < CL_MAX_FILES)
			sb_addf(paths, "%s\n", path);
		if (!git_oid_is_zero(&dd->old_file.id))
			git_odb_read_header(&os, &t, c->odb, &dd->old_file.id);
		if (!git_oid_is_zero(&dd->new_file.id))
			git_odb_read_header(&ns, &t, c->odb, &dd->new_file.id);
		/* Size of the change, roughly: what grew or shrank, or a line.
		 */
		*bytes += os > ns   ? (double)(os - ns)
			  : ns > os ? (double)(ns - os)
				    : 80;
	}
	ret = 0;
out:
	git_diff_free(d);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	return ret;
}

static int commit_facts(struct rv_classifier *c, git_commit *gc,
			struct cl_commit *k, sqlite3_stmt *get,
			sqlite3_stmt *put)
{
	struct sb paths = SB_INIT;
	double bytes = 0;

	if (get) {
		sqlite3_bind_text(get, 1, k->hex, -1, SQLITE_STATIC);
		if (sqlite3_step(get) == SQLITE_ROW) {
			cl_set_files(c, k,
				     (const char *)sqlite3_column_text(get, 0));
			k->bytes = sqlite3_column_double(get, 1);
			sqlite3_reset(get);
			return 0;
		}
		sqlite3_reset(get);
	}
	if (diff_files(c, gc, &paths, &bytes) < 0) {
		sb_release(&paths);
		return -1;
	}
	cl_set_files(c, k, sb_str(&paths));
	k->bytes = bytes;
	if (put) {
		sqlite3_bind_text(put, 1, k->hex, -1, SQLITE_STATIC);
		sqlite3_bind_text(put, 2, sb_str(&paths), -1, SQLITE_STATIC);
		sqlite3_bind_double(put, 3, bytes);
		sqlite3_step(put);
		sqlite3_reset(put);
	}
	sb_release(&paths);
	return 0;
}

/* Does the message carry the label (a regex of the question)? */
static bool msg_labelled(const struct rv_classifier *c, const char *msg)
{
	size_t i;

	for (i = 0; i < c->nre; i++)
		if (!regexec(&c->re[i], msg, 0, NULL, 0))
			return true;
	return false;
}

/*
 * The subject without what matches a label regex ("CVE-2024-1234"): a
 * replayed commit is judged without its label, and a feature that read
 * the label would learn nothing.
 */
static void unlabelled_subject(const struct rv_classifier *c,
			       const char *subject, struct sb *out)
{
	size_t i;
	int n;

	sb_reset(out);
	sb_adds(out, subject ? subject : "");
	for (i = 0; i < c->nre; i++)
		for (n = 0; n < 4 && out->len; n++) {
			regmatch_t m;

			if (regexec(&c->re[i], out->buf, 1, &m, 0) ||
			    m.rm_eo <= m.rm_so)
				break;
			memset(out->buf + m.rm_so, ' ',
			       (size_t)(m.rm_eo - m.rm_so));
		}
}

int cl_scan(struct rv_classifier *c, struct errmsg *err)
{
	struct sb subj = SB_INIT;
	git_revwalk *walk = NULL;
	sqlite3_stmt *get = NULL, *put = NULL;
	git_oid oid;
	int ret = 0;

	if (git_revwalk_new(&walk, c->repo) < 0 ||
	    git_revwalk_push_head(walk) < 0)
		return errmsg_set(err, RV_ERR_REPO,
				  "the repository has no HEAD commit");
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (c->db) {
		sqlite3_prepare_v2(c->db,
				   "SELECT files, bytes FROM facts WHERE oid=?",
				   -1, &get, NULL);
		sqlite3_prepare_v2(c->db,
				   "INSERT OR REPLACE INTO facts VALUES(?,?,?)",
				   -1, &put, NULL);
		sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL);
	}
	while (!git_revwalk_next(&oid, walk)) {
		git_commit *gc = NULL;
		struct cl_commit *k;
		const char *msg;
		const git_signature *a;
		size_t i, np;

		if (c->n >= CL_MAX_COMMITS) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "more than %d commits in HEAD's "
					 "history",
					 CL_MAX_COMMITS);
			break;
		}
		if (git_commit_lookup(&gc, c->repo, &oid) < 0)
			continue;
		ALLOC_GROW(c->c, c->n + 1, c->alloc);
		k = &c->c[c->n];
		memset(k, 0, sizeof(*k));
		git_oid_tostr(k->hex, sizeof(k->hex), &oid);
		k->time = (int64_t)git_commit_time(gc);
		k->release = CL_NEVER;
		k->release_tag = -1;
		k->label = CL_NEVER;
		k->label_by = -1;
		np = git_commit_parentcount(gc);
		k->parents = np ? xmalloc(np * sizeof(*k->parents)) : NULL;
		for (i = 0; i < np; i++) {
			char ph[RV_OID_HEXSZ + 1];
			uint32_t pi;

			git_oid_tostr(ph, sizeof(ph),
				      git_commit_parent_id(gc, i));
			pi = cl_map_find(&c->oids, ph, RV_OID_HEXSZ);
			if (pi != UINT32_MAX)
				k->parents[k->nparents++] = (int32_t)pi;
		}
		cl_map_id(&c->oids, k->hex, RV_OID_HEXSZ);
		c->n++;
		k->merge = np != 1;
		a = git_commit_author(gc);
		if (a && a->email)
			k->author = xstrndup(a->email, 200);
		unlabelled_subject(c, git_commit_summary(gc), &subj);
		cl_set_subject(c, k, sb_str(&subj));
		if (k->merge) {
			git_commit_free(gc);
			continue;
		}
		msg = git_commit_message(gc);
		if (msg && strlen(msg) > RV_CL_MAX_MESSAGE) {
			char *m = xstrndup(msg, RV_CL_MAX_MESSAGE);

			cl_set_fixes(k, m);
			if (msg_labelled(c, m)) {
				k->label = k->time;
				k->label_where = "message";
			}
			free(m);
		} else if (msg) {
			cl_set_fixes(k, msg);
			if (msg_labelled(c, msg)) {
				k->label = k->time;
				k->label_where = "message";
			}
		}
		if (commit_facts(c, gc, k, get, put) < 0)
			k->merge = true; /* cannot read it: leave it out */
		git_commit_free(gc);
		if (c->opts_progress && c->n % 2000 == 0) {
			char line[80];

			snprintf(line, sizeof(line),
				 "classify: read %zu commits", c->n);
			c->opts_progress(c->opts_progress_arg, line);
		}
	}
	if (c->db)
		sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
	sb_release(&subj);
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	git_revwalk_free(walk);
	return ret;
}

/* ---- ids ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cl_sort_ids(struct rv_classifier *c)
{
	size_t i;

	c->sorted = xcalloc(c->n + 1, sizeof(*c->sorted));
	for (i = 0; i < c->n; i++)
		c->sorted[i] = c->c[i].hex;
	qsort(c->sorted, c->n, sizeof(*c->sorted), cmp_str);
}

/* The index of the one commit whose id starts with hex, or -1. */
int32_t cl_resolve(const struct rv_classifier *c, const char *hex, size_t len)
{
	char low[RV_OID_HEXSZ + 1];
	size_t lo = 0, hi = c->n, i;

	if (len < 7 || len > RV_OID_HEXSZ)
		return -1;
	for (i = 0; i < len; i++)
		low[i] = (char)tolower((unsigned char)hex[i]);
	low[len] = '\0';
	if (len == RV_OID_HEXSZ) {
		uint32_t id = cl_map_find(&c->oids, low, len);

		return id == UINT32_MAX ? -1 : (int32_t)id;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strncmp(c->sorted[mid], low, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= c->n || strncmp(c->sorted[lo], low, len))
		return -1;
	if (lo + 1 < c->n && !strncmp(c->sorted[lo + 1], low, len))
		return -1; /* ambiguous */
	return (int32_t)cl_map_find(&c->oids, c->sorted[lo], RV_OID_HEXSZ);
}

void cl_resolve_fixes(struct rv_classifier *c)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		struct cl_commit *k = &c->c[i];

		for (j = 0; j < k->nfix_refs; j++) {
			k->fixes[k->nfixes++] = cl_resolve(
				c, k->fix_refs[j], strlen(k->fix_refs[j]));
			free(k->fix_refs[j]);
			k->fix_refs[j] = NULL;
		}
		k->nfix_refs = 0;
	}
}

/* ---- releases ---- */

struct tagref {
	char *name;
	int64_t time;
	git_oid oid;
};

struct tag_walk {
	struct rv_classifier *c;
	struct tagref *v;
	size_t n, alloc;
};

static int tag_cb(const char *name, git_oid *oid, void *arg)
{
	struct tag_walk *tw = arg;
	struct rv_classifier *c = tw->c;
	const char *shortname = name + strlen("refs/tags/");
	git_object *obj = NULL, *peeled = NULL;

	if (fnmatch(c->q.release_tags, shortname, 0) ||
	    strstr(shortname, "-rc") || tw->n >= 100000)
		return 0;
	if (git_object_lookup(&obj, c->repo, oid, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0)
		goto out;
	ALLOC_GROW(tw->v, tw->n + 1, tw->alloc);
	tw->v[tw->n].name = xstrdup_or_null(shortname);
	tw->v[tw->n].time = (int64_t)git_commit_time((git_commit *)peeled);
	git_oid_cpy(&tw->v[tw->n].oid, git_object_id(peeled));
	tw->n++;
out:
	git_object_free(peeled);
	git_object_free(obj);
	return 0;
}

static int cmp_tag(const void *a, const void *b)
{
	const struct tagref *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* Mark idx and its unmarked ancestors as first released at tag i. */
static void mark_from(struct rv_classifier *c, int32_t idx, int64_t t,
		      int32_t tag, int32_t *stack)
{
	size_t sp = 0;

	if (c->c[idx].release != CL_NEVER)
		return;
	c->c[idx].release = t;
	c->c[idx].release_tag = tag;
	stack[sp++] = idx;
	while (sp) {
		struct cl_commit *k = &c->c[stack[--sp]];
		uint32_t p;

		for (p = 0; p < k->nparents; p++) {
			struct cl_commit *pk = &c->c[k->parents[p]];

			if (pk->release != CL_NEVER)
				continue;
			pk->release = t;
			pk->release_tag = tag;
			stack[sp++] = k->parents[p];
		}
	}
}

/*
 * A tag off HEAD's history (a stable branch) ships the HEAD commits its
 * branch forked from: walk its own commits (each once over all tags: an
 * older tag already marked what a commit walked before leads to) down to
 * them.
 */
static void mark_off_head(struct rv_classifier *c, const git_oid *start,
			  int64_t t, int32_t tag, struct cl_map *seen,
			  int32_t *stack)
{
	git_oid *todo = NULL;
	size_t n = 0, alloc = 0, walked = 0;

	ALLOC_GROW(todo, n + 1, alloc);
	todo[n++] = *start;
	while (n && walked++ < 200000) {
		git_oid oid = todo[--n];
		char hex[RV_OID_HEXSZ + 1];
		git_commit *gc = NULL;
		uint32_t idx;
		size_t i;

		git_oid_tostr(hex, sizeof(hex), &oid);
		idx = cl_map_find(&c->oids, hex, RV_OID_HEXSZ);
		if (idx != UINT32_MAX) {
			mark_from(c, (int32_t)idx, t, tag, stack);
			continue;
		}
		if (cl_map_find(seen, hex, RV_OID_HEXSZ) != UINT32_MAX)
			continue;
		cl_map_id(seen, hex, RV_OID_HEXSZ);
		if (git_commit_lookup(&gc, c->repo, &oid) < 0)
			continue;
		for (i = 0; i < git_commit_parentcount(gc); i++) {
			ALLOC_GROW(todo, n + 1, alloc);
			todo[n++] = *git_commit_parent_id(gc, i);
		}
		git_commit_free(gc);
	}
	free(todo);
}

void cl_releases(struct rv_classifier *c)
{
	struct tag_walk tw = {0};
	struct cl_map seen = {0};
	int32_t *stack = xcalloc(c->n + 1, sizeof(*stack));
	size_t i;

	tw.c = c;
	git_tag_foreach(c->repo, tag_cb, &tw);
	if (tw.n) /* no tags: tw.v is NULL */
		qsort(tw.v, tw.n, sizeof(*tw.v), cmp_tag);
	c->tags = xcalloc(tw.n + 1, sizeof(*c->tags));
	for (i = 0; i < tw.n; i++) {
		char hex[RV_OID_HEXSZ + 1];
		uint32_t idx;

		c->tags[c->ntags++] = tw.v[i].name;
		git_oid_tostr(hex, sizeof(hex), &tw.v[i].oid);
		idx = cl_map_find(&c->oids, hex, RV_OID_HEXSZ);
		if (idx != UINT32_MAX)
			mark_from(c, (int32_t)idx, tw.v[i].time, (int32_t)i,
				  stack);
		else
			mark_off_head(c, &tw.v[i].oid, tw.v[i].time, (int32_t)i,
				      &seen, stack);
	}
	cl_map_release(&seen);
	free(tw.v);
	free(stack);
}

/* ---- labels ---- */

static void label_at(struct rv_classifier *c, int32_t idx, int64_t t,
		     const char *where)
{
	struct cl_commit *k;

	if (idx < 0)
		return;
	k = &c->c[idx];
	if (k->merge)
		return;
	if (t < k->time)
		t = k->time; /* a backport never predates its commit */
	if (t < k->label) {
		uint32_t w = cl_map_id(&c->wheres, where, strlen(where));

		k->label = t;
		k->label_where = c->wheres.keys[w];
	}
}

/* "[ Upstream commit ID ]" or "commit ID upstream." in a backport. */
static const char *upstream_id(const char *msg, size_t *len)
{
	const char *p;

	for (p = msg; (p = strcasestr(p, "upstream commit")); p += 15) {
		const char *q = p + 15;
		size_t h = 0;

		while (*q == ' ' || *q == '\t')
			q++;
		while (isxdigit((unsigned char)q[h]))
			h++;
		if (h >= 7) {
			*len = h;
			return q;
		}
	}
	for (p = msg; (p = strstr(p, "commit ")); p += 7) {
		const char *q = p + 7;
		size_t h = 0;

		while (isxdigit((unsigned char)q[h]))
			h++;
		if (h == 40 && !strncmp(q + h, " upstream", 9)) {
			*len = h;
			return q;
		}
	}
	return NULL;
}

const char *cl_upstream_id(const char *msg, size_t *len)
{
	return upstream_id(msg ? msg : "", len);
}

static int branch_labels(struct rv_classifier *c, struct errmsg *err)
{
	git_branch_iterator *it = NULL;
	git_reference *ref;
	git_branch_t type;
	git_oid head;

	if (git_reference_name_to_id(&head, c->repo, "HEAD") < 0 ||
	    git_branch_iterator_new(&it, c->repo, GIT_BRANCH_ALL) < 0)
		return 0;
	while (!git_branch_next(&ref, &type, it)) {
		const char *name = NULL, *shortname;
		git_revwalk *walk = NULL;
		git_oid oid;
		size_t walked = 0;

		if (git_branch_name(&name, ref) < 0 || !name) {
			git_reference_free(ref);
			continue;
		}
		shortname = name;
		if (type == GIT_BRANCH_REMOTE && strchr(name, '/'))
			shortname = strchr(name, '/') + 1;
		if (fnmatch(c->q.upstream_branches, shortname, 0) ||
		    !git_reference_target(ref) ||
		    git_revwalk_new(&walk, c->repo) < 0) {
			git_reference_free(ref);
			continue;
		}
		git_revwalk_push(walk, git_reference_target(ref));
		git_revwalk_hide(walk, &head);
		while (!git_revwalk_next(&oid, walk) && walked++ < 200000) {
			git_commit *gc = NULL;
			const char *msg, *id;
			size_t len;

			if (git_commit_lookup(&gc, c->repo, &oid) < 0)
				continue;
			msg = git_commit_message(gc);
			if (msg && strlen(msg) < RV_CL_MAX_MESSAGE &&
			    (id = upstream_id(msg, &len)))
				label_at(c, cl_resolve(c, id, len),
					 (int64_t)git_commit_time(gc),
					 shortname);
			git_commit_free(gc);
		}
		git_revwalk_free(walk);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	(void)err;
	return 0;
}

static int ids_labels(struct rv_classifier *c, struct errmsg *err)
{
	FILE *f = fopen(c->q.ids_file, "r");
	char line[256];
	size_t total = 0;

	if (!f)
		return errmsg_set(err, RV_ERR_INPUT,
				  "classify.%s.label-ids-file %s: %s",
				  c->q.name, c->q.ids_file, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		size_t h = 0;
		int32_t idx;

		total += strlen(line);
		if (total > RV_CL_MAX_IDS_FILE) {
			fclose(f);
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s.label-ids-file %s is "
					  "larger than %zu bytes",
					  c->q.name, c->q.ids_file,
					  RV_CL_MAX_IDS_FILE);
		}
		while (isxdigit((unsigned char)line[h]))
			h++;
		idx = cl_resolve(c, line, h);
		if (idx >= 0)
			label_at(c, idx, c->c[idx].time, "list");
	}
	fclose(f);
	return 0;
}

int cl_labels(struct rv_classifier *c, struct errmsg *err)
{
	size_t i;
	int ret = 0;

	if (c->q.upstream_branches)
		ret = branch_labels(c, err);
	if (!ret && c->q.ids_file)
		ret = ids_labels(c, err);
	for (i = 0; i < c->n; i++)
		c->labelled += c->c[i].label != CL_NEVER;
	return ret;
}

void cl_cache_init(struct rv_classifier *c)
{
	cache_open(c);
}
