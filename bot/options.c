// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * options.c - the options every command parses the same way, with the
 * same checks and the same one-line errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "mailparse/sb.h"

/* The names report_format_parse() knows, for the error that lists them. */
static const char *const format_names[] = {
	[FMT_TEXT] = "text",
	[FMT_JSON] = "json",
	[FMT_SARIF] = "sarif",
	[FMT_EMAIL] = "email",
};

/* "text, json, sarif or email": the formats in mask, for an error. */
static void formats_list(unsigned mask, struct sb *out)
{
	size_t i, n = 0, total = 0;

	for (i = 0; i < ARRAY_SIZE(format_names); i++)
		total += !!(mask & (1u << i));
	for (i = 0; i < ARRAY_SIZE(format_names); i++) {
		if (!(mask & (1u << i)))
			continue;
		if (n)
			sb_adds(out, n + 1 == total ? " or " : ", ");
		sb_adds(out, format_names[i]);
		n++;
	}
}

static int opt_format(const struct cmd *c, const char *arg, struct cmd_opts *o)
{
	int f = report_format_parse(arg);
	struct sb names = SB_INIT;
	int ret;

	if (f >= 0 && (o->formats & (1u << f))) {
		o->format = (enum report_format)f;
		return 0;
	}
	formats_list(o->formats, &names);
	ret = usage_error(c, "--format wants %s, not '%s'", sb_str(&names),
			  arg);
	sb_release(&names);
	return ret;
}

void cmd_opt_start(void)
{
	opterr = 0;
	optind = 1;
}

int cmd_opt(const struct cmd *c, int opt, char **argv, struct cmd_opts *o,
	    int *exit_code)
{
	char *end;

	*exit_code = 0;
	switch (opt) {
	case 'C':
		o->repo_path = optarg;
		return 0;
	case OPT_BASE:
		o->base = optarg;
		return 0;
	case OPT_BUDGET:
		o->budget = strtod(optarg, &end);
		if (end == optarg || *end ||
		    !(o->budget >= 0 && o->budget < 1e9))
			break;
		return 0;
	case OPT_FORMAT:
		*exit_code = opt_format(c, optarg, o);
		return *exit_code ? -1 : 0;
	case OPT_OUTPUT:
		o->output = optarg;
		return 0;
	case OPT_QUORUM:
		o->quorum = (int)strtol(optarg, &end, 10);
		if (end == optarg || *end || o->quorum < 1 || o->quorum > 100)
			break;
		return 0;
	case OPT_LIST:
		o->list = optarg;
		return 0;
	case OPT_NO_CACHE:
		o->no_cache = true;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		o->dry_run_dir = optarg && *optarg ? optarg : NULL;
		return 0;
	case 'h':
		*exit_code = cmd_print_help(c);
		return -1;
	default:
		*exit_code = usage_error(c, "unknown or incomplete option '%s'",
					 argv[optind - 1]);
		return -1;
	}
	if (opt == OPT_BUDGET)
		*exit_code = usage_error(
			c, "--budget wants an amount in USD, not '%s'", optarg);
	else
		*exit_code = usage_error(
			c, "--quorum wants a number from 1 to 100, not '%s'",
			optarg);
	return -1;
}

int parse_date(const char *s, bool end_of_day, int64_t *out)
{
	struct tm tm = {0};
	const char *rest;
	char *end;

	if (s[0] == '@') {
		long long v = strtoll(s + 1, &end, 10);

		if (end == s + 1 || *end)
			return -1;
		*out = v;
		return 0;
	}
	rest = strptime(s, "%Y-%m-%d", &tm);
	if (!rest)
		return -1;
	if (*rest) {
		rest = strptime(rest, "T%H:%M:%S", &tm);
		if (!rest || *rest)
			return -1;
		end_of_day = false;
	} else if (end_of_day) {
		tm.tm_hour = 23;
		tm.tm_min = 59;
		tm.tm_sec = 59;
	}
	*out = (int64_t)timegm(&tm);
	return 0;
}

int cmd_opt_date(const struct cmd *c, const char *name, const char *arg,
		 bool end_of_day, int64_t *out)
{
	if (parse_date(arg, end_of_day, out) == 0)
		return 0;
	return usage_error(c, "%s wants YYYY-MM-DD or @SECONDS, not '%s'", name,
			   arg);
}
