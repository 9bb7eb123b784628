// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * voter-llm.c - ask every LLM voter about every patch of a series at
 * once. Each (voter, patch) pair is one request with its own grounded
 * prompt and its own random data boundary; all run on one curl multi
 * handle (voter-llm-run.c). A voter whose request fails or whose answer does
 * not parse abstains on that patch, with the reason recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cost.h"
#include "voter-llm.h"

#define DEFAULT_CONTEXT_TOKENS 24000
#define BYTES_PER_TOKEN 4

struct job {
	size_t voter;
	size_t patch;
	struct rv_llm_req req;
	bool sent;
	char *reason; /* why no request was sent */
	/* The cache and the budget. */
	char key[41]; /* cache key, "" when not cacheable */
	char *cached; /* the cached answer text, or NULL */
	int64_t resv; /* open reservation, 0 when none */
	double worst; /* USD reserved for it */
	bool budget;  /* not sent for the budget */
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
		   struct job *j, struct rv_findings *pool,
		   struct rv_ledger *ledger)
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
	c->budget = j->budget;
	c->reserved = j->worst;
	if (j->cached) {
		/* The same patch, voter and prompt: no request. */
		n = rv_llm_parse_answer(j->cached, strlen(j->cached), v->name,
					(int)j->patch, pool, &err);
		if (n >= 0) {
			c->answered = true;
			c->cached = true;
			c->nfindings = (size_t)n;
			r->ncached++;
			return;
		}
	}
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
	/* Cached input tokens at their own price. */
	rv_cost_of_answer(v, j->req.answer.buf, j->req.answer.len,
			  &c->tokens_in, &c->tokens_out, &c->tokens_cached,
			  &c->cost);
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
	if (ledger && j->key[0])
		rv_cache_put(ledger, j->key, text.buf, text.len);
out:
	sb_release(&text);
}

/* ---- cache, caps, step-down ------------------------------------------- */

/* What a voter sees of prepared patch k; false when k has no patch. */
static bool job_in(struct rv_review *r, struct rv_repo *repo,
		   const struct rv_ensemble_patch *pp, size_t k,
		   struct rv_context_in *in, char *label, size_t labelsz)
{
	static const struct rv_similar_list no_similar = {NULL, 0};
	const struct mp_series *s = r->series;

	memset(in, 0, sizeof(*in));
	in->patch = pp[k].patch	      ? pp[k].patch
		    : k < s->npatches ? s->patches[k]
				      : NULL;
	if (!pp[k].diff || !in->patch)
		return false;
	if (pp[k].label)
		snprintf(label, labelsz, "%s", pp[k].label);
	else
		patch_label(s, k, label, labelsz);
	in->diff = pp[k].diff;
	in->repo = repo;
	in->post_tree = pp[k].post_tree;
	in->similar = k < r->npatch_info ? &r->similar[k]
		      : r->npatch_info	 ? &no_similar
					 : NULL;
	in->patch_label = label;
	return true;
}

/* A boundary that never occurs, so the key does not change per run. */
#define CACHE_BOUNDARY "00000000000000000000000000000000"

/* Look j up in the cache; true on a hit (j->cached holds the answer). */
static bool cache_lookup(struct job *j, const struct rv_llm_voter *v,
			 const struct rv_review_opts *opts,
			 const struct rv_context_in *in)
{
	struct sb sys = SB_INIT, ans = SB_INIT;
	bool hit = false;

	if (!opts->ledger || !in->patch->diff ||
	    rv_prompts_system(opts->prompts, in->diff, CACHE_BOUNDARY, &sys) <
		    0)
		goto out;
	if (rv_cache_key(v, in->patch->diff, in->patch->diff_len, sys.buf,
			 j->key) < 0) {
		j->key[0] = '\0';
		goto out;
	}
	ans.cap = RV_LLM_MAX_ANSWER;
	if (!opts->no_cache && rv_cache_get(opts->ledger, j->key, &ans) == 1) {
		j->cached = sb_detach(&ans, NULL);
		hit = true;
	}
out:
	sb_release(&sys);
	sb_release(&ans);
	return hit;
}

struct cost_run {
	struct rv_review *r;
	const struct rv_review_opts *opts;
	struct job *jobs;
	size_t *map; /* request index -> job index */
	struct rv_caps caps;
	char review_id[64];
};

static void cost_charge(const struct cost_run *cr, const struct job *j,
			struct rv_charge *c)
{
	const struct rv_llm_voter *v = &cr->opts->llm[j->voter];

	memset(c, 0, sizeof(*c));
	c->voter = v->name;
	c->model = v->model;
	c->list = cr->opts->list;
	c->series = cr->opts->series_key;
}

static int cost_admit(void *arg, size_t i, struct rv_llm_req *req)
{
	struct cost_run *cr = arg;
	struct job *j = &cr->jobs[cr->map[i]];
	const struct rv_review_opts *o = cr->opts;
	struct rv_charge c;
	struct errmsg err = {""};
	char why[200];
	double ttl;
	int rc;

	if (!o->ledger)
		return 0;
	cost_charge(cr, j, &c);
	/* It counts until the review's deadline has surely passed. */
	ttl = (o->deadline > 0 ? o->deadline : 600) + 300;
	rc = rv_ledger_reserve(o->ledger, &cr->caps, &c, j->worst, ttl,
			       &j->resv, why, sizeof(why), &err);
	if (rc == 1)
		return 0;
	j->budget = true;
	if (rc == 0)
		snprintf(req->error, sizeof(req->error), "budget: %s", why);
	else /* never spend what cannot be recorded */
		snprintf(req->error, sizeof(req->error), "budget: %s", err.msg);
	return 1;
}

static void cost_done(void *arg, size_t i, struct rv_llm_req *req)
{
	struct cost_run *cr = arg;
	struct job *j = &cr->jobs[cr->map[i]];
	const struct rv_llm_voter *v = &cr->opts->llm[j->voter];
	struct rv_charge c;
	long cached;

	if (!cr->opts->ledger || !j->resv)
		return;
	/*
	 * An HTTP error is not billed, nor is a request that never went
	 * out; one that went out and got no whole answer (a timeout, a
	 * reset, a cut body) may be: charge its worst case.
	 */
	if (!req->ok &&
	    (!req->body_sent ||
	     (req->status >= 300 || (req->status > 0 && req->status < 200)))) {
		rv_ledger_release(cr->opts->ledger, j->resv, NULL);
		j->resv = 0;
		return;
	}
	cost_charge(cr, j, &c);
	if (!req->ok ||
	    !rv_cost_of_answer(v, req->answer.buf, req->answer.len,
			       &c.tokens_in, &c.tokens_out, &cached, &c.cost)) {
		c.cost = j->worst;
		c.assumed = true;
	}
	rv_ledger_settle(cr->opts->ledger, j->resv, &c, NULL);
	j->resv = 0;
}

static double worst_sum(const struct rv_review_opts *opts, struct job *jobs,
			size_t n)
{
	double w = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!jobs[i].sent)
			continue;
		jobs[i].worst = rv_cost_worst(&opts->llm[jobs[i].voter],
					      strlen(jobs[i].req.body));
		w += jobs[i].worst;
	}
	return w;
}

static void job_drop(struct job *j, const char *why)
{
	rv_llm_req_release(&j->req);
	j->sent = false;
	j->budget = true;
	j->worst = 0;
	free(j->reason);
	j->reason = xstrdup_or_null(why);
}

/* The share of their input the sent jobs may keep to fit in left. */
static double shrink_factor(const struct rv_review_opts *opts,
			    const struct job *jobs, size_t njobs, double left)
{
	double in = 0, out = 0;
	size_t i;

	for (i = 0; i < njobs; i++) {
		double bytes;

		if (!jobs[i].sent)
			continue;
		bytes = (double)strlen(jobs[i].req.body);
		in += bytes * opts->llm[jobs[i].voter].price_in / 1e6;
		out += jobs[i].worst -
		       bytes * opts->llm[jobs[i].voter].price_in / 1e6;
	}
	return in > 0 ? (left - out) / in * 0.9 : 0;
}

/* Build j again with f of the context it holds now, at most. */
static void shrink_job(struct rv_review *r, struct rv_repo *repo,
		       const struct rv_review_opts *opts,
		       const struct rv_ensemble_patch *pp, struct job *j,
		       double f)
{
	struct rv_llm_voter v = opts->llm[j->voter];
	double now = (double)strlen(j->req.body) / BYTES_PER_TOKEN;
	struct rv_context_in cin;
	struct sb lost = SB_INIT;
	char label[64];
	int t = v.context_tokens > 0 ? v.context_tokens
				     : DEFAULT_CONTEXT_TOKENS;

	if (!job_in(r, repo, pp, j->patch, &cin, label, sizeof(label)))
		return;
	if (now < t)
		t = (int)now;
	v.context_tokens = (int)(t * f) > 256 ? (int)(t * f) : 256;
	rv_llm_req_release(&j->req);
	j->sent = false;
	j->req.group = j->voter;
	/* A short-context answer is not the full one: never cached. */
	j->key[0] = '\0';
	build_job(j, &v, &cin, opts->prompts, &lost);
	sb_release(&lost);
}

/* "; " unless msg already ends in one. */
static const char *step_sep(const struct sb *msg)
{
	return msg->buf[msg->len - 2] == ';' ? "" : "; ";
}

/*
 * Step 1: drop the most expensive voters while enough remain for a
 * quorum. Returns the worst case of what is left.
 */
static double drop_costly_voters(const struct rv_review_opts *opts,
				 struct job *jobs, size_t njobs, double left,
				 double w, struct sb *msg)
{
	struct sb names = SB_INIT;
	double *vcost = xcalloc(opts->nllm + 1, sizeof(*vcost));
	size_t need, active, i;

	need = opts->quorum > 0 ? (size_t)opts->quorum : opts->nllm > 1 ? 2 : 1;
	for (;;) {
		size_t top = opts->nllm;

		memset(vcost, 0, opts->nllm * sizeof(*vcost));
		for (i = 0; i < njobs; i++)
			if (jobs[i].sent)
				vcost[jobs[i].voter] += jobs[i].worst;
		for (i = 0, active = 0; i < opts->nllm; i++) {
			if (vcost[i] <= 0)
				continue;
			active++;
			if (top == opts->nllm || vcost[i] > vcost[top])
				top = i;
		}
		if (w <= left || active <= need || top == opts->nllm)
			break;
		for (i = 0; i < njobs; i++)
			if (jobs[i].sent && jobs[i].voter == top)
				job_drop(&jobs[i], "budget: dropped as the "
						   "most expensive voter");
		sb_addf(&names, "%s%s", names.len ? ", " : "",
			opts->llm[top].name);
		w = worst_sum(opts, jobs, njobs);
	}
	free(vcost);
	if (names.len)
		sb_addf(msg,
			"dropped the most expensive voter(s) %s, the "
			"quorum can still be met",
			names.buf);
	sb_release(&names);
	return w;
}

/* Step 2: shrink every prompt's context to what the budget holds. */
static double shrink_contexts(struct rv_review *r, struct rv_repo *repo,
			      const struct rv_review_opts *opts,
			      const struct rv_ensemble_patch *pp,
			      struct job *jobs, size_t njobs, double left,
			      double w, struct sb *msg)
{
	double f = shrink_factor(opts, jobs, njobs, left);
	size_t i;

	if (f < 0.1 || f >= 1)
		return w;
	for (i = 0; i < njobs; i++)
		if (jobs[i].sent)
			shrink_job(r, repo, opts, pp, &jobs[i], f);
	sb_addf(msg, "%sshrank the context to %d%%", step_sep(msg),
		(int)(f * 100));
	return worst_sum(opts, jobs, njobs);
}

/*
 * Step 3: ask only about the highest-risk patches (the series tip goes
 * first); step 4, when nothing fits: the offline voters vote alone.
 */
static void keep_riskiest_patches(struct rv_review *r,
				  const struct rv_review_opts *opts,
				  struct job *jobs, size_t njobs, double left,
				  double w, struct sb *msg)
{
	const struct mp_series *s = r->series;
	struct sb names = SB_INIT;
	size_t i, k, active;

	while (w > left) {
		size_t drop = SIZE_MAX;
		double low = 2;

		for (i = 0; i < njobs; i++) {
			double risk;

			if (!jobs[i].sent)
				continue;
			k = jobs[i].patch;
			if (k >= s->npatches) {
				drop = k;
				break;
			}
			risk = k < r->npatch_info ? r->risk[k] : -1;
			if (drop == SIZE_MAX || risk < low ||
			    (risk == low && k > drop)) {
				drop = k;
				low = risk;
			}
		}
		if (drop == SIZE_MAX)
			break;
		for (i = 0; i < njobs; i++)
			if (jobs[i].sent && jobs[i].patch == drop)
				job_drop(&jobs[i],
					 "budget: a lower-risk patch, left to "
					 "the offline voters");
		if (drop < s->npatches) {
			char label[32];

			patch_label(s, drop, label, sizeof(label));
			sb_addf(&names, "%s%s", names.len ? ", " : "", label);
		} else {
			sb_addf(&names, "%sthe series tip",
				names.len ? ", " : "");
		}
		w = worst_sum(opts, jobs, njobs);
	}
	for (i = 0, active = 0; i < njobs; i++)
		active += jobs[i].sent;
	if (active)
		sb_addf(msg, "%sreviewed only the %s (left out: %s)",
			step_sep(msg),
			r->npatch_info ? "highest-risk patches"
				       : "first patches, with no history "
					 "index to rank them by risk",
			sb_str(&names));
	else
		sb_addf(msg, "%sno request fits: only the offline voters voted",
			step_sep(msg));
	sb_release(&names);
}

/*
 * When the review's worst case does not fit what is left under the caps,
 * first drop the most expensive voters while the quorum can still be
 * met, then shrink the context, then keep only the highest-risk patches,
 * else leave it to the offline voters; r->stepdown says which.
 */
static void step_down(struct rv_review *r, struct rv_repo *repo,
		      const struct rv_review_opts *opts,
		      const struct rv_ensemble_patch *pp, struct job *jobs,
		      size_t njobs, const struct rv_caps *caps)
{
	struct sb msg = SB_INIT;
	double left, w;
	char which[200];

	if (rv_ledger_left(opts->ledger, caps, &left, which, sizeof(which),
			   NULL) < 0)
		return; /* each request still asks before it is sent */
	w = worst_sum(opts, jobs, njobs);
	if (w <= left || w <= 0)
		return;
	if (left < 0)
		left = 0;
	sb_addf(&msg,
		"budget short: $%.4f left under %s, the review could "
		"cost $%.4f; ",
		left, which, w);
	w = drop_costly_voters(opts, jobs, njobs, left, w, &msg);
	if (w > left)
		w = shrink_contexts(r, repo, opts, pp, jobs, njobs, left, w,
				    &msg);
	if (w > left)
		keep_riskiest_patches(r, opts, jobs, njobs, left, w, &msg);
	r->stepdown = sb_detach(&msg, NULL);
}

/* The caps every request of this review counts against. */
static void cost_run_init(struct cost_run *cr, struct rv_review *r,
			  const struct rv_review_opts *opts, struct job *jobs)
{
	static unsigned nreview;

	cr->r = r;
	cr->opts = opts;
	cr->jobs = jobs;
	snprintf(cr->review_id, sizeof(cr->review_id), "%ld-%u-%p",
		 (long)getpid(), nreview++, (void *)r);
	cr->caps.list = opts->list;
	cr->caps.review = cr->review_id;
	cr->caps.per_review = opts->budget_review;
	cr->caps.per_day = opts->budget_day;
	cr->caps.per_run = opts->budget_run;
	cr->caps.monthly = opts->budget_month;
}

/*
 * One job per (LLM voter, prepared patch): a cached answer, or a request
 * built to fit the voter's context budget (what was left out goes to
 * notes). Returns how many jobs were made.
 */
static size_t build_jobs(struct rv_review *r, struct rv_repo *repo,
			 const struct rv_review_opts *opts,
			 const struct rv_ensemble_patch *pp, size_t np,
			 struct job *jobs, struct note **notes, size_t *nnotes,
			 size_t *nalloc)
{
	const struct mp_series *s = r->series;
	size_t njobs = 0, i, k;

	for (i = 0; i < opts->nllm; i++) {
		size_t hits = 0;

		for (k = 0; k < np; k++) {
			struct rv_context_in in;
			struct sb left = SB_INIT;
			char label[64];

			if (!job_in(r, repo, pp, k, &in, label, sizeof(label)))
				continue;
			/*
			 * An unchanged patch reuses the answer; its series
			 * tip differs but is not worth paying for.
			 */
			if (k >= s->npatches && hits) {
				char what[96];

				snprintf(what, sizeof(what),
					 "not asked again, %zu patch%s "
					 "unchanged since an earlier review",
					 hits, hits == 1 ? "" : "es");
				note_add(notes, nnotes, nalloc,
					 "the series tip", what,
					 opts->llm[i].name);
				continue;
			}
			if (k < s->npatches &&
			    cache_lookup(&jobs[njobs], &opts->llm[i], opts,
					 &in)) {
				jobs[njobs].voter = i;
				jobs[njobs].patch = k;
				hits++;
				njobs++;
				continue;
			}
			jobs[njobs].voter = i;
			jobs[njobs].patch = k;
			jobs[njobs].req.group = i;
			build_job(&jobs[njobs], &opts->llm[i], &in,
				  opts->prompts, &left);
			if (left.len) {
				char where[48];

				snprintf(where, sizeof(where), "patch %.40s",
					 label);
				note_add(notes, nnotes, nalloc, where, left.buf,
					 opts->llm[i].name);
			}
			sb_release(&left);
			njobs++;
		}
	}
	return njobs;
}

/* Send the jobs that have a request, all at once, within the caps. */
static void send_jobs(const struct rv_review_opts *opts, struct job *jobs,
		      size_t njobs, struct cost_run *cr)
{
	struct rv_llm_run_opts ro = {0};
	struct rv_llm_req *reqs;
	size_t i, x;

	/* The requests that were built, side by side for the runner. */
	reqs = xcalloc(njobs + 1, sizeof(*reqs));
	cr->map = xcalloc(njobs + 1, sizeof(*cr->map));
	for (i = 0, x = 0; i < njobs; i++)
		if (jobs[i].sent) {
			cr->map[x] = i;
			reqs[x++] = jobs[i].req;
		}
	ro.deadline = opts->deadline > 0 ? opts->deadline : 600;
	ro.retries = opts->retries > 0	 ? opts->retries
		     : opts->retries < 0 ? 0
					 : 2;
	if (ro.retries > 10)
		ro.retries = 10;
	ro.backoff = opts->backoff > 0 ? opts->backoff : 1.0;
	ro.max_answer = RV_LLM_MAX_ANSWER;
	ro.admit = cost_admit;
	ro.done = cost_done;
	ro.arg = cr;
	rv_llm_run(reqs, x, &ro);
	free(cr->map);
	cr->map = NULL;
	for (i = 0, x = 0; i < njobs; i++)
		if (jobs[i].sent)
			jobs[i].req = reqs[x++];
	free(reqs);
}

/* Record every job's call and findings in r and pool, and free the jobs. */
static void record_jobs(struct rv_review *r, const struct rv_review_opts *opts,
			struct job *jobs, size_t njobs,
			struct rv_findings *pool)
{
	bool *answered = xcalloc(opts->nllm + 1, sizeof(*answered));
	size_t i;

	for (i = 0; i < njobs; i++) {
		record(r, &opts->llm[jobs[i].voter], &jobs[i], pool,
		       opts->ledger);
		if (r->calls[r->ncalls - 1].answered)
			answered[jobs[i].voter] = true;
		rv_llm_req_release(&jobs[i].req);
		free(jobs[i].reason);
		free(jobs[i].cached);
	}
	r->nllm = opts->nllm;
	for (i = 0; i < opts->nllm; i++)
		r->llm_answered += answered[i];
	free(answered);
}

/* The footer's "left today" for the list. */
static void note_day_left(struct rv_review *r,
			  const struct rv_review_opts *opts)
{
	struct rv_caps day = {0};

	r->day_left = -1;
	if (!opts->ledger || !opts->list || opts->budget_day <= 0)
		return;
	day.list = opts->list;
	day.per_day = opts->budget_day;
	if (rv_ledger_left(opts->ledger, &day, &r->day_left, NULL, 0, NULL) < 0)
		r->day_left = -1;
	r->day_budget = opts->budget_day;
	r->list = xstrdup_or_null(opts->list);
}

/* Move the notes on left-out context into r, one line each. */
static void take_notes(struct rv_review *r, struct note *notes, size_t nnotes)
{
	size_t i;

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

void rv_ensemble_run(struct rv_review *r, struct rv_repo *repo,
		     const struct rv_review_opts *opts,
		     const struct rv_ensemble_patch *pp, size_t np,
		     struct rv_findings *pool)
{
	struct note *notes = NULL;
	size_t nnotes = 0, nalloc = 0, njobs;
	struct cost_run cr = {0};
	struct job *jobs;

	jobs = xcalloc(opts->nllm * np + 1, sizeof(*jobs));
	cost_run_init(&cr, r, opts, jobs);
	njobs = build_jobs(r, repo, opts, pp, np, jobs, &notes, &nnotes,
			   &nalloc);
	if (opts->ledger)
		step_down(r, repo, opts, pp, jobs, njobs, &cr.caps);
	worst_sum(opts, jobs, njobs);
	send_jobs(opts, jobs, njobs, &cr);
	record_jobs(r, opts, jobs, njobs, pool);
	note_day_left(r, opts);
	free(jobs);
	take_notes(r, notes, nnotes);
}
