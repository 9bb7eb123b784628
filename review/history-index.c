// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-index.c - `quorum index`: walk HEAD's history once, oldest
 * first, and store every fix/bug pair with the hunks of both, plus the
 * cheap per-commit facts the risk model learns from.
 *
 * Only fix commits and the commits they name are diffed with content;
 * every other commit costs a tree diff without content and a few object
 * header reads, which is what keeps a full index of a 7,000-commit tree
 * to a few seconds.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "history-int.h"
#include "history-parse.h"

/* ---- a small string map --------------------------------------------- */

struct smap_ent {
	char *key;
	uint64_t hash;
	int64_t a, b, c;
};

struct smap {
	struct smap_ent *e;
	size_t n, cap;
};

static void smap_release(struct smap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->e[i].key);
	free(m->e);
	memset(m, 0, sizeof(*m));
}

static struct smap_ent *smap_slot(struct smap_ent *e, size_t cap,
				  const char *key, uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);

	while (e[i].key && (e[i].hash != h || strcmp(e[i].key, key)))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

/* The entry for key; created (zeroed) when create, else NULL if absent. */
static struct smap_ent *smap_get(struct smap *m, const char *key, bool create)
{
	uint64_t h = hist_hash(key, strlen(key));
	struct smap_ent *s;

	if (!m->cap) {
		if (!create)
			return NULL;
		m->cap = 64;
		m->e = xcalloc(m->cap, sizeof(*m->e));
	}
	s = smap_slot(m->e, m->cap, key, h);
	if (s->key || !create)
		return s->key ? s : NULL;
	if ((m->n + 1) * 2 > m->cap) {
		struct smap_ent *ne = xcalloc(m->cap * 2, sizeof(*ne));
		size_t i;

		for (i = 0; i < m->cap; i++)
			if (m->e[i].key)
				*smap_slot(ne, m->cap * 2, m->e[i].key,
					   m->e[i].hash) = m->e[i];
		free(m->e);
		m->e = ne;
		m->cap *= 2;
		s = smap_slot(m->e, m->cap, key, h);
	}
	s->key = xstrdup_or_null(key);
	s->hash = h;
	m->n++;
	return s;
}

/* ---- the run -------------------------------------------------------- */

/* One shingle of one hunk's shape. */
struct posting {
	int64_t h, hunk;
};

struct indexer {
	git_repository *repo;
	git_odb *odb;
	sqlite3 *db;
	struct rv_index_stats *st;
	const struct rv_index_opts *opts;
	struct smap paths;    /* a = commits, b = fixes, c = last time */
	struct smap authors;  /* a = commits */
	struct smap subjects; /* a = seq of the latest commit so titled */
	struct smap oids;     /* hex id -> a = seq */
	struct smap subsys;   /* a = commits, b = bugs found so far */
	struct pjob *jobs;    /* pairs whose hunks are still to be read */
	size_t njobs, jobs_alloc;
	int64_t next_seq;
	char *path;	   /* of the db */
	git_revwalk *walk; /* from HEAD, hiding the tips indexed before */
	git_oid *todo;	   /* the commits to read, oldest first */
	size_t ntodo, todo_alloc;
	bool in_tx; /* the write transaction is open */
	sqlite3_stmt *ins_commit, *ins_pair, *ins_hunk, *ins_fts, *ins_unres,
		*ins_funcfix;
	struct hist_api api;	  /* calls kept in shapes */
	struct hist_risk *risk;	  /* risk features (history-risk.c) */
	struct posting *postings; /* shingle -> hunk, stored sorted */
	size_t npostings, postings_alloc;
	/* counts of this run, added to the stored ones at the end */
	int64_t n_trailers, n_by_id, n_by_subject, n_unresolved, n_ambiguous,
		n_not_commit, n_reverts;
	struct errmsg *err;
};

static int prep(struct indexer *ix, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(ix->db, sql, -1, st, NULL) != SQLITE_OK)
		return errmsg_set(ix->err, RV_ERR_INTERNAL, "history index: %s",
				  sqlite3_errmsg(ix->db));
	return 0;
}

static int step_done(struct indexer *ix, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return errmsg_set(ix->err, RV_ERR_INTERNAL,
				  "history index: cannot write: %s",
				  sqlite3_errmsg(ix->db));
	return 0;
}

static int load_state(struct indexer *ix)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if ((ret = prep(ix, &st,
			"SELECT path, commits, fixes, last_time "
			"FROM paths")))
		return ret;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct smap_ent *e = smap_get(
			&ix->paths, (const char *)sqlite3_column_text(st, 0),
			true);

		e->a = sqlite3_column_int64(st, 1);
		e->b = sqlite3_column_int64(st, 2);
		e->c = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if ((ret = prep(ix, &st, "SELECT email, commits FROM authors")))
		return ret;
	while (sqlite3_step(st) == SQLITE_ROW)
		smap_get(&ix->authors, (const char *)sqlite3_column_text(st, 0),
			 true)
			->a = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	if ((ret = prep(ix, &st, "SELECT name, commits, bugs FROM subsystems")))
		return ret;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct smap_ent *e = smap_get(
			&ix->subsys, (const char *)sqlite3_column_text(st, 0),
			true);

		e->a = sqlite3_column_int64(st, 1);
		e->b = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if ((ret = prep(ix, &st,
			"SELECT seq, oid, subject FROM commits "
			"ORDER BY seq")))
		return ret;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(st, 0);
		const char *oid = (const char *)sqlite3_column_text(st, 1);
		const char *subj = (const char *)sqlite3_column_text(st, 2);

		if (oid)
			smap_get(&ix->oids, oid, true)->a = seq;
		if (subj)
			smap_get(&ix->subjects, subj, true)->a = seq;
		if (seq >= ix->next_seq)
			ix->next_seq = seq + 1;
	}
	sqlite3_finalize(st);
	return 0;
}

static int save_state(struct indexer *ix)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int ret;

	if ((ret = hist_exec(ix->db,
			     "DELETE FROM paths; DELETE FROM authors;"
			     " DELETE FROM subsystems;",
			     ix->err)))
		return ret;
	if ((ret = prep(ix, &st, "INSERT INTO subsystems VALUES (?, ?, ?)")))
		return ret;
	for (i = 0; i < ix->subsys.cap && !ret; i++) {
		struct smap_ent *e = &ix->subsys.e[i];

		if (!e->key)
			continue;
		sqlite3_bind_text(st, 1, e->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, e->a);
		sqlite3_bind_int64(st, 3, e->b);
		ret = step_done(ix, st);
	}
	sqlite3_finalize(st);
	if (ret)
		return ret;
	if ((ret = prep(ix, &st, "INSERT INTO paths VALUES (?, ?, ?, ?)")))
		return ret;
	for (i = 0; i < ix->paths.cap && !ret; i++) {
		struct smap_ent *e = &ix->paths.e[i];

		if (!e->key)
			continue;
		sqlite3_bind_text(st, 1, e->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, e->a);
		sqlite3_bind_int64(st, 3, e->b);
		sqlite3_bind_int64(st, 4, e->c);
		ret = step_done(ix, st);
	}
	sqlite3_finalize(st);
	if (ret || (ret = prep(ix, &st, "INSERT INTO authors VALUES (?, ?)")))
		return ret;
	for (i = 0; i < ix->authors.cap && !ret; i++) {
		struct smap_ent *e = &ix->authors.e[i];

		if (!e->key)
			continue;
		sqlite3_bind_text(st, 1, e->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, e->a);
		ret = step_done(ix, st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* ---- which files a commit touches, without reading them ------------ */

struct tchange {
	char *path;
	git_oid old_id, new_id; /* zero when absent */
	bool added, deleted;
};

struct tchanges {
	struct tchange *v;
	size_t n, alloc;
};

static void tchanges_release(struct tchanges *tc)
{
	size_t i;

	for (i = 0; i < tc->n; i++)
		free(tc->v[i].path);
	free(tc->v);
	memset(tc, 0, sizeof(*tc));
}

/* A cap on the files one commit may list (a hostile giant commit). */
#define HIST_MAX_CHANGES 20000

static void tchange_add(struct tchanges *tc, struct sb *prefix,
			const char *name, const git_oid *o, const git_oid *n)
{
	struct tchange *c;

	if (tc->n >= HIST_MAX_CHANGES)
		return;
	ALLOC_GROW(tc->v, tc->n + 1, tc->alloc);
	c = &tc->v[tc->n++];
	memset(c, 0, sizeof(*c));
	c->path = xmalloc(prefix->len + strlen(name) + 1);
	memcpy(c->path, sb_str(prefix), prefix->len);
	strcpy(c->path + prefix->len, name);
	if (o)
		c->old_id = *o;
	if (n)
		c->new_id = *n;
	c->added = !o;
	c->deleted = !n;
}

static int tree_diff(git_repository *repo, const git_tree *a, const git_tree *b,
		     struct sb *prefix, struct tchanges *tc, int depth);

/* One side of an entry pair: recurse into trees, list blobs. */
static int entry_diff(git_repository *repo, const git_tree_entry *ea,
		      const git_tree_entry *eb, struct sb *prefix,
		      struct tchanges *tc, int depth)
{
	bool ta = ea && git_tree_entry_type(ea) == GIT_OBJECT_TREE;
	bool tb = eb && git_tree_entry_type(eb) == GIT_OBJECT_TREE;
	const char *name = git_tree_entry_name(ea ? ea : eb);
	git_tree *sa = NULL, *sb_ = NULL;
	size_t plen = prefix->len;
	int ret = 0;

	if (ea && eb &&
	    git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
	    ta == tb)
		return 0;
	if (ta || tb) {
		if ((ta &&
		     git_tree_lookup(&sa, repo, git_tree_entry_id(ea)) < 0) ||
		    (tb &&
		     git_tree_lookup(&sb_, repo, git_tree_entry_id(eb)) < 0)) {
			ret = RV_ERR_REPO;
			goto out;
		}
		sb_adds(prefix, name);
		sb_addch(prefix, '/');
		ret = tree_diff(repo, sa, sb_, prefix, tc, depth + 1);
		sb_setlen(prefix, plen);
	}
	/* The blob side(s) that are not trees. */
	if (ea && !ta && eb && !tb)
		tchange_add(tc, prefix, name, git_tree_entry_id(ea),
			    git_tree_entry_id(eb));
	else if (ea && !ta)
		tchange_add(tc, prefix, name, git_tree_entry_id(ea), NULL);
	else if (eb && !tb)
		tchange_add(tc, prefix, name, NULL, git_tree_entry_id(eb));
out:
	git_tree_free(sa);
	git_tree_free(sb_);
	return ret;
}

/*
 * The blobs that differ between trees a and b (either may be NULL),
 * descending only into subtrees whose ids differ: no blob is read.
 */
static int tree_diff(git_repository *repo, const git_tree *a, const git_tree *b,
		     struct sb *prefix, struct tchanges *tc, int depth)
{
	size_t i, n;
	int ret = 0;

	if (depth > 64)
		return RV_ERR_REPO; /* a hostile tree nested without end */
	n = b ? git_tree_entrycount(b) : 0;
	for (i = 0; i < n && !ret; i++) {
		const git_tree_entry *eb = git_tree_entry_byindex(b, i);
		const git_tree_entry *ea =
			a ? git_tree_entry_byname(a, git_tree_entry_name(eb))
			  : NULL;

		ret = entry_diff(repo, ea, eb, prefix, tc, depth);
	}
	n = a ? git_tree_entrycount(a) : 0;
	for (i = 0; i < n && !ret; i++) {
		const git_tree_entry *ea = git_tree_entry_byindex(a, i);

		if (b && git_tree_entry_byname(b, git_tree_entry_name(ea)))
			continue;
		ret = entry_diff(repo, ea, NULL, prefix, tc, depth);
	}
	return ret;
}

/* The files commit c changes against its first parent. */
static int commit_changes(git_repository *repo, git_commit *c,
			  struct tchanges *tc)
{
	git_commit *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	struct sb prefix = SB_INIT;
	int ret = RV_ERR_REPO;

	if (git_commit_tree(&tree, c) < 0)
		goto out;
	if (git_commit_parentcount(c) &&
	    (git_commit_parent(&parent, c, 0) < 0 ||
	     git_commit_tree(&ptree, parent) < 0))
		goto out;
	ret = tree_diff(repo, ptree, tree, &prefix, tc, 0);
out:
	sb_release(&prefix);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	return ret;
}

static bool path_wanted(const char *path, char **paths, size_t npaths)
{
	size_t i;

	for (i = 0; i < npaths; i++)
		if (!strcmp(paths[i], path))
			return true;
	return false;
}

/* ---- hunks of a commit ---------------------------------------------- */

struct hhunk {
	char *file;
	char *func;
	struct sb plus, minus, ctx; /* lines, each ending in '\n' */
	size_t nplus, nminus, nctx;
	struct sb ordered; /* the hunk in order, each line with its origin */
	size_t nordered;
};

struct hhunks {
	struct hhunk *v;
	size_t n, alloc;
};

static void hhunks_release(struct hhunks *hs)
{
	size_t i;

	for (i = 0; i < hs->n; i++) {
		free(hs->v[i].file);
		free(hs->v[i].func);
		sb_release(&hs->v[i].plus);
		sb_release(&hs->v[i].minus);
		sb_release(&hs->v[i].ctx);
		sb_release(&hs->v[i].ordered);
	}
	free(hs->v);
	memset(hs, 0, sizeof(*hs));
}

static void add_line(struct sb *sb, size_t *n, const char *s, size_t len,
		     size_t max)
{
	if (*n >= max)
		return;
	if (len && s[len - 1] == '\n')
		len--;
	if (len > HIST_MAX_LINE)
		len = HIST_MAX_LINE;
	/* A NUL in a line would cut it short later; keep the part before. */
	len = strnlen(s, len);
	sb_add(sb, s, len);
	sb_addch(sb, '\n');
	(*n)++;
}

/* Append the hunks of one patch to out. */
static void patch_hunks(git_patch *patch, const char *file, size_t max_lines,
			struct hhunks *out)
{
	size_t h, nh = git_patch_num_hunks(patch);

	for (h = 0; h < nh && out->n < HIST_MAX_HUNKS_PER_PAIR * 4; h++) {
		const git_diff_hunk *gh;
		struct hhunk *hk;
		const char *sec;
		size_t l, nl;

		if (git_patch_get_hunk(&gh, &nl, patch, h) < 0)
			continue;
		ALLOC_GROW(out->v, out->n + 1, out->alloc);
		hk = &out->v[out->n++];
		memset(hk, 0, sizeof(*hk));
		hk->file = xstrdup_or_null(file);
		/* "@@ -a,b +c,d @@ section" */
		sec = strstr(gh->header + 2, "@@");
		if (sec && hist_path_has_functions(file))
			hk->func = hist_function_name(sec + 2);
		for (l = 0; l < nl; l++) {
			const git_diff_line *gl;

			if (git_patch_get_line_in_hunk(&gl, patch, h, l) < 0)
				continue;
			if ((gl->origin == '+' || gl->origin == '-' ||
			     gl->origin == ' ') &&
			    hk->nordered < 3 * max_lines) {
				sb_addch(&hk->ordered, gl->origin);
				add_line(&hk->ordered, &hk->nordered,
					 gl->content, gl->content_len,
					 SIZE_MAX);
			}
			if (gl->origin == '+')
				add_line(&hk->plus, &hk->nplus, gl->content,
					 gl->content_len, max_lines);
			else if (gl->origin == '-')
				add_line(&hk->minus, &hk->nminus, gl->content,
					 gl->content_len, max_lines);
			else if (gl->origin == ' ')
				add_line(&hk->ctx, &hk->nctx, gl->content,
					 gl->content_len, max_lines);
		}
	}
}

/*
 * The hunks of commit c against its first parent, in the given paths
 * only (NULL: all), with at most max_lines lines kept of each side.
 * Blobs are diffed directly: no index, no pathspec machinery.
 */
static int commit_hunks(git_repository *repo, git_commit *c, char **paths,
			size_t npaths, size_t max_lines, struct hhunks *out)
{
	git_diff_options dopts;
	struct tchanges tc = {0};
	size_t i, done = 0;

	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.context_lines = 3;
	if (commit_changes(repo, c, &tc) < 0) {
		tchanges_release(&tc);
		return RV_ERR_REPO;
	}
	for (i = 0; i < tc.n && done < HIST_MAX_FILES_PER_PAIR; i++) {
		const struct tchange *ch = &tc.v[i];
		git_blob *ob = NULL, *nb = NULL;
		git_patch *patch = NULL;

		if (paths && !path_wanted(ch->path, paths, npaths))
			continue;
		if ((!ch->added &&
		     git_blob_lookup(&ob, repo, &ch->old_id) < 0) ||
		    (!ch->deleted &&
		     git_blob_lookup(&nb, repo, &ch->new_id) < 0))
			goto next; /* a submodule or a missing object */
		if ((ob && git_blob_is_binary(ob)) ||
		    (nb && git_blob_is_binary(nb)))
			goto next;
		done++;
		if (git_patch_from_blobs(&patch, ob, ch->path, nb, ch->path,
					 &dopts) == 0 &&
		    patch)
			patch_hunks(patch, ch->path, max_lines, out);
	next:
		git_patch_free(patch);
		git_blob_free(ob);
		git_blob_free(nb);
	}
	tchanges_release(&tc);
	return 0;
}

/* Hashes of the normalized significant lines of text, sorted. */
struct hset {
	uint64_t *v;
	size_t n, alloc;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void hset_add_lines(struct hset *hs, const char *text)
{
	struct sb norm = SB_INIT;
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		hist_normalize(p, len, &norm);
		if (hist_line_significant(sb_str(&norm))) {
			ALLOC_GROW(hs->v, hs->n + 1, hs->alloc);
			hs->v[hs->n++] = hist_hash(norm.buf, norm.len);
		}
		p = nl ? nl + 1 : NULL;
	}
	sb_release(&norm);
}

static bool hset_has(const struct hset *hs, uint64_t h)
{
	return hs->n && bsearch(&h, hs->v, hs->n, sizeof(h), cmp_u64);
}

/*
 * Of a bug commit's added lines, the ones worth keeping: all of a small
 * hunk; of a big one (a new file, an initial import) only windows around
 * lines the fix removed or kept as context, so the index holds the buggy
 * code and not whole files.
 */
static void select_bug_lines(const char *plus, size_t nplus,
			     const struct hset *fixlines, struct sb *out,
			     size_t *nout)
{
	struct sb norm = SB_INIT;
	const char **starts;
	size_t *lens, i, n = 0, j;
	bool *keep;
	const char *p = plus;

	starts = xcalloc(nplus + 1, sizeof(*starts));
	lens = xcalloc(nplus + 1, sizeof(*lens));
	keep = xcalloc(nplus + 1, sizeof(*keep));
	while (p && *p && n < nplus) {
		const char *nl = strchr(p, '\n');

		starts[n] = p;
		lens[n] = nl ? (size_t)(nl - p) : strlen(p);
		n++;
		p = nl ? nl + 1 : NULL;
	}
	for (i = 0; i < n; i++) {
		hist_normalize(starts[i], lens[i], &norm);
		if (!hist_line_significant(sb_str(&norm)) ||
		    !hset_has(fixlines, hist_hash(norm.buf, norm.len)))
			continue;
		for (j = i > 5 ? i - 5 : 0; j < n && j <= i + 5; j++)
			keep[j] = true;
	}
	*nout = 0;
	for (i = 0; i < n && *nout < HIST_MAX_HUNK_LINES; i++) {
		if (!keep[i] && n > HIST_MAX_HUNK_LINES / 2)
			continue;
		sb_add(out, starts[i], lens[i]);
		sb_addch(out, '\n');
		(*nout)++;
	}
	free(starts);
	free(lens);
	free(keep);
	sb_release(&norm);
}

/* The winnowed shingles of a hunk's buggy code, to store with its id. */
static size_t shape_postings(struct indexer *ix, const char *shape_of,
			     uint64_t **sh)
{
	struct hist_shape shape = {0};
	size_t n;

	*sh = NULL;
	if (!shape_of || !*shape_of)
		return 0;
	hist_shape_lex(shape_of, strlen(shape_of), &ix->api, &shape,
		       HIST_SHAPE_MAX_TOKENS);
	n = hist_shape_shingles(&shape, true, sh);
	hist_shape_release(&shape);
	return n;
}

static int store_hunk(struct indexer *ix, int64_t pair, int role,
		      const char *file, const char *func, const char *lines,
		      const char *token_text, const char *shape_of)
{
	struct sb tok = SB_INIT;
	uint64_t *sh = NULL;
	size_t nsh, i;
	int64_t id;
	int ret;

	hist_tokens(token_text, &tok, 400);
	nsh = shape_postings(ix, shape_of, &sh);
	if (!tok.len && !nsh) {
		sb_release(&tok);
		return 0;
	}
	sqlite3_bind_int64(ix->ins_hunk, 1, pair);
	sqlite3_bind_int(ix->ins_hunk, 2, role);
	sqlite3_bind_text(ix->ins_hunk, 3, file, -1, SQLITE_STATIC);
	if (func)
		sqlite3_bind_text(ix->ins_hunk, 4, func, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_hunk, 5, lines, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ix->ins_hunk, 6, (int64_t)nsh);
	ret = step_done(ix, ix->ins_hunk);
	id = sqlite3_last_insert_rowid(ix->db);
	if (!ret && tok.len) {
		sqlite3_bind_int64(ix->ins_fts, 1, id);
		sqlite3_bind_text(ix->ins_fts, 2, sb_str(&tok), -1,
				  SQLITE_STATIC);
		ret = step_done(ix, ix->ins_fts);
	}
	for (i = 0; !ret && i < nsh; i++) {
		ALLOC_GROW(ix->postings, ix->npostings + 1, ix->postings_alloc);
		ix->postings[ix->npostings].h = (int64_t)sh[i];
		ix->postings[ix->npostings].hunk = id;
		ix->npostings++;
	}
	free(sh);
	sb_release(&tok);
	return ret;
}

/* The first lines of a message's body: the fix's own explanation. */
static char *explanation(const char *msg)
{
	const char *p = strchr(msg, '\n');
	struct sb out = SB_INIT;
	size_t lines = 0;

	if (!p)
		return xstrdup_or_null("");
	while (*p == '\n')
		p++;
	while (*p && lines < 4 && out.len < HIST_MAX_EXPL) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (!len || hist_is_trailer_line(p, len))
			break;
		if (out.len)
			sb_addch(&out, ' ');
		sb_add(&out, p, len > HIST_MAX_EXPL ? HIST_MAX_EXPL : len);
		lines++;
		p = nl ? nl + 1 : p + len;
	}
	if (!out.len)
		return xstrdup_or_null("");
	hist_sanitize(out.buf);
	return sb_detach(&out, NULL);
}

/*
 * A pair whose hunks are still to be read. The walk records the pair row
 * at once (so later commits see it) and leaves the diffs, the costly
 * part, to hunk_worker() threads after the walk.
 */
struct hrow {
	int role; /* 0: the bug commit's hunk, 1: the fix's */
	char *file, *func, *lines, *tokens_of;
	char *shape_of; /* the buggy code, in order, for its shape */
};

struct pjob {
	int64_t pair, fix_seq;
	git_oid fix, bug;
	struct hrow *rows;
	size_t nrows, alloc;
};

static void pjob_add_row(struct pjob *j, int role, const char *file,
			 const char *func, struct sb *lines, const char *tok,
			 struct sb *shape_of)
{
	struct hrow *r;

	ALLOC_GROW(j->rows, j->nrows + 1, j->alloc);
	r = &j->rows[j->nrows++];
	r->role = role;
	r->file = xstrdup_or_null(file);
	r->func = xstrdup_or_null(func);
	r->lines = sb_detach(lines, NULL);
	r->tokens_of = xstrdup_or_null(tok);
	r->shape_of = sb_detach(shape_of, NULL);
}

static void pjob_release(struct pjob *j)
{
	size_t i;

	for (i = 0; i < j->nrows; i++) {
		free(j->rows[i].file);
		free(j->rows[i].func);
		free(j->rows[i].lines);
		free(j->rows[i].tokens_of);
		free(j->rows[i].shape_of);
	}
	free(j->rows);
	j->rows = NULL;
	j->nrows = j->alloc = 0;
}

/* Append each line of text to out with a one-character prefix. */
static void prefix_lines(struct sb *out, char origin, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);

		sb_addch(out, origin);
		sb_add(out, p, n);
		p += n;
	}
}

/* The lines of an ordered hunk whose origin is in want, without it. */
static void lines_of(const char *ordered, const char *want, struct sb *out)
{
	const char *p = ordered;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (strchr(want, *p))
			sb_add(out, p + 1, n - 1);
		p += n;
	}
}

/* Read the hunks of a pair's fix and bug commits (thread-safe: own repo). */
static void extract_hunks(git_repository *repo, struct pjob *j)
{
	struct hhunks fh = {0}, bh = {0};
	struct hset fixlines = {0};
	git_commit *fix = NULL, *bug = NULL;
	char **paths = NULL;
	size_t npaths = 0, i, k, stored = 0;

	if (git_commit_lookup(&fix, repo, &j->fix) < 0 ||
	    git_commit_lookup(&bug, repo, &j->bug) < 0)
		goto out;
	if (commit_hunks(repo, fix, NULL, 0, HIST_MAX_HUNK_LINES, &fh) < 0)
		goto out;
	for (i = 0; i < fh.n; i++) {
		struct hhunk *h = &fh.v[i];
		struct sb lines = SB_INIT, pre = SB_INIT;

		hset_add_lines(&fixlines, sb_str(&h->minus));
		hset_add_lines(&fixlines, sb_str(&h->ctx));
		for (k = 0; k < npaths; k++)
			if (!strcmp(paths[k], h->file))
				break;
		if (k == npaths && npaths < HIST_MAX_FILES_PER_PAIR) {
			paths = xrealloc(paths, (npaths + 1) * sizeof(*paths));
			paths[npaths++] = h->file;
		}
		if (stored >= HIST_MAX_HUNKS_PER_PAIR)
			continue;
		/*
		 * The fix's own hunk, in order: its '-' lines are the buggy
		 * code, and with the context they are the code's shape.
		 */
		sb_add(&lines, sb_str(&h->ordered), h->ordered.len);
		lines_of(sb_str(&h->ordered), " -", &pre);
		pjob_add_row(j, 1, h->file, h->func, &lines,
			     h->nminus ? sb_str(&h->minus) : sb_str(&h->ctx),
			     &pre);
		sb_release(&lines);
		sb_release(&pre);
		stored++;
	}
	if (!npaths)
		goto out;
	if (fixlines.n)
		qsort(fixlines.v, fixlines.n, sizeof(*fixlines.v), cmp_u64);
	/* The bug commit's hunks in the files the fix touched. */
	if (commit_hunks(repo, bug, paths, npaths, 4000, &bh) < 0)
		goto out;
	stored = 0;
	for (i = 0; i < bh.n && stored < HIST_MAX_HUNKS_PER_PAIR; i++) {
		struct hhunk *h = &bh.v[i];
		struct sb kept = SB_INIT, lines = SB_INIT;
		size_t nkept = 0;

		select_bug_lines(sb_str(&h->plus), h->nplus, &fixlines, &kept,
				 &nkept);
		if (nkept) {
			struct sb shape = SB_INIT;

			prefix_lines(&lines, '+', sb_str(&kept));
			sb_add(&shape, sb_str(&kept), kept.len);
			pjob_add_row(j, 0, h->file, h->func, &lines,
				     sb_str(&kept), &shape);
			stored++;
		}
		sb_release(&kept);
		sb_release(&lines);
	}
out:
	free(paths);
	free(fixlines.v);
	hhunks_release(&fh);
	hhunks_release(&bh);
	git_commit_free(fix);
	git_commit_free(bug);
}

/* Record the pair fix -> bug now; its hunks are read after the walk. */
static int store_pair(struct indexer *ix, git_commit *fix, int64_t fix_seq,
		      const git_oid *bug_oid, const char *kind, const char *how)
{
	git_commit *bug = NULL;
	char bug_hex[GIT_OID_HEXSZ + 1], fix_hex[GIT_OID_HEXSZ + 1];
	char name[48];
	struct smap_ent *be;
	struct pjob *j;
	char *expl = NULL, *fix_subj = NULL, *bug_subj = NULL;
	int ret = 0;

	git_oid_tostr(bug_hex, sizeof(bug_hex), bug_oid);
	git_oid_tostr(fix_hex, sizeof(fix_hex), git_commit_id(fix));
	if (git_commit_lookup(&bug, ix->repo, bug_oid) < 0)
		return 0;
	be = smap_get(&ix->oids, bug_hex, false);
	expl = explanation(git_commit_message(fix) ? git_commit_message(fix)
						   : "");
	sqlite3_bind_text(ix->ins_pair, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_pair, 2, how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ix->ins_pair, 3, fix_seq);
	sqlite3_bind_text(ix->ins_pair, 4, fix_hex, -1, SQLITE_STATIC);
	fix_subj = xstrdup_or_null(
		git_commit_summary(fix) ? git_commit_summary(fix) : "");
	bug_subj = xstrdup_or_null(
		git_commit_summary(bug) ? git_commit_summary(bug) : "");
	hist_sanitize(fix_subj);
	hist_sanitize(bug_subj);
	sqlite3_bind_text(ix->ins_pair, 5, fix_subj, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_pair, 6, expl, -1, SQLITE_STATIC);
	if (be)
		sqlite3_bind_int64(ix->ins_pair, 7, be->a);
	sqlite3_bind_text(ix->ins_pair, 8, bug_hex, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_pair, 9, bug_subj, -1, SQLITE_STATIC);
	if ((ret = step_done(ix, ix->ins_pair)))
		goto out;
	if (be)
		hist_risk_label(ix->risk, fix_seq, be->a);
	/* Known from now on: this subsystem had one more bug. */
	hist_subsystem(git_commit_summary(bug) ? git_commit_summary(bug) : "",
		       name, sizeof(name));
	smap_get(&ix->subsys, name, true)->b++;
	ALLOC_GROW(ix->jobs, ix->njobs + 1, ix->jobs_alloc);
	j = &ix->jobs[ix->njobs++];
	memset(j, 0, sizeof(*j));
	j->pair = sqlite3_last_insert_rowid(ix->db);
	j->fix_seq = fix_seq;
	j->fix = *git_commit_id(fix);
	j->bug = *bug_oid;
out:
	free(expl);
	free(fix_subj);
	free(bug_subj);
	git_commit_free(bug);
	return ret;
}

struct hworker {
	const char *gitdir;
	struct pjob *jobs;
	size_t njobs, first, step;
	int ret;
};

static void *hunk_worker(void *arg)
{
	struct hworker *w = arg;
	git_repository *repo = NULL;
	size_t i;

	if (git_repository_open(&repo, w->gitdir) < 0) {
		w->ret = RV_ERR_REPO;
		return NULL;
	}
	for (i = w->first; i < w->njobs; i += w->step)
		extract_hunks(repo, &w->jobs[i]);
	git_repository_free(repo);
	return NULL;
}

/*
 * The tree's API prefixes, learned from the first run's hunks and kept
 * after: a shape must mean the same thing in every run. --rebuild
 * learns them anew.
 */
static int learn_api(struct indexer *ix)
{
	struct hist_api_counts c = {0};
	struct sb text = SB_INIT;
	size_t i, k;
	int ret;

	if (hist_meta_text(ix->db, "api", &text)) {
		hist_api_parse(sb_str(&text), &ix->api);
		sb_release(&text);
		return 0;
	}
	if (!ix->njobs)
		return 0; /* nothing to learn from yet: learn next time */
	for (i = 0; i < ix->njobs; i++)
		for (k = 0; k < ix->jobs[i].nrows; k++)
			hist_api_count(&c, ix->jobs[i].rows[k].shape_of,
				       ix->jobs[i].rows[k].file);
	hist_api_choose(&c, &ix->api);
	hist_api_counts_release(&c);
	hist_api_format(&ix->api, &text);
	ret = hist_meta_set_text(ix->db, "api", sb_str(&text));
	sb_release(&text);
	if (ret)
		return errmsg_set(ix->err, RV_ERR_INTERNAL,
				  "history index: cannot store the API "
				  "prefixes: %s",
				  sqlite3_errmsg(ix->db));
	return 0;
}

static int cmp_posting(const void *a, const void *b)
{
	const struct posting *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->hunk < y->hunk ? -1 : x->hunk > y->hunk;
}

/* In key order: appends to the b-tree instead of splitting it at random. */
static int store_postings(struct indexer *ix)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int ret;

	if (!ix->npostings)
		return 0;
	qsort(ix->postings, ix->npostings, sizeof(*ix->postings), cmp_posting);
	if ((ret = prep(ix, &st,
			"INSERT OR IGNORE INTO shapes(h, hunk_id)"
			" VALUES (?, ?)")))
		return ret;
	for (i = 0; i < ix->npostings && !ret; i++) {
		sqlite3_bind_int64(st, 1, ix->postings[i].h);
		sqlite3_bind_int64(st, 2, ix->postings[i].hunk);
		ret = step_done(ix, st);
	}
	sqlite3_finalize(st);
	free(ix->postings);
	ix->postings = NULL;
	ix->npostings = ix->postings_alloc = 0;
	return ret;
}

/* How many threads read the pairs' diffs (the walk itself is one). */
#define HIST_HUNK_THREADS 2

/* Read every pending pair's hunks, in parallel, then store them in order. */
static int store_hunks(struct indexer *ix)
{
	struct hworker w[HIST_HUNK_THREADS];
	pthread_t tid[HIST_HUNK_THREADS];
	bool started[HIST_HUNK_THREADS] = {false};
	size_t i, k;
	int ret = 0;

	for (i = 0; i < HIST_HUNK_THREADS; i++) {
		w[i].gitdir = git_repository_path(ix->repo);
		w[i].jobs = ix->jobs;
		w[i].njobs = ix->njobs;
		w[i].first = i;
		w[i].step = HIST_HUNK_THREADS;
		w[i].ret = 0;
		if (i && ix->njobs > 1)
			started[i] = pthread_create(&tid[i], NULL, hunk_worker,
						    &w[i]) == 0;
	}
	/* This thread does its share, and any share a thread could not. */
	for (i = 0; i < HIST_HUNK_THREADS; i++)
		if (!i || !started[i])
			hunk_worker(&w[i]);
	for (i = 1; i < HIST_HUNK_THREADS; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	for (i = 0; i < HIST_HUNK_THREADS; i++)
		if (w[i].ret)
			return errmsg_set(
				ix->err, RV_ERR_REPO,
				"cannot reopen the repository to read "
				"the fixes' diffs");
	if ((ret = learn_api(ix)))
		return ret;
	for (i = 0; i < ix->njobs && !ret; i++) {
		struct pjob *j = &ix->jobs[i];

		for (k = 0; k < j->nrows && !ret; k++) {
			struct hrow *r = &j->rows[k];

			ret = store_hunk(ix, j->pair, r->role, r->file, r->func,
					 r->lines, r->tokens_of, r->shape_of);
			if (!ret && r->role == 1 && r->func) {
				sqlite3_bind_text(ix->ins_funcfix, 1, r->file,
						  -1, SQLITE_STATIC);
				sqlite3_bind_text(ix->ins_funcfix, 2, r->func,
						  -1, SQLITE_STATIC);
				sqlite3_bind_int64(ix->ins_funcfix, 3,
						   j->fix_seq);
				ret = step_done(ix, ix->ins_funcfix);
			}
		}
		pjob_release(j);
	}
	return ret ? ret : store_postings(ix);
}

static int note_unresolved(struct indexer *ix, const char *fix_hex,
			   const struct hist_ref *r, const char *reason)
{
	sqlite3_bind_text(ix->ins_unres, 1, fix_hex, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_unres, 2, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_unres, 3, r->subject, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_unres, 4, reason, -1, SQLITE_STATIC);
	return step_done(ix, ix->ins_unres);
}

/*
 * Resolve one reference the way the kernel's git-resolve does: the id
 * first, then the quoted subject among the commits before the fix.
 */
static int resolve_ref(struct indexer *ix, git_commit *fix, int64_t fix_seq,
		       const struct hist_ref *r)
{
	char fix_hex[GIT_OID_HEXSZ + 1];
	const char *why = "no commit has this id or subject";
	git_object *obj = NULL;
	struct smap_ent *se;
	size_t idlen = strlen(r->id);
	git_oid oid;
	int rc;

	git_oid_tostr(fix_hex, sizeof(fix_hex), git_commit_id(fix));
	if (!r->is_revert)
		ix->n_trailers++;
	if (idlen && git_oid_fromstrn(&oid, r->id, idlen) == 0) {
		rc = git_object_lookup_prefix(&obj, ix->repo, &oid, idlen,
					      GIT_OBJECT_COMMIT);
		if (rc == 0) {
			git_oid found = *git_object_id(obj);

			git_object_free(obj);
			if (r->is_revert)
				ix->n_reverts++;
			else
				ix->n_by_id++;
			return store_pair(ix, fix, fix_seq, &found,
					  r->is_revert ? "revert" : "fixes",
					  "id");
		}
		if (rc == GIT_EAMBIGUOUS) {
			ix->n_ambiguous++;
			why = "the id is ambiguous and no commit has this "
			      "subject";
		}
	}
	if (r->subject && *r->subject &&
	    (se = smap_get(&ix->subjects, r->subject, false))) {
		sqlite3_stmt *st = NULL;
		int ret = 0;

		if (prep(ix, &st, "SELECT oid FROM commits WHERE seq = ?"))
			return RV_ERR_INTERNAL;
		sqlite3_bind_int64(st, 1, se->a);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    git_oid_fromstr(&oid, (const char *)sqlite3_column_text(
						  st, 0)) == 0) {
			if (r->is_revert)
				ix->n_reverts++;
			else
				ix->n_by_subject++;
			ret = store_pair(ix, fix, fix_seq, &oid,
					 r->is_revert ? "revert" : "fixes",
					 "subject");
			sqlite3_finalize(st);
			return ret;
		}
		sqlite3_finalize(st);
	}
	if (r->is_revert)
		return 0; /* a revert of something we do not have: not a Fixes:
			   */
	ix->n_unresolved++;
	return note_unresolved(ix, fix_hex, r, why);
}

/* ---- renames -------------------------------------------------------- */

/* Blob pairs read to find renames by content, per commit. */
#define RENAME_MAX_READS 256
/* Added and deleted files compared pairwise when no name matches. */
#define RENAME_MAX_PAIRS 64
/* Larger blobs are not compared (generated tables, data). */
#define RENAME_MAX_BLOB ((size_t)1 << 20)
/* Bytes of blobs read to find renames by content, per commit. */
#define RENAME_MAX_BYTES ((size_t)32 << 20)

/* A deleted file of the commit, for finding the file it became. */
struct rsrc {
	const struct tchange *c;
	const char *base;
	size_t idx;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int rsrc_id(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct rsrc *)a)->c->old_id,
			   &((const struct rsrc *)b)->c->old_id);
}

static int rsrc_base(const void *a, const void *b)
{
	return strcmp(((const struct rsrc *)a)->base,
		      ((const struct rsrc *)b)->base);
}

/* Sorted by key, then by place in the commit: the order is the same on
 * every machine, whatever qsort does with ties. */
static int rsrc_by_id(const void *a, const void *b)
{
	const struct rsrc *x = a, *y = b;
	int c = rsrc_id(a, b);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int rsrc_by_base(const void *a, const void *b)
{
	const struct rsrc *x = a, *y = b;
	int c = rsrc_base(a, b);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * The hashes of a blob's lines, sorted; 0 lines when it is not text, is
 * too big, or the commit's budget of bytes to read is spent.
 */
static size_t blob_lines(git_repository *repo, const git_oid *id,
			 size_t *budget, uint64_t **out)
{
	git_blob *b = NULL;
	const char *p, *end, *nl;
	size_t n = 0, alloc = 0, size;

	*out = NULL;
	if (!*budget || git_blob_lookup(&b, repo, id) < 0)
		return 0;
	size = (size_t)git_blob_rawsize(b);
	*budget -= size < *budget ? size : *budget;
	if (size > RENAME_MAX_BLOB || git_blob_is_binary(b))
		goto out;
	p = git_blob_rawcontent(b);
	end = p + git_blob_rawsize(b);
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n++] = hist_hash(p, (size_t)(nl - p));
	}
	qsort(*out, n, sizeof(**out), cmp_u64);
out:
	git_blob_free(b);
	return n;
}

/*
 * The share of the longer blob's lines the two have in common (0 to 1),
 * counting a line as often as both have it; -1 when either is not text.
 */
static double blobs_alike(git_repository *repo, const git_oid *a,
			  const git_oid *b, size_t *budget)
{
	uint64_t *x, *y;
	size_t nx = blob_lines(repo, a, budget, &x);
	size_t ny = blob_lines(repo, b, budget, &y);
	size_t i = 0, j = 0, common = 0;

	while (i < nx && j < ny) {
		if (x[i] < y[j])
			i++;
		else if (x[i] > y[j])
			j++;
		else
			common++, i++, j++;
	}
	free(x);
	free(y);
	return nx && ny ? (double)common / (double)(nx > ny ? nx : ny) : -1;
}

/*
 * The changes the risk model counts, into rc (tc->n + 1 of them); their
 * number. A file the commit moves is one change, from the old blob to
 * the new, as `git format-patch` shows it: a patch on a list says
 * "rename from" and its diff holds only the lines that changed. Without
 * this, moving a directory read as adding all of it, and the model
 * learned from commits no patch looks like. A rename is found as git
 * finds one: identical content first, then the one deleted file of the
 * same name, then any deleted file, with at least half the lines alike.
 */
static size_t risk_changes(git_repository *repo, const struct tchanges *tc,
			   struct hist_risk_change *rc)
{
	struct rsrc *src = xcalloc(tc->n + 1, sizeof(*src));
	struct rsrc *bybase = xcalloc(tc->n + 1, sizeof(*bybase));
	ssize_t *from = xcalloc(tc->n + 1, sizeof(*from));
	bool *taken = xcalloc(tc->n + 1, sizeof(*taken));
	size_t *run = xcalloc(tc->n + 1, sizeof(*run));
	size_t *cur = xcalloc(tc->n + 1, sizeof(*cur));
	size_t i, j, n = 0, ns = 0, nadd = 0, reads = 0, left;
	size_t budget = RENAME_MAX_BYTES;

	for (i = 0; i < tc->n; i++) {
		from[i] = -1;
		nadd += tc->v[i].added;
		if (tc->v[i].deleted) {
			src[ns].c = &tc->v[i];
			src[ns].base = base_name(tc->v[i].path);
			src[ns++].idx = i;
		}
	}
	if (!nadd || !ns)
		goto list;
	memcpy(bybase, src, ns * sizeof(*src));
	qsort(src, ns, sizeof(*src), rsrc_by_id);
	qsort(bybase, ns, sizeof(*bybase), rsrc_by_base);
	/*
	 * The same content: the first deleted file of it not yet taken.
	 * Each run of equal ids keeps a cursor at its start, so a commit of
	 * thousands of identical files pairs them in one pass.
	 */
	for (j = 0; j < ns; j++) {
		run[j] = j && !rsrc_id(&src[j - 1], &src[j]) ? run[j - 1] : j;
		cur[j] = j;
	}
	for (i = 0; i < tc->n; i++) {
		struct tchange probe;
		struct rsrc key = {&probe, NULL, 0}, *hit;
		size_t start;

		if (!tc->v[i].added)
			continue;
		probe.old_id = tc->v[i].new_id;
		hit = bsearch(&key, src, ns, sizeof(*src), rsrc_id);
		if (!hit)
			continue;
		start = run[hit - src];
		if (cur[start] < ns && !rsrc_id(&src[cur[start]], &key)) {
			taken[src[cur[start]].idx] = true;
			from[i] = (ssize_t)src[cur[start]].idx;
			cur[start]++;
		}
	}
	/* The one deleted file of the same name, if alike enough. */
	for (i = 0; i < tc->n && reads < RENAME_MAX_READS; i++) {
		struct rsrc key = {NULL, base_name(tc->v[i].path), 0}, *hit;

		if (!tc->v[i].added || from[i] >= 0)
			continue;
		hit = bsearch(&key, bybase, ns, sizeof(*bybase), rsrc_base);
		if (!hit || taken[hit->idx] ||
		    (hit > bybase && !rsrc_base(&hit[-1], &key)) ||
		    (hit + 1 < bybase + ns && !rsrc_base(&hit[1], &key)))
			continue; /* none, or more than one of that name */
		reads++;
		if (blobs_alike(repo, &hit->c->old_id, &tc->v[i].new_id,
				&budget) >= 0.5) {
			taken[hit->idx] = true;
			from[i] = (ssize_t)hit->idx;
		}
	}
	/* Few files left on both sides: the most alike pairs, greedily. */
	for (i = 0, nadd = 0; i < tc->n; i++)
		nadd += tc->v[i].added && from[i] < 0;
	for (j = 0, left = 0; j < ns; j++)
		left += !taken[src[j].idx];
	for (i = 0; i < tc->n && nadd * left <= RENAME_MAX_PAIRS; i++) {
		double best = 0.5, s;
		ssize_t pick = -1;

		if (!tc->v[i].added || from[i] >= 0)
			continue;
		for (j = 0; j < ns && reads < RENAME_MAX_READS; j++) {
			if (taken[src[j].idx])
				continue;
			reads++;
			s = blobs_alike(repo, &src[j].c->old_id,
					&tc->v[i].new_id, &budget);
			if (s >= best) {
				best = s;
				pick = (ssize_t)src[j].idx;
			}
		}
		if (pick >= 0) {
			taken[pick] = true;
			from[i] = pick;
		}
	}
list:
	for (i = 0; i < tc->n; i++) {
		if (taken[i])
			continue; /* listed as the file it became */
		rc[n].path = tc->v[i].path;
		rc[n].old_id = from[i] >= 0	? &tc->v[from[i]].old_id
			       : tc->v[i].added ? NULL
						: &tc->v[i].old_id;
		rc[n].new_id = tc->v[i].deleted ? NULL : &tc->v[i].new_id;
		n++;
	}
	free(src);
	free(bybase);
	free(from);
	free(taken);
	free(run);
	free(cur);
	return n;
}

/* ---- one commit ----------------------------------------------------- */

static int index_commit(struct indexer *ix, git_commit *c)
{
	char hex[GIT_OID_HEXSZ + 1], dir[128], sname[48];
	struct hist_refs refs = {0};
	struct tchanges tc = {0};
	struct smap_ent *se;
	struct sb prefix = SB_INIT;
	git_commit *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	struct hist_facts f = {0};
	const git_signature *au = git_commit_author(c);
	const char *msg = git_commit_message(c), *subj;
	int64_t t = git_commit_time(c), seq;
	struct smap dirs = {0};
	struct smap_ent *ae;
	size_t i, aged = 0;
	double agesum = 0;
	int ret = 0;

	git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
	if (smap_get(&ix->oids, hex, false))
		return 0; /* already indexed (a rewritten tip's old commits) */
	subj = git_commit_summary(c);
	if (!subj)
		subj = "";
	hist_parse_refs(msg ? msg : "", subj, &refs);
	ix->n_not_commit += refs.not_commit;
	f.isfix = refs.n > 0 || hist_subject_fixes(subj);

	if (git_commit_tree(&tree, c) < 0 ||
	    (git_commit_parentcount(c) &&
	     (git_commit_parent(&parent, c, 0) < 0 ||
	      git_commit_tree(&ptree, parent) < 0)) ||
	    tree_diff(ix->repo, ptree, tree, &prefix, &tc, 0) < 0) {
		ret = errmsg_set(ix->err, RV_ERR_REPO,
				 "cannot read commit %s: %s", hex,
				 git_error_last() ? git_error_last()->message
						  : "a tree is unreadable");
		goto out;
	}
	hist_subsystem(subj, sname, sizeof(sname));
	se = smap_get(&ix->subsys, sname, true);
	f.subsys = hist_subsys_rate(se->a, se->b);
	for (i = 0; i < tc.n; i++) {
		const struct tchange *d = &tc.v[i];
		size_t osz = 0, nsz = 0;
		git_object_t type;
		struct smap_ent *pe;
		double delta;

		if (!d->added)
			git_odb_read_header(&osz, &type, ix->odb, &d->old_id);
		if (!d->deleted)
			git_odb_read_header(&nsz, &type, ix->odb, &d->new_id);
		/* A size change stands in for churn; +1 so an edit counts. */
		delta = (double)(osz > nsz ? osz - nsz : nsz - osz) + 1;
		switch (hist_file_kind(d->path)) {
		case 0:
			f.src += delta;
			break;
		case 1:
			f.hdr += delta;
			break;
		default:
			f.other += delta;
			break;
		}
		hist_top_dir(d->path, dir, sizeof(dir));
		smap_get(&dirs, dir, true);
		pe = smap_get(&ix->paths, d->path, true);
		if (!d->added && pe->a) {
			agesum += (double)(t > pe->c ? t - pe->c : 0) / 86400.0;
			aged++;
		}
		f.fixhist += (double)pe->b;
	}
	f.files = (double)tc.n;
	f.dirs = (double)dirs.n;
	f.age_days = aged ? agesum / (double)aged : 0;
	f.kw = hist_subject_adds(subj);
	ae = smap_get(&ix->authors, au && au->email ? au->email : "", true);
	f.author = (double)ae->a;

	seq = ix->next_seq++;
	sqlite3_bind_int64(ix->ins_commit, 1, seq);
	sqlite3_bind_text(ix->ins_commit, 2, hex, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ix->ins_commit, 3, t);
	sqlite3_bind_text(ix->ins_commit, 4, subj, -1, SQLITE_STATIC);
	sqlite3_bind_text(ix->ins_commit, 5, ae->key, -1, SQLITE_STATIC);
	hist_facts_bind(ix->ins_commit, 6, &f);
	if ((ret = step_done(ix, ix->ins_commit)))
		goto out;
	{
		struct hist_risk_change *rc = xcalloc(tc.n + 1, sizeof(*rc));
		size_t nrc = risk_changes(ix->repo, &tc, rc);

		ret = hist_risk_commit(ix->risk, ix->repo, seq, t, ae->key, msg,
				       f.isfix, refs.n > 0, rc, nrc, ix->err);
		free(rc);
		if (ret)
			goto out;
	}

	/* The state after this commit, for the commits that follow. */
	ae->a++;
	se->a++;
	for (i = 0; i < tc.n; i++) {
		struct smap_ent *pe = smap_get(&ix->paths, tc.v[i].path, true);

		pe->a++;
		pe->c = t;
		if (f.isfix)
			pe->b++;
	}

	for (i = 0; i < refs.n && !ret; i++)
		ret = resolve_ref(ix, c, seq, &refs.v[i]);
	/* Later commits resolve subjects against the ones before them. */
	smap_get(&ix->oids, hex, true)->a = seq;
	if (*subj)
		smap_get(&ix->subjects, subj, true)->a = seq;
	ix->st->commits++;
out:
	hist_refs_release(&refs);
	tchanges_release(&tc);
	sb_release(&prefix);
	smap_release(&dirs);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	return ret;
}

/*
 * Optional: vectors for the hunks that have none (new ones, or all when
 * the endpoint was down last time). A failure is reported, not fatal:
 * lexical retrieval does not need them.
 */
static void embed_pending(struct indexer *ix)
{
	struct errmsg eerr = {""};
	size_t n = 0;

	if (!ix->opts->embed.url)
		return;
	if (ix->opts->progress)
		ix->opts->progress(ix->opts->progress_arg,
				   "indexing history: embedding hunks");
	if (hist_embed_hunks(ix->db, &ix->opts->embed, &n, &eerr) < 0)
		snprintf(ix->st->embed_error, sizeof(ix->st->embed_error), "%s",
			 eerr.msg);
	if (n)
		ix->st->up_to_date = false;
}

/* ---- the entry point ------------------------------------------------ */

static void progress(struct indexer *ix, size_t done, size_t total, bool last)
{
	char line[160];

	if (!ix->opts->progress)
		return;
	snprintf(line, sizeof(line),
		 "indexing history: %zu/%zu commits, %lld fixes%s", done, total,
		 (long long)(ix->n_by_id + ix->n_by_subject + ix->n_reverts),
		 last ? ", done." : "");
	ix->opts->progress(ix->opts->progress_arg, line);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int add_stat(struct indexer *ix, const char *key, int64_t v, size_t *out)
{
	int64_t total = hist_meta_int(ix->db, key, 0) + v;

	*out = (size_t)total;
	return v ? hist_meta_set_int(ix->db, key, total) : 0;
}

static int read_totals(struct indexer *ix)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if ((ret = prep(ix, &st,
			"SELECT (SELECT COUNT(*) FROM commits),"
			" (SELECT COUNT(*) FROM pairs),"
			" (SELECT COUNT(*) FROM hunks),"
			" (SELECT COUNT(*) FROM vectors)")))
		return ret;
	if (sqlite3_step(st) == SQLITE_ROW) {
		ix->st->total_commits = (size_t)sqlite3_column_int64(st, 0);
		ix->st->pairs = (size_t)sqlite3_column_int64(st, 1);
		ix->st->hunks = (size_t)sqlite3_column_int64(st, 2);
		ix->st->vectors = (size_t)sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (add_stat(ix, "trailers", ix->n_trailers, &ix->st->fixes_trailers) ||
	    add_stat(ix, "by_id", ix->n_by_id, &ix->st->resolved_id) ||
	    add_stat(ix, "by_subject", ix->n_by_subject,
		     &ix->st->resolved_subject) ||
	    add_stat(ix, "unresolved", ix->n_unresolved, &ix->st->unresolved) ||
	    add_stat(ix, "ambiguous", ix->n_ambiguous, &ix->st->ambiguous) ||
	    add_stat(ix, "not_commit", ix->n_not_commit, &ix->st->not_commit) ||
	    add_stat(ix, "reverts", ix->n_reverts, &ix->st->reverts))
		return errmsg_set(ix->err, RV_ERR_INTERNAL,
				  "history index: cannot store counts: %s",
				  sqlite3_errmsg(ix->db));
	return 0;
}

static void finalize_stmts(struct indexer *ix)
{
	sqlite3_finalize(ix->ins_commit);
	sqlite3_finalize(ix->ins_pair);
	sqlite3_finalize(ix->ins_hunk);
	sqlite3_finalize(ix->ins_fts);
	sqlite3_finalize(ix->ins_unres);
	sqlite3_finalize(ix->ins_funcfix);
}

/*
 * Hide the tips indexed before. *gone: one is gone, or HEAD no longer
 * descends from it (a reset, a rebase, another branch checked out):
 * what the index holds is not HEAD's history, and the commits it kept
 * would be fixes, bugs and rates of code HEAD does not have.
 */
static int hide_tips(struct indexer *ix, git_revwalk *walk, const git_oid *head,
		     bool *gone, bool *left)
{
	sqlite3_stmt *st = NULL;
	int ret;

	*gone = *left = false;
	if ((ret = prep(ix, &st, "SELECT oid FROM tips")))
		return ret;
	while (sqlite3_step(st) == SQLITE_ROW) {
		git_oid oid;
		const char *hex = (const char *)sqlite3_column_text(st, 0);

		if (!hex || git_oid_fromstr(&oid, hex) < 0 ||
		    git_revwalk_hide(walk, &oid) < 0)
			*gone = true;
		else if (!git_oid_equal(&oid, head) &&
			 git_graph_descendant_of(ix->repo, head, &oid) != 1)
			*left = true;
	}
	sqlite3_finalize(st);
	return 0;
}

/* Create <git dir>/quorum, where the db lives. */
static int make_index_dir(const char *db_path, struct errmsg *err)
{
	struct sb dir = SB_INIT;
	int ret = 0;

	sb_add(&dir, db_path, strlen(db_path) - strlen("/history.db"));
	if (mkdir(sb_str(&dir), 0777) < 0 && errno != EEXIST)
		ret = errmsg_set(err, RV_ERR_INTERNAL, "cannot create %s: %s",
				 sb_str(&dir), strerror(errno));
	sb_release(&dir);
	return ret;
}

/*
 * Open (or create) the db, take the write lock and hide the tips indexed
 * before from the walk. A tip that is gone means the history was
 * rewritten: the db is thrown away and made anew, once.
 */
static int open_db_locked(struct indexer *ix, const git_oid *head)
{
	struct rv_index_stats *st = ix->st;
	bool gone = false, left = false;
	int ret;

again:
	ret = hist_db_open(&ix->db, ix->path, true, st->rebuilt_reason,
			   sizeof(st->rebuilt_reason), ix->err);
	if (ret < 0)
		return ret;
	if (st->rebuilt_reason[0])
		st->rebuilt = true;
	git_odb_free(ix->odb);
	ix->odb = NULL;
	if (git_repository_odb(&ix->odb, ix->repo) < 0 ||
	    git_revwalk_new(&ix->walk, ix->repo) < 0)
		return errmsg_set(ix->err, RV_ERR_REPO,
				  "cannot walk the history: %s",
				  git_error_last() ? git_error_last()->message
						   : "unknown error");
	git_revwalk_sorting(ix->walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME |
					      GIT_SORT_REVERSE);
	/* Hold the write lock from reading the tips on: two runs never
	 * index the same commits twice. */
	if (hist_exec(ix->db, "BEGIN IMMEDIATE", NULL) < 0)
		return errmsg_set(ix->err, RV_ERR_INTERNAL,
				  "the history index %s is being written by "
				  "another process (a quorum index?); try "
				  "again when it is done",
				  ix->path);
	ix->in_tx = true;
	if ((ret = hide_tips(ix, ix->walk, head, &gone, &left)))
		return ret;
	if ((gone || left) && !st->rebuilt) {
		/* The history was rewritten, or HEAD is elsewhere. */
		git_revwalk_free(ix->walk);
		ix->walk = NULL;
		hist_exec(ix->db, "ROLLBACK", NULL);
		ix->in_tx = false;
		sqlite3_close(ix->db);
		ix->db = NULL;
		hist_db_remove(ix->path);
		st->rebuilt = true;
		snprintf(st->rebuilt_reason, sizeof(st->rebuilt_reason),
			 "%s; the history index was rebuilt",
			 gone ? "a commit indexed before is gone (history "
				"was rewritten)"
			      : "HEAD does not descend from the commit "
				"indexed last (history rewritten, or another "
				"branch)");
		goto again;
	}
	return 0;
}

/* The commits of HEAD not indexed yet, oldest first, into ix->todo. */
static int list_new_commits(struct indexer *ix, const git_oid *head)
{
	git_oid oid;
	int wret;

	/*
	 * libgit2 1.5 cannot walk past a shallow boundary (and leaks when it
	 * tries): say so before walking.
	 */
	if (git_repository_is_shallow(ix->repo) == 1)
		return errmsg_set(ix->err, RV_ERR_REPO,
				  "the repository is a shallow clone and its "
				  "history cannot be walked; fetch the "
				  "history first (git fetch --unshallow)");
	if (git_revwalk_push(ix->walk, head) < 0)
		return errmsg_set(ix->err, RV_ERR_REPO,
				  "cannot walk from HEAD: %s",
				  git_error_last() ? git_error_last()->message
						   : "unknown error");
	while ((wret = git_revwalk_next(&oid, ix->walk)) == 0) {
		ALLOC_GROW(ix->todo, ix->ntodo + 1, ix->todo_alloc);
		ix->todo[ix->ntodo++] = oid;
	}
	/* Never "up to date" on a history we could not read. */
	if (wret != GIT_ITEROVER)
		return errmsg_set(ix->err, RV_ERR_REPO,
				  "cannot walk the history of HEAD: %s",
				  git_error_last() ? git_error_last()->message
						   : "unknown error");
	return 0;
}

static int prepare_inserts(struct indexer *ix)
{
	int ret;

	if ((ret = prep(ix, &ix->ins_commit,
			"INSERT INTO commits VALUES (?, ?, ?, ?, ?,"
			" ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) ||
	    (ret = prep(ix, &ix->ins_pair,
			"INSERT INTO pairs(kind, how, fix_seq, fix_oid,"
			" fix_subject, fix_expl, bug_seq, bug_oid,"
			" bug_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) ||
	    (ret = prep(ix, &ix->ins_hunk,
			"INSERT INTO hunks(pair_id, role, file, func, lines,"
			" nshape) VALUES (?, ?, ?, ?, ?, ?)")) ||
	    (ret = prep(
		     ix, &ix->ins_fts,
		     "INSERT INTO hunks_fts(rowid, tokens) VALUES (?, ?)")) ||
	    (ret = prep(ix, &ix->ins_unres,
			"INSERT INTO unresolved VALUES (?, ?, ?, ?)")) ||
	    (ret = prep(ix, &ix->ins_funcfix,
			"INSERT INTO funcfix VALUES (?, ?, ?)")))
		return ret;
	return 0;
}

/* Read every listed commit's facts and references, with progress lines. */
static int walk_new_commits(struct indexer *ix)
{
	double last_progress = now_seconds();
	size_t i;
	int ret = 0;

	for (i = 0; i < ix->ntodo && !ret; i++) {
		git_commit *c = NULL;
		double now;

		if (git_commit_lookup(&c, ix->repo, &ix->todo[i]) < 0)
			return errmsg_set(ix->err, RV_ERR_REPO,
					  "cannot read a commit: %s",
					  git_error_last()
						  ? git_error_last()->message
						  : "unknown error");
		if (git_commit_parentcount(c) > 1)
			ix->st->merges++;
		else
			ret = index_commit(ix, c);
		git_commit_free(c);
		if ((i & 255) == 0 &&
		    (now = now_seconds()) - last_progress > 0.2) {
			progress(ix, i, ix->ntodo, false);
			last_progress = now;
		}
	}
	return ret;
}

/* HEAD is indexed: the next run starts from it. */
static int record_tip(struct indexer *ix, const char *head_hex)
{
	sqlite3_stmt *ts = NULL;
	int ret;

	if ((ret = hist_exec(ix->db, "DELETE FROM tips", ix->err)) ||
	    (ret = prep(ix, &ts, "INSERT INTO tips VALUES (?)")))
		return ret;
	sqlite3_bind_text(ts, 1, head_hex, -1, SQLITE_STATIC);
	ret = step_done(ix, ts);
	sqlite3_finalize(ts);
	return ret;
}

/* After the walk: the pairs' hunks, the state, the model, then commit. */
static int finish_index(struct indexer *ix, const char *head_hex)
{
	int ret;

	if (ix->njobs && ix->opts->progress)
		ix->opts->progress(
			ix->opts->progress_arg,
			"indexing history: reading the fixes' diffs");
	if ((ret = store_hunks(ix)) || (ret = record_tip(ix, head_hex)) ||
	    (ret = save_state(ix)))
		return ret;
	embed_pending(ix);
	if ((ret = hist_risk_finish(ix->risk, ix->st->model_note,
				    sizeof(ix->st->model_note), ix->err)) ||
	    (ret = read_totals(ix)) ||
	    (ret = hist_exec(ix->db, "COMMIT", ix->err)))
		return ret;
	ix->in_tx = false;
	progress(ix, ix->ntodo, ix->ntodo, true);
	return 0;
}

/* Nothing new: only vectors still missing may be added. */
static int finish_up_to_date(struct indexer *ix)
{
	int ret;

	ix->st->up_to_date = true;
	embed_pending(ix);
	ret = read_totals(ix);
	if (!ret && !hist_exec(ix->db, "COMMIT", ix->err))
		ix->in_tx = false;
	return ret;
}

static void indexer_release(struct indexer *ix, int ret)
{
	size_t i;

	if (ix->in_tx)
		hist_exec(ix->db, "ROLLBACK", NULL);
	finalize_stmts(ix);
	/* Its statement first: sqlite3_close() refuses a db with one open. */
	hist_risk_free(ix->risk);
	if (ix->db && !ret)
		hist_exec(ix->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL);
	sqlite3_close(ix->db);
	smap_release(&ix->paths);
	smap_release(&ix->authors);
	smap_release(&ix->subjects);
	smap_release(&ix->oids);
	smap_release(&ix->subsys);
	for (i = 0; i < ix->njobs; i++)
		pjob_release(&ix->jobs[i]);
	free(ix->jobs);
	free(ix->postings);
	free(ix->todo);
	free(ix->path);
	git_revwalk_free(ix->walk);
	git_odb_free(ix->odb);
	git_repository_free(ix->repo);
}

int rv_history_index(const char *repo_path, const struct rv_index_opts *opts,
		     struct rv_index_stats *st, struct errmsg *err)
{
	static const struct rv_index_opts defaults = RV_INDEX_OPTS_INIT;
	struct indexer ix = {0};
	char head_hex[GIT_OID_HEXSZ + 1];
	double t0 = now_seconds();
	git_oid head;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	/*
	 * libgit2 re-hashes every object it reads; git does not (git fsck
	 * does). Reading the fixes' blobs spent 38% of an index run in
	 * SHA-1: skip it while indexing, as git would.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	ix.opts = opts ? opts : &defaults;
	ix.st = st;
	ix.err = err;
	ix.next_seq = 1;
	if (git_repository_open_ext(&ix.repo, repo_path ? repo_path : ".", 0,
				    NULL) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is not in a git repository",
				 repo_path ? repo_path : ".");
		goto out;
	}
	if (git_reference_name_to_id(&head, ix.repo, "HEAD") < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "the repository has no commits (HEAD does "
				 "not resolve); nothing to index");
		goto out;
	}
	git_oid_tostr(head_hex, sizeof(head_hex), &head);
	ix.path = hist_db_path(ix.repo);
	if ((ret = make_index_dir(ix.path, err)))
		goto out;
	if (ix.opts->rebuild)
		hist_db_remove(ix.path);
	if ((ret = open_db_locked(&ix, &head)) ||
	    (ret = list_new_commits(&ix, &head)))
		goto out;
	if (!ix.ntodo) {
		ret = finish_up_to_date(&ix);
		goto out;
	}
	if ((ret = load_state(&ix)) ||
	    (ret = hist_risk_begin(ix.db, &ix.risk, err)) ||
	    (ret = prepare_inserts(&ix)) || (ret = walk_new_commits(&ix)))
		goto out;
	ret = finish_index(&ix, head_hex);
out:
	indexer_release(&ix, ret);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 1);
	st->seconds = now_seconds() - t0;
	return ret;
}
