// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cost ledger: a reservation counts against every cap that applies,
 * a request that could pass one is refused, settling records the real
 * cost, releasing frees the money, an expired reservation is charged at
 * its full amount, processes racing for one cap never pass it together,
 * a damaged db says what to do, and the cache returns what was put.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "review/cost.h"

static char dir[] = "/tmp/quorum-test-cost.XXXXXX";
static char path[256];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/quorum-test-cost.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* A directory that does not exist yet: open makes it. */
	snprintf(path, sizeof(path), "%s/a/b/state.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static const struct rv_charge charge = {
	.voter = "a", .model = "m", .list = "netdev", .series = "s1"};

static double total(struct rv_ledger *l, double *reserved)
{
	struct rv_cost_row *rows;
	size_t n, i;
	double c = 0;

	assert_int_equal(
		rv_ledger_totals(l, 0, RV_COST_BY_NONE, &rows, &n, NULL), 0);
	*reserved = 0;
	for (i = 0; i < n; i++) {
		c += rows[i].cost;
		*reserved += rows[i].reserved;
	}
	rv_cost_rows_free(rows, n);
	return c;
}

static void test_reserve_settle_release(void **state)
{
	struct rv_caps caps = {"netdev", "r1", 0, 1.00, 0, 0};
	struct rv_ledger *l;
	struct rv_charge c = charge;
	int64_t id1, id2, id3;
	char why[256];
	double left, res;

	(void)state;
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.40, 600, &id1, why,
					   sizeof(why), NULL),
			 1);
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.40, 600, &id2, why,
					   sizeof(why), NULL),
			 1);
	/* 0.80 held: 0.40 more would pass the daily cap of 1.00. */
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.40, 600, &id3, why,
					   sizeof(why), NULL),
			 0);
	assert_non_null(strstr(why, "daily budget of list netdev"));
	assert_int_equal(rv_ledger_left(l, &caps, &left, NULL, 0, NULL), 0);
	assert_true(left > 0.199 && left < 0.201);
	/* The answer cost less than the worst case: the rest comes back. */
	c.tokens_in = 1000;
	c.tokens_out = 100;
	c.cost = 0.05;
	assert_int_equal(rv_ledger_settle(l, id1, &c, NULL), 0);
	assert_int_equal(rv_ledger_release(l, id2, NULL), 0);
	assert_true(total(l, &res) > 0.0499 && total(l, &res) < 0.0501);
	assert_true(res == 0);
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.90, 600, &id3, why,
					   sizeof(why), NULL),
			 1);
	/* Another list has its own day; the monthly cap covers both. */
	caps.list = "other";
	caps.monthly = 1.20;
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.30, 600, &id2, why,
					   sizeof(why), NULL),
			 0);
	assert_non_null(strstr(why, "monthly"));
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.20, 600, &id2, why,
					   sizeof(why), NULL),
			 1);
	rv_ledger_free(l);
}

static void test_per_review_and_run(void **state)
{
	struct rv_caps caps = {NULL, "r1", 0.10, 0, 0, 0};
	struct rv_ledger *l, *l2;
	int64_t id;

	(void)state;
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	assert_int_equal(rv_ledger_reserve(l, &caps, &charge, 0.08, 600, &id,
					   NULL, 0, NULL),
			 1);
	assert_int_equal(rv_ledger_reserve(l, &caps, &charge, 0.08, 600, &id,
					   NULL, 0, NULL),
			 0);
	caps.review = "r2"; /* the next review starts afresh */
	assert_int_equal(rv_ledger_reserve(l, &caps, &charge, 0.08, 600, &id,
					   NULL, 0, NULL),
			 1);
	/* A run's budget is its own handle's (0.16 held so far). */
	caps.per_review = 0;
	caps.per_run = 0.40;
	assert_int_equal(rv_ledger_reserve(l, &caps, &charge, 0.15, 600, &id,
					   NULL, 0, NULL),
			 1);
	assert_int_equal(rv_ledger_reserve(l, &caps, &charge, 0.15, 600, &id,
					   NULL, 0, NULL),
			 0);
	assert_int_equal(rv_ledger_open(&l2, path, NULL), 0);
	assert_int_equal(rv_ledger_reserve(l2, &caps, &charge, 0.15, 600, &id,
					   NULL, 0, NULL),
			 1);
	rv_ledger_free(l2);
	rv_ledger_free(l);
}

/* A crash leaves a reservation: it counts, then is charged in full. */
static void test_expired_is_charged(void **state)
{
	struct rv_caps caps = {"netdev", "r1", 0, 1.00, 0, 0};
	struct rv_ledger *l;
	struct rv_charge c = charge;
	int64_t id, late;
	double res;

	(void)state;
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	assert_int_equal(
		rv_ledger_reserve(l, &caps, &c, 0.70, -5, &late, NULL, 0, NULL),
		1);
	assert_int_equal(
		rv_ledger_reserve(l, &caps, &c, 0.40, 600, &id, NULL, 0, NULL),
		0);
	assert_true(total(l, &res) > 0.6999);
	assert_true(res == 0);
	{
		struct rv_cost_row *rows;
		size_t n;

		assert_int_equal(rv_ledger_totals(l, 0, RV_COST_BY_LIST, &rows,
						  &n, NULL),
				 0);
		assert_int_equal(n, 1);
		assert_string_equal(rows[0].key, "netdev");
		assert_true(rows[0].unsettled > 0.6999);
		rv_cost_rows_free(rows, n);
	}
	/* The slow process settles after all: the real cost wins. */
	c.cost = 0.10;
	assert_int_equal(rv_ledger_settle(l, late, &c, NULL), 0);
	assert_true(total(l, &res) < 0.1001);
	assert_int_equal(
		rv_ledger_reserve(l, &caps, &c, 0.40, 600, &id, NULL, 0, NULL),
		1);
	rv_ledger_free(l);
}

/* Eight processes race for a cap that holds five reservations. */
static void test_concurrent_processes(void **state)
{
	struct rv_caps caps = {"netdev", NULL, 0, 0.50, 0, 0};
	struct rv_ledger *l;
	pid_t pids[8];
	int i, got = 0, st;
	double res;

	(void)state;
	for (i = 0; i < 8; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			int64_t id;
			int n = 0, k;

			if (rv_ledger_open(&l, path, NULL) < 0)
				_exit(100);
			for (k = 0; k < 5; k++)
				n += rv_ledger_reserve(l, &caps, &charge, 0.10,
						       600, &id, NULL, 0,
						       NULL) == 1;
			rv_ledger_free(l);
			_exit(n);
		}
	}
	for (i = 0; i < 8; i++) {
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) > 5)
			fail_msg("child: status %d", st);
		got += WEXITSTATUS(st);
	}
	assert_int_equal(got, 5);
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	total(l, &res);
	assert_true(res > 0.4999 && res < 0.5001);
	rv_ledger_free(l);
}

static void test_cache(void **state)
{
	static const char diff[] = "diff --git a/x.c b/x.c\n"
				   "--- a/x.c\n+++ b/x.c\n"
				   "@@ -1 +1 @@\n-a\n+b\n";
	struct rv_llm_voter v = {0};
	struct rv_ledger *l;
	struct sb ans = SB_INIT;
	char k1[41], k2[41], k3[41];

	(void)state;
	v.model = "m";
	v.url = "http://x/v1";
	assert_int_equal(rv_cache_key(&v, diff, strlen(diff), "sys", k1), 0);
	assert_int_equal(strlen(k1), 40);
	assert_int_equal(rv_cache_key(&v, diff, strlen(diff), "sys2", k2), 0);
	assert_string_not_equal(k1, k2);
	v.model = "m2";
	assert_int_equal(rv_cache_key(&v, diff, strlen(diff), "sys", k3), 0);
	assert_string_not_equal(k1, k3);
	assert_true(rv_cache_key(&v, "no diff", 7, "sys", k3) < 0);
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	assert_int_equal(rv_cache_get(l, k1, &ans), 0);
	assert_int_equal(rv_cache_put(l, k1, "{\"findings\": []}", 16), 0);
	assert_int_equal(rv_cache_get(l, k1, &ans), 1);
	assert_string_equal(sb_str(&ans), "{\"findings\": []}");
	sb_release(&ans);
	rv_ledger_free(l);
}

/* Other tables in the file are kept; a damaged file says what to do. */
static void test_shared_and_damaged(void **state)
{
	struct rv_ledger *l;
	struct errmsg err = {""};
	sqlite3 *db;
	sqlite3_stmt *st;
	FILE *fp;

	(void)state;
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	rv_ledger_free(l);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "CREATE TABLE IF NOT EXISTS replies (x);"
				      "INSERT INTO replies VALUES (42);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	rv_ledger_free(l);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_prepare_v2(db, "SELECT x FROM replies", -1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 42);
	sqlite3_finalize(st);
	sqlite3_close(db);

	/* Cost tables of a newer quorum: say so rather than misread them. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "UPDATE cost_meta SET value = 99 "
				      "WHERE key = 'schema'",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_true(rv_ledger_open(&l, path, &err) < 0);
	assert_non_null(strstr(err.msg, "upgrade quorum"));

	snprintf(path, sizeof(path), "%s/junk.db", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("this is not a database, it is a text file long enough to "
	      "fill a header of a hundred bytes or so..................",
	      fp);
	fclose(fp);
	assert_true(rv_ledger_open(&l, path, &err) < 0);
	assert_non_null(strstr(err.msg, "move it aside"));
	snprintf(path, sizeof(path), "%s/a/b/state.db", dir);
}

/* Usage as both APIs report it, cached input at its own price. */
static void test_cost_of_answer(void **state)
{
	struct rv_llm_voter v = {0};
	long tin, tout, tc;
	double cost;

	(void)state;
	v.price_in = 3;
	v.price_out = 15;
	v.price_cached = 0.3;
	v.max_tokens = 400;
	assert_true(rv_cost_of_answer(
		&v,
		"{\"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": "
		"100, \"prompt_tokens_details\": {\"cached_tokens\": 800}}}",
		109, &tin, &tout, &tc, &cost));
	assert_int_equal(tin, 1000);
	assert_int_equal(tout, 100);
	assert_int_equal(tc, 800);
	assert_true(cost > 0.0023399 && cost < 0.0023401);
	v.provider = RV_PROVIDER_ANTHROPIC;
	assert_true(rv_cost_of_answer(
		&v,
		"{\"usage\": {\"input_tokens\": 200, \"output_tokens\": 100, "
		"\"cache_read_input_tokens\": 800}}",
		86, &tin, &tout, &tc, &cost));
	assert_int_equal(tin, 1000);
	assert_true(cost > 0.0023399 && cost < 0.0023401);
	/* No price-cached: cached tokens cost what the others do. */
	v.price_cached = 0;
	assert_true(rv_cost_of_answer(
		&v,
		"{\"usage\": {\"input_tokens\": 200, \"output_tokens\": 100, "
		"\"cache_read_input_tokens\": 800}}",
		86, &tin, &tout, &tc, &cost));
	assert_true(cost > 0.0044999 && cost < 0.0045001);
	assert_false(rv_cost_of_answer(&v, "{\"content\": []}", 15, &tin, &tout,
				       &tc, &cost));
	assert_false(
		rv_cost_of_answer(&v, "not json", 8, &tin, &tout, &tc, &cost));
	assert_int_equal(tin + tout + tc, 0);
	/* The worst case: every byte a token, max-tokens out. */
	assert_true(rv_cost_worst(&v, 1000) > 0.008999 &&
		    rv_cost_worst(&v, 1000) < 0.009001);
}

/*
 * What a reservation assumed is kept with its settled row (the slack
 * quorum cost shows), also through a crash; the longest recent answer
 * of a voter is its settled rows' most output tokens.
 */
static void test_estimates_and_answers(void **state)
{
	struct rv_caps caps = {"netdev", "r1", 0, 10.0, 0, 0};
	struct rv_ledger *l;
	struct rv_charge c = charge;
	struct rv_slack_row *rows;
	int64_t id;
	char why[256];
	long longest, n;
	size_t nrows;

	(void)state;
	assert_int_equal(rv_ledger_open(&l, path, NULL), 0);
	assert_int_equal(rv_ledger_answer_tokens(l, "a", &longest, &n, NULL),
			 0);
	assert_int_equal(n, 0);
	assert_int_equal(longest, 0);
	c.est_in = 4000;
	c.est_out = 1000;
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.03, 600, &id, why,
					   sizeof(why), NULL),
			 1);
	c.tokens_in = 1000;
	c.tokens_out = 250;
	c.cost = 0.006;
	assert_int_equal(rv_ledger_settle(l, id, &c, NULL), 0);
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.03, 600, &id, why,
					   sizeof(why), NULL),
			 1);
	c.tokens_out = 400;
	assert_int_equal(rv_ledger_settle(l, id, &c, NULL), 0);
	/* A crash: charged at its worst case, no usage, not an answer. */
	assert_int_equal(rv_ledger_reserve(l, &caps, &c, 0.03, -10, &id, why,
					   sizeof(why), NULL),
			 1);
	assert_int_equal(rv_ledger_answer_tokens(l, "a", &longest, &n, NULL),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(longest, 400);
	assert_int_equal(rv_ledger_slack(l, 0, &rows, &nrows, NULL), 0);
	assert_int_equal(nrows, 1);
	assert_string_equal(rows[0].voter, "a");
	assert_int_equal(rows[0].requests, 2);
	assert_int_equal(rows[0].est_in, 8000);
	assert_int_equal(rows[0].tokens_in, 2000);
	assert_int_equal(rows[0].est_out, 2000);
	assert_int_equal(rows[0].tokens_out, 650);
	rv_slack_rows_free(rows, nrows);
	rv_ledger_free(l);
}

static void test_cost_bound(void **state)
{
	struct rv_llm_voter v = {0};

	(void)state;
	v.price_in = 3;
	v.price_out = 15;
	v.max_tokens = 1000;
	/* 1M tokens in at $3, 1000 out at $15 per million. */
	assert_true(rv_cost_bound(&v, 1000000, 1000) > 3.0149 &&
		    rv_cost_bound(&v, 1000000, 1000) < 3.0151);
	/* The byte bound is the token bound at a token per byte. */
	assert_true(rv_cost_worst(&v, 5000) == rv_cost_bound(&v, 5000, 1000));
	/* A cached price above the input price is the one to bound by. */
	v.price_cached = 6;
	assert_true(rv_cost_bound(&v, 1000000, 0) > 5.999);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reserve_settle_release,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_review_and_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_expired_is_charged, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_processes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_and_damaged, setup,
						teardown),
		cmocka_unit_test(test_cost_of_answer),
		cmocka_unit_test_setup_teardown(test_estimates_and_answers,
						setup, teardown),
		cmocka_unit_test(test_cost_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
