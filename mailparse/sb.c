// SPDX-License-Identifier: GPL-2.0-or-later
#include "sb.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static size_t sb_cap(const struct sb *sb)
{
	return sb->cap ? sb->cap : SB_DEFAULT_CAP;
}

void sb_init(struct sb *sb, size_t cap)
{
	sb->buf = NULL;
	sb->len = 0;
	sb->alloc = 0;
	sb->cap = cap;
}

void sb_release(struct sb *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = 0;
	sb->alloc = 0;
}

void sb_reset(struct sb *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

int sb_grow(struct sb *sb, size_t extra)
{
	size_t want, n;
	char *p;

	if (extra > sb_cap(sb) || sb->len > sb_cap(sb) - extra)
		return -1;
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return 0;
	n = sb->alloc ? sb->alloc : 64;
	while (n < want)
		n = n > ((size_t)-1) / 2 ? want : n * 2;
	if (n > sb_cap(sb) + 1)
		n = sb_cap(sb) + 1;
	p = realloc(sb->buf, n);
	if (!p)
		return -1;
	if (!sb->buf)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return 0;
}

int sb_add(struct sb *sb, const void *data, size_t len)
{
	if (sb_grow(sb, len) < 0)
		return -1;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int sb_adds(struct sb *sb, const char *s)
{
	return sb_add(sb, s, strlen(s));
}

int sb_addch(struct sb *sb, int c)
{
	char ch = (char)c;

	return sb_add(sb, &ch, 1);
}

int sb_vaddf(struct sb *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || sb_grow(sb, (size_t)n) < 0)
		return -1;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int sb_addf(struct sb *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sb_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

void sb_setlen(struct sb *sb, size_t len)
{
	if (len > sb->len)
		return;
	sb->len = len;
	if (sb->buf)
		sb->buf[len] = '\0';
}

const char *sb_str(const struct sb *sb)
{
	return sb->buf ? sb->buf : "";
}

char *sb_detach(struct sb *sb, size_t *len)
{
	char *p;

	if (!sb->buf && sb_grow(sb, 0) < 0)
		return NULL;
	p = sb->buf;
	if (len)
		*len = sb->len;
	sb->buf = NULL;
	sb->len = 0;
	sb->alloc = 0;
	return p;
}

void sb_rtrim(struct sb *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->buf)
		sb->buf[sb->len] = '\0';
}

int errmsg_set(struct errmsg *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

static void oom(size_t n)
{
	fprintf(stderr, "quorum: out of memory (%zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *p;

	n = strnlen(s, n);
	p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xstrdup_or_null(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

int mkdir_parents(const char *path, bool self)
{
	char *dup = xstrdup_or_null(path), *p;
	int ret = 0;

	for (p = dup + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		if (c || self) {
			*p = '\0';
			if (mkdir(dup, 0700) < 0 && errno != EEXIST)
				ret = -1;
			*p = c;
		}
		if (!c)
			break;
	}
	free(dup);
	return ret;
}
