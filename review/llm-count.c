// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-count.c - what an LLM request may cost, known before it is
 * sent: its input tokens from the provider's free counter (Anthropic's
 * count_tokens, the /tokenize of llama.cpp and vLLM), else a token per
 * byte; and what a run learns across its reviews (which voters have a
 * counter, whose circuit is open).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "llm.h"

/* A counter's answer: a count, or llama.cpp's array of tokens. */
#define COUNT_MAX_ANSWER ((size_t)4 << 20)
/* No tokenizer packs more bytes than this in a token. */
#define COUNT_MAX_BYTES_PER_TOKEN 32

struct state_voter {
	char *name;
	int counter; /* 0: not known yet, 1: it counts, -1: it does not */
	bool open;   /* the circuit: the voter abstains for the run */
	char *why;   /* when and why it opened */
};

struct rv_llm_state {
	struct state_voter *v;
	size_t n, alloc;
};

struct rv_llm_state *rv_llm_state_new(void)
{
	return xcalloc(1, sizeof(struct rv_llm_state));
}

void rv_llm_state_free(struct rv_llm_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n; i++) {
		free(st->v[i].name);
		free(st->v[i].why);
	}
	free(st->v);
	free(st);
}

static struct state_voter *state_voter(struct rv_llm_state *st,
				       const char *name)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (!strcmp(st->v[i].name, name ? name : ""))
			return &st->v[i];
	ALLOC_GROW(st->v, st->n + 1, st->alloc);
	memset(&st->v[st->n], 0, sizeof(st->v[0]));
	st->v[st->n].name = xstrdup_or_null(name ? name : "");
	return &st->v[st->n++];
}

const char *rv_llm_state_open(struct rv_llm_state *st, const char *voter)
{
	struct state_voter *sv = state_voter(st, voter);

	return sv->open ? sv->why : NULL;
}

void rv_llm_state_set_open(struct rv_llm_state *st, const char *voter,
			   const char *why)
{
	struct state_voter *sv = state_voter(st, voter);

	if (sv->open)
		return;
	sv->open = true;
	sv->why = xstrdup_or_null(why);
}

long rv_llm_input_bound(long count, size_t bytes)
{
	long b = (long)bytes, bound;

	/*
	 * A counter's answer is outside input: a count above the bytes,
	 * or one no tokenizer could make of them, is not believed.
	 */
	if (count < 0 || count > b || count < b / COUNT_MAX_BYTES_PER_TOKEN)
		return b;
	/* The chat template and the counter's own rounding: a margin. */
	bound = count + count / 20 + 64;
	return bound < b ? bound : b;
}

static struct curl_slist *headers_of(const struct rv_llm_voter *v)
{
	struct curl_slist *h =
		curl_slist_append(NULL, "Content-Type: application/json");
	struct sb hdr = SB_INIT;

	if (v->key && *v->key) {
		if (v->provider == RV_PROVIDER_ANTHROPIC)
			sb_addf(&hdr, "x-api-key: %s", v->key);
		else
			sb_addf(&hdr, "Authorization: Bearer %s", v->key);
		h = curl_slist_append(h, hdr.buf);
	}
	if (v->provider == RV_PROVIDER_ANTHROPIC)
		h = curl_slist_append(h, "anthropic-version: 2023-06-01");
	/* The key was in hdr: wipe it before the memory goes back. */
	if (hdr.buf)
		memset(hdr.buf, 0, hdr.alloc);
	sb_release(&hdr);
	return h;
}

/* Ask the counters about idx[0..n) of the requests; fill counts. */
static void count_round(struct rv_llm_state *st,
			const struct rv_llm_voter *const *voters,
			char *const *bodies, long *counts, const size_t *idx,
			size_t n)
{
	struct rv_llm_run_opts ro = {0};
	struct rv_llm_req *reqs = xcalloc(n + 1, sizeof(*reqs));
	size_t i, x;

	for (i = 0; i < n; i++) {
		const struct rv_llm_voter *v = voters[idx[i]];
		struct sb body = SB_INIT;

		reqs[i].group = i;
		if (rv_llm_count_body(v, bodies[idx[i]], &body) < 0) {
			sb_release(&body);
			continue;
		}
		reqs[i].url = rv_llm_count_endpoint(v);
		reqs[i].body = sb_detach(&body, NULL);
		reqs[i].headers = headers_of(v);
		reqs[i].timeout =
			v->timeout > 0 && v->timeout < 15 ? v->timeout : 15;
	}
	/* Only those with a body are sent; the rest keep -1. */
	{
		struct rv_llm_req *run = xcalloc(n + 1, sizeof(*run));
		size_t *map = xcalloc(n + 1, sizeof(*map));

		for (i = 0, x = 0; i < n; i++)
			if (reqs[i].body) {
				map[x] = i;
				run[x++] = reqs[i];
			}
		ro.deadline = 30;
		ro.retries = 0;
		ro.max_answer = COUNT_MAX_ANSWER;
		rv_llm_run(run, x, &ro);
		for (i = 0; i < x; i++)
			reqs[map[i]] = run[i];
		free(run);
		free(map);
	}
	for (i = 0; i < n; i++) {
		const struct rv_llm_voter *v = voters[idx[i]];
		struct state_voter *sv = state_voter(st, v->name);
		long c = -1;

		if (reqs[i].ok)
			c = rv_llm_count_parse(v, reqs[i].answer.buf,
					       reqs[i].answer.len);
		counts[idx[i]] = c;
		if (c >= 0)
			sv->counter = 1;
		else if (!sv->counter ||
			 (reqs[i].status >= 400 && reqs[i].status < 500))
			/* Not there, or not an answer: bytes for the run. */
			sv->counter = -1;
		rv_llm_req_release(&reqs[i]);
	}
	free(reqs);
}

void rv_llm_count_inputs(struct rv_llm_state *st,
			 const struct rv_llm_voter *const *voters,
			 char *const *bodies, long *counts, size_t n)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t i, k, m = 0;

	for (i = 0; i < n; i++)
		counts[i] = -1;
	/* First one request per voter whose counter is not known yet. */
	for (i = 0; i < n; i++) {
		struct state_voter *sv;

		if (!bodies[i] || rv_llm_count_mode(voters[i]) == RV_COUNT_NONE)
			continue;
		sv = state_voter(st, voters[i]->name);
		if (sv->counter)
			continue;
		for (k = 0; k < m; k++)
			if (voters[idx[k]] == voters[i])
				break;
		if (k == m)
			idx[m++] = i;
	}
	if (m)
		count_round(st, voters, bodies, counts, idx, m);
	/* Then every other request to a voter whose counter counts. */
	for (i = 0, m = 0; i < n; i++)
		if (bodies[i] && counts[i] < 0 &&
		    rv_llm_count_mode(voters[i]) != RV_COUNT_NONE &&
		    state_voter(st, voters[i]->name)->counter == 1) {
			/* Not the one asked in the first round. */
			idx[m++] = i;
		}
	if (m)
		count_round(st, voters, bodies, counts, idx, m);
	free(idx);
}
