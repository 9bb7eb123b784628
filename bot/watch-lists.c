// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-lists.c - which list a message is of, and so which list's
 * review may use it. A message is a list's when its To or Cc holds the
 * list's address, exactly, as GMime parses the addresses (what watch's
 * default query, to:ADDR or cc:ADDR, looks for; a display name that
 * spells an address is no address). Mail to an embargoed list never
 * leaves it: it serves another list only when it was sent to that list
 * too. Everything else serves a list only when the list says it shares
 * (list.NAME.prerequisites-from), or, in the list's own threads, when it
 * was sent to no watched list at all (a reply to quorum or to the
 * maintainers only, mail of a list quorum does not watch).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include <gmime/gmime.h>

#include "watch.h"

/* A header block longer than this is no mail a list would carry. */
#define HEADER_BLOCK_MAX ((size_t)256 << 10)
#define RECIPIENTS_MAX 1000 /* addresses read from To and Cc */

static void value_done(struct sb *cur, bool *in, char ***vals, size_t *n,
		       size_t *alloc)
{
	if (!*in)
		return;
	ALLOC_GROW(*vals, *n + 2, *alloc);
	(*vals)[(*n)++] = sb_detach(cur, NULL);
	(*vals)[*n] = NULL;
	*in = false;
}

int mail_header_values(const char *raw, size_t len, const char *name,
		       char ***vals)
{
	const char *p = raw, *end = raw + len;
	size_t nlen = strlen(name), n = 0, alloc = 0;
	struct sb cur = SB_INIT;
	bool in = false;

	*vals = NULL;
	/* An mbox From_ line (format-patch's) is no header. */
	if (len > 5 && !strncmp(p, "From ", 5)) {
		p = memchr(p, '\n', len);
		p = p ? p + 1 : end;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (size_t)((eol ? eol : end) - p), k;

		if (ll && p[ll - 1] == '\r')
			ll--;
		if (!ll)
			break; /* the blank line: the body follows */
		if ((size_t)(p - raw) > HEADER_BLOCK_MAX) {
			sb_release(&cur);
			argv_free(*vals);
			*vals = NULL;
			return -1;
		}
		if (*p == ' ' || *p == '\t') {
			/* A folded line continues the field above it. */
			if (in) {
				sb_addch(&cur, ' ');
				for (k = 0;
				     k < ll && (p[k] == ' ' || p[k] == '\t');
				     k++)
					;
				sb_add(&cur, p + k, ll - k);
			}
		} else {
			value_done(&cur, &in, vals, &n, &alloc);
			/* "To:", and the obsolete "To :" (RFC 5322 4.5.3). */
			for (k = nlen; k < ll && (p[k] == ' ' || p[k] == '\t');
			     k++)
				;
			if (ll > nlen && !strncasecmp(p, name, nlen) &&
			    k < ll && p[k] == ':') {
				in = true;
				sb_reset(&cur);
				sb_add(&cur, p + k + 1, ll - k - 1);
			}
		}
		p = eol ? eol + 1 : end;
	}
	value_done(&cur, &in, vals, &n, &alloc);
	sb_release(&cur);
	return (int)n;
}

/* Append the addresses of list (a group's members too), lowercased. */
static void add_addresses(InternetAddressList *list, char ***out, size_t *n,
			  size_t *alloc, int depth)
{
	int i, len = list ? internet_address_list_length(list) : 0;

	for (i = 0; i < len && *n < RECIPIENTS_MAX; i++) {
		InternetAddress *ia =
			internet_address_list_get_address(list, i);

		if (INTERNET_ADDRESS_IS_MAILBOX(ia)) {
			const char *a = internet_address_mailbox_get_addr(
				INTERNET_ADDRESS_MAILBOX(ia));
			char *c;

			if (!a || !*a)
				continue;
			ALLOC_GROW(*out, *n + 2, *alloc);
			(*out)[(*n)++] = c = xstrdup_or_null(a);
			(*out)[*n] = NULL;
			for (; *c; c++)
				*c = (char)tolower((unsigned char)*c);
		} else if (INTERNET_ADDRESS_IS_GROUP(ia) && !depth) {
			add_addresses(internet_address_group_get_members(
					      INTERNET_ADDRESS_GROUP(ia)),
				      out, n, alloc, depth + 1);
		}
	}
}

/*
 * The addresses of raw's To and Cc, lowercased, NULL-terminated in
 * *out (caller frees with argv_free()). 0, or -1 when the header block
 * cannot be read (too long).
 */
static int mail_recipients(const char *raw, size_t len, char ***out)
{
	static const char *const fields[] = {"To", "Cc"};
	size_t n = 0, alloc = 0, f, i;

	*out = NULL;
	for (f = 0; f < ARRAY_SIZE(fields); f++) {
		char **vals;

		if (mail_header_values(raw, len, fields[f], &vals) < 0) {
			argv_free(*out);
			*out = NULL;
			return -1;
		}
		for (i = 0; vals && vals[i]; i++) {
			InternetAddressList *l =
				internet_address_list_parse(NULL, vals[i]);

			add_addresses(l, out, &n, &alloc, 0);
			if (l)
				g_object_unref(l);
		}
		argv_free(vals);
	}
	return 0;
}

static bool holds(char *const *addrs, const char *address)
{
	size_t i;

	for (i = 0; address && addrs && addrs[i]; i++)
		if (!strcasecmp(addrs[i], address))
			return true;
	return false;
}

bool watch_mail_usable(const struct watch *w, const struct wlist *l,
		       const char *raw, size_t len, bool own_thread)
{
	char **to;
	bool ok = false;
	size_t i;

	if (mail_recipients(raw, len, &to) < 0)
		return false;
	if (holds(to, l->address)) {
		ok = true; /* the list's own mail */
		goto out;
	}
	for (i = 0; i < w->nlists; i++)
		if (w->lists[i].embargo && holds(to, w->lists[i].address))
			goto out; /* it never leaves the embargoed list */
	for (i = 0; l->share_addr && l->share_addr[i]; i++)
		if (holds(to, l->share_addr[i])) {
			ok = true;
			goto out;
		}
	if (!own_thread)
		goto out;
	/* In the list's thread: sent to no list quorum watches. */
	ok = true;
	for (i = 0; i < w->nlists; i++)
		if (holds(to, w->lists[i].address))
			ok = false;
out:
	argv_free(to);
	return ok;
}

bool watch_file_usable(void *arg, const char *path)
{
	const struct thread_ctx *t = arg;
	struct sb raw = SB_INIT;
	bool ok;

	ok = read_file_capped(path, WATCH_MAX_MESSAGE, &raw, NULL) == 0 &&
	     watch_mail_usable(t->w, t->l, raw.buf ? raw.buf : "", raw.len,
			       false);
	sb_release(&raw);
	return ok;
}
