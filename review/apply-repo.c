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

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "apply-int.h"

/*
 * The largest tree kept parsed in libgit2's object cache: more than a
 * directory a patch can grow (10000 files of 255-byte names, ~3 MB).
 */
#define RV_TREE_CACHE_MAX ((size_t)16 << 20)

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
	/*
	 * libgit2 caches no tree above 4 KB: reading each of the files of a
	 * directory of thousands would read and inflate the directory again
	 * for every one of them. Its cache stays bounded by its total size.
	 */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE,
			 (size_t)RV_TREE_CACHE_MAX);
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
