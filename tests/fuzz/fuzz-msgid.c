// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a command-line argument -> mp_msgid_is_spec(),
 * mp_msgid_from_spec() (URLs, %-escapes, <>), mp_shown().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mailparse/mailparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errmsg err;
	char *arg, *id = NULL, b[64];

	if (size > 4096)
		return 0;
	arg = malloc(size + 1);
	if (!arg)
		return 0;
	memcpy(arg, data, size);
	arg[size] = '\0'; /* argv strings end at their first NUL */
	(void)mp_msgid_is_spec(arg);
	if (mp_msgid_from_spec(arg, &id, &err) == 0) {
		/* whatever is taken is a valid id, never longer than allowed */
		if (!mp_msgid_valid(id) || strlen(id) > MP_MSGID_MAX)
			abort();
		free(id);
	} else if (id || !err.msg[0] || strchr(err.msg, '\n')) {
		abort(); /* a refusal is one line and hands nothing out */
	}
	mp_shown(arg, b, sizeof(b));
	if (strlen(b) >= sizeof(b))
		abort();
	free(arg);
	return 0;
}
