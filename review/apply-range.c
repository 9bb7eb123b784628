// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-range.c - the commits of a range A..B as patches, for `quorum ci`:
 * each non-merge commit becomes the mail git format-patch would write.
 */
#include <stdlib.h>
#include <string.h>

#include "apply-int.h"

/* The commits of a CI range; more is a mistake, not a push. */
#define RV_RANGE_MAX_COMMITS 100000

static int git_fail(struct errmsg *err, int code, const char *what)
{
	const git_error *e = git_error_last();

	return errmsg_set(err, code, "%s: %s", what,
			  e && e->message ? e->message : "unknown error");
}

/* The commit that the revision rev[0..len) names, in *out. 0 or -1. */
static int side_oid(struct rv_repo *repo, const char *rev, size_t len,
		    git_oid *out)
{
	git_object *obj = NULL, *c = NULL;
	char *spec = strndup(rev, len);
	int ret = -1;

	if (!spec)
		return -1;
	if (git_revparse_single(&obj, repo->git, spec) == 0 &&
	    git_object_peel(&c, obj, GIT_OBJECT_COMMIT) == 0) {
		git_oid_cpy(out, git_object_id(c));
		ret = 0;
	}
	git_object_free(c);
	git_object_free(obj);
	free(spec);
	return ret;
}

void rv_range_release(struct rv_range *r)
{
	free(r->ids);
	memset(r, 0, sizeof(*r));
}

int rv_range_commits(struct rv_range *out, struct rv_repo *repo,
		     const char *range, struct errmsg *err)
{
	git_revwalk *walk = NULL;
	git_oid oid, from, to;
	const char *dots;
	size_t alloc = 0;
	int ret = 0, gr;

	memset(out, 0, sizeof(*out));
	dots = strstr(range, "..");
	if (!dots || dots == range || !dots[2] || dots[2] == '.' ||
	    strchr(dots + 2, '.') == dots + 2)
		return errmsg_set(err, RV_ERR_INPUT,
				  "range '%s' is not of the form A..B", range);
	if (git_revwalk_new(&walk, repo->git) < 0)
		return git_fail(err, RV_ERR_INTERNAL,
				"cannot walk the history");
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	/* Each side on its own: git_revwalk_push_range() leaks on a bad one. */
	if (side_oid(repo, range, (size_t)(dots - range), &from) < 0 ||
	    side_oid(repo, dots + 2, strlen(dots + 2), &to) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "range '%s' does not name two commits of the "
				 "repository",
				 range);
		goto out;
	}
	if (git_revwalk_push(walk, &to) < 0 ||
	    git_revwalk_hide(walk, &from) < 0) {
		ret = git_fail(err, RV_ERR_REPO, "cannot walk the history");
		goto out;
	}
	while ((gr = git_revwalk_next(&oid, walk)) == 0) {
		git_commit *c;

		if (git_commit_lookup(&c, repo->git, &oid) < 0) {
			ret = git_fail(err, RV_ERR_REPO,
				       "cannot read a commit");
			goto out;
		}
		if (git_commit_parentcount(c) != 1) {
			/* Merges (and a root commit) are no patch to review. */
			out->nmerges++;
			git_commit_free(c);
			continue;
		}
		git_commit_free(c);
		if (out->n == RV_RANGE_MAX_COMMITS) {
			ret = errmsg_set(
				err, RV_ERR_INPUT,
				"range '%s' holds more than %d commits", range,
				RV_RANGE_MAX_COMMITS);
			goto out;
		}
		if (out->n == alloc) {
			size_t na = alloc ? 2 * alloc : 64;
			void *p = realloc(out->ids, na * sizeof(*out->ids));

			if (!p) {
				ret = RV_ERR_NOMEM;
				goto out;
			}
			out->ids = p;
			alloc = na;
		}
		git_oid_tostr(out->ids[out->n++], RV_OID_HEXSZ + 1, &oid);
	}
	if (gr != GIT_ITEROVER)
		ret = git_fail(err, RV_ERR_REPO, "cannot walk the history");
out:
	git_revwalk_free(walk);
	if (ret < 0)
		rv_range_release(out);
	return ret;
}

int rv_commit_email(struct rv_repo *repo, const char *id, struct sb *mail,
		    char parent[RV_OID_HEXSZ + 1], struct errmsg *err)
{
	git_email_create_options eo;
	git_commit *c = NULL;
	git_buf buf = {0};
	git_oid oid;
	int ret = 0;

	if (git_oid_fromstr(&oid, id) < 0 ||
	    git_commit_lookup(&c, repo->git, &oid) < 0)
		return errmsg_set(err, RV_ERR_REPO, "%.12s is not a commit",
				  id);
	if (git_commit_parentcount(c) != 1) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "commit %.12s has %u parents; only a commit "
				 "with one is a patch",
				 id, git_commit_parentcount(c));
		goto out;
	}
	/* GIT_EMAIL_CREATE_OPTIONS_INIT, spelled out for -Wextra. */
	memset(&eo, 0, sizeof(eo));
	eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
	git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION);
	eo.diff_opts.flags = GIT_DIFF_SHOW_BINARY;
	git_diff_find_options_init(&eo.diff_find_opts,
				   GIT_DIFF_FIND_OPTIONS_VERSION);
	if (git_email_create_from_commit(&buf, c, &eo) < 0) {
		ret = git_fail(err, RV_ERR_REPO, "cannot format the commit");
		goto out;
	}
	git_oid_tostr(parent, RV_OID_HEXSZ + 1, git_commit_parent_id(c, 0));
	sb_add(mail, buf.ptr, buf.size);
out:
	git_buf_dispose(&buf);
	git_commit_free(c);
	return ret;
}
