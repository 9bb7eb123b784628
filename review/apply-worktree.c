// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-worktree.c - write an applied tree to a fresh directory for checks that
 * need files on disk (a build, checkpatch), and remove it again.
 *
 * The repository is not touched (no .git/worktrees entry, no branch): the
 * files are written with openat() relative to directory descriptors,
 * O_EXCL|O_NOFOLLOW, so no entry can land outside DIR or follow a link;
 * and a symlink is written only when it resolves inside DIR, so no
 * checker that reads the worktree later is led out of it.
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
/* Symlinks followed resolving one target, as Linux's MAXSYMLINKS. */
#define WT_MAX_LINKS 40
/* Components of a resolved path, and of what is left to resolve. */
#define WT_MAX_PARTS 4096

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

/* A path resolved so far: its components, each a copy. */
struct parts {
	char **v;
	size_t n, alloc;
};

static void parts_clear(struct parts *p)
{
	while (p->n)
		free(p->v[--p->n]);
	free(p->v);
}

/* Append name (taken); -1 (name freed) past WT_MAX_PARTS. */
static int parts_add(struct parts *p, char *name)
{
	if (p->n == WT_MAX_PARTS) {
		free(name);
		return -1;
	}
	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	p->v[p->n++] = name;
	return 0;
}

/* Push the components of path (n bytes) onto p, in reverse when rev. */
static int parts_push(struct parts *p, const char *path, size_t n, bool rev)
{
	const char *s = path, *end = path + n;
	size_t first = p->n, i;

	while (s < end) {
		const char *e = memchr(s, '/', (size_t)(end - s));
		size_t len = e ? (size_t)(e - s) : (size_t)(end - s);

		if (parts_add(p, xstrndup(s, len)) < 0)
			return -1;
		s += len + 1;
	}
	for (i = 0; rev && i < (p->n - first) / 2; i++) {
		char *t = p->v[first + i];

		p->v[first + i] = p->v[p->n - 1 - i];
		p->v[p->n - 1 - i] = t;
	}
	return 0;
}

/* The entry at the path of components at[0..n) and name in root, or NULL. */
static git_tree_entry *entry_at(const git_tree *root, const struct parts *at,
				const char *name)
{
	git_tree_entry *e = NULL;
	struct sb path = SB_INIT;
	size_t i;

	for (i = 0; i < at->n; i++)
		sb_addf(&path, "%s/", at->v[i]);
	sb_adds(&path, name);
	if (git_tree_entry_bypath(&e, root, sb_str(&path)) < 0)
		e = NULL;
	sb_release(&path);
	return e;
}

/*
 * Does the symlink at link (a path in root) pointing at target stay in
 * the tree? It is resolved in the tree itself as the kernel would on
 * disk: component by component from the link's directory, ".." going up
 * (above the top: out), a symlink met on the way followed (an absolute
 * one: out), so a link through another link (sub/up -> .., x ->
 * sub/up/..) is caught as well as ../../etc. A target missing from the
 * tree is followed as a plain name. 1 inside, 0 out, -1 past
 * WT_MAX_LINKS links or WT_MAX_PARTS components (a loop: refused too).
 */
static int link_inside(struct rv_repo *repo, const git_tree *root,
		       const char *link, const char *target)
{
	struct parts at = {NULL, 0, 0}, todo = {NULL, 0, 0};
	const char *slash = strrchr(link, '/');
	size_t nlinks = 0;
	int ret = 1;

	if (*target == '/')
		return 0;
	if ((slash &&
	     parts_push(&at, link, (size_t)(slash - link), false) < 0) ||
	    parts_push(&todo, target, strlen(target), true) < 0)
		ret = -1;
	while (ret == 1 && todo.n) {
		char *name = todo.v[--todo.n];
		git_tree_entry *e;

		if (!*name || !strcmp(name, ".")) {
			free(name);
		} else if (!strcmp(name, "..")) {
			free(name);
			if (!at.n)
				ret = 0;
			else
				free(at.v[--at.n]);
		} else if ((e = entry_at(root, &at, name)) &&
			   git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
			git_blob *blob = NULL;

			free(name);
			if (++nlinks > WT_MAX_LINKS ||
			    git_blob_lookup(&blob, repo->git,
					    git_tree_entry_id(e)) < 0) {
				ret = -1;
			} else {
				const char *t = git_blob_rawcontent(blob);
				size_t n = (size_t)git_blob_rawsize(blob);

				if (n && *t == '/')
					ret = 0;
				else if (memchr(t, '\0', n) ||
					 parts_push(&todo, t, n, true) < 0)
					ret = -1;
			}
			git_blob_free(blob);
			git_tree_entry_free(e);
		} else {
			git_tree_entry_free(e);
			if (parts_add(&at, name) < 0)
				ret = -1;
		}
	}
	parts_clear(&at);
	parts_clear(&todo);
	return ret;
}

static int write_tree(struct rv_repo *repo, const git_tree *root,
		      const git_tree *tree, int dirfd, int depth,
		      struct sb *where, struct errmsg *err)
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
				ret = write_tree(repo, root, sub, fd, depth + 1,
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
				int in = link_inside(repo, root, sb_str(where),
						     target);

				if (in <= 0)
					ret = errmsg_set(
						err, RV_ERR_UNSAFE,
						"refusing the symlink %.200s "
						"-> %.200s: %s",
						sb_str(where), target,
						in < 0 ? "it resolves through "
							 "too many links"
						       : "it points outside "
							 "the worktree");
				else if (symlinkat(target, dirfd, name) < 0)
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
	ret = write_tree(repo, tree, tree, fd, 0, &where, err);
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
