// SPDX-License-Identifier: GPL-2.0-or-later
/* Placeholder until the pipeline lands (same session). */
#include <stdlib.h>
#include "review.h"

int rv_review_series(struct rv_review **out, struct rv_repo *repo,
		     const struct mp_series *s, const struct rv_review_opts *opts,
		     struct errmsg *err)
{
	*out = NULL;
	return errmsg_set(err, RV_ERR_INTERNAL, "not implemented");
}

void rv_review_free(struct rv_review *r)
{
	free(r);
}

int rv_report_text(const struct rv_review *r, struct sb *out)
{
	return 0;
}
