// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-sender.c - who sent a #quorum command mail. The From header is
 * anyone's to write: it counts only as exactly one plain mailbox, and
 * with list.NAME.commands = dkim only when a DKIM signature of the From
 * address's domain (or a parent of it) verifies over the whole body and
 * the headers that decide what the command does (libopendkim; keys from
 * DNS, or from list.NAME.dkim-keys for tests and air-gapped hosts).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <dkim.h>
#include <gmime/gmime.h>

#include "watch.h"

#define DKIM_TIMEOUT 10 /* seconds for a key's DNS lookup */

/* A bare address: one @, no space, control or special, both parts. */
static bool addr_plain(const char *a)
{
	const unsigned char *p = (const unsigned char *)a;
	const char *at = strchr(a, '@');

	if (!at || at == a || !at[1] || strchr(at + 1, '@') ||
	    strlen(a) >= SENDER_ADDR_MAX)
		return false;
	for (; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || strchr("<>\"(),;:\\[]", *p))
			return false;
	return true;
}

/*
 * Is the display name before "<addr>" a name, nothing more: no angle
 * bracket, address, list or group syntax outside quotes?
 */
static bool name_plain(const char *s, size_t n)
{
	bool q = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (q && s[i] == '\\' && i + 1 < n) {
			i++;
			continue;
		}
		if (s[i] == '"')
			q = !q;
		else if (!q && strchr("<>@,;:", s[i]))
			return false;
	}
	return !q;
}

/*
 * The one mailbox of From value v, into who: v is "addr", "<addr>" or
 * "Name <addr>" with nothing after it (GMime alone takes "a@b@c" as a@b
 * and "Name <addr>;" as addr). false with who->why when it is not.
 */
static bool from_mailbox(const char *v, struct cmd_sender *who)
{
	InternetAddressList *l = internet_address_list_parse(NULL, v);
	InternetAddress *ia;
	const char *addr, *name, *e;
	size_t n, al;
	bool ok = false;

	if (!l || internet_address_list_length(l) != 1)
		goto out;
	ia = internet_address_list_get_address(l, 0);
	if (!INTERNET_ADDRESS_IS_MAILBOX(ia))
		goto out;
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia));
	if (!addr || !addr_plain(addr))
		goto out;
	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	al = strlen(addr);
	if (n == al && !strncasecmp(v, addr, al)) {
		ok = true;
	} else if (n >= al + 2 && v[n - 1] == '>' && v[n - al - 2] == '<' &&
		   !strncasecmp(v + n - al - 1, addr, al)) {
		e = v + n - al - 2;
		ok = name_plain(v, (size_t)(e - v));
	}
	if (!ok)
		goto out;
	snprintf(who->addr, sizeof(who->addr), "%s", addr);
	for (al = 0; who->addr[al]; al++)
		who->addr[al] = (char)tolower((unsigned char)who->addr[al]);
	name = internet_address_get_name(ia);
	snprintf(who->name, sizeof(who->name), "%s", name ? name : "");
out:
	if (l)
		g_object_unref(l);
	if (!ok)
		snprintf(who->why, sizeof(who->why),
			 "its From is not one plain address");
	return ok;
}

/* Is signing domain d the From domain f, or a parent of it? */
static bool domain_aligned(const char *d, const char *f)
{
	size_t dl = strlen(d), fl = strlen(f);

	/* Never a top-level domain: it would vouch for all below it. */
	if (!dl || !strchr(d, '.') || d[dl - 1] == '.')
		return false;
	if (!strcasecmp(d, f))
		return true;
	return fl > dl + 1 && f[fl - dl - 1] == '.' &&
	       !strcasecmp(f + fl - dl, d);
}

/* The library handle of l's verification, made once. NULL on failure. */
static DKIM_LIB *dkim_lib_of(struct wlist *l)
{
	DKIM_LIB *lib = l->dkim_lib;
	unsigned int flags = DKIM_LIBFLAGS_FIXCRLF, timeout = DKIM_TIMEOUT;

	if (lib)
		return lib;
	lib = dkim_init(NULL, NULL);
	if (!lib)
		return NULL;
	dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_FLAGS, &flags,
		     sizeof(flags));
	dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_TIMEOUT, &timeout,
		     sizeof(timeout));
	if (l->dkim_keys) {
		/* A file of "SELECTOR._domainkey.DOMAIN RECORD" lines. */
		dkim_query_t q = DKIM_QUERY_FILE;

		dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYMETHOD, &q,
			     sizeof(q));
		dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYINFO,
			     (void *)l->dkim_keys, strlen(l->dkim_keys) + 1);
	}
	l->dkim_lib = lib;
	return lib;
}

void watch_dkim_release(struct wlist *l)
{
	if (l->dkim_lib)
		dkim_close(l->dkim_lib);
	l->dkim_lib = NULL;
}

/* How many times header name appears in raw's header block (-1: bad). */
static int header_count(const char *raw, size_t len, const char *name)
{
	char **v;
	int n = mail_header_values(raw, len, name, &v);

	argv_free(v);
	return n;
}

/*
 * Does one of raw's signatures vouch for who->addr? Sets who->how to
 * SENDER_DKIM and who->domain, or says why not in who->why.
 */
static void dkim_check(struct wlist *l, const char *raw, size_t len,
		       struct cmd_sender *who)
{
	/* Headers that say which series a command is about, and which one. */
	static const char *const must[] = {"message-id", "in-reply-to",
					   "references"};
	const char *fdom = strchr(who->addr, '@') + 1, *p = raw;
	DKIM_LIB *lib = dkim_lib_of(l);
	DKIM_SIGINFO **sigs = NULL;
	DKIM *d;
	DKIM_STAT st;
	int nsigs = 0, i;
	size_t k;

	if (!lib) {
		snprintf(who->why, sizeof(who->why),
			 "the DKIM library cannot start");
		return;
	}
	/* An mbox From_ line is no part of the signed mail. */
	if (len > 5 && !strncmp(p, "From ", 5)) {
		const char *nl = memchr(p, '\n', len);

		p = nl ? nl + 1 : raw + len;
	}
	d = dkim_verify(lib, (const unsigned char *)"quorum", NULL, &st);
	if (!d) {
		snprintf(who->why, sizeof(who->why),
			 "the DKIM library cannot start");
		return;
	}
	/* Each signature's own result is read below, whatever these say. */
	dkim_chunk(d, (unsigned char *)p, len - (size_t)(p - raw));
	dkim_chunk(d, NULL, 0);
	dkim_eom(d, NULL);
	if (dkim_getsiglist(d, &sigs, &nsigs) != DKIM_STAT_OK)
		nsigs = 0;
	snprintf(who->why, sizeof(who->why), "its DKIM signature %s",
		 nsigs ? "does not verify" : "cannot be read");
	for (i = 0; i < nsigs; i++) {
		DKIM_SIGINFO *sig = sigs[i];
		const char *sd = (const char *)dkim_sig_getdomain(sig);
		ssize_t signlen = -1;
		bool ok = true;

		if (!(dkim_sig_getflags(sig) & DKIM_SIGFLAG_PASSED) ||
		    dkim_sig_getbh(sig) != DKIM_SIGBH_MATCH ||
		    dkim_sig_geterror(sig) != DKIM_SIGERROR_OK) {
			int e = dkim_sig_geterror(sig);

			snprintf(who->why, sizeof(who->why),
				 "its DKIM signature does not verify (%s)",
				 e != DKIM_SIGERROR_OK ? dkim_sig_geterrorstr(e)
				 : dkim_sig_getbh(sig) != DKIM_SIGBH_MATCH
					 ? "the body changed"
					 : "bad signature");
			continue;
		}
		if (!sd || !domain_aligned(sd, fdom)) {
			snprintf(who->why, sizeof(who->why),
				 "its DKIM signature is of %.80s, not of "
				 "%.80s",
				 sd ? sd : "no domain", fdom);
			continue;
		}
		/* l= signs a prefix: a command could follow it unsigned. */
		dkim_sig_getcanonlen(d, sig, NULL, NULL, &signlen);
		if (signlen != -1) {
			snprintf(who->why, sizeof(who->why),
				 "its DKIM signature covers only part of the "
				 "body (l=)");
			continue;
		}
		if (!dkim_sig_hdrsigned(sig, (u_char *)"from"))
			ok = false;
		for (k = 0; ok && k < ARRAY_SIZE(must); k++)
			if (header_count(raw, len, must[k]) > 0 &&
			    !dkim_sig_hdrsigned(sig, (u_char *)must[k]))
				ok = false;
		if (!ok) {
			snprintf(who->why, sizeof(who->why),
				 "its DKIM signature does not cover From, "
				 "Message-ID, In-Reply-To and References");
			continue;
		}
		who->how = SENDER_DKIM;
		snprintf(who->domain, sizeof(who->domain), "%s", sd);
		for (k = 0; who->domain[k]; k++)
			who->domain[k] =
				(char)tolower((unsigned char)who->domain[k]);
		who->why[0] = '\0';
		break;
	}
	dkim_free(d);
}

void watch_sender_check(struct wlist *l, const char *raw, size_t len,
			struct cmd_sender *who)
{
	static const char *const once[] = {"message-id", "in-reply-to",
					   "references"};
	char **from = NULL;
	size_t k;
	int n;

	memset(who, 0, sizeof(*who));
	who->how = SENDER_NONE;
	n = mail_header_values(raw, len, "From", &from);
	if (n != 1 || !from_mailbox(from[0], who)) {
		if (n != 1)
			snprintf(who->why, sizeof(who->why),
				 "it has %s From header",
				 n < 1 ? "no" : "more than one");
		argv_free(from);
		return;
	}
	argv_free(from);
	/* A second copy of one is how a signed mail is made to say more. */
	for (k = 0; k < ARRAY_SIZE(once); k++)
		if (header_count(raw, len, once[k]) > 1) {
			snprintf(who->why, sizeof(who->why),
				 "it has more than one %s header", once[k]);
			return;
		}
	who->how = SENDER_FROM;
	n = header_count(raw, len, "DKIM-Signature");
	if (n <= 0) {
		snprintf(who->why, sizeof(who->why), "it is not signed (DKIM)");
		return;
	}
	who->signed_mail = true;
	dkim_check(l, raw, len, who);
}

bool watch_mail_signed(const char *raw, size_t len)
{
	return header_count(raw, len, "DKIM-Signature") > 0;
}

enum commands_mode watch_commands_mode(const struct wlist *l)
{
	if (l->commands != COMMANDS_DEFAULT)
		return l->commands;
	return l->signed_mail ? COMMANDS_DKIM : COMMANDS_FROM;
}

void watch_sender_said(const struct wlist *l, const struct cmd_sender *who,
		       struct sb *out)
{
	if (who->how == SENDER_DKIM)
		sb_addf(out, "Sender %s, verified by the DKIM signature of %s.",
			who->addr, who->domain);
	else
		sb_addf(out,
			"Sender %s, checked by the From header only, as list "
			"%s takes commands (commands = from): %s.",
			who->addr, l->name, who->why);
}
