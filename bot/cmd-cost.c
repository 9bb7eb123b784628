// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-cost.c - `quorum cost`: what the LLM voters have cost, from the
 * ledger in the state db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "review/cost.h"
#include "session.h"

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
	"  --since DATE   only requests from DATE (YYYY-MM-DD, UTC, or\n"
	"                 @SECONDS) on\n"
	"  --by WHAT      one line per list, voter or day (UTC); by voter, "
	"also\n"
	"                 a slack line per voter: the input and output "
	"tokens\n"
	"                 its reservations assumed against those billed\n"
	"  -h, --help     this text\n"
	"\n"
	"Caps: review.budget-per-review, list.NAME.budget-per-day (with\n"
	"`quorum review --list NAME`), budget.monthly and `--budget USD` for "
	"one\n"
	"run. Before each request its worst case is reserved against every "
	"cap\n"
	"that applies, in the state db, so concurrent runs cannot pass a cap\n"
	"together: its input tokens as the voter's free token counter counts\n"
	"them (count-tokens = auto, anthropic, tokenize or none; a count is\n"
	"never believed above the prompt's bytes), else the bytes, and its\n"
	"max-tokens as output. When a cap applies, the review plans its "
	"spend\n"
	"first (the plan: line): the riskiest patches first; a request that\n"
	"does not fit waits for the answers in flight to settle below their\n"
	"bound, then goes with max-tokens clamped to what is left, never "
	"under\n"
	"the voter's floor (its longest recent answer and a margin), else it\n"
	"is not sent (the voter abstains: budget). A voter whose server "
	"failed\n"
	"every try of a request (5xx, reset) is not asked again in the run.\n"
	"A reservation left by a crash counts until it expires and is then\n"
	"charged at its full amount (shown as reserved until then).",
};

/* The options of cost; 0, or -1 to return *exit_code. */
static int cost_options(int argc, char **argv, int64_t *since,
			enum rv_cost_by *by, int *exit_code)
{
	static const struct option longopts[] = {
		{"since", required_argument, NULL, 's'},
		{"by", required_argument, NULL, 'b'},
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	struct cmd_opts co = CMD_OPTS_INIT;
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			*exit_code = cmd_opt_date(&cmd_cost_def, "--since",
						  optarg, false, since);
			if (*exit_code)
				return -1;
			break;
		case 'b':
			if (!strcmp(optarg, "list")) {
				*by = RV_COST_BY_LIST;
			} else if (!strcmp(optarg, "voter")) {
				*by = RV_COST_BY_VOTER;
			} else if (!strcmp(optarg, "day")) {
				*by = RV_COST_BY_DAY;
			} else {
				*exit_code = usage_error(
					&cmd_cost_def,
					"--by wants list, voter or day, not "
					"'%s'",
					optarg);
				return -1;
			}
			break;
		default:
			if (cmd_opt(&cmd_cost_def, c, argv, &co, exit_code) < 0)
				return -1;
		}
	}
	if (optind < argc) {
		*exit_code =
			usage_error(&cmd_cost_def, "cost takes no arguments");
		return -1;
	}
	return 0;
}

static int percent(long part, long whole)
{
	return whole > 0 ? (int)((double)part * 100 / (double)whole + 0.5) : 0;
}

/*
 * Per voter, the tokens its reservations assumed against those billed:
 * the slack that the plan's bounds leave (smaller is tighter).
 */
static int print_slack(struct rv_ledger *l, int64_t since, struct errmsg *err)
{
	struct rv_slack_row *rows;
	size_t n, i;

	if (rv_ledger_slack(l, since, &rows, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++)
		printf("slack %s: %ld request%s; in: %ld tokens estimated, "
		       "%ld billed (%d%%); out: %ld estimated (max-tokens), "
		       "%ld billed (%d%%)\n",
		       *rows[i].voter ? rows[i].voter : "(none)",
		       rows[i].requests, rows[i].requests == 1 ? "" : "s",
		       rows[i].est_in, rows[i].tokens_in,
		       percent(rows[i].tokens_in, rows[i].est_in),
		       rows[i].est_out, rows[i].tokens_out,
		       percent(rows[i].tokens_out, rows[i].est_out));
	rv_slack_rows_free(rows, n);
	return 0;
}

static int cmd_cost(int argc, char **argv)
{
	enum rv_cost_by by = RV_COST_BY_NONE;
	struct cmd_opts co = CMD_OPTS_INIT;
	struct session s = SESSION_INIT;
	struct rv_cost_row *rows = NULL;
	struct errmsg err = {""};
	int64_t since = 0;
	long req = 0, tin = 0, tout = 0;
	double cost = 0, reserved = 0, unsettled = 0;
	size_t n = 0, i;
	int ret;

	if (cost_options(argc, argv, &since, &by, &ret) < 0)
		return ret;
	ret = session_open(&s, &co, SESSION_LEDGER, &err);
	if (ret < 0 ||
	    rv_ledger_totals(s.ledger, since, by, &rows, &n, &err) < 0) {
		error("%s", err.msg);
		session_close(&s);
		return EXIT_ENV;
	}
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
	if (by == RV_COST_BY_VOTER && print_slack(s.ledger, since, &err) < 0) {
		error("%s", err.msg);
		session_close(&s);
		return EXIT_ENV;
	}
	session_close(&s);
	return 0;
}
