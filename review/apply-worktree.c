// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-worktree.c - write an applied tree to a fresh directory for checks that
 * need files on disk (a build, checkpatch), and remove it again.
 *
 * The repository is not touched (no .git/worktrees entry, no branch): the
 * files are written with openat() relative to directory descriptors,
 * O_EXCL|O_NOFOLLOW, so no entry can land outside DIR or follow a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply-int.h"

#define WT_MAX_DEPTH 256

static bool name_ok(const char *n)
{
	return *n && strcmp(n, ".") && strcmp(n, "..") && !strchr(n, '/') &&
	       strcasecmp(n, ".git");
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_tree(struct rv_repo *repo, const git_tree *tree, int dirfd,
		      int depth, struct sb *where, struct errmsg *err)
{
	size_t i, n = git_tree_entrycount(tree), mark = where->len;
	int ret = 0;

	if (depth > WT_MAX_DEPTH)
		return errmsg_set(err, RV_ERR_UNSAFE,
				  "the tree is nested deeper than %d levels",
				  WT_MAX_DEPTH);
	for (i = 0; i < n && !ret; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		const char *name = git_tree_entry_name(e);
		git_filemode_t mode = git_tree_entry_filemode(e);
		git_blob *blob = NULL;
		git_tree *sub = NULL;
		int fd;

		sb_setlen(where, mark);
		sb_addf(where, "%s%s", mark ? "/" : "", name);
		if (!name_ok(name)) {
			ret = errmsg_set(
				err, RV_ERR_UNSAFE,
				"refusing to write the tree entry %.200s",
				sb_str(where));
			break;
		}
		switch (mode) {
		case GIT_FILEMODE_TREE:
			if (mkdirat(dirfd, name, 0755) < 0 ||
			    (fd = openat(dirfd, name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) <
				    0) {
				ret = errmsg_set(
					err, RV_ERR_REPO,
					"cannot make directory %.200s: %s",
					sb_str(where), strerror(errno));
				break;
			}
			if (git_tree_lookup(&sub, repo->git,
					    git_tree_entry_id(e)) < 0)
				ret = rv__git_error(err, RV_ERR_REPO,
						    "cannot read a tree");
			else
				ret = write_tree(repo, sub, fd, depth + 1,
						 where, err);
			git_tree_free(sub);
			close(fd);
			break;
		case GIT_FILEMODE_BLOB:
		case GIT_FILEMODE_BLOB_EXECUTABLE:
		case GIT_FILEMODE_LINK:
			if (git_blob_lookup(&blob, repo->git,
					    git_tree_entry_id(e)) < 0) {
				ret = rv__git_error(err, RV_ERR_REPO,
						    "cannot read a blob");
				break;
			}
			if (mode == GIT_FILEMODE_LINK) {
				char *target = xstrndup(
					git_blob_rawcontent(blob),
					(size_t)git_blob_rawsize(blob));

				if (symlinkat(target, dirfd, name) < 0)
					ret = errmsg_set(err, RV_ERR_REPO,
							 "cannot make symlink "
							 "%.200s: %s",
							 sb_str(where),
							 strerror(errno));
				free(target);
			} else {
				fd = openat(dirfd, name,
					    O_WRONLY | O_CREAT | O_EXCL |
						    O_NOFOLLOW | O_CLOEXEC,
					    mode == GIT_FILEMODE_BLOB ? 0644
								      : 0755);
				if (fd < 0 ||
				    write_all(fd, git_blob_rawcontent(blob),
					      (size_t)git_blob_rawsize(blob)) <
					    0)
					ret = errmsg_set(
						err, RV_ERR_REPO,
						"cannot write %.200s: %s",
						sb_str(where), strerror(errno));
				if (fd >= 0 && close(fd) < 0 && !ret)
					ret = errmsg_set(
						err, RV_ERR_REPO,
						"cannot write %.200s: %s",
						sb_str(where), strerror(errno));
			}
			git_blob_free(blob);
			break;
		case GIT_FILEMODE_COMMIT:
			/* A submodule: an empty directory, as git checkout
			 * leaves it. */
			if (mkdirat(dirfd, name, 0755) < 0)
				ret = errmsg_set(
					err, RV_ERR_REPO,
					"cannot make directory %.200s: %s",
					sb_str(where), strerror(errno));
			break;
		default:
			break;
		}
	}
	sb_setlen(where, mark);
	return ret;
}

int rv_worktree_checkout(struct rv_repo *repo, const char *tree_or_commit,
			 const char *dir, struct errmsg *err)
{
	git_oid oid;
	git_object *obj = NULL;
	git_tree *tree = NULL;
	struct sb where = SB_INIT;
	int fd = -1, ret = 0;

	if (!tree_or_commit || strlen(tree_or_commit) != RV_OID_HEXSZ ||
	    git_oid_fromstr(&oid, tree_or_commit) < 0)
		return errmsg_set(err, RV_ERR_INTERNAL, "not an object id");
	if (git_object_lookup(&obj, repo->git, &oid, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO, "%s is not a tree or commit",
				 tree_or_commit);
		goto out;
	}
	if (mkdir(dir, 0755) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "cannot make the worktree %.200s: %s%s", dir,
				 strerror(errno),
				 errno == EEXIST ? " (it must not exist yet)"
						 : "");
		goto out;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0) {
		ret = errmsg_set(err, RV_ERR_REPO, "cannot open %.200s: %s",
				 dir, strerror(errno));
		rmdir(dir);
		goto out;
	}
	sb_init(&where, 8192);
	ret = write_tree(repo, tree, fd, 0, &where, err);
	close(fd);
	if (ret < 0)
		rv_worktree_remove(dir);
out:
	sb_release(&where);
	git_tree_free(tree);
	git_object_free(obj);
	return ret;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int rv_worktree_remove(const char *dir)
{
	if (!dir || !*dir) {
		errno = EINVAL;
		return RV_ERR_INTERNAL;
	}
	return nftw(dir, rm_one, 64, FTW_DEPTH | FTW_PHYS) < 0 ? RV_ERR_REPO
							       : 0;
}
