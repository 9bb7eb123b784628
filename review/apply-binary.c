// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-binary.c - check a "GIT binary patch" before libgit2 inflates it.
 *
 * libgit2 inflates the whole zlib stream of a binary hunk before it
 * compares the result with the size the patch declares, so a small hostile
 * mail could make it allocate gigabytes (a zip bomb). Here each section is
 * base85-decoded and inflated with the declared size as a hard cap first.
 *
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "apply-int.h"

/* Largest file a binary patch may create or change. */
#define AP_MAX_BINARY ((size_t)64 << 20)

static int b85_value(int c)
{
	static const char alphabet[] = "0123456789"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "abcdefghijklmnopqrstuvwxyz"
				       "!#$%&()*+-;<=>?@^_`{|}~";
	const char *p = c ? strchr(alphabet, c) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

/* Decode one data line ("<len char><base85>") onto out; -1 if malformed. */
static int b85_line(const char *l, size_t n, struct sb *out)
{
	size_t want, i;
	int len;

	if (!n)
		return -1;
	if (l[0] >= 'A' && l[0] <= 'Z')
		len = l[0] - 'A' + 1;
	else if (l[0] >= 'a' && l[0] <= 'z')
		len = l[0] - 'a' + 27;
	else
		return -1;
	want = ((size_t)len + 3) / 4 * 5;
	if (n - 1 != want)
		return -1;
	for (i = 0; i < want; i += 5) {
		unsigned long acc = 0;
		unsigned char b[4];
		int k, v;

		for (k = 0; k < 5; k++) {
			v = b85_value((unsigned char)l[1 + i + k]);
			if (v < 0)
				return -1;
			acc = acc * 85 + (unsigned long)v;
		}
		if (acc > 0xffffffffUL)
			return -1;
		b[0] = (unsigned char)(acc >> 24);
		b[1] = (unsigned char)(acc >> 16);
		b[2] = (unsigned char)(acc >> 8);
		b[3] = (unsigned char)acc;
		if (sb_add(out, b, len < 4 ? (size_t)len : 4) < 0)
			return -1;
		len -= 4;
	}
	return 0;
}

/* Inflate data, refusing more than cap bytes; returns the size or -1. */
static long long inflate_capped(const struct sb *data, size_t cap)
{
	unsigned char buf[16384];
	z_stream z;
	size_t total = 0;
	int r;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)data->buf;
	z.avail_in = (uInt)data->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = inflate(&z, Z_NO_FLUSH);
		if (r != Z_OK && r != Z_STREAM_END)
			break;
		total += sizeof(buf) - z.avail_out;
		if (total > cap) {
			r = Z_DATA_ERROR;
			break;
		}
	} while (r != Z_STREAM_END && (z.avail_in || !z.avail_out));
	inflateEnd(&z);
	return r == Z_STREAM_END ? (long long)total : -1;
}

int ap_binary_check(const struct ap_file *f, struct errmsg *err)
{
	const char *p = f->text, *end = f->text + f->text_len;
	const char *path = f->new_path ? f->new_path : f->old_path;
	struct sb data = SB_INIT;
	int ret = 0;

	sb_init(&data, AP_MAX_BINARY);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		unsigned long long size = 0;
		const char *q;
		long long got;

		if (!(n > 8 && !memcmp(p, "literal ", 8)) &&
		    !(n > 6 && !memcmp(p, "delta ", 6))) {
			p = nl ? nl + 1 : end;
			continue;
		}
		for (q = p + (p[0] == 'l' ? 8 : 6); q < p + n; q++) {
			if (*q < '0' || *q > '9' || size > AP_MAX_BINARY)
				break;
			size = size * 10 + (unsigned)(*q - '0');
		}
		if (q != p + n || size > AP_MAX_BINARY) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "the binary patch of %.200s declares "
					 "a size over %zu MiB or a bad one",
					 path, AP_MAX_BINARY >> 20);
			goto out;
		}
		sb_reset(&data);
		p = nl ? nl + 1 : end;
		while (p < end) {
			const char *line = p;

			nl = memchr(p, '\n', (size_t)(end - p));
			n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			p = nl ? nl + 1 : end;
			if (!n)
				break;
			if (b85_line(line, n, &data) < 0) {
				ret = errmsg_set(err, RV_ERR_INPUT,
						 "corrupt binary patch of "
						 "%.200s (bad base85 data)",
						 path);
				goto out;
			}
		}
		got = inflate_capped(&data, (size_t)size);
		if (got < 0 || (unsigned long long)got != size) {
			ret = errmsg_set(err, RV_ERR_INPUT,
					 "corrupt binary patch of %.200s (its "
					 "data does not inflate to the %llu "
					 "bytes it declares)",
					 path, size);
			goto out;
		}
	}
out:
	sb_release(&data);
	return ret;
}
