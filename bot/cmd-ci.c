// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-ci.c - `quorum ci`: review the non-merge commits of a range,
 * oldest first, each run of consecutive commits that really are a
 * series (one author, one topic or one merge) as one series on the
 * first one's parent, for a CI job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <git2.h>

#include "review/cost.h"
#include "dry-run.h"
#include "session.h"

static int cmd_ci(int argc, char **argv);

const struct cmd cmd_ci_def = {
	"ci",
	cmd_ci,
	"quorum ci [-C REPO] --range A..B [--budget USD] [--fail-on SEVERITY] "
	"[--max-commits N] [--dry-run[=DIR]] [--format text|json|sarif] "
	"[--output FILE]",
	"review each commit of a range, for CI",
	"Reviews each non-merge commit of the range A..B (reachable from B, "
	"not\n"
	"from A), oldest first, as the patch `git format-patch` would make of\n"
	"it, applied in memory. Merges and root commits are skipped and\n"
	"counted. Nothing in the repository changes.\n"
	"\n"
	"Commits that follow each other (each the parent of the next), by\n"
	"the same author, that share a topic (the subject's \"topic:\" "
	"prefix)\n"
	"or were brought in by the same merge (a posted series merged) are\n"
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
	"                     0 reviews with the offline voters only. Before\n"
	"                     the first request the spend is planned: the\n"
	"                     riskiest patches first, inputs bounded by the\n"
	"                     voters' free token counters; answers that cost\n"
	"                     less than their bound pay for more requests;\n"
	"                     runs of commits are reviewed riskiest first\n"
	"                     (also under budget.monthly) and reported in\n"
	"                     the range's order\n"
	"  --dry-run[=DIR]    send nothing: print the requests each run would\n"
	"                     send (bodies to DIR with =DIR), their token\n"
	"                     bounds and prices, the plan, the totals per "
	"voter,\n"
	"                     the requests a voter would not get (over its\n"
	"                     context-tokens);\n"
	"                     exit 0 (nothing was asked: no verdict)\n"
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
	"The report is written whole or not at all: an error that stops the\n"
	"run writes nothing to standard output or FILE (a SARIF upload step\n"
	"then finds no file), only one line to standard error. A commit that\n"
	"does not apply on its parent is in the report, the other runs are\n"
	"still reviewed, and the exit status is 2.\n"
	"\n"
	"Voters and config are those of `quorum review`; with a history index\n"
	"each run is reviewed with only the fixes that came before it.\n"
	"\n"
	"Exit status: 0 nothing at or above --fail-on, 1 findings at or above\n"
	"it, 2 usage, input or config error (a range not of the form A..B, a\n"
	"commit that does not apply on its parent, a malformed config),\n"
	"3 environment error (repository, a revision that does not resolve, a\n"
	"missing API key), or a\n"
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

/* What ci was asked for. */
struct ci_opts {
	const char *range;
	int fail_on;	 /* enum rv_severity: exit 1 at or above it */
	int max_commits; /* 0: ci.max-commits */
};

#define CI_OPTS_INIT                                                           \
	{                                                                      \
		.fail_on = RV_SEV_MEDIUM,                                      \
	}

/* A ci run in progress: where it reports, and what it came to. */
struct ci_review {
	struct session *s;
	const char *range; /* --range A..B */
	struct report *rp;
	struct dry_run *dry; /* --dry-run in text: what would be sent */
	int fail_on;
	bool failed;	  /* a finding at or above fail_on */
	bool not_applied; /* a run did not apply: exit 2 at the end */
	size_t nreviewed, nskipped;
	/* Under a cap: the runs, reviewed riskiest first at the end. */
	struct ci_run **queue;
	size_t nqueue;
	/* What the models of the whole run did with the budget. */
	struct {
		size_t asked;	/* calls sent or answered from the cache */
		size_t refused; /* calls not sent: a cap would be passed */
	} money;
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
	char group[RV_OID_HEXSZ + 1]; /* the merge that brought it, or "" */
};

/*
 * Which commits of the range a merge of the range brought in (its
 * second parent's side): they were posted and merged as one series.
 * groups[i] is the merge's id for commits->ids[i], else "". Bounded:
 * past CI_GROUP_WORK commits walked, later merges are not looked at.
 */
#define CI_GROUP_WORK 200000

static int cmp_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char (*merge_groups(const char *repo_path, const char *range,
			   const struct rv_range *commits))[RV_OID_HEXSZ + 1]
{
	char(*groups)[RV_OID_HEXSZ + 1] =
		xcalloc(commits->n + 1, sizeof(*groups));
	const char **sorted = xcalloc(commits->n + 1, sizeof(*sorted));
	git_repository *repo = NULL;
	git_revwalk *walk = NULL, *side = NULL;
	git_oid oid, moid;
	size_t i, work = 0;

	for (i = 0; i < commits->n; i++)
		sorted[i] = commits->ids[i];
	qsort(sorted, commits->n, sizeof(*sorted), cmp_id);
	if (git_repository_open_ext(&repo, repo_path, 0, NULL) < 0 ||
	    git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_push_range(walk, range) < 0)
		goto out;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	while (work < CI_GROUP_WORK && git_revwalk_next(&moid, walk) == 0) {
		git_commit *m = NULL;
		char mhex[RV_OID_HEXSZ + 1];

		work++;
		if (git_commit_lookup(&m, repo, &moid) < 0)
			continue;
		if (git_commit_parentcount(m) < 2 ||
		    git_revwalk_new(&side, repo) < 0 ||
		    git_revwalk_push(side, git_commit_parent_id(m, 1)) < 0 ||
		    git_revwalk_hide(side, git_commit_parent_id(m, 0)) < 0) {
			git_commit_free(m);
			git_revwalk_free(side);
			side = NULL;
			continue;
		}
		git_oid_tostr(mhex, sizeof(mhex), &moid);
		while (work < CI_GROUP_WORK &&
		       git_revwalk_next(&oid, side) == 0) {
			char hex[RV_OID_HEXSZ + 1];
			const char *key = hex, **at;

			work++;
			git_oid_tostr(hex, sizeof(hex), &oid);
			at = bsearch(&key, sorted, commits->n, sizeof(*sorted),
				     cmp_id);
			/* The oldest merge that has it brought it. */
			if (at && !*groups[(*at - commits->ids[0]) /
					   sizeof(commits->ids[0])])
				memcpy(groups[(*at - commits->ids[0]) /
					      sizeof(commits->ids[0])],
				       mhex, sizeof(mhex));
		}
		git_revwalk_free(side);
		side = NULL;
		git_commit_free(m);
	}
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	free(sorted);
	return groups;
}

/* The topic of a subject: "net/ipv4" of "net/ipv4: fix foo", or 0. */
static size_t topic_len(const char *title)
{
	const char *colon = title ? strchr(title, ':') : NULL;

	if (!colon || colon == title || colon - title > 64 || colon[1] != ' ')
		return 0;
	return (size_t)(colon - title);
}

/*
 * Is p the next patch of the run's series? Only when it has the same
 * author and either the same merge brought both in or their subjects
 * share a topic: consecutive unrelated commits are not a series.
 */
static bool same_series(const struct ci_run *run, const struct mp_patch *p,
			const char *group)
{
	const struct mp_patch *first = run->s.npatches ? run->patches[0] : NULL;
	const char *a, *b;
	size_t n;

	if (!first)
		return true;
	if (!first->author_email || !p->author_email ||
	    strcasecmp(first->author_email, p->author_email))
		return false;
	if (*group && !strcmp(group, run->group))
		return true;
	a = first->subject.title;
	b = p->subject.title;
	n = topic_len(a);
	return n && n == topic_len(b) && !strncmp(a, b, n);
}

static void run_clear(struct ci_run *run)
{
	size_t k;

	for (k = 0; k < run->s.npatches; k++)
		mp_patch_free(run->patches[k]);
	memset(&run->s, 0, sizeof(run->s));
	*run->base = *run->last = *run->group = '\0';
}

/* Make run a series and review it; rr and *out as rv_review_series(). */
static int review_series_of(struct ci_review *cr, struct ci_run *run,
			    struct rv_review **out, struct errmsg *err)
{
	struct rv_review_opts *opts = &cr->s->opts;
	struct rv_history *history = cr->s->history;
	size_t i, n = run->s.npatches;
	int rr;

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
	rr = rv_review_series(out, cr->s->repo, &run->s, opts, err);
	opts->apply.base = NULL;
	return rr;
}

/* Report run's review r (rr, err from it); 0, or an exit status. */
static int report_run(struct ci_review *cr, struct ci_run *run,
		      struct rv_review *r, int rr, const struct errmsg *err)
{
	size_t i, n = run->s.npatches;

	if (rr < 0 && !r) {
		error("commit %.12s: %s", run->ids[0], err->msg);
		return rr == RV_ERR_REPO || rr == RV_ERR_DEADLINE ? EXIT_ENV
								  : EXIT_USAGE;
	}
	if (cr->dry && rr == 0) {
		struct errmsg werr = {""};

		if (dry_run_add(cr->dry, r, stdout, &werr) < 0) {
			error("%s", werr.msg);
			return EXIT_ENV;
		}
		return 0;
	}
	if (r->apply) {
		/* The base is the run's parent commit, not a --base. */
		r->apply->base_source = RV_BASE_PARENT;
		free(r->apply->base_note);
		r->apply->base_note = NULL;
	}
	report_add_commits(cr->rp, r,
			   (const char(*)[RV_OID_HEXSZ + 1]) run->ids, n);
	if (rr == RV_ERR_APPLY) {
		/* In the report; the other runs are still reviewed. */
		error("commit %.12s..%.12s: %s", run->ids[0], run->ids[n - 1],
		      err->msg);
		cr->not_applied = true;
		return 0;
	}
	for (i = 0; i < r->findings.n; i++)
		if ((int)r->findings.items[i].severity >= cr->fail_on)
			cr->failed = true;
	for (i = 0; i < r->ncalls; i++) {
		if (r->calls[i].budget)
			cr->money.refused++;
		else
			cr->money.asked++;
	}
	return 0;
}

/*
 * Review the run into rp and empty it; 0, or an exit status. Under a
 * cap the run is queued instead, for ci_review_queue().
 */
static int review_run(struct ci_review *cr, struct ci_run *run)
{
	struct errmsg err = {""};
	struct rv_review *r = NULL;
	int ret = 0, rr;

	if (!run->s.npatches)
		goto out;
	if (cr->queue) {
		struct ci_run *q = xcalloc(1, sizeof(*q));

		/* The patches move to the queue's copy. */
		*q = *run;
		memset(&run->s, 0, sizeof(run->s));
		*run->base = *run->last = '\0';
		cr->queue[cr->nqueue++] = q;
		return 0;
	}
	rr = review_series_of(cr, run, &r, &err);
	ret = report_run(cr, run, r, rr, &err);
out:
	rv_review_free(r);
	run_clear(run);
	return ret;
}

/* The risk of a run: its riskiest commit's, else its lines changed. */
static void run_risk(struct ci_review *cr, const struct ci_run *run,
		     double *risk, long *lines)
{
	size_t k;

	*risk = -1;
	*lines = 0;
	for (k = 0; k < run->s.npatches; k++) {
		long l = 0;
		double x = commit_risk(cr->s->repo, cr->s->history, run->ids[k],
				       &l);

		if (x > *risk)
			*risk = x;
		*lines += l;
	}
}

/*
 * Under a cap, the money goes to the riskiest runs first: review the
 * queued runs in order of risk (the history index's score, else the
 * lines they change), then report them in the range's order. 0, or the
 * exit status of the first run (in review order) that failed; the runs
 * after it are not reviewed (a run that does not apply is reported and
 * stops nothing).
 */
static int ci_review_queue(struct ci_review *cr)
{
	size_t n = cr->nqueue, i, k;
	struct ranked *rk = xcalloc(n + 1, sizeof(*rk));
	struct rv_review **r = xcalloc(n + 1, sizeof(*r));
	struct errmsg *err = xcalloc(n + 1, sizeof(*err));
	int *rr = xcalloc(n + 1, sizeof(*rr));
	bool *done = xcalloc(n + 1, sizeof(*done));
	int ret = 0;

	for (i = 0; i < n; i++) {
		rk[i].idx = i;
		if (n > 1)
			run_risk(cr, cr->queue[i], &rk[i].risk, &rk[i].lines);
	}
	if (n > 1) {
		qsort(rk, n, sizeof(*rk), ranked_cmp);
		fprintf(stderr,
			"quorum ci: under the budget, %zu runs of "
			"commits are reviewed riskiest first:",
			n);
		for (i = 0; i < n; i++)
			fprintf(stderr, " %.12s%s",
				cr->queue[rk[i].idx]->ids[0],
				i + 1 < n ? "," : "\n");
	}
	for (i = 0; i < n; i++) {
		k = rk[i].idx;
		rr[k] = review_series_of(cr, cr->queue[k], &r[k], &err[k]);
		done[k] = true;
		if (rr[k] < 0 && rr[k] != RV_ERR_APPLY)
			break;
	}
	for (k = 0; k < n; k++) {
		if (done[k] && !ret)
			ret = report_run(cr, cr->queue[k], r[k], rr[k],
					 &err[k]);
		rv_review_free(r[k]);
		run_clear(cr->queue[k]);
		free(cr->queue[k]);
	}
	cr->nqueue = 0;
	free(rk);
	free(r);
	free(err);
	free(rr);
	free(done);
	return ret;
}

/*
 * Add commit id to the run, reviewing the run first when id does not
 * follow it. 0, or an exit status.
 */
static int run_add(struct ci_review *cr, struct ci_run *run, const char *id,
		   const char *group)
{
	struct errmsg err = {""};
	struct sb mail = SB_INIT;
	struct mp_patch *p = NULL;
	char parent[RV_OID_HEXSZ + 1];
	int ret = 0;

	if (rv_commit_email(cr->s->repo, id, &mail, parent, &err) < 0) {
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
	    (strcmp(parent, run->last) || run->s.npatches == CI_RUN_MAX ||
	     (p->diff && !same_series(run, p, group)))) {
		ret = review_run(cr, run);
		if (ret)
			goto out;
	}
	if (!*run->last) {
		memcpy(run->base, parent, sizeof(run->base));
		memcpy(run->group, group, sizeof(run->group));
	}
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

/* The options of ci; 0, or -1 to return *exit_code. */
static int ci_options(int argc, char **argv, struct cmd_opts *co,
		      struct ci_opts *ci, int *exit_code)
{
	static const struct option longopts[] = {
		{"range", required_argument, NULL, 'r'},
		{"fail-on", required_argument, NULL, 'F'},
		{"max-commits", required_argument, NULL, 'm'},
		CMD_OPT_BUDGET,
		CMD_OPT_DRY_RUN,
		CMD_OPT_FORMAT,
		CMD_OPT_OUTPUT,
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	char *end;
	int c;

	co->formats &= ~(1u << FMT_EMAIL); /* a commit has no thread */
	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			ci->range = optarg;
			break;
		case 'F':
			ci->fail_on = rv_severity_parse(optarg);
			if (ci->fail_on < 0) {
				*exit_code = usage_error(
					&cmd_ci_def,
					"--fail-on wants low, medium, high "
					"or critical, not '%s'",
					optarg);
				return -1;
			}
			break;
		case 'm':
			ci->max_commits = (int)strtol(optarg, &end, 10);
			if (*end || ci->max_commits < 1 ||
			    ci->max_commits > 100000) {
				*exit_code = usage_error(
					&cmd_ci_def,
					"--max-commits wants a number from "
					"1 to 100000, not '%s'",
					optarg);
				return -1;
			}
			break;
		default:
			if (cmd_opt(&cmd_ci_def, c, argv, co, exit_code) < 0)
				return -1;
		}
	}
	if (optind < argc) {
		*exit_code = usage_error(
			&cmd_ci_def, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!ci->range) {
		*exit_code =
			usage_error(&cmd_ci_def, "--range A..B is required");
		return -1;
	}
	return 0;
}

/* --max-commits, else ci.max-commits from the config; 0 or -1 with err. */
static int ci_max_commits(struct session *s, struct ci_opts *ci,
			  struct errmsg *err)
{
	if (ci->max_commits)
		return 0;
	if (qconfig_get_int(s->cfg, "ci.max-commits", CI_MAX_COMMITS,
			    &ci->max_commits, err) < 0)
		return -1;
	if (ci->max_commits < 1)
		return errmsg_set(err, -1,
				  "config ci.max-commits must be 1 or more");
	return 0;
}

/*
 * Review the picked commits of the range in runs, and list the others
 * as skipped. 0 or an exit status.
 */
static int ci_review_range(struct ci_review *cr, const struct rv_range *commits,
			   const bool *pick, const double *risk)
{
	struct ci_run *run = xcalloc(1, sizeof(*run));
	char(*groups)[RV_OID_HEXSZ + 1] =
		merge_groups(cr->s->repo_path, cr->range, commits);
	size_t i;
	int ret = EXIT_CLEAN;

	for (i = 0; i < commits->n && ret == EXIT_CLEAN; i++) {
		if (!pick[i]) {
			/* A commit left out ends the run: its successor does
			 * not apply without it. */
			ret = review_run(cr, run);
			continue;
		}
		ret = run_add(cr, run, commits->ids[i], groups[i]);
		cr->nreviewed++;
	}
	if (ret == EXIT_CLEAN)
		ret = review_run(cr, run);
	if (cr->queue && ret == EXIT_CLEAN)
		ret = ci_review_queue(cr);
	for (i = 0; i < cr->nqueue; i++) {
		run_clear(cr->queue[i]);
		free(cr->queue[i]);
	}
	cr->nqueue = 0;
	run_clear(run);
	free(run);
	free(groups);
	for (i = 0; i < commits->n; i++)
		if (!pick[i]) {
			char *title =
				commit_title(cr->s->repo, commits->ids[i]);

			report_skip(cr->rp, commits->ids[i], title, risk[i]);
			free(title);
			cr->nskipped++;
		}
	return ret;
}

/* The summary line on stderr, and the exit status it comes to. */
static int ci_finish(const struct ci_review *cr, const struct ci_opts *ci,
		     const struct rv_range *commits, int ret)
{
	fprintf(stderr, "quorum ci: %zu commit%s reviewed, %zu merge%s skipped",
		cr->nreviewed, cr->nreviewed == 1 ? "" : "s", commits->nmerges,
		commits->nmerges == 1 ? "" : "s");
	if (cr->nskipped)
		fprintf(stderr, ", %zu commit%s over --max-commits %d skipped",
			cr->nskipped, cr->nskipped == 1 ? "" : "s",
			ci->max_commits);
	fputs("\n", stderr);
	if (ret == EXIT_CLEAN && cr->not_applied)
		ret = EXIT_USAGE;
	if (ret == EXIT_CLEAN && cr->failed)
		ret = EXIT_FINDINGS;
	if (ret != EXIT_USAGE && cr->money.refused && !cr->money.asked) {
		/* Models configured and paid for, none asked: not a review. */
		error("the budget ran out before any model was asked; the "
		      "offline voters reviewed alone (raise --budget or the "
		      "caps of `quorum help cost`)");
		ret = EXIT_ENV;
	}
	return ret;
}

static int cmd_ci(int argc, char **argv)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct ci_opts ci = CI_OPTS_INIT;
	struct session s = SESSION_INIT;
	struct ci_review cr = {0};
	struct rv_range commits = {0};
	struct errmsg err = {""};
	struct dry_run dry = {0};
	bool *pick = NULL;
	double *risk = NULL;
	int ret, rr;

	if (ci_options(argc, argv, &co, &ci, &ret) < 0)
		return ret;
	ret = session_start(&s, &co,
			    SESSION_REPO | SESSION_HISTORY | SESSION_VOTERS |
				    SESSION_COST);
	if (ret)
		goto out;
	ret = EXIT_USAGE;
	if (ci_max_commits(&s, &ci, &err) < 0) {
		error("%s", err.msg);
		goto out;
	}
	rr = rv_range_commits(&commits, s.repo, ci.range, &err);
	if (rr < 0) {
		/* A revision that does not resolve: as for review --base. */
		error("%s", err.msg);
		ret = rr == RV_ERR_REPO ? EXIT_ENV : EXIT_USAGE;
		goto out;
	}
	cr.s = &s;
	cr.range = ci.range;
	cr.fail_on = ci.fail_on;
	cr.rp = report_new(co.format);
	if (!cr.rp || pick_riskiest(s.repo, s.history, &commits,
				    (size_t)ci.max_commits, &pick, &risk) < 0) {
		error("out of memory");
		ret = EXIT_ENV;
		goto out;
	}
	if (co.dry_run && co.format == FMT_TEXT) {
		dry.dir = co.dry_run_dir;
		cr.dry = &dry;
	}
	/* A cap and models to pay: plan across the runs, riskiest first. */
	if (s.opts.nllm && (s.opts.budget_run > 0 || s.opts.budget_month > 0))
		cr.queue = xcalloc(commits.n + 1, sizeof(*cr.queue));
	ret = ci_review_range(&cr, &commits, pick, risk);
	if (cr.dry) {
		dry_run_finish(&dry, stdout);
	} else if (ret) {
		/* Stopped midway: no report rather than part of one. */
	} else if ((rr = report_write(cr.rp, co.output, &err)) < 0) {
		error("%s", err.msg);
		ret = rr == REPORT_ERR_INPUT ? EXIT_USAGE : EXIT_ENV;
		goto out;
	}
	ret = ci_finish(&cr, &ci, &commits, ret);
	if (co.dry_run && ret != EXIT_USAGE)
		ret = EXIT_CLEAN; /* nothing was asked: no verdict */
out:
	free(cr.queue);
	dry_run_release(&dry);
	free(pick);
	free(risk);
	report_free(cr.rp);
	rv_range_release(&commits);
	session_close(&s);
	return ret;
}
