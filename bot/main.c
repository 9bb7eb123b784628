// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c - the quorum command table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <gmime/gmime.h>

#include "cmd.h"
#include "config.h"
#include "llm-voters.h"
#include "mailparse/sb.h"

static const struct cmd *const commands[] = {
	&cmd_review_def,  &cmd_parse_def,    &cmd_apply_def, &cmd_index_def,
	&cmd_similar_def, &cmd_eval_def,     &cmd_watch_def, &cmd_cost_def,
	&cmd_ci_def,	  &cmd_classify_def,
};

/*
 * One line on stderr: prefix, the message made visible (a file name or
 * subject in it may hold a newline or an escape), suffix.
 */
static void put_message(const char *prefix, const char *fmt, va_list ap,
			const char *suffix)
{
	struct sb msg = SB_INIT, line = SB_INIT;

	sb_vaddf(&msg, fmt, ap);
	sb_adds(&line, prefix);
	sb_add_visible(&line, sb_str(&msg), SB_VIS_TAB);
	sb_adds(&line, suffix);
	sb_addch(&line, '\n');
	fputs(sb_str(&line), stderr);
	sb_release(&msg);
	sb_release(&line);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_message("quorum: ", fmt, ap, "");
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_message("quorum: warning: ", fmt, ap, "");
	va_end(ap);
}

int usage_error(const struct cmd *c, const char *fmt, ...)
{
	struct sb usage = SB_INIT;
	va_list ap;

	/* One line: what was wrong, and the usage to fix it. */
	sb_addf(&usage, " (usage: %s)", c->usage);
	va_start(ap, fmt);
	put_message("quorum: ", fmt, ap, sb_str(&usage));
	va_end(ap);
	sb_release(&usage);
	return EXIT_USAGE;
}

int cmd_print_help(const struct cmd *c)
{
	printf("usage: %s\n\n%s\n", c->usage, c->help);
	return 0;
}

/*
 * watch logs subjects and addresses of any mail in lines printed all
 * over bot/watch*.c: its standard output is a stream that makes every
 * byte visible, so no line can forget to.
 */
static int run_logged(const struct cmd *c, int argc, char **argv)
{
	FILE *out = stdout, *log = visible_stream_open(stdout);
	int ret;

	if (!log)
		return c->fn(argc, argv);
	stdout = log;
	ret = c->fn(argc, argv);
	fclose(log);
	stdout = out;
	return ret;
}

static void print_main_help(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: quorum [--version] [--help] COMMAND [ARGS]\n"
		    "\n"
		    "quorum reviews patches posted to mailing lists before "
		    "they are merged.\n"
		    "\n"
		    "Commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-8s  %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(fp, "\n"
		    "'quorum help COMMAND' (or 'quorum COMMAND --help') shows "
		    "a command's\n"
		    "options. Exit codes: 0 reviewed and nothing at quorum, 1 "
		    "findings at\n"
		    "quorum, 2 usage or input error, 3 environment error.\n"
		    "\n"
		    "Config: $QUORUM_CONFIG, else "
		    "$XDG_CONFIG_HOME/quorum/config, then the\n"
		    "repository's .git/quorum.conf (git-config syntax).\n");
}

/*
 * Every command reads the same config files the same way, so a typo or
 * a broken file is the same error (exit 2, FILE:LINE) whichever command
 * meets it first; its help still works.
 */
static int check_config(int argc, char **argv)
{
	struct qconfig *cfg = NULL;
	struct llm_voters lv;
	struct errmsg err = {""};
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 0;
	if (qconfig_load(&cfg, NULL, &err) < 0 ||
	    llm_voters_load(cfg, &lv, &err) == LLM_VOTERS_ERR_CONFIG) {
		error("%s", err.msg);
		qconfig_free(cfg);
		return -1;
	}
	/* A missing key is the commands' to report: only they need it. */
	llm_voters_release(&lv);
	qconfig_free(cfg);
	return 0;
}

static const struct cmd *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	bool mail_only;
	int ret;

	if (argc < 2) {
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_main_help(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("quorum %s\n", QUORUM_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_main_help(stdout);
			return 0;
		}
		c = find_command(argv[2]);
		if (!c) {
			error("no such command '%s'; see 'quorum --help'",
			      argv[2]);
			return EXIT_USAGE;
		}
		return cmd_print_help(c);
	}
	if (argv[1][0] == '-') {
		error("unknown option '%s'; see 'quorum --help'", argv[1]);
		return EXIT_USAGE;
	}
	c = find_command(argv[1]);
	if (!c) {
		error("'%s' is not a quorum command; see 'quorum --help'",
		      argv[1]);
		return EXIT_USAGE;
	}

	/*
	 * parse reads mail only; libgit2's init loads the system CA bundle
	 * (mbedtls), an eighth of the time `quorum parse` takes on an mbox,
	 * so it is paid only when there is a config file to check.
	 */
	mail_only = c == &cmd_parse_def && !qconfig_user_file_present();
	if (!mail_only)
		git_libgit2_init();
	g_mime_init();
	if (!mail_only && check_config(argc - 1, argv + 1) < 0)
		ret = EXIT_USAGE;
	else if (c == &cmd_watch_def)
		ret = run_logged(c, argc - 1, argv + 1);
	else
		ret = c->fn(argc - 1, argv + 1);
	g_mime_shutdown();
	if (!mail_only)
		git_libgit2_shutdown();
	fflush(stdout);
	if (ferror(stdout)) {
		error("could not write to standard output");
		return EXIT_ENV;
	}
	return ret;
}
