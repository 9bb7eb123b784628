// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-index.c - `quorum index`: build or update the history index of
 * past fixes in <git dir>/quorum/history.db, and the symbol index of
 * HEAD's C in <git dir>/quorum/symbols.db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

static int cmd_index(int argc, char **argv);

const struct cmd cmd_index_def = {
	"index",
	cmd_index,
	"quorum index [-C REPO] [--rebuild] [--quiet]",
	"build or update the history index of past fixes and the symbol index",
	"Walks the history of HEAD and stores every fix/bug pair (a commit\n"
	"with a `Fixes: <id> (\"subject\")` trailer and the commit it names, "
	"or\n"
	"a revert and the commit it reverts) with the hunks of both, in\n"
	"<git dir>/quorum/history.db. A second run reads only new commits;\n"
	"when HEAD does not descend from the commit indexed last (a reset,\n"
	"a rebase, another branch), the index is rebuilt and says so.\n"
	"The index grounds `quorum similar`, the history and risk voters of\n"
	"`quorum review`, and `quorum eval`.\n"
	"\n"
	"It then brings the symbol index up to date, in\n"
	"<git dir>/quorum/symbols.db: the definitions (functions, structs,\n"
	"unions, enums and their values, typedefs, macros, globals) and the\n"
	"calls of the .c and .h files of HEAD's tree, and the places a\n"
	"function is taken as a value (`.open = foo_open`), parsed with\n"
	"tree-sitter's C grammar. Only files whose contents changed since\n"
	"the last run are parsed again; files over 2 MiB are skipped. The LLM\n"
	"voters' definition and callers tools read it, brought to each\n"
	"series' tree by parsing only the files the series changes.\n"
	"\n"
	"Optional embeddings: with [history] embeddings-url (an OpenAI-\n"
	"compatible /v1/embeddings endpoint), embeddings-model and\n"
	"embeddings-key-env in the config, hunks also get vectors that\n"
	"`quorum similar` and the history voter of review, ci and watch\n"
	"combine with their lexical search.\n"
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

static void progress_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "\r%s\033[K", line);
}

/* The options of index; 0, or -1 to return *exit_code. */
static int index_options(int argc, char **argv, struct cmd_opts *co,
			 struct rv_index_opts *opts, bool *quiet,
			 int *exit_code)
{
	static const struct option longopts[] = {
		{"rebuild", no_argument, NULL, 'r'},
		{"quiet", no_argument, NULL, 'q'},
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hqC:", longopts, NULL)) != -1) {
		if (c == 'r')
			opts->rebuild = true;
		else if (c == 'q')
			*quiet = true;
		else if (cmd_opt(&cmd_index_def, c, argv, co, exit_code) < 0)
			return -1;
	}
	if (optind < argc) {
		*exit_code =
			usage_error(&cmd_index_def,
				    "index takes no arguments (use -C REPO)");
		return -1;
	}
	return 0;
}

static void print_stats(const struct rv_index_stats *st, bool embed)
{
	if (st->up_to_date)
		printf("history index up to date: %zu commits, %zu fix/bug "
		       "pairs (%.2f s)\n",
		       st->total_commits, st->pairs, st->seconds);
	else
		printf("indexed %zu new commits (%zu merges skipped) in %.2f s "
		       "(%.0f commits/s)\n",
		       st->commits, st->merges, st->seconds,
		       st->seconds > 0 ? (double)(st->commits + st->merges) /
						 st->seconds
				       : 0.0);
	printf("commits: %zu\n", st->total_commits);
	printf("fix/bug pairs: %zu (%zu hunks)\n", st->pairs, st->hunks);
	printf("Fixes: trailers: %zu, resolved by id: %zu, by subject: %zu, "
	       "unresolved: %zu (ambiguous ids: %zu)\n",
	       st->fixes_trailers, st->resolved_id, st->resolved_subject,
	       st->unresolved, st->ambiguous);
	printf("reverts: %zu; Fixes: lines naming no commit: %zu\n",
	       st->reverts, st->not_commit);
	if (embed)
		printf("embedding vectors: %zu of %zu hunks\n", st->vectors,
		       st->hunks);
	if (st->model_note[0])
		printf("%s\n", st->model_note);
}

static void print_symbols(const struct rv_symbols_stats *st)
{
	if (st->up_to_date)
		printf("symbol index up to date: %zu C files, %zu definitions, "
		       "%zu calls and addresses taken (%.2f s)\n",
		       st->files, st->defs, st->refs, st->seconds);
	else
		printf("symbols: %zu C files, %zu parsed, %zu unchanged, "
		       "%zu over 2 MiB, %zu the parser gave up on; "
		       "%zu definitions, %zu calls and addresses taken "
		       "(%.2f s)\n",
		       st->files, st->parsed, st->reused, st->too_big,
		       st->failed, st->defs, st->refs, st->seconds);
}

static int cmd_index(int argc, char **argv)
{
	struct rv_index_opts opts = RV_INDEX_OPTS_INIT;
	struct cmd_opts co = CMD_OPTS_INIT;
	struct session s = SESSION_INIT;
	struct rv_index_stats st;
	struct rv_symbols_stats sst;
	struct errmsg err = {""};
	bool quiet = false, tty;
	int ret;

	if (index_options(argc, argv, &co, &opts, &quiet, &ret) < 0)
		return ret;
	ret = session_start(&s, &co, SESSION_CONFIG);
	if (ret) {
		session_close(&s);
		return ret;
	}
	session_embed_opts(s.cfg, &opts.embed);
	tty = isatty(STDERR_FILENO);
	if (tty && !quiet)
		opts.progress = progress_line;
	ret = rv_history_index(s.repo_path, &opts, &st, &err);
	if (opts.progress)
		fputs("\r\033[K", stderr);
	if (st.rebuilt)
		warning("%s", st.rebuilt_reason);
	if (st.embed_error[0])
		warning("embeddings skipped (similar stays lexical): %s",
			st.embed_error);
	if (ret < 0) {
		error("%s", err.msg);
		session_close(&s);
		return EXIT_ENV;
	}
	if (!quiet)
		print_stats(&st, opts.embed.url != NULL);
	fflush(stdout);
	ret = rv_symbols_index(s.repo_path, &opts, &sst, &err);
	if (opts.progress)
		fputs("\r\033[K", stderr);
	if (sst.rebuilt)
		warning("%s", sst.rebuilt_reason);
	if (ret < 0) {
		error("%s", err.msg);
		session_close(&s);
		return EXIT_ENV;
	}
	if (!quiet)
		print_symbols(&sst);
	session_close(&s);
	return 0;
}
