// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-index.c - `quorum index`: build or update the history index of
 * past fixes in <git dir>/quorum/history.db.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quorum.h"

static int cmd_index(int argc, char **argv);

const struct cmd cmd_index_def = {
	"index",
	cmd_index,
	"quorum index [-C REPO] [--rebuild] [--quiet]",
	"build or update the history index of past fixes",
	"Walks the history of HEAD and stores every fix/bug pair (a commit\n"
	"with a `Fixes: <id> (\"subject\")` trailer and the commit it names, "
	"or\n"
	"a revert and the commit it reverts) with the hunks of both, in\n"
	"<git dir>/quorum/history.db. A second run reads only new commits.\n"
	"The index grounds `quorum similar`, the history and risk voters of\n"
	"`quorum review`, and `quorum eval`.\n"
	"\n"
	"Optional embeddings: with [history] embeddings-url (an OpenAI-\n"
	"compatible /v1/embeddings endpoint), embeddings-model and\n"
	"embeddings-key-env in the config, hunks also get vectors that\n"
	"`quorum similar` combines with its lexical search.\n"
	"\n"
	"Options:\n"
	"  -C REPO        the repository (default: the current directory)\n"
	"  --rebuild      throw the index away and build it anew\n"
	"  -q, --quiet    no summary, no progress line\n"
	"  -h, --help     this text\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 not a repository or the index\n"
	"cannot be written.",
};

/*
 * Optional embeddings: [history] embeddings-url, embeddings-model and
 * embeddings-key-env (the name of the variable holding the key).
 */
static void embed_config(struct qconfig *cfg, struct rv_embed_opts *o)
{
	const char *env = qconfig_get(cfg, "history.embeddings-key-env");

	o->url = qconfig_get(cfg, "history.embeddings-url");
	o->model = qconfig_get(cfg, "history.embeddings-model");
	o->key = env ? getenv(env) : NULL;
}

static void progress_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "\r%s\033[K", line);
}

static int cmd_index(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rebuild", no_argument, NULL, 'r'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rv_index_opts opts = RV_INDEX_OPTS_INIT;
	struct rv_index_stats st;
	struct errmsg err = {""};
	struct qconfig *cfg = NULL;
	const char *repo = ".";
	bool quiet = false, tty;
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+hqC:", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			repo = optarg;
			break;
		case 'r':
			opts.rebuild = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return cmd_print_help(&cmd_index_def);
		default:
			return usage_error(&cmd_index_def,
					   "unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(&cmd_index_def,
				   "index takes no arguments (use -C REPO)");
	if (qconfig_load(&cfg, repo, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	embed_config(cfg, &opts.embed);
	tty = isatty(STDERR_FILENO);
	if (tty && !quiet)
		opts.progress = progress_line;
	ret = rv_history_index(repo, &opts, &st, &err);
	if (opts.progress)
		fputs("\r\033[K", stderr);
	if (st.rebuilt)
		warning("%s", st.rebuilt_reason);
	if (st.embed_error[0])
		warning("embeddings skipped (similar stays lexical): %s",
			st.embed_error);
	qconfig_free(cfg);
	if (ret < 0) {
		error("%s", err.msg);
		return EXIT_ENV;
	}
	if (quiet)
		return 0;
	if (st.up_to_date)
		printf("history index up to date: %zu commits, %zu fix/bug "
		       "pairs (%.2f s)\n",
		       st.total_commits, st.pairs, st.seconds);
	else
		printf("indexed %zu new commits (%zu merges skipped) in %.2f s "
		       "(%.0f commits/s)\n",
		       st.commits, st.merges, st.seconds,
		       st.seconds > 0
			       ? (double)(st.commits + st.merges) / st.seconds
			       : 0.0);
	printf("commits: %zu\n", st.total_commits);
	printf("fix/bug pairs: %zu (%zu hunks)\n", st.pairs, st.hunks);
	printf("Fixes: trailers: %zu, resolved by id: %zu, by subject: %zu, "
	       "unresolved: %zu (ambiguous ids: %zu)\n",
	       st.fixes_trailers, st.resolved_id, st.resolved_subject,
	       st.unresolved, st.ambiguous);
	printf("reverts: %zu; Fixes: lines naming no commit: %zu\n", st.reverts,
	       st.not_commit);
	if (opts.embed.url)
		printf("embedding vectors: %zu of %zu hunks\n", st.vectors,
		       st.hunks);
	return 0;
}
