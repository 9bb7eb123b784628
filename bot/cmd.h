/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd.h - the command table, exit codes, error helpers and the options
 * every command parses the same way. Only bot/ prints or exits.
 */
#ifndef QUORUM_CMD_H
#define QUORUM_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "report.h"

/* Exit codes: the command contract (DESIGN.md). */
enum {
	EXIT_CLEAN = 0,	   /* reviewed, nothing at quorum */
	EXIT_FINDINGS = 1, /* findings at quorum */
	EXIT_USAGE = 2,	   /* usage or input error */
	EXIT_ENV = 3,	   /* repo, network, budget */
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;   /* one line: "quorum review [-C repo] ..." */
	const char *summary; /* one line for `quorum --help` */
	const char *help;    /* full text for `quorum help NAME` */
};

extern const struct cmd cmd_review_def;
extern const struct cmd cmd_parse_def;
extern const struct cmd cmd_apply_def;
extern const struct cmd cmd_index_def;
extern const struct cmd cmd_similar_def;
extern const struct cmd cmd_eval_def;
extern const struct cmd cmd_watch_def;
extern const struct cmd cmd_cost_def;
extern const struct cmd cmd_ci_def;
extern const struct cmd cmd_classify_def;
/* `quorum eval --question NAME` (bot/cmd-classify.c), for command c. */
int cmd_classify_eval(const struct cmd *c, int argc, char **argv);

/* Print "quorum: <msg>" to stderr; returns -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "quorum: warning: <msg>" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the usage line of c and a hint; returns EXIT_USAGE. */
int usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print the full help of c to stdout; returns 0. */
int cmd_print_help(const struct cmd *c);

/*
 * Options that mean the same in every command that takes them, parsed
 * and checked by cmd_opt() with the same error text everywhere. A
 * command lists the ones it takes in its getopt_long() table with the
 * CMD_OPT_* entries (and "C:" in its short options for -C).
 */
enum cmd_opt_id {
	OPT_BASE = 256,
	OPT_BUDGET,
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_QUORUM,
	OPT_LIST,
	OPT_NO_CACHE,
	OPT_JSON,
	OPT_DRY_RUN,
};

#define CMD_OPT_BASE                                                           \
	{                                                                      \
		"base", required_argument, NULL, OPT_BASE                      \
	}
#define CMD_OPT_BUDGET                                                         \
	{                                                                      \
		"budget", required_argument, NULL, OPT_BUDGET                  \
	}
#define CMD_OPT_FORMAT                                                         \
	{                                                                      \
		"format", required_argument, NULL, OPT_FORMAT                  \
	}
#define CMD_OPT_OUTPUT                                                         \
	{                                                                      \
		"output", required_argument, NULL, OPT_OUTPUT                  \
	}
#define CMD_OPT_QUORUM                                                         \
	{                                                                      \
		"quorum", required_argument, NULL, OPT_QUORUM                  \
	}
#define CMD_OPT_LIST                                                           \
	{                                                                      \
		"list", required_argument, NULL, OPT_LIST                      \
	}
#define CMD_OPT_NO_CACHE                                                       \
	{                                                                      \
		"no-cache", no_argument, NULL, OPT_NO_CACHE                    \
	}
#define CMD_OPT_JSON                                                           \
	{                                                                      \
		"json", no_argument, NULL, OPT_JSON                            \
	}
#define CMD_OPT_DRY_RUN                                                        \
	{                                                                      \
		"dry-run", optional_argument, NULL, OPT_DRY_RUN                \
	}
#define CMD_OPT_HELP                                                           \
	{                                                                      \
		"help", no_argument, NULL, 'h'                                 \
	}
#define CMD_OPT_END                                                            \
	{                                                                      \
		NULL, 0, NULL, 0                                               \
	}

/* The formats a command's --format takes: bits (1 << FMT_...). */
#define FORMATS_ALL                                                            \
	((1u << FMT_TEXT) | (1u << FMT_JSON) | (1u << FMT_SARIF) |             \
	 (1u << FMT_EMAIL))

struct cmd_opts {
	const char *repo_path; /* -C REPO; NULL: the current directory */
	const char *base;      /* --base REV */
	double budget;	       /* --budget USD; < 0: none given, 0: no model */
	unsigned formats;      /* what --format may name (FORMATS_ALL) */
	enum report_format format; /* --format */
	const char *output;	   /* --output FILE; NULL: standard output */
	int quorum;		   /* --quorum N; 0: review.quorum */
	const char *list;	   /* --list NAME: its budget and ledger name */
	bool no_cache;		   /* --no-cache */
	bool json;		   /* --json */
	bool dry_run; /* --dry-run[=DIR]: build, price, send nothing */
	const char *dry_run_dir; /* --dry-run=DIR: the requests go there */
};

#define CMD_OPTS_INIT                                                          \
	{                                                                      \
		.budget = -1, .formats = FORMATS_ALL, .format = FMT_TEXT,      \
	}

/* Start a getopt_long() loop: from argv[1], errors reported by us. */
void cmd_opt_start(void);

/*
 * Handle opt, which getopt_long() returned and the command does not
 * handle itself: -C, -h/--help, the CMD_OPT_* options, and unknown or
 * incomplete options. 0 to go on parsing, or -1 when the command is to
 * return *exit_code now (0 after --help, EXIT_USAGE with one line on
 * stderr for a bad value or an unknown option).
 */
int cmd_opt(const struct cmd *c, int opt, char **argv, struct cmd_opts *o,
	    int *exit_code);

/*
 * YYYY-MM-DD (UTC; the day's last second when end_of_day),
 * YYYY-MM-DDTHH:MM:SS, or @SECONDS. 0, or -1 when s is none of these.
 */
int parse_date(const char *s, bool end_of_day, int64_t *out);

/*
 * The date option name (e.g. "--since") of c has as its value arg, by
 * parse_date(); 0, or EXIT_USAGE after one line on stderr.
 */
int cmd_opt_date(const struct cmd *c, const char *name, const char *arg,
		 bool end_of_day, int64_t *out);

#endif
