// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: raw bytes -> mp_patch_parse() -> mp_patch_free(). */
#include <stddef.h>
#include <stdint.h>

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
	/* small caps so the fuzzer reaches every limit quickly */
	struct mp_limits lim = {1 << 20, 200, 8, 16, 512 << 10};
	struct mp_patch *p = NULL;
	struct errmsg err;

	mp_patch_parse(&p, (const char *)data, size, &lim, &err);
	mp_patch_free(p);
	return 0;
}
