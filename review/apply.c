// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply.c - apply a series in memory on the best base, one commit per
 * patch, with git am's results and a reason a person can act on when a
 * patch does not apply.
 *
 * Work is proportional to the files a patch touches: each touched blob is
 * read, patched and written, and the tree is rebuilt along those paths
 * only (git_tree_create_updated), so a series applies in a few ms even on
 * a large tree. Objects go to the in-memory store of struct rv_repo.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <git2/sys/commit.h>

#include "apply-int.h"

/* How far back prerequisite-patch-id: lines are looked for. */
#define PREREQ_WALK_LIMIT 1000
/* Longest path component a tree entry may have. */
#define AP_NAME_MAX 255

/* What one patch does to the tree, path by path (last change wins). */
struct upd {
	char *path;
	bool remove;
	bool created; /* new in this patch: not a source, not removed */
	git_oid oid;
	unsigned mode;
};

struct pctx {
	struct rv_repo *repo;
	git_tree *tree; /* the tree this patch applies to */
	struct upd *u;
	size_t nu, au;
	bool three_way; /* allowed */
	bool used_three_way;
	const struct ap_patch *ap; /* the patch being applied */
	struct sb why; /* reason of a failure, without the "patch n/m" part */
	size_t tree_bytes; /* of the trees written so far (the cap) */
};

static struct upd *upd_find(struct pctx *c, const char *path)
{
	size_t i;

	for (i = c->nu; i-- > 0;)
		if (!strcmp(c->u[i].path, path))
			return &c->u[i];
	return NULL;
}

static void upd_set(struct pctx *c, const char *path, bool remove, bool created,
		    const git_oid *oid, unsigned mode)
{
	struct upd *u = upd_find(c, path);

	if (!u) {
		ALLOC_GROW(c->u, c->nu + 1, c->au);
		u = &c->u[c->nu++];
		u->path = xstrdup_or_null(path);
		u->created = false;
	}
	/* "new a" before "rename a -> b": the rename must not undo it. */
	if (remove && u->created)
		return;
	u->remove = remove;
	u->created = created;
	if (oid)
		git_oid_cpy(&u->oid, oid);
	u->mode = mode;
}

static void upd_clear(struct pctx *c)
{
	size_t i;

	for (i = 0; i < c->nu; i++)
		free(c->u[i].path);
	c->nu = 0;
}

/*
 * Find path in the patch's tree (changes made earlier in the same patch
 * first). Returns 1 found, 0 absent, RV_ERR_UNSAFE when a leading
 * component is a symlink, or RV_ERR_REPO.
 */
static int lookup(struct pctx *c, const char *path, bool source, git_oid *oid,
		  unsigned *mode, struct errmsg *err)
{
	const struct upd *u;
	git_tree *t = c->tree, *sub = NULL;
	git_oid next;
	const char *p = path;
	size_t i;
	int ret = 0;

	/* A symlink this very patch creates may not be a directory either. */
	for (i = 0; i < c->nu; i++) {
		size_t n = strlen(c->u[i].path);

		if (!c->u[i].remove && c->u[i].mode == 0120000 &&
		    !strncmp(path, c->u[i].path, n) && path[n] == '/')
			return errmsg_set(err, RV_ERR_UNSAFE,
					  "the patch writes %.200s through the "
					  "symlink %.200s",
					  path, c->u[i].path);
	}
	u = upd_find(c, path);
	if (u && source && u->created)
		u = NULL; /* a source is what the base had there */
	if (u) {
		if (u->remove)
			return 0;
		git_oid_cpy(oid, &u->oid);
		*mode = u->mode;
		return 1;
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char comp[AP_NAME_MAX + 1];
		const git_tree_entry *e;

		if (n > AP_NAME_MAX)
			goto out;
		memcpy(comp, p, n);
		comp[n] = '\0';
		e = git_tree_entry_byname(t, comp);
		if (!e)
			goto out;
		if (!slash) {
			git_oid_cpy(oid, git_tree_entry_id(e));
			*mode = (unsigned)git_tree_entry_filemode(e);
			ret = 1;
			goto out;
		}
		if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
			ret = errmsg_set(err, RV_ERR_UNSAFE,
					 "the patch writes %.200s through the "
					 "symlink %.*s in the base",
					 path, (int)(slash - path), path);
			goto out;
		}
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			goto out;
		/* e lives in t, which may be the sub we are about to free. */
		git_oid_cpy(&next, git_tree_entry_id(e));
		git_tree_free(sub);
		sub = NULL;
		if (git_tree_lookup(&sub, c->repo->git, &next) < 0) {
			ret = rv__git_error(err, RV_ERR_REPO,
					    "cannot read a tree");
			goto out;
		}
		t = sub;
		p = slash + 1;
	}
out:
	git_tree_free(sub);
	return ret;
}

/*
 * One line of a file, quoted for a message: no newline, bounded, tabs as
 * spaces. skip leading bytes are shown as "..." (to reach a difference).
 */
static void add_quoted(struct sb *sb, const char *s, size_t len, size_t skip)
{
	size_t i;

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	while (len && !skip && (*s == ' ' || *s == '\t'))
		s++, len--;
	sb_addch(sb, '"');
	if (skip && skip < len) {
		sb_adds(sb, "...");
		s += skip;
		len -= skip;
	}
	for (i = 0; i < len && i < 72; i++)
		sb_addch(sb, s[i] == '\t'		    ? ' '
			     : isprint((unsigned char)s[i]) ? s[i]
							    : '?');
	if (len > 72)
		sb_adds(sb, "...");
	sb_addch(sb, '"');
}

/* Where to start showing two long lines so their difference is seen. */
static size_t diff_window(const char *a, size_t alen, const char *b,
			  size_t blen)
{
	size_t i = 0;

	while (i < alen && i < blen && a[i] == b[i])
		i++;
	return i > 50 ? i - 30 : 0;
}

static unsigned canon_mode(unsigned m)
{
	if (S_ISLNK(m))
		return 0120000;
	if (S_ISREG(m))
		return (m & 0111) ? 0100755 : 0100644;
	return m;
}

static int read_blob(struct rv_repo *repo, const git_oid *oid, git_blob **out,
		     struct errmsg *err)
{
	if (git_blob_lookup(out, repo->git, oid) < 0)
		return rv__git_error(err, RV_ERR_REPO, "cannot read a blob");
	return 0;
}

/*
 * A binary patch: let libgit2 apply this file's section of the diff to a
 * tree holding just the pre-image, so the cost does not grow with the repo.
 */
static int apply_binary(struct pctx *c, const struct ap_file *f,
			const git_oid *pre, unsigned pre_mode, git_oid *post,
			struct errmsg *err)
{
	git_diff *diff = NULL;
	git_tree *mini = NULL, *empty = NULL;
	git_treebuilder *tb = NULL;
	git_index *idx = NULL;
	const git_index_entry *e;
	git_oid oid;
	int ret = 0;

	if (!f->binary_has_data)
		return errmsg_set(err, RV_ERR_APPLY,
				  "%s is a binary change without its data (the "
				  "patch was made without --binary)",
				  f->new_path ? f->new_path : f->old_path);
	ret = ap_binary_check(f, err);
	if (ret < 0)
		return ret;
	if (git_diff_from_buffer(&diff, f->text, f->text_len) < 0) {
		const git_error *ge = git_error_last();

		ret = errmsg_set(err, RV_ERR_INPUT,
				 "corrupt binary patch of %.200s (%s)",
				 f->new_path ? f->new_path : f->old_path,
				 ge && ge->message ? ge->message
						   : "unreadable");
		goto out;
	}
	if (git_treebuilder_new(&tb, c->repo->git, NULL) < 0 ||
	    git_treebuilder_write(&oid, tb) < 0 ||
	    git_tree_lookup(&empty, c->repo->git, &oid) < 0) {
		ret = rv__git_error(err, RV_ERR_INTERNAL, "cannot make a tree");
		goto out;
	}
	if (pre) {
		git_tree_update up = {GIT_TREE_UPDATE_UPSERT, *pre,
				      (git_filemode_t)pre_mode, f->old_path};

		if (git_tree_create_updated(&oid, c->repo->git, empty, 1, &up) <
			    0 ||
		    git_tree_lookup(&mini, c->repo->git, &oid) < 0) {
			ret = rv__git_error(err, RV_ERR_INTERNAL,
					    "cannot make a tree");
			goto out;
		}
	}
	if (git_apply_to_tree(&idx, c->repo->git, mini ? mini : empty, diff,
			      NULL) < 0) {
		const git_error *ge = git_error_last();

		ret = errmsg_set(
			err, RV_ERR_APPLY,
			"the binary patch of %.200s does not apply (%s)",
			f->new_path ? f->new_path : f->old_path,
			ge && ge->message ? ge->message : "corrupt data");
		goto out;
	}
	e = git_index_get_bypath(idx, f->new_path, 0);
	if (!e) {
		ret = errmsg_set(err, RV_ERR_APPLY,
				 "the binary patch of %.200s gave no file",
				 f->new_path);
		goto out;
	}
	git_oid_cpy(post, &e->id);
	/* Like git apply: a full post-image id on the index line must match. */
	if (strlen(f->new_idx) == GIT_OID_HEXSZ &&
	    strcmp(git_oid_tostr_s(post), f->new_idx))
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "corrupt binary patch of %.200s: the result "
				 "is not blob %.12s named on its index line",
				 f->new_path, f->new_idx);
out:
	git_index_free(idx);
	git_tree_free(mini);
	git_tree_free(empty);
	git_treebuilder_free(tb);
	git_diff_free(diff);
	return ret;
}

/* git am -3 for one file: patch the blob named on the index line, merge. */
static int apply_three_way(struct pctx *c, const struct ap_file *f,
			   const char *path, bool ours_exists,
			   const git_oid *ours_oid, struct sb *out,
			   struct errmsg *err)
{
	git_oid anc_oid, short_oid;
	git_blob *anc = NULL, *ours = NULL;
	git_merge_file_input ai, oi, ti;
	git_merge_file_result res = {0};
	struct sb theirs = SB_INIT;
	struct ap_fail fail;
	size_t n = strlen(f->old_idx);
	int ret = 0;

	if (!n || strspn(f->old_idx, "0") == n || !ours_exists)
		return RV_ERR_APPLY;
	git_merge_file_input_init(&ai, GIT_MERGE_FILE_INPUT_VERSION);
	git_merge_file_input_init(&oi, GIT_MERGE_FILE_INPUT_VERSION);
	git_merge_file_input_init(&ti, GIT_MERGE_FILE_INPUT_VERSION);
	if (git_oid_fromstrn(&short_oid, f->old_idx, n) < 0 ||
	    git_odb_exists_prefix(&anc_oid, c->repo->odb, &short_oid, n) < 0)
		return errmsg_set(err, RV_ERR_APPLY,
				  "the repository lacks blob %s of %.200s for "
				  "a 3-way merge",
				  f->old_idx, path);
	if ((ret = read_blob(c->repo, &anc_oid, &anc, err)) < 0 ||
	    (ret = read_blob(c->repo, ours_oid, &ours, err)) < 0)
		goto out;
	if (ap_apply_text(f, git_blob_rawcontent(anc),
			  (size_t)git_blob_rawsize(anc), &theirs, &fail) < 0) {
		ret = RV_ERR_APPLY;
		goto out;
	}
	if (git_oid_equal(&anc_oid, ours_oid)) {
		ret = sb_add(out, theirs.buf ? theirs.buf : "", theirs.len) < 0
			      ? RV_ERR_NOMEM
			      : 0;
		goto out;
	}
	ai.ptr = git_blob_rawcontent(anc);
	ai.size = (size_t)git_blob_rawsize(anc);
	ai.path = path;
	oi.ptr = git_blob_rawcontent(ours);
	oi.size = (size_t)git_blob_rawsize(ours);
	oi.path = path;
	ti.ptr = theirs.buf ? theirs.buf : "";
	ti.size = theirs.len;
	ti.path = path;
	if (git_merge_file(&res, &ai, &oi, &ti, NULL) < 0) {
		ret = rv__git_error(err, RV_ERR_APPLY, "3-way merge failed");
		goto out;
	}
	if (!res.automergeable) {
		ret = errmsg_set(err, RV_ERR_APPLY,
				 "3-way merge has a conflict in %.200s", path);
		goto out;
	}
	if (sb_add(out, res.ptr, res.len) < 0)
		ret = RV_ERR_NOMEM;
	c->used_three_way = true;
out:
	git_merge_file_result_free(&res);
	sb_release(&theirs);
	git_blob_free(anc);
	git_blob_free(ours);
	return ret;
}

static void describe_hunk_failure(struct sb *why, const struct ap_file *f,
				  const struct ap_fail *fail)
{
	const struct ap_hunk *h = &f->hunks[fail->hunk];
	const char *path = f->old_path ? f->old_path : f->new_path;
	size_t skip = 0;

	if (fail->too_costly) {
		sb_addf(why,
			"%s hunk %zu is too costly to match (a hostile "
			"patch?); refused",
			path, fail->hunk + 1);
		return;
	}
	if (fail->corrupt_delete) {
		sb_addf(why,
			"deleting %s leaves content the patch does not remove",
			path);
		return;
	}
	sb_addf(why, "%s hunk %zu (%.*s) expected ", path, fail->hunk + 1,
		(int)h->header_len, h->header);
	if (fail->expected && fail->found)
		skip = diff_window(fail->expected, fail->expected_len,
				   fail->found, fail->found_len);
	if (fail->expected)
		add_quoted(why, fail->expected, fail->expected_len, skip);
	else
		sb_adds(why, "the end of the file");
	sb_addf(why, " at line %d, ", fail->line);
	if (fail->found) {
		sb_adds(why, "the base has ");
		add_quoted(why, fail->found, fail->found_len, skip);
	} else {
		sb_adds(why, "the base file ends before it");
	}
}

/* The id on a "Subproject commit <id>" line of the given origin, or -1. */
static int gitlink_line(const struct ap_file *f, char origin, git_oid *out)
{
	static const char tag[] = "Subproject commit ";
	size_t i, n = strlen(tag);

	for (i = 0; i < f->nlines; i++) {
		const struct ap_line *l = &f->lines[i];

		if (l->origin == origin && l->len >= n + GIT_OID_HEXSZ &&
		    !memcmp(l->text, tag, n))
			return git_oid_fromstrn(out, l->text + n,
						GIT_OID_HEXSZ);
	}
	return -1;
}

/* A submodule moved, added or removed: the diff is its commit id. */
static int apply_gitlink(struct pctx *c, const struct ap_file *f,
			 const git_oid *src, struct errmsg *err)
{
	git_oid old, new;
	const char *path = f->new_path ? f->new_path : f->old_path;

	if (src && gitlink_line(f, '-', &old) == 0 && !git_oid_equal(&old, src))
		return errmsg_set(err, RV_ERR_APPLY,
				  "submodule %.200s is at %.12s in the base, "
				  "the patch expects %.12s",
				  path, git_oid_tostr_s(src),
				  git_oid_tostr_s(&old));
	if (f->is_delete) {
		upd_set(c, f->old_path, true, false, NULL, 0);
		return 0;
	}
	if (gitlink_line(f, '+', &new) < 0) {
		if (!src || !(f->is_rename || f->is_copy || !f->nhunks))
			return errmsg_set(err, RV_ERR_INPUT,
					  "corrupt patch: submodule %.200s has "
					  "no \"Subproject commit\" line",
					  path);
		git_oid_cpy(&new, src);
	}
	if (f->is_rename)
		upd_set(c, f->old_path, true, false, NULL, 0);
	upd_set(c, f->new_path, false, f->is_new, &new, GIT_FILEMODE_COMMIT);
	return 0;
}

/* Do the blob ids on the index line differ (a content change)? */
static bool index_says_changed(const struct ap_file *f)
{
	size_t a = strlen(f->old_idx), b = strlen(f->new_idx);

	if (!a || !b)
		return false;
	return strncmp(f->old_idx, f->new_idx, a < b ? a : b) != 0;
}

/* Does some file of the patch delete or rename away path? */
static bool removed_by_patch(const struct ap_patch *ap, const char *path)
{
	size_t i;

	for (i = 0; i < ap->nfiles; i++)
		if ((ap->files[i].is_delete || ap->files[i].is_rename) &&
		    ap->files[i].old_path &&
		    !strcmp(ap->files[i].old_path, path))
			return true;
	return false;
}

/*
 * Look up what f changes in the base: its pre-image (into *src_oid,
 * *src_mode and *have_src) must be there with the type the patch
 * expects, and a path it creates must not be there yet; neither may be
 * reached through a symlinked directory.
 */
static int check_base_paths(struct pctx *c, const struct ap_file *f,
			    git_oid *src_oid, unsigned *src_mode,
			    bool *have_src, struct errmsg *err)
{
	git_oid dst_oid;
	unsigned dst_mode = 0;
	int found;

	memset(src_oid, 0, sizeof(*src_oid));
	*src_mode = 0;
	*have_src = false;
	if (f->old_path && !f->is_new) {
		found = lookup(c, f->old_path, true, src_oid, src_mode, err);
		if (found < 0)
			return found;
		if (!found)
			return errmsg_set(err, RV_ERR_APPLY,
					  "%.200s does not exist in the base",
					  f->old_path);
		*have_src = true;
		if (*src_mode == GIT_FILEMODE_TREE)
			return errmsg_set(
				err, RV_ERR_APPLY,
				"%.200s is a directory in the base, not a file",
				f->old_path);
		if (f->old_mode && ((f->old_mode ^ *src_mode) & S_IFMT))
			return errmsg_set(err, RV_ERR_APPLY,
					  "%.200s has the wrong type in the "
					  "base (%o, the patch expects %o)",
					  f->old_path, *src_mode, f->old_mode);
	}
	if (f->new_path && !f->is_delete &&
	    (f->is_new || f->is_rename || f->is_copy)) {
		found = lookup(c, f->new_path, false, &dst_oid, &dst_mode, err);
		if (found < 0)
			return found;
		if (found && !removed_by_patch(c->ap, f->new_path))
			return errmsg_set(err, RV_ERR_APPLY,
					  "%.200s already exists in the base",
					  f->new_path);
	} else if (f->new_path && !f->is_delete) {
		/* Same path: still refuse a write through a symlinked dir. */
		found = lookup(c, f->new_path, false, &dst_oid, &dst_mode, err);
		if (found < 0)
			return found;
	}
	return 0;
}

/*
 * The post-image of f's text hunks on the base's blob (none: an empty
 * file) into content, falling back to a 3-way merge when c asks for it.
 * Returns 0, or the error with the failed hunk described in c->why.
 */
static int patch_text(struct pctx *c, const struct ap_file *f, bool have_src,
		      const git_oid *src_oid, struct sb *content,
		      struct errmsg *err)
{
	git_blob *blob = NULL;
	struct ap_fail fail;
	int ret;

	if (have_src && (ret = read_blob(c->repo, src_oid, &blob, err)) < 0)
		return ret;
	/* fail points into the blob: it is freed last. */
	ret = ap_apply_text(f, blob ? git_blob_rawcontent(blob) : "",
			    blob ? (size_t)git_blob_rawsize(blob) : 0, content,
			    &fail);
	if (ret == RV_ERR_INPUT && fail.too_costly) {
		describe_hunk_failure(&c->why, f, &fail);
		ret = errmsg_set(err, RV_ERR_INPUT, "%s", sb_str(&c->why));
		goto out;
	}
	if (ret == RV_ERR_APPLY && c->three_way && !fail.corrupt_delete) {
		struct errmsg err3 = {{0}};

		sb_reset(content);
		if (apply_three_way(c, f, f->old_path ? f->old_path : "",
				    have_src, src_oid, content, &err3) == 0) {
			ret = 0;
		} else if (err3.msg[0]) {
			describe_hunk_failure(&c->why, f, &fail);
			sb_addf(&c->why, "; %s", err3.msg);
			ret = errmsg_set(err, RV_ERR_APPLY, "%s",
					 sb_str(&c->why));
			goto out;
		}
	}
	if (ret == RV_ERR_APPLY) {
		describe_hunk_failure(&c->why, f, &fail);
		ret = errmsg_set(err, RV_ERR_APPLY, "%s", sb_str(&c->why));
	} else if (ret < 0) {
		ret = errmsg_set(err, ret, "out of memory applying %.200s",
				 f->new_path ? f->new_path : f->old_path);
	}
out:
	git_blob_free(blob);
	return ret;
}

/* Apply one file of the patch; fills c->u, or err / c->why on failure. */
static int apply_file(struct pctx *c, const struct ap_file *f,
		      struct errmsg *err)
{
	git_oid src_oid, new_oid;
	unsigned src_mode, mode;
	struct sb content = SB_INIT;
	int ret;
	bool have_src;

	ret = check_base_paths(c, f, &src_oid, &src_mode, &have_src, err);
	if (ret < 0)
		return ret;
	mode = f->new_mode ? f->new_mode : have_src ? src_mode : 0100644;
	mode = canon_mode(mode);
	if (mode == GIT_FILEMODE_COMMIT ||
	    (f->is_delete && src_mode == GIT_FILEMODE_COMMIT))
		return apply_gitlink(c, f, have_src ? &src_oid : NULL, err);
	if (!f->is_delete && mode != 0100644 && mode != 0100755 &&
	    mode != 0120000)
		return errmsg_set(err, RV_ERR_INPUT,
				  "%.200s gets mode %o, which is not a file, "
				  "link or submodule",
				  f->new_path, mode);

	if (f->binary) {
		/* Like git apply: a full pre-image id must be what the base
		 * has. */
		if (have_src && strlen(f->old_idx) == GIT_OID_HEXSZ &&
		    strcmp(git_oid_tostr_s(&src_oid), f->old_idx))
			return errmsg_set(
				err, RV_ERR_APPLY,
				"the binary patch of %.200s was made against "
				"blob %.12s, the base has %.12s",
				f->old_path, f->old_idx,
				git_oid_tostr_s(&src_oid));
		if (f->is_delete) {
			upd_set(c, f->old_path, true, false, NULL, 0);
			return 0;
		}
		ret = apply_binary(c, f, have_src ? &src_oid : NULL, src_mode,
				   &new_oid, err);
		if (ret < 0)
			return ret;
		goto write;
	}
	if (!f->nhunks) {
		/* Rename, copy or mode change only; or an empty new file. */
		if (!f->is_delete && !f->is_new && index_says_changed(f))
			return errmsg_set(err, RV_ERR_INPUT,
					  "corrupt patch: the index line of "
					  "%.200s says its content changes, "
					  "but the patch has no hunks for it",
					  f->new_path);
		if (f->is_delete) {
			upd_set(c, f->old_path, true, false, NULL, 0);
			return 0;
		}
		if (have_src)
			git_oid_cpy(&new_oid, &src_oid);
		else if (git_blob_create_from_buffer(&new_oid, c->repo->git, "",
						     0) < 0)
			return rv__git_error(err, RV_ERR_REPO,
					     "cannot write a blob");
		goto write;
	}
	sb_init(&content, 0);
	ret = patch_text(c, f, have_src, &src_oid, &content, err);
	if (ret < 0)
		goto out;
	if (f->is_delete) {
		upd_set(c, f->old_path, true, false, NULL, 0);
		goto out;
	}
	if (git_blob_create_from_buffer(&new_oid, c->repo->git,
					content.buf ? content.buf : "",
					content.len) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "cannot write a blob");
		goto out;
	}
write:
	if (f->is_rename)
		upd_set(c, f->old_path, true, false, NULL, 0);
	upd_set(c, f->new_path, false, f->is_new, &new_oid, mode);
out:
	sb_release(&content);
	return ret;
}

/* ---- one patch, then the series ------------------------------------ */

static const char *patch_title(const struct mp_patch *p)
{
	const char *t = mp_patch_title(p);

	return t ? t : "(no subject)";
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Count the trees the patch just wrote (root is its new root: the
 * directories above every file it changed, each once) against the cap.
 */
static int count_trees(struct pctx *c, const git_oid *root, struct errmsg *err)
{
	git_tree *t = NULL;
	char **dirs = NULL;
	size_t nd = 0, ad = 0, i, big = 0;
	int ret = 0;

	for (i = 0; i < c->nu; i++) {
		const char *p = c->u[i].path, *slash;

		for (slash = strchr(p, '/'); slash;
		     slash = strchr(slash + 1, '/')) {
			ALLOC_GROW(dirs, nd + 1, ad);
			dirs[nd++] = xstrndup(p, (size_t)(slash - p));
		}
	}
	if (nd)
		qsort(dirs, nd, sizeof(*dirs), by_str);
	if (nd && git_tree_lookup(&t, c->repo->git, root) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "cannot read a new tree");
		goto out;
	}
	for (i = 0; i <= nd; i++) {
		git_tree_entry *e = NULL;
		const git_oid *oid = root;
		size_t len = 0;
		git_object_t type;

		if (i && (i > 1 && !strcmp(dirs[i - 1], dirs[i - 2])))
			continue;
		if (i && git_tree_entry_bypath(&e, t, dirs[i - 1]) < 0)
			continue; /* a directory the patch emptied */
		if (e)
			oid = git_tree_entry_id(e);
		if (git_odb_read_header(&len, &type, c->repo->odb, oid) == 0) {
			c->tree_bytes += len;
			if (len > big)
				big = len;
		}
		git_tree_entry_free(e);
	}
	if (c->tree_bytes > RV_APPLY_MAX_TREE_BYTES)
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the series rewrites more than %zu MB of "
				 "directory listings (one of %zu KB with this "
				 "patch); apply it in parts",
				 RV_APPLY_MAX_TREE_BYTES >> 20, big >> 10);
out:
	for (i = 0; i < nd; i++)
		free(dirs[i]);
	free(dirs);
	git_tree_free(t);
	return ret;
}

static int patch_apply(struct pctx *c, const struct mp_patch *mp,
		       git_oid *tree_out, struct errmsg *err)
{
	struct ap_patch ap;
	struct sb diff = SB_INIT;
	git_tree_update *ups = NULL;
	size_t i;
	int ret;

	upd_clear(c);
	sb_reset(&c->why);
	c->used_three_way = false;
	if (!mp->diff || !mp->diff_len)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the mail has no diff in it");
	/* Own copy ending in a newline, so every hunk line has one. */
	sb_init(&diff, 0);
	if (sb_add(&diff, mp->diff, mp->diff_len) < 0 ||
	    (diff.buf[diff.len - 1] != '\n' && sb_addch(&diff, '\n') < 0)) {
		ret = errmsg_set(err, RV_ERR_NOMEM, "the diff is too large");
		goto out_nodiff;
	}
	ret = ap_patch_parse(&ap, diff.buf, diff.len, err);
	if (ret < 0)
		goto out_nodiff;
	c->ap = &ap;
	for (i = 0; i < ap.nfiles; i++) {
		ret = apply_file(c, &ap.files[i], err);
		if (ret < 0)
			goto out;
	}
	ups = xcalloc(c->nu ? c->nu : 1, sizeof(*ups));
	for (i = 0; i < c->nu; i++) {
		ups[i].action = c->u[i].remove ? GIT_TREE_UPDATE_REMOVE
					       : GIT_TREE_UPDATE_UPSERT;
		git_oid_cpy(&ups[i].id, &c->u[i].oid);
		ups[i].filemode = (git_filemode_t)c->u[i].mode;
		ups[i].path = c->u[i].path;
	}
	if (git_tree_create_updated(tree_out, c->repo->git, c->tree, c->nu,
				    ups) < 0)
		ret = rv__git_error(err, RV_ERR_APPLY,
				    "cannot build the patched tree");
	else
		ret = count_trees(c, tree_out, err);
out:
	free(ups);
	ap_patch_release(&ap);
out_nodiff:
	sb_release(&diff);
	return ret;
}

static int make_commit(struct rv_repo *repo, const struct mp_patch *mp,
		       const git_oid *tree_oid, const git_oid *parent_oid,
		       git_oid *out, struct errmsg *err)
{
	git_signature *author = NULL, *committer = NULL;
	const git_oid *parents[1];
	struct sb msg = SB_INIT;
	int ret = 0;
	git_time_t when = mp->timestamp > 0 ? (git_time_t)mp->timestamp : 0;

	if (git_signature_new(&author,
			      mp->author_name && *mp->author_name
				      ? mp->author_name
				      : "Unknown",
			      mp->author_email ? mp->author_email : "", when,
			      mp->tz_offset) < 0 &&
	    git_signature_new(&author, "Unknown", "", when, 0) < 0) {
		ret = rv__git_error(err, RV_ERR_INPUT, "bad author");
		goto out;
	}
	/* Committer time = author time: the same series gives the same ids. */
	if (git_signature_new(&committer, "quorum", "quorum@localhost", when,
			      mp->tz_offset) < 0 &&
	    git_signature_new(&committer, "quorum", "quorum@localhost", when,
			      0) < 0) {
		ret = rv__git_error(err, RV_ERR_INTERNAL, "bad committer");
		goto out;
	}
	sb_init(&msg, 0);
	if (mp->commit_message && *mp->commit_message)
		sb_adds(&msg, mp->commit_message);
	else
		sb_adds(&msg, patch_title(mp));
	if (!msg.len || msg.buf[msg.len - 1] != '\n')
		sb_addch(&msg, '\n');
	/* By ids: the tree (a directory of thousands) is not parsed again. */
	parents[0] = parent_oid;
	if (git_commit_create_from_ids(out, repo->git, NULL, author, committer,
				       NULL, sb_str(&msg), tree_oid, 1,
				       parents) < 0)
		ret = rv__git_error(err, RV_ERR_REPO, "cannot make a commit");
out:
	sb_release(&msg);
	git_signature_free(author);
	git_signature_free(committer);
	return ret;
}

static int patch_number(const struct mp_series *s, size_t k)
{
	const struct mp_patch *p = s->patches[k];

	return p->subject.index > 0 ? p->subject.index : (int)k + 1;
}

static int series_total(const struct mp_series *s)
{
	return s->total > 0 ? s->total : (int)s->npatches;
}

/* Apply mp on c->tree and make its commit on parent cur. */
static int apply_step(struct pctx *c, const struct mp_patch *mp,
		      const git_oid *cur, git_oid *tree_oid,
		      git_oid *commit_oid, struct errmsg *err)
{
	int ret = patch_apply(c, mp, tree_oid, err);

	if (ret == 0)
		ret = make_commit(c->repo, mp, tree_oid, cur, commit_oid, err);
	return ret;
}

/* Move on to the commit just made: the next patch applies to its tree. */
static int advance(struct pctx *c, git_oid *cur, const git_oid *tree_oid,
		   const git_oid *commit_oid, struct errmsg *err)
{
	git_oid_cpy(cur, commit_oid);
	git_tree_free(c->tree);
	c->tree = NULL;
	if (git_tree_lookup(&c->tree, c->repo->git, tree_oid) < 0)
		return rv__git_error(err, RV_ERR_REPO,
				     "cannot read a new tree");
	return 0;
}

static const char *series_title(const struct mp_series *s)
{
	const struct mp_patch *p = mp_series_first(s);

	/* mp_series_title() skips an untouched cover letter subject. */
	return !p		    ? "(empty series)"
	       : mp_series_title(s) ? mp_series_title(s)
				    : patch_title(p);
}

/*
 * Apply the prerequisite series on c->tree / *cur, in order.
 * On failure why gets one sentence: which series and patch did not
 * apply, or (RV_ERR_REPO) what could not be read.
 */
static int apply_prereqs(struct pctx *c, const struct rv_apply_opts *opts,
			 git_oid *cur, struct rv_apply_result *r,
			 struct sb *why)
{
	git_oid tree_oid, commit_oid;
	size_t i, k;
	int ret;

	for (i = 0; i < opts->nprereqs; i++) {
		const struct mp_series *ps = opts->prereqs[i];

		for (k = 0; ps && k < ps->npatches; k++) {
			const struct mp_patch *mp = ps->patches[k];
			struct errmsg perr = {{0}};

			if (!mp)
				continue;
			if (opts->deadline_at > 0 &&
			    rv_now() > opts->deadline_at) {
				sb_adds(why,
					"the deadline passed while applying "
					"the prerequisite series");
				return RV_ERR_DEADLINE;
			}
			ret = apply_step(c, mp, cur, &tree_oid, &commit_oid,
					 &perr);
			if (ret < 0) {
				sb_addf(why,
					"prerequisite series '%.80s' patch "
					"%d/%d \"%.120s\" does not apply: %s",
					series_title(ps), patch_number(ps, k),
					series_total(ps), patch_title(mp),
					perr.msg);
				return ret;
			}
			ret = advance(c, cur, &tree_oid, &commit_oid, &perr);
			if (ret < 0) {
				sb_adds(why, perr.msg);
				return ret;
			}
			r->nprereq_patches++;
		}
	}
	return 0;
}

/* Apply every present patch on base into r (already allocated). */
static int apply_on(struct rv_repo *repo, const git_oid *base,
		    const struct mp_series *s, const struct rv_apply_opts *opts,
		    struct rv_apply_result *r, struct errmsg *err)
{
	struct pctx c = {0};
	git_commit *commit = NULL;
	git_oid cur_commit, tree_oid, commit_oid;
	struct sb pwhy = SB_INIT;
	size_t k, slot = 0;
	int ret = 0;

	c.repo = repo;
	c.three_way = opts->three_way;
	sb_init(&c.why, 4096);
	git_oid_tostr(r->base_id, sizeof(r->base_id), base);
	if (git_commit_lookup(&commit, repo->git, base) < 0 ||
	    git_commit_tree(&c.tree, commit) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "cannot read the base");
		goto out;
	}
	git_oid_cpy(&cur_commit, base);
	r->failed = -1;
	r->nprereq_patches = 0;
	sb_init(&pwhy, 1024);
	ret = apply_prereqs(&c, opts, &cur_commit, r, &pwhy);
	if (ret == RV_ERR_REPO || ret == RV_ERR_NOMEM) {
		errmsg_set(err, ret, "%s", sb_str(&pwhy));
		goto out;
	}
	if (ret == 0)
		git_oid_tostr(r->start_id, sizeof(r->start_id), &cur_commit);
	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *mp = s->patches[k];
		struct rv_patch_result *pr;
		struct errmsg perr = {{0}};

		if (!mp)
			continue;
		pr = &r->patches[slot++];
		pr->index = patch_number(s, k);
		if (ret < 0) {
			/* A prerequisite failed: the first patch says which. */
			if (slot == 1 && pwhy.len) {
				pr->error = xstrdup_or_null(sb_str(&pwhy));
				r->failed = 0;
				errmsg_set(err, ret, "%s", sb_str(&pwhy));
			}
			continue; /* after a failure: listed, not tried */
		}
		if (opts->deadline_at > 0 && rv_now() > opts->deadline_at) {
			ret = errmsg_set(err, RV_ERR_DEADLINE,
					 "the deadline passed while applying "
					 "the series, before patch %d/%d",
					 pr->index, series_total(s));
			pr->error = xstrdup_or_null(err ? err->msg : "");
			r->failed = (int)(slot - 1);
			continue;
		}
		ret = apply_step(&c, mp, &cur_commit, &tree_oid, &commit_oid,
				 &perr);
		if (ret < 0) {
			char buf[sizeof(perr.msg) + 300];

			snprintf(buf, sizeof(buf),
				 "patch %d/%d \"%.120s\" does not apply: %s",
				 pr->index, series_total(s), patch_title(mp),
				 perr.msg);
			pr->error = xstrdup_or_null(buf);
			r->failed = (int)(slot - 1);
			errmsg_set(err, ret, "%s", buf);
			continue;
		}
		pr->applied = true;
		pr->three_way = c.used_three_way;
		git_oid_tostr(pr->tree_id, sizeof(pr->tree_id), &tree_oid);
		git_oid_tostr(pr->commit_id, sizeof(pr->commit_id),
			      &commit_oid);
		ret = advance(&c, &cur_commit, &tree_oid, &commit_oid, err);
		if (ret < 0)
			goto out;
	}
out:
	sb_release(&pwhy);
	upd_clear(&c);
	free(c.u);
	sb_release(&c.why);
	git_tree_free(c.tree);
	git_commit_free(commit);
	return ret;
}

static void result_reset(struct rv_apply_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < r->npatches; i++)
		free(r->patches[i].error);
	memset(r->patches, 0, n * sizeof(*r->patches));
	r->npatches = n;
	r->failed = -1;
}

/* Every prerequisite-patch-id of the series, from the cover or any patch. */
static void collect_prereqs(const struct mp_series *s, char ***ids, size_t *n)
{
	size_t k, i;

	*ids = NULL;
	*n = 0;
	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *p = k ? s->patches[k - 1] : s->cover;

		if (!p)
			continue;
		for (i = 0; i < p->nprereq_patch_ids; i++) {
			*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
			(*ids)[(*n)++] = p->prereq_patch_ids[i];
		}
	}
}

static const char *series_base_commit(const struct mp_series *s)
{
	size_t k;

	if (s->cover && s->cover->base_commit)
		return s->cover->base_commit;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k] && s->patches[k]->base_commit)
			return s->patches[k]->base_commit;
	return NULL;
}

static const char *source_name(enum rv_base_source src)
{
	switch (src) {
	case RV_BASE_OPTION:
		return "--base";
	case RV_BASE_SERIES:
		return "base-commit";
	case RV_BASE_BRANCH:
		return "the list's branch";
	case RV_BASE_HEAD:
		return "HEAD";
	case RV_BASE_PARENT:
		return "the parent commit";
	}
	return "?";
}

/* "; on top of prerequisite series 'A' (2 patches) from ..." */
static void add_prereq_note(struct sb *note, const struct rv_apply_opts *opts)
{
	size_t i, n;

	for (i = n = 0; i < opts->nprereqs; i++) {
		const struct mp_series *ps = opts->prereqs[i];
		size_t k, np = 0;

		if (!ps)
			continue;
		for (k = 0; k < ps->npatches; k++)
			np += ps->patches[k] != NULL;
		sb_addf(note, "%s'%.80s' (%zu patch%s)",
			!n ? "; on top of prerequisite series "
			: i + 1 == opts->nprereqs ? " and "
						  : ", ",
			series_title(ps), np, np == 1 ? "" : "es");
		n++;
	}
	if (n)
		sb_adds(note, " from the same input");
}

/* A prerequisite-patch-id the caller's prereqs carry is not missing. */
static void given_prereqs(const struct rv_apply_opts *opts, char *const *ids,
			  size_t nids, bool *missing)
{
	char pid[RV_OID_HEXSZ + 1];
	size_t i, k, j;

	for (i = 0; i < opts->nprereqs; i++) {
		const struct mp_series *ps = opts->prereqs[i];

		for (k = 0; ps && k < ps->npatches; k++) {
			const struct mp_patch *mp = ps->patches[k];

			if (!mp || !mp->diff ||
			    rv_patch_id(mp->diff, mp->diff_len, pid) < 0)
				continue;
			for (j = 0; j < nids; j++)
				if (!strncasecmp(ids[j], pid, RV_OID_HEXSZ))
					missing[j] = false;
		}
	}
}

/* Does a series of the caller's prereqs hold the message id? */
static bool given_msgid(const struct rv_apply_opts *opts, const char *id)
{
	size_t i;

	for (i = 0; i < opts->nprereqs; i++)
		if (mp_series_has_msgid(opts->prereqs[i], id))
			return true;
	return false;
}

/*
 * "<a@b>, <c@d>": the prerequisite-message-ids of s that were not
 * applied first (no series of opts->prereqs holds them), each once; ids
 * that are no printable ASCII are left out.
 */
static void missing_msgids(const struct mp_series *s,
			   const struct rv_apply_opts *opts, struct sb *out)
{
	size_t k, i;

	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *p = k ? s->patches[k - 1] : s->cover;

		for (i = 0; p && i < p->nprereq_message_ids; i++) {
			const char *id = p->prereq_message_ids[i];
			const char *c;
			char *shown = NULL;

			for (c = id; *c > ' ' && *c < 0x7f; c++)
				;
			if (*c || !*id || strlen(id) > 250 ||
			    given_msgid(opts, id) ||
			    asprintf(&shown, "<%s>", id) < 0)
				continue;
			if (!strstr(sb_str(out), shown))
				sb_addf(out, "%s%s", out->len ? ", " : "",
					shown);
			free(shown);
		}
	}
}

struct cand {
	enum rv_base_source src;
	const char *rev;
	git_oid oid;
};

/* A ref component from change-id, else a hash of the message-id. */
static void ref_id(const struct mp_series *s, struct sb *out)
{
	const struct mp_patch *p = s->cover;
	const char *cid = NULL, *mid = NULL;
	size_t k, i, n;
	git_oid h;

	for (k = 0; !p && k < s->npatches; k++)
		p = s->patches[k];
	if (p) {
		cid = p->change_id;
		mid = p->message_id;
	}
	for (k = 0; !cid && k < s->npatches; k++)
		if (s->patches[k])
			cid = s->patches[k]->change_id;
	if (cid) {
		n = strlen(cid);
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)cid[i]) && cid[i] != '-' &&
			    cid[i] != '_')
				break;
		if (n && n <= 64 && i == n) {
			sb_adds(out, cid);
			return;
		}
	}
	if (!mid)
		mid = "";
	git_odb_hash(&h, mid, strlen(mid), GIT_OBJECT_BLOB);
	sb_add(out, git_oid_tostr_s(&h), 20);
}

static int store_ref(struct rv_repo *repo, const struct mp_series *s,
		     const char *commit_hex, struct errmsg *err)
{
	struct sb name = SB_INIT;
	git_reference *ref = NULL;
	git_oid oid;
	int ret;

	ret = rv__repo_flush(repo, err);
	if (ret < 0)
		return ret;
	sb_init(&name, 512);
	sb_adds(&name, "refs/quorum/");
	ref_id(s, &name);
	sb_addf(&name, "/v%d", s->version > 0 ? s->version : 1);
	git_oid_fromstr(&oid, commit_hex);
	if (git_reference_create(&ref, repo->git, sb_str(&name), &oid, 1,
				 "quorum apply") < 0)
		ret = rv__git_error(err, RV_ERR_REPO, "cannot store the ref");
	git_reference_free(ref);
	sb_release(&name);
	return ret;
}

/*
 * The bases to try, in order, into cands (room for 3): --base alone, else
 * the series' base-commit: (or its first prerequisite's), the list's
 * branch and HEAD, each commit once. What was passed over goes to note.
 * Returns 0, or RV_ERR_REPO when there is none.
 */
static int choose_bases(struct rv_repo *repo, const struct mp_series *s,
			const struct rv_apply_opts *opts, struct cand *cands,
			size_t *ncand, struct sb *note, struct errmsg *err)
{
	const char *revs[3];
	enum rv_base_source srcs[3] = {RV_BASE_SERIES, RV_BASE_BRANCH,
				       RV_BASE_HEAD};
	char hex[RV_OID_HEXSZ + 1];
	const char *bc;
	size_t i, j;
	int ret;

	*ncand = 0;
	if (opts->base) {
		ret = rv_repo_resolve(repo, opts->base, hex, err);
		if (ret < 0)
			return ret;
		cands[0].src = RV_BASE_OPTION;
		cands[0].rev = opts->base;
		git_oid_fromstr(&cands[0].oid, hex);
		*ncand = 1;
		return 0;
	}
	bc = series_base_commit(s);
	/* b4 drops the cover: the prerequisites' may have survived. */
	for (i = 0; !bc && i < opts->nprereqs; i++)
		if (opts->prereqs[i])
			bc = series_base_commit(opts->prereqs[i]);
	revs[0] = bc;
	revs[1] = opts->branch;
	revs[2] = "HEAD";
	for (i = 0; i < 3; i++) {
		struct errmsg e2;
		struct cand *c = &cands[*ncand];

		if (!revs[i])
			continue;
		/* base-commit must be a full id, not a ref name. */
		if (i == 0 && (strlen(bc) < 7 || strlen(bc) > 40 ||
			       strspn(bc, "0123456789abcdef") != strlen(bc))) {
			sb_addf(note, "base-commit %.40s is not an id; ", bc);
			continue;
		}
		if (rv_repo_resolve(repo, revs[i], hex, &e2) < 0) {
			sb_addf(note, "%s %.40s is not in the repository; ",
				source_name(srcs[i]), revs[i]);
			continue;
		}
		c->src = srcs[i];
		c->rev = revs[i];
		git_oid_fromstr(&c->oid, hex);
		for (j = 0; j < *ncand; j++)
			if (git_oid_equal(&cands[j].oid, &c->oid))
				break;
		if (j == *ncand)
			(*ncand)++;
	}
	if (!*ncand)
		return errmsg_set(
			err, RV_ERR_REPO,
			"no base to apply on: %sthe repository has no HEAD",
			sb_str(note));
	return 0;
}

/* What trying the bases gave. */
struct base_tries {
	/* The result on the base that took the series, else on the first. */
	struct rv_apply_result *best;
	int first_ret;		 /* the first base's status */
	struct errmsg first_err; /* ... and its sentence */
	struct sb tried;	 /* "did not apply on X; " for each failure */
	size_t ntried;
};

/*
 * Apply on each base in turn until one takes the whole series. An input
 * or safety error ends the search: it does not depend on the base.
 */
static void try_bases(struct rv_repo *repo, const struct mp_series *s,
		      const struct rv_apply_opts *opts,
		      const struct cand *cands, size_t ncand, size_t npresent,
		      struct base_tries *t)
{
	size_t i;

	for (i = 0; i < ncand; i++) {
		struct rv_apply_result *r = xcalloc(1, sizeof(*r));
		struct errmsg e2 = {{0}};
		int ret;

		r->patches = xcalloc(npresent, sizeof(*r->patches));
		result_reset(r, npresent);
		r->base_source = cands[i].src;
		ret = apply_on(repo, &cands[i].oid, s, opts, r, &e2);
		if (ret == 0) {
			rv_apply_result_free(t->best);
			t->best = r;
			return;
		}
		if (!t->best) {
			t->best = r;
			t->first_ret = ret;
			t->first_err = e2;
		} else {
			rv_apply_result_free(r);
		}
		t->ntried++;
		sb_addf(&t->tried, "did not apply on %s %.12s; ",
			source_name(cands[i].src),
			git_oid_tostr_s(&cands[i].oid));
		if (ret != RV_ERR_APPLY)
			return;
	}
}

/* The note on the base: what was tried, what was used (ret: the status). */
static void note_bases(struct sb *note, const struct base_tries *t, int ret,
		       const struct rv_apply_opts *opts)
{
	const struct rv_apply_result *best = t->best;

	if (ret == 0 || t->ntried > 1)
		sb_adds(note, sb_str(&t->tried));
	if (ret == 0)
		sb_addf(note, "used %s %.12s", source_name(best->base_source),
			best->base_id);
	else if (t->ntried > 1)
		sb_addf(note, "reported against %s %.12s",
			source_name(best->base_source), best->base_id);
	else
		sb_addf(note, "tried %s %.12s only",
			source_name(best->base_source), best->base_id);
	add_prereq_note(note, opts);
}

/* The failed patch's error and the one returned get "(missing ...)". */
static void blame_missing_prereq(struct base_tries *t, const char *what)
{
	struct rv_patch_result *pr = &t->best->patches[t->best->failed];
	char *e = NULL;

	if (asprintf(&e, "%s (missing prerequisite %s)",
		     pr->error ? pr->error : "", what) < 0)
		return;
	free(pr->error);
	pr->error = e;
	errmsg_set(&t->first_err, t->first_ret, "%s", e);
}

/*
 * The series failed: are prerequisite-patch-id: patches missing from the
 * base (not among its last PREREQ_WALK_LIMIT commits, nor given)? Only a
 * failure pays for this walk of the history.
 */
static void explain_missing_patch_ids(struct rv_repo *repo,
				      const struct mp_series *s,
				      const struct rv_apply_opts *opts,
				      struct base_tries *t, struct sb *note)
{
	char **prereqs = NULL;
	size_t nprereqs = 0, nmiss = 0, k;
	bool *missing;
	git_oid boid;
	struct errmsg e3;
	struct sb m = SB_INIT, what = SB_INIT;

	collect_prereqs(s, &prereqs, &nprereqs);
	if (!nprereqs)
		return;
	missing = xcalloc(nprereqs, sizeof(*missing));
	git_oid_fromstr(&boid, t->best->base_id);
	if (rv__find_patch_ids(repo, &boid, prereqs, nprereqs, missing,
			       PREREQ_WALK_LIMIT, &e3) < 0)
		goto out;
	given_prereqs(opts, prereqs, nprereqs, missing);
	sb_init(&m, 2048);
	for (k = 0; k < nprereqs; k++)
		if (missing[k])
			sb_addf(&m, "%s%.40s", nmiss++ ? ", " : "", prereqs[k]);
	if (nmiss) {
		sb_addf(note,
			"; prerequisite patch-id %s not among the last %d "
			"commits of the base",
			sb_str(&m), PREREQ_WALK_LIMIT);
		sb_addf(&what, "patch-id %s", sb_str(&m));
		blame_missing_prereq(t, sb_str(&what));
	}
out:
	sb_release(&what);
	sb_release(&m);
	free(missing);
	free(prereqs);
}

/* The same for prerequisite-message-id: series that were not given. */
static void explain_missing_msgids(const struct mp_series *s,
				   const struct rv_apply_opts *opts,
				   struct base_tries *t, struct sb *note)
{
	struct sb m = SB_INIT;

	sb_init(&m, 4096);
	missing_msgids(s, opts, &m);
	if (m.len) {
		sb_addf(note, "; prerequisite %s not applied first",
			sb_str(&m));
		blame_missing_prereq(t, sb_str(&m));
	}
	sb_release(&m);
}

static size_t present_patches(const struct mp_series *s)
{
	size_t k, n = 0;

	for (k = 0; k < s->npatches; k++)
		n += s->patches[k] != NULL;
	return n;
}

int rv_apply_series(struct rv_apply_result **out, struct rv_repo *repo,
		    const struct mp_series *s, const struct rv_apply_opts *opts,
		    struct errmsg *err)
{
	static const struct rv_apply_opts defaults = RV_APPLY_OPTS_INIT;
	struct base_tries t = {.tried = SB_INIT};
	struct cand cands[3];
	struct sb note = SB_INIT;
	size_t ncand, npresent;
	int ret;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!repo || !s)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "no repository or series");
	npresent = present_patches(s);
	if (!npresent)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the series has no patches to apply");
	sb_init(&note, 4096);
	ret = choose_bases(repo, s, opts, cands, &ncand, &note, err);
	if (ret < 0)
		goto out;
	try_bases(repo, s, opts, cands, ncand, npresent, &t);
	ret = t.best->failed < 0 ? 0 : t.first_ret;
	note_bases(&note, &t, ret, opts);
	if (t.best->failed >= 0) {
		explain_missing_patch_ids(repo, s, opts, &t, &note);
		explain_missing_msgids(s, opts, &t, &note);
	}
	t.best->base_note = xstrdup_or_null(sb_str(&note));
	if (ret < 0) {
		if (err)
			*err = t.first_err;
	} else if (opts->store_refs) {
		ret = store_ref(repo, s,
				t.best->patches[t.best->npatches - 1].commit_id,
				err);
	}
	*out = t.best;
	t.best = NULL;
out:
	rv_apply_result_free(t.best);
	sb_release(&note);
	sb_release(&t.tried);
	return ret;
}

void rv_apply_result_free(struct rv_apply_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->npatches; i++)
		free(r->patches[i].error);
	free(r->patches);
	free(r->base_note);
	free(r);
}
