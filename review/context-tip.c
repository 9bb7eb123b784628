// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * context-tip.c - the combined diff of a whole series, from its base to the
 * tip's tree, so the models also review what the series leaves behind
 * once every patch is in.
 */
#include <git2.h>

#include "apply-int.h"
#include "llm.h"

static int lookup_tree(git_repository *git, const char *hex, git_tree **out)
{
	git_object *obj = NULL, *peeled = NULL;
	git_oid oid;
	int ret = -1;

	*out = NULL;
	if (!hex || !*hex || git_oid_fromstr(&oid, hex) < 0 ||
	    git_object_lookup(&obj, git, &oid, GIT_OBJECT_ANY) < 0)
		return -1;
	if (git_object_peel(&peeled, obj, GIT_OBJECT_TREE) == 0) {
		*out = (git_tree *)peeled;
		ret = 0;
	}
	git_object_free(obj);
	return ret;
}

int rv_tree_diff(struct rv_repo *repo, const char *old_tree,
		 const char *new_tree, struct sb *out)
{
	git_diff_options o;
	git_tree *a = NULL, *b = NULL;
	git_diff *d = NULL;
	git_buf buf = {0};
	int ret = RV_ERR_REPO;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (!repo || lookup_tree(repo->git, old_tree, &a) < 0 ||
	    lookup_tree(repo->git, new_tree, &b) < 0)
		goto out;
	o.context_lines = 3;
	if (git_diff_tree_to_tree(&d, repo->git, a, b, &o) < 0)
		goto out;
	/* Renames shown as renames, as format-patch -M would. */
	git_diff_find_similar(d, NULL);
	if (git_diff_to_buf(&buf, d, GIT_DIFF_FORMAT_PATCH) < 0)
		goto out;
	ret = sb_add(out, buf.ptr ? buf.ptr : "", buf.size) < 0 ? RV_ERR_INPUT
								: 0;
out:
	git_buf_dispose(&buf);
	git_diff_free(d);
	git_tree_free(a);
	git_tree_free(b);
	return ret;
}
