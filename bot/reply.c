// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reply.c - the review as a reply in the series' thread, built with
 * GMime so no byte of the original mail can add a header of its own.
 */
#include <ctype.h>
#include <string.h>

#include <gmime/gmime.h>

#include "reply.h"

#define WRAP 78
#define MAX_REFERENCES 20

/* An address fit for a header: user@host, nothing else. */
static bool addr_is_safe(const char *a)
{
	const unsigned char *p = (const unsigned char *)a;

	if (!a || !strchr(a, '@') || strlen(a) > 254)
		return false;
	for (; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || strchr("<>\"(),;:\\[]", *p))
			return false;
	return true;
}

/* Copy s with control characters (CR, LF, ...) made spaces. */
static char *one_line(const char *s, size_t max)
{
	struct sb o = SB_INIT;

	for (; s && *s && o.len < max; s++)
		sb_addch(&o, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
	return sb_detach(&o, NULL);
}

/* Reflow text at WRAP columns; only blank lines break paragraphs. */
static void add_wrapped(struct sb *out, const char *text, const char *indent)
{
	rv_wrap(out, text, indent, WRAP, false);
}

static int patch_number(const struct mp_series *s, int k)
{
	const struct mp_patch *p;

	if (k < 0 || (size_t)k >= s->npatches)
		return k + 1;
	p = s->patches[k];
	return p && p->subject.index ? p->subject.index : k + 1;
}

static int series_total(const struct mp_series *s)
{
	return s->total > 0 ? s->total : (int)s->npatches;
}

/* "2/3" or "1/3 and 2/3": the patches that have findings. */
static void add_patches_with_findings(struct sb *out, const struct mp_series *s,
				      const struct rv_findings *fs)
{
	size_t i, j, n = 0;

	for (i = 0; i < fs->n; i++) {
		for (j = 0; j < i; j++)
			if (fs->items[j].patch == fs->items[i].patch)
				break;
		if (j < i)
			continue;
		sb_addf(out, "%s%d/%d", n++ ? ", " : "",
			patch_number(s, fs->items[i].patch), series_total(s));
	}
}

/* Each quoted line at most WRAP columns, as "> +code". */
static void add_quote(struct sb *out, const char *quote)
{
	const char *p = quote, *nl;

	while (p && *p) {
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		sb_adds(out, "    > +");
		if (n > WRAP - 11) {
			sb_add(out, p, WRAP - 14);
			sb_adds(out, "...");
		} else {
			sb_add(out, p, n);
		}
		sb_addch(out, '\n');
		p = nl ? nl + 1 : NULL;
	}
}

static double review_cost(const struct rv_review *r)
{
	double c = 0;
	size_t i;

	for (i = 0; r && i < r->ncalls; i++)
		c += r->calls[i].cost;
	return c;
}

static void add_similar(struct sb *out, const struct rv_review *r,
			const struct rv_finding *f)
{
	const struct rv_similar_list *l;
	char *subj;

	if (f->patch < 0 || (size_t)f->patch >= r->npatch_info || !r->similar)
		return;
	l = &r->similar[f->patch];
	if (!l->n)
		return;
	subj = one_line(l->items[0].fix_subject, 60);
	sb_addf(out, "    similar past fix: %.12s \"%s\"\n", l->items[0].fix_id,
		subj);
	free(subj);
}

static void add_finding(struct sb *out, const struct rv_review *r,
			const struct rv_finding *f, size_t n)
{
	const struct mp_series *s = r->series;
	struct sb line = SB_INIT;
	size_t i;
	char *t = one_line(f->title ? f->title : "(untitled)", 200);

	sb_addf(&line, "[%zu] %s: %s", n, rv_severity_name(f->severity), t);
	free(t);
	add_wrapped(out, sb_str(&line), "");
	sb_addf(out, "    %s:%d", f->file ? f->file : "?", f->line_start);
	if (f->line_end > f->line_start)
		sb_addf(out, "-%d", f->line_end);
	if (f->function)
		sb_addf(out, " in %s()", f->function);
	sb_addf(out, ", patch %d/%d, %s\n", patch_number(s, f->patch),
		series_total(s), f->category ? f->category : "general");
	if (f->quote && *f->quote) {
		sb_addch(out, '\n');
		add_quote(out, f->quote);
	}
	if (f->explanation && *f->explanation) {
		sb_addch(out, '\n');
		add_wrapped(out, f->explanation, "    ");
	}
	sb_reset(&line);
	sb_addf(&line, "severity %s; votes: %zu of %zu (",
		rv_severity_name(f->severity), f->nvoters, r->nvoters);
	for (i = 0; i < f->nvoters; i++)
		sb_addf(&line, "%s%s", i ? ", " : "", f->voters[i]);
	sb_adds(&line, ")");
	sb_addch(out, '\n');
	add_wrapped(out, sb_str(&line), "    ");
	add_similar(out, r, f);
	sb_addch(out, '\n');
	sb_release(&line);
}

/* One line per model that abstained on some patch, with its first reason. */
static void add_abstentions(struct sb *out, const struct rv_review *r)
{
	size_t i, j;

	for (i = 0; i < r->ncalls; i++) {
		const struct rv_llm_call *c = &r->calls[i];
		struct sb line = SB_INIT;
		char *why;

		if (c->answered || !c->voter)
			continue;
		for (j = 0; j < i; j++)
			if (!r->calls[j].answered && r->calls[j].voter &&
			    !strcmp(r->calls[j].voter, c->voter))
				break;
		if (j < i)
			continue;
		why = one_line(c->reason ? c->reason : "no answer", 200);
		sb_addf(&line, "%s abstained: %s", c->voter, why);
		add_wrapped(out, line.buf, "");
		free(why);
		sb_release(&line);
	}
}

/* #quorum explain N: finding N with every similar past fix behind it. */
static void add_explanation(struct sb *out, const struct mp_series *s,
			    const struct rv_review *r, int n, const char *arg,
			    const char *said)
{
	const struct rv_finding *f;
	const struct rv_similar_list *l = NULL;
	struct sb line = SB_INIT;
	size_t i;

	if (n < 1 || (size_t)n > r->findings.n) {
		if (!arg)
			arg = "";
		if (n > 0)
			sb_addf(&line,
				"quorum: there is no finding %d in this "
				"review; it has %zu.",
				n, r->findings.n);
		else if (*arg && strspn(arg, "0123456789") == strlen(arg))
			sb_addf(&line,
				"quorum: there is no finding %s in this "
				"review; it has %zu.",
				arg, r->findings.n);
		else if (!*arg)
			sb_addf(&line,
				"quorum: '#quorum explain' needs the number of "
				"a finding, as in '#quorum explain 1'; this "
				"review has %zu.",
				r->findings.n);
		else
			sb_addf(&line,
				"quorum: '%s' is not the number of a finding; "
				"'#quorum explain N' takes one from 1 to the "
				"findings of this review, which has %zu.",
				arg, r->findings.n);
		add_wrapped(out, line.buf, "");
		if (said && *said) {
			sb_addch(out, '\n');
			add_wrapped(out, said, "");
		}
		sb_release(&line);
		return;
	}
	f = &r->findings.items[n - 1];
	sb_addf(&line, "quorum: finding %d in detail, as asked.", n);
	if (said && *said)
		sb_addf(&line, " %s", said);
	add_wrapped(out, line.buf, "");
	sb_addch(out, '\n');
	add_finding(out, r, f, (size_t)n);
	if (f->patch >= 0 && (size_t)f->patch < r->npatch_info && r->similar)
		l = &r->similar[f->patch];
	if (!l || !l->n) {
		add_wrapped(
			out,
			r->no_history
				? "No similar past fix was found: this tree "
				  "has no history index (quorum index)."
				: "No similar past fix was found in this "
				  "tree's history.",
			"");
	}
	for (i = 0; l && i < l->n && i < 3; i++) {
		char *bs = one_line(l->items[i].bug_subject, 60);
		char *fs = one_line(l->items[i].fix_subject, 60);

		sb_reset(&line);
		sb_addf(&line,
			"Similar past bug %.12s \"%s\", %s by %.12s "
			"\"%s\" (score %.2f):",
			l->items[i].bug_id, bs,
			!strcmp(l->items[i].kind, "revert") ? "reverted"
							    : "fixed",
			l->items[i].fix_id, fs, l->items[i].score);
		add_wrapped(out, line.buf, "");
		if (l->items[i].fix_explanation)
			add_wrapped(out, l->items[i].fix_explanation, "    ");
		sb_addch(out, '\n');
		free(bs);
		free(fs);
	}
	(void)s;
	sb_release(&line);
}

/*
 * One line per prerequisite series the series was applied (or,
 * when it did not apply, tried) on top of; they are not reviewed here.
 */
static void add_prereqs(struct sb *out, const struct rv_review *r)
{
	bool applied = r->apply && r->apply->failed < 0;
	size_t i, k, n;

	/* No repository: nothing was applied, the diff reviewed alone. */
	for (i = 0; r->apply && i < r->nprereqs; i++) {
		const struct mp_series *ps = r->prereqs[i];
		const struct mp_patch *first = mp_series_first(ps);
		struct sb line = SB_INIT;
		char *title;

		if (!first)
			continue;
		for (k = n = 0; k < ps->npatches; k++)
			n += ps->patches[k] != NULL;
		title = one_line(first->subject.title ? first->subject.title
						      : first->subject_raw,
				 80);
		sb_addf(&line,
			"%s on top of the prerequisite series '%s' "
			"(v%d, %zu patch%s",
			applied ? "Applied" : "Tried", title ? title : "",
			ps->version > 0 ? ps->version : 1, n,
			n == 1 ? "" : "es");
		if (mp_msgid_valid(first->message_id))
			sb_addf(&line, ", <%s>", first->message_id);
		sb_adds(&line, "), not reviewed here.");
		add_wrapped(out, sb_str(&line), "");
		free(title);
		sb_release(&line);
	}
}

/*
 * A series that did not apply and declares prerequisites quorum has no
 * mail of: say which, and what would help.
 */
static void add_missing_prereqs(struct sb *out, const struct rv_review *r,
				const struct reply_opts *o)
{
	struct sb line = SB_INIT;
	size_t i, n = 0;

	if (!r->apply || r->apply->failed < 0)
		return;
	for (i = 0; i < o->nmissing_prereqs; i++) {
		if (!mp_msgid_valid(o->missing_prereqs[i]))
			continue;
		sb_addf(&line, "%s<%s>", n++ ? ", " : "",
			o->missing_prereqs[i]);
	}
	if (n) {
		struct sb msg = SB_INIT;

		sb_addf(&msg,
			"The series declares the prerequisite%s %s, "
			"which %s not in the mail quorum reads, so the "
			"series was tried without %s; once %s there (or "
			"in the branch), a reply with '#quorum rerun' "
			"reviews it again.",
			n == 1 ? "" : "s", sb_str(&line), n == 1 ? "is" : "are",
			n == 1 ? "it" : "them", n == 1 ? "it is" : "they are");
		add_wrapped(out, sb_str(&msg), "");
		sb_release(&msg);
	}
	sb_release(&line);
}

/*
 * The findings an earlier reply mailed in full, one line each
 * under the reply that did, in the order of the review.
 */
static void add_still_open(struct sb *out, const struct rv_review *r,
			   const struct reply_earlier *e)
{
	struct sb line = SB_INIT;
	size_t i, j, k;

	for (i = 0; i < r->findings.n; i++) {
		if (!e[i].msgid)
			continue;
		for (j = 0; j < i; j++)
			if (e[j].msgid && !strcmp(e[j].msgid, e[i].msgid))
				break;
		if (j < i)
			continue; /* listed under that reply already */
		sb_reset(&line);
		sb_addf(&line, "Still open from the review of v%d",
			e[i].version > 0 ? e[i].version : 1);
		if (e[i].title && *e[i].title) {
			char *t = one_line(e[i].title, 80);

			sb_addf(&line, " of '%s'", t);
			free(t);
		}
		sb_addf(&line, " (<%s>), not repeated here:", e[i].msgid);
		add_wrapped(out, sb_str(&line), "");
		for (k = i; k < r->findings.n; k++) {
			const struct rv_finding *f = &r->findings.items[k];
			char *t;

			if (!e[k].msgid || strcmp(e[k].msgid, e[i].msgid))
				continue;
			t = one_line(f->title ? f->title : "(untitled)", 200);
			sb_reset(&line);
			sb_addf(&line, "[%zu] %s %s", k + 1,
				rv_severity_name(f->severity),
				f->file ? f->file : "?");
			if (f->function)
				sb_addf(&line, " %s()", f->function);
			sb_addf(&line, ": %s", t);
			free(t);
			add_wrapped(out, sb_str(&line), "    ");
		}
		sb_addch(out, '\n');
	}
	sb_release(&line);
}

/* The first paragraph: what the review came to, in one sentence. */
static void add_summary(struct sb *out, const struct mp_series *s,
			const struct rv_review *r, const struct reply_opts *o,
			size_t nrepeated)
{
	struct sb line = SB_INIT;
	size_t i;

	if (r->apply && r->apply->failed >= 0) {
		const struct rv_patch_result *pr =
			&r->apply->patches[r->apply->failed];

		sb_addf(&line,
			"quorum did not review this series: it was not "
			"applied, because patch %d/%d does not apply on "
			"%.12s: %s",
			pr->index, series_total(s), r->apply->base_id,
			pr->error ? pr->error : "it does not apply");
	} else if (r->findings.n && nrepeated == r->findings.n) {
		sb_addf(&line,
			"quorum found no new issue in this version: the %zu "
			"finding%s at quorum %s reported before and %s still "
			"there (listed below, not repeated).",
			r->findings.n, r->findings.n == 1 ? "" : "s",
			r->findings.n == 1 ? "was" : "were",
			r->findings.n == 1 ? "is" : "are");
	} else if (r->findings.n) {
		const struct rv_finding *f;

		for (i = 0; o->earlier && o->earlier[i].msgid; i++)
			;
		f = &r->findings.items[i];
		sb_addf(&line, "quorum found %zu potential issue%s in ",
			r->findings.n, r->findings.n == 1 ? "" : "s");
		add_patches_with_findings(&line, s, &r->findings);
		sb_addf(&line, "; %zu of %zu voters agree on the first%s.",
			f->nvoters, r->nvoters, nrepeated ? " new one" : "");
		if (nrepeated)
			sb_addf(&line,
				" %zu of them %s reported before and %s still "
				"there: listed by title only.",
				nrepeated, nrepeated == 1 ? "was" : "were",
				nrepeated == 1 ? "is" : "are");
	} else {
		sb_addf(&line,
			"quorum found no issue that enough of its voters agree "
			"on (%d of %zu needed).",
			r->quorum, r->nvoters);
	}
	add_wrapped(out, sb_str(&line), "");
	sb_release(&line);
}

/* The patches of an incomplete series that did not arrive. */
static void add_incomplete(struct sb *out, const struct mp_series *s)
{
	struct sb line = SB_INIT;
	size_t i;

	if (s->complete || !s->nmissing)
		return;
	sb_adds(&line, "The series is incomplete: patch");
	sb_adds(&line, s->nmissing > 1 ? "es" : "");
	for (i = 0; i < s->nmissing; i++)
		sb_addf(&line, "%s%d/%d", i ? ", " : " ", s->missing[i],
			series_total(s));
	sb_addf(&line, " did not arrive; reviewed the %zu that did.",
		s->npatches - s->nmissing);
	sb_addch(out, '\n');
	add_wrapped(out, sb_str(&line), "");
	sb_release(&line);
}

/* The signature: what the review cost, who voted, how to talk back. */
static void add_footer(struct sb *out, const struct rv_review *r)
{
	size_t i;

	sb_adds(out, "-- \n");
	if (r) {
		sb_addf(out, "cost: $%.4f%s\n", review_cost(r),
			r->ncalls ? "" : " (offline voters only)");
		if (r->day_budget > 0 && r->list)
			sb_addf(out,
				"budget: $%.4f left today of $%.2f for "
				"list %s\n",
				r->day_left > 0 ? r->day_left : 0,
				r->day_budget, r->list);
		if (r->apply && r->apply->failed >= 0) {
			/* Nothing was reviewed: no tally to show. */
			sb_adds(out, "voters: none ran (the series was not "
				     "applied)\n");
		} else {
			sb_adds(out, "voters: ");
			for (i = 0; i < r->nvoters; i++)
				sb_addf(out, "%s%s", i ? ", " : "",
					r->voters[i]);
			sb_addf(out, " (a finding needs %d)\n", r->quorum);
		}
		add_abstentions(out, r);
		if (r->stepdown) {
			struct sb b = SB_INIT;
			char *why = one_line(r->stepdown, 300);

			sb_addf(&b, "budget: %s", why);
			add_wrapped(out, b.buf, "");
			free(why);
			sb_release(&b);
		}
	}
	add_wrapped(out,
		    "This is an automated review by quorum " QUORUM_VERSION
		    "; findings are a machine's guesses for a person to "
		    "check. The series' author or a maintainer may reply "
		    "with a line '#quorum rerun' to review it again, "
		    "'#quorum explain N' for finding N in detail, or "
		    "'#quorum mute' to stop quorum reviewing the author's "
		    "mail on this list.",
		    "");
}

static void add_body(struct sb *out, const struct mp_series *s,
		     const struct rv_review *r, const struct reply_opts *o)
{
	struct sb line = SB_INIT;
	size_t i, nrepeated = 0;

	for (i = 0; r && o->earlier && i < r->findings.n; i++)
		nrepeated += o->earlier[i].msgid != NULL;
	if (o->unchanged_since) {
		sb_addf(&line,
			"quorum: this series is unchanged since it was "
			"reviewed in <%s>; see that reply.",
			o->unchanged_since);
		add_wrapped(out, sb_str(&line), "");
		goto footer;
	}
	if (o->explain) {
		add_explanation(out, s, r, o->explain, o->explain_arg,
				o->command_said);
		goto footer;
	}
	add_summary(out, s, r, o, nrepeated);
	add_prereqs(out, r);
	add_missing_prereqs(out, r, o);
	add_incomplete(out, s);
	sb_addch(out, '\n');
	if (nrepeated)
		add_still_open(out, r, o->earlier);
	/* Numbered as in the review, so '#quorum explain N' finds them. */
	for (i = 0; i < r->findings.n; i++)
		if (!o->earlier || !o->earlier[i].msgid)
			add_finding(out, r, &r->findings.items[i], i + 1);
	if (r->minority.n)
		sb_addf(out, "%zu more finding%s did not reach quorum.\n\n",
			r->minority.n, r->minority.n == 1 ? "" : "s");
footer:
	add_footer(out, r);
	sb_release(&line);
}

static void add_mailbox(GMimeMessage *m, GMimeAddressType t, const char *name,
			const char *addr)
{
	char *n = one_line(name, 200);

	g_mime_message_add_mailbox(m, t, n && *n ? n : NULL, addr);
	free(n);
}

/* "Name <addr>" from the config into a mailbox; false when unsafe. */
static bool split_from(const char *from, char **name, char **addr)
{
	const char *lt = strrchr(from, '<'), *gt = strrchr(from, '>');

	if (lt && gt && gt > lt) {
		*addr = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		while (lt > from && lt[-1] == ' ')
			lt--;
		*name = xstrndup(from, (size_t)(lt - from));
	} else {
		*addr = xstrdup_or_null(from);
		*name = NULL;
	}
	return addr_is_safe(*addr);
}

/*
 * Give m a 7-bit-safe text/plain body and append the whole message, with
 * Unix newlines, to out. Returns 0, or -1 when it cannot be written.
 */
static int message_finish(GMimeMessage *m, const char *body, struct sb *out)
{
	GMimeTextPart *tp = g_mime_text_part_new_with_subtype("plain");
	GMimeFormatOptions *fo = g_mime_format_options_new();
	char *raw;
	int ret;

	g_mime_text_part_set_charset(tp, "utf-8");
	g_mime_text_part_set_text(tp, body);
	g_mime_object_encode((GMimeObject *)tp, GMIME_ENCODING_CONSTRAINT_7BIT);
	g_mime_message_set_mime_part(m, (GMimeObject *)tp);
	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_UNIX);
	raw = g_mime_object_to_string((GMimeObject *)m, fo);
	ret = raw && sb_adds(out, raw) == 0 ? 0 : -1;
	g_free(raw);
	g_mime_format_options_free(fo);
	g_object_unref(tp);
	return ret;
}

/* A message being composed: what every kind of mail quorum sends has. */
struct draft {
	GMimeMessage *m;
	GDateTime *date;
	char *from_name, *from_addr;
};

/* A message from o->from with o's Message-ID and date; -1 on a bad From. */
static int draft_open(struct draft *d, const struct reply_opts *o,
		      struct errmsg *err)
{
	memset(d, 0, sizeof(*d));
	if (!split_from(o->from, &d->from_name, &d->from_addr))
		return errmsg_set(err, -1, "watch.from '%s' is not an address",
				  o->from);
	d->m = g_mime_message_new(TRUE);
	add_mailbox(d->m, GMIME_ADDRESS_TYPE_FROM, d->from_name, d->from_addr);
	g_mime_message_set_message_id(d->m, o->msgid);
	d->date = g_date_time_new_from_unix_utc(o->now);
	g_mime_message_set_date(d->m, d->date);
	return 0;
}

/* Body in, the whole message appended to out; what names it in errors. */
static int draft_finish(struct draft *d, const char *body, struct sb *out,
			const char *what, struct errmsg *err)
{
	if (message_finish(d->m, body, out) < 0)
		return errmsg_set(err, -1, "cannot write the %s", what);
	return 0;
}

static void draft_close(struct draft *d)
{
	if (d->m)
		g_object_unref(d->m);
	if (d->date)
		g_date_time_unref(d->date);
	free(d->from_name);
	free(d->from_addr);
	memset(d, 0, sizeof(*d));
}

/* A robot wrote it (RFC 3834), and which version. */
static void set_auto_headers(GMimeMessage *m)
{
	g_mime_object_set_header((GMimeObject *)m, "Auto-Submitted",
				 "auto-generated", NULL);
	g_mime_object_set_header((GMimeObject *)m, "X-Quorum-Version",
				 QUORUM_VERSION, NULL);
}

/* From, To and Cc, by the reply-to policy of o. */
static void set_addresses(GMimeMessage *m, const struct mp_patch *parent,
			  const struct reply_opts *o)
{
	size_t i;

	if (o->command && o->sender_only) {
		/* What only the one who asked needs to hear. */
		const char *name = o->command_addr ? o->command_name
						   : o->command->author_name;
		const char *addr = o->command_addr ? o->command_addr
						   : o->command->author_email;

		if (addr_is_safe(addr))
			add_mailbox(m, GMIME_ADDRESS_TYPE_TO, name, addr);
		return;
	}
	if (o->to_author && addr_is_safe(parent->author_email))
		add_mailbox(m, GMIME_ADDRESS_TYPE_TO, parent->author_name,
			    parent->author_email);
	if (o->to_list && addr_is_safe(o->list_address))
		add_mailbox(m,
			    o->to_author ? GMIME_ADDRESS_TYPE_CC
					 : GMIME_ADDRESS_TYPE_TO,
			    NULL, o->list_address);
	/* Maintainers on Cc, or on To when no one else is (an embargo). */
	for (i = 0; i < o->nmaintainers; i++)
		if (addr_is_safe(o->maintainers[i]))
			add_mailbox(m,
				    internet_address_list_length(
					    g_mime_message_get_to(m))
					    ? GMIME_ADDRESS_TYPE_CC
					    : GMIME_ADDRESS_TYPE_TO,
				    NULL, o->maintainers[i]);
}

/* "Re: " and parent's subject, on one line. */
static void set_subject(GMimeMessage *m, const struct mp_patch *parent)
{
	struct sb subj = SB_INIT;
	char *t;

	t = one_line(parent->subject_raw ? parent->subject_raw : "", 900);
	if (strncasecmp(t, "Re:", 3))
		sb_adds(&subj, "Re: ");
	sb_adds(&subj, t);
	free(t);
	g_mime_message_set_subject(m, subj.buf, "utf-8");
	sb_release(&subj);
}

/* In-Reply-To and References: the reply in parent's thread. */
static void set_thread_headers(GMimeMessage *m, const struct mp_patch *parent)
{
	struct sb refs = SB_INIT, hv = SB_INIT;
	size_t i, first;

	sb_addf(&hv, "<%s>", parent->message_id);
	g_mime_object_set_header((GMimeObject *)m, "In-Reply-To", hv.buf, NULL);
	first = parent->nreferences > MAX_REFERENCES
			? parent->nreferences - MAX_REFERENCES
			: 0;
	/* Keep the thread root when trimming, as mail clients do. */
	if (first && mp_msgid_valid(parent->references[0]))
		sb_addf(&refs, "<%s> ", parent->references[0]);
	for (i = first; i < parent->nreferences; i++)
		if (mp_msgid_valid(parent->references[i]))
			sb_addf(&refs, "<%s> ", parent->references[i]);
	sb_addf(&refs, "<%s>", parent->message_id);
	g_mime_object_set_header((GMimeObject *)m, "References", refs.buf,
				 NULL);
	sb_release(&refs);
	sb_release(&hv);
}

/* Auto-Submitted, and the X-Quorum- headers that say how r was made. */
static void set_quorum_headers(GMimeMessage *m, const struct rv_review *r,
			       const struct reply_opts *o)
{
	struct sb voters = SB_INIT, hv = SB_INIT;
	size_t i;

	set_auto_headers(m);
	for (i = 0; r && i < r->nvoters; i++)
		sb_addf(&voters, "%s%s", i ? ", " : "", r->voters[i]);
	g_mime_object_set_header((GMimeObject *)m, "X-Quorum-Voters",
				 voters.len ? voters.buf : "none", NULL);
	g_mime_object_set_header((GMimeObject *)m, "X-Quorum-Base",
				 r && r->apply ? r->apply->base_id : "none",
				 NULL);
	g_mime_object_set_header((GMimeObject *)m, "X-Quorum-Prompt",
				 o->prompt_hash ? o->prompt_hash : "none",
				 NULL);
	sb_addf(&hv, "%.4f USD", review_cost(r));
	g_mime_object_set_header((GMimeObject *)m, "X-Quorum-Cost", hv.buf,
				 NULL);
	sb_release(&voters);
	sb_release(&hv);
}

int reply_compose(struct sb *out, const struct mp_series *s,
		  const struct rv_review *r, const struct reply_opts *o,
		  struct errmsg *err)
{
	const struct mp_patch *parent = mp_series_first(s);
	struct draft d = {0};
	struct sb body = SB_INIT;
	int ret = -1;

	if (!parent || !mp_msgid_valid(parent->message_id)) {
		errmsg_set(err, -1,
			   "the series has no usable Message-ID to "
			   "reply to");
		goto out;
	}
	if (draft_open(&d, o, err) < 0)
		goto out;
	set_addresses(d.m, parent, o);
	set_subject(d.m, parent);
	/* An answer to a command goes under the command mail. */
	set_thread_headers(d.m,
			   o->command && mp_msgid_valid(o->command->message_id)
				   ? o->command
				   : parent);
	set_quorum_headers(d.m, r, o);
	add_body(&body, s, r, o);
	ret = draft_finish(&d, sb_str(&body), out, "reply", err);
out:
	draft_close(&d);
	sb_release(&body);
	return ret;
}

int reply_compose_note(struct sb *out, const struct mp_patch *cmd,
		       const char *text, const struct reply_opts *o,
		       struct errmsg *err)
{
	struct draft d = {0};
	struct sb body = SB_INIT;
	const char *name = o->command_addr ? o->command_name : cmd->author_name;
	const char *addr =
		o->command_addr ? o->command_addr : cmd->author_email;
	int ret = -1;

	if (!mp_msgid_valid(cmd->message_id) || !addr_is_safe(addr)) {
		errmsg_set(err, -1,
			   "the command mail has no usable Message-ID or "
			   "sender to answer");
		goto out;
	}
	if (draft_open(&d, o, err) < 0)
		goto out;
	add_mailbox(d.m, GMIME_ADDRESS_TYPE_TO, name, addr);
	set_subject(d.m, cmd);
	set_thread_headers(d.m, cmd);
	set_auto_headers(d.m);
	add_wrapped(&body, text, "");
	sb_adds(&body, "\n-- \n");
	add_wrapped(&body,
		    "This is an automated answer by quorum " QUORUM_VERSION
		    " to your #quorum command; it went to you only.",
		    "");
	ret = draft_finish(&d, sb_str(&body), out, "note", err);
out:
	draft_close(&d);
	sb_release(&body);
	return ret;
}

int reply_compose_digest(struct sb *out, const char *list, const char *lines,
			 size_t n, const struct reply_opts *o,
			 struct errmsg *err)
{
	struct draft d = {0};
	struct sb body = SB_INIT, subj = SB_INIT;
	char *day;
	const char *p;
	size_t i;
	int ret = -1;

	if (draft_open(&d, o, err) < 0)
		goto out;
	for (i = 0; i < o->nmaintainers; i++)
		if (addr_is_safe(o->maintainers[i]))
			add_mailbox(d.m, GMIME_ADDRESS_TYPE_TO, NULL,
				    o->maintainers[i]);
	day = g_date_time_format(d.date, "%Y-%m-%d");
	sb_addf(&subj, "quorum digest for %s: %zu series reviewed (%s)", list,
		n, day);
	g_free(day);
	g_mime_message_set_subject(d.m, subj.buf, "utf-8");
	set_auto_headers(d.m);

	sb_reset(&subj);
	sb_addf(&subj,
		"quorum reviewed %zu series on %s since the last "
		"digest:",
		n, list);
	add_wrapped(&body, subj.buf, "");
	sb_addch(&body, '\n');
	for (p = lines; p && *p;) {
		const char *nl = strchr(p, '\n');
		char *l = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
		char *clean = one_line(l, 1000);

		sb_reset(&subj);
		sb_addf(&subj, "- %s", clean);
		add_wrapped(&body, subj.buf, "");
		free(l);
		free(clean);
		p = nl ? nl + 1 : NULL;
	}
	sb_adds(&body, "\n-- \n");
	add_wrapped(&body,
		    "The full reviews are in quorum's outbox (a maildir); "
		    "this list is in digest mode, so none was sent to the "
		    "list.",
		    "");
	ret = draft_finish(&d, sb_str(&body), out, "digest", err);
out:
	draft_close(&d);
	sb_release(&body);
	sb_release(&subj);
	return ret;
}
