// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report-json.c - reviews as one JSON document (contrib/review-json.md),
 * for `quorum review --format json` and `quorum ci --format json`.
 */
#include <cjson/cJSON.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"

#define JSON_SCHEMA "quorum-review/1"

struct rv_json_report {
	cJSON *root;	/* the whole document */
	cJSON *reviews; /* root's "reviews" */
};

void rv_json_put_str(cJSON *obj, const char *key, const char *s)
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

cJSON *rv_json_str(const char *s)
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

static const char *const base_sources[] = {
	[RV_BASE_OPTION] = "option", [RV_BASE_SERIES] = "series",
	[RV_BASE_BRANCH] = "branch", [RV_BASE_HEAD] = "head",
	[RV_BASE_PARENT] = "parent",
};

/* The past bug/fix pairs most like patch k, best first. */
static cJSON *json_similar(const struct rv_review *r, size_t k)
{
	cJSON *arr = cJSON_CreateArray();
	const struct rv_similar_list *l;
	size_t i;

	if (r->npatch_info != r->series->npatches || !r->similar)
		return arr;
	l = &r->similar[k];
	for (i = 0; i < l->n; i++) {
		const struct rv_similar *m = &l->items[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "bug", m->bug_id);
		rv_json_put_str(o, "bug_subject", m->bug_subject);
		cJSON_AddStringToObject(o, "fix", m->fix_id);
		rv_json_put_str(o, "fix_subject", m->fix_subject);
		rv_json_put_str(o, "kind", m->kind);
		cJSON_AddNumberToObject(o, "score", m->score);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

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
		const char *status = "reviewed", *why;
		bool scored;

		cJSON_AddNumberToObject(o, "index",
					rv_report_patch_number(s, k));
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
		rv_json_put_str(o, "title", mp_patch_title(p));
		rv_json_put_str(o, "message_id", p ? p->message_id : NULL);
		rv_json_put_str(o, "commit",
				pr && *pr->commit_id ? pr->commit_id : NULL);
		rv_json_put_str(o, "tree",
				pr && *pr->tree_id ? pr->tree_id : NULL);
		cJSON_AddBoolToObject(o, "three_way", pr && pr->three_way);
		rv_json_put_str(o, "error", pr ? pr->error : NULL);
		scored = r->npatch_info == s->npatches && r->risk &&
			 r->risk[k] >= 0;
		why = r->npatch_info == s->npatches && r->risk_why
			      ? r->risk_why[k]
			      : NULL;
		if (scored)
			cJSON_AddNumberToObject(o, "risk", r->risk[k]);
		else
			cJSON_AddNullToObject(o, "risk");
		/* What the text report prints under "history", too. */
		rv_json_put_str(o, "risk_reasons", scored ? why : NULL);
		rv_json_put_str(o, "risk_error", scored ? NULL : why);
		cJSON_AddItemToObject(o, "similar", json_similar(r, k));
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

	cJSON_AddNumberToObject(
		o, "patch",
		f->patch >= 0
			? rv_report_patch_number(r->series, (size_t)f->patch)
			: 0);
	rv_json_put_str(o, "file", f->file);
	cJSON_AddNumberToObject(o, "line_start", f->line_start);
	cJSON_AddNumberToObject(o, "line_end", f->line_end);
	rv_json_put_str(o, "function", f->function);
	cJSON_AddStringToObject(o, "severity", rv_severity_name(f->severity));
	/* A stable id; what the voter wrote is kept apart, as data. */
	cJSON_AddStringToObject(o, "category", rv_category_id(f->category));
	rv_json_put_str(o, "category_text", f->category);
	rv_json_put_str(o, "title", f->title);
	rv_json_put_str(o, "explanation", f->explanation);
	rv_json_put_str(o, "quote", f->quote);
	cJSON_AddNumberToObject(o, "votes", f->votes);
	for (i = 0; i < f->nvoters; i++)
		cJSON_AddItemToArray(v, rv_json_str(f->voters[i]));
	cJSON_AddItemToObject(o, "voters", v);
	cJSON_AddBoolToObject(o, "preexisting", f->preexisting);
	for (i = 0; i < ARRAY_SIZE(f->cites); i++)
		if (*f->cites[i])
			cJSON_AddItemToArray(cites,
					     cJSON_CreateString(f->cites[i]));
	cJSON_AddItemToObject(o, "cites", cites);
	if (f->tip_file) {
		cJSON *t = cJSON_AddObjectToObject(o, "at_tip");

		rv_json_put_str(t, "file", f->tip_file);
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
	size_t i, nsent = 0, nbudget = 0, nbreaker = 0, nclamped = 0;
	long est_in = 0, est_out = 0;

	for (i = 0; i < r->ncalls; i++) {
		const struct rv_llm_call *c = &r->calls[i];

		usd += c->cost;
		tin += c->tokens_in;
		tout += c->tokens_out;
		nsent += !c->cached && !c->budget && c->attempts > 0;
		nbudget += c->budget;
		nbreaker += c->breaker && !c->attempts;
		nclamped += c->clamped;
		if (!c->cached && c->attempts > 0) {
			est_in += c->est_in;
			est_out += c->max_tokens;
		}
	}
	cJSON_AddNumberToObject(o, "usd", usd);
	cJSON_AddNumberToObject(o, "requests", (double)nsent);
	cJSON_AddNumberToObject(o, "cached", (double)r->ncached);
	cJSON_AddNumberToObject(o, "not_sent_budget", (double)nbudget);
	cJSON_AddNumberToObject(o, "tokens_in", (double)tin);
	cJSON_AddNumberToObject(o, "tokens_out", (double)tout);
	cJSON_AddNumberToObject(o, "not_sent_breaker", (double)nbreaker);
	cJSON_AddNumberToObject(o, "clamped", (double)nclamped);
	cJSON_AddNumberToObject(o, "est_tokens_in", (double)est_in);
	cJSON_AddNumberToObject(o, "est_tokens_out", (double)est_out);
	/* null without a daily cap, as the schema says. */
	if (r->day_budget > 0 && r->day_left >= 0)
		cJSON_AddNumberToObject(o, "day_left", r->day_left);
	else
		cJSON_AddNullToObject(o, "day_left");
	return o;
}

/* The plan of the spend, made before the first request; null: no cap. */
static cJSON *json_plan(const struct rv_review *r)
{
	const struct rv_plan *p = &r->plan;
	cJSON *o;

	if (!p->made)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "left", p->left);
	rv_json_put_str(o, "cap", p->cap);
	cJSON_AddNumberToObject(o, "worst", p->worst);
	cJSON_AddNumberToObject(o, "planned", p->planned);
	cJSON_AddNumberToObject(o, "requests", (double)p->nrequests);
	cJSON_AddNumberToObject(o, "planned_requests", (double)p->nplanned);
	cJSON_AddNumberToObject(o, "counted", (double)p->ncounted);
	rv_json_put_str(o, "order", p->order);
	rv_json_put_str(o, "text", p->text);
	return o;
}

static cJSON *json_dry(const struct rv_review *r)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < r->ndry; i++) {
		const struct rv_dry_request *d = &r->dry[i];
		cJSON *o = cJSON_CreateObject();

		rv_json_put_str(o, "voter", d->voter);
		rv_json_put_str(o, "patch", d->label);
		rv_json_put_str(o, "url", d->url);
		cJSON_AddNumberToObject(o, "bytes", (double)d->bytes);
		cJSON_AddNumberToObject(o, "tokens_in", (double)d->tokens_in);
		cJSON_AddBoolToObject(o, "counted", d->counted);
		cJSON_AddNumberToObject(o, "max_tokens", d->max_tokens);
		cJSON_AddNumberToObject(o, "worst", d->worst);
		cJSON_AddNumberToObject(o, "estimate", d->estimate);
		cJSON_AddBoolToObject(o, "planned", d->planned);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The series applied before this one, not reviewed themselves. */
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
		rv_json_put_str(o, "title", mp_series_title(ps));
		cJSON_AddNumberToObject(o, "version", ps->version);
		cJSON_AddNumberToObject(o, "patches", (double)n);
		rv_json_put_str(o, "message_id",
				first ? first->message_id : NULL);
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

	rv_json_put_str(ser, "title", mp_series_title(s));
	cJSON_AddNumberToObject(ser, "version", s->version);
	cJSON_AddNumberToObject(ser, "total", s->total);
	cJSON_AddBoolToObject(ser, "complete", s->complete);
	for (i = 0; i < s->nmissing; i++)
		cJSON_AddItemToArray(missing,
				     cJSON_CreateNumber(s->missing[i]));
	cJSON_AddItemToObject(ser, "missing", missing);
	rv_json_put_str(ser, "cover_message_id",
			s->cover ? s->cover->message_id : NULL);
	cJSON_AddItemToObject(o, "series", ser);

	if (a) {
		cJSON *b = cJSON_CreateObject();

		cJSON_AddStringToObject(b, "id", a->base_id);
		cJSON_AddStringToObject(b, "source",
					(unsigned)a->base_source <
							ARRAY_SIZE(base_sources)
						? base_sources[a->base_source]
						: "unknown");
		rv_json_put_str(b, "note", a->base_note);
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

		rv_json_put_str(v, "name", r->voters[i]);
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
		rv_json_put_str(ab, "voter", c->voter);
		if (c->patch >= 0 && (size_t)c->patch < s->npatches)
			cJSON_AddNumberToObject(
				ab, "patch",
				rv_report_patch_number(s, (size_t)c->patch));
		else
			cJSON_AddNullToObject(ab, "patch"); /* the series tip */
		rv_json_put_str(ab, "reason",
				c->reason ? c->reason : "no answer");
		cJSON_AddItemToArray(abst, ab);
	}
	cJSON_AddItemToObject(o, "abstentions", abst);
	cJSON_AddNumberToObject(drop, "outside_patch", (double)r->dropped);
	cJSON_AddNumberToObject(drop, "hallucinated", (double)r->hallucinated);
	cJSON_AddNumberToObject(drop, "fixed_later", (double)r->fixed_later);
	cJSON_AddItemToObject(o, "dropped", drop);
	cJSON_AddItemToObject(o, "cost", json_cost(r));
	rv_json_put_str(o, "stepdown", r->stepdown);
	cJSON_AddItemToObject(o, "plan", json_plan(r));
	{
		cJSON *b = cJSON_CreateArray();
		size_t n;

		for (n = 0; n < r->nbreakers; n++)
			cJSON_AddItemToArray(
				b, cJSON_CreateString(r->breakers[n]));
		cJSON_AddItemToObject(o, "breakers", b);
	}
	/* Only a dry run has its requests; a review that sent them, null. */
	cJSON_AddItemToObject(o, "dry_run",
			      r->dry ? json_dry(r) : cJSON_CreateNull());
	cJSON_AddBoolToObject(o, "no_history", r->no_history);
	return o;
}

int rv_json_report_new(struct rv_json_report **out, const char *version)
{
	struct rv_json_report *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (!j)
		return RV_ERR_NOMEM;
	j->root = cJSON_CreateObject();
	cJSON_AddStringToObject(j->root, "schema", JSON_SCHEMA);
	cJSON_AddStringToObject(j->root, "version", version);
	j->reviews = cJSON_AddArrayToObject(j->root, "reviews");
	if (!j->root || !j->reviews) {
		rv_json_report_free(j);
		return RV_ERR_NOMEM;
	}
	*out = j;
	return 0;
}

void rv_json_report_add(struct rv_json_report *j, const struct rv_review *r,
			const char (*ids)[RV_OID_HEXSZ + 1], size_t n)
{
	cJSON *o = json_review(r), *arr;
	size_t i;

	if (n) {
		cJSON_AddStringToObject(o, "commit", ids[n - 1]);
		arr = cJSON_AddArrayToObject(o, "commits");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(ids[i]));
	}
	cJSON_AddItemToArray(j->reviews, o);
}

void rv_json_report_skip(struct rv_json_report *j, const char *commit,
			 const char *title, double risk)
{
	cJSON *arr, *o;

	arr = cJSON_GetObjectItem(j->root, "skipped");
	if (!arr)
		arr = cJSON_AddArrayToObject(j->root, "skipped");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "commit", commit);
	rv_json_put_str(o, "title", title);
	if (risk >= 0)
		cJSON_AddNumberToObject(o, "risk", risk);
	else
		cJSON_AddNullToObject(o, "risk");
	cJSON_AddItemToArray(arr, o);
}

char *rv_json_report_print(const struct rv_json_report *j)
{
	return cJSON_Print(j->root);
}

void rv_json_report_free(struct rv_json_report *j)
{
	if (!j)
		return;
	cJSON_Delete(j->root);
	free(j);
}
