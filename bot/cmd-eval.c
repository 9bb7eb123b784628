// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-eval.c - `quorum eval`: replay a window of history and score the
 * risk score and the offline findings against later Fixes: trailers.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "review/review.h"

static int cmd_eval(int argc, char **argv);

const struct cmd cmd_eval_def = {
	"eval",
	cmd_eval,
	"quorum eval [-C REPO] --since DATE --until DATE [--json] [-v]",
	"replay history and score quorum against later Fixes:",
	"Replays every non-merge commit of HEAD's history committed between\n"
	"--since and --until as if it were a new patch, using only what was\n"
	"committed before it, and labels it buggy when a later commit names "
	"it\n"
	"in a Fixes: trailer (or reverts it). Reports how many commits were\n"
	"replayed and how many were buggy, the AUC of the risk score and, "
	"from\n"
	"the same run, of the plain lines-changed baseline, and the precision\n"
	"and recall of the offline findings at quorum (rules, history, risk).\n"
	"Run `quorum index` first.\n"
	"\n"
	"Options:\n"
	"  -C REPO         the repository (default: the current directory)\n"
	"  --since DATE    first day (YYYY-MM-DD, or @SECONDS), inclusive\n"
	"  --until DATE    last day (YYYY-MM-DD, or @SECONDS), inclusive\n"
	"  --json          one JSON object: commits, positives, auc,\n"
	"                  baseline_auc, precision, recall, seconds\n"
	"  -v, --verbose   one line per replayed commit\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 no repository or no index.",
};

static void progress_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "\r%s\033[K", line);
}

static void each_commit(void *arg, const struct rv_eval_commit *c)
{
	(void)arg;
	printf("%.12s risk %s%.3f lines %5ld %s%s%s\n", c->id,
	       c->risk < 0 ? "-" : "", c->risk < 0 ? 0.0 : c->risk, c->lines,
	       c->buggy ? "buggy" : "clean", c->flagged ? " flagged:" : "",
	       c->flagged ? c->voters : "");
}

static void print_num(const char *key, double v)
{
	if (v < 0)
		printf("%-13s n/a\n", key);
	else
		printf("%-13s %.3f\n", key, v);
}

/* The options of eval; 0, or -1 to return *exit_code. */
static int eval_options(int argc, char **argv, struct cmd_opts *co,
			struct rv_eval_opts *opts, bool *verbose,
			int *exit_code)
{
	static const struct option longopts[] = {
		{"since", required_argument, NULL, 's'},
		{"until", required_argument, NULL, 'u'},
		{"verbose", no_argument, NULL, 'v'},
		CMD_OPT_JSON,
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	const char *since = NULL, *until = NULL;
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hvC:", longopts, NULL)) != -1) {
		if (c == 's')
			since = optarg;
		else if (c == 'u')
			until = optarg;
		else if (c == 'v')
			*verbose = true;
		else if (cmd_opt(&cmd_eval_def, c, argv, co, exit_code) < 0)
			return -1;
	}
	if (optind < argc) {
		*exit_code =
			usage_error(&cmd_eval_def, "eval takes no arguments");
		return -1;
	}
	if (!since || !until) {
		*exit_code = usage_error(&cmd_eval_def,
					 "eval needs both --since and --until");
		return -1;
	}
	*exit_code = cmd_opt_date(&cmd_eval_def, "--since", since, false,
				  &opts->since);
	if (!*exit_code)
		*exit_code = cmd_opt_date(&cmd_eval_def, "--until", until, true,
					  &opts->until);
	if (*exit_code)
		return -1;
	if (opts->until < opts->since) {
		*exit_code = usage_error(&cmd_eval_def,
					 "--until (%s) is before --since (%s)",
					 until, since);
		return -1;
	}
	return 0;
}

static void print_json(const struct rv_eval_result *res)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddNumberToObject(o, "commits", (double)res->commits);
	cJSON_AddNumberToObject(o, "positives", (double)res->positives);
	if (res->auc < 0)
		cJSON_AddNullToObject(o, "auc");
	else
		cJSON_AddNumberToObject(o, "auc", res->auc);
	if (res->baseline_auc < 0)
		cJSON_AddNullToObject(o, "baseline_auc");
	else
		cJSON_AddNumberToObject(o, "baseline_auc", res->baseline_auc);
	cJSON_AddNumberToObject(o, "precision", res->precision);
	cJSON_AddNumberToObject(o, "recall", res->recall);
	cJSON_AddNumberToObject(o, "history_flagged",
				(double)res->history_flagged);
	cJSON_AddNumberToObject(o, "history_flagged_positive",
				(double)res->history_flagged_positive);
	cJSON_AddNumberToObject(o, "seconds", res->seconds);
	s = cJSON_PrintUnformatted(o);
	puts(s ? s : "{}");
	free(s);
	cJSON_Delete(o);
}

static void print_text(const struct rv_eval_result *res)
{
	printf("%-13s %zu\n", "commits", res->commits);
	printf("%-13s %zu\n", "positives", res->positives);
	print_num("auc", res->auc);
	print_num("baseline_auc", res->baseline_auc);
	printf("%-13s %.3f (%zu of %zu flagged commits were buggy)\n",
	       "precision", res->precision, res->flagged_positive,
	       res->flagged);
	printf("%-13s %.3f\n", "recall", res->recall);
	/* Is the history voter better than picking commits at random? */
	printf("%-13s %zu flagged, %zu later fixed", "history",
	       res->history_flagged, res->history_flagged_positive);
	if (res->history_flagged && res->positives)
		printf(" (%.2fx the base rate %.3f)",
		       ((double)res->history_flagged_positive /
			(double)res->history_flagged) /
			       ((double)res->positives / (double)res->commits),
		       (double)res->positives / (double)res->commits);
	putchar('\n');
	printf("%-13s %.2f\n", "seconds", res->seconds);
}

static int cmd_eval(int argc, char **argv)
{
	struct rv_eval_opts opts = RV_EVAL_OPTS_INIT;
	struct cmd_opts co = CMD_OPTS_INIT;
	struct rv_eval_result res;
	struct errmsg err = {""};
	bool verbose = false;
	int ret;

	if (eval_options(argc, argv, &co, &opts, &verbose, &ret) < 0)
		return ret;
	if (isatty(STDERR_FILENO))
		opts.progress = progress_line;
	if (verbose && !co.json)
		opts.each = each_commit;
	ret = rv_history_eval(co.repo_path ? co.repo_path : ".", &opts, &res,
			      &err);
	if (opts.progress)
		fputs("\r\033[K", stderr);
	if (ret < 0) {
		error("%s", err.msg);
		return EXIT_ENV;
	}
	if (co.json)
		print_json(&res);
	else
		print_text(&res);
	return 0;
}
