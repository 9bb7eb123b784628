// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trailers.c - `Key: value` lines of the last paragraph of a commit
 * message, the way git interpret-trailers reads them, plus the wrapped
 * `Fixes: 12ab ("long title` + `continued")` that mailers make.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mailparse.h"
#include "mp-internal.h"

/* A hostile message cannot make us keep more than this many. */
#define MAX_TRAILERS 1024
#define MAX_KEY 64

/* Length of the key when [p, e) is `Key: value`, else 0. */
static size_t trailer_key(const char *p, const char *e)
{
	const char *k = p;

	if (p >= e || !isalnum((unsigned char)*p))
		return 0;
	while (p < e && (isalnum((unsigned char)*p) || *p == '-'))
		p++;
	if (p >= e || *p != ':' || p - k > MAX_KEY)
		return 0;
	if (p + 1 < e && p[1] != ' ' && p[1] != '\t')
		return 0; /* "http://..." is not a trailer */
	if (mp_line_blank(p + 1, e))
		return 0;
	return (size_t)(p - k);
}

/* Does the value leave a '(' or '"' open, so the next line continues it? */
static bool value_open(const struct sb *v)
{
	int paren = 0, quote = 0;

	for (size_t i = 0; i < v->len; i++) {
		if (v->buf[i] == '(')
			paren++;
		else if (v->buf[i] == ')' && paren > 0)
			paren--;
		else if (v->buf[i] == '"')
			quote ^= 1;
	}
	return paren > 0 || quote;
}

static void add_trimmed(struct sb *v, const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (v->len && p < e)
		sb_addch(v, ' ');
	sb_add(v, p, (size_t)(e - p));
}

struct pending {
	struct mp_trailer *t;
	size_t n;
	struct sb value;
	const char *key;
	size_t keylen;
};

/* HTML mailers turn <a@b> into <a@b<mailto:a@b>>: drop the mailto. */
static void drop_mailto(struct sb *v)
{
	char *m;

	while (v->len && (m = strstr(v->buf, "<mailto:"))) {
		char *gt = strchr(m, '>');

		if (!gt)
			break;
		memmove(m, gt + 1, strlen(gt + 1) + 1);
		v->len = strlen(v->buf);
	}
}

static void pending_flush(struct pending *pd)
{
	if (!pd->key)
		return;
	drop_mailto(&pd->value);
	if (pd->n < MAX_TRAILERS) {
		pd->t = xrealloc(pd->t, (pd->n + 1) * sizeof(*pd->t));
		pd->t[pd->n].key = mp_strdup_utf8(pd->key, pd->keylen);
		pd->t[pd->n].value =
			mp_strdup_utf8(sb_str(&pd->value), pd->value.len);
		pd->n++;
	}
	pd->key = NULL;
	sb_reset(&pd->value);
}

size_t mp_trailers_parse(const char *message, struct mp_trailer **arr,
			 size_t *n)
{
	const char *start, *end, *p, *title_end, *para;
	struct pending pd = {0};
	size_t lines = 0, other = 0;
	bool by = false;

	if (!message)
		return 0;
	start = message;
	end = message + strlen(message);
	/* trailing blank lines do not count */
	while (end > start && (end[-1] == '\n' || end[-1] == ' ' ||
			       end[-1] == '\t' || end[-1] == '\r'))
		end--;
	/* the first paragraph is the title and never holds trailers */
	p = start;
	while (p < end && mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	while (p < end && !mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	title_end = p;
	/* the last paragraph starts after the last blank line */
	para = NULL;
	for (p = title_end; p < end; p = mp_next_line(p, end))
		if (mp_line_blank(p, mp_eol(p, end)))
			para = mp_next_line(p, end);
	if (!para || para >= end)
		return 0;

	sb_init(&pd.value, 0);
	for (p = para; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end);
		size_t k = trailer_key(p, e);

		lines++;
		if (k) {
			pending_flush(&pd);
			pd.key = p;
			pd.keylen = k;
			add_trimmed(&pd.value, p + k + 1, e);
			if (k > 3 && !strncasecmp(p + k - 3, "-by", 3))
				by = true;
		} else if (pd.key &&
			   (*p == ' ' || *p == '\t' || value_open(&pd.value))) {
			add_trimmed(&pd.value, p, e);
			lines--;
		} else {
			pending_flush(&pd);
			other++;
		}
	}
	pending_flush(&pd);
	sb_release(&pd.value);
	/* a paragraph of prose with one "Note: x" line is not a trailer block
	 */
	if (!pd.n || (other && !(by && pd.n * 4 >= lines))) {
		for (size_t i = 0; i < pd.n; i++) {
			free(pd.t[i].key);
			free(pd.t[i].value);
		}
		free(pd.t);
		return 0;
	}
	*arr = xrealloc(*arr, (*n + pd.n) * sizeof(**arr));
	memcpy(*arr + *n, pd.t, pd.n * sizeof(*pd.t));
	*n += pd.n;
	free(pd.t);
	return pd.n;
}

const char *mp_trailer_get(const struct mp_trailer *arr, size_t n,
			   const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (arr[i].key && !strcasecmp(arr[i].key, key))
			return arr[i].value;
	return NULL;
}
