// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * message.c - one raw message (or `git show` output) -> struct mp_patch.
 *
 * GMime reads the headers and the MIME structure; everything after that
 * (finding the commit message, notes, diff and trailers in the text) is a
 * pointer walk over the decoded text, linear in its size, so that parsing
 * keeps up with GMime itself.
 */
#include <gmime/gmime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mailparse.h"
#include "mp-internal.h"

/* Caps no mail comes near; they keep hostile input from growing lists. */
#define MAX_REFERENCES 128
#define MAX_PREREQS 256

static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;
static GMimeParserOptions *parser_opts;

static void gmime_init_once(void)
{
	static const char *fallback[] = {"UTF-8", "windows-1252", "iso-8859-1",
					 NULL};

	g_mime_init();
	parser_opts = g_mime_parser_options_new();
	g_mime_parser_options_set_fallback_charsets(parser_opts, fallback);
}

void mp_gmime_init(void)
{
	pthread_once(&gmime_once, gmime_init_once);
}

struct ctx {
	struct mp_patch *p;
	const struct mp_limits *lim;
	struct errmsg *err;
	size_t nparts;
	size_t nheaders;
	GMimeObject *body_part;
	GMimeObject *html_part; /* read only when there is no text/plain */
	GMimeObject **atts;	/* parts that may hold the diff */
	size_t natts;
	bool guessed;
	bool is_pull;
	bool in_body_date;
	bool inbody_unreplied; /* an in-body Subject: made a Re: a patch */
	GMimeStream *stream;   /* the parser's stream over raw */
	const char *raw;
	size_t rawlen;
	GMimeObject *forwarded; /* the first message/rfc822 part */
	int nest;		/* 1 while reading a forwarded message */
};

static int parse_raw(struct mp_patch **out, const char *raw, size_t len,
		     const struct mp_limits *lim, struct errmsg *err, int nest);

/* ---- small string helpers ---- */

static bool starts_icase(const char *p, const char *e, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(e - p) >= n && !strncasecmp(p, s, n);
}

static bool is_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isxdigit(p[i]))
			return false;
	return true;
}

/* Length of the run of hex digits at p (up to e). */
static size_t hex_run(const char *p, const char *e)
{
	const char *q = p;

	while (q < e && g_ascii_isxdigit(*q))
		q++;
	return (size_t)(q - p);
}

static char *dup_trim(const char *p, const char *e)
{
	while (p < e && g_ascii_isspace(*p))
		p++;
	while (e > p && g_ascii_isspace(e[-1]))
		e--;
	return mp_strdup_utf8(p, (size_t)(e - p));
}

/* A header value made one valid UTF-8 line (unfolded, trimmed). */
static char *dup_header(const char *v)
{
	char *r, *w;
	bool space = false;

	if (!v)
		return NULL;
	r = w = xmalloc(strlen(v) + 1);
	for (; *v; v++) {
		if (*v == '\r' || *v == '\n' || *v == '\t' || *v == ' ') {
			space = w > r;
			continue;
		}
		if (space)
			*w++ = ' ';
		space = false;
		*w++ = *v;
	}
	*w = '\0';
	if (!mp_utf8_ok(r, (size_t)(w - r))) {
		char *u = mp_strdup_utf8(r, (size_t)(w - r));

		free(r);
		r = u;
	}
	return r;
}

/*
 * Decode the encoded-words of an unstructured header value (g_free()).
 * Runs of adjacent words are joined first: GMime cuts some of them.
 */
static char *decode_text(const char *v)
{
	char *joined = mp_header_join_words(v);
	char *dec = g_mime_utils_header_decode_text(parser_opts,
						    joined ? joined : v);

	free(joined);
	return dec;
}

/* The raw (undecoded) value of the first header named name, or NULL. */
static const char *raw_header(GMimeHeaderList *hl, const char *name)
{
	GMimeHeader *h = hl ? g_mime_header_list_get_header(hl, name) : NULL;

	return h ? g_mime_header_get_raw_value(h) : NULL;
}

/* The first <id> in v, or the first word with an '@', without <>. */
static char *first_msgid(const char *v, const char **after)
{
	const char *p = v, *q;

	while (*p) {
		if (*p == '<') {
			q = strchr(p + 1, '>');
			if (!q)
				break;
			*after = q + 1;
			if (q > p + 1)
				return dup_trim(p + 1, q);
			p = q + 1;
			continue;
		}
		if (!g_ascii_isspace(*p) && *p != ',') {
			q = p;
			while (*q && !g_ascii_isspace(*q) && *q != ',' &&
			       *q != '<')
				q++;
			if (memchr(p, '@', (size_t)(q - p))) {
				*after = q;
				return mp_strdup_utf8(p, (size_t)(q - p));
			}
			p = q;
			continue;
		}
		p++;
	}
	*after = v + strlen(v);
	return NULL;
}

static void add_string(char ***arr, size_t *n, char *s)
{
	*arr = xrealloc(*arr, (*n + 1) * sizeof(char *));
	(*arr)[(*n)++] = s;
}

static bool has_string(char **arr, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(arr[i], s))
			return true;
	return false;
}

/*
 * References: oldest first, unique; beyond the cap keep the root and the
 * newest. Real headers are a few KB: only the root and the last REF_TAIL
 * bytes are read, which bounds the ids (and the dedup work) of a hostile
 * header.
 */
#define REF_TAIL 16384

static void parse_references(struct mp_patch *p, const char *v)
{
	char **all = NULL;
	size_t n = 0;
	const char *after;
	char *id;

	if (!v || !(id = first_msgid(v, &after)))
		return;
	add_string(&all, &n, id); /* the root */
	v = after;
	if (strlen(v) > REF_TAIL) {
		const char *tail = v + strlen(v) - REF_TAIL;

		v = strchr(tail, '<') ? strchr(tail, '<') : tail;
	}
	while (*v && (id = first_msgid(v, &after))) {
		v = after;
		if (has_string(all, n, id))
			free(id);
		else
			add_string(&all, &n, id);
	}
	if (n > MAX_REFERENCES) {
		size_t drop = n - MAX_REFERENCES;

		for (size_t i = 1; i <= drop; i++)
			free(all[i]);
		memmove(all + 1, all + 1 + drop,
			(n - 1 - drop) * sizeof(char *));
		n = MAX_REFERENCES;
	}
	p->references = all;
	p->nreferences = n;
}

/* ---- dates ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* ISO 8601-ish dates: "2025-03-23", "2025-03-23 09:28:00 -0400", "...T..Z". */
static bool parse_iso_date(const char *s, int64_t *ts, int *tz)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0, off = 0;
	const char *p;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31)
		return false;
	p = s + n;
	if (*p == 'T' || *p == ' ') {
		int k = 0;

		if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) == 2) {
			p += 1 + k;
			if (*p == ':' && sscanf(p + 1, "%2d%n", &sec, &k) == 1)
				p += 1 + k;
		}
	}
	while (*p == ' ')
		p++;
	if ((*p == '+' || *p == '-') && g_ascii_isdigit(p[1]) &&
	    g_ascii_isdigit(p[2])) {
		int hh = (p[1] - '0') * 10 + (p[2] - '0'), mm = 0;
		const char *q = p + 3;

		if (*q == ':')
			q++;
		if (g_ascii_isdigit(q[0]) && g_ascii_isdigit(q[1]))
			mm = (q[0] - '0') * 10 + (q[1] - '0');
		off = (hh * 60 + mm) * (*p == '-' ? -1 : 1);
	}
	*ts = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
	      mi * 60 + sec - off * 60;
	*tz = off;
	return true;
}

static bool parse_date(const char *s, int64_t *ts, int *tz)
{
	GDateTime *dt;

	if (!s || !*s)
		return false;
	if (g_ascii_isdigit(s[0]) && parse_iso_date(s, ts, tz))
		return true;
	dt = g_mime_utils_header_decode_date(s);
	if (!dt)
		return false;
	*ts = g_date_time_to_unix(dt);
	*tz = (int)(g_date_time_get_utc_offset(dt) / G_TIME_SPAN_MINUTE);
	g_date_time_unref(dt);
	return true;
}

/* ---- authors ---- */

/* "Name <addr>", "addr", "Name" (git show without an address). */
static void set_author(struct mp_patch *p, const char *v, bool gmime)
{
	InternetAddressList *list = NULL;
	const char *lt, *gt;

	free(p->author_name);
	free(p->author_email);
	p->author_name = p->author_email = NULL;
	if (gmime) {
		char *joined = mp_header_join_words(v);

		list = internet_address_list_parse(parser_opts,
						   joined ? joined : v);
		free(joined);
	}
	if (list && internet_address_list_length(list) > 0) {
		InternetAddress *ia =
			internet_address_list_get_address(list, 0);

		if (INTERNET_ADDRESS_IS_MAILBOX(ia)) {
			const char *name = internet_address_get_name(ia);
			const char *addr = internet_address_mailbox_get_addr(
				INTERNET_ADDRESS_MAILBOX(ia));

			if (addr && *addr && strchr(addr, '@'))
				p->author_email = dup_header(addr);
			if (name && *name)
				p->author_name = dup_header(name);
		}
	}
	if (list)
		g_object_unref(list);
	if (p->author_email || p->author_name)
		goto out;
	/* by hand: git show's "Author: Sasha Levin" has no address */
	lt = strchr(v, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	if (lt && gt) {
		p->author_name = dup_trim(v, lt);
		p->author_email = dup_trim(lt + 1, gt);
	} else if (strchr(v, '@') && !strchr(v, ' ')) {
		p->author_email = dup_trim(v, v + strlen(v));
	} else {
		p->author_name = dup_trim(v, v + strlen(v));
	}
out:
	if (p->author_name && !*p->author_name) {
		free(p->author_name);
		p->author_name = NULL;
	}
	if (!p->author_name && p->author_email)
		p->author_name = xstrdup_or_null(p->author_email);
}

/* Does v name a mailbox with an address ("Name <a@b>", "a@b")? */
static bool is_address(const char *v)
{
	InternetAddressList *list;
	bool ok = false;

	if (!v || !strchr(v, '@'))
		return false;
	list = internet_address_list_parse(parser_opts, v);
	if (list && internet_address_list_length(list) > 0) {
		InternetAddress *ia =
			internet_address_list_get_address(list, 0);
		const char *addr =
			INTERNET_ADDRESS_IS_MAILBOX(ia)
				? internet_address_mailbox_get_addr(
					  INTERNET_ADDRESS_MAILBOX(ia))
				: NULL;

		ok = addr && strchr(addr, '@') && addr[0] != '@';
	}
	if (list)
		g_object_unref(list);
	return ok;
}

/* ---- text repairs ---- */

/* Does a `diff --git` or `+++ ` line of [p, end) end in CRLF? */
static bool diff_header_crlf(const char *p, const char *end)
{
	for (; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end);

		if ((mp_line_starts(p, e, "diff --git ") ||
		     mp_line_starts(p, e, "+++ ")) &&
		    e < end)
			return e > p && e[-1] == '\r';
	}
	return false;
}

/*
 * Strip one CR before every LF when every line ends in CRLF. A part that
 * was transfer-decoded (base64, quoted-printable) is repaired when its
 * first line ends in CRLF: the mailer converted the whole text before
 * encoding it, and a line or two it left alone (a signature, the last
 * line) must not keep the diff's own `+++ b/configure\r` (git am
 * --quoted-cr=strip); so is one whose diff header lines end in CRLF, as
 * git never writes them so. CRLF file content in a LF diff stays.
 */
static bool crlf_repair_as(struct sb *t, bool decoded)
{
	size_t lines = 0, crlf = 0, w = 0;
	const char *p, *end, *nl;

	if (!t->len)
		return false;
	p = t->buf;
	end = t->buf + t->len;
	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		bool cr = nl > t->buf && nl[-1] == '\r';

		if (decoded && !lines && nl - p <= cr) {
			p = nl + 1; /* blank lines before the first line */
			continue;
		}
		if (!cr && !decoded)
			return false;
		if (!cr && !lines && !diff_header_crlf(p, end))
			return false;
		crlf += cr;
		lines++;
		p = nl + 1;
	}
	if (!lines || !crlf)
		return false;
	for (size_t r = 0; r < t->len; r++) {
		if (t->buf[r] == '\r' && r + 1 < t->len &&
		    t->buf[r + 1] == '\n')
			continue;
		t->buf[w++] = t->buf[r];
	}
	sb_setlen(t, w);
	return true;
}

/* Was the part base64 or quoted-printable (or uuencoded) on the wire? */
static bool transfer_encoded(GMimeObject *part)
{
	GMimeContentEncoding enc;

	if (!part || !GMIME_IS_PART(part))
		return false;
	enc = g_mime_part_get_content_encoding(GMIME_PART(part));
	return enc == GMIME_CONTENT_ENCODING_BASE64 ||
	       enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE ||
	       enc == GMIME_CONTENT_ENCODING_UUENCODE;
}

/* RFC 3676: unstuff, join soft line breaks (lines ending in a space). */
static void flowed_decode(const char *s, size_t len, bool delsp, struct sb *out)
{
	const char *p = s, *end = s + len;

	while (p < end) {
		const char *e = mp_eol(p, end), *next = mp_next_line(p, end);

		if (e - p == 3 && !memcmp(p, "-- ", 3)) {
			sb_add(out, p, 3);
			sb_addch(out, '\n');
			p = next;
			continue;
		}
		if (p < e && *p == ' ')
			p++;
		if (e > p && e[-1] == ' ' && e < end) {
			sb_add(out, p, (size_t)(e - p) - (delsp ? 1 : 0));
		} else {
			sb_add(out, p, (size_t)(e - p));
			if (e < end)
				sb_addch(out, '\n');
		}
		p = next;
	}
}

/* ---- the text of a message ---- */

static bool is_separator(const char *p, const char *e)
{
	if (!mp_line_starts(p, e, "---"))
		return false;
	return mp_line_blank(p + 3, e);
}

/* base-commit:, change-id:, prerequisite-*: lines in [p, end). */
static void scan_meta(struct mp_patch *pt, const char *p, const char *end)
{
	for (; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end), *v;
		const char *after;
		char *id;

		if (*p != 'b' && *p != 'c' && *p != 'p')
			continue;
		if (mp_line_starts(p, e, "base-commit:")) {
			v = p + strlen("base-commit:");
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			if (!pt->base_commit && hex_run(v, e) >= 7 &&
			    hex_run(v, e) <= 64)
				pt->base_commit =
					mp_strdup_utf8(v, hex_run(v, e));
		} else if (mp_line_starts(p, e, "change-id:")) {
			if (!pt->change_id && e - p < 256)
				pt->change_id =
					dup_trim(p + strlen("change-id:"), e);
		} else if (mp_line_starts(p, e, "prerequisite-patch-id:")) {
			v = p + strlen("prerequisite-patch-id:");
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			if (hex_run(v, e) >= 7 && hex_run(v, e) <= 64 &&
			    pt->nprereq_patch_ids < MAX_PREREQS)
				add_string(&pt->prereq_patch_ids,
					   &pt->nprereq_patch_ids,
					   mp_strdup_utf8(v, hex_run(v, e)));
		} else if (mp_line_starts(p, e, "prerequisite-change-id:")) {
			id = dup_trim(p + strlen("prerequisite-change-id:"), e);
			/* b4's ids: dates, words, hex, '-', ':v2'; no more. */
			if (id && *id && strlen(id) < 256 &&
			    strspn(id, "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789-_.:") == strlen(id) &&
			    pt->nprereq_change_ids < MAX_PREREQS)
				add_string(&pt->prereq_change_ids,
					   &pt->nprereq_change_ids, id);
			else
				free(id);
		} else if (mp_line_starts(p, e, "prerequisite-message-id:") &&
			   e - p < 1024 &&
			   pt->nprereq_message_ids < MAX_PREREQS) {
			char *line = mp_strdup_utf8(p, (size_t)(e - p));

			id = first_msgid(
				line + strlen("prerequisite-message-id:"),
				&after);
			if (id)
				add_string(&pt->prereq_message_ids,
					   &pt->nprereq_message_ids, id);
			free(line);
		}
	}
}

/* Lines of [p, end) with trailing whitespace cut and blank runs merged. */
static void add_clean_lines(struct sb *out, const char *p, const char *end)
{
	bool blank = false;

	while (p < end && mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	for (; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end);

		while (e > p && g_ascii_isspace(e[-1]))
			e--;
		if (e == p) {
			blank = true;
			continue;
		}
		if (blank)
			sb_addch(out, '\n');
		blank = false;
		sb_add(out, p, (size_t)(e - p));
		sb_addch(out, '\n');
	}
}

static bool looks_like_header(const char *p, const char *end);

/*
 * In-body From:/Date:/Subject: at the top of the body; returns the rest.
 * mail_block: the text is a whole patch mail (an attachment made by git
 * format-patch), whose other header fields are skipped too.
 */
static const char *inbody_headers(struct ctx *c, const char *p, const char *end,
				  bool mail_block)
{
	const char *q = p;
	bool any = false;

	while (q < end) {
		const char *e = mp_eol(q, end), *next = mp_next_line(q, end);
		const char *v;
		struct sb val = SB_INIT;
		int which;

		if (starts_icase(q, e, "From:"))
			which = 0;
		else if (starts_icase(q, e, "Date:"))
			which = 1;
		else if (starts_icase(q, e, "Subject:"))
			which = 2;
		else if (mail_block && looks_like_header(q, end))
			which = 3; /* MIME-Version: and the like: skipped */
		else
			break;
		v = memchr(q, ':', (size_t)(e - q)) + 1;
		sb_add(&val, v, (size_t)(e - v));
		/* folded continuation lines */
		while (next < end && (*next == ' ' || *next == '\t') &&
		       !mp_line_blank(next, mp_eol(next, end))) {
			sb_add(&val, next, (size_t)(mp_eol(next, end) - next));
			next = mp_next_line(next, end);
		}
		if (val.len < 4096) {
			char *dec = decode_text(sb_str(&val));
			char *clean = dup_header(dec);

			if (which == 0 && !is_address(clean)) {
				/*
				 * "From: bogosity" opening the body is text,
				 * not an author (git's t5100 msg0015): stop
				 * here and keep it in the message
				 */
				free(clean);
				g_free(dec);
				sb_release(&val);
				break;
			}
			if (which == 0) {
				set_author(c->p, clean, true);
			} else if (which == 1 && *clean) {
				if (parse_date(clean, &c->p->timestamp,
					       &c->p->tz_offset)) {
					free(c->p->date);
					c->p->date = clean;
					clean = NULL;
					c->in_body_date = true;
				}
			} else if (which == 2 && *clean) {
				struct mp_subject s;

				mp_subject_parse(&s, clean);
				if (c->p->subject.reply && !s.reply) {
					/*
					 * "Re: ..." opening with "Subject:
					 * [PATCH] ...": a new patch sent in
					 * the thread (git am's convention),
					 * if it carries a diff (parse_raw)
					 */
					mp_subject_release(&c->p->subject);
					c->p->subject = s;
					c->inbody_unreplied = true;
					memset(&s, 0, sizeof(s));
				} else {
					free(c->p->subject.title);
					c->p->subject.title = s.title;
					s.title = NULL;
				}
				mp_subject_release(&s);
			}
			free(clean);
			g_free(dec);
		}
		sb_release(&val);
		any = true;
		q = next;
	}
	if (!any)
		return p;
	while (q < end && mp_line_blank(q, mp_eol(q, end)))
		q = mp_next_line(q, end);
	return q;
}

/* Follow-up trailers in a reply: `*-by:`/`Fixes:` on unquoted lines. */
static void reply_trailers(struct mp_patch *pt, const char *p, const char *end)
{
	for (; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end);
		struct mp_trailer *one = NULL;
		size_t n = 0;
		struct sb line = SB_INIT;

		if (e - p == 3 && !memcmp(p, "-- ", 3))
			break; /* signature */
		if (*p == '>' || e - p > 1024 ||
		    !memchr(p, ':', (size_t)(e - p)))
			continue;
		/* one line as a message "x\n\nline" reuses the trailer grammar
		 */
		sb_adds(&line, "x\n\n");
		sb_add(&line, p, (size_t)(e - p));
		if (mp_trailers_parse(sb_str(&line), &one, &n) == 1) {
			size_t kl = strlen(one[0].key);
			bool keep = (kl > 3 &&
				     !strcasecmp(one[0].key + kl - 3, "-by") &&
				     strchr(one[0].value, '@')) ||
				    !strcasecmp(one[0].key, "Fixes");

			if (keep && pt->ntrailers < 1024) {
				pt->trailers = xrealloc(pt->trailers,
							(pt->ntrailers + 1) *
								sizeof(*one));
				pt->trailers[pt->ntrailers++] = one[0];
				one[0].key = one[0].value = NULL;
			}
		}
		for (size_t i = 0; i < n; i++) {
			free(one[i].key);
			free(one[i].value);
		}
		free(one);
		sb_release(&line);
	}
}

/*
 * Keep the diff (its paths were read while finding it). A MIME boundary
 * takes the last newline of an attached diff with it; put it back so the
 * diff applies.
 */
static void set_diff(struct mp_patch *pt, const char *d, size_t len)
{
	bool nl = len && d[len - 1] != '\n';

	pt->diff = xmalloc(len + 2);
	memcpy(pt->diff, d, len);
	if (nl)
		pt->diff[len++] = '\n';
	pt->diff[len] = '\0';
	pt->diff_len = len;
}

/*
 * Split a decoded body into commit message, notes and diff.
 * gitshow: the title is the first paragraph of the text, no in-body headers.
 * t must be valid UTF-8 without NUL (what mp_append_utf8() makes).
 */
enum body_mode {
	BODY_MAIL,    /* a mail body: in-body headers, title from the subject */
	BODY_GITSHOW, /* git show text: title is the first paragraph */
	BODY_ATTACHED, /* a whole patch mail attached to an empty message */
};

static int analyze_body(struct ctx *c, const char *t, size_t len,
			enum body_mode mode)
{
	bool gitshow = mode == BODY_GITSHOW;
	struct mp_patch *pt = c->p;
	const char *p = t, *end = t + len, *q, *sep = NULL, *msg_end;
	const char *diff_start, *diff_end;
	struct mp_diffspan span;
	struct sb msg = SB_INIT;

	while (p < end && mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	if (mode == BODY_ATTACHED &&
	    mp_line_starts(p, mp_eol(p, end), "From ")) {
		const char *e = mp_eol(p, end);

		if (!pt->commit_id && e - p > 46 && hex_run(p + 5, e) == 40 &&
		    p[45] == ' ')
			pt->commit_id = xstrndup(p + 5, 40);
		p = mp_next_line(p, end);
	}
	if (!gitshow)
		p = inbody_headers(c, p, end, mode == BODY_ATTACHED);
	mp_diff_find_files(p, (size_t)(end - p), &span, &pt->files,
			   &pt->nfiles);
	diff_start = span.found ? p + span.start : end;
	diff_end = span.found ? p + span.end : end;
	for (q = p; q < diff_start; q = mp_next_line(q, end)) {
		if (*q == '-' && is_separator(q, mp_eol(q, end))) {
			sep = q;
			break;
		}
	}
	msg_end = sep ? sep : diff_start;

	if (gitshow) {
		/* title: the first paragraph, joined */
		const char *b = p;
		struct sb title = SB_INIT;

		while (b < msg_end && !mp_line_blank(b, mp_eol(b, msg_end))) {
			const char *e = mp_eol(b, msg_end);

			if (title.len)
				sb_addch(&title, ' ');
			sb_add(&title, b, (size_t)(e - b));
			b = mp_next_line(b, msg_end);
		}
		free(pt->subject_raw);
		pt->subject_raw = dup_header(sb_str(&title));
		mp_subject_release(&pt->subject);
		mp_subject_parse(&pt->subject, pt->subject_raw);
		/* a commit title is a title: keep "[media] foo" whole */
		free(pt->subject.title);
		pt->subject.title = xstrdup_or_null(pt->subject_raw);
		sb_release(&title);
		p = b;
	}
	sb_adds(&msg, pt->subject.title ? pt->subject.title : "");
	sb_addch(&msg, '\n');
	{
		size_t mark = msg.len;

		sb_addch(&msg, '\n');
		add_clean_lines(&msg, p, msg_end);
		if (msg.len == mark + 1)
			sb_setlen(&msg, mark);
	}
	pt->commit_message = sb_detach(&msg, NULL);

	if (sep) {
		const char *ns = mp_next_line(sep, end), *ne = diff_start;

		while (ns < ne && mp_line_blank(ns, mp_eol(ns, ne)))
			ns = mp_next_line(ns, ne);
		while (ne > ns && g_ascii_isspace(ne[-1]))
			ne--;
		if (ne > ns)
			pt->notes = xstrndup(ns, (size_t)(ne - ns));
	}
	if (span.found) {
		size_t dl = (size_t)(diff_end - diff_start);

		if (dl > c->lim->max_diff)
			return errmsg_set(c->err, MP_ERR_TOO_BIG,
					  "the diff is %zu bytes, more than "
					  "the limit of %zu bytes",
					  dl, c->lim->max_diff);
		set_diff(pt, diff_start, dl);
	}
	scan_meta(pt, p, diff_start);
	scan_meta(pt, diff_end, end);
	{
		/* request-pull text comes before any diff it carries */
		static const char since[] =
			"The following changes since commit ";
		size_t hl = (size_t)(diff_start - t);
		const char *s = memmem(t, hl, since, sizeof(since) - 1);

		if (s && memmem(s, (size_t)(diff_start - s),
				"are available in the ", 21)) {
			s += sizeof(since) - 1;
			c->is_pull = true;
			if (!pt->base_commit && hex_run(s, end) >= 7 &&
			    hex_run(s, end) <= 64)
				pt->base_commit = xstrndup(s, hex_run(s, end));
		}
	}
	if (!span.found && pt->subject.reply)
		reply_trailers(pt, p, end);
	else
		mp_trailers_parse(pt->commit_message, &pt->trailers,
				  &pt->ntrailers);
	return 0;
}

/* Look for the diff in an attachment when the body had none. */
static int analyze_attachment(struct ctx *c, const char *t, size_t len)
{
	struct mp_patch *pt = c->p;
	struct mp_diffspan span;
	size_t dl;

	mp_diff_find_files(t, len, &span, &pt->files, &pt->nfiles);
	if (!span.found)
		return 0;
	dl = span.end - span.start;
	if (dl > c->lim->max_diff)
		return errmsg_set(c->err, MP_ERR_TOO_BIG,
				  "the diff is %zu bytes, more than the limit "
				  "of %zu bytes",
				  dl, c->lim->max_diff);
	set_diff(pt, t + span.start, dl);
	pt->repairs |= MP_DIFF_FROM_ATTACHMENT;
	scan_meta(pt, t, t + span.start);
	scan_meta(pt, t + span.end, t + len);
	if (!pt->commit_id && len > 46 && !memcmp(t, "From ", 5) &&
	    hex_run(t + 5, t + len) == 40 && t[45] == ' ')
		pt->commit_id = mp_strdup_utf8(t + 5, 40);
	return 1;
}

/* ---- MIME ---- */

static bool type_is(GMimeContentType *ct, const char *type, const char *sub)
{
	return g_mime_content_type_is_type(ct, type, sub);
}

static int walk_mime(struct ctx *c, GMimeObject *obj, size_t depth)
{
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	GMimeHeaderList *hl = g_mime_object_get_header_list(obj);
	int rc;

	if (depth > c->lim->max_mime_depth)
		return errmsg_set(c->err, MP_ERR_TOO_BIG,
				  "the message nests MIME parts more than "
				  "%zu deep, the limit",
				  c->lim->max_mime_depth);
	if (++c->nparts > c->lim->max_attachments)
		return errmsg_set(c->err, MP_ERR_TOO_BIG,
				  "the message has more than %zu MIME parts, "
				  "the limit",
				  c->lim->max_attachments);
	if (depth > 0 && hl) {
		c->nheaders += (size_t)g_mime_header_list_get_count(hl);
		if (c->nheaders > c->lim->max_headers)
			return errmsg_set(c->err, MP_ERR_TOO_BIG,
					  "the message has more than %zu "
					  "header fields, the limit",
					  c->lim->max_headers);
	}
	if (GMIME_IS_MULTIPART(obj)) {
		GMimeMultipart *mp = GMIME_MULTIPART(obj);
		int n = g_mime_multipart_get_count(mp);

		for (int i = 0; i < n; i++) {
			rc = walk_mime(c, g_mime_multipart_get_part(mp, i),
				       depth + 1);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (GMIME_IS_MESSAGE_PART(obj) && !c->forwarded)
		c->forwarded = obj; /* read only if nothing else has a diff */
	if (!GMIME_IS_PART(obj) || !ct)
		return 0;
	{
		const char *disp = g_mime_object_get_disposition(obj);
		const char *fn = g_mime_part_get_filename(GMIME_PART(obj));
		bool attachment =
			depth > 0 &&
			((disp && !g_ascii_strcasecmp(disp, "attachment")) ||
			 (fn && !disp));
		bool plain = type_is(ct, "text", "plain");
		bool patchy = type_is(ct, "text", "x-patch") ||
			      type_is(ct, "text", "x-diff") ||
			      type_is(ct, "text", "patch") ||
			      type_is(ct, "text", "diff") ||
			      type_is(ct, "application", "octet-stream") ||
			      type_is(ct, "application", "x-patch") ||
			      type_is(ct, "application", "x-diff");

		if (plain && !attachment && !c->body_part) {
			c->body_part = obj;
		} else if (type_is(ct, "text", "html") && !attachment) {
			if (!c->html_part)
				c->html_part = obj;
		} else if (plain || patchy) {
			c->atts = xrealloc(c->atts,
					   (c->natts + 1) * sizeof(*c->atts));
			c->atts[c->natts++] = obj;
		}
	}
	return 0;
}

/*
 * The transfer-decoded bytes of a leaf part: where they lie in the raw
 * message when there is nothing to decode, else in *mem (caller unrefs).
 */
static void part_bytes(struct ctx *c, GMimeObject *obj, const char **data,
		       size_t *len, GMimeStream **mem)
{
	GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(obj));
	GMimeStream *src;
	GByteArray *ba;

	*data = NULL;
	*len = 0;
	*mem = NULL;
	if (!w)
		return;
	src = g_mime_data_wrapper_get_stream(w);
	if (g_mime_data_wrapper_get_encoding(w) <=
		    GMIME_CONTENT_ENCODING_BINARY &&
	    src && src->super_stream == c->stream && src->bound_start >= 0 &&
	    (size_t)src->bound_start <= c->rawlen) {
		size_t end =
			src->bound_end < 0 || (size_t)src->bound_end > c->rawlen
				? c->rawlen
				: (size_t)src->bound_end;

		*data = c->raw + src->bound_start;
		*len = end > (size_t)src->bound_start
			       ? end - (size_t)src->bound_start
			       : 0;
		return;
	}
	*mem = g_mime_stream_mem_new();
	g_mime_data_wrapper_write_to_stream(w, *mem);
	ba = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(*mem));
	if (ba) {
		*data = (const char *)ba->data;
		*len = ba->len;
	}
}

/* Decoded, UTF-8 text of a leaf part into out. */
static int part_text(struct ctx *c, GMimeObject *obj, struct sb *out)
{
	const char *cs =
		g_mime_object_get_content_type_parameter(obj, "charset");
	const char *data;
	GMimeStream *mem;
	size_t len;
	int rc = 0;

	part_bytes(c, obj, &data, &len, &mem);
	if (len && mp_append_utf8(out, data, len, cs, &c->guessed) < 0)
		rc = errmsg_set(c->err, MP_ERR_TOO_BIG,
				"a decoded part is over %zu bytes, the "
				"message size limit",
				c->lim->max_message);
	if (mem)
		g_object_unref(mem);
	return rc;
}

/*
 * The common case, read in place: a body that is valid UTF-8 already,
 * needs no CRLF or flowed repair and lies in the raw message. Returns
 * false when the body must be copied and repaired.
 */
static bool body_in_place(struct ctx *c, const char **data, size_t *len)
{
	const char *cs = g_mime_object_get_content_type_parameter(c->body_part,
								  "charset");
	const char *fmt = g_mime_object_get_content_type_parameter(c->body_part,
								   "format");
	const char *nl;
	GMimeStream *mem;

	if (fmt && !g_ascii_strcasecmp(fmt, "flowed"))
		return false;
	part_bytes(c, c->body_part, data, len, &mem);
	if (mem || !*data) {
		if (mem)
			g_object_unref(mem);
		*data = NULL;
		return false;
	}
	nl = *len ? memchr(*data, '\n', *len) : NULL;
	if (nl && nl > *data && nl[-1] == '\r')
		return false; /* maybe CRLF throughout */
	if (!mp_utf8_ok(*data, *len))
		return false;
	if (!cs)
		for (size_t i = 0; i < *len; i++)
			if ((unsigned char)(*data)[i] >= 0x80) {
				c->guessed = true;
				break;
			}
	return true;
}

/* Does any line of [p, end) end in a space (a flowed soft break)? */
static bool has_soft_break(const char *p, const char *end)
{
	for (; p < end; p = mp_next_line(p, end)) {
		const char *e = mp_eol(p, end);

		if (e > p && e[-1] == ' ')
			return true;
	}
	return false;
}

static size_t count_lines(const char *p, size_t len)
{
	size_t n = 0;
	const char *e = p + len;

	while (p < e && (p = memchr(p, '\n', (size_t)(e - p)))) {
		n++;
		p++;
	}
	return n;
}

/*
 * git am applies the diff bytes as they were sent: a latin-1 line in a
 * latin-1 file must stay latin-1, not become UTF-8. When the body had to
 * be converted, take the diff from the transfer-decoded bytes instead
 * (same span, same line count), leaving the message text converted.
 */
static void diff_bytes_as_sent(struct ctx *c, GMimeObject *part)
{
	struct mp_patch *pt = c->p;
	struct mp_diffspan span;
	struct sb raw;
	const char *data;
	GMimeStream *mem;
	size_t len;

	part_bytes(c, part, &data, &len, &mem);
	sb_init(&raw, c->lim->max_message);
	if (!data || !len || sb_add(&raw, data, len) < 0)
		goto out;
	crlf_repair_as(&raw, transfer_encoded(part));
	mp_diff_find(sb_str(&raw), raw.len, &span);
	if (!span.found)
		goto out;
	data = raw.buf + span.start;
	len = span.end - span.start;
	if (len == pt->diff_len && !memcmp(data, pt->diff, len))
		goto out; /* nothing was converted inside the diff */
	if (count_lines(data, len) + (len && data[len - 1] != '\n') !=
	    count_lines(pt->diff, pt->diff_len))
		goto out; /* not the same span: keep the converted diff */
	free(pt->diff);
	set_diff(pt, data, len);
out:
	sb_release(&raw);
	if (mem)
		g_object_unref(mem);
}

/* Read the body (repairing CRLF and format=flowed) and the attachments. */
static int read_text(struct ctx *c)
{
	struct mp_patch *pt = c->p;
	struct sb body, alt;
	const char *view = NULL;
	size_t viewlen = 0;
	bool in_place;
	int rc = 0;

	sb_init(&body, c->lim->max_message);
	sb_init(&alt, c->lim->max_message);
	in_place = c->body_part && body_in_place(c, &view, &viewlen);
	if (!c->body_part && c->html_part) {
		/* an HTML-only mail: its text, so a Reviewed-by is not lost */
		rc = part_text(c, c->html_part, &alt);
		if (rc < 0)
			goto out;
		mp_html_to_text(&body, sb_str(&alt), alt.len);
		sb_reset(&alt);
	} else if (!in_place && c->body_part) {
		const char *fmt = g_mime_object_get_content_type_parameter(
			c->body_part, "format");
		const char *delsp = g_mime_object_get_content_type_parameter(
			c->body_part, "delsp");

		rc = part_text(c, c->body_part, &body);
		if (rc < 0)
			goto out;
		if (crlf_repair_as(&body, transfer_encoded(c->body_part)))
			pt->repairs |= MP_REPAIRED_CRLF;
		if (fmt && !g_ascii_strcasecmp(fmt, "flowed")) {
			bool ds = delsp && !g_ascii_strcasecmp(delsp, "yes");
			struct mp_diffspan raw, dec;

			flowed_decode(sb_str(&body), body.len, ds, &alt);
			mp_diff_find(sb_str(&body), body.len, &raw);
			mp_diff_find(sb_str(&alt), alt.len, &dec);
			if (!raw.found || (dec.found && dec.clean) ||
			    (!raw.clean && !dec.found)) {
				/* nothing flowed touches, or it mends it */
				if (alt.len != body.len ||
				    memcmp(sb_str(&alt), sb_str(&body),
					   body.len))
					pt->repairs |= MP_REPAIRED_FLOWED;
				if (raw.found && !(dec.found && dec.clean))
					pt->repairs |= MP_FLOWED_UNSAFE;
				sb_release(&body);
				body = alt;
				sb_init(&alt, c->lim->max_message);
			} else {
				/* decode the message only, leave the diff */
				sb_reset(&alt);
				flowed_decode(sb_str(&body), raw.start, ds,
					      &alt);
				if (alt.len && alt.buf[alt.len - 1] != '\n')
					sb_addch(&alt, '\n');
				sb_add(&alt, body.buf + raw.start,
				       body.len - raw.start);
				pt->repairs |= MP_REPAIRED_FLOWED;
				if (!raw.clean ||
				    has_soft_break(body.buf + raw.start,
						   body.buf + raw.end))
					pt->repairs |= MP_FLOWED_UNSAFE;
				sb_release(&body);
				body = alt;
				sb_init(&alt, c->lim->max_message);
			}
		}
	}
	if (!in_place) {
		view = sb_str(&body);
		viewlen = body.len;
	}
	if (c->natts && mp_line_blank(view, view + viewlen)) {
		/* an empty mail with a patch file attached: read it whole */
		for (size_t i = 0; i < c->natts; i++) {
			struct mp_diffspan span;

			sb_reset(&alt);
			rc = part_text(c, c->atts[i], &alt);
			if (rc < 0)
				goto out;
			crlf_repair_as(&alt, transfer_encoded(c->atts[i]));
			mp_diff_find(sb_str(&alt), alt.len, &span);
			if (!span.found)
				continue;
			pt->repairs |= MP_DIFF_FROM_ATTACHMENT;
			rc = analyze_body(c, sb_str(&alt), alt.len,
					  BODY_ATTACHED);
			goto out;
		}
	}
	rc = analyze_body(c, view, viewlen, BODY_MAIL);
	if (rc >= 0 && pt->diff && !in_place && c->body_part &&
	    !(pt->repairs & (MP_REPAIRED_FLOWED | MP_FLOWED_UNSAFE)))
		diff_bytes_as_sent(c, c->body_part);
	if (rc < 0 || pt->diff)
		goto out;
	for (size_t i = 0; i < c->natts; i++) {
		sb_reset(&alt);
		rc = part_text(c, c->atts[i], &alt);
		if (rc < 0)
			goto out;
		crlf_repair_as(&alt, transfer_encoded(c->atts[i]));
		rc = analyze_attachment(c, sb_str(&alt), alt.len);
		if (rc)
			break;
	}
	if (rc > 0)
		rc = 0;
out:
	sb_release(&body);
	sb_release(&alt);
	return rc;
}

/* ---- whole messages ---- */

static void fill_headers(struct ctx *c, GMimeMessage *msg)
{
	struct mp_patch *pt = c->p;
	GMimeObject *mo = GMIME_OBJECT(msg);
	GMimeHeaderList *hl = g_mime_object_get_header_list(mo);
	InternetAddressList *from, *own_from = NULL;
	GDateTime *dt;
	const char *v, *after;
	int n = hl ? g_mime_header_list_get_count(hl) : 0;

	/* undeclared 8-bit bytes in headers are decoded by guess */
	for (int i = 0; i < n; i++) {
		GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
		const char *raw = h ? g_mime_header_get_raw_value(h) : NULL;

		for (; raw && *raw; raw++)
			if ((unsigned char)*raw >= 0x80) {
				c->guessed = true;
				break;
			}
	}
	v = g_mime_message_get_message_id(msg);
	if (v && *v)
		pt->message_id = dup_header(v);
	else if ((v = g_mime_object_get_header(mo, "Message-ID")))
		pt->message_id = first_msgid(v, &after);
	if (pt->message_id && !*pt->message_id) {
		free(pt->message_id);
		pt->message_id = NULL;
	}
	if ((v = g_mime_object_get_header(mo, "In-Reply-To")))
		pt->in_reply_to = first_msgid(v, &after);
	parse_references(pt, g_mime_object_get_header(mo, "References"));
	from = g_mime_message_get_from(msg);
	if ((v = raw_header(hl, "From")) && strstr(v, "=?")) {
		char *joined = mp_header_join_words(v);

		if (joined) /* GMime cut a run of encoded-words: parse again */
			from = own_from = internet_address_list_parse(
				parser_opts, joined);
		free(joined);
	}
	if (from && internet_address_list_length(from) > 0 &&
	    INTERNET_ADDRESS_IS_MAILBOX(
		    internet_address_list_get_address(from, 0))) {
		InternetAddress *ia =
			internet_address_list_get_address(from, 0);
		const char *name = internet_address_get_name(ia);
		const char *addr = internet_address_mailbox_get_addr(
			INTERNET_ADDRESS_MAILBOX(ia));

		/* by hand: internet_address_to_string() runs IDNA on each */
		if (addr && strchr(addr, '@'))
			pt->author_email = dup_header(addr);
		if (name && *name)
			pt->author_name = dup_header(name);
		if (pt->author_name && pt->author_email) {
			struct sb f = SB_INIT;

			sb_addf(&f, "%s <%s>", pt->author_name,
				pt->author_email);
			pt->from = sb_detach(&f, NULL);
		}
		if (!pt->author_name && pt->author_email)
			pt->author_name = xstrdup_or_null(pt->author_email);
	}
	if (own_from)
		g_object_unref(own_from);
	if (!pt->author_name && (v = g_mime_object_get_header(mo, "From")))
		set_author(pt, v, false);
	if (!pt->from && (v = g_mime_object_get_header(mo, "From")))
		pt->from = dup_header(v);
	if ((v = g_mime_object_get_header(mo, "Date"))) {
		pt->date = dup_header(v);
		dt = g_mime_message_get_date(msg);
		if (dt) {
			pt->timestamp = g_date_time_to_unix(dt);
			pt->tz_offset = (int)(g_date_time_get_utc_offset(dt) /
					      G_TIME_SPAN_MINUTE);
		} else {
			parse_date(pt->date, &pt->timestamp, &pt->tz_offset);
		}
	}
	if ((v = raw_header(hl, "Subject")) && strstr(v, "=?")) {
		char *dec = decode_text(v);

		pt->subject_raw = dup_header(dec);
		g_free(dec);
	} else {
		pt->subject_raw = dup_header(g_mime_message_get_subject(msg));
	}
	mp_subject_parse(&pt->subject, pt->subject_raw);
	if ((v = g_mime_object_get_header(mo, "List-Id"))) {
		const char *lt = strchr(v, '<'),
			   *gt = lt ? strchr(lt, '>') : NULL;

		pt->list_id = lt && gt ? dup_trim(lt + 1, gt) : dup_header(v);
	}
	if ((v = g_mime_object_get_header(mo, "Auto-Submitted"))) {
		while (g_ascii_isspace(*v))
			v++;
		if (*v && g_ascii_strncasecmp(v, "no", 2))
			pt->auto_submitted = true;
	}
	if ((v = g_mime_object_get_header(mo, "Precedence"))) {
		while (g_ascii_isspace(*v))
			v++;
		if (!g_ascii_strncasecmp(v, "bulk", 4) ||
		    !g_ascii_strncasecmp(v, "junk", 4) ||
		    !g_ascii_strncasecmp(v, "list", 4))
			pt->auto_submitted = true;
	}
}

static void swap_strings(char ***a, size_t *na, char ***b, size_t *nb)
{
	char **t = *a;
	size_t n = *na;

	*a = *b;
	*na = *nb;
	*b = t;
	*nb = n;
}

#define TAKE(dst, src, f)                                                      \
	do {                                                                   \
		char *t_ = (dst)->f;                                           \
		(dst)->f = (src)->f;                                           \
		(src)->f = t_;                                                 \
	} while (0)

/*
 * "Fwd: [PATCH] ..." with the patch mail attached as message/rfc822: read
 * the attached mail (one level deep) and take its patch, keeping the
 * outer mail's identity (message-id, thread, sender, list).
 */
static int read_forwarded(struct ctx *c)
{
	GMimeMessage *inner = g_mime_message_part_get_message(
		GMIME_MESSAGE_PART(c->forwarded));
	struct mp_patch *pt = c->p, *ip = NULL;
	struct errmsg e = {{0}};
	GMimeStream *mem;
	GByteArray *ba;
	int rc;

	if (!inner)
		return 0;
	mem = g_mime_stream_mem_new();
	g_mime_object_write_to_stream(GMIME_OBJECT(inner), NULL, mem);
	ba = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	rc = ba && ba->len ? parse_raw(&ip, (const char *)ba->data, ba->len,
				       c->lim, &e, c->nest + 1)
			   : 0;
	g_object_unref(mem);
	if (rc == MP_ERR_TOO_BIG || rc == MP_ERR_NOMEM)
		return errmsg_set(c->err, rc, "the forwarded message: %s",
				  e.msg);
	if (rc < 0)
		return 0; /* not a patch: the outer mail stands as it is */
	if (!ip || !ip->diff) {
		mp_patch_free(ip);
		return 0;
	}
	if (ip->author_name || ip->author_email) {
		TAKE(pt, ip, author_name);
		TAKE(pt, ip, author_email);
	}
	if (ip->timestamp) {
		TAKE(pt, ip, date);
		pt->timestamp = ip->timestamp;
		pt->tz_offset = ip->tz_offset;
	}
	if (ip->subject.title && *ip->subject.title)
		TAKE(pt, ip, subject.title);
	TAKE(pt, ip, commit_message);
	TAKE(pt, ip, notes);
	TAKE(pt, ip, diff);
	pt->diff_len = ip->diff_len;
	{
		struct mp_trailer *t = pt->trailers;
		size_t n = pt->ntrailers;

		pt->trailers = ip->trailers;
		pt->ntrailers = ip->ntrailers;
		ip->trailers = t;
		ip->ntrailers = n;
	}
	swap_strings(&pt->files, &pt->nfiles, &ip->files, &ip->nfiles);
	swap_strings(&pt->prereq_patch_ids, &pt->nprereq_patch_ids,
		     &ip->prereq_patch_ids, &ip->nprereq_patch_ids);
	swap_strings(&pt->prereq_message_ids, &pt->nprereq_message_ids,
		     &ip->prereq_message_ids, &ip->nprereq_message_ids);
	swap_strings(&pt->prereq_change_ids, &pt->nprereq_change_ids,
		     &ip->prereq_change_ids, &ip->nprereq_change_ids);
	if (ip->base_commit)
		TAKE(pt, ip, base_commit);
	if (ip->change_id)
		TAKE(pt, ip, change_id);
	if (ip->commit_id)
		TAKE(pt, ip, commit_id);
	pt->repairs |= ip->repairs | MP_DIFF_FROM_ATTACHMENT;
	pt->repairs &= ~(unsigned)MP_FROM_GIT_SHOW;
	mp_patch_free(ip);
	return 0;
}

/* Count lines that open a header named Content-Type (a multipart bound). */
static size_t count_content_types(const char *p, const char *end)
{
	size_t n = 0;

	while (p < end) {
		if ((*p == 'C' || *p == 'c') && end - p > 13 &&
		    !g_ascii_strncasecmp(p, "content-type:", 13))
			n++;
		p = mp_next_line(p, end);
	}
	return n;
}

static int parse_mail(struct ctx *c, const char *raw, size_t len)
{
	GMimeStream *stream;
	GMimeParser *parser;
	GMimeMessage *msg;
	GMimeHeaderList *hl;
	int rc = 0;
	size_t bound = c->lim->max_attachments * 2 + 16;

	/* GMime recurses per nested multipart: bound it before it runs */
	if (count_content_types(raw, raw + len) > bound)
		return errmsg_set(c->err, MP_ERR_TOO_BIG,
				  "the message has more than %zu MIME parts, "
				  "the limit",
				  c->lim->max_attachments);
	stream = g_mime_stream_mem_new_with_buffer(raw, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
	msg = g_mime_parser_construct_message(parser, parser_opts);
	g_object_unref(parser);
	if (!msg) {
		g_object_unref(stream);
		return errmsg_set(c->err, MP_ERR_NOT_MAIL,
				  "the input is not a mail message: GMime "
				  "found no header block in it");
	}
	c->stream = stream;
	c->raw = raw;
	c->rawlen = len;
	hl = g_mime_object_get_header_list(GMIME_OBJECT(msg));
	c->nheaders = hl ? (size_t)g_mime_header_list_get_count(hl) : 0;
	if (c->nheaders > c->lim->max_headers) {
		rc = errmsg_set(c->err, MP_ERR_TOO_BIG,
				"the message has %zu header fields, more than "
				"the limit of %zu",
				c->nheaders, c->lim->max_headers);
		goto out;
	}
	fill_headers(c, msg);
	if (g_mime_message_get_mime_part(msg)) {
		rc = walk_mime(c, g_mime_message_get_mime_part(msg), 0);
		if (rc < 0)
			goto out;
	}
	rc = read_text(c);
	if (rc == 0 && !c->p->diff && c->forwarded && c->nest == 0)
		rc = read_forwarded(c);
out:
	g_object_unref(msg);
	g_object_unref(stream);
	c->stream = NULL;
	return rc;
}

/* `git show` / `git log -p`: "commit <sha>", "Author:", "Date:", message. */
static int parse_git_show(struct ctx *c, const char *raw, const char *end)
{
	struct mp_patch *pt = c->p;
	const char *p = raw, *e = mp_eol(p, end), *q, *body, *msg_end;
	size_t h = hex_run(p + 7, e);
	struct sb text = SB_INIT;
	struct mp_diffspan span;
	bool indented = true, any = false;
	int rc;

	free(pt->commit_id); /* `commit <sha>` beats a From_ line */
	pt->commit_id = mp_strdup_utf8(p + 7, h);
	pt->repairs |= MP_FROM_GIT_SHOW;
	for (p = mp_next_line(p, end); p < end; p = mp_next_line(p, end)) {
		const char *v;

		e = mp_eol(p, end);
		if (mp_line_blank(p, e))
			break;
		v = memchr(p, ':', (size_t)(e - p));
		if (!v || memchr(p, ' ', (size_t)(v - p)))
			break; /* no header block left: the message */
		v++;
		if (starts_icase(p, e, "Author:")) {
			char *a = dup_trim(v, e);

			free(pt->from);
			pt->from = xstrdup_or_null(a);
			set_author(pt, a, false);
			free(a);
		} else if (starts_icase(p, e, "Date:") ||
			   starts_icase(p, e, "AuthorDate:")) {
			char *d = dup_trim(v, e);

			if (!pt->date || starts_icase(p, e, "AuthorDate:")) {
				free(pt->date);
				pt->date = d;
				d = NULL;
				if (!parse_date(pt->date, &pt->timestamp,
						&pt->tz_offset))
					pt->timestamp = pt->tz_offset = 0;
			}
			free(d);
		}
	}
	while (p < end && mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	body = p;
	/* git log -p: this commit ends where the next one starts */
	for (q = body; q < end; q = mp_next_line(q, end)) {
		e = mp_eol(q, end);
		if (e - q >= 47 && mp_line_starts(q, e, "commit ") &&
		    hex_run(q + 7, e) >= 40) {
			const char *n = mp_next_line(q, end);

			if (n < end &&
			    starts_icase(n, mp_eol(n, end), "Author:")) {
				end = q;
				break;
			}
		}
	}
	mp_diff_find(body, (size_t)(end - body), &span);
	msg_end = span.found ? body + span.start : end;
	for (q = body; q < msg_end; q = mp_next_line(q, end))
		if (is_separator(q, mp_eol(q, end))) {
			msg_end = q;
			break;
		}
	for (q = body; q < msg_end; q = mp_next_line(q, end)) {
		e = mp_eol(q, end);
		if (mp_line_blank(q, e))
			continue;
		any = true;
		if (!mp_line_starts(q, e, "    ")) {
			indented = false;
			break;
		}
	}
	if (indented && any) {
		for (q = body; q < msg_end; q = mp_next_line(q, end)) {
			e = mp_eol(q, end);
			if (mp_line_starts(q, e, "    "))
				sb_add(&text, q + 4,
				       (size_t)(mp_next_line(q, end) - q - 4));
			else
				sb_add(&text, q,
				       (size_t)(mp_next_line(q, end) - q));
		}
		sb_add(&text, msg_end, (size_t)(end - msg_end));
		rc = analyze_body(c, sb_str(&text), text.len, BODY_GITSHOW);
	} else {
		rc = analyze_body(c, body, (size_t)(end - body), BODY_GITSHOW);
	}
	sb_release(&text);
	return rc;
}

/* Does the text start like mail: `Name:` with a sane field name? */
static bool looks_like_header(const char *p, const char *end)
{
	const char *e = mp_eol(p, end), *q = p;

	while (q < e && (unsigned char)*q > 32 && (unsigned char)*q < 127 &&
	       *q != ':')
		q++;
	return q > p && q < e && *q == ':' && q - p <= 76;
}

/*
 * A stable id from the raw bytes: two 64-bit multiply-mix lanes over
 * 8-byte words (a checksum, not a cryptographic hash; SHA-256 here cost a
 * third of the parse time of mail without a Message-ID).
 */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static void synth_message_id(struct mp_patch *pt, const char *raw, size_t len)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL ^ len, b = 0xc2b2ae3d27d4eb4fULL;
	size_t i = 0;
	char buf[64];

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, raw + i, 8);
		a = (a ^ w) * 0x87c37b91114253d5ULL;
		a = (a << 31) | (a >> 33);
		b = (b + w) * 0x4cf5ad432745937fULL;
		b = (b << 27) | (b >> 37);
	}
	for (; i < len; i++) {
		a = (a ^ (unsigned char)raw[i]) * 0x100000001b3ULL;
		b = (b + (unsigned char)raw[i]) * 0x87c37b91114253d5ULL;
	}
	snprintf(buf, sizeof(buf), "quorum-%016llx%016llx@local",
		 (unsigned long long)mix64(a ^ b),
		 (unsigned long long)mix64(b + a * 3));
	pt->message_id = xstrdup_or_null(buf);
}

static enum mp_kind decide_kind(const struct ctx *c)
{
	const struct mp_patch *pt = c->p;
	const struct mp_subject *s = &pt->subject;

	if (c->is_pull)
		return MP_KIND_PULL;
	for (size_t i = 0; i < s->ntags && !s->reply; i++)
		if (!g_ascii_strcasecmp(s->tags[i], "GIT PULL") ||
		    !g_ascii_strcasecmp(s->tags[i], "PULL"))
			return MP_KIND_PULL; /* "[GIT PULL]" with a short body
					      */
	if (s->reply && !pt->diff)
		return MP_KIND_REPLY;
	if (!s->reply && s->index == 0 && s->total > 0)
		return MP_KIND_COVER;
	if (pt->diff)
		return MP_KIND_PATCH;
	if (s->has_patch_tag && !s->reply)
		return MP_KIND_COVER;
	return MP_KIND_OTHER;
}

int mp_patch_parse(struct mp_patch **out, const char *raw, size_t len,
		   const struct mp_limits *lim, struct errmsg *err)
{
	return parse_raw(out, raw, len, lim, err, 0);
}

static int parse_raw(struct mp_patch **out, const char *raw, size_t len,
		     const struct mp_limits *lim, struct errmsg *err, int nest)
{
	static const struct mp_limits deflim = MP_LIMITS_INIT;
	struct ctx c = {0};
	const char *p = raw, *end, *nul, *e;
	int rc = 0;

	*out = NULL;
	c.lim = lim ? lim : &deflim;
	c.err = err;
	c.nest = nest;
	if (!raw || len == 0)
		return errmsg_set(err, MP_ERR_EMPTY, "the message is empty");
	end = raw + len;
	if (len > c.lim->max_message)
		return errmsg_set(err, MP_ERR_TOO_BIG,
				  "the message is %zu bytes, more than the "
				  "limit of %zu bytes",
				  len, c.lim->max_message);
	nul = memchr(raw, '\0', len);
	if (nul)
		return errmsg_set(err, MP_ERR_NOT_MAIL,
				  "the input has a NUL byte at offset %zu: it "
				  "is binary data, not a mail message",
				  (size_t)(nul - raw));
	while (p < end && mp_line_blank(p, mp_eol(p, end)))
		p = mp_next_line(p, end);
	if (p == end)
		return errmsg_set(err, MP_ERR_EMPTY,
				  "the message has only blank lines");
	mp_gmime_init();
	c.p = xcalloc(1, sizeof(*c.p));
	c.p->subject.version = 1;

	/* mbox From_ line: `From <sha> Mon Sep 17 00:00:00 2001` */
	e = mp_eol(p, end);
	if (mp_line_starts(p, e, "From ")) {
		size_t h = hex_run(p + 5, e);

		if ((h == 40 || h == 64) && p + 5 + h < e && p[5 + h] == ' ')
			c.p->commit_id = mp_strdup_utf8(p + 5, h);
		p = mp_next_line(p, end);
		while (p < end && mp_line_blank(p, mp_eol(p, end)))
			p = mp_next_line(p, end);
		if (p == end) {
			rc = errmsg_set(err, MP_ERR_EMPTY,
					"the message has an mbox From line "
					"and nothing else");
			goto out;
		}
		e = mp_eol(p, end);
	}
	if ((mp_line_starts(p, e, "commit ") && hex_run(p + 7, e) >= 40 &&
	     is_hex(p + 7, 40)) ||
	    mp_diff_starts_here(p, end)) {
		/* not mail: git's own UTF-8, read once into valid text */
		struct sb u = SB_INIT;

		if (mp_append_utf8(&u, p, (size_t)(end - p), "utf-8",
				   &c.guessed) < 0) {
			sb_release(&u);
			rc = errmsg_set(err, MP_ERR_NOMEM,
					"out of memory reading the input");
			goto out;
		}
		if (mp_line_starts(p, e, "commit "))
			rc = parse_git_show(&c, sb_str(&u), u.buf + u.len);
		else /* a bare diff: no headers, no message */
			rc = analyze_body(&c, sb_str(&u), u.len, BODY_GITSHOW);
		sb_release(&u);
	} else if (!looks_like_header(p, end)) {
		rc = errmsg_set(err, MP_ERR_NOT_MAIL,
				"the input does not start with mail headers "
				"(`Name: value`), `git show` output or a diff");
	} else {
		rc = parse_mail(&c, p, (size_t)(end - p));
	}
	if (rc < 0)
		goto out;
	if (c.inbody_unreplied && !c.p->diff)
		c.p->subject.reply = true; /* no diff: a reply after all */
	if (c.guessed)
		c.p->repairs |= MP_CHARSET_GUESSED;
	if (!c.p->subject.title)
		c.p->subject.title = xstrdup_or_null("");
	if (!c.p->message_id)
		synth_message_id(c.p, raw, len);
	c.p->kind = decide_kind(&c);
	*out = c.p;
	c.p = NULL;
out:
	free(c.atts);
	mp_patch_free(c.p);
	return rc;
}

static void free_strings(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

static void free_trailers(struct mp_trailer *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].value);
	}
	free(t);
}

void mp_patch_free(struct mp_patch *p)
{
	if (!p)
		return;
	free(p->message_id);
	free(p->in_reply_to);
	free_strings(p->references, p->nreferences);
	free(p->from);
	free(p->author_name);
	free(p->author_email);
	free(p->date);
	free(p->subject_raw);
	mp_subject_release(&p->subject);
	free(p->commit_message);
	free(p->notes);
	free_trailers(p->trailers, p->ntrailers);
	free_trailers(p->followups, p->nfollowups);
	free(p->diff);
	free_strings(p->files, p->nfiles);
	free(p->base_commit);
	free(p->change_id);
	free_strings(p->prereq_patch_ids, p->nprereq_patch_ids);
	free_strings(p->prereq_message_ids, p->nprereq_message_ids);
	free_strings(p->prereq_change_ids, p->nprereq_change_ids);
	free(p->commit_id);
	free(p->list_id);
	free(p);
}
