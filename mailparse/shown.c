// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shown.c - text from mail, diffs, model answers and config as it may be
 * shown to a person: in a terminal, in a mail, in a JSON document someone
 * will cat. One sanitiser for all of them, with a visible escape, so what
 * a hostile byte does is seen, never done (see sb.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mailparse.h"

/*
 * The code point at s (at most left bytes) and its length in *n, or -1
 * (and *n = 1) when s does not start a valid, shortest-form UTF-8
 * sequence of a scalar value.
 */
static long utf8_decode(const unsigned char *s, size_t left, size_t *n)
{
	unsigned c = s[0];
	size_t len, i;
	long cp;

	*n = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return -1;
	}
	if (left < len)
		return -1;
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

bool mp_codepoint_hidden(long cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||	 /* C1: 0x9b is CSI */
	       cp == 0x061c ||			 /* Arabic letter mark */
	       cp == 0x180e ||			 /* Mongolian vowel sep. */
	       (cp >= 0x200b && cp <= 0x200f) || /* zero widths, LRM, RLM */
	       (cp >= 0x2028 && cp <= 0x202e) || /* line/para sep., bidi */
	       (cp >= 0x2060 && cp <= 0x206f) || /* joiners, isolates */
	       cp == 0xfeff ||			 /* zero-width no-break */
	       (cp >= 0xfff9 && cp <= 0xfffb) || /* annotations */
	       (cp >= 0xe0000 && cp <= 0xe007f); /* tags: hidden ASCII */
}

/* The escape of C0 control c: "\n", "\e", ... or "\xNN". */
static int add_c0(struct sb *sb, unsigned c)
{
	static const char names[] = "\aa\bb\tt\nn\vv\ff\rr\033e";
	const char *p = c ? memchr(names, (int)c, sizeof(names) - 1) : NULL;

	if (p && (p - names) % 2 == 0)
		return sb_addf(sb, "\\%c", p[1]);
	return sb_addf(sb, "\\x%02x", c);
}

/* Does s[0..len) need anything escaped under flags? */
static bool needs_escape(const unsigned char *s, size_t len, unsigned flags)
{
	size_t i = 0, n;
	long cp;

	while (i < len) {
		if (s[i] >= 0x20 && s[i] < 0x7f) {
			if ((flags & SB_VIS_QUOTE) &&
			    (s[i] == '"' || s[i] == '\\'))
				return true;
			i++;
			continue;
		}
		if ((s[i] == '\n' && (flags & SB_VIS_NEWLINE)) ||
		    (s[i] == '\t' && (flags & SB_VIS_TAB))) {
			i++;
			continue;
		}
		cp = utf8_decode(s + i, len - i, &n);
		if (cp < 0x80 || mp_codepoint_hidden(cp))
			return true;
		i += n;
	}
	return false;
}

int sb_add_visible_mem(struct sb *sb, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t i = 0, n, mark = sb->len;
	bool quote = (flags & SB_VIS_QUOTE) && needs_escape(p, len, flags);
	int ret = 0;
	long cp;

	if (!s)
		len = 0;
	if (quote)
		ret = sb_addch(sb, '"');
	while (i < len && !ret) {
		unsigned c = p[i];

		if (c >= 0x20 && c < 0x7f) {
			if (quote && (c == '"' || c == '\\'))
				ret = sb_addch(sb, '\\');
			if (!ret)
				ret = sb_addch(sb, (int)c);
			i++;
			continue;
		}
		if (c == '\n' && (flags & SB_VIS_NEWLINE)) {
			ret = sb_addch(sb, '\n');
			i++;
			continue;
		}
		/* A CRLF line end is a line end, not a carriage return. */
		if (c == '\r' && (flags & SB_VIS_NEWLINE) && i + 1 < len &&
		    p[i + 1] == '\n') {
			i++;
			continue;
		}
		if (c == '\t' && (flags & SB_VIS_TAB)) {
			ret = sb_addch(sb, '\t');
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			ret = add_c0(sb, c);
			i++;
			continue;
		}
		cp = utf8_decode(p + i, len - i, &n);
		if (cp < 0)
			ret = sb_addf(sb, "\\x%02x", c); /* 0x9b: 8-bit CSI */
		else if (mp_codepoint_hidden(cp))
			ret = sb_addf(sb, "<U+%04lX>", cp);
		else
			ret = sb_add(sb, p + i, n);
		i += n;
	}
	if (quote && !ret)
		ret = sb_addch(sb, '"');
	if (ret)
		sb_setlen(sb, mark);
	return ret;
}

int sb_add_visible(struct sb *sb, const char *s, unsigned flags)
{
	return sb_add_visible_mem(sb, s, s ? strlen(s) : 0, flags);
}

size_t mp_utf8_cut(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n < max || !s[n])
		return n;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* \uXXXX of a code point, as a surrogate pair past the BMP. */
static int add_json_u(struct sb *sb, long cp)
{
	if (cp < 0x10000)
		return sb_addf(sb, "\\u%04lx", cp);
	cp -= 0x10000;
	return sb_addf(sb, "\\u%04lx\\u%04lx", 0xd800 + (cp >> 10),
		       0xdc00 + (cp & 0x3ff));
}

int sb_add_json_visible(struct sb *sb, const char *json)
{
	const unsigned char *p = (const unsigned char *)(json ? json : "");
	size_t len = strlen((const char *)p), i = 0, n, mark = sb->len;
	int ret = 0;
	long cp;

	while (i < len && !ret) {
		if (p[i] < 0x7f) {
			ret = sb_addch(sb, p[i++]);
			continue;
		}
		if (p[i] == 0x7f) {
			ret = sb_adds(sb, "\\u007f");
			i++;
			continue;
		}
		cp = utf8_decode(p + i, len - i, &n);
		if (cp < 0) /* a byte no JSON string can hold */
			ret = sb_adds(sb, "\\ufffd");
		else if (mp_codepoint_hidden(cp))
			ret = add_json_u(sb, cp);
		else
			ret = sb_add(sb, p + i, n);
		i += n;
	}
	if (ret)
		sb_setlen(sb, mark);
	return ret;
}

/* ---- secrets ---------------------------------------------------------- */

/* Prefixes of the API keys and tokens people paste by mistake. */
static const char *const key_prefixes[] = {
	"sk-",	  "sk_",    "rk_",  "pk_",   "xai-",  "gsk_",
	"ghp_",	  "gho_",   "ghu_", "ghs_",  "ghr_",  "github_pat_",
	"glpat-", "hf_",    "AIza", "xoxb-", "xoxp-", "pplx-",
	"r8_",	  "nvapi-", "csk-", "AKIA",  "ASIA",  "Bearer ",
};

bool mp_env_name_ok(const char *v)
{
	const char *p = v;

	if (!v || !*v || (*v >= '0' && *v <= '9') || strlen(v) > 128)
		return false;
	for (; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

bool mp_looks_like_key(const char *v)
{
	bool lower = false, upper = false, digit = false, other = false;
	size_t i, len;
	const char *p;

	if (!v)
		return false;
	len = strlen(v);
	for (i = 0; i < ARRAY_SIZE(key_prefixes); i++) {
		size_t n = strlen(key_prefixes[i]);

		if (len >= n + 8 && !strncmp(v, key_prefixes[i], n))
			return true;
	}
	for (p = v; *p; p++) {
		if (*p == ' ' || *p == '\t')
			return false; /* a sentence, not a token */
		lower |= *p >= 'a' && *p <= 'z';
		upper |= *p >= 'A' && *p <= 'Z';
		digit |= *p >= '0' && *p <= '9';
		other |= !((*p >= 'A' && *p <= 'Z') ||
			   (*p >= 'a' && *p <= 'z') ||
			   (*p >= '0' && *p <= '9') || *p == '_');
	}
	/*
	 * A long token of letters and digits mixed: variable names are
	 * words (QUORUM_KEY_A), keys are random.
	 */
	if (len >= 24 && digit && (lower || other) && (upper || other))
		return true;
	return len >= 32 && digit && lower && !strchr(v, '/');
}

/* Is the query value q[0..n) one to hide: a key or a token? */
static bool query_value_secret(const char *name, size_t nlen, const char *q,
			       size_t n)
{
	static const char *const names[] = {
		"key",	    "api_key", "apikey", "token",     "access_token",
		"password", "secret",  "sig",	 "signature", "auth"};
	char *v;
	size_t i;
	bool hide = false;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == nlen && !strncmp(name, names[i], nlen))
			return true;
	v = xstrndup(q, n);
	hide = mp_looks_like_key(v);
	free(v);
	return hide;
}

int sb_add_url_shown(struct sb *sb, const char *url)
{
	struct sb u = SB_INIT;
	const char *p = url ? url : "", *scheme, *auth, *at, *end, *q;
	int ret;

	scheme = strstr(p, "://");
	auth = scheme ? scheme + 3 : p;
	end = auth + strcspn(auth, "/?#");
	at = memchr(auth, '@', (size_t)(end - auth));
	if (at) {
		/* user:password@host: the user helps, the password never. */
		const char *colon = memchr(auth, ':', (size_t)(at - auth));

		sb_add(&u, p, (size_t)((colon ? colon : at) - p));
		sb_adds(&u, colon ? ":***" : "");
		p = at;
	}
	q = strchr(p, '?');
	if (!q) {
		sb_adds(&u, p);
	} else {
		sb_add(&u, p, (size_t)(q + 1 - p));
		for (q++; *q && *q != '#';) {
			size_t plen = strcspn(q, "&#");
			const char *eq = memchr(q, '=', plen);

			if (eq &&
			    query_value_secret(q, (size_t)(eq - q), eq + 1,
					       plen - (size_t)(eq + 1 - q))) {
				sb_add(&u, q, (size_t)(eq + 1 - q));
				sb_adds(&u, "***");
			} else {
				sb_add(&u, q, plen);
			}
			q += plen;
			if (*q == '&')
				sb_addch(&u, *q++);
		}
		sb_adds(&u, q);
	}
	ret = sb_add_visible(sb, sb_str(&u), 0);
	sb_release(&u);
	return ret;
}
