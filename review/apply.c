// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the apply work. */
#include <stdlib.h>
#include "review.h"

int rv_repo_open(struct rv_repo **out, const char *path, struct errmsg *err)
{
	*out = NULL;
	return errmsg_set(err, RV_ERR_REPO, "not implemented");
}

void rv_repo_free(struct rv_repo *repo)
{
}

int rv_repo_resolve(struct rv_repo *repo, const char *rev,
		    char out[RV_OID_HEXSZ + 1], struct errmsg *err)
{
	return errmsg_set(err, RV_ERR_REPO, "not implemented");
}

int rv_repo_read_file(struct rv_repo *repo, const char *tree_or_commit,
		      const char *path, struct sb *out, struct errmsg *err)
{
	return errmsg_set(err, RV_ERR_REPO, "not implemented");
}

int rv_apply_series(struct rv_apply_result **out, struct rv_repo *repo,
		    const struct mp_series *s, const struct rv_apply_opts *opts,
		    struct errmsg *err)
{
	*out = NULL;
	return errmsg_set(err, RV_ERR_INTERNAL, "not implemented");
}

void rv_apply_result_free(struct rv_apply_result *r)
{
	free(r);
}
