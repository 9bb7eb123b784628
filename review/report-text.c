// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report-text.c - the review as text a maintainer reads in a terminal.
 */
#include <ctype.h>
#include <string.h>

#include "report-int.h"

#define WRAP 78

static const char *const base_sources[] = {
	[RV_BASE_OPTION] = "--base",
	[RV_BASE_SERIES] = "base-commit of the series",
	[RV_BASE_BRANCH] = "the list's branch",
	[RV_BASE_HEAD] = "HEAD",
	[RV_BASE_PARENT] = "the parent of its first commit",
};

void rv_wrap(struct sb *out, const char *text, const char *indent, size_t width,
	     bool keep_lines)
{
	size_t col = 0, ind = strlen(indent);
	const char *p = text;

	while (*p) {
		const char *w;
		size_t n;

		if (*p == '\n' && (keep_lines || p[1] == '\n')) {
			/* Keep the author's paragraph (and, asked, line)
			 * breaks. */
			if (col)
				sb_addch(out, '\n');
			col = 0;
			if (p[1] == '\n') {
				sb_addch(out, '\n');
				p++;
			}
			p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		w = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		n = (size_t)(p - w);
		if (col && col + 1 + n > width) {
			sb_addch(out, '\n');
			col = 0;
		}
		if (!col) {
			sb_adds(out, indent);
			col = ind;
		} else {
			sb_addch(out, ' ');
			col++;
		}
		sb_add(out, w, n);
		col += n;
	}
	if (col)
		sb_addch(out, '\n');
}

static const char *patch_title(const struct mp_patch *p)
{
	const char *t = mp_patch_title(p);

	return t ? t : "(no subject)";
}

int rv_report_patch_number(const struct mp_series *s, size_t k)
{
	const struct mp_patch *p = k < s->npatches ? s->patches[k] : NULL;

	return p && p->subject.index ? p->subject.index : (int)k + 1;
}

/* "2/3" for patch k of the series. */
static void add_patch_number(struct sb *out, const struct mp_series *s,
			     size_t k)
{
	int total = s->total > 0 ? s->total : (int)s->npatches;

	sb_addf(out, "%d/%d", rv_report_patch_number(s, k), total);
}

static const char *series_title(const struct mp_series *s)
{
	const struct mp_patch *p = mp_series_first(s);

	/* mp_series_title() skips an untouched cover letter subject. */
	return !p		    ? "(empty series)"
	       : mp_series_title(s) ? mp_series_title(s)
				    : patch_title(p);
}

/* The series applied first, each on a line; not reviewed here. */
static void add_prereqs(struct sb *out, const struct rv_review *r)
{
	size_t i, k, n;

	for (i = 0; i < r->nprereqs; i++) {
		const struct mp_series *ps = r->prereqs[i];
		const struct mp_patch *first = ps->cover;

		for (k = n = 0; k < ps->npatches; k++) {
			n += ps->patches[k] != NULL;
			if (!first)
				first = ps->patches[k];
		}
		sb_addf(out, "prerequisite: %s (v%d, %zu patch%s",
			series_title(ps), ps->version ? ps->version : 1, n,
			n == 1 ? "" : "es");
		if (first && first->message_id)
			sb_addf(out, ", <%s>", first->message_id);
		sb_addf(out, ") %s, not reviewed itself\n",
			r->apply ? "applied first" : "in the same input");
	}
}

static void add_apply(struct sb *out, const struct rv_review *r)
{
	const struct mp_series *s = r->series;
	const struct rv_apply_result *a = r->apply;
	size_t k, slot = 0;

	if (!a) {
		sb_adds(out, "base: none (no repository; the diff was reviewed "
			     "alone)\n");
		add_prereqs(out, r);
		return;
	}
	sb_addf(out, "base: %.12s (%s)\n", a->base_id,
		(unsigned)a->base_source < ARRAY_SIZE(base_sources)
			? base_sources[a->base_source]
			: "?");
	if (a->base_note)
		sb_addf(out, "      %s\n", a->base_note);
	add_prereqs(out, r);
	for (k = 0; k < s->npatches; k++) {
		const struct rv_patch_result *pr;

		sb_adds(out, "  ");
		add_patch_number(out, s, k);
		if (!s->patches[k]) {
			sb_adds(out, "  missing  (not in the mail)\n");
			continue;
		}
		if (slot >= a->npatches) {
			sb_addf(out, "  skipped  %s\n",
				patch_title(s->patches[k]));
			continue;
		}
		pr = &a->patches[slot++];
		if (pr->applied)
			sb_addf(out, "  applied%s %s\n",
				pr->three_way ? " (3-way)" : "",
				patch_title(s->patches[k]));
		else if (pr->error)
			sb_addf(out, "  FAILED   %s\n           %s\n",
				patch_title(s->patches[k]), pr->error);
		else
			sb_addf(out,
				"  skipped  %s (an earlier patch failed)\n",
				patch_title(s->patches[k]));
	}
}

static void add_quote(struct sb *out, const char *quote)
{
	const char *p = quote, *nl;

	while (p && *p) {
		nl = strchr(p, '\n');
		sb_adds(out, "    > +");
		sb_add(out, p, nl ? (size_t)(nl - p) : strlen(p));
		sb_addch(out, '\n');
		p = nl ? nl + 1 : NULL;
	}
}

/* ---- LLM voters --------------------------------------------------------- */

static bool voter_is_llm(const struct rv_review *r, const char *name,
			 double *weight)
{
	size_t i;

	for (i = 0; i < r->nvoters; i++)
		if (!strcmp(r->voters[i], name)) {
			*weight = r->weights ? r->weights[i] : 1.0;
			return r->is_llm && r->is_llm[i];
		}
	*weight = 1.0;
	return false;
}

/* The past fix f cites, from the patch's similar list when we have it. */
static void add_cites(struct sb *out, const struct rv_review *r,
		      const struct rv_finding *f)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(f->cites) && f->cites[i][0]; i++) {
		const char *subject = NULL;

		if (f->patch >= 0 && (size_t)f->patch < r->npatch_info) {
			const struct rv_similar_list *l = &r->similar[f->patch];

			for (j = 0; j < l->n; j++)
				if (!strncmp(l->items[j].fix_id, f->cites[i],
					     strlen(f->cites[i])))
					subject = l->items[j].fix_subject;
		}
		sb_addf(out, "    cites past fix %.12s", f->cites[i]);
		if (subject)
			sb_addf(out, " \"%s\"", subject);
		sb_adds(out, "\n");
	}
}

/* "votes: 2/3 (a, b)": model votes over the models that answered. */
static void add_llm_tally(struct sb *out, const struct rv_review *r,
			  const struct rv_finding *f)
{
	double llm = 0, answered = 0, w;
	size_t i, j, noff = 0;
	bool first = true;

	for (i = 0; i < r->nvoters; i++) {
		if (!r->is_llm[i])
			continue;
		for (j = 0; j < r->ncalls; j++)
			if (r->calls[j].answered &&
			    !strcmp(r->calls[j].voter, r->voters[i]))
				break;
		if (j < r->ncalls)
			answered += r->weights ? r->weights[i] : 1.0;
	}
	for (i = 0; i < f->nvoters; i++)
		if (voter_is_llm(r, f->voters[i], &w))
			llm += w;
		else
			noff++;
	add_cites(out, r, f);
	sb_addf(out, "    votes: %g/%g (", llm, answered);
	for (i = 0; i < f->nvoters; i++) {
		if (!voter_is_llm(r, f->voters[i], &w))
			continue;
		sb_addf(out, "%s%s", first ? "" : ", ", f->voters[i]);
		first = false;
	}
	sb_adds(out, ")");
	if (noff) {
		sb_adds(out, " + offline: ");
		for (i = 0, first = true; i < f->nvoters; i++) {
			if (voter_is_llm(r, f->voters[i], &w))
				continue;
			sb_addf(out, "%s%s", first ? "" : ", ", f->voters[i]);
			first = false;
		}
	}
	sb_adds(out, "\n\n");
}

/* Who answered, who abstained on what and why. */
static void add_llm_voters(struct sb *out, const struct rv_review *r)
{
	const struct mp_series *s = r->series;
	size_t i, nab = 0;

	for (i = 0; i < r->ncalls; i++)
		nab += !r->calls[i].answered;
	sb_addf(out, "models: %zu asked, %zu answered", r->nllm,
		r->llm_answered);
	if (r->llm_answered < r->nllm)
		sb_addf(out, ", %zu abstained", r->nllm - r->llm_answered);
	sb_adds(out, "\n");
	for (i = 0; i < r->ncalls && nab; i++) {
		const struct rv_llm_call *c = &r->calls[i];

		if (c->answered)
			continue;
		sb_addf(out, "  %s abstained on ", c->voter);
		if (c->patch >= 0 && (size_t)c->patch < s->npatches) {
			sb_adds(out, "patch ");
			add_patch_number(out, s, (size_t)c->patch);
		} else {
			sb_adds(out, "the series tip");
		}
		sb_addf(out, ": %s\n", c->reason ? c->reason : "no answer");
	}
	if (!r->llm_answered)
		sb_adds(out, "  no model answered: the offline voters voted "
			     "alone\n");
}

static void add_llm_after(struct sb *out, const struct rv_review *r)
{
	size_t i;

	if (r->hallucinated)
		sb_addf(out,
			"%zu finding%s dropped: quoting code the "
			"post-image does not have, or lines past its end.\n",
			r->hallucinated, r->hallucinated == 1 ? "" : "s");
	if (r->fixed_later)
		sb_addf(out,
			"%zu finding%s dropped: a later patch of the "
			"series changes those lines.\n",
			r->fixed_later, r->fixed_later == 1 ? "" : "s");
	if (r->preexisting)
		sb_addf(out,
			"%zu finding%s about code the patch did not "
			"touch (pre-existing, not mailed).\n",
			r->preexisting, r->preexisting == 1 ? "" : "s");
	if (r->nleft_out) {
		sb_adds(out, "context left out of the prompts (budget):\n");
		for (i = 0; i < r->nleft_out; i++)
			sb_addf(out, "  %s\n", r->left_out[i]);
	}
}

static void add_cost(struct sb *out, const struct rv_review *r)
{
	long tin = 0, tout = 0;
	double cost = 0;
	size_t i, nreq = 0, nbudget = 0, nbreaker = 0, nclamped = 0;

	/* Money: the plan, the step taken, the cache, the day's budget. */
	if (r->plan.made && r->plan.text)
		sb_addf(out, "plan: %s\n", r->plan.text);
	if (r->stepdown)
		sb_addf(out, "step-down: %s\n", r->stepdown);
	for (i = 0; i < r->nbreakers; i++)
		sb_addf(out, "circuit: %s\n", r->breakers[i]);
	if (!r->ncalls) {
		sb_adds(out, "cost: $0.00 (offline voters only)\n");
		goto day;
	}
	for (i = 0; i < r->ncalls; i++) {
		tin += r->calls[i].tokens_in;
		tout += r->calls[i].tokens_out;
		cost += r->calls[i].cost;
		nbudget += r->calls[i].budget;
		nbreaker += r->calls[i].breaker && !r->calls[i].attempts;
		nclamped += r->calls[i].clamped;
		nreq += !r->calls[i].cached && !r->calls[i].budget &&
			r->calls[i].attempts;
	}
	sb_addf(out, "cost: $%.4f (%zu request%s, %ld tokens in, %ld out", cost,
		nreq, nreq == 1 ? "" : "s", tin, tout);
	if (r->ncached)
		sb_addf(out,
			"; %zu answer%s reused from the cache at no cost: "
			"unchanged since an earlier review",
			r->ncached, r->ncached == 1 ? "" : "s");
	if (nbudget)
		sb_addf(out, "; %zu not sent: over budget", nbudget);
	if (nbreaker)
		sb_addf(out, "; %zu not sent: the voter's circuit was open",
			nbreaker);
	if (nclamped)
		sb_addf(out,
			"; %zu sent with max-tokens cut to what the budget "
			"left",
			nclamped);
	sb_adds(out, ")\n");
day:
	if (r->day_budget > 0 && r->list)
		sb_addf(out, "budget: $%.4f left today of $%.2f for list %s\n",
			r->day_left > 0 ? r->day_left : 0, r->day_budget,
			r->list);
}

static void add_finding(struct sb *out, const struct rv_review *r,
			const struct rv_finding *f, size_t n)
{
	const struct mp_series *s = r->series;
	size_t i;

	sb_addf(out, "[%zu] %s: %s\n", n, rv_severity_name(f->severity),
		f->title ? f->title : "(untitled)");
	sb_addf(out, "    %s:%d", f->file ? f->file : "?", f->line_start);
	if (f->line_end > f->line_start)
		sb_addf(out, "-%d", f->line_end);
	if (f->function)
		sb_addf(out, " in %s()", f->function);
	if (f->patch >= 0 && (size_t)f->patch < s->npatches) {
		sb_adds(out, ", patch ");
		add_patch_number(out, s, (size_t)f->patch);
	}
	sb_addf(out, ", %s\n", f->category ? f->category : "general");
	if (f->quote && *f->quote)
		add_quote(out, f->quote);
	if (f->explanation && *f->explanation)
		rv_wrap(out, f->explanation, "    ", WRAP, true);
	if (r->nllm && r->llm_answered) {
		add_llm_tally(out, r, f);
		return;
	}
	sb_addf(out, "    votes: %zu/%zu (", f->nvoters, r->nvoters);
	for (i = 0; i < f->nvoters; i++)
		sb_addf(out, "%s%s", i ? ", " : "", f->voters[i]);
	sb_adds(out, ")\n\n");
}

/*
 * Each patch's risk score and the past fixes most like
 * it, shown whether or not a finding reached quorum.
 */
#define REPORT_SIMILAR_SHOWN 2

static void add_history(struct sb *out, const struct rv_review *r)
{
	const struct mp_series *s = r->series;
	size_t k, i;

	if (r->no_history) {
		sb_adds(out, "history: no history index; run `quorum index` "
			     "to ground reviews in past fixes\n");
		return;
	}
	if (!r->npatch_info)
		return;
	sb_adds(out, "history (risk: how much a patch looks like the ones "
		     "that needed fixes later, 0..1):\n");
	for (k = 0; k < r->npatch_info && k < s->npatches; k++) {
		const struct rv_similar_list *l = &r->similar[k];

		if (!s->patches[k] || !s->patches[k]->diff)
			continue;
		sb_adds(out, "  ");
		add_patch_number(out, s, k);
		if (r->risk[k] < 0)
			sb_adds(out, "  risk n/a");
		else
			sb_addf(out, "  risk %.2f", r->risk[k]);
		if (r->risk_why[k])
			sb_addf(out, ": %s", r->risk_why[k]);
		sb_addch(out, '\n');
		for (i = 0; i < l->n && i < REPORT_SIMILAR_SHOWN; i++)
			sb_addf(out,
				"      like %.12s \"%s\", %s by %.12s \"%s\" "
				"(score %.2f)\n",
				l->items[i].bug_id,
				l->items[i].bug_subject
					? l->items[i].bug_subject
					: "",
				!strcmp(l->items[i].kind, "revert") ? "reverted"
								    : "fixed",
				l->items[i].fix_id,
				l->items[i].fix_subject
					? l->items[i].fix_subject
					: "",
				l->items[i].score);
	}
}

int rv_report_text(const struct rv_review *r, struct sb *out)
{
	const struct mp_series *s = r->series;
	size_t i;

	sb_addf(out, "quorum review: %s\n", series_title(s));
	sb_addf(out, "series: v%d, %d patch%s", s->version ? s->version : 1,
		s->total > 0 ? s->total : (int)s->npatches,
		(s->total > 0 ? s->total : (int)s->npatches) == 1 ? "" : "es");
	if (!s->complete && s->nmissing) {
		sb_adds(out, ", incomplete: missing");
		for (i = 0; i < s->nmissing; i++)
			sb_addf(out, " %d", s->missing[i]);
	}
	sb_addch(out, '\n');
	add_apply(out, r);
	if (r->apply && r->apply->failed >= 0) {
		sb_adds(out, "\nNot reviewed: the series does not apply.\n");
		return 0;
	}
	sb_adds(out, "voters: ");
	for (i = 0; i < r->nvoters; i++)
		sb_addf(out, "%s%s", i ? ", " : "", r->voters[i]);
	sb_addf(out, " (a finding needs %d)\n", r->quorum);
	if (r->nllm)
		add_llm_voters(out, r);
	sb_adds(out, "\n");

	if (!r->findings.n)
		sb_adds(out, "No findings at quorum.\n");
	else
		sb_addf(out, "%zu finding%s at quorum:\n\n", r->findings.n,
			r->findings.n == 1 ? "" : "s");
	for (i = 0; i < r->findings.n; i++)
		add_finding(out, r, &r->findings.items[i], i + 1);
	if (r->minority.n)
		sb_addf(out, "%zu more below quorum (not shown).\n",
			r->minority.n);
	if (r->dropped > r->hallucinated)
		sb_addf(out,
			"%zu finding%s dropped: not on lines the patch has.\n",
			r->dropped - r->hallucinated,
			r->dropped - r->hallucinated == 1 ? "" : "s");
	add_llm_after(out, r);
	add_history(out, r);
	add_cost(out, r);
	return 0;
}
