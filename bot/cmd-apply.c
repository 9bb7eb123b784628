// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the apply work. */
#include "quorum.h"

static int cmd_apply(int argc, char **argv)
{
	return EXIT_USAGE;
}

const struct cmd cmd_apply_def = {
	"apply", cmd_apply, "quorum apply [-C repo] [--base REV] [--json] FILE",
	"apply a series in memory; per-patch commit and tree ids, or the failing hunk",
	"",
};
