// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: an mbox of many series, as `quorum review` and
 * `quorum apply` plan it (no repository: nothing is applied). Bytes ->
 * mbox reader -> series -> rv_prereq_plan_input(); each series' plan
 * must name only other candidates, each at most once, and a series
 * another needs is marked used. The input's own series are multiplied
 * by its first byte, so that a small input makes a large set.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "mailparse/mailparse.h"
#include "review/review.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	g_mime_init();
	return 0;
}

static void check_plan(const struct mp_set *set,
		       const struct rv_prereq_plan *pl)
{
	size_t i, k, j;

	for (i = 0; i < set->nseries; i++) {
		if (pl->nof[i] > set->nseries)
			abort();
		for (k = 0; k < pl->nof[i]; k++) {
			const struct mp_series *p = pl->of[i][k];

			if (p == set->series[i])
				abort(); /* its own prerequisite */
			for (j = 0; j < set->nseries && set->series[j] != p;
			     j++)
				;
			if (j == set->nseries || !pl->used[j])
				abort();
			for (j = 0; j < k; j++)
				if (pl->of[i][j] == p)
					abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_limits lim = {16 << 10, 200, 8, 16, 8 << 10};
	struct rv_apply_opts aopts = RV_APPLY_OPTS_INIT;
	struct rv_prereq_plan pl;
	struct mp_collector *c;
	struct mp_mbox *mb = NULL;
	struct sb msg = SB_INIT;
	struct mp_set *set;
	const char *where;
	size_t copies, n;
	int ret;

	if (size < 2)
		return 0;
	copies = 1 + data[0] % 64;
	c = mp_collector_new();
	for (n = 0; n < copies; n++) {
		FILE *fp = fmemopen((void *)(data + 1), size - 1, "rb");

		if (!fp)
			break;
		if (mp_mbox_open_fp(&mb, fp, "fuzz", &lim, NULL)) {
			fclose(fp);
			break;
		}
		while ((ret = mp_mbox_next(mb, &msg, &where)) != 0) {
			struct mp_patch *p = NULL;

			if (ret < 0)
				continue;
			mp_patch_parse(&p, msg.buf, msg.len, &lim, NULL);
			if (p)
				mp_collector_add(c, p);
		}
		mp_mbox_free(mb);
		mb = NULL;
		fclose(fp);
	}
	set = mp_collector_finish(c);
	if (set && set->nseries <= RV_MAX_SERIES_PER_INPUT) {
		rv_prereq_plan_input(&pl, NULL, set, &aopts, NULL, false);
		check_plan(set, &pl);
		rv_prereq_plan_release(&pl);
	}
	mp_set_free(set);
	sb_release(&msg);
	return 0;
}
