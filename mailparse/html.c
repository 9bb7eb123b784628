// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * html.c - the text of an HTML-only mail part.
 *
 * Some reviewers can only send HTML; their Reviewed-by: must not be lost,
 * and the patch they quote must not read as theirs. So: tags dropped,
 * block ends made line breaks, <pre> kept as is, entities decoded, and
 * <blockquote> lines prefixed with "> " like a quoted plain-text reply.
 * One pass, linear in the input; out's cap bounds the output.
 */
#include <glib.h>
#include <string.h>
#include <strings.h>

#include "mp-internal.h"

/* Tag names are compared in lower case, at most this long. */
#define TAG_MAX 16

struct h2t {
	struct sb *out;
	int quote; /* blockquote depth */
	bool pre;
	bool at_bol; /* next text starts a line */
	bool space;  /* a space is pending */
};

static void newline(struct h2t *h)
{
	h->space = false;
	sb_addch(h->out, '\n');
	h->at_bol = true;
}

static void text_char(struct h2t *h, const char *c, size_t n)
{
	if (h->at_bol) {
		for (int i = 0; i < h->quote && i < 32; i++)
			sb_addch(h->out, '>');
		if (h->quote)
			sb_addch(h->out, ' ');
		h->at_bol = false;
		h->space = false;
	} else if (h->space) {
		sb_addch(h->out, ' ');
		h->space = false;
	}
	sb_add(h->out, c, n);
}

/* &name; or &#N; at p: appends its UTF-8 and returns its length, or 0. */
static size_t entity(struct h2t *h, const char *p, const char *end)
{
	static const struct {
		const char *name;
		const char *utf8;
	} ents[] = {
		{"lt;", "<"},
		{"gt;", ">"},
		{"amp;", "&"},
		{"quot;", "\""},
		{"apos;", "'"},
		{"nbsp;", " "},
		{"ndash;", "\xe2\x80\x93"},
		{"mdash;", "\xe2\x80\x94"},
	};
	const char *q = p + 1;

	if (q < end && *q == '#') {
		unsigned long v = 0;
		bool hex = q + 1 < end && (q[1] == 'x' || q[1] == 'X');
		char buf[8];
		int n;

		q += hex ? 2 : 1;
		while (q < end &&
		       (hex ? g_ascii_isxdigit(*q) : g_ascii_isdigit(*q)) &&
		       v < 0x110000) {
			v = v * (hex ? 16 : 10) +
			    (unsigned long)(hex ? g_ascii_xdigit_value(*q)
						: *q - '0');
			q++;
		}
		if (q >= end || *q != ';' || v == 0 || v >= 0x110000 ||
		    (v >= 0xd800 && v < 0xe000))
			return 0;
		n = g_unichar_to_utf8((gunichar)v, buf);
		text_char(h, buf, (size_t)n);
		return (size_t)(q + 1 - p);
	}
	for (size_t i = 0; i < ARRAY_SIZE(ents); i++) {
		size_t n = strlen(ents[i].name);

		if ((size_t)(end - q) >= n && !memcmp(q, ents[i].name, n)) {
			text_char(h, ents[i].utf8, strlen(ents[i].utf8));
			return n + 1;
		}
	}
	return 0;
}

static bool tag_is(const char *name, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(name, *set))
			return true;
	return false;
}

int mp_html_to_text(struct sb *out, const char *s, size_t len)
{
	static const char *const breaks[] = {"br", "p",	    "div", "tr", "li",
					     "h1", "h2",    "h3",  "h4", "h5",
					     "h6", "table", "ul",  "ol", NULL};
	struct h2t h = {out, 0, false, true, false};
	const char *p = s, *end = s + len;
	const char *skip_until = NULL; /* "</style", "</script", "</head" */

	while (p < end) {
		if (*p == '<') {
			const char *gt = memchr(p, '>', (size_t)(end - p));
			char name[TAG_MAX + 1];
			size_t n = 0;
			const char *q = p + 1;
			bool close = false;

			if (!gt)
				break; /* a cut tag: drop the rest */
			if (q < gt && *q == '/') {
				close = true;
				q++;
			}
			while (q < gt && n < TAG_MAX && g_ascii_isalnum(*q))
				name[n++] = g_ascii_tolower(*q++);
			name[n] = '\0';
			p = gt + 1;
			if (skip_until) {
				if (close && !strcmp(name, skip_until))
					skip_until = NULL;
				continue;
			}
			if (!close && (!strcmp(name, "style") ||
				       !strcmp(name, "script") ||
				       !strcmp(name, "head"))) {
				skip_until = name[1] == 't'   ? "style"
					     : name[1] == 'c' ? "script"
							      : "head";
				continue;
			}
			if (!strcmp(name, "pre")) {
				h.pre = !close;
				if (!h.at_bol)
					newline(&h);
			} else if (!strcmp(name, "blockquote")) {
				if (!h.at_bol)
					newline(&h);
				h.quote += close ? (h.quote > 0 ? -1 : 0) : 1;
			} else if (tag_is(name, breaks) &&
				   (close || !strcmp(name, "br") ||
				    !strcmp(name, "p") ||
				    !strcmp(name, "div"))) {
				if (!h.at_bol || !strcmp(name, "br"))
					newline(&h);
			}
			continue;
		}
		if (skip_until) {
			p++;
			continue;
		}
		if (*p == '&') {
			size_t n = entity(&h, p, end);

			if (n) {
				p += n;
				continue;
			}
		}
		if (*p == '\r') {
			p++;
			continue;
		}
		if (*p == '\n' || *p == ' ' || *p == '\t') {
			if (h.pre) {
				if (*p == '\n')
					newline(&h);
				else
					text_char(&h, p, 1);
			} else if (!h.at_bol) {
				h.space = true;
			}
			p++;
			continue;
		}
		text_char(&h, p, 1);
		p++;
	}
	if (!h.at_bol)
		newline(&h);
	return 0;
}
