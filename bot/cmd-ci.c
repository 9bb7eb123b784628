// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-ci.c - `quorum ci`: review the non-merge commits of a range,
 * oldest first, each run of consecutive commits as one series on the
 * first one's parent, for a CI job.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quorum.h"
#include "review/cost.h"

static int cmd_ci(int argc, char **argv);

const struct cmd cmd_ci_def = {
	"ci",
	cmd_ci,
	"quorum ci [-C REPO] --range A..B [--budget USD] [--fail-on SEVERITY] "
	"[--max-commits N] [--format text|json|sarif] [--output FILE]",
	"review each commit of a range, for CI",
	"Reviews each non-merge commit of the range A..B (reachable from B, "
	"not\n"
	"from A), oldest first, as the patch `git format-patch` would make of\n"
	"it, applied in memory. Merges and root commits are skipped and\n"
	"counted. Nothing in the repository changes.\n"
	"\n"
	"Commits that follow each other (each the parent of the next) are\n"
	"reviewed together as one series on the first one's parent, as\n"
	"`quorum review` reviews a patch series: a finding on a commit that a\n"
	"later commit of the range changes is dropped, the LLM voters also\n"
	"review the run's tip, and SARIF places each finding where its lines\n"
	"are at the run's newest commit. A merge, a commit left out by\n"
	"--max-commits, or 100 commits end a run.\n"
	"\n"
	"Options:\n"
	"  -C REPO            the repository (default: the current directory)\n"
	"  --range A..B       the commits to review (required)\n"
	"  --budget USD       spend at most USD on LLM requests in this run;\n"
	"                     0 reviews with the offline voters only\n"
	"  --fail-on SEV      exit 1 on a finding at quorum of severity SEV "
	"or\n"
	"                     above: low, medium (default), high, critical\n"
	"  --max-commits N    review at most N commits (default: "
	"ci.max-commits\n"
	"                     from the config, else 500): the riskiest, by "
	"the\n"
	"                     history index's risk score (else by lines\n"
	"                     changed); the rest are listed as skipped\n"
	"  --format FMT       text (default), json (contrib/review-json.md) "
	"or\n"
	"                     sarif (SARIF 2.1.0, for code-scanning UIs)\n"
	"  --output FILE      write the report to FILE, not standard output\n"
	"  -h, --help         this text\n"
	"\n"
	"Voters and config are those of `quorum review`; with a history index\n"
	"each run is reviewed with only the fixes that came before it.\n"
	"\n"
	"Exit status: 0 nothing at or above --fail-on, 1 findings at or above\n"
	"it, 2 usage or input error (a bad range, a commit that does not\n"
	"apply on its parent), 3 environment error (repository, config), or a\n"
	"budget exhausted before any model was asked (the report is still\n"
	"written).",
};

#define CI_MAX_COMMITS 500

/* Commit id as a parsed patch mail, or NULL. Caller frees. */
static struct mp_patch *commit_patch(struct rv_repo *repo, const char *id)
{
	struct sb mail = SB_INIT;
	struct mp_patch *p = NULL;
	char parent[RV_OID_HEXSZ + 1];

	if (rv_commit_email(repo, id, &mail, parent, NULL) == 0 &&
	    mp_patch_parse(&p, sb_str(&mail), mail.len, NULL, NULL) < 0)
		p = NULL;
	sb_release(&mail);
	return p;
}

/* The commit's subject line, or NULL. Caller frees. */
static char *commit_title(struct rv_repo *repo, const char *id)
{
	struct mp_patch *p = commit_patch(repo, id);
	char *t = NULL;

	if (p && p->subject.title)
		t = strdup(p->subject.title);
	mp_patch_free(p);
	return t;
}

/*
 * The risk of commit id: the history index's score, else (no index,
 * no model) -1 with *lines the lines it changes, to rank by instead.
 */
static double commit_risk(struct rv_repo *repo, struct rv_history *h,
			  const char *id, long *lines)
{
	struct mp_patch *p = commit_patch(repo, id);
	struct rv_diff *d = NULL;
	double score = -1;
	size_t f, k, l;

	*lines = 0;
	if (!p || !p->diff ||
	    rv_diff_parse(&d, p->diff, strlen(p->diff), NULL) < 0)
		goto out;
	for (f = 0; f < d->nfiles; f++)
		for (k = 0; k < d->files[f].nhunks; k++)
			for (l = 0; l < d->files[f].hunks[k].nlines; l++)
				*lines +=
					d->files[f].hunks[k].lines[l].origin !=
					' ';
	if (h)
		rv_history_set_horizon(h, id);
	if (h && rv_history_risk(h, d, p->commit_message, p->author_email,
				 &score, NULL, NULL) < 0)
		score = -1;
out:
	rv_diff_free(d);
	mp_patch_free(p);
	return score;
}

struct ranked {
	size_t idx;
	double risk;
	long lines;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->risk != y->risk)
		return x->risk < y->risk ? 1 : -1;
	if (x->lines != y->lines)
		return x->lines < y->lines ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Which commits to review: all when they are at most max, else the max
 * riskiest. *risk gets each commit's score (-1 when unknown or not
 * computed). 0, or -1 when memory ran out.
 */
static int pick_riskiest(struct rv_repo *repo, struct rv_history *h,
			 const struct rv_range *c, size_t max, bool **pick,
			 double **risk)
{
	struct ranked *rk;
	size_t i;

	*pick = calloc(c->n ? c->n : 1, sizeof(**pick));
	*risk = calloc(c->n ? c->n : 1, sizeof(**risk));
	if (!*pick || !*risk)
		return -1;
	for (i = 0; i < c->n; i++) {
		(*pick)[i] = c->n <= max;
		(*risk)[i] = -1;
	}
	if (c->n <= max)
		return 0;
	rk = calloc(c->n, sizeof(*rk));
	if (!rk)
		return -1;
	for (i = 0; i < c->n; i++) {
		rk[i].idx = i;
		rk[i].risk = commit_risk(repo, h, c->ids[i], &rk[i].lines);
		(*risk)[i] = rk[i].risk;
	}
	qsort(rk, c->n, sizeof(*rk), ranked_cmp);
	for (i = 0; i < max; i++)
		(*pick)[rk[i].idx] = true;
	free(rk);
	return 0;
}

/* What the models of the whole run did with the budget. */
struct ci_money {
	size_t asked;	/* calls sent or answered from the cache */
	size_t refused; /* calls not sent: a cap would have been passed */
};

/*
 * A run: commits of the range that follow each other (each the parent of
 * the next), reviewed as one series on the first one's parent, so that
 * a later commit's fix drops an earlier commit's finding and the models
 * also see the run's tip (the series-tip rule of `quorum review`).
 */
#define CI_RUN_MAX 100

struct ci_run {
	struct mp_series s;
	struct mp_patch *patches[CI_RUN_MAX];
	char ids[CI_RUN_MAX][RV_OID_HEXSZ + 1];
	char base[RV_OID_HEXSZ + 1]; /* the first commit's parent */
	char last[RV_OID_HEXSZ +
		  1]; /* the newest commit seen, empty ones too */
};

static void run_clear(struct ci_run *run)
{
	size_t k;

	for (k = 0; k < run->s.npatches; k++)
		mp_patch_free(run->patches[k]);
	memset(&run->s, 0, sizeof(run->s));
	*run->base = *run->last = '\0';
}

/* Review the run into rp and empty it; 0, or an exit status. */
static int review_run(struct rv_repo *repo, struct ci_run *run,
		      struct rv_review_opts *opts, struct rv_history *history,
		      struct report *rp, int fail_on, bool *failed,
		      struct ci_money *money)
{
	struct errmsg err = {""};
	struct rv_review *r = NULL;
	size_t i, n = run->s.npatches;
	int ret = 0, rr;

	if (!n)
		goto out;
	for (i = 0; i < n; i++) {
		run->patches[i]->subject.index = (int)i + 1;
		run->patches[i]->subject.total = (int)n;
	}
	run->s.patches = run->patches;
	run->s.version = 1;
	run->s.total = (int)n;
	run->s.complete = true;
	/* Only the fixes that came before the run may vote on it. */
	if (history)
		rv_history_set_horizon(history, run->ids[0]);
	opts->apply.base = run->base;
	opts->series_key = run->ids[n - 1];
	rr = rv_review_series(&r, repo, &run->s, opts, &err);
	opts->apply.base = NULL;
	if (rr < 0 && !r) {
		error("commit %.12s: %s", run->ids[0], err.msg);
		ret = rr == RV_ERR_REPO ? EXIT_ENV : EXIT_USAGE;
		goto out;
	}
	report_add_commits(rp, r, (const char(*)[RV_OID_HEXSZ + 1]) run->ids,
			   n);
	if (rr == RV_ERR_APPLY) {
		error("commit %.12s..%.12s: %s", run->ids[0], run->ids[n - 1],
		      err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < r->findings.n; i++)
		if ((int)r->findings.items[i].severity >= fail_on)
			*failed = true;
	for (i = 0; i < r->ncalls; i++) {
		if (r->calls[i].budget)
			money->refused++;
		else
			money->asked++;
	}
out:
	rv_review_free(r);
	run_clear(run);
	return ret;
}

/*
 * Add commit id to the run, reviewing the run first when id does not
 * follow it. 0, or an exit status.
 */
static int run_add(struct rv_repo *repo, struct ci_run *run, const char *id,
		   struct rv_review_opts *opts, struct rv_history *history,
		   struct report *rp, int fail_on, bool *failed,
		   struct ci_money *money)
{
	struct errmsg err = {""};
	struct sb mail = SB_INIT;
	struct mp_patch *p = NULL;
	char parent[RV_OID_HEXSZ + 1];
	int ret = 0;

	if (rv_commit_email(repo, id, &mail, parent, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	if (mp_patch_parse(&p, sb_str(&mail), mail.len, NULL, &err) < 0) {
		error("commit %.12s: %s", id, err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	if (*run->last &&
	    (strcmp(parent, run->last) || run->s.npatches == CI_RUN_MAX)) {
		ret = review_run(repo, run, opts, history, rp, fail_on, failed,
				 money);
		if (ret)
			goto out;
	}
	if (!*run->last)
		memcpy(run->base, parent, sizeof(run->base));
	memcpy(run->last, id, sizeof(run->last));
	/* An empty commit has no diff: nothing to review, the run goes on. */
	if (!p->diff)
		goto out;
	memcpy(run->ids[run->s.npatches], id, sizeof(run->ids[0]));
	run->patches[run->s.npatches++] = p;
	p = NULL;
out:
	mp_patch_free(p);
	sb_release(&mail);
	return ret;
}

static int cmd_ci(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"range", required_argument, NULL, 'r'},
		{"budget", required_argument, NULL, 'B'},
		{"fail-on", required_argument, NULL, 'F'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"max-commits", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rv_review_opts opts = RV_REVIEW_OPTS_INIT;
	const char *repo_path = ".", *range = NULL, *output = NULL;
	struct qconfig *cfg = NULL;
	struct rv_repo *repo = NULL;
	struct errmsg err = {""};
	struct rv_history *history = NULL;
	struct llm_voters llm = {0};
	struct rv_prompts *prompts = NULL;
	struct rv_ledger *ledger = NULL;
	struct rv_range commits = {0};
	struct report *rp = NULL;
	char *workdir = NULL, *end;
	double budget = -1;
	int c, ret = EXIT_USAGE, quorum = 0, fmt = FMT_TEXT;
	int fail_on = RV_SEV_MEDIUM, max_commits = 0;
	bool *pick = NULL;
	double *risk = NULL;
	struct ci_run *run = NULL;
	bool failed = false;
	size_t i, nreviewed = 0, nskipped = 0;
	struct ci_money money = {0, 0};

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			repo_path = optarg;
			break;
		case 'r':
			range = optarg;
			break;
		case 'B':
			budget = strtod(optarg, &end);
			if (end == optarg || *end ||
			    !(budget >= 0 && budget < 1e9))
				return usage_error(&cmd_ci_def,
						   "--budget wants an amount "
						   "in USD, not '%s'",
						   optarg);
			break;
		case 'F':
			fail_on = rv_severity_parse(optarg);
			if (fail_on < 0)
				return usage_error(
					&cmd_ci_def,
					"--fail-on wants low, medium, high or "
					"critical, not '%s'",
					optarg);
			break;
		case 'f':
			fmt = report_format_parse(optarg);
			if (fmt < 0 || fmt == FMT_EMAIL)
				return usage_error(&cmd_ci_def,
						   "--format wants text, json "
						   "or sarif, not '%s'",
						   optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'm':
			max_commits = (int)strtol(optarg, &end, 10);
			if (*end || max_commits < 1 || max_commits > 100000)
				return usage_error(
					&cmd_ci_def,
					"--max-commits wants a number from 1 "
					"to 100000, not '%s'",
					optarg);
			break;
		case 'h':
			return cmd_print_help(&cmd_ci_def);
		default:
			return usage_error(&cmd_ci_def,
					   "unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(&cmd_ci_def, "unexpected argument '%s'",
				   argv[optind]);
	if (!range)
		return usage_error(&cmd_ci_def, "--range A..B is required");

	if (rv_repo_open(&repo, repo_path, &err) < 0) {
		error("%s", err.msg);
		return EXIT_ENV;
	}
	if (qconfig_load(&cfg, repo_path, &err) < 0 ||
	    qconfig_get_int(cfg, "review.quorum", 0, &quorum, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	opts.quorum = quorum;
	if (!max_commits &&
	    (qconfig_get_int(cfg, "ci.max-commits", CI_MAX_COMMITS,
			     &max_commits, &err) < 0 ||
	     max_commits < 1)) {
		error("%s", max_commits < 1 && !*err.msg
				    ? "config ci.max-commits must be 1 or more"
				    : err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	if (llm_voters_load(cfg, &llm, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	if (llm.n && budget == 0) {
		/* A budget of nothing: never ask a model, say so once. */
		warning("--budget 0: reviewing with the offline voters only");
		llm_voters_release(&llm);
	}
	if (llm.n &&
	    (llm_review_opts(cfg, &llm, &opts, &prompts, &err) < 0 ||
	     cost_review_opts(cfg, NULL, budget, &opts, &ledger, &err) < 0)) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	if (rv_range_commits(&commits, repo, range, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	if (rv_history_open(&history, repo_path, &err) < 0)
		warning("%s; reviewing without it", err.msg);
	workdir = rv_workdir_of(repo_path);
	opts.history = history;
	opts.workdir = workdir;

	rp = report_new((enum report_format)fmt);
	if (!rp) {
		error("out of memory");
		ret = EXIT_ENV;
		goto out;
	}
	if (pick_riskiest(repo, history, &commits, (size_t)max_commits, &pick,
			  &risk) < 0) {
		error("out of memory");
		ret = EXIT_ENV;
		goto out;
	}
	ret = EXIT_CLEAN;
	run = calloc(1, sizeof(*run));
	if (!run) {
		error("out of memory");
		ret = EXIT_ENV;
		goto out;
	}
	for (i = 0; i < commits.n && ret == EXIT_CLEAN; i++) {
		if (!pick[i]) {
			/* A commit left out ends the run: its successor does
			 * not apply without it. */
			ret = review_run(repo, run, &opts, history, rp, fail_on,
					 &failed, &money);
			continue;
		}
		ret = run_add(repo, run, commits.ids[i], &opts, history, rp,
			      fail_on, &failed, &money);
		nreviewed++;
	}
	if (ret == EXIT_CLEAN)
		ret = review_run(repo, run, &opts, history, rp, fail_on,
				 &failed, &money);
	if (run)
		run_clear(run);
	for (i = 0; i < commits.n; i++)
		if (!pick[i]) {
			char *title = commit_title(repo, commits.ids[i]);

			report_skip(rp, commits.ids[i], title, risk[i]);
			free(title);
			nskipped++;
		}
	if (report_write(rp, output, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	fprintf(stderr, "quorum ci: %zu commit%s reviewed, %zu merge%s skipped",
		nreviewed, nreviewed == 1 ? "" : "s", commits.nmerges,
		commits.nmerges == 1 ? "" : "s");
	if (nskipped)
		fprintf(stderr, ", %zu commit%s over --max-commits %d skipped",
			nskipped, nskipped == 1 ? "" : "s", max_commits);
	fputs("\n", stderr);
	if (ret == EXIT_CLEAN && failed)
		ret = EXIT_FINDINGS;
	if (ret != EXIT_USAGE && money.refused && !money.asked) {
		/* Models configured and paid for, none asked: not a review. */
		error("the budget ran out before any model was asked; the "
		      "offline voters reviewed alone (raise --budget or the "
		      "caps of `quorum help cost`)");
		ret = EXIT_ENV;
	}
out:
	free(run);
	free(pick);
	free(risk);
	report_free(rp);
	rv_range_release(&commits);
	rv_ledger_free(ledger);
	rv_prompts_free(prompts);
	llm_voters_release(&llm);
	rv_history_free(history);
	free(workdir);
	rv_repo_free(repo);
	qconfig_free(cfg);
	return ret;
}
