// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - the report `quorum review --format` and `quorum ci
 * --format` write: text, JSON or SARIF (review/report-*.c), or the
 * replies `quorum watch` would mail.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include "reply.h"
#include "report.h"

struct report {
	enum report_format fmt;
	struct sb text; /* FMT_TEXT */
	size_t ntext;
	size_t skipped;		       /* report_skip() lines of the text */
	struct rv_json_report *json;   /* FMT_JSON */
	struct rv_sarif_report *sarif; /* FMT_SARIF */
	const char *from, *domain;     /* FMT_EMAIL */
	int failed; /* FMT_EMAIL: REPORT_ERR_INPUT, a reply was not composed */
	char *email_first; /* FMT_EMAIL: the only reply so far */
	struct errmsg err;
};

int report_format_parse(const char *s)
{
	if (!strcmp(s, "text"))
		return FMT_TEXT;
	if (!strcmp(s, "json"))
		return FMT_JSON;
	if (!strcmp(s, "sarif"))
		return FMT_SARIF;
	if (!strcmp(s, "email"))
		return FMT_EMAIL;
	return -1;
}

void report_set_email(struct report *rp, const char *from, const char *domain)
{
	rp->from = from;
	rp->domain = domain;
}

/*
 * The reply `quorum watch` would send for r, to the author only. One
 * review: the message as it is; more: an mboxrd of them.
 */
static void email_add(struct report *rp, const struct rv_review *r)
{
	struct reply_opts o = {0};
	struct errmsg why = {""};
	struct sb msg = SB_INIT, id = SB_INIT, from = SB_INIT;
	const struct mp_patch *parent = mp_series_first(r->series);

	const char *pid =
		parent && parent->message_id ? parent->message_id : "";
	uint32_t h = 2166136261u; /* FNV-1a of the series' first message-id */

	if (rp->failed)
		return;
	while (*pid)
		h = (h ^ (unsigned char)*pid++) * 16777619u;
	/* Unique per series and per run: there is no state to count with. */
	sb_addf(&id, "quorum.%08x.%llx.%ld.%zu.review@%s", h,
		(unsigned long long)time(NULL), (long)getpid(), rp->ntext + 1,
		rp->domain ? rp->domain : "quorum.invalid");
	o.domain = rp->domain ? rp->domain : "quorum.invalid";
	if (!rp->from)
		sb_addf(&from, "quorum <quorum@%s>", o.domain);
	o.from = rp->from ? rp->from : sb_str(&from);
	o.msgid = sb_str(&id);
	o.to_author = true;
	o.now = (int64_t)time(NULL);
	if (reply_compose(&msg, r->series, r, &o, &why) < 0) {
		/* The mail's fault, not the machine's: an input error. */
		const char *t = parent ? mp_patch_title(parent) : NULL;

		errmsg_set(&rp->err, REPORT_ERR_INPUT,
			   "cannot compose the reply to '%.200s': %s",
			   t ? t : "the series", why.msg);
		rp->failed = REPORT_ERR_INPUT;
		goto out;
	}
	if (!rp->ntext) {
		rp->email_first = sb_detach(&msg, NULL);
	} else {
		if (rp->email_first) {
			reply_mbox_add(&rp->text, rp->email_first);
			free(rp->email_first);
			rp->email_first = NULL;
		}
		reply_mbox_add(&rp->text, sb_str(&msg));
	}
	rp->ntext++;
out:
	sb_release(&msg);
	sb_release(&id);
	sb_release(&from);
}

struct report *report_new(enum report_format fmt)
{
	struct report *rp = calloc(1, sizeof(*rp));
	int ret = 0;

	if (!rp)
		return NULL;
	rp->fmt = fmt;
	if (fmt == FMT_JSON)
		ret = rv_json_report_new(&rp->json, QUORUM_VERSION);
	else if (fmt == FMT_SARIF)
		ret = rv_sarif_report_new(&rp->sarif, QUORUM_VERSION);
	if (ret < 0) {
		report_free(rp);
		return NULL;
	}
	return rp;
}

void report_add(struct report *rp, const struct rv_review *r)
{
	report_add_commits(rp, r, NULL, 0);
}

void report_add_commits(struct report *rp, const struct rv_review *r,
			const char (*ids)[RV_OID_HEXSZ + 1], size_t n)
{
	switch (rp->fmt) {
	case FMT_TEXT:
		if (rp->ntext++)
			sb_addch(&rp->text, '\n');
		if (n == 1)
			sb_addf(&rp->text, "commit %.12s\n", ids[0]);
		else if (n)
			sb_addf(&rp->text, "commits %.12s..%.12s (%zu)\n",
				ids[0], ids[n - 1], n);
		rv_report_text(r, &rp->text);
		break;
	case FMT_JSON:
		rv_json_report_add(rp->json, r, ids, n);
		break;
	case FMT_SARIF:
		rv_sarif_report_add(rp->sarif, r, ids, n);
		break;
	case FMT_EMAIL:
		email_add(rp, r);
		break;
	}
}

void report_skip(struct report *rp, const char *commit, const char *title,
		 double risk)
{
	if (rp->fmt == FMT_TEXT) {
		if (rp->ntext && !rp->skipped++)
			sb_addch(&rp->text, '\n');
		sb_addf(&rp->text,
			"skipped (the range is over the limit): %.12s %s",
			commit, title ? title : "");
		if (risk >= 0)
			sb_addf(&rp->text, " (risk %.2f)", risk);
		sb_addch(&rp->text, '\n');
		return;
	}
	if (rp->fmt == FMT_JSON)
		rv_json_report_skip(rp->json, commit, title, risk);
}

/*
 * Terminal colour for text on a tty: the severity of each finding and a
 * patch that FAILED. NO_COLOR (any value) and TERM=dumb turn it off.
 */
static bool want_colour(FILE *f)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	if (nc && *nc)
		return false;
	if (!term || !strcmp(term, "dumb"))
		return false;
	return isatty(fileno(f));
}

static void put_coloured(const char *text, FILE *f)
{
	static const struct {
		const char *word, *sgr;
	} sev[] = {
		{"critical:", "\033[1;35m"}, {"high:", "\033[1;31m"},
		{"medium:", "\033[33m"},     {"low:", "\033[36m"},
		{"FAILED", "\033[1;31m"},
	};
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n'), *w = p;
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p), i, n = 0;

		/* "[N] high: ..." or "  1/2  FAILED ..." */
		if (*w == '[') {
			while (w < p + len && *w != ']')
				w++;
			w = w + 2 <= p + len ? w + 2 : p + len;
		} else {
			while (*w == ' ' || (*w >= '0' && *w <= '9') ||
			       *w == '/')
				w++;
		}
		for (i = 0; w < p + len && i < ARRAY_SIZE(sev); i++) {
			n = strlen(sev[i].word);
			if (!strncmp(w, sev[i].word, n))
				break;
		}
		if (w < p + len && i < ARRAY_SIZE(sev)) {
			fwrite(p, 1, (size_t)(w - p), f);
			fprintf(f, "%s%.*s\033[m", sev[i].sgr, (int)n, w);
			fwrite(w + n, 1, len - (size_t)(w - p) - n, f);
		} else {
			fwrite(p, 1, len, f);
		}
		p += len;
	}
}

const char *text_clean(struct sb *buf, const char *s)
{
	sb_reset(buf);
	sb_add_visible(buf, s, SB_VIS_TAB);
	return sb_str(buf);
}

void fput_clean(const char *s, FILE *f)
{
	struct sb buf = SB_INIT;

	fputs(text_clean(&buf, s), f);
	sb_release(&buf);
}

/* A stream whose bytes are made visible on their way to another. */
struct visible_stream {
	FILE *under;
	char carry[4]; /* the start of a UTF-8 character the next write ends */
	size_t ncarry;
};

/* How many bytes at the end of s[0..len) start a character not ended. */
static size_t utf8_unfinished(const char *s, size_t len)
{
	size_t i, back, need;

	for (back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = (unsigned char)s[len - back];

		if ((c & 0xc0) == 0x80)
			continue; /* a continuation: look further back */
		need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		for (i = len - back + 1; i < len; i++)
			if (((unsigned char)s[i] & 0xc0) != 0x80)
				return 0;
		return need > back ? back : 0;
	}
	return 0;
}

static ssize_t visible_write(void *cookie, const char *buf, size_t n)
{
	struct visible_stream *v = cookie;
	struct sb in = SB_INIT, out = SB_INIT;
	size_t keep;

	sb_add(&in, v->carry, v->ncarry);
	sb_add(&in, buf, n);
	keep = utf8_unfinished(in.buf, in.len);
	sb_add_visible_mem(&out, in.buf, in.len - keep,
			   SB_VIS_NEWLINE | SB_VIS_TAB);
	memcpy(v->carry, in.buf + in.len - keep, keep);
	v->ncarry = keep;
	fwrite(sb_str(&out), 1, out.len, v->under);
	fflush(v->under);
	sb_release(&in);
	sb_release(&out);
	return (ssize_t)n;
}

static int visible_close(void *cookie)
{
	struct visible_stream *v = cookie;
	struct sb out = SB_INIT;

	/* A character never finished: its bytes, as \xNN. */
	sb_add_visible_mem(&out, v->carry, v->ncarry, 0);
	fwrite(sb_str(&out), 1, out.len, v->under);
	fflush(v->under);
	sb_release(&out);
	free(v);
	return 0;
}

FILE *visible_stream_open(FILE *under)
{
	cookie_io_functions_t io = {
		.write = visible_write,
		.close = visible_close,
	};
	struct visible_stream *v = xcalloc(1, sizeof(*v));
	FILE *f;

	v->under = under;
	f = fopencookie(v, "w", io);
	if (!f) {
		free(v);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

void fput_json(const char *doc, FILE *f)
{
	struct sb buf = SB_INIT;

	sb_add_json_visible(&buf, doc);
	fputs(sb_str(&buf), f);
	sb_release(&buf);
}

int report_write(struct report *rp, const char *path, struct errmsg *err)
{
	char *doc = NULL;
	const char *text;
	FILE *f = stdout;
	int ret = 0;

	if (rp->failed)
		return errmsg_set(err, rp->failed, "%s", rp->err.msg);
	if (rp->fmt == FMT_EMAIL && rp->email_first) {
		text = rp->email_first;
	} else if (rp->fmt == FMT_TEXT || rp->fmt == FMT_EMAIL) {
		text = sb_str(&rp->text);
	} else {
		doc = rp->json ? rv_json_report_print(rp->json)
			       : rv_sarif_report_print(rp->sarif);
		if (!doc)
			return errmsg_set(err, -1,
					  "out of memory writing the report");
		text = doc;
	}
	if (path && strcmp(path, "-")) {
		f = fopen(path, "w");
		if (!f) {
			ret = errmsg_set(err, -1, "cannot write %s: %s", path,
					 strerror(errno));
			goto out;
		}
	}
	if (rp->fmt != FMT_EMAIL) {
		/*
		 * The fields are clean already; this catches what a
		 * formatter missed. JSON keeps the exact values, escaped.
		 */
		struct sb clean = SB_INIT;

		sb_init(&clean, 0);
		if (rp->fmt == FMT_TEXT)
			sb_add_visible(&clean, text,
				       SB_VIS_NEWLINE | SB_VIS_TAB);
		else
			sb_add_json_visible(&clean, text);
		free(doc);
		doc = sb_detach(&clean, NULL);
		text = doc;
	}
	if (rp->fmt == FMT_TEXT && want_colour(f))
		put_coloured(text, f);
	else
		fputs(text, f);
	if (rp->fmt != FMT_TEXT && rp->fmt != FMT_EMAIL)
		fputc('\n', f);
	if (f != stdout ? fclose(f) : fflush(f))
		ret = errmsg_set(err, -1, "cannot write %s: %s",
				 path ? path : "standard output",
				 strerror(errno));
out:
	free(doc);
	return ret;
}

void report_free(struct report *rp)
{
	if (!rp)
		return;
	sb_release(&rp->text);
	free(rp->email_first);
	rv_json_report_free(rp->json);
	rv_sarif_report_free(rp->sarif);
	free(rp);
}
