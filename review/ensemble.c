// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ensemble.c - ask every LLM voter about every patch of a series at
 * once. Each (voter, patch) pair is one request with its own grounded
 * prompt and its own random data boundary; all run on one curl multi
 * handle (llm-run.c). A voter whose request fails or whose answer does
 * not parse abstains on that patch, with the reason recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "llm.h"

#define DEFAULT_CONTEXT_TOKENS 24000
#define BYTES_PER_TOKEN 4

struct job {
	size_t voter;
	size_t patch;
	struct rv_llm_req req;
	bool sent;
	char *reason; /* why no request was sent */
};

static void patch_label(const struct mp_series *s, size_t k, char *buf,
			size_t n)
{
	const struct mp_patch *p = s->patches[k];
	int total = s->total > 0 ? s->total : (int)s->npatches;

	snprintf(buf, n, "%d/%d",
		 p && p->subject.index ? p->subject.index : (int)k + 1, total);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, len = strlen(needle);
	const char *p = hay;

	while ((p = strstr(p, needle))) {
		n++;
		p += len;
	}
	return n;
}

/* Every boundary in user opens or closes one of our blocks. */
static bool blocks_sound(const char *user, const char *b)
{
	char open[64], close[64];

	snprintf(open, sizeof(open), "<<<%s ", b);
	snprintf(close, sizeof(close), "<<<END %s>>>", b);
	/* The header names the boundary twice, once in each form. */
	return count(user, b) == count(user, open) + count(user, close) &&
	       count(user, open) == count(user, close);
}

static int build_job(struct job *j, const struct rv_llm_voter *v,
		     const struct rv_context_in *in,
		     const struct rv_prompts *prompts, struct sb *left_out)
{
	struct sb sys = SB_INIT, user = SB_INIT, body = SB_INIT;
	const char *texts[4];
	char b[40];
	size_t budget;
	int tokens = v->context_tokens > 0 ? v->context_tokens
					   : DEFAULT_CONTEXT_TOKENS;
	struct sb hdr = SB_INIT;
	int ret = -1;

	texts[0] = in->patch->commit_message;
	texts[1] = in->patch->diff;
	texts[2] = in->patch->subject_raw;
	texts[3] = in->patch->notes;
	if (rv_boundary_make(b, texts, ARRAY_SIZE(texts)) < 0) {
		j->reason = xstrdup_or_null("no data boundary could be made");
		goto out;
	}
	if (rv_prompts_system(prompts, in->diff, b, &sys) < 0) {
		j->reason = xstrdup_or_null("the instructions are too large");
		goto out;
	}
	budget = (size_t)tokens * BYTES_PER_TOKEN;
	budget = budget > sys.len ? budget - sys.len : 0;
	if (rv_context_build(in, budget, b, &user, left_out) < 0) {
		struct sb r = SB_INIT;

		sb_addf(&r,
			"the patch does not fit in its context budget of %d "
			"tokens",
			tokens);
		j->reason = sb_detach(&r, NULL);
		goto out;
	}
	if (!blocks_sound(user.buf, b)) {
		j->reason =
			xstrdup_or_null("the data holds the boundary token");
		goto out;
	}
	if (rv_llm_request_body(v, sys.buf, user.buf, &body) < 0) {
		j->reason = xstrdup_or_null("cannot build the request");
		goto out;
	}
	j->req.url = rv_llm_endpoint(v);
	j->req.body = sb_detach(&body, NULL);
	j->req.timeout = v->timeout > 0 ? v->timeout : 120;
	j->req.group_max = v->max_parallel > 0 ? v->max_parallel : 4;
	j->req.headers =
		curl_slist_append(NULL, "Content-Type: application/json");
	if (v->key && *v->key) {
		if (v->provider == RV_PROVIDER_ANTHROPIC)
			sb_addf(&hdr, "x-api-key: %s", v->key);
		else
			sb_addf(&hdr, "Authorization: Bearer %s", v->key);
		j->req.headers = curl_slist_append(j->req.headers, hdr.buf);
	}
	if (v->provider == RV_PROVIDER_ANTHROPIC)
		j->req.headers = curl_slist_append(
			j->req.headers, "anthropic-version: 2023-06-01");
	j->sent = true;
	ret = 0;
out:
	/* The key was in hdr: wipe it before the memory goes back. */
	if (hdr.buf)
		memset(hdr.buf, 0, hdr.alloc);
	sb_release(&hdr);
	sb_release(&sys);
	sb_release(&user);
	sb_release(&body);
	return ret;
}

/* Left-out notes, merged across voters that left out the same. */
struct note {
	char *where; /* "patch 2/3" */
	char *what;
	struct sb voters;
};

static void note_add(struct note **v, size_t *n, size_t *alloc,
		     const char *where, const char *what, const char *voter)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i].where, where) &&
		    !strcmp((*v)[i].what, what))
			break;
	if (i == *n) {
		ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[i].where = xstrdup_or_null(where);
		(*v)[i].what = xstrdup_or_null(what);
		sb_init(&(*v)[i].voters, 0);
		(*n)++;
	}
	sb_addf(&(*v)[i].voters, "%s%s", (*v)[i].voters.len ? ", " : "", voter);
}

static void record(struct rv_review *r, const struct rv_llm_voter *v,
		   struct job *j, struct rv_findings *pool)
{
	struct rv_llm_call *c;
	struct errmsg err = {""};
	struct sb text = SB_INIT;
	int n;

	r->calls = xrealloc(r->calls, (r->ncalls + 1) * sizeof(*r->calls));
	c = &r->calls[r->ncalls++];
	memset(c, 0, sizeof(*c));
	c->voter = xstrdup_or_null(v->name);
	c->patch = (int)j->patch;
	if (!j->sent) {
		c->reason = j->reason;
		j->reason = NULL;
		return;
	}
	c->attempts = j->req.attempts;
	c->http_status = j->req.status;
	c->seconds = j->req.seconds;
	c->prompt_bytes = j->req.body ? strlen(j->req.body) : 0;
	if (!j->req.ok) {
		c->reason = xstrdup_or_null(j->req.error);
		return;
	}
	text.cap = RV_LLM_MAX_ANSWER;
	if (rv_llm_extract(v, j->req.answer.buf ? j->req.answer.buf : "",
			   j->req.answer.len, &text, &c->tokens_in,
			   &c->tokens_out, &err) < 0) {
		struct sb why = SB_INIT;

		sb_addf(&why, "garbage answer: %s", err.msg);
		c->reason = sb_detach(&why, NULL);
		goto out;
	}
	c->cost = (double)c->tokens_in * v->price_in / 1e6 +
		  (double)c->tokens_out * v->price_out / 1e6;
	n = rv_llm_parse_answer(text.buf, text.len, v->name, (int)j->patch,
				pool, &err);
	if (n < 0) {
		struct sb why = SB_INIT;

		sb_addf(&why, "invalid answer%s: %s",
			rv_llm_cut_short(v, j->req.answer.buf,
					 j->req.answer.len)
				? " (cut short at max-tokens; raise it)"
				: "",
			err.msg);
		c->reason = sb_detach(&why, NULL);
		goto out;
	}
	c->answered = true;
	c->nfindings = (size_t)n;
out:
	sb_release(&text);
}

void rv_ensemble_run(struct rv_review *r, struct rv_repo *repo,
		     const struct rv_review_opts *opts,
		     const struct rv_ensemble_patch *pp, size_t np,
		     struct rv_findings *pool)
{
	static const struct rv_similar_list no_similar = {NULL, 0};
	const struct mp_series *s = r->series;
	struct rv_llm_run_opts ro = {0};
	struct note *notes = NULL;
	size_t nnotes = 0, nalloc = 0, njobs = 0, i, k, x;
	struct rv_llm_req *reqs;
	struct job *jobs;
	bool *answered;

	jobs = xcalloc(opts->nllm * np + 1, sizeof(*jobs));
	for (i = 0; i < opts->nllm; i++) {
		for (k = 0; k < np; k++) {
			struct rv_context_in in = {0};
			struct sb left = SB_INIT;
			char label[32];

			in.patch = pp[k].patch	     ? pp[k].patch
				   : k < s->npatches ? s->patches[k]
						     : NULL;
			if (!pp[k].diff || !in.patch)
				continue;
			if (pp[k].label)
				snprintf(label, sizeof(label), "%s",
					 pp[k].label);
			else
				patch_label(s, k, label, sizeof(label));
			in.diff = pp[k].diff;
			in.repo = repo;
			in.post_tree = pp[k].post_tree;
			in.similar = k < r->npatch_info ? &r->similar[k]
				     : r->npatch_info	? &no_similar
							: NULL;
			in.patch_label = label;
			jobs[njobs].voter = i;
			jobs[njobs].patch = k;
			jobs[njobs].req.group = i;
			build_job(&jobs[njobs], &opts->llm[i], &in,
				  opts->prompts, &left);
			if (left.len) {
				char where[48];

				snprintf(where, sizeof(where), "patch %s",
					 label);
				note_add(&notes, &nnotes, &nalloc, where,
					 left.buf, opts->llm[i].name);
			}
			sb_release(&left);
			njobs++;
		}
	}

	/* The requests that were built, side by side for the runner. */
	reqs = xcalloc(njobs + 1, sizeof(*reqs));
	for (i = 0, x = 0; i < njobs; i++)
		if (jobs[i].sent)
			reqs[x++] = jobs[i].req;
	ro.deadline = opts->deadline > 0 ? opts->deadline : 600;
	ro.retries = opts->retries > 0	 ? opts->retries
		     : opts->retries < 0 ? 0
					 : 2;
	if (ro.retries > 10)
		ro.retries = 10;
	ro.backoff = opts->backoff > 0 ? opts->backoff : 1.0;
	ro.max_answer = RV_LLM_MAX_ANSWER;
	rv_llm_run(reqs, x, &ro);
	for (i = 0, x = 0; i < njobs; i++)
		if (jobs[i].sent)
			jobs[i].req = reqs[x++];
	free(reqs);

	answered = xcalloc(opts->nllm + 1, sizeof(*answered));
	for (i = 0; i < njobs; i++) {
		record(r, &opts->llm[jobs[i].voter], &jobs[i], pool);
		if (r->calls[r->ncalls - 1].answered)
			answered[jobs[i].voter] = true;
		rv_llm_req_release(&jobs[i].req);
		free(jobs[i].reason);
	}
	r->nllm = opts->nllm;
	for (i = 0; i < opts->nllm; i++)
		r->llm_answered += answered[i];
	free(answered);
	free(jobs);

	for (i = 0; i < nnotes; i++) {
		struct sb line = SB_INIT;

		sb_addf(&line, "%s (%s): %s", notes[i].where,
			notes[i].voters.buf, notes[i].what);
		r->left_out = xrealloc(
			r->left_out, (r->nleft_out + 1) * sizeof(*r->left_out));
		r->left_out[r->nleft_out++] = sb_detach(&line, NULL);
		free(notes[i].where);
		free(notes[i].what);
		sb_release(&notes[i].voters);
	}
	free(notes);
}
