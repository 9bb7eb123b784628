// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-repo.c - the repository handle of review/: open, resolve, read a file.
 *
 * Objects quorum creates (blobs, trees, commits of applied patches) are
 * written to an in-memory object store that shadows the repo's own, so
 * applying a series never touches .git unless the caller asks for refs.
 */
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "apply-int.h"

int rv__git_error(struct errmsg *err, int code, const char *what)
{
	const git_error *e = git_error_last();

	return errmsg_set(err, code, "%s: %s", what,
			  e && e->message ? e->message : "unknown error");
}

int rv_repo_open(struct rv_repo **out, const char *path, struct errmsg *err)
{
	struct rv_repo *r;
	int ret = 0;

	*out = NULL;
	git_libgit2_init();
	r = xcalloc(1, sizeof(*r));
	if (git_repository_open_ext(&r->git, path ? path : ".", 0, NULL) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is not inside a git repository",
				 path ? path : ".");
		goto out;
	}
	if (git_repository_odb(&r->odb, r->git) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO,
				    "cannot open the object store");
		goto out;
	}
	if (git_mempack_new(&r->mempack) < 0) {
		ret = rv__git_error(err, RV_ERR_INTERNAL,
				    "cannot make an in-memory object store");
		goto out;
	}
	/* Highest priority: every write lands in memory. The odb owns it. */
	if (git_odb_add_backend(r->odb, r->mempack, 1000) < 0) {
		r->mempack->free(r->mempack);
		r->mempack = NULL;
		ret = rv__git_error(err, RV_ERR_INTERNAL,
				    "cannot add the in-memory object store");
		goto out;
	}
out:
	if (ret < 0) {
		rv_repo_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void rv_repo_free(struct rv_repo *repo)
{
	if (!repo)
		return;
	git_odb_free(repo->odb);
	git_repository_free(repo->git);
	free(repo);
	git_libgit2_shutdown();
}

int rv__repo_flush(struct rv_repo *repo, struct errmsg *err)
{
	git_buf pack = {0};
	git_odb_writepack *wp = NULL;
	git_indexer_progress stats = {0};
	int ret = 0;

	if (git_mempack_dump(&pack, repo->git, repo->mempack) < 0 ||
	    git_odb_write_pack(&wp, repo->odb, NULL, NULL) < 0 ||
	    wp->append(wp, pack.ptr, pack.size, &stats) < 0 ||
	    wp->commit(wp, &stats) < 0)
		ret = rv__git_error(err, RV_ERR_REPO,
				    "cannot write the new commits to the repo");
	if (wp)
		wp->free(wp);
	git_buf_dispose(&pack);
	return ret;
}

int rv_repo_resolve(struct rv_repo *repo, const char *rev,
		    char out[RV_OID_HEXSZ + 1], struct errmsg *err)
{
	git_object *obj = NULL, *commit = NULL;
	int ret = 0;

	out[0] = '\0';
	if (!rev || !*rev || strlen(rev) > 1024)
		return errmsg_set(err, RV_ERR_REPO,
				  "empty or overlong revision");
	if (git_revparse_single(&obj, repo->git, rev) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "revision '%.200s' is not in the repository",
				 rev);
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "revision '%.200s' does not name a commit",
				 rev);
		goto out;
	}
	git_oid_tostr(out, RV_OID_HEXSZ + 1, git_object_id(commit));
out:
	git_object_free(commit);
	git_object_free(obj);
	return ret;
}

int rv_repo_read_file(struct rv_repo *repo, const char *tree_or_commit,
		      const char *path, struct sb *out, struct errmsg *err)
{
	git_oid oid;
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_tree_entry *ent = NULL;
	git_blob *blob = NULL;
	int ret = 0;

	if (!tree_or_commit ||
	    git_oid_fromstrn(&oid, tree_or_commit, strlen(tree_or_commit)) <
		    0 ||
	    strlen(tree_or_commit) != RV_OID_HEXSZ)
		return errmsg_set(err, RV_ERR_REPO,
				  "'%.80s' is not an object id",
				  tree_or_commit ? tree_or_commit : "");
	if (git_object_lookup(&obj, repo->git, &oid, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO, "%s is not a tree or commit",
				 tree_or_commit);
		goto out;
	}
	if (!path || git_tree_entry_bypath(&ent, tree, path) < 0 ||
	    git_tree_entry_type(ent) != GIT_OBJECT_BLOB) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%.200s is not a file in %.12s",
				 path ? path : "(null)", tree_or_commit);
		goto out;
	}
	if (git_blob_lookup(&blob, repo->git, git_tree_entry_id(ent)) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "cannot read a blob");
		goto out;
	}
	if (sb_add(out, git_blob_rawcontent(blob),
		   (size_t)git_blob_rawsize(blob)) < 0)
		ret = errmsg_set(err, RV_ERR_NOMEM,
				 "%.200s is too large to read", path);
out:
	git_blob_free(blob);
	git_tree_entry_free(ent);
	git_tree_free(tree);
	git_object_free(obj);
	return ret;
}

struct rv_tree_reader {
	struct rv_repo *repo;
	git_tree *root;
	GHashTable *dirs; /* "a/b" -> git_tree *, each read once */
};

static void tree_free(gpointer t)
{
	git_tree_free(t);
}

struct rv_tree_reader *rv_tree_reader_new(struct rv_repo *repo,
					  const char *tree_or_commit)
{
	struct rv_tree_reader *tr;
	git_object *obj = NULL;
	git_oid oid;

	if (!repo || !tree_or_commit ||
	    strlen(tree_or_commit) != RV_OID_HEXSZ ||
	    git_oid_fromstrn(&oid, tree_or_commit, RV_OID_HEXSZ) < 0 ||
	    git_object_lookup(&obj, repo->git, &oid, GIT_OBJECT_ANY) < 0)
		return NULL;
	tr = xcalloc(1, sizeof(*tr));
	tr->repo = repo;
	if (git_object_peel((git_object **)&tr->root, obj, GIT_OBJECT_TREE) <
	    0) {
		git_object_free(obj);
		free(tr);
		return NULL;
	}
	git_object_free(obj);
	tr->dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 tree_free);
	return tr;
}

/* The tree of directory dir ("" is the root), or NULL. */
static git_tree *reader_dir(struct rv_tree_reader *tr, const char *dir)
{
	const char *slash, *name;
	git_tree *parent, *t;
	const git_tree_entry *e;
	char *up;

	if (!*dir)
		return tr->root;
	t = g_hash_table_lookup(tr->dirs, dir);
	if (t)
		return t;
	slash = strrchr(dir, '/');
	up = g_strndup(dir, slash ? (size_t)(slash - dir) : 0);
	name = slash ? slash + 1 : dir;
	parent = reader_dir(tr, up);
	g_free(up);
	if (!parent || !(e = git_tree_entry_byname(parent, name)) ||
	    git_tree_entry_type(e) != GIT_OBJECT_TREE ||
	    git_tree_lookup(&t, tr->repo->git, git_tree_entry_id(e)) < 0)
		return NULL;
	g_hash_table_insert(tr->dirs, g_strdup(dir), t);
	return t;
}

int rv_tree_reader_read(struct rv_tree_reader *tr, const char *path,
			struct sb *out, struct errmsg *err)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	git_tree *dir;
	char *d;
	int ret = 0;

	/* As git_tree_entry_bypath() would: no empty component. */
	if (!path || !*path || *path == '/' || strstr(path, "//") ||
	    (slash && !slash[1]))
		return errmsg_set(err, RV_ERR_REPO, "%.200s is not a file",
				  path ? path : "(null)");
	d = g_strndup(path, slash ? (size_t)(slash - path) : 0);
	dir = reader_dir(tr, d);
	g_free(d);
	if (!dir ||
	    !(e = git_tree_entry_byname(dir, slash ? slash + 1 : path)) ||
	    git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return errmsg_set(err, RV_ERR_REPO, "%.200s is not a file",
				  path);
	if (git_blob_lookup(&blob, tr->repo->git, git_tree_entry_id(e)) < 0)
		return rv__git_error(err, RV_ERR_REPO, "cannot read a blob");
	if (sb_add(out, git_blob_rawcontent(blob),
		   (size_t)git_blob_rawsize(blob)) < 0)
		ret = errmsg_set(err, RV_ERR_NOMEM,
				 "%.200s is too large to read", path);
	git_blob_free(blob);
	return ret;
}

void rv_tree_reader_free(struct rv_tree_reader *tr)
{
	if (!tr)
		return;
	g_hash_table_destroy(tr->dirs);
	git_tree_free(tr->root);
	free(tr);
}
