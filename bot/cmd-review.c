// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-review.c - `quorum review`: read a series, apply it in memory,
 * ask the voters, print the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include "review/cost.h"
#include "dry-run.h"
#include "local-mail.h"
#include "session.h"

static int cmd_review(int argc, char **argv);

const struct cmd cmd_review_def = {
	"review",
	cmd_review,
	"quorum review [-C REPO] [--base REV] [--quorum N] [--list NAME] "
	"[--budget USD] [--no-cache] [--dry-run[=DIR]] "
	"[--format text|json|sarif|email] [--output FILE] "
	"[FILE|-|MESSAGE-ID|URL]",
	"review a patch series from an mbox file, standard input or local mail",
	"Reads a patch series (an mbox from git format-patch or b4 am, a "
	"single\n"
	"patch mail, or `git show` output) from FILE or standard input, or "
	"the\n"
	"series of a message in the local notmuch database, applies it in\n"
	"memory to the repository (nothing in your working tree, index or\n"
	"branches changes), asks the voters to flag likely defects, and "
	"prints\n"
	"the findings that enough voters agree on.\n"
	"\n"
	"A series that needs another series of the same input (b4 >= 0.14\n"
	"writes the prerequisite series first; format-patch --base declares "
	"it\n"
	"with prerequisite-patch-id:, b4 with prerequisite-change-id: or\n"
	"-message-id:) is applied on top of it, and only the series that\n"
	"needs it is reviewed. An input of more than 10000 series is refused:\n"
	"split it.\n"
	"\n"
	"Options:\n"
	"  -C REPO        the repository to apply to (default: the current\n"
	"                 directory; outside a repository the diff is "
	"reviewed\n"
	"                 alone)\n"
	"  --base REV     apply on REV (default: the series' base-commit when "
	"the\n"
	"                 repository has it, else HEAD)\n"
	"  --quorum N     distinct voters a finding needs (default: "
	"review.quorum\n"
	"                 from the config, else a majority of the voters)\n"
	"  --list NAME    the series came from list NAME: its\n"
	"                 list.NAME.budget-per-day applies and the ledger says "
	"so\n"
	"  --budget USD   spend at most USD on LLM requests in this run; 0\n"
	"                 reviews with the offline voters only\n"
	"  --no-cache     ask the models even about patches they have seen\n"
	"  --dry-run[=DIR]\n"
	"                 send nothing: print each request the LLM voters "
	"would\n"
	"                 get (or write its body to DIR/NNNN-VOTER.json), its\n"
	"                 input tokens (counted by the voter's free counter, "
	"else\n"
	"                 a token per byte), max-tokens, and what it costs at "
	"most\n"
	"                 and about (at the voter's longest recent answer), "
	"then\n"
	"                 the totals per voter and the plan under the caps, "
	"and\n"
	"                 each request a voter would not get (a patch over "
	"its\n"
	"                 context-tokens); with --format json the report "
	"carries\n"
	"                 them (dry_run, abstentions);\n"
	"                 exit 0 (nothing was asked: no verdict)\n"
	"  --format FMT   text (default), json (contrib/review-json.md) or\n"
	"                 sarif (SARIF 2.1.0 for code-scanning UIs) or email\n"
	"                 (the reply `quorum watch` would send the author;\n"
	"                 watch.from and watch.domain apply)\n"
	"  --output FILE  write the report to FILE instead of standard output\n"
	"  -h, --help     this text\n"
	"\n"
	"The report, in every format, is written whole or not at all: an "
	"error\n"
	"that stops the review writes nothing to standard output or FILE, "
	"only\n"
	"one line to standard error. A series that does not apply is in the\n"
	"report (JSON: applied false, the failing patch's error), the other\n"
	"series are still reviewed, and the exit status is 2.\n"
	"\n"
	"MESSAGE-ID or URL: when the argument is not an existing file (a FILE\n"
	"always wins) but <ID>, ID@HOST, or a public-inbox URL such as\n"
	"https://lore.kernel.org/LIST/ID/ (also .../ID/T/, .../ID/raw,\n"
	"https://lore.kernel.org/r/ID, https://patch.msgid.link/ID), the\n"
	"message is looked up in the local notmuch database, read-only\n"
	"(notmuch.database in the config, else notmuch's own config:\n"
	"NOTMUCH_CONFIG or ~/.notmuch-config). Its thread is read and the one\n"
	"series holding the message (or answered by it, for a reply) is\n"
	"reviewed, even when the thread has a newer version. The threads of\n"
	"its prerequisite-message-id: lines that are in the database join the\n"
	"input; a missing one is named in a warning. quorum never fetches\n"
	"mail: for a message that is not there, run\n"
	"`b4 am -o - ID | quorum review -`, or fetch it and `notmuch new`.\n"
	"\n"
	"LLM voters: each [voter \"NAME\"] section of the config with "
	"provider\n"
	"openai or anthropic (url, model, key-env or a 0600 key-file, weight,\n"
	"price-in, price-out, price-cached, max-tokens, timeout, "
	"context-tokens,\n"
	"max-parallel, count-tokens: auto, anthropic, tokenize or none)\n"
	"reviews every patch and the series tip, all at once;\n"
	"review.retries and review.backoff bound the requests.\n"
	"review.deadline (seconds, default 600) bounds the whole review,\n"
	"from reading the input to checking the answers: a review that passes\n"
	"it stops there with one line and exit 3, except the requests: those\n"
	"not answered by a tenth of it (0.25 s to 10 s) before its end "
	"abstain.\n"
	"A model that fails abstains and the report says why;\n"
	"a finding then needs a majority (by weight) of the models that "
	"answered;\n"
	"the offline voters add their votes. Cost: see `quorum help cost`; "
	"when\n"
	"the budget is short the review steps down (fewer voters, less "
	"context,\n"
	"the riskiest patches, offline only) and says so; under a cap it "
	"plans\n"
	"the spend before the first request (plan:). A voter whose server\n"
	"failed every try of a request with 5xx or a reset abstains for the\n"
	"rest of the run (circuit:). A patch reviewed\n"
	"before (same patch-id, voter and prompts) reuses the answer for "
	"free.\n"
	"Findings outside the patch, quoting\n"
	"code that is not there, or fixed by a later patch are dropped. "
	"Prompts\n"
	"are read from $QUORUM_PROMPTS, else the prompts/ next to the binary,\n"
	"else the installed PREFIX/share/quorum/prompts.\n"
	"\n"
	"Voters: with no LLM configured, the offline voters vote alone: rules\n"
	"(C heuristics over the added lines), history and risk (with a "
	"history\n"
	"index: run `quorum index`), checkpatch (when the tree has\n"
	"scripts/checkpatch.pl or devtools/checkpatches.sh). They look at\n"
	"different things, so each is its own quorum unless --quorum says\n"
	"otherwise. The report shows each patch's risk score and the most\n"
	"similar past fixes.\n"
	"\n"
	"Exit status: 0 reviewed and nothing at quorum, 1 findings at quorum,\n"
	"2 usage, input or config error (a series that does not apply, a\n"
	"message that is not in the local database, a malformed config, a key\n"
	"quorum does not know, a [voter] without url or model), 3 environment\n"
	"error (repository, a revision that does not resolve, a missing API\n"
	"key, no notmuch database, the review's deadline passed).",
};

/* The ledger's name for a series: its first message's id. */
static const char *series_key(const struct mp_series *s)
{
	size_t k;

	if (s->cover && s->cover->message_id)
		return s->cover->message_id;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k] && s->patches[k]->message_id)
			return s->patches[k]->message_id;
	return NULL;
}

/* Say why the mail holds no series, in one line. */
static int explain_no_series(const char *path, const struct mp_set *set)
{
	const char *name = strcmp(path, "-") ? path : "standard input";

	if (set->nerrors)
		error("%s: %s",
		      set->errors[0].where ? set->errors[0].where : name,
		      set->errors[0].message);
	else if (set->nothers)
		error("%s holds mail but no patch (no diff found); nothing to "
		      "review",
		      name);
	else
		error("%s is empty; expected an mbox or a patch mail", name);
	return EXIT_USAGE;
}

/* The options and the one FILE; 0, or -1 to return *exit_code. */
static int review_options(int argc, char **argv, struct cmd_opts *co,
			  const char **path, int *exit_code)
{
	static const struct option longopts[] = {
		CMD_OPT_BASE,	CMD_OPT_QUORUM,	  CMD_OPT_LIST,
		CMD_OPT_BUDGET, CMD_OPT_NO_CACHE, CMD_OPT_DRY_RUN,
		CMD_OPT_FORMAT, CMD_OPT_OUTPUT,	  CMD_OPT_HELP,
		CMD_OPT_END,
	};
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1)
		if (cmd_opt(&cmd_review_def, c, argv, co, exit_code) < 0)
			return -1;
	if (argc - optind > 1) {
		*exit_code = usage_error(
			&cmd_review_def,
			"review takes one FILE (or - for standard input)");
		return -1;
	}
	*path = optind < argc ? argv[optind] : "-";
	if (!strcmp(*path, "-") && isatty(STDIN_FILENO)) {
		*exit_code = usage_error(
			&cmd_review_def,
			"no FILE given and standard input is a terminal");
		return -1;
	}
	return 0;
}

/*
 * The series to review: from FILE, or the thread of a message-id or URL
 * in the local notmuch database (a FILE wins), with *target the named
 * series' message-id. 0 or an exit status.
 */
static int review_read_input(struct session *s, const char *path,
			     struct mp_set **set, char **target)
{
	struct errmsg err = {""};
	struct stat st;
	int r;

	if (strcmp(path, "-") && stat(path, &st) < 0 &&
	    mp_msgid_is_spec(path)) {
		r = local_mail_read(s->cfg, path, set, target, &err);
		if (r < 0) {
			error("%s", err.msg);
			return r == LOCAL_MAIL_DB ? EXIT_ENV : EXIT_USAGE;
		}
	} else if (mp_read_path(set, path, NULL, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	if (!(*set)->nseries)
		return explain_no_series(path, *set);
	if ((*set)->nseries > RV_MAX_SERIES_PER_INPUT) {
		error("%s holds %zu series, more than the %d one review takes; "
		      "split it (a thread or a series a file) and review the "
		      "parts",
		      strcmp(path, "-") ? path : "standard input",
		      (*set)->nseries, RV_MAX_SERIES_PER_INPUT);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * Is series i to be reviewed? With target, the named series, even when
 * superseded; else every series but superseded ones and prerequisites
 * of another.
 */
static bool review_wanted(const struct mp_set *set, size_t i,
			  const char *target, const struct rv_prereq_plan *plan)
{
	if (target)
		return mp_series_has_msgid(set->series[i], target);
	return !set->series[i]->superseded && !plan->used[i];
}

/*
 * Review one series into rp (counted in *reviewed); one that does not
 * apply is reported too, and sets *not_applied. 0 (*findings set), or
 * the exit status of an error that stops the review.
 */
static int review_one_series(struct session *s, const struct mp_series *ser,
			     struct report *rp, struct dry_run *dry,
			     size_t *reviewed, bool *findings,
			     bool *not_applied)
{
	struct errmsg err = {""};
	struct rv_review *r = NULL;
	int rr, ret = 0;

	s->opts.series_key = series_key(ser);
	rr = rv_review_series(&r, s->repo, ser, &s->opts, &err);
	if (rr < 0 && !r) {
		error("%s", err.msg);
		return rr == RV_ERR_REPO || rr == RV_ERR_DEADLINE ? EXIT_ENV
								  : EXIT_USAGE;
	}
	if (dry && rr == 0) {
		/* What would be sent, instead of a report. */
		if (dry_run_add(dry, r, stdout, &err) < 0) {
			error("%s", err.msg);
			ret = EXIT_ENV;
		}
		rv_review_free(r);
		return ret;
	}
	report_add(rp, r);
	(*reviewed)++;
	if (rr == RV_ERR_APPLY) {
		/* An outcome of the review, not the end of it: say so, go on.
		 */
		error("%s", err.msg);
		*not_applied = true;
	} else if (r->findings.n) {
		*findings = true;
	}
	rv_review_free(r);
	return ret;
}

/*
 * Review the series of set that are wanted, then write the report: in
 * every format, only when each was reviewed (a series that does not
 * apply is in it, and makes the exit status 2); an error that stops the
 * review writes nothing, so stdout holds a whole document or nothing.
 */
static int review_set(struct session *s, const struct cmd_opts *co,
		      const struct mp_set *set, const char *target)
{
	struct rv_prereq_plan plan = {0};
	const struct mp_series *only = NULL;
	struct report *rp = report_new(co->format);
	struct errmsg err = {""};
	struct dry_run dry = {.dir = co->dry_run_dir};
	bool text_dry = co->dry_run && co->format != FMT_JSON;
	bool findings = false, not_applied = false;
	size_t i, reviewed = 0;
	int ret = EXIT_CLEAN, rw;

	if (!rp) {
		error("out of memory");
		return EXIT_ENV;
	}
	report_set_email(rp, qconfig_get(s->cfg, "watch.from"),
			 qconfig_get(s->cfg, "watch.domain"));
	for (i = 0; target && i < set->nseries && !only; i++)
		if (mp_series_has_msgid(set->series[i], target))
			only = set->series[i];
	rv_prereq_plan_input(&plan, s->repo, set, &s->opts.apply, only,
			     target != NULL);
	for (i = 0; i < set->nseries && ret == EXIT_CLEAN; i++) {
		if (!review_wanted(set, i, target, &plan))
			continue;
		s->opts.apply.prereqs = plan.of[i];
		s->opts.apply.nprereqs = plan.nof[i];
		ret = review_one_series(s, set->series[i], rp,
					text_dry ? &dry : NULL, &reviewed,
					&findings, &not_applied);
	}
	if (text_dry) {
		dry_run_finish(&dry, stdout);
		dry_run_release(&dry);
		findings = false;
	}
	if (co->dry_run)
		findings = false; /* nothing was asked: no verdict */
	if (ret == EXIT_CLEAN && reviewed &&
	    (rw = report_write(rp, co->output, &err)) < 0) {
		error("%s", err.msg);
		ret = rw == REPORT_ERR_INPUT ? EXIT_USAGE : EXIT_ENV;
	}
	if (ret == EXIT_CLEAN && not_applied)
		ret = EXIT_USAGE;
	if (ret == EXIT_CLEAN && findings)
		ret = EXIT_FINDINGS;
	rv_prereq_plan_release(&plan);
	report_free(rp);
	return ret;
}

static int cmd_review(int argc, char **argv)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct session s = SESSION_INIT;
	struct mp_set *set = NULL;
	char *target = NULL;
	const char *path;
	int ret;

	if (review_options(argc, argv, &co, &path, &ret) < 0)
		return ret;
	ret = session_start(&s, &co,
			    SESSION_REPO_IF_ANY | SESSION_HISTORY |
				    SESSION_VOTERS | SESSION_COST);
	if (ret)
		goto out;
	/* The deadline covers reading the input too. */
	s.opts.deadline_at =
		rv_now() + (s.opts.deadline > 0 ? s.opts.deadline : 600);
	s.opts.apply.deadline_at = s.opts.deadline_at;
	ret = review_read_input(&s, path, &set, &target);
	if (ret)
		goto out;
	if (!s.repo)
		warning("not in a git repository; reviewing the diff alone "
			"(use -C REPO to apply it)");
	ret = review_set(&s, &co, set, target);
out:
	mp_set_free(set);
	free(target);
	session_close(&s);
	return ret;
}
