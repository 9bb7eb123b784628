/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dry-run.h - `--dry-run[=DIR]` of review and ci: the requests a review
 * would send, their token bounds and prices, printed (or written to
 * DIR), with totals per voter. Nothing is sent but the voters' free
 * token counts.
 */
#ifndef QUORUM_DRY_RUN_H
#define QUORUM_DRY_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "review/review.h"

struct dry_voter {
	char *name;
	size_t n;
	double worst, estimate;
	size_t left_out; /* requests it would not get (context budget) */
};

struct dry_run {
	const char *dir;  /* NULL: the bodies are printed */
	size_t n;	  /* requests so far, across reviews */
	size_t nleft_out; /* and those a real run would not send either */
	struct dry_voter *v;
	size_t nv, alloc;
	bool said; /* the header, that nothing is sent, is out */
};

/*
 * Print r's requests (r->dry, from a review with opts.dry_run) to out,
 * their bodies too or, with d->dir, into DIR/NNNN-VOTER.json (DIR is
 * made), then a line for each request a real run would not send either
 * (a voter left out of a patch over its context budget: r->calls). 0, or
 * -1 with err when a file cannot be written.
 */
int dry_run_add(struct dry_run *d, const struct rv_review *r, FILE *out,
		struct errmsg *err);

/* Say, once, that nothing is sent (dry_run_add() does it too). */
void dry_run_say(struct dry_run *d, FILE *out);
/* The totals per voter and in all. */
void dry_run_finish(const struct dry_run *d, FILE *out);
void dry_run_release(struct dry_run *d);

#endif
