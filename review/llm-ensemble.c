// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-ensemble.c - ask every LLM voter about every patch of a series at
 * once. Each (voter, patch) pair is one request with its own grounded
 * prompt and its own random data boundary; all run on one curl multi
 * handle (llm-run.c). A voter whose request fails or whose answer does
 * not parse abstains on that patch, with the reason recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cost.h"
#include "llm.h"

#define DEFAULT_CONTEXT_TOKENS 24000
#define BYTES_PER_TOKEN 4
/* Answer tokens a voter with no past answers is asked for, at least. */
#define NO_HISTORY_FLOOR 512

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
	/* What it may cost, known before it is sent. */
	long est_in;  /* bound on its input tokens */
	bool counted; /* est_in comes from the voter's token counter */
	int max_out;  /* the answer's max_tokens it is priced and sent at */
	bool planned; /* in the plan: fits the caps after those before it */
	bool clamped; /* sent with a smaller max_tokens than the voter's */
	bool built;   /* went through build_job(), or was reused */
	char *left;   /* what its prompt left out, or NULL */
};

/* A request a dry run built, kept for the review that sends it. */
struct rv_built_job {
	char *voter;
	size_t patch;
	char post_tree[RV_OID_HEXSZ + 1];
	char *body; /* NULL: not sent, for reason */
	char *reason;
	char *left; /* what its prompt left out, or NULL */
};

struct rv_built {
	struct rv_built_job *v;
	size_t n;
};

void rv_built_free(struct rv_built *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->v[i].voter);
		free(b->v[i].body);
		free(b->v[i].reason);
		free(b->v[i].left);
	}
	free(b->v);
	free(b);
}

/* The kept request of voter for patch k on post_tree, or NULL. */
static const struct rv_built_job *built_find(const struct rv_built *b,
					     const char *voter, size_t k,
					     const char *post_tree)
{
	size_t i;

	for (i = 0; b && i < b->n; i++)
		if (b->v[i].patch == k && !strcmp(b->v[i].voter, voter) &&
		    post_tree && !strcmp(b->v[i].post_tree, post_tree))
			return &b->v[i];
	return NULL;
}

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
	struct sb sys = SB_INIT, user = SB_INIT;
	const char *why;
	const char *texts[4];
	char b[40];
	size_t budget;
	int tokens = v->context_tokens > 0 ? v->context_tokens
					   : DEFAULT_CONTEXT_TOKENS;
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
	if (rv_llm_req_prepare(v, sys.buf, user.buf, &j->req, &why) < 0) {
		j->reason = xstrdup_or_null(why);
		goto out;
	}
	j->sent = true;
	ret = 0;
out:
	sb_release(&sys);
	sb_release(&user);
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
	c->est_in = j->est_in;
	c->counted = j->counted;
	c->max_tokens = j->max_out;
	c->clamped = j->clamped;
	c->breaker = j->req.breaker;
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

		if (!rv_llm_cut_short(v, j->req.answer.buf, j->req.answer.len))
			sb_addf(&why, "invalid answer: %s", err.msg);
		else if (j->clamped)
			sb_addf(&why,
				"invalid answer (cut short at %d tokens, all "
				"the budget left allowed): %s",
				j->max_out, err.msg);
		else
			sb_addf(&why,
				"invalid answer (cut short at max-tokens; "
				"raise it): %s",
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
	/* An answer given with one list's mail in the prompt stays its. */
	if (opts->cache_scope)
		sb_addf(&sys, "\n\nquorum-cache-scope %s", opts->cache_scope);
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
	struct rv_llm_state *st;
	int *floor;    /* per voter: the fewest answer tokens worth asking */
	long *longest; /* per voter: its longest recent answer, 0: none */
	long *nhist;   /* per voter: how many recent answers that is of */
	size_t open;   /* reservations of this review not yet settled */
	bool capped;   /* some cap applies */
	bool shorted;  /* the worst case did not fit: step-down */
	struct sb msg; /* the step-down, while it is made */
};

static int max_out_of(const struct rv_llm_voter *v)
{
	return v->max_tokens > 0 ? v->max_tokens : 2048;
}

static double job_bound(const struct cost_run *cr, const struct job *j, int out)
{
	return rv_cost_bound(&cr->opts->llm[j->voter], j->est_in, out);
}

static void cost_charge(const struct cost_run *cr, const struct job *j,
			struct rv_charge *c)
{
	const struct rv_llm_voter *v = &cr->opts->llm[j->voter];

	memset(c, 0, sizeof(*c));
	c->voter = v->name;
	c->model = v->model;
	c->list = cr->opts->list;
	c->series = cr->opts->series_key;
	c->est_in = j->est_in;
	c->est_out = j->max_out;
}

/* Voter i's floor: its longest recent answer and a margin. */
static void answer_floor(struct cost_run *cr, size_t i)
{
	const struct rv_review_opts *o = cr->opts;
	int vmax = max_out_of(&o->llm[i]);
	/* No past answers: room for a few findings. */
	long f = vmax < NO_HISTORY_FLOOR ? vmax : NO_HISTORY_FLOOR;

	if (o->ledger &&
	    rv_ledger_answer_tokens(o->ledger, o->llm[i].name, &cr->longest[i],
				    &cr->nhist[i], NULL) == 0 &&
	    cr->nhist[i] > 0)
		f = cr->longest[i] + cr->longest[i] / 4 + 32;
	cr->floor[i] = f < vmax ? (int)f : vmax;
}

static void answer_floors(struct cost_run *cr)
{
	size_t i;

	for (i = 0; i < cr->opts->nllm; i++)
		answer_floor(cr, i);
}

/* Reserve j's bound with an answer of out tokens; rv_ledger_reserve(). */
static int reserve(struct cost_run *cr, struct job *j, int out, char *why,
		   size_t whysz, struct errmsg *err)
{
	const struct rv_review_opts *o = cr->opts;
	double amount = job_bound(cr, j, out), ttl;
	struct rv_charge c;
	int rc;

	cost_charge(cr, j, &c);
	c.est_out = out;
	/* It counts until the review's deadline has surely passed. */
	ttl = (o->deadline > 0 ? o->deadline : 600) + 300;
	rc = rv_ledger_reserve(o->ledger, &cr->caps, &c, amount, ttl, &j->resv,
			       why, whysz, err);
	if (rc == 1) {
		j->worst = amount;
		j->max_out = out;
		cr->open++;
	} else if (!j->worst) {
		j->worst = amount;
	}
	return rc;
}

/*
 * Just before j is first sent: reserve its bound. When the whole answer
 * does not fit, wait for the answers in flight (they settle below their
 * bound and give money back); with none in flight, send it with the
 * answer clamped to what is left when that is at least the voter's
 * floor; else it is not sent.
 */
static int cost_admit(void *arg, size_t i, struct rv_llm_req *req)
{
	struct cost_run *cr = arg;
	struct job *j = &cr->jobs[cr->map[i]];
	const struct rv_review_opts *o = cr->opts;
	const struct rv_llm_voter *v = &o->llm[j->voter];
	int vmax = max_out_of(v);
	struct errmsg err = {""};
	char why[200];
	double left;
	int rc;

	if (!o->ledger)
		return RV_ADMIT_SEND;
	rc = reserve(cr, j, vmax, why, sizeof(why), &err);
	if (rc == 1)
		return RV_ADMIT_SEND;
	if (rc < 0) {
		/* Never spend what cannot be recorded. */
		j->budget = true;
		snprintf(req->error, sizeof(req->error), "budget: %s", err.msg);
		return RV_ADMIT_REFUSE;
	}
	if (cr->open)
		return RV_ADMIT_LATER;
	/* The answers of this review are history now too. */
	answer_floor(cr, j->voter);
	if (v->price_out > 0 &&
	    rv_ledger_left(o->ledger, &cr->caps, &left, NULL, 0, NULL) == 0) {
		double room = left - job_bound(cr, j, 0);
		double out = room > 0 ? room * 1e6 / v->price_out : 0;

		if (out >= cr->floor[j->voter] && out < vmax &&
		    rv_llm_body_max_tokens(v, &req->body, (int)out) == 0) {
			rc = reserve(cr, j, (int)out, why, sizeof(why), &err);
			if (rc == 1) {
				j->clamped = true;
				return RV_ADMIT_SEND;
			}
		}
	}
	j->budget = true;
	snprintf(req->error, sizeof(req->error),
		 "budget: %s%.160s (an answer needs %d tokens here)",
		 j->planned ? ""
			    : "a lower-risk patch, left to the offline "
			      "voters: ",
		 rc < 0 ? err.msg : why, cr->floor[j->voter]);
	return RV_ADMIT_REFUSE;
}

static void cost_done(void *arg, size_t i, struct rv_llm_req *req)
{
	struct cost_run *cr = arg;
	struct job *j = &cr->jobs[cr->map[i]];
	struct rv_charge c;

	if (!cr->opts->ledger || !j->resv)
		return;
	cr->open--;
	cost_charge(cr, j, &c);
	rv_llm_req_settle(cr->opts->ledger, &j->resv, &cr->opts->llm[j->voter],
			  req, &c, j->worst);
}

/* A voter's circuit opened: it abstains for the rest of the run. */
static void circuit_opened(void *arg, size_t i, struct rv_llm_req *req)
{
	struct cost_run *cr = arg;
	struct job *j = &cr->jobs[cr->map[i]];
	const struct rv_llm_voter *v = &cr->opts->llm[j->voter];
	struct sb line = SB_INIT;
	char when[32], label[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	if (j->patch < cr->r->series->npatches)
		patch_label(cr->r->series, j->patch, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "the series tip");
	sb_addf(&line,
		"%s: circuit opened at %s UTC, on patch %s after %d tries "
		"(%s); it abstains for the rest of the run",
		v->name, when, label, req->attempts, req->error);
	rv_llm_state_set_open(cr->st, v->name, line.buf);
	cr->r->breakers = xrealloc(cr->r->breakers,
				   (cr->r->nbreakers + 1) * sizeof(char *));
	cr->r->breakers[cr->r->nbreakers++] = sb_detach(&line, NULL);
}

/* The worst case of every job still to be sent, at max_out tokens. */
static double worst_sum(const struct cost_run *cr, struct job *jobs, size_t n)
{
	double w = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!jobs[i].sent)
			continue;
		jobs[i].worst = job_bound(cr, &jobs[i], jobs[i].max_out);
		w += jobs[i].worst;
	}
	return w;
}

/*
 * The bound of every job still to be sent at its voter's answer floor:
 * what the sends need when they go one after another (cost_admit).
 */
static double floor_sum(const struct cost_run *cr, const struct job *jobs,
			size_t n)
{
	double f = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (jobs[i].sent)
			f += job_bound(cr, &jobs[i], cr->floor[jobs[i].voter]);
	return f;
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

/* Bound the input of every job not bounded yet: count, else bytes. */
static void bound_inputs(struct cost_run *cr, struct job *jobs, size_t n,
			 bool count)
{
	const struct rv_llm_voter **voters = xcalloc(n + 1, sizeof(*voters));
	char **bodies = xcalloc(n + 1, sizeof(*bodies));
	long *counts = xcalloc(n + 1, sizeof(*counts));
	size_t i;

	for (i = 0; i < n; i++) {
		voters[i] = &cr->opts->llm[jobs[i].voter];
		bodies[i] = jobs[i].sent && !jobs[i].est_in ? jobs[i].req.body
							    : NULL;
		counts[i] = -1;
	}
	if (count)
		rv_llm_count_inputs(cr->st, voters, bodies, counts, n);
	for (i = 0; i < n; i++) {
		size_t bytes;

		if (!bodies[i])
			continue;
		bytes = strlen(bodies[i]);
		jobs[i].est_in = rv_llm_input_bound(counts[i], bytes);
		jobs[i].counted = (size_t)jobs[i].est_in < bytes;
		jobs[i].max_out = max_out_of(voters[i]);
	}
	free(voters);
	free(bodies);
	free(counts);
}

/* The share of their input the sent jobs may keep to fit in left. */
static double shrink_factor(const struct cost_run *cr, const struct job *jobs,
			    size_t njobs, double left)
{
	double in = 0, out = 0;
	size_t i;

	for (i = 0; i < njobs; i++) {
		double cin;

		if (!jobs[i].sent)
			continue;
		cin = job_bound(cr, &jobs[i], 0);
		in += cin;
		out += job_bound(cr, &jobs[i], cr->floor[jobs[i].voter]) - cin;
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
	j->est_in = 0;
	/* A short-context answer is not the full one: never cached. */
	j->key[0] = '\0';
	if (build_job(j, &v, &cin, opts->prompts, &lost) < 0) {
		/*
		 * The patch itself does not fit in so little: keep the
		 * request whole, and let the plan leave it out instead.
		 */
		free(j->reason);
		j->reason = NULL;
		sb_reset(&lost);
		build_job(j, &opts->llm[j->voter], &cin, opts->prompts, &lost);
	}
	sb_release(&lost);
}

/* "; " unless msg already ends in one. */
static const char *step_sep(const struct sb *msg)
{
	return msg->buf[msg->len - 2] == ';' ? "" : "; ";
}

/*
 * Step 1: drop the most expensive voters while enough remain for a
 * quorum, and the rest do not fit even one after another at their
 * answer floors. Returns the worst case of what is left.
 */
static double drop_costly_voters(struct cost_run *cr, struct job *jobs,
				 size_t njobs, double left, double w)
{
	const struct rv_review_opts *opts = cr->opts;
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
		if (floor_sum(cr, jobs, njobs) <= left || active <= need ||
		    top == opts->nllm)
			break;
		for (i = 0; i < njobs; i++)
			if (jobs[i].sent && jobs[i].voter == top)
				job_drop(&jobs[i], "budget: dropped as the "
						   "most expensive voter");
		sb_addf(&names, "%s%s", names.len ? ", " : "",
			opts->llm[top].name);
		w = worst_sum(cr, jobs, njobs);
	}
	free(vcost);
	if (names.len)
		sb_addf(&cr->msg,
			"dropped the most expensive voter(s) %s, the "
			"quorum can still be met",
			names.buf);
	sb_release(&names);
	return w;
}

/* Step 2: shrink every prompt's context to what the budget holds. */
static double shrink_contexts(struct cost_run *cr, struct rv_repo *repo,
			      const struct rv_ensemble_patch *pp,
			      struct job *jobs, size_t njobs, double left,
			      double w, bool count)
{
	double f = shrink_factor(cr, jobs, njobs, left);
	size_t i;

	if (f < 0.1 || f >= 1)
		return w;
	for (i = 0; i < njobs; i++)
		if (jobs[i].sent)
			shrink_job(cr->r, repo, cr->opts, pp, &jobs[i], f);
	bound_inputs(cr, jobs, njobs, count);
	sb_addf(&cr->msg, "%sshrank the context to %d%%", step_sep(&cr->msg),
		(int)(f * 100));
	return worst_sum(cr, jobs, njobs);
}

/*
 * The order money goes to the patches: the highest risk first (the
 * history index's score), else the series' order; the series tip last.
 * rank[k] is patch k's place.
 */
static void rank_patches(const struct rv_review *r, size_t np, size_t *rank)
{
	size_t *order = xcalloc(np + 1, sizeof(*order));
	size_t i, k;

	for (i = 0; i < np; i++) {
		double ri = i < r->npatch_info ? r->risk[i] : -1;
		bool tip = i >= r->series->npatches;

		/* Insertion: np is at most a series and its tip. */
		for (k = i; k > 0; k--) {
			size_t o = order[k - 1];
			double ro = o < r->npatch_info ? r->risk[o] : -1;
			bool otip = o >= r->series->npatches;

			if (otip && !tip) {
				order[k] = o;
				continue;
			}
			if (!otip && !tip && ri > ro) {
				order[k] = o;
				continue;
			}
			break;
		}
		order[k] = i;
	}
	for (i = 0; i < np; i++)
		rank[order[i]] = i;
	free(order);
}

/* Jobs in the order their money is reserved: by patch rank, then voter. */
static size_t *job_order(const struct rv_review *r, const struct job *jobs,
			 size_t njobs, size_t np)
{
	size_t *rank = xcalloc(np + 1, sizeof(*rank));
	size_t *order = xcalloc(njobs + 1, sizeof(*order));
	size_t i, k, n = 0, p;

	rank_patches(r, np, rank);
	for (p = 0; p < np; p++)
		for (k = 0; k < np; k++) {
			if (rank[k] != p)
				continue;
			for (i = 0; i < njobs; i++)
				if (jobs[i].patch == k)
					order[n++] = i;
		}
	free(rank);
	return order;
}

static void label_of(const struct rv_review *r, size_t k, char *buf, size_t n)
{
	if (k < r->series->npatches)
		patch_label(r->series, k, buf, n);
	else
		snprintf(buf, n, "the series tip");
}

/*
 * Before the first request: when a cap applies, bound every request
 * (token counts where the voter's counter is free), step down while the
 * worst case does not fit, and plan which requests the money goes to,
 * riskiest patches first. The plan is said in r->plan.
 */
static void plan_spend(struct cost_run *cr, struct rv_repo *repo,
		       const struct rv_ensemble_patch *pp, struct job *jobs,
		       size_t njobs, const size_t *order)
{
	const struct rv_review_opts *opts = cr->opts;
	struct rv_review *r = cr->r;
	struct rv_plan *pl = &r->plan;
	struct sb text = SB_INIT, ord = SB_INIT;
	double left = 1e18, w, sum = 0;
	char which[200] = "";
	size_t i, nsent = 0, nclamp = 0;
	bool full = true;

	if (opts->ledger && rv_ledger_left(opts->ledger, &cr->caps, &left,
					   which, sizeof(which), NULL) < 0)
		left = 1e18; /* each request still asks before it is sent */
	cr->capped = left < 1e17;
	bound_inputs(cr, jobs, njobs, cr->capped || opts->dry_run);
	answer_floors(cr);
	w = worst_sum(cr, jobs, njobs);
	for (i = 0; i < njobs; i++)
		if (jobs[i].sent)
			jobs[i].planned = true;
	if (!cr->capped)
		return;
	if (left < 0)
		left = 0;
	pl->made = true;
	pl->left = left;
	pl->cap = xstrdup_or_null(which);
	pl->worst = w;
	if (w > left && w > 0) {
		cr->shorted = true;
		sb_addf(&cr->msg,
			"budget short: $%.4f left under %s, the review could "
			"cost $%.4f; ",
			left, which, w);
		/*
		 * Whole answers do not fit at once; answers cut to their
		 * floor, sent as others settle, may: step down only when
		 * even those do not.
		 */
		w = drop_costly_voters(cr, jobs, njobs, left, w);
		if (floor_sum(cr, jobs, njobs) > left)
			w = shrink_contexts(cr, repo, pp, jobs, njobs, left, w,
					    true);
	}
	/* Riskiest first: whole answers while they fit, then floors. */
	for (i = 0; i < njobs; i++) {
		struct job *j = &jobs[order[i]];
		double b, bf;

		if (!j->sent)
			continue;
		nsent++;
		pl->ncounted += j->counted;
		j->planned = false;
		b = job_bound(cr, j, j->max_out);
		bf = job_bound(cr, j, cr->floor[j->voter]);
		if (full && sum + b <= left + 1e-12) {
			sum += b;
		} else if (sum + bf <= left + 1e-12) {
			full = false;
			sum += bf;
			nclamp++;
		} else {
			full = false;
			continue;
		}
		j->planned = true;
		pl->nplanned++;
	}
	pl->nrequests = nsent;
	pl->planned = sum;
	for (i = 0; i < njobs; i++) {
		char label[64];
		size_t k = jobs[order[i]].patch;

		if (!jobs[order[i]].sent ||
		    (i && jobs[order[i - 1]].patch == k))
			continue;
		label_of(r, k, label, sizeof(label));
		sb_addf(&ord, "%s%s", ord.len ? ", " : "", label);
	}
	pl->order = sb_detach(&ord, NULL);
	sb_addf(&text, "$%.4f left under %s; ", left, which);
	if (!nsent)
		sb_adds(&text, "no request to send");
	else if (pl->nplanned == nsent && !nclamp)
		sb_addf(&text, "all %zu requests fit, $%.4f at most", nsent,
			sum);
	else
		sb_addf(&text,
			"%zu of %zu requests fit at once ($%.4f at most of "
			"$%.4f), %s first (%s)",
			pl->nplanned, nsent, sum, pl->worst,
			r->npatch_info ? "the riskiest patches"
				       : "the series' order",
			pl->order ? pl->order : "");
	if (nsent)
		sb_addf(&text, "; inputs bounded by %s",
			pl->ncounted == nsent ? "token counts"
			: pl->ncounted	      ? "token counts and bytes"
					      : "bytes (no token counter)");
	if (nclamp || pl->nplanned < nsent) {
		for (i = 0; i < opts->nllm; i++) {
			if (cr->nhist[i])
				sb_addf(&text,
					"; %s answers capped down to %d "
					"tokens (its longest of %ld was %ld)",
					opts->llm[i].name, cr->floor[i],
					cr->nhist[i], cr->longest[i]);
			else
				sb_addf(&text,
					"; %s answers capped down to %d "
					"tokens (no past answers)",
					opts->llm[i].name, cr->floor[i]);
		}
		sb_adds(&text, "; the rest wait for answers to settle below "
			       "their bound");
	}
	pl->text = sb_detach(&text, NULL);
}

/*
 * Step 3, said after the requests: the patches the money did not reach
 * (riskiest first), or step 4: no request fit, the offline voters voted
 * alone.
 */
static void step_down_said(struct cost_run *cr, struct job *jobs, size_t njobs,
			   const size_t *order)
{
	struct rv_review *r = cr->r;
	struct sb names = SB_INIT;
	size_t i, active = 0, refused = 0;

	if (!cr->shorted)
		return;
	for (i = 0; i < njobs; i++) {
		active += jobs[i].sent && !jobs[i].budget;
		refused += jobs[i].sent && jobs[i].budget;
	}
	for (i = njobs; i-- > 0;) {
		struct job *j = &jobs[order[i]];
		size_t k, m;
		bool all = true, any = false;
		char label[64];

		if (i + 1 < njobs && jobs[order[i + 1]].patch == j->patch)
			continue;
		/* Once per patch: left out when none of its jobs went. */
		for (m = 0; m < njobs; m++) {
			if (jobs[m].patch != j->patch || !jobs[m].sent)
				continue;
			any = true;
			all = all && jobs[m].budget;
		}
		if (!any || !all)
			continue;
		k = j->patch;
		label_of(r, k, label, sizeof(label));
		sb_addf(&names, "%s%s", names.len ? ", " : "", label);
	}
	if (!active)
		sb_addf(&cr->msg,
			"%sno request fits: only the offline voters voted",
			step_sep(&cr->msg));
	else if (names.len)
		sb_addf(&cr->msg, "%sreviewed only the %s (left out: %s)",
			step_sep(&cr->msg),
			r->npatch_info ? "highest-risk patches"
				       : "first patches, with no history "
					 "index to rank them by risk",
			names.buf);
	else if (refused)
		sb_addf(&cr->msg,
			"%s%zu request%s not sent, every patch was reviewed",
			step_sep(&cr->msg), refused, refused == 1 ? "" : "s");
	sb_release(&names);
	/* "budget short: ...; " and no step: every request went after all. */
	if (cr->msg.len >= 2 && !strcmp(cr->msg.buf + cr->msg.len - 2, "; "))
		sb_adds(&cr->msg, "every request was sent, one after another "
				  "as answers settled below their bound");
	r->stepdown = sb_detach(&cr->msg, NULL);
}

/* The caps every request of this review counts against. */
static void cost_run_init(struct cost_run *cr, struct rv_review *r,
			  const struct rv_review_opts *opts, struct job *jobs,
			  struct rv_llm_state *st)
{
	static unsigned nreview;

	cr->r = r;
	cr->opts = opts;
	cr->jobs = jobs;
	cr->st = st;
	cr->floor = xcalloc(opts->nllm + 1, sizeof(*cr->floor));
	cr->longest = xcalloc(opts->nllm + 1, sizeof(*cr->longest));
	cr->nhist = xcalloc(opts->nllm + 1, sizeof(*cr->nhist));
	sb_init(&cr->msg, 0);
	snprintf(cr->review_id, sizeof(cr->review_id), "%ld-%u-%p",
		 (long)getpid(), nreview++, (void *)r);
	cr->caps.list = opts->list;
	cr->caps.review = cr->review_id;
	cr->caps.per_review = opts->budget_review;
	cr->caps.per_day = opts->budget_day;
	cr->caps.per_run = opts->budget_run;
	cr->caps.monthly = opts->budget_month;
}

static void cost_run_release(struct cost_run *cr)
{
	free(cr->floor);
	free(cr->longest);
	free(cr->nhist);
	sb_release(&cr->msg);
}

/*
 * One job per (LLM voter, prepared patch): a cached answer, or a request
 * built to fit the voter's context budget (what was left out goes to
 * notes). Returns how many jobs were made.
 */
static size_t build_jobs(struct rv_review *r, struct rv_repo *repo,
			 const struct rv_review_opts *opts,
			 struct rv_llm_state *st,
			 const struct rv_ensemble_patch *pp, size_t np,
			 struct job *jobs, struct note **notes, size_t *nnotes,
			 size_t *nalloc, int *ret, struct errmsg *err)
{
	const struct mp_series *s = r->series;
	size_t njobs = 0, i, k;

	for (i = 0; i < opts->nllm; i++) {
		const char *open = rv_llm_state_open(st, opts->llm[i].name);
		size_t hits = 0;

		for (k = 0; k < np; k++) {
			const struct rv_built_job *reused;
			struct rv_context_in in;
			struct sb left = SB_INIT;
			char label[64];

			if (!job_in(r, repo, pp, k, &in, label, sizeof(label)))
				continue;
			if (opts->deadline_at > 0 &&
			    rv_now() > opts->deadline_at) {
				char stage[160];

				snprintf(stage, sizeof(stage),
					 "building the prompts (patch %.40s, "
					 "voter %.40s)",
					 label, opts->llm[i].name);
				rv_review_past_deadline(opts, stage, err);
				*ret = RV_ERR_DEADLINE;
				return njobs;
			}
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
			if (open) {
				/* A dead voter costs no more time this run. */
				struct sb why = SB_INIT;

				sb_addf(&why, "not asked: %s", open);
				jobs[njobs].reason = sb_detach(&why, NULL);
				jobs[njobs].req.breaker = true;
				njobs++;
				continue;
			}
			reused = built_find(opts->reuse, opts->llm[i].name, k,
					    in.post_tree);
			if (reused) {
				/* Built by the dry run of the plan: as it was.
				 */
				if (reused->body) {
					rv_llm_req_with_body(
						&opts->llm[i],
						xstrdup_or_null(reused->body),
						&jobs[njobs].req);
					jobs[njobs].sent = true;
				} else {
					jobs[njobs].reason =
						xstrdup_or_null(reused->reason);
				}
				if (reused->left)
					sb_adds(&left, reused->left);
			} else {
				build_job(&jobs[njobs], &opts->llm[i], &in,
					  opts->prompts, &left);
			}
			jobs[njobs].built = true;
			if (left.len)
				jobs[njobs].left = xstrdup_or_null(left.buf);
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

/*
 * The time the requests have: what is left of the review's deadline but
 * a tenth of it (at least 0.25 s, at most 10 s), in which the answers
 * are checked.
 */
static double request_time(const struct rv_review_opts *opts)
{
	double secs = opts->deadline > 0 ? opts->deadline : 600;
	double reserve = secs / 10, left;

	if (opts->deadline_at <= 0)
		return secs;
	if (reserve < 0.25)
		reserve = 0.25;
	if (reserve > 10)
		reserve = 10;
	if (reserve > secs / 2)
		reserve = secs / 2;
	left = opts->deadline_at - reserve - rv_now();
	return left > 0.001 ? left : 0.001;
}

/* Send the jobs that have a request, in order, within the caps. */
static void send_jobs(const struct rv_review_opts *opts, struct job *jobs,
		      size_t njobs, const size_t *order, struct cost_run *cr)
{
	struct rv_llm_run_opts ro = {0};
	struct rv_llm_req *reqs;
	size_t i, x;

	/* The requests that were built, side by side for the runner. */
	reqs = xcalloc(njobs + 1, sizeof(*reqs));
	cr->map = xcalloc(njobs + 1, sizeof(*cr->map));
	for (i = 0, x = 0; i < njobs; i++)
		if (jobs[order[i]].sent) {
			cr->map[x] = order[i];
			reqs[x++] = jobs[order[i]].req;
		}
	ro.deadline = request_time(opts);
	ro.deadline_said = opts->deadline > 0 ? opts->deadline : 600;
	ro.retries = opts->retries > 0	 ? opts->retries
		     : opts->retries < 0 ? 0
					 : 2;
	if (ro.retries > 10)
		ro.retries = 10;
	ro.backoff = opts->backoff > 0 ? opts->backoff : 1.0;
	ro.max_answer = RV_LLM_MAX_ANSWER;
	ro.admit = cost_admit;
	ro.done = cost_done;
	ro.breaker = true;
	ro.opened = circuit_opened;
	ro.arg = cr;
	rv_llm_run(reqs, x, &ro);
	for (i = 0; i < x; i++)
		jobs[cr->map[i]].req = reqs[i];
	free(cr->map);
	cr->map = NULL;
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
		free(jobs[i].left);
	}
	r->nllm = opts->nllm;
	for (i = 0; i < opts->nllm; i++)
		r->llm_answered += answered[i];
	free(answered);
}

/*
 * A request a dry run would not send either (the patch over the voter's
 * context budget, ...): an abstention, as the real run would record it,
 * so the dry run says so.
 */
static void left_out(struct rv_review *r, const struct rv_llm_voter *v,
		     struct job *j)
{
	struct rv_llm_call *c;

	r->calls = xrealloc(r->calls, (r->ncalls + 1) * sizeof(*r->calls));
	c = &r->calls[r->ncalls++];
	memset(c, 0, sizeof(*c));
	c->voter = xstrdup_or_null(v->name);
	c->patch = (int)j->patch;
	/* A copy: keep_built() may still hand the reason to the real run. */
	c->reason = xstrdup_or_null(j->reason);
}

/* Move the requests the jobs built into r->built, for opts.reuse. */
static void keep_built(struct rv_review *r, const struct rv_review_opts *opts,
		       struct job *jobs, size_t njobs,
		       const struct rv_ensemble_patch *pp)
{
	struct rv_built *b = xcalloc(1, sizeof(*b));
	size_t i;

	b->v = xcalloc(njobs + 1, sizeof(*b->v));
	for (i = 0; i < njobs; i++) {
		struct job *j = &jobs[i];
		struct rv_built_job *k;

		if (!j->built || !pp[j->patch].post_tree ||
		    strlen(pp[j->patch].post_tree) != RV_OID_HEXSZ)
			continue;
		k = &b->v[b->n++];
		k->voter = xstrdup_or_null(opts->llm[j->voter].name);
		k->patch = j->patch;
		memcpy(k->post_tree, pp[j->patch].post_tree, RV_OID_HEXSZ + 1);
		if (j->sent) {
			k->body = j->req.body;
			j->req.body = NULL;
		} else {
			k->reason = j->reason;
			j->reason = NULL;
		}
		k->left = j->left;
		j->left = NULL;
	}
	rv_built_free(r->built);
	r->built = b;
}

/* A dry run: what would be sent, priced; nothing is. Frees the jobs. */
static void dry_run(struct cost_run *cr, struct job *jobs, size_t njobs,
		    const size_t *order, const struct rv_ensemble_patch *pp)
{
	struct rv_review *r = cr->r;
	const struct rv_review_opts *opts = cr->opts;
	size_t i;

	r->dry = xcalloc(njobs + 1, sizeof(*r->dry));
	for (i = 0; i < njobs; i++) {
		struct job *j = &jobs[order[i]];
		const struct rv_llm_voter *v = &opts->llm[j->voter];
		struct rv_dry_request *d;
		char label[64];
		long usual;

		if (!j->sent) {
			if (!j->cached && j->reason)
				left_out(r, v, j);
			continue;
		}
		d = &r->dry[r->ndry++];
		if (pp[j->patch].label)
			snprintf(label, sizeof(label), "%s",
				 pp[j->patch].label);
		else
			label_of(r, j->patch, label, sizeof(label));
		d->voter = xstrdup_or_null(v->name);
		d->label = xstrdup_or_null(label);
		d->url = xstrdup_or_null(j->req.url);
		d->body = xstrdup_or_null(j->req.body);
		d->bytes = strlen(j->req.body);
		d->tokens_in = j->est_in;
		d->counted = j->counted;
		d->max_tokens = j->max_out;
		d->worst = job_bound(cr, j, j->max_out);
		/* At its longest recent answer, or all of max_tokens. */
		usual = cr->nhist[j->voter] ? cr->longest[j->voter]
					    : j->max_out;
		if (usual > j->max_out)
			usual = j->max_out;
		d->estimate = job_bound(cr, j, (int)usual);
		d->floor = job_bound(cr, j, cr->floor[j->voter]);
		d->planned = j->planned;
	}
	if (opts->keep_built)
		keep_built(r, opts, jobs, njobs, pp);
	for (i = 0; i < njobs; i++) {
		rv_llm_req_release(&jobs[i].req);
		free(jobs[i].reason);
		free(jobs[i].cached);
		free(jobs[i].left);
	}
	r->nllm = opts->nllm;
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

/* Free jobs that were built but never sent. */
static void jobs_free(struct job *jobs, size_t njobs)
{
	size_t i;

	for (i = 0; i < njobs; i++) {
		rv_llm_req_release(&jobs[i].req);
		free(jobs[i].reason);
		free(jobs[i].cached);
		free(jobs[i].left);
	}
}

int rv_ensemble_run(struct rv_review *r, struct rv_repo *repo,
		    const struct rv_review_opts *opts,
		    const struct rv_ensemble_patch *pp, size_t np,
		    struct rv_findings *pool, struct errmsg *err)
{
	struct rv_llm_state *st =
		opts->state ? opts->state : rv_llm_state_new();
	struct note *notes = NULL;
	size_t nnotes = 0, nalloc = 0, njobs, *order;
	struct cost_run cr = {0};
	struct job *jobs;
	int ret = 0;

	jobs = xcalloc(opts->nllm * np + 1, sizeof(*jobs));
	cost_run_init(&cr, r, opts, jobs, st);
	njobs = build_jobs(r, repo, opts, st, pp, np, jobs, &notes, &nnotes,
			   &nalloc, &ret, err);
	if (ret < 0) {
		/* Nothing was sent, nothing reserved: the review stops. */
		jobs_free(jobs, njobs);
		free(jobs);
		cost_run_release(&cr);
		take_notes(r, notes, nnotes);
		if (st != opts->state)
			rv_llm_state_free(st);
		return ret;
	}
	order = job_order(r, jobs, njobs, np);
	plan_spend(&cr, repo, pp, jobs, njobs, order);
	if (opts->dry_run) {
		dry_run(&cr, jobs, njobs, order, pp);
	} else {
		send_jobs(opts, jobs, njobs, order, &cr);
		step_down_said(&cr, jobs, njobs, order);
		record_jobs(r, opts, jobs, njobs, pool);
	}
	note_day_left(r, opts);
	free(order);
	free(jobs);
	cost_run_release(&cr);
	take_notes(r, notes, nnotes);
	if (st != opts->state)
		rv_llm_state_free(st);
	return 0;
}
