// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report-json.c - a review as JSON (contrib/review-json.md) or SARIF
 * 2.1.0, for `quorum review --format` and `quorum ci --format`.
 *
 * Reviews are added one at a time; the document is written at the end,
 * since SARIF wants every rule listed before the results refer to them.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include "reply.h"
#include "report.h"

#define JSON_SCHEMA "quorum-review/1"
#define SARIF_SCHEMA                                                          \
	"https://json.schemastore.org/sarif-2.1.0.json"

struct report {
	enum report_format fmt;
	struct sb text; /* FMT_TEXT */
	size_t ntext;
	size_t skipped; /* report_skip() lines of the text */
	cJSON *root; /* the whole document (JSON, SARIF) */
	cJSON *list; /* "reviews" (JSON) or runs[0].results (SARIF) */
	cJSON *rules; /* runs[0].tool.driver.rules (SARIF) */
	const char *from, *domain; /* FMT_EMAIL */
	int failed; /* FMT_EMAIL: a reply could not be composed */
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

/* Add s (NULL: null) as valid UTF-8: mail is not always. */
static void put_str(cJSON *obj, const char *key, const char *s)
{
	char *valid;

	if (!s) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	if (g_utf8_validate(s, -1, NULL)) {
		cJSON_AddStringToObject(obj, key, s);
		return;
	}
	valid = g_utf8_make_valid(s, -1);
	cJSON_AddStringToObject(obj, key, valid);
	g_free(valid);
}

static cJSON *str_item(const char *s)
{
	cJSON *it;
	char *valid;

	if (g_utf8_validate(s, -1, NULL))
		return cJSON_CreateString(s);
	valid = g_utf8_make_valid(s, -1);
	it = cJSON_CreateString(valid);
	g_free(valid);
	return it;
}

/* The patch's n of n/m (1-based). */
static int patch_number(const struct mp_series *s, size_t k)
{
	const struct mp_patch *p = k < s->npatches ? s->patches[k] : NULL;

	return p && p->subject.index ? p->subject.index : (int)k + 1;
}

static const char *const base_sources[] = {
	[RV_BASE_OPTION] = "option",
	[RV_BASE_SERIES] = "series",
	[RV_BASE_BRANCH] = "branch",
	[RV_BASE_HEAD] = "head",
};

static cJSON *json_patches(const struct rv_review *r)
{
	const struct mp_series *s = r->series;
	const struct rv_apply_result *a = r->apply;
	cJSON *arr = cJSON_CreateArray();
	size_t k, slot = 0;

	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];
		const struct rv_patch_result *pr = NULL;
		cJSON *o = cJSON_CreateObject();
		const char *status = "reviewed";

		cJSON_AddNumberToObject(o, "index", patch_number(s, k));
		if (!p) {
			status = "missing";
		} else if (a) {
			if (slot < a->npatches)
				pr = &a->patches[slot++];
			if (!pr)
				status = "skipped";
			else if (pr->applied)
				status = "applied";
			else if (pr->error)
				status = "failed";
			else
				status = "skipped";
		}
		cJSON_AddStringToObject(o, "status", status);
		put_str(o, "title", mp_patch_title(p));
		put_str(o, "message_id", p ? p->message_id : NULL);
		put_str(o, "commit", pr && *pr->commit_id ? pr->commit_id : NULL);
		put_str(o, "tree", pr && *pr->tree_id ? pr->tree_id : NULL);
		cJSON_AddBoolToObject(o, "three_way", pr && pr->three_way);
		put_str(o, "error", pr ? pr->error : NULL);
		if (r->npatch_info == s->npatches && r->risk && r->risk[k] >= 0)
			cJSON_AddNumberToObject(o, "risk", r->risk[k]);
		else
			cJSON_AddNullToObject(o, "risk");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *json_finding(const struct rv_review *r,
			   const struct rv_finding *f)
{
	cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateArray();
	cJSON *cites = cJSON_CreateArray();
	size_t i;

	cJSON_AddNumberToObject(o, "patch",
				f->patch >= 0 ? patch_number(r->series,
							     (size_t)f->patch) :
						0);
	put_str(o, "file", f->file);
	cJSON_AddNumberToObject(o, "line_start", f->line_start);
	cJSON_AddNumberToObject(o, "line_end", f->line_end);
	put_str(o, "function", f->function);
	cJSON_AddStringToObject(o, "severity", rv_severity_name(f->severity));
	put_str(o, "category", f->category);
	put_str(o, "title", f->title);
	put_str(o, "explanation", f->explanation);
	put_str(o, "quote", f->quote);
	cJSON_AddNumberToObject(o, "votes", f->votes);
	for (i = 0; i < f->nvoters; i++)
		cJSON_AddItemToArray(v, str_item(f->voters[i]));
	cJSON_AddItemToObject(o, "voters", v);
	cJSON_AddBoolToObject(o, "preexisting", f->preexisting);
	for (i = 0; i < ARRAY_SIZE(f->cites); i++)
		if (*f->cites[i])
			cJSON_AddItemToArray(cites,
					     cJSON_CreateString(f->cites[i]));
	cJSON_AddItemToObject(o, "cites", cites);
	if (f->tip_file) {
		cJSON *t = cJSON_AddObjectToObject(o, "at_tip");

		put_str(t, "file", f->tip_file);
		cJSON_AddNumberToObject(t, "line_start", f->tip_line_start);
		cJSON_AddNumberToObject(t, "line_end", f->tip_line_end);
	} else {
		cJSON_AddNullToObject(o, "at_tip");
	}
	return o;
}

static cJSON *json_findings(const struct rv_review *r,
			    const struct rv_findings *fs)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < fs->n; i++)
		cJSON_AddItemToArray(arr, json_finding(r, &fs->items[i]));
	return arr;
}

static cJSON *json_cost(const struct rv_review *r)
{
	cJSON *o = cJSON_CreateObject();
	long tin = 0, tout = 0;
	double usd = 0;
	size_t i, nsent = 0, nbudget = 0;

	for (i = 0; i < r->ncalls; i++) {
		const struct rv_llm_call *c = &r->calls[i];

		usd += c->cost;
		tin += c->tokens_in;
		tout += c->tokens_out;
		nsent += !c->cached && !c->budget && c->attempts > 0;
		nbudget += c->budget;
	}
	cJSON_AddNumberToObject(o, "usd", usd);
	cJSON_AddNumberToObject(o, "requests", (double)nsent);
	cJSON_AddNumberToObject(o, "cached", (double)r->ncached);
	cJSON_AddNumberToObject(o, "not_sent_budget", (double)nbudget);
	cJSON_AddNumberToObject(o, "tokens_in", (double)tin);
	cJSON_AddNumberToObject(o, "tokens_out", (double)tout);
	if (r->day_left >= 0)
		cJSON_AddNumberToObject(o, "day_left", r->day_left);
	else
		cJSON_AddNullToObject(o, "day_left");
	return o;
}

/* prereq: the series applied before this one, not reviewed themselves. */
static cJSON *json_prereqs(const struct rv_review *r)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i, k, n;

	for (i = 0; i < r->nprereqs; i++) {
		const struct mp_series *ps = r->prereqs[i];
		const struct mp_patch *first = ps->cover;
		cJSON *o = cJSON_CreateObject();

		for (k = n = 0; k < ps->npatches; k++) {
			n += ps->patches[k] != NULL;
			if (!first)
				first = ps->patches[k];
		}
		put_str(o, "title", mp_series_title(ps));
		cJSON_AddNumberToObject(o, "version", ps->version);
		cJSON_AddNumberToObject(o, "patches", (double)n);
		put_str(o, "message_id", first ? first->message_id : NULL);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *json_review(const struct rv_review *r)
{
	const struct mp_series *s = r->series;
	const struct rv_apply_result *a = r->apply;
	cJSON *o = cJSON_CreateObject(), *ser = cJSON_CreateObject();
	cJSON *missing = cJSON_CreateArray(), *voters = cJSON_CreateArray();
	cJSON *abst = cJSON_CreateArray(), *drop = cJSON_CreateObject();
	size_t i;

	put_str(ser, "title", mp_series_title(s));
	cJSON_AddNumberToObject(ser, "version", s->version);
	cJSON_AddNumberToObject(ser, "total", s->total);
	cJSON_AddBoolToObject(ser, "complete", s->complete);
	for (i = 0; i < s->nmissing; i++)
		cJSON_AddItemToArray(missing, cJSON_CreateNumber(s->missing[i]));
	cJSON_AddItemToObject(ser, "missing", missing);
	put_str(ser, "cover_message_id",
		s->cover ? s->cover->message_id : NULL);
	cJSON_AddItemToObject(o, "series", ser);

	if (a) {
		cJSON *b = cJSON_CreateObject();

		cJSON_AddStringToObject(b, "id", a->base_id);
		cJSON_AddStringToObject(
			b, "source",
			(unsigned)a->base_source < ARRAY_SIZE(base_sources) ?
				base_sources[a->base_source] :
				"unknown");
		put_str(b, "note", a->base_note);
		cJSON_AddItemToObject(o, "base", b);
	} else {
		cJSON_AddNullToObject(o, "base");
	}
	cJSON_AddItemToObject(o, "prerequisites", json_prereqs(r));
	cJSON_AddBoolToObject(o, "applied", !a || a->failed < 0);
	cJSON_AddItemToObject(o, "patches", json_patches(r));
	cJSON_AddNumberToObject(o, "quorum", r->quorum);
	for (i = 0; i < r->nvoters; i++) {
		cJSON *v = cJSON_CreateObject();

		put_str(v, "name", r->voters[i]);
		cJSON_AddNumberToObject(v, "weight",
					r->weights ? r->weights[i] : 1.0);
		cJSON_AddBoolToObject(v, "llm", r->is_llm && r->is_llm[i]);
		cJSON_AddItemToArray(voters, v);
	}
	cJSON_AddItemToObject(o, "voters", voters);
	cJSON_AddItemToObject(o, "findings", json_findings(r, &r->findings));
	cJSON_AddItemToObject(o, "minority", json_findings(r, &r->minority));
	for (i = 0; i < r->ncalls; i++) {
		const struct rv_llm_call *c = &r->calls[i];
		cJSON *ab;

		if (c->answered)
			continue;
		ab = cJSON_CreateObject();
		put_str(ab, "voter", c->voter);
		if (c->patch >= 0 && (size_t)c->patch < s->npatches)
			cJSON_AddNumberToObject(ab, "patch",
						patch_number(s, (size_t)c->patch));
		else
			cJSON_AddNullToObject(ab, "patch"); /* the series tip */
		put_str(ab, "reason", c->reason ? c->reason : "no answer");
		cJSON_AddItemToArray(abst, ab);
	}
	cJSON_AddItemToObject(o, "abstentions", abst);
	cJSON_AddNumberToObject(drop, "outside_patch", (double)r->dropped);
	cJSON_AddNumberToObject(drop, "hallucinated", (double)r->hallucinated);
	cJSON_AddNumberToObject(drop, "fixed_later", (double)r->fixed_later);
	cJSON_AddItemToObject(o, "dropped", drop);
	cJSON_AddItemToObject(o, "cost", json_cost(r));
	put_str(o, "stepdown", r->stepdown);
	cJSON_AddBoolToObject(o, "no_history", r->no_history);
	return o;
}

/* ---- SARIF ---- */

static const char *sarif_level(enum rv_severity s)
{
	switch (s) {
	case RV_SEV_CRITICAL:
	case RV_SEV_HIGH:
		return "error";
	case RV_SEV_MEDIUM:
		return "warning";
	default:
		return "note";
	}
}

/* The index of rule id in rules, adding it when new. */
static int sarif_rule(cJSON *rules, const char *id)
{
	cJSON *it, *d;
	int n = 0;

	cJSON_ArrayForEach(it, rules)
	{
		if (!strcmp(cJSON_GetObjectItem(it, "id")->valuestring, id))
			return n;
		n++;
	}
	it = cJSON_CreateObject();
	cJSON_AddItemToObject(it, "id", str_item(id));
	d = cJSON_CreateObject();
	cJSON_AddItemToObject(d, "text", str_item(id));
	cJSON_AddItemToObject(it, "shortDescription", d);
	cJSON_AddItemToArray(rules, it);
	return n;
}

/*
 * SARIF results are placed in the tree a code-scanning UI shows: the
 * series tip (for `ci`, the newest commit of the run), so a finding on
 * an earlier patch is moved to where its lines are at the tip.
 */
static void sarif_add(struct report *rp, const struct rv_review *r,
		      const char (*ids)[RV_OID_HEXSZ + 1], size_t n)
{
	size_t i;

	for (i = 0; i < r->findings.n; i++) {
		const struct rv_finding *f = &r->findings.items[i];
		const char *cat = f->category && *f->category ? f->category :
								"other";
		cJSON *res = cJSON_CreateObject(), *msg = cJSON_CreateObject();
		cJSON *locs = cJSON_CreateArray(), *loc, *phys, *art, *reg;
		cJSON *props;
		struct sb text = SB_INIT;
		const char *file = f->tip_file ? f->tip_file : f->file;
		int start = f->tip_file ? f->tip_line_start : f->line_start;
		int end = f->tip_file ? f->tip_line_end : f->line_end;

		if (start < 1)
			start = 1;
		if (end < start)
			end = start;

		cJSON_AddItemToObject(res, "ruleId", str_item(cat));
		cJSON_AddNumberToObject(res, "ruleIndex",
					sarif_rule(rp->rules, cat));
		cJSON_AddStringToObject(res, "level",
					sarif_level(f->severity));
		sb_adds(&text, f->title ? f->title : cat);
		if (f->explanation && *f->explanation)
			sb_addf(&text, "\n\n%s", f->explanation);
		cJSON_AddItemToObject(msg, "text", str_item(sb_str(&text)));
		sb_release(&text);
		cJSON_AddItemToObject(res, "message", msg);
		if (file) {
			loc = cJSON_CreateObject();
			phys = cJSON_CreateObject();
			art = cJSON_CreateObject();
			reg = cJSON_CreateObject();
			cJSON_AddItemToObject(art, "uri", str_item(file));
			cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
			cJSON_AddItemToObject(phys, "artifactLocation", art);
			cJSON_AddNumberToObject(reg, "startLine", start);
			cJSON_AddNumberToObject(reg, "endLine", end);
			cJSON_AddItemToObject(phys, "region", reg);
			cJSON_AddItemToObject(loc, "physicalLocation", phys);
			cJSON_AddItemToArray(locs, loc);
		}
		cJSON_AddItemToObject(res, "locations", locs);
		props = cJSON_CreateObject();
		cJSON_AddStringToObject(props, "severity",
					rv_severity_name(f->severity));
		cJSON_AddNumberToObject(props, "votes", f->votes);
		cJSON_AddNumberToObject(
			props, "patch",
			f->patch >= 0 ? patch_number(r->series,
						     (size_t)f->patch) :
					0);
		put_str(props, "series", mp_series_title(r->series));
		if (f->patch >= 0 && (size_t)f->patch < n)
			cJSON_AddStringToObject(props, "commit", ids[f->patch]);
		cJSON_AddItemToObject(res, "properties", props);
		cJSON_AddItemToArray(rp->list, res);
	}
}

void report_set_email(struct report *rp, const char *from,
		      const char *domain)
{
	rp->from = from;
	rp->domain = domain;
}

/* An mboxrd From_ line and body: ">From " quoting is reversible. */
static void add_mbox_message(struct sb *out, const char *msg)
{
	const char *p = msg, *nl;

	sb_adds(out, "From quorum@localhost Thu Jan  1 00:00:00 1970\n");
	while (*p) {
		const char *q = p;

		nl = strchr(p, '\n');
		while (*q == '>')
			q++;
		if (!strncmp(q, "From ", 5))
			sb_addch(out, '>');
		if (!nl) {
			sb_adds(out, p);
			sb_addch(out, '\n');
			break;
		}
		sb_add(out, p, (size_t)(nl - p) + 1);
		p = nl + 1;
	}
	sb_addch(out, '\n');
}

/*
 * The reply `quorum watch` would send for r, to the author only. One
 * review: the message as it is; more: an mboxrd of them.
 */
static void email_add(struct report *rp, const struct rv_review *r)
{
	struct reply_opts o = { 0 };
	struct sb msg = SB_INIT, id = SB_INIT, from = SB_INIT;
	const struct mp_patch *parent = mp_series_first(r->series);

	if (rp->failed)
		return;
	sb_addf(&id, "quorum.%zu.review@%s", rp->ntext + 1,
		rp->domain ? rp->domain : "quorum.invalid");
	o.domain = rp->domain ? rp->domain : "quorum.invalid";
	if (!rp->from)
		sb_addf(&from, "quorum <quorum@%s>", o.domain);
	o.from = rp->from ? rp->from : sb_str(&from);
	o.msgid = sb_str(&id);
	o.to_author = true;
	o.now = (int64_t)time(NULL);
	if (reply_compose(&msg, r->series, r, &o, &rp->err) < 0) {
		errmsg_set(&rp->err, -1, "cannot compose the reply to %s: %s",
			   parent && parent->message_id ? parent->message_id :
							  "the series",
			   rp->err.msg);
		rp->failed = 1;
		goto out;
	}
	if (!rp->ntext) {
		rp->email_first = sb_detach(&msg, NULL);
	} else {
		if (rp->email_first) {
			add_mbox_message(&rp->text, rp->email_first);
			free(rp->email_first);
			rp->email_first = NULL;
		}
		add_mbox_message(&rp->text, sb_str(&msg));
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
	cJSON *run, *tool, *driver, *runs;

	if (!rp)
		return NULL;
	rp->fmt = fmt;
	if (fmt == FMT_JSON) {
		rp->root = cJSON_CreateObject();
		cJSON_AddStringToObject(rp->root, "schema", JSON_SCHEMA);
		cJSON_AddStringToObject(rp->root, "version", QUORUM_VERSION);
		rp->list = cJSON_AddArrayToObject(rp->root, "reviews");
	} else if (fmt == FMT_SARIF) {
		rp->root = cJSON_CreateObject();
		cJSON_AddStringToObject(rp->root, "$schema", SARIF_SCHEMA);
		cJSON_AddStringToObject(rp->root, "version", "2.1.0");
		runs = cJSON_AddArrayToObject(rp->root, "runs");
		run = cJSON_CreateObject();
		tool = cJSON_AddObjectToObject(run, "tool");
		driver = cJSON_AddObjectToObject(tool, "driver");
		cJSON_AddStringToObject(driver, "name", "quorum");
		cJSON_AddStringToObject(driver, "version", QUORUM_VERSION);
		cJSON_AddStringToObject(driver, "informationUri",
					"https://example.org/quorum");
		rp->rules = cJSON_AddArrayToObject(driver, "rules");
		rp->list = cJSON_AddArrayToObject(run, "results");
		cJSON_AddItemToArray(runs, run);
	}
	if ((fmt == FMT_JSON || fmt == FMT_SARIF) && (!rp->root || !rp->list)) {
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
	cJSON *o, *arr;
	size_t i;

	switch (rp->fmt) {
	case FMT_TEXT:
		if (rp->ntext++)
			sb_addch(&rp->text, '\n');
		if (n == 1)
			sb_addf(&rp->text, "commit %.12s\n", ids[0]);
		else if (n)
			sb_addf(&rp->text, "commits %.12s..%.12s (%zu)\n", ids[0],
				ids[n - 1], n);
		rv_report_text(r, &rp->text);
		break;
	case FMT_JSON:
		o = json_review(r);
		if (n) {
			cJSON_AddStringToObject(o, "commit", ids[n - 1]);
			arr = cJSON_AddArrayToObject(o, "commits");
			for (i = 0; i < n; i++)
				cJSON_AddItemToArray(arr,
						     cJSON_CreateString(ids[i]));
		}
		cJSON_AddItemToArray(rp->list, o);
		break;
	case FMT_SARIF:
		sarif_add(rp, r, ids, n);
		break;
	case FMT_EMAIL:
		email_add(rp, r);
		break;
	}
}

void report_skip(struct report *rp, const char *commit, const char *title,
		 double risk)
{
	cJSON *arr, *o;

	if (rp->fmt == FMT_TEXT) {
		if (rp->ntext && !rp->skipped++)
			sb_addch(&rp->text, '\n');
		sb_addf(&rp->text, "skipped (the range is over the limit): %.12s %s",
			commit, title ? title : "");
		if (risk >= 0)
			sb_addf(&rp->text, " (risk %.2f)", risk);
		sb_addch(&rp->text, '\n');
		return;
	}
	if (rp->fmt != FMT_JSON)
		return;
	arr = cJSON_GetObjectItem(rp->root, "skipped");
	if (!arr)
		arr = cJSON_AddArrayToObject(rp->root, "skipped");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "commit", commit);
	put_str(o, "title", title);
	if (risk >= 0)
		cJSON_AddNumberToObject(o, "risk", risk);
	else
		cJSON_AddNullToObject(o, "risk");
	cJSON_AddItemToArray(arr, o);
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
		{ "critical:", "\033[1;35m" }, { "high:", "\033[1;31m" },
		{ "medium:", "\033[33m" },     { "low:", "\033[36m" },
		{ "FAILED", "\033[1;31m" },
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
			while (*w == ' ' || (*w >= '0' && *w <= '9') || *w == '/')
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
	sb_add_clean(buf, s, false);
	return sb_str(buf);
}

void fput_clean(const char *s, FILE *f)
{
	struct sb buf = SB_INIT;

	fputs(text_clean(&buf, s), f);
	sb_release(&buf);
}

int report_write(struct report *rp, const char *path, struct errmsg *err)
{
	char *doc = NULL;
	const char *text;
	FILE *f = stdout;
	int ret = 0;

	if (rp->failed)
		return errmsg_set(err, -1, "%s", rp->err.msg);
	if (rp->fmt == FMT_EMAIL && rp->email_first) {
		text = rp->email_first;
	} else if (rp->fmt == FMT_TEXT || rp->fmt == FMT_EMAIL) {
		text = sb_str(&rp->text);
	} else {
		doc = cJSON_Print(rp->root);
		if (!doc)
			return errmsg_set(err, -1, "out of memory writing the report");
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
	if (rp->fmt == FMT_TEXT) {
		struct sb clean = SB_INIT;

		sb_init(&clean, 0);
		sb_add_clean(&clean, text, true);
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
	cJSON_Delete(rp->root);
	free(rp);
}
