// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * msgid.c - what a user means by a message on the command line: <ID>,
 * ID@HOST, or a public-inbox URL (lore.kernel.org/LIST/ID/...,
 * patch.msgid.link/ID), as a bare message-id, with hostile input (control
 * characters, huge arguments, malformed %-escapes) refused in one line.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mailparse.h"

const char *mp_shown(const char *s, char *buf, size_t size)
{
	struct sb t = SB_INIT;
	size_t max = size - 4;

	sb_add_visible(&t, s, SB_VIS_TAB);
	if (t.len > max) {
		max = mp_utf8_cut(t.buf, max);
		memcpy(buf, t.buf, max);
		memcpy(buf + max, "...", 4);
	} else {
		memcpy(buf, sb_str(&t), t.len + 1);
	}
	sb_release(&t);
	return buf;
}

static bool has_prefix_ci(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

static bool has_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return true;
	return false;
}

bool mp_msgid_is_spec(const char *arg)
{
	return arg[0] == '<' || has_prefix_ci(arg, "http://") ||
	       has_prefix_ci(arg, "https://") || strchr(arg, '@') ||
	       strlen(arg) > MP_MSGID_MAX || has_control(arg);
}

bool mp_msgid_valid(const char *id)
{
	const unsigned char *p = (const unsigned char *)id;

	if (!p || !*p || strlen(id) > MP_MSGID_ID_MAX)
		return false;
	for (; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '<' || *p == '>' ||
		    *p == '"' || *p == '\\')
			return false;
	return true;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode s[0..len) into out. -1 on a malformed %XX or a NUL. */
static int percent_decode(struct sb *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -1;
			c = hi << 4 | lo;
			i += 2;
		}
		if (sb_addch(out, c) < 0)
			return -1;
	}
	return 0;
}

/*
 * The message-id in a public-inbox style URL: the first path segment
 * that holds an '@' once percent-decoded (lore.kernel.org/LIST/ID/...,
 * lore.kernel.org/r/ID, patch.msgid.link/ID, lkml.kernel.org/r/ID).
 */
static int url_msgid(const char *url, struct sb *id, struct errmsg *err)
{
	const char *p = strstr(url, "://") + 3, *end;
	char b[64];

	p = strchr(p, '/');
	end = p ? p + strcspn(p, "?#") : NULL;
	while (p && p < end) {
		const char *seg = p + 1;
		size_t len = (size_t)(end - seg), slash;

		slash = strcspn(seg, "/");
		if (slash < len)
			len = slash;
		sb_reset(id);
		if (percent_decode(id, seg, len) < 0)
			return errmsg_set(
				err, -1, "%s: a malformed %%-escape in the URL",
				mp_shown(url, b, sizeof(b)));
		if (strchr(sb_str(id), '@'))
			return 0;
		p = seg + len < end ? seg + len : NULL;
	}
	return errmsg_set(err, -1,
			  "%s: no message-id in the URL (expected one like "
			  "https://lore.kernel.org/LIST/MESSAGE-ID/)",
			  mp_shown(url, b, sizeof(b)));
}

int mp_msgid_from_spec(const char *spec, char **out, struct errmsg *err)
{
	size_t len = strlen(spec);
	struct sb id = SB_INIT;
	char b[64];
	int ret = -1;

	*out = NULL;
	if (len > MP_MSGID_MAX)
		return errmsg_set(err, -1,
				  "%s is not a file, and at %zu bytes it is no "
				  "message-id or URL either (at most %d)",
				  mp_shown(spec, b, sizeof(b)), len,
				  MP_MSGID_MAX);
	if (has_control(spec))
		return errmsg_set(err, -1,
				  "'%s' is not a file, and a message-id or URL "
				  "holds no whitespace or control characters",
				  mp_shown(spec, b, sizeof(b)));
	sb_init(&id, MP_MSGID_MAX + 1);
	if (has_prefix_ci(spec, "http://") || has_prefix_ci(spec, "https://")) {
		if (url_msgid(spec, &id, err) < 0)
			goto out;
	} else if (spec[0] == '<') {
		sb_adds(&id, spec);
	} else if (strchr(spec, '/')) {
		errmsg_set(
			err, -1,
			"%s is not a file, nor a message-id (no '/' in a bare "
			"one: write <ID> or the lore URL)",
			mp_shown(spec, b, sizeof(b)));
		goto out;
	} else {
		sb_adds(&id, spec);
	}
	/* <id> once, as written or percent-encoded in a URL (%3C...%3E). */
	if (id.len >= 2 && id.buf[0] == '<' && id.buf[id.len - 1] == '>') {
		memmove(id.buf, id.buf + 1, id.len - 2);
		sb_setlen(&id, id.len - 2);
	}
	if (!mp_msgid_valid(sb_str(&id))) {
		char b2[64];

		errmsg_set(err, -1,
			   "%s is not a file, and '%s' is not a message-id "
			   "(at most %d bytes of printable ASCII, no spaces, "
			   "<>, quotes or backslashes)",
			   mp_shown(spec, b, sizeof(b)),
			   mp_shown(sb_str(&id), b2, sizeof(b2)),
			   MP_MSGID_ID_MAX);
		goto out;
	}
	*out = sb_detach(&id, NULL);
	ret = 0;
out:
	sb_release(&id);
	return ret;
}
