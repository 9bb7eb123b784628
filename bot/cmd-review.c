// SPDX-License-Identifier: GPL-2.0-or-later
/* Placeholder until cmd-review lands (same session). */
#include <getopt.h>
#include "quorum.h"

static int cmd_review(int argc, char **argv);

const struct cmd cmd_review_def = {
	"review", cmd_review,
	"quorum review [-C repo] [--base REV] [FILE|-]",
	"review a patch series from an mbox file or standard input",
	"",
};

static int cmd_review(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hC:", opts, NULL)) != -1) {
		if (c == 'h')
			return cmd_print_help(&cmd_review_def);
		return usage_error(&cmd_review_def, "unknown option '%s'",
				   argv[optind - 1]);
	}
	return EXIT_USAGE;
}
