// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the mailparse mbox/series work. */
#include "quorum.h"

static int cmd_parse(int argc, char **argv)
{
	return EXIT_USAGE;
}

const struct cmd cmd_parse_def = {
	"parse", cmd_parse, "quorum parse [--json] FILE...",
	"show how mail was understood: series, versions, gaps", "",
};
