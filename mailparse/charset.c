// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * charset.c - turn mail text in any charset into valid UTF-8.
 *
 * Mail declares its charset, or does not, or lies. We convert what is
 * declared, and read what is left the way mailers usually meant it:
 * UTF-8 where the bytes form UTF-8, else windows-1252, else latin-1.
 */
#include <glib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "mp-internal.h"

/* windows-1252 0x80..0x9f; 0 marks its holes, read as latin-1 (C1). */
static const uint16_t cp1252_c1[32] = {
	0x20ac, 0,	0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0,	0x017d, 0,
	0,	0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0,	0x017e, 0x0178,
};

static int add_codepoint(struct sb *out, unsigned cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	return sb_add(out, b, n);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned c = s[0];

	if (c < 0x80)
		return c ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (left < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (left < 4 || (s[1] & 0xc0) != 0x80 ||
		    (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

bool mp_utf8_ok(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + len;

	/* patch mail is nearly all ASCII: test 8 bytes at a time */
	while (p < end) {
		if (end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			/* no high bit and no zero byte in the word */
			if (!(w & 0x8080808080808080ULL) &&
			    !((w - 0x0101010101010101ULL) & ~w &
			      0x8080808080808080ULL)) {
				p += 8;
				continue;
			}
		}
		if (*p && *p < 0x80) {
			p++;
			continue;
		}
		{
			size_t n = utf8_seq(p, (size_t)(end - p));

			if (!n)
				return false;
			p += n;
		}
	}
	return true;
}

/*
 * Append s as UTF-8, guessing windows-1252 for bytes that are not UTF-8
 * (every 8-bit byte when all_cp1252, for text declared windows-1252).
 */
static int add_bytes(struct sb *out, const char *s, size_t len, bool *guessed,
		     bool all_cp1252)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + len;
	const unsigned char *run = p;

	if (sb_grow(out, len) < 0)
		return -1;
	while (p < end) {
		size_t n;
		unsigned cp;

		if (*p >= 0x20 && *p < 0x80) {
			p++;
			continue;
		}
		n = all_cp1252 && *p >= 0x80 ? 0
					     : utf8_seq(p, (size_t)(end - p));
		if (n) {
			p += n;
			continue;
		}
		if (sb_add(out, run, (size_t)(p - run)) < 0)
			return -1;
		if (*p == 0) {
			cp = 0xfffd;
		} else if (*p >= 0x80 && *p < 0xa0) {
			cp = cp1252_c1[*p - 0x80];
			if (!cp)
				cp = *p;
		} else {
			cp = *p;
		}
		if (guessed && *p)
			*guessed = true;
		if (add_codepoint(out, cp) < 0)
			return -1;
		run = ++p;
	}
	return sb_add(out, run, (size_t)(p - run));
}

static bool charset_is(const char *cs, const char *const *names)
{
	for (; *names; names++)
		if (!strcasecmp(cs, *names))
			return true;
	return false;
}

static const char *const utf8_names[] = {"utf-8", "utf8",	    "us-ascii",
					 "ascii", "ansi_x3.4-1968", NULL};
static const char *const latin_names[] = {
	"iso-8859-1",	"iso8859-1", "latin1", "iso_8859-1",
	"windows-1252", "cp1252",    NULL};

int mp_append_utf8(struct sb *out, const char *text, size_t len,
		   const char *charset, bool *guessed)
{
	gchar *conv;
	gsize written = 0;
	int r;

	if (mp_utf8_ok(text, len)) {
		/* 8-bit bytes with no charset declared are still a guess */
		if (!charset && guessed) {
			for (size_t i = 0; i < len; i++)
				if ((unsigned char)text[i] >= 0x80) {
					*guessed = true;
					break;
				}
		}
		return sb_add(out, text, len);
	}
	if (!charset || charset_is(charset, utf8_names)) {
		/* undeclared, or declared UTF-8 but not: guess */
		return add_bytes(out, text, len, guessed, false);
	}
	if (charset_is(charset, latin_names)) {
		/* windows-1252 is the superset mailers really mean */
		return add_bytes(out, text, len, NULL, true);
	}
	conv = g_convert(text, (gssize)len, "UTF-8", charset, NULL, &written,
			 NULL);
	if (!conv)
		return add_bytes(out, text, len, guessed, false);
	r = add_bytes(out, conv, written, guessed, false);
	g_free(conv);
	return r;
}

char *mp_strdup_utf8(const char *s, size_t len)
{
	struct sb out = SB_INIT;

	if (!s)
		return NULL;
	if (mp_utf8_ok(s, len))
		return xstrndup(s, len);
	if (add_bytes(&out, s, len, NULL, false) < 0 || !out.buf) {
		sb_release(&out);
		return xstrndup("", 0);
	}
	return sb_detach(&out, NULL);
}

bool mp_line_blank(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return false;
	return true;
}
