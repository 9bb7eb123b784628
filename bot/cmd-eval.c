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
#include "review/auc.h"
#include "review/review.h"

static int cmd_eval(int argc, char **argv);

const struct cmd cmd_eval_def = {
	"eval",
	cmd_eval,
	"quorum eval [-C REPO] [--stable|--cve|--question NAME] --since DATE "
	"--until DATE [--json] [-v]",
	"replay history and score quorum against later Fixes:",
	"Replays every non-merge commit of HEAD's history committed between\n"
	"--since and --until as if it were a new patch, using only what was\n"
	"committed before it, and labels it buggy when a later commit names "
	"it\n"
	"in a Fixes: trailer (or reverts it). The risk model is refitted\n"
	"every 30 days of the replay on the commits at least 90 days older,\n"
	"labelled only by the fixes committed before the replayed commit.\n"
	"Reports how many commits were replayed and how many were buggy,\n"
	"the AUC of the risk score and, from the same run, of the plain\n"
	"lines-changed baseline, and the margin between the two, each with\n"
	"its 95% interval (bootstrap over the commits, the same draws for\n"
	"both), over the window and for each calendar year in it, with the\n"
	"mean of the years' margins; the precision (with its 95% Wilson\n"
	"interval) and recall of the offline findings (rules, history,\n"
	"risk) per voter,\n"
	"their located precision (a later fix changed the lines they point\n"
	"at, +-3, or the function), and the observed rate of fixes by decile\n"
	"of predicted risk. A line is followed by its text, as later commits\n"
	"may have moved it: the fix removed it or added lines next to it, and\n"
	"it was the only line of its file that read so (comments aside); the\n"
	"function is the one the line is in, and the fix changed a line of "
	"it.\n"
	"Run `quorum index` first.\n"
	"\n"
	"With --stable, --cve or --question NAME, replays the window for that\n"
	"classify question instead (see `quorum help classify`): each commit\n"
	"is classified offline from what was known before it (labels known by\n"
	"then, an unlabelled commit a no only once ripe), and the AUC of the\n"
	"answer's score is printed beside the baselines a maintainer would\n"
	"use (has Fixes:, subject says fix), overall and among the commits\n"
	"with Fixes: (baseline: the bug shipped in a release), from the same\n"
	"run, each margin with its 95% interval. No index is needed.\n"
	"\n"
	"Options:\n"
	"  -C REPO         the repository (default: the current directory)\n"
	"  --since DATE    first day (YYYY-MM-DD, or @SECONDS), inclusive\n"
	"  --until DATE    last day (YYYY-MM-DD, or @SECONDS), inclusive\n"
	"  --json          one JSON object (contrib/eval-json.md): AUCs,\n"
	"                  per-voter precision, recall and located\n"
	"                  precision, the calibration by risk decile\n"
	"  -v, --verbose   one line per replayed commit\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 no repository or no index.",
};

static void progress_line(void *arg, const char *line)
{
	(void)arg;
	fputc('\r', stderr);
	fput_clean(line, stderr);
	fputs("\033[K", stderr);
}

static void each_commit(void *arg, const struct rv_eval_commit *c)
{
	(void)arg;
	printf("%.12s risk %s%.3f lines %5ld %s%s%s\n", c->id,
	       c->risk < 0 ? "-" : "", c->risk < 0 ? 0.0 : c->risk, c->lines,
	       c->buggy ? "buggy" : "clean", c->flagged ? " flagged:" : "",
	       c->flagged ? c->voters : "");
}

/* An AUC and, when there is one, its interval. */
static void print_auc(const char *key, double v, bool ci, double lo, double hi)
{
	if (v < 0) {
		printf("%-13s n/a\n", key);
		return;
	}
	printf("%-13s %.3f", key, v);
	if (ci)
		printf(" (%.3f-%.3f)", lo, hi);
	putchar('\n');
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

static void add_num_or_null(cJSON *o, const char *key, double v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

/* [lo, hi], or null when lo is below 0 (none) or !ok. */
static void add_ci(cJSON *o, const char *key, bool ok, double lo, double hi)
{
	cJSON *a;

	if (!ok) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	a = cJSON_AddArrayToObject(o, key);
	cJSON_AddItemToArray(a, cJSON_CreateNumber(lo));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(hi));
}

/* The keys are documented in contrib/eval-json.md. */
static void print_json(const struct rv_eval_result *res)
{
	cJSON *o = cJSON_CreateObject(), *vs, *cal, *yrs;
	char *s;
	size_t i;

	cJSON_AddNumberToObject(o, "commits", (double)res->commits);
	cJSON_AddNumberToObject(o, "positives", (double)res->positives);
	cJSON_AddNumberToObject(o, "scored", (double)res->scored);
	add_num_or_null(o, "auc", res->auc);
	add_ci(o, "auc_ci", res->auc_ci_ok, res->auc_lo[0], res->auc_hi[0]);
	add_num_or_null(o, "baseline_auc", res->baseline_auc);
	add_ci(o, "baseline_auc_ci", res->auc_ci_ok, res->auc_lo[1],
	       res->auc_hi[1]);
	if (res->auc >= 0 && res->baseline_auc >= 0)
		cJSON_AddNumberToObject(o, "margin",
					res->auc - res->baseline_auc);
	else
		cJSON_AddNullToObject(o, "margin");
	add_ci(o, "margin_ci", res->auc_ci_ok, res->auc_lo[2], res->auc_hi[2]);
	add_num_or_null(o, "model_heldout_auc", res->model_heldout_auc);
	cJSON_AddNumberToObject(o, "precision", res->precision);
	add_ci(o, "precision_ci", res->precision_ci[0] >= 0,
	       res->precision_ci[0], res->precision_ci[1]);
	cJSON_AddNumberToObject(o, "recall", res->recall);
	cJSON_AddNumberToObject(o, "findings", (double)res->findings);
	cJSON_AddNumberToObject(o, "located", (double)res->located);
	add_num_or_null(o, "located_precision", res->located_precision);
	cJSON_AddNumberToObject(o, "history_flagged",
				(double)res->history_flagged);
	cJSON_AddNumberToObject(o, "history_flagged_positive",
				(double)res->history_flagged_positive);
	vs = cJSON_AddObjectToObject(o, "voters");
	for (i = 0; i < RV_EVAL_NVOTERS; i++) {
		const struct rv_eval_voter *ev = &res->voters[i];
		cJSON *v = cJSON_AddObjectToObject(vs, ev->name);

		cJSON_AddNumberToObject(v, "flagged", (double)ev->flagged);
		cJSON_AddNumberToObject(v, "flagged_positive",
					(double)ev->flagged_positive);
		cJSON_AddNumberToObject(v, "precision", ev->precision);
		add_ci(v, "precision_ci", ev->precision_ci[0] >= 0,
		       ev->precision_ci[0], ev->precision_ci[1]);
		cJSON_AddNumberToObject(v, "recall", ev->recall);
		cJSON_AddNumberToObject(v, "findings", (double)ev->findings);
		cJSON_AddNumberToObject(v, "located", (double)ev->located);
		add_num_or_null(v, "located_precision", ev->located_precision);
	}
	yrs = cJSON_AddArrayToObject(o, "years");
	for (i = 0; i < res->nyears; i++) {
		const struct rv_eval_year *e = &res->years[i];
		cJSON *j = cJSON_CreateObject();
		bool both = e->auc >= 0 && e->baseline_auc >= 0;

		cJSON_AddNumberToObject(j, "year", e->year);
		cJSON_AddNumberToObject(j, "commits", (double)e->commits);
		cJSON_AddNumberToObject(j, "positives", (double)e->positives);
		add_num_or_null(j, "auc", e->auc);
		add_num_or_null(j, "baseline_auc", e->baseline_auc);
		if (both)
			cJSON_AddNumberToObject(j, "margin",
						e->auc - e->baseline_auc);
		else
			cJSON_AddNullToObject(j, "margin");
		add_ci(j, "margin_ci", both && e->ci_ok, e->margin_lo,
		       e->margin_hi);
		cJSON_AddItemToArray(yrs, j);
	}
	if (res->years_ok)
		cJSON_AddNumberToObject(o, "years_margin", res->years_margin);
	else
		cJSON_AddNullToObject(o, "years_margin");
	add_ci(o, "years_margin_ci", res->years_ok, res->years_margin_lo,
	       res->years_margin_hi);
	cal = cJSON_AddArrayToObject(o, "calibration");
	for (i = 0; i < res->nbins; i++) {
		const struct rv_eval_bin *b = &res->bins[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "decile", (double)(i + 1));
		cJSON_AddNumberToObject(e, "commits", (double)b->n);
		cJSON_AddNumberToObject(e, "positives", (double)b->positives);
		cJSON_AddNumberToObject(e, "risk_min", b->lo);
		cJSON_AddNumberToObject(e, "risk_max", b->hi);
		cJSON_AddNumberToObject(e, "predicted", b->predicted);
		cJSON_AddNumberToObject(e, "observed", b->observed);
		cJSON_AddItemToArray(cal, e);
	}
	cJSON_AddNumberToObject(o, "seconds", res->seconds);
	s = cJSON_PrintUnformatted(o);
	fput_json(s ? s : "{}", stdout);
	putchar('\n');
	free(s);
	cJSON_Delete(o);
}

static void print_text(const struct rv_eval_result *res)
{
	size_t i;

	printf("%-13s %zu\n", "commits", res->commits);
	printf("%-13s %zu\n", "positives", res->positives);
	print_auc("auc", res->auc, res->auc_ci_ok, res->auc_lo[0],
		  res->auc_hi[0]);
	print_auc("baseline_auc", res->baseline_auc, res->auc_ci_ok,
		  res->auc_lo[1], res->auc_hi[1]);
	if (res->auc >= 0 && res->baseline_auc >= 0) {
		printf("%-13s %+.3f", "margin", res->auc - res->baseline_auc);
		if (res->auc_ci_ok)
			printf(" (%+.3f to %+.3f)", res->auc_lo[2],
			       res->auc_hi[2]);
		printf(", risk over lines changed\n");
	}
	if (res->scored != res->commits)
		printf("%-13s %zu commits had a risk score (a model could be "
		       "fitted); both AUCs are on them\n",
		       "scored", res->scored);
	printf("%-13s %.3f (%zu of %zu flagged commits were buggy", "precision",
	       res->precision, res->flagged_positive, res->flagged);
	if (res->precision_ci[0] >= 0)
		printf("; %.3f-%.3f", res->precision_ci[0],
		       res->precision_ci[1]);
	printf(")\n");
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
	printf("%-13s %zu of %zu findings where a later fix changed the lines "
	       "(+-3) or the function",
	       "located", res->located, res->findings);
	if (res->findings)
		printf(" (%.3f)", res->located_precision);
	putchar('\n');
	printf("\n%-8s %7s %9s %11s %7s %7s %9s\n", "voter", "flagged",
	       "precision", "95%", "recall", "found", "located");
	for (i = 0; i < RV_EVAL_NVOTERS; i++) {
		const struct rv_eval_voter *ev = &res->voters[i];
		char ci[32] = "n/a";

		if (ev->precision_ci[0] >= 0)
			snprintf(ci, sizeof(ci), "%.2f-%.2f",
				 ev->precision_ci[0], ev->precision_ci[1]);
		printf("%-8s %7zu %9.3f %11s %7.3f %7zu", ev->name, ev->flagged,
		       ev->precision, ci, ev->recall, ev->findings);
		if (ev->located_precision < 0)
			printf(" %9s\n", "n/a");
		else
			printf(" %9.3f\n", ev->located_precision);
	}
	if (res->nbins) {
		printf("\n%-8s %7s %15s %9s %8s\n", "decile", "commits", "risk",
		       "predicted", "observed");
		for (i = 0; i < res->nbins; i++) {
			const struct rv_eval_bin *b = &res->bins[i];

			printf("%-8zu %7zu %7.3f-%.3f %9.3f %8.3f\n", i + 1,
			       b->n, b->lo, b->hi, b->predicted, b->observed);
		}
	}
	if (res->nyears > 1) {
		printf("\n%-8s %7s %9s %7s %8s  %s\n", "year", "commits",
		       "positives", "auc", "baseline", "margin (95%)");
		for (i = 0; i < res->nyears; i++) {
			const struct rv_eval_year *e = &res->years[i];

			printf("%-8d %7zu %9zu", e->year, e->commits,
			       e->positives);
			if (e->auc < 0 || e->baseline_auc < 0) {
				printf(" %7s %8s  n/a\n", "n/a", "n/a");
				continue;
			}
			printf(" %7.3f %8.3f  %+.3f", e->auc, e->baseline_auc,
			       e->auc - e->baseline_auc);
			if (e->ci_ok)
				printf(" (%+.3f to %+.3f)", e->margin_lo,
				       e->margin_hi);
			putchar('\n');
		}
		if (res->years_ok)
			printf("mean margin over the years %+.3f (%+.3f to "
			       "%+.3f, the years taken as independent)\n",
			       res->years_margin, res->years_margin_lo,
			       res->years_margin_hi);
	}
	if (res->auc_ci_ok || res->precision_ci[0] >= 0)
		printf("\n95%% intervals: the AUCs and their margin by %d "
		       "bootstrap draws of the scored commits (the same for "
		       "both), precision by Wilson's score\n",
		       RV_AUC_BOOT);
	printf("\n%-13s %.2f\n", "seconds", res->seconds);
}

static int cmd_eval(int argc, char **argv)
{
	struct rv_eval_opts opts = RV_EVAL_OPTS_INIT;
	struct cmd_opts co = CMD_OPTS_INIT;
	struct rv_eval_result res;
	struct errmsg err = {""};
	bool verbose = false;
	int ret, i;

	/* classify: `eval --question NAME` replays a question instead. */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--question") ||
		    !strncmp(argv[i], "--question=", 11) ||
		    !strcmp(argv[i], "--stable") || !strcmp(argv[i], "--cve"))
			return cmd_classify_eval(&cmd_eval_def, argc, argv);
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
