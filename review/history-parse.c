// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-parse.c - `Fixes:` trailers and reverts, read from hostile
 * commit messages: every length is bounded, nothing is assumed about
 * where lines end or how subjects are quoted.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "history-int.h"
#include "history-parse.h"

bool hist_is_trailer_line(const char *line, size_t len)
{
	size_t i = 0;

	if (!len || !isalpha((unsigned char)line[0]))
		return false;
	while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '-'))
		i++;
	return i < len && line[i] == ':' && i <= 40;
}

static void add_ref(struct hist_refs *out, const char *id, size_t idlen,
		    const char *subj, size_t slen, bool revert)
{
	struct hist_ref *r;

	if (out->n >= HIST_MAX_FIXES_PER_COMMIT)
		return;
	ALLOC_GROW(out->v, out->n + 1, out->alloc);
	r = &out->v[out->n++];
	memset(r, 0, sizeof(*r));
	if (idlen > 40)
		idlen = 40;
	memcpy(r->id, id, idlen);
	r->id[idlen] = '\0';
	if (slen > HIST_MAX_SUBJECT)
		slen = HIST_MAX_SUBJECT;
	r->subject = slen ? xstrndup(subj, slen) : NULL;
	r->is_revert = revert;
}

static size_t hex_run(const char *p, const char *end)
{
	size_t n = 0;

	while (p + n < end && isxdigit((unsigned char)p[n]))
		n++;
	/* "deadbeefcafe" yes, "deadbeefs" (a word) no. */
	if (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
		return 0;
	return n;
}

/* The subject between ("...") that may wrap onto following lines. */
static void read_subject(const char *p, const char *end, struct sb *subj)
{
	size_t lines = 0;
	const char *q;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p != '(')
		return;
	p++;
	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		while (le > p && isspace((unsigned char)le[-1]))
			le--;
		if (subj->len)
			sb_addch(subj, ' ');
		sb_add(subj, p, (size_t)(le - p));
		if ((le > p && le[-1] == ')') || !nl || ++lines > 3)
			break;
		/* The next line continues the subject unless it ends it. */
		p = nl + 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		q = memchr(p, '\n', (size_t)(end - p));
		if (p >= end || *p == '\n' ||
		    hist_is_trailer_line(p, q ? (size_t)(q - p)
					      : (size_t)(end - p)))
			break;
	}
	/* Strip the closing ) and the quotes: ("x") and (x) both. */
	q = subj->len ? subj->buf + subj->len : NULL;
	if (q && q[-1] == ')')
		sb_setlen(subj, subj->len - 1);
	sb_rtrim(subj);
	if (subj->len && subj->buf[subj->len - 1] == '"')
		sb_setlen(subj, subj->len - 1);
	if (subj->len && subj->buf[0] == '"') {
		/* len bytes from buf + 1: the rest and its NUL. */
		memmove(subj->buf, subj->buf + 1, subj->len);
		subj->len--;
	}
}

/* `Fixes: 12ab34cd5678 subject` with no parentheses: the rest of the line. */
static void read_bare_subject(const char *p, const char *le, struct sb *subj)
{
	while (p < le && isspace((unsigned char)*p))
		p++;
	while (le > p && isspace((unsigned char)le[-1]))
		le--;
	if (p < le && *p == '"')
		p++;
	if (le > p && le[-1] == '"')
		le--;
	if (le > p)
		sb_add(subj, p, (size_t)(le - p));
}

void hist_parse_refs(const char *message, const char *subject,
		     struct hist_refs *out)
{
	size_t mlen = strnlen(message, HIST_MAX_MSG);
	const char *p = message, *end = message + mlen;
	struct sb subj = SB_INIT;

	sb_init(&subj, HIST_MAX_SUBJECT * 2);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;

		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (le - q > 6 && !strncasecmp(q, "Fixes:", 6)) {
			size_t n, raw;

			q += 6;
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (le - q > 7 && !strncasecmp(q, "commit ", 7))
				q += 7;
			raw = hex_run(q, le);
			n = raw >= 7 && raw <= 40 ? raw : 0;
			sb_reset(&subj);
			read_subject(q + raw, end, &subj);
			if (n && !subj.len)
				read_bare_subject(q + n, le, &subj);
			if (n || subj.len)
				add_ref(out, q, n, subj.buf, subj.len, false);
			else
				out->not_commit++;
		}
		p = nl ? nl + 1 : end;
	}
	/* Revert "subject" + "This reverts commit <id>." */
	if (subject && !strncmp(subject, "Revert \"", 8)) {
		const char *r = strstr(message, "This reverts commit ");
		const char *s = subject + 8;
		size_t slen = strlen(s), n = 0;

		if (slen && s[slen - 1] == '"')
			slen--;
		if (r && r < end) {
			r += strlen("This reverts commit ");
			n = hex_run(r, end);
			if (n < 7 || n > 40)
				n = 0;
		}
		if (n)
			add_ref(out, r, n, s, slen, true);
	}
	sb_release(&subj);
}

void hist_refs_release(struct hist_refs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].subject);
	free(r->v);
	memset(r, 0, sizeof(*r));
}
