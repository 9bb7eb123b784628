// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rfc2047.c - mend encoded-words before GMime decodes a header.
 *
 * A long non-ASCII subject or name comes as several adjacent encoded-words
 * (=?UTF-8?B?...?= =?UTF-8?B?...?=). GMime 3.2.13 (Debian 12) decodes
 * only the first of them in some of these runs, so the subject or name is
 * cut. Joining each run of words of one charset and one encoding into a
 * single word before decoding works around it, and is what RFC 2047 6.2
 * means anyway: the whitespace between adjacent encoded-words is dropped.
 * Base64 words are decoded to bytes first and the bytes concatenated, as a
 * multibyte character may be split across two words.
 */
#include <glib.h>
#include <string.h>
#include <strings.h>

#include "mp-internal.h"

/* Header values above this are left to GMime as they are. */
#define MAX_JOIN_INPUT (256 * 1024)

struct eword {
	const char *start, *end; /* the whole =?...?= */
	const char *cs;		 /* charset (with any *lang) */
	size_t cslen;
	char enc;	  /* 'B' or 'Q' */
	const char *text; /* the encoded text */
	size_t textlen;
};

/* Is there an encoded-word at p? Fills w. */
static bool eword_at(const char *p, struct eword *w)
{
	const char *q, *t;

	if (p[0] != '=' || p[1] != '?')
		return false;
	q = p + 2;
	while (*q && *q != '?' && (unsigned char)*q > ' ' && *q != '=')
		q++;
	if (*q != '?' || q == p + 2)
		return false;
	if ((q[1] != 'B' && q[1] != 'b' && q[1] != 'Q' && q[1] != 'q') ||
	    q[2] != '?')
		return false;
	t = q + 3;
	for (q = t; *q && *q != '?' && (unsigned char)*q > ' '; q++)
		;
	if (q[0] != '?' || q[1] != '=')
		return false;
	w->start = p;
	w->end = q + 2;
	w->cs = p + 2;
	w->cslen = (size_t)(t - 3 - w->cs);
	w->enc = g_ascii_toupper(t[-2]);
	w->text = t;
	w->textlen = (size_t)(q - t);
	return true;
}

static bool same_kind(const struct eword *a, const struct eword *b)
{
	return a->enc == b->enc && a->cslen == b->cslen &&
	       !g_ascii_strncasecmp(a->cs, b->cs, a->cslen);
}

/* Append the bytes of one base64 word; each word is padded on its own. */
static void add_base64(struct sb *bytes, const char *s, size_t len)
{
	guchar *buf = g_malloc(len / 4 * 3 + 4);
	gint state = 0;
	guint save = 0;
	size_t n = g_base64_decode_step(s, len, buf, &state, &save);

	sb_add(bytes, buf, n);
	g_free(buf);
}

char *mp_header_join_words(const char *v)
{
	struct sb out = SB_INIT, bytes = SB_INIT;
	const char *p = v;
	bool joined = false;

	if (!v || !strstr(v, "=?") || strlen(v) > MAX_JOIN_INPUT)
		return NULL;
	while (*p) {
		struct eword w, next;
		const char *q;
		size_t n = 1;

		if (!eword_at(p, &w)) {
			sb_addch(&out, *p++);
			continue;
		}
		sb_reset(&bytes);
		if (w.enc == 'B')
			add_base64(&bytes, w.text, w.textlen);
		else
			sb_add(&bytes, w.text, w.textlen);
		/* the run: words separated by nothing but whitespace */
		for (q = w.end;;) {
			const char *r = q;

			while (*r == ' ' || *r == '\t' || *r == '\r' ||
			       *r == '\n')
				r++;
			if (!eword_at(r, &next) || !same_kind(&w, &next))
				break;
			if (w.enc == 'B')
				add_base64(&bytes, next.text, next.textlen);
			else
				sb_add(&bytes, next.text, next.textlen);
			q = next.end;
			n++;
		}
		if (n == 1) {
			sb_add(&out, w.start, (size_t)(w.end - w.start));
			p = w.end;
			continue;
		}
		joined = true;
		sb_adds(&out, "=?");
		sb_add(&out, w.cs, w.cslen);
		sb_addch(&out, '?');
		sb_addch(&out, w.enc);
		sb_addch(&out, '?');
		if (w.enc == 'B') {
			gchar *b64 = g_base64_encode((const guchar *)bytes.buf,
						     bytes.len);

			sb_adds(&out, b64);
			g_free(b64);
		} else {
			sb_add(&out, bytes.buf, bytes.len);
		}
		sb_adds(&out, "?=");
		p = q;
	}
	sb_release(&bytes);
	if (!joined) {
		sb_release(&out);
		return NULL;
	}
	return sb_detach(&out, NULL);
}
