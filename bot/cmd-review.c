// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-review.c - `quorum review`: read a series, apply it in memory,
 * ask the voters, print the report.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include "quorum.h"
#include "review/cost.h"

static int cmd_review(int argc, char **argv);

const struct cmd cmd_review_def = {
	"review",
	cmd_review,
	"quorum review [-C REPO] [--base REV] [--quorum N] [--list NAME] "
	"[--budget USD] [--no-cache] [--format text|json|sarif|email] "
	"[--output FILE] "
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
	"needs it is reviewed.\n"
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
	"  --budget USD   spend at most USD on LLM requests in this run\n"
	"  --no-cache     ask the models even about patches they have seen\n"
	"  --format FMT   text (default), json (contrib/review-json.md) or\n"
	"                 sarif (SARIF 2.1.0 for code-scanning UIs) or email\n"
	"                 (the reply `quorum watch` would send the author;\n"
	"                 watch.from and watch.domain apply)\n"
	"  --output FILE  write the report to FILE instead of standard output\n"
	"  -h, --help     this text\n"
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
	"max-parallel)\n"
	"reviews every patch and the series tip, all at once;\n"
	"review.deadline, review.retries and review.backoff bound the "
	"requests.\n"
	"A model that fails abstains and the report says why;\n"
	"a finding then needs a majority (by weight) of the models that "
	"answered;\n"
	"the offline voters add their votes. Cost: see `quorum help cost`; "
	"when\n"
	"the budget is short the review steps down (fewer voters, less "
	"context,\n"
	"the riskiest patches, offline only) and says so. A patch reviewed\n"
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
	"2 usage or input error (including a series that does not apply, and\n"
	"a message that is not in the local database),\n"
	"3 environment error (repository, config, no notmuch database).",
};

/*
 * llm: with LLM voters, load the prompts and the review's deadline and
 * retry settings into opts. 0, or -1 with err.
 */
int llm_review_opts(struct qconfig *cfg, const struct llm_voters *llm,
		    struct rv_review_opts *opts, struct rv_prompts **prompts,
		    struct errmsg *err)
{
	static const char *const keys[] = {"review.deadline", "review.backoff"};
	double vals[2] = {0, 0};
	char *dir;
	size_t i;
	int n;

	if (!llm->n)
		return 0;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = qconfig_get(cfg, keys[i]);
		char *end;

		if (!v)
			continue;
		vals[i] = strtod(v, &end);
		if (end == v || *end || !(vals[i] > 0 && vals[i] <= 86400))
			return errmsg_set(
				err, -1,
				"config %s = '%s' is not a number of seconds",
				keys[i], v);
	}
	if (qconfig_get_int(cfg, "review.retries", 2, &n, err) < 0)
		return -1;
	dir = prompts_dir();
	if (rv_prompts_load(prompts, dir, err) < 0) {
		free(dir);
		return -1;
	}
	free(dir);
	opts->llm = llm->v;
	opts->nllm = llm->n;
	opts->prompts = *prompts;
	opts->deadline = vals[0];
	opts->backoff = vals[1];
	opts->retries = n > 0 ? n : -1;
	return 0;
}

/* cost: the ledger's name for a series: its first message's id. */
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

static bool in_git_repo(const char *dir)
{
	struct rv_repo *repo = NULL;
	int r = rv_repo_open(&repo, dir, NULL);

	rv_repo_free(repo);
	return r == 0;
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

static int cmd_review(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"base", required_argument, NULL, 'b'},
		{"quorum", required_argument, NULL, 'q'},
		{"list", required_argument, NULL, 'l'},
		{"budget", required_argument, NULL, 'B'},
		{"no-cache", no_argument, NULL, 'N'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rv_review_opts opts = RV_REVIEW_OPTS_INIT;
	const char *repo_path = NULL, *path = "-";
	struct qconfig *cfg = NULL;
	struct rv_repo *repo = NULL;
	struct mp_set *set = NULL;
	struct errmsg err = {""};
	struct rv_history *history = NULL;
	struct llm_voters llm = {0};
	struct rv_prompts *prompts = NULL;
	char *workdir = NULL;
	struct rv_ledger *ledger = NULL; /* cost (issue 8) */
	const char *list = NULL;
	double budget = 0;
	char *target = NULL; /* msgid: review only the series holding it */
	struct stat st;
	struct report *rp = NULL; /* ci (issue 10): --format, --output */
	struct rv_prereq_plan plan = {0};
	const struct mp_series *only = NULL; /* msgid: the named series */
	const char *output = NULL;
	int fmt = FMT_TEXT;
	int c, ret = EXIT_USAGE, quorum = 0, reviewed = 0;
	bool any_findings = false;
	size_t i;
	char *end;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			repo_path = optarg;
			break;
		case 'b':
			opts.apply.base = optarg;
			break;
		case 'q':
			quorum = (int)strtol(optarg, &end, 10);
			if (*end || quorum < 1 || quorum > 100)
				return usage_error(&cmd_review_def,
						   "--quorum wants a number "
						   "from 1 to 100, not '%s'",
						   optarg);
			break;
		case 'l':
			list = optarg;
			break;
		case 'B':
			budget = strtod(optarg, &end);
			if (end == optarg || *end ||
			    !(budget > 0 && budget < 1e9))
				return usage_error(&cmd_review_def,
						   "--budget wants an amount "
						   "in USD, not '%s'",
						   optarg);
			break;
		case 'N':
			opts.no_cache = true;
			break;
		case 'f':
			fmt = report_format_parse(optarg);
			if (fmt < 0)
				return usage_error(&cmd_review_def,
						   "--format wants text, json, "
						   "sarif or email, not '%s'",
						   optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			return cmd_print_help(&cmd_review_def);
		default:
			return usage_error(&cmd_review_def,
					   "unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return usage_error(
			&cmd_review_def,
			"review takes one FILE (or - for standard input)");
	if (optind < argc)
		path = argv[optind];
	if (!strcmp(path, "-") && isatty(STDIN_FILENO))
		return usage_error(
			&cmd_review_def,
			"no FILE given and standard input is a terminal");

	if (repo_path) {
		if (rv_repo_open(&repo, repo_path, &err) < 0) {
			error("%s", err.msg);
			return EXIT_ENV;
		}
	} else if (in_git_repo(".")) {
		if (rv_repo_open(&repo, ".", &err) < 0) {
			error("%s", err.msg);
			return EXIT_ENV;
		}
	}

	if (qconfig_load(&cfg, repo_path ? repo_path : (repo ? "." : NULL),
			 &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!quorum &&
	    qconfig_get_int(cfg, "review.quorum", 0, &quorum, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	opts.quorum = quorum;
	/* llm (issue 7): [voter "NAME"] sections with an LLM provider. */
	if (llm_voters_load(cfg, &llm, &err) < 0 ||
	    llm_review_opts(cfg, &llm, &opts, &prompts, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	/* cost (issue 8): caps, ledger and cache when a model may be paid. */
	if (llm.n &&
	    cost_review_opts(cfg, list, budget, &opts, &ledger, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}

	if (strcmp(path, "-") && stat(path, &st) < 0 &&
	    local_mail_is_spec(path)) {
		/* msgid: not a file but a message-id or URL; a FILE wins. */
		int r = local_mail_read(cfg, path, &set, &target, &err);

		if (r < 0) {
			error("%s", err.msg);
			ret = r == LOCAL_MAIL_DB ? EXIT_ENV : EXIT_USAGE;
			goto out;
		}
	} else if (mp_read_path(&set, path, NULL, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!set->nseries) {
		ret = explain_no_series(path, set);
		goto out;
	}
	if (!repo)
		warning("not in a git repository; reviewing the diff alone "
			"(use -C REPO to apply it)");
	if (repo) {
		/* hist (issue 6): the history index and the tree's checker. */
		const char *where = repo_path ? repo_path : ".";

		if (rv_history_open(&history, where, &err) < 0)
			warning("%s; reviewing without it", err.msg);
		if (history && qconfig_get(cfg, "history.embeddings-url")) {
			const char *env =
				qconfig_get(cfg, "history.embeddings-key-env");
			struct rv_embed_opts eo = {
				qconfig_get(cfg, "history.embeddings-url"),
				qconfig_get(cfg, "history.embeddings-model"),
				env ? getenv(env) : NULL,
			};

			rv_history_set_embeddings(history, &eo);
		}
		workdir = rv_workdir_of(where);
		opts.history = history;
		opts.workdir = workdir;
	}

	rp = report_new((enum report_format)fmt);
	if (!rp) {
		error("out of memory");
		ret = EXIT_ENV;
		goto out;
	}
	report_set_email(rp, qconfig_get(cfg, "watch.from"),
			 qconfig_get(cfg, "watch.domain"));
	ret = EXIT_CLEAN;
	if (target) {
		for (i = 0; i < set->nseries; i++)
			if (mp_series_has_msgid(set->series[i], target))
				break;
		only = i < set->nseries ? set->series[i] : NULL;
	}
	rv_prereq_plan_input(&plan, repo, set, &opts.apply,
			     target ? only : NULL, target != NULL);
	for (i = 0; i < set->nseries; i++) {
		struct rv_review *r = NULL;
		int rr;

		/*
		 * msgid: the named series, even when superseded; else every
		 * series but superseded ones and prerequisites of another.
		 */
		if (target ? !mp_series_has_msgid(set->series[i], target)
			   : set->series[i]->superseded || plan.used[i])
			continue;
		opts.series_key = series_key(set->series[i]);
		opts.apply.prereqs = plan.of[i];
		opts.apply.nprereqs = plan.nof[i];
		rr = rv_review_series(&r, repo, set->series[i], &opts, &err);
		if (rr < 0 && !r) {
			error("%s", err.msg);
			ret = rr == RV_ERR_REPO ? EXIT_ENV : EXIT_USAGE;
			break;
		}
		report_add(rp, r);
		reviewed++;
		if (rr == RV_ERR_APPLY) {
			error("%s", err.msg);
			ret = EXIT_USAGE;
		} else if (r->findings.n) {
			any_findings = true;
		}
		rv_review_free(r);
		if (ret == EXIT_USAGE)
			break;
	}
	if (reviewed && report_write(rp, output, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	if (ret == EXIT_CLEAN && any_findings)
		ret = EXIT_FINDINGS;
out:
	rv_prereq_plan_release(&plan);
	report_free(rp);
	rv_ledger_free(ledger);
	rv_prompts_free(prompts);
	llm_voters_release(&llm);
	rv_history_free(history);
	free(workdir);
	mp_set_free(set);
	free(target);
	rv_repo_free(repo);
	qconfig_free(cfg);
	return ret;
}
