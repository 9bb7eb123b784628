// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: bytes as an mbox -> mbox reader -> mp_patch_parse ->
 * series collector -> mp_set_free, both keeping and dropping bodies.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <gmime/gmime.h>

#include "mailparse/mailparse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	g_mime_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_limits lim = {16 << 10, 200, 8, 16, 8 << 10};
	struct mp_collector *c;
	struct mp_mbox *mb = NULL;
	struct sb msg = SB_INIT;
	const char *where;
	FILE *fp;
	int ret;

	if (size == 0)
		return 0;
	fp = fmemopen((void *)data, size, "rb");
	if (!fp)
		return 0;
	if (mp_mbox_open_fp(&mb, fp, "fuzz", &lim, NULL)) {
		fclose(fp);
		return 0;
	}
	c = mp_collector_new();
	/* the low bit of the first byte picks the mode quorum parse uses */
	mp_collector_set_keep_bodies(c, data[0] & 1);
	while ((ret = mp_mbox_next(mb, &msg, &where)) != 0) {
		struct mp_patch *p = NULL;

		if (ret < 0) {
			mp_collector_error(c, where, "unreadable");
			continue;
		}
		mp_patch_parse(&p, msg.buf, msg.len, &lim, NULL);
		if (p)
			mp_collector_add(c, p);
	}
	mp_set_free(mp_collector_finish(c));
	sb_release(&msg);
	mp_mbox_free(mb);
	fclose(fp);
	return 0;
}
