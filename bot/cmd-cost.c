// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-cost.c - `quorum cost`: what the LLM voters have cost, from the
 * ledger in the state db; and the caps a review runs under (issue 8).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quorum.h"
#include "review/cost.h"
#include "state.h"

static int cmd_cost(int argc, char **argv);

const struct cmd cmd_cost_def = {
	"cost",
	cmd_cost,
	"quorum cost [--since DATE] [--by list|voter|day]",
	"what the LLM voters have cost, from the ledger",
	"Prints the totals of the cost ledger in the state db\n"
	"($XDG_STATE_HOME/quorum/state.db): requests, tokens in and out and\n"
	"USD, priced with each voter's price-in and price-out (USD per "
	"million\n"
	"tokens) at the time of the request.\n"
	"\n"
	"Options:\n"
	"  --since DATE   only requests from DATE (YYYY-MM-DD, UTC) on\n"
	"  --by WHAT      one line per list, voter or day (UTC)\n"
	"  -h, --help     this text\n"
	"\n"
	"Caps: review.budget-per-review, list.NAME.budget-per-day (with\n"
	"`quorum review --list NAME`), budget.monthly and `--budget USD` for "
	"one\n"
	"run. Before each request its worst case (the prompt's bytes as input\n"
	"tokens, max-tokens as output) is reserved against every cap that\n"
	"applies, in the state db, so concurrent runs cannot pass a cap\n"
	"together; a request that could pass one is not sent (the voter\n"
	"abstains: budget). A reservation left by a crash counts until it\n"
	"expires and is then charged at its full amount (shown as reserved\n"
	"until then).",
};

/* A USD amount from config or the command line; -1 when malformed. */
static int parse_usd(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= 0 && d <= 1e9))
		return -1;
	*out = d;
	return 0;
}

static int cfg_usd(struct qconfig *cfg, const char *key, double *out,
		   struct errmsg *err)
{
	const char *v = qconfig_get(cfg, key);

	*out = 0;
	if (v && parse_usd(v, out) < 0)
		return errmsg_set(err, -1,
				  "config %s = '%s' is not an amount in USD",
				  key, v);
	return 0;
}

int cost_review_opts(struct qconfig *cfg, const char *list, double run_budget,
		     struct rv_review_opts *opts, struct rv_ledger **ledger,
		     struct errmsg *err)
{
	struct sb key = SB_INIT;
	char *path;
	int ret;

	*ledger = NULL;
	if (cfg_usd(cfg, "review.budget-per-review", &opts->budget_review,
		    err) < 0 ||
	    cfg_usd(cfg, "budget.monthly", &opts->budget_month, err) < 0)
		return -1;
	if (list) {
		sb_addf(&key, "list.%s.budget-per-day", list);
		ret = cfg_usd(cfg, key.buf, &opts->budget_day, err);
		sb_release(&key);
		if (ret < 0)
			return -1;
	}
	opts->list = list;
	opts->budget_run = run_budget > 0 ? run_budget : 0;
	path = state_default_path();
	ret = rv_ledger_open(ledger, path, err);
	free(path);
	if (ret < 0)
		return -1;
	opts->ledger = *ledger;
	return 0;
}

static int parse_since(const char *s, int64_t *out)
{
	struct tm tm = {0};
	char *end = strptime(s, "%Y-%m-%d", &tm);

	if (!end || *end)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

static int cmd_cost(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"since", required_argument, NULL, 's'},
		{"by", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum rv_cost_by by = RV_COST_BY_NONE;
	struct rv_ledger *l = NULL;
	struct rv_cost_row *rows = NULL;
	struct errmsg err = {""};
	int64_t since = 0;
	long req = 0, tin = 0, tout = 0;
	double cost = 0, reserved = 0, unsettled = 0;
	size_t n = 0, i;
	char *path;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_since(optarg, &since) < 0)
				return usage_error(
					&cmd_cost_def,
					"--since wants YYYY-MM-DD, not '%s'",
					optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "list"))
				by = RV_COST_BY_LIST;
			else if (!strcmp(optarg, "voter"))
				by = RV_COST_BY_VOTER;
			else if (!strcmp(optarg, "day"))
				by = RV_COST_BY_DAY;
			else
				return usage_error(&cmd_cost_def,
						   "--by wants list, voter or "
						   "day, not '%s'",
						   optarg);
			break;
		case 'h':
			return cmd_print_help(&cmd_cost_def);
		default:
			return usage_error(&cmd_cost_def,
					   "unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(&cmd_cost_def, "cost takes no arguments");
	path = state_default_path();
	if (rv_ledger_open(&l, path, &err) < 0 ||
	    rv_ledger_totals(l, since, by, &rows, &n, &err) < 0) {
		error("%s", err.msg);
		free(path);
		rv_ledger_free(l);
		return EXIT_ENV;
	}
	free(path);
	if (by != RV_COST_BY_NONE)
		printf("%-24s %8s %12s %12s %12s\n",
		       by == RV_COST_BY_LIST	? "list"
		       : by == RV_COST_BY_VOTER ? "voter"
						: "day",
		       "requests", "tokens-in", "tokens-out", "USD");
	for (i = 0; i < n; i++) {
		if (by != RV_COST_BY_NONE)
			printf("%-24s %8ld %12ld %12ld %12.6f\n",
			       *rows[i].key ? rows[i].key : "(none)",
			       rows[i].requests, rows[i].tokens_in,
			       rows[i].tokens_out, rows[i].cost);
		req += rows[i].requests;
		tin += rows[i].tokens_in;
		tout += rows[i].tokens_out;
		cost += rows[i].cost;
		reserved += rows[i].reserved;
		unsettled += rows[i].unsettled;
	}
	printf("total: %ld request%s, %ld tokens in, %ld out, $%.6f\n", req,
	       req == 1 ? "" : "s", tin, tout, cost);
	if (unsettled > 0)
		printf("of which $%.6f charged at the worst case: requests "
		       "with no usage (a timeout, or a run that died first)\n",
		       unsettled);
	if (reserved > 0)
		printf("reserved: $%.6f by requests not settled yet (a run in "
		       "progress, or one that was killed)\n",
		       reserved);
	rv_cost_rows_free(rows, n);
	rv_ledger_free(l);
	return 0;
}
