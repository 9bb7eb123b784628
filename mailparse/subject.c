// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * subject.c - the grammar of patch subjects:
 *   (Re:|Aw:|Fwd:...)* ([word word...])* title
 * where the bracket words are PATCH, RFC, RESEND, vN, PATCHvN, n/m and
 * any other word, kept as a tag (net-next, bpf, AUTOSEL, 5.10).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mailparse.h"
#include "mp-internal.h"

/* More tags than this are kept out; no real subject comes close. */
#define MAX_TAGS 32
/* n/m with n > m: an extra patch or two sent after a series ("3/2"). */
#define MAX_EXTRA 3

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* "Re:", "RE:", "Aw:", "Fwd:", "Fw:", "Sv:", "Re[2]:", "Re: " ... */
static const char *skip_reply(const char *p)
{
	static const char *const pre[] = {"re", "aw",	"fwd", "fw",
					  "sv", "antw", "wg",  "vs"};

	for (size_t i = 0; i < ARRAY_SIZE(pre); i++) {
		size_t n = strlen(pre[i]);
		const char *q = p + n;

		if (strncasecmp(p, pre[i], n))
			continue;
		if (*q == '[') {
			/* Re[2]: */
			const char *c = q + 1;

			while (isdigit((unsigned char)*c))
				c++;
			if (*c != ']')
				continue;
			q = c + 1;
		}
		if (*q == ':')
			return q + 1;
	}
	return NULL;
}

/* Parse a number of 1..6 digits; -1 otherwise. */
static int small_number(const char *s, size_t n)
{
	int v = 0;

	if (n == 0 || n > 6)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "vN" / "VN" -> N, else -1. */
static int version_word(const char *w, size_t n)
{
	if (n >= 2 && (w[0] == 'v' || w[0] == 'V'))
		return small_number(w + 1, n - 1);
	return -1;
}

static void add_tag(struct mp_subject *s, const char *w, size_t n)
{
	if (s->ntags >= MAX_TAGS)
		return;
	s->tags = xrealloc(s->tags, (s->ntags + 1) * sizeof(char *));
	s->tags[s->ntags++] = mp_strdup_utf8(w, n);
}

static bool word_is(const char *w, size_t n, const char *kw)
{
	return n == strlen(kw) && !strncasecmp(w, kw, n);
}

/* One word inside brackets. */
static void bracket_word(struct mp_subject *s, const char *w, size_t n)
{
	const char *slash = memchr(w, '/', n);
	int v;

	if (word_is(w, n, "PATCH")) {
		s->has_patch_tag = true;
		return;
	}
	if (word_is(w, n, "RFC")) {
		s->has_patch_tag = true;
		s->rfc = true;
		return;
	}
	if (word_is(w, n, "RESEND")) {
		s->resend = true;
		return;
	}
	if (n > 5 && !strncasecmp(w, "PATCH", 5)) {
		v = version_word(w + 5, n - 5);
		if (v > 0) {
			s->has_patch_tag = true;
			s->version = v;
			return;
		}
	}
	if (n > 3 && !strncasecmp(w, "RFC", 3)) {
		v = version_word(w + 3, n - 3);
		if (v > 0) {
			s->has_patch_tag = true;
			s->rfc = true;
			s->version = v;
			return;
		}
	}
	v = version_word(w, n);
	if (v > 0) {
		s->version = v;
		return;
	}
	if (slash) {
		int a = small_number(w, (size_t)(slash - w));
		int b = small_number(slash + 1, n - (size_t)(slash - w) - 1);

		/* "3/2": an extra patch sent into a 2-patch thread */
		if (a >= 0 && b > 0 && a <= b + MAX_EXTRA) {
			s->index = a;
			s->total = b;
			return;
		}
	}
	add_tag(s, w, n);
}

/*
 * Mercurial's "[PATCH 1 of 2]": w..*q is the first number; on success
 * set index and total and move *q past the second number.
 */
static bool n_of_m(struct mp_subject *s, const char *w, const char **q,
		   const char *close)
{
	const char *o = *q, *m, *me;
	int a, b;

	if ((a = small_number(w, (size_t)(*q - w))) < 0)
		return false;
	while (o < close && *o == ' ')
		o++;
	if (close - o < 4 || strncasecmp(o, "of ", 3))
		return false;
	for (m = o + 3; m < close && *m == ' '; m++)
		;
	for (me = m; me < close && isdigit((unsigned char)*me); me++)
		;
	if (me < close && *me != ' ' && *me != ',' && *me != '\t')
		return false;
	b = small_number(m, (size_t)(me - m));
	if (b <= 0 || a > b + MAX_EXTRA)
		return false;
	s->index = a;
	s->total = b;
	*q = me;
	return true;
}

/* Read "[...]" at p; returns the position after ']' or NULL. */
static const char *bracket_group(struct mp_subject *s, const char *p)
{
	const char *close = strchr(p, ']');
	const char *q = p + 1;

	if (!close)
		return NULL;
	if (close - q >= 8 && !strncasecmp(q, "GIT PULL", 8) &&
	    (q[8] == ']' || q[8] == ' ' || q[8] == ',')) {
		/* "[GIT PULL]" names one thing, keep it whole */
		add_tag(s, q, 8);
		q += 8;
	}
	while (q < close) {
		const char *w;

		while (q < close && (*q == ' ' || *q == '\t' || *q == ','))
			q++;
		w = q;
		while (q < close && *q != ' ' && *q != '\t' && *q != ',')
			q++;
		if (q > w && isdigit((unsigned char)*w) &&
		    n_of_m(s, w, &q, close))
			continue;
		if (q > w)
			bracket_word(s, w, (size_t)(q - w));
	}
	return close + 1;
}

void mp_subject_parse(struct mp_subject *s, const char *subject)
{
	const char *p = subject ? subject : "";
	char *t, *w;
	bool space = false;

	memset(s, 0, sizeof(*s));
	s->version = 1;
	for (;;) {
		const char *q;

		p = skip_ws(p);
		q = skip_reply(p);
		if (q) {
			s->reply = true;
			p = q;
			continue;
		}
		if (*p == '[') {
			q = bracket_group(s, p);
			if (q) {
				p = q;
				continue;
			}
		}
		break;
	}
	/* the title, with runs of whitespace (folding) made one space */
	t = w = xmalloc(strlen(p) + 1);
	for (; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
			space = w > t;
			continue;
		}
		if (space)
			*w++ = ' ';
		space = false;
		*w++ = *p;
	}
	*w = '\0';
	s->title = mp_strdup_utf8(t, (size_t)(w - t));
	free(t);
}

void mp_subject_release(struct mp_subject *s)
{
	if (!s)
		return;
	free(s->title);
	for (size_t i = 0; i < s->ntags; i++)
		free(s->tags[i]);
	free(s->tags);
	memset(s, 0, sizeof(*s));
	s->version = 1;
}
