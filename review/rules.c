// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the diff/rules work. */
#include "review.h"

static int rules_review(const struct rv_voter *v, const struct rv_context *ctx,
			struct rv_findings *out, struct errmsg *err)
{
	return 0;
}

const struct rv_voter rv_voter_rules = { "rules", 1.0, rules_review, NULL };
