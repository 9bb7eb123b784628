/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cost.h - the money side of a review: a ledger of every LLM
 * request, reservations against hard caps, and a cache of answers keyed
 * by patch-id, all in the state db (SQLite, WAL) that bot/ names.
 *
 * A request reserves its worst-case cost against every cap that applies
 * before it is sent, inside BEGIN IMMEDIATE, so two processes cannot
 * both pass a cap. The reservation is settled to the real cost from the
 * answer's usage, or released when no answer came. A reservation left
 * by a crash keeps counting; once past its expiry it is folded into the
 * ledger at its full (worst-case) amount, so a crash can only make
 * quorum spend less than a cap, never more.
 *
 * Errors: RV_ERR_INTERNAL with a sentence in err (a db that cannot be
 * opened or written says what to do).
 */
#ifndef QUORUM_REVIEW_COST_H
#define QUORUM_REVIEW_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "review.h"

/* Bump when the cost tables change shape. */
#define RV_COST_SCHEMA 1

struct rv_ledger;

/*
 * Open (creating it and its directory) the state db at path and our
 * tables in it; other tables in the file are never touched. Caller frees
 * with rv_ledger_free().
 */
int rv_ledger_open(struct rv_ledger **out, const char *path,
		   struct errmsg *err);
void rv_ledger_free(struct rv_ledger *l);

/* The caps a request counts against; a cap <= 0 does not apply. */
struct rv_caps {
	const char *list;   /* NULL: no list, per_day does not apply */
	const char *review; /* id of this review (per_review scope) */
	double per_review;
	double per_day; /* of list, UTC day */
	double per_run; /* every request through this ledger handle */
	double monthly; /* every request, UTC calendar month */
};

/* One request as the ledger records it. Strings are copied. */
struct rv_charge {
	const char *voter;
	const char *model;
	const char *list;   /* may be NULL */
	const char *series; /* series or patch key, may be NULL */
	long tokens_in, tokens_out;
	double cost;  /* USD */
	bool assumed; /* cost is the worst case: no usage was reported */
	/* What the reservation assumed: the bounds it was priced at. */
	long est_in, est_out;
};

/*
 * Reserve amount (USD) against caps for a request described by c, to
 * expire ttl seconds from now. Returns 1 with *id set when reserved, 0
 * when some cap would be passed (why gets "the daily budget of list
 * netdev ($0.40, $0.39 spent or reserved)"), or RV_ERR_INTERNAL.
 */
int rv_ledger_reserve(struct rv_ledger *l, const struct rv_caps *caps,
		      const struct rv_charge *c, double amount, double ttl,
		      int64_t *id, char *why, size_t whysz, struct errmsg *err);

/* Replace reservation id by a ledger row for c (its real cost). */
int rv_ledger_settle(struct rv_ledger *l, int64_t id, const struct rv_charge *c,
		     struct errmsg *err);

/* Drop reservation id: nothing was spent. */
int rv_ledger_release(struct rv_ledger *l, int64_t id, struct errmsg *err);

/*
 * What is left under the tightest cap of caps (spent and reserved taken
 * off), in *left (a large number when no cap applies); which (may be
 * NULL) names that cap. 0 or RV_ERR_INTERNAL.
 */
int rv_ledger_left(struct rv_ledger *l, const struct rv_caps *caps,
		   double *left, char *which, size_t whichsz,
		   struct errmsg *err);

/* Totals of the ledger, grouped. */
enum rv_cost_by {
	RV_COST_BY_NONE,
	RV_COST_BY_LIST,
	RV_COST_BY_VOTER,
	RV_COST_BY_DAY,
};

struct rv_cost_row {
	char *key; /* list, voter or YYYY-MM-DD; "" for no list */
	long requests;
	long tokens_in, tokens_out;
	double cost;
	double reserved;  /* of reservations still open (not in cost) */
	double unsettled; /* of cost: expired reservations charged in full */
};

/*
 * Totals of requests since the time since (seconds since the epoch; 0:
 * all), grouped by; rows ordered by key. Caller frees with
 * rv_cost_rows_free().
 */
int rv_ledger_totals(struct rv_ledger *l, int64_t since, enum rv_cost_by by,
		     struct rv_cost_row **rows, size_t *n, struct errmsg *err);
void rv_cost_rows_free(struct rv_cost_row *rows, size_t n);

/*
 * The cache of model answers: key is made by rv_cache_key(). Get fills
 * answer and returns 1 on a hit, 0 on a miss; put stores (replaces) it.
 * Negative rv_status on a db error.
 */
int rv_cache_get(struct rv_ledger *l, const char *key, struct sb *answer);
int rv_cache_put(struct rv_ledger *l, const char *key, const char *answer,
		 size_t len);

/*
 * The cache key of one voter's answer on one patch: the patch's stable
 * patch-id, the voter (provider, url, model, max-tokens) and the prompt
 * text it would be sent (system prompt, boundary masked). out gets 40
 * hex digits. 0, or RV_ERR_INPUT when the diff has no patch-id.
 */
int rv_cache_key(const struct rv_llm_voter *v, const char *diff, size_t difflen,
		 const char *system, char out[41]);

/*
 * The tokens and USD an answer body of v's API reports in its usage:
 * *tin counts every input token (OpenAI's cached_tokens are among its
 * prompt_tokens; Anthropic's cache reads and writes are added to its
 * input_tokens), *tcached those read from the cache, priced at
 * price_cached (cache writes at 1.25 times price_in). Returns false,
 * with everything 0, when the body reports no usage.
 */
bool rv_cost_of_answer(const struct rv_llm_voter *v, const char *body,
		       size_t len, long *tin, long *tout, long *tcached,
		       double *cost);

/* The worst-case cost of a request body of body_bytes to v. */
double rv_cost_worst(const struct rv_llm_voter *v, size_t body_bytes);

/*
 * The worst-case cost of a request to v of at most in tokens of input
 * that may generate at most out tokens.
 */
double rv_cost_bound(const struct rv_llm_voter *v, long in, long out);

/*
 * How long voter's answers really were: *longest gets the most output
 * tokens of its last 50 settled answers and *n how many there were (0:
 * no history, *longest 0). 0 or RV_ERR_INTERNAL.
 */
int rv_ledger_answer_tokens(struct rv_ledger *l, const char *voter,
			    long *longest, long *n, struct errmsg *err);

/* Per voter: the tokens the reservations assumed against those billed. */
struct rv_slack_row {
	char *voter;
	long requests; /* settled from a reported usage */
	long est_in, tokens_in;
	long est_out, tokens_out;
};

/*
 * The rows for requests since since (seconds since the epoch; 0: all)
 * that were settled from a usage and recorded their estimate, ordered by
 * voter. Caller frees with rv_slack_rows_free().
 */
int rv_ledger_slack(struct rv_ledger *l, int64_t since,
		    struct rv_slack_row **rows, size_t *n, struct errmsg *err);
void rv_slack_rows_free(struct rv_slack_row *rows, size_t n);

#endif
