// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: any bytes -> sb_add_visible() under each set of
 * flags, and sb_add_json_visible() of a JSON string holding them. What
 * comes out is UTF-8 with no control, DEL, C1 or invisible format
 * character but the newlines and tabs asked for; cleaning it again
 * changes nothing; the JSON parses back to the exact bytes when they
 * were UTF-8.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mailparse/mailparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The code point at s, its length in *n; -1 when s is not UTF-8. */
static long decode(const unsigned char *s, size_t left, size_t *n)
{
	unsigned c = s[0];
	size_t len, i;
	long cp;

	*n = 1;
	if (c < 0x80)
		return c;
	len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
	if (!len || c > 0xf4 || left < len)
		return -1;
	cp = c & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*n = len;
	return cp;
}

/* Is s UTF-8 with nothing a terminal would act on but what flags keep? */
static bool shown_ok(const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		long cp = decode(p + i, len - i, &n);

		if (cp < 0 || cp == 0x7f || mp_codepoint_hidden(cp))
			return false;
		if (cp < 0x20 && !(cp == '\n' && (flags & SB_VIS_NEWLINE)) &&
		    !(cp == '\t' && (flags & SB_VIS_TAB)))
			return false;
		i += n;
	}
	return true;
}

static bool utf8(const char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (decode((const unsigned char *)s + i, len - i, &n) < 0)
			return false;
		i += n;
	}
	return true;
}

static void check_visible(const char *in, size_t size, unsigned flags)
{
	struct sb out = SB_INIT, again = SB_INIT;

	if (sb_add_visible_mem(&out, in, size, flags) < 0)
		abort();
	if (!shown_ok(sb_str(&out), out.len, flags))
		abort();
	/* Cleaning again (a report after its fields) changes nothing. */
	if (sb_add_visible_mem(&again, sb_str(&out), out.len,
			       flags & ~SB_VIS_QUOTE) < 0 ||
	    again.len != out.len ||
	    memcmp(sb_str(&again), sb_str(&out), out.len))
		abort();
	sb_release(&out);
	sb_release(&again);
}

static void check_json(const char *in, size_t size)
{
	struct sb out = SB_INIT;
	char *str = malloc(size + 1), *doc;
	cJSON *o, *back;

	if (!str)
		return;
	memcpy(str, in, size);
	str[size] = '\0';
	o = cJSON_CreateString(str);
	doc = o ? cJSON_PrintUnformatted(o) : NULL;
	if (doc) {
		if (sb_add_json_visible(&out, doc) < 0 ||
		    !shown_ok(sb_str(&out), out.len, 0))
			abort();
		back = cJSON_Parse(sb_str(&out));
		if (!back || !cJSON_IsString(back))
			abort();
		/* Exact when the bytes were UTF-8 (up to a NUL). */
		if (utf8(str, strlen(str)) && strcmp(back->valuestring, str))
			abort();
		cJSON_Delete(back);
	}
	free(doc);
	cJSON_Delete(o);
	free(str);
	sb_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned flags[] = {
		0,
		SB_VIS_TAB,
		SB_VIS_NEWLINE | SB_VIS_TAB,
		SB_VIS_QUOTE,
		SB_VIS_QUOTE | SB_VIS_TAB,
	};
	size_t i;

	if (size > 65536)
		return 0;
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		check_visible((const char *)data, size, flags[i]);
	check_json((const char *)data, size);
	return 0;
}
