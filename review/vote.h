/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vote.h - the tally of a review (review/vote.c) and the place checks of
 * vote-verify.c that run before it. Internal to review/.
 */
#ifndef QUORUM_VOTE_H
#define QUORUM_VOTE_H

#include <stdbool.h>

#include "review.h"

/*
 * Cluster pool's findings (same patch, file, overlapping lines and the
 * same problem), weigh each cluster's distinct voters, and move it to
 * r->findings when it reaches r->quorum, else to r->minority (so is a
 * finding about code the patch did not touch). A cluster is placed at
 * the narrowest range one of its findings gave. pool is only read: the
 * caller still releases it.
 */
void rv_vote(struct rv_review *r, struct rv_findings *pool);

/* The summed weight of the LLM voters of r that answered a request. */
double rv_vote_answered_weight(const struct rv_review *r);

/* Does f point at lines the patch has (its file, a hunk's post-image)? */
bool rv_finding_in_diff(const struct rv_finding *f, const struct rv_diff *d);

#endif
