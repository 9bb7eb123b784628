// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-similar.c - `quorum similar`: the past bug/fix pairs whose buggy
 * code most resembles what a patch (mail or commit) adds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "session.h"

static int cmd_similar(int argc, char **argv);

const struct cmd cmd_similar_def = {
	"similar",
	cmd_similar,
	"quorum similar [-C REPO] [-k N] [--timing] FILE|REV",
	"past bug/fix pairs that resemble a patch",
	"For a patch (FILE: an mbox, a patch mail or a maildir; - for\n"
	"standard input) or a commit (REV), prints the k past bug/fix pairs\n"
	"of the repository's history whose buggy code most resembles what the\n"
	"patch adds: the commit that introduced the bug and the one that\n"
	"fixed it (ids and subjects), the score (0..1), and the lines that\n"
	"matched. For a REV, only fixes committed before it are considered.\n"
	"A path that exists is read as mail, anything else as a REV.\n"
	"Needs the history index: run `quorum index` first.\n"
	"\n"
	"Options:\n"
	"  -C REPO        the repository (default: the current directory)\n"
	"  -k N           how many pairs to show (default 5, at most 100)\n"
	"  --timing       print how long the search took to standard error\n"
	"  -h, --help     this text\n"
	"\n"
	"Exit status: 0 done (even with nothing similar), 2 usage or input\n"
	"error, 3 no repository or no history index.",
};

static bool timing;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_results(const struct rv_similar_list *l)
{
	struct sb text = SB_INIT;

	rv_similar_format(l, &text);
	fputs(sb_str(&text), stdout);
	sb_release(&text);
}

static int similar_of_diff(struct rv_history *h, const char *diff, size_t len,
			   size_t k, struct errmsg *err)
{
	struct rv_similar_list l = {0};
	struct rv_diff *d = NULL;
	double t0;
	int ret;

	ret = rv_diff_parse(&d, diff, len, err);
	if (ret < 0) {
		rv_diff_free(d);
		return ret;
	}
	t0 = now_ms();
	ret = rv_history_similar(h, d, k, &l, err);
	if (timing)
		fprintf(stderr, "similar: search took %.2f ms\n",
			now_ms() - t0);
	if (!ret)
		print_results(&l);
	rv_similar_list_release(&l);
	rv_diff_free(d);
	return ret;
}

static int similar_of_file(struct rv_history *h, const char *path, size_t k)
{
	struct errmsg err = {""};
	struct mp_set *set = NULL;
	size_t i, j, shown = 0;
	int ret = 0;

	if (mp_read_path(&set, path, NULL, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < set->nseries; i++) {
		const struct mp_series *s = set->series[i];

		if (s->superseded)
			continue;
		for (j = 0; j < s->npatches; j++) {
			const struct mp_patch *p = s->patches[j];

			if (!p || !p->diff)
				continue;
			if (shown++)
				putchar('\n');
			printf("patch %d/%d: ",
			       p->subject.index ? p->subject.index : (int)j + 1,
			       s->total > 0 ? s->total : (int)s->npatches);
			fput_clean(p->subject.title ? p->subject.title
				   : p->subject_raw ? p->subject_raw
						    : "(no subject)",
				   stdout);
			putchar('\n');
			if (similar_of_diff(h, p->diff, p->diff_len, k, &err) <
			    0) {
				error("%s", err.msg);
				ret = EXIT_USAGE;
			}
		}
	}
	if (!shown && !ret) {
		error("%s holds no patch (no diff found)",
		      strcmp(path, "-") ? path : "standard input");
		ret = EXIT_USAGE;
	}
	mp_set_free(set);
	return ret;
}

static int similar_of_rev(struct rv_history *h, const char *rev, size_t k)
{
	struct errmsg err = {""};
	struct sb diff = SB_INIT, msg = SB_INIT;
	char id[RV_OID_HEXSZ + 1];
	const char *nl;
	int ret = 0;

	if (rv_history_commit_diff(h, rev, &diff, &msg, id, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
		goto out;
	}
	rv_history_set_horizon(h, id);
	nl = strchr(sb_str(&msg), '\n');
	if (nl)
		sb_setlen(&msg, (size_t)(nl - sb_str(&msg)));
	printf("commit %.12s ", id); /* no escape sequences to the tty */
	fput_clean(sb_str(&msg), stdout);
	putchar('\n');
	if (!diff.len) {
		printf("  nothing similar: the commit changes nothing\n");
		goto out;
	}
	if (similar_of_diff(h, diff.buf, diff.len, k, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_USAGE;
	}
out:
	sb_release(&diff);
	sb_release(&msg);
	return ret;
}

/* The options of similar; 0, or -1 to return *exit_code. */
static int similar_options(int argc, char **argv, struct cmd_opts *co, long *k,
			   const char **what, int *exit_code)
{
	static const struct option longopts[] = {
		{"timing", no_argument, NULL, 't'},
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	char *end;
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hC:k:", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			*k = strtol(optarg, &end, 10);
			if (*end || *k < 1 || *k > 100) {
				*exit_code = usage_error(
					&cmd_similar_def,
					"-k wants a number from 1 to 100, "
					"not '%s'",
					optarg);
				return -1;
			}
			break;
		case 't':
			timing = true;
			break;
		default:
			if (cmd_opt(&cmd_similar_def, c, argv, co, exit_code) <
			    0)
				return -1;
		}
	}
	if (argc - optind != 1) {
		*exit_code = usage_error(&cmd_similar_def,
					 "similar takes one FILE or REV");
		return -1;
	}
	*what = argv[optind];
	return 0;
}

static int cmd_similar(int argc, char **argv)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct session s = SESSION_INIT;
	const char *what;
	struct stat st;
	long k = 5;
	int ret;

	if (similar_options(argc, argv, &co, &k, &what, &ret) < 0)
		return ret;
	ret = session_start(&s, &co, SESSION_HISTORY_NEEDED);
	if (ret)
		goto out;
	/* A path that exists is mail (a file, or a maildir); else a REV. */
	if (!strcmp(what, "-") || stat(what, &st) == 0)
		ret = similar_of_file(s.history, what, (size_t)k);
	else
		ret = similar_of_rev(s.history, what, (size_t)k);
	if (rv_history_embed_error(s.history))
		warning("embeddings unavailable, lexical results only: %s",
			rv_history_embed_error(s.history));
out:
	session_close(&s);
	return ret;
}
