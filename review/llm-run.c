// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-run.c - every LLM request of a review at once on one curl multi
 * handle: a timeout per attempt, one deadline for all, retries with
 * exponential backoff and jitter on 429, 5xx and dropped connections
 * (honouring Retry-After), and a cap on each answer's size.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cost.h"
#include "llm.h"

enum { REQ_WAITING, REQ_RUNNING, REQ_DONE };

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Jitter only: a small xorshift, seeded once from the clock and pid. */
static double jitter(void)
{
	static uint64_t s;

	if (!s)
		s = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^
		    (uint64_t)(now_mono() * 1e9) ^ 0x9e3779b97f4a7c15ull;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / (double)(1ull << 53);
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct rv_llm_req *r = arg;

	/* Past the cap, stop the transfer: curl reports a write error. */
	if (sb_add(&r->answer, data, size * nmemb) < 0)
		return 0;
	return size * nmemb;
}

static size_t header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct rv_llm_req *r = arg;
	size_t n = size * nmemb;
	char val[128];
	size_t i, j = 0;
	char *end;
	double secs;

	if (n < 12 || strncasecmp(data, "retry-after:", 12))
		return n;
	for (i = 12; i < n && j + 1 < sizeof(val); i++)
		if (data[i] != '\r' && data[i] != '\n')
			val[j++] = data[i];
	val[j] = '\0';
	secs = strtod(val, &end);
	while (*end && isspace((unsigned char)*end))
		end++;
	if (end != val && !*end && secs >= 0) {
		r->retry_after = secs;
	} else {
		time_t t = curl_getdate(val, NULL);

		if (t > 0)
			r->retry_after =
				t > time(NULL) ? (double)(t - time(NULL)) : 0;
	}
	return n;
}

void rv_llm_req_release(struct rv_llm_req *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->url);
	free(r->body);
	sb_release(&r->answer);
	memset(r, 0, sizeof(*r));
}

static int start(CURLM *multi, struct rv_llm_req *r, double now,
		 const struct rv_llm_run_opts *o)
{
	CURL *c = curl_easy_init();
	long ms = (long)((r->timeout > 0 ? r->timeout : 120) * 1000);

	if (!c)
		return -1;
	r->answer.cap = o->max_answer ? o->max_answer : RV_LLM_MAX_ANSWER;
	sb_reset(&r->answer);
	r->retry_after = -1;
	r->status = 0;
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(r->body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_PRIVATE, r);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms < 10000 ? ms : 10000);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (curl_multi_add_handle(multi, c) != CURLM_OK) {
		curl_easy_cleanup(c);
		return -1;
	}
	r->easy = c;
	if (!r->attempts)
		r->started = now;
	r->attempts++;
	r->state = REQ_RUNNING;
	return 0;
}

static void stop(CURLM *multi, struct rv_llm_req *r)
{
	if (!r->easy)
		return;
	curl_multi_remove_handle(multi, r->easy);
	curl_easy_cleanup(r->easy);
	r->easy = NULL;
}

static bool retryable(CURLcode code, long status)
{
	if (code == CURLE_OK)
		return status == 429 || status >= 500;
	return code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ||
	       code == CURLE_GOT_NOTHING || code == CURLE_PARTIAL_FILE ||
	       code == CURLE_COULDNT_CONNECT;
}

/* A server error or a reset: the server is down, not just busy (429). */
static bool dead(CURLcode code, long status)
{
	return retryable(code, status) && !(code == CURLE_OK && status == 429);
}

/* Per group: the request probing it again, and whether it is open. */
struct group {
	long probe; /* index of the probe, -1 when none */
	bool open;
};

/* The probe is done without opening the circuit: the rest go on. */
static void release_held(struct rv_llm_req *reqs, size_t n, size_t g,
			 double now)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (reqs[i].group == g && reqs[i].held) {
			reqs[i].held = false;
			reqs[i].not_before = now;
		}
}

/* The group's circuit opened: what has no answer yet is done. */
static void open_circuit(struct rv_llm_req *reqs, size_t n, size_t g,
			 const struct rv_llm_req *by)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct rv_llm_req *r = &reqs[i];

		if (r->group != g || r->state != REQ_WAITING)
			continue;
		r->held = false;
		r->breaker = true;
		r->state = REQ_DONE;
		snprintf(r->error, sizeof(r->error),
			 "not asked: the voter's circuit is open (%.200s)",
			 by->error);
	}
}

static void why(struct rv_llm_req *r, CURLcode code)
{
	if (code == CURLE_OPERATION_TIMEDOUT)
		snprintf(r->error, sizeof(r->error), "timed out after %.1f s",
			 r->timeout);
	else if (code == CURLE_WRITE_ERROR)
		snprintf(r->error, sizeof(r->error),
			 "answer larger than %zu bytes", r->answer.cap);
	else if (code == CURLE_PARTIAL_FILE)
		snprintf(r->error, sizeof(r->error), "truncated answer");
	else if (code != CURLE_OK)
		snprintf(r->error, sizeof(r->error), "%s",
			 curl_easy_strerror(code));
	else
		snprintf(r->error, sizeof(r->error), "HTTP %ld", r->status);
	if (r->attempts > 1) {
		size_t n = strlen(r->error);

		snprintf(r->error + n, sizeof(r->error) - n,
			 " (after %d attempts)", r->attempts);
	}
}

static void finish(CURLM *multi, struct rv_llm_req *reqs, size_t n,
		   struct group *gs, struct rv_llm_req *r, CURLcode code,
		   double now, double deadline_at,
		   const struct rv_llm_run_opts *o)
{
	struct group *g = o->breaker && gs ? &gs[r->group] : NULL;
	long self = (long)(r - reqs);
	double delay;
	int i;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
	{
		curl_off_t up = 0;

		/* A provider may bill any request it received. */
		if (curl_easy_getinfo(r->easy, CURLINFO_SIZE_UPLOAD_T, &up) ==
			    CURLE_OK &&
		    up > 0)
			r->body_sent = true;
	}
	stop(multi, r);
	r->seconds = now - r->started;
	if (code == CURLE_OK && r->status >= 200 && r->status < 300) {
		r->ok = true;
		r->state = REQ_DONE;
		if (g && g->probe == self) {
			g->probe = -1;
			release_held(reqs, n, r->group, now);
		}
		return;
	}
	if (g && g->open) {
		/* Another request opened the circuit meanwhile. */
		why(r, code);
		r->state = REQ_DONE;
		return;
	}
	if (g && dead(code, r->status) && g->probe >= 0 && g->probe != self) {
		/* One probe per group: this one waits for its outcome. */
		r->held = true;
		r->state = REQ_WAITING;
		return;
	}
	if (retryable(code, r->status) && r->attempts <= o->retries) {
		if (g && dead(code, r->status))
			g->probe = self;
		delay = o->backoff * (1 + 0.5 * jitter());
		for (i = 1; i < r->attempts && delay < 3600; i++)
			delay *= 2;
		if (r->retry_after > delay)
			delay = r->retry_after;
		if (now + delay < deadline_at) {
			r->not_before = now + delay;
			r->state = REQ_WAITING;
			return;
		}
	}
	why(r, code);
	r->state = REQ_DONE;
	if (!g)
		return;
	if (dead(code, r->status) && r->attempts > o->retries) {
		/* Every try failed the way a dead server fails. */
		g->open = true;
		g->probe = -1;
		open_circuit(reqs, n, r->group, r);
		if (o->opened)
			o->opened(o->arg, (size_t)self, r);
	} else if (g->probe == self) {
		g->probe = -1;
		release_held(reqs, n, r->group, now);
	}
}

static int running_in(const struct rv_llm_req *reqs, size_t n, size_t group)
{
	size_t i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += reqs[i].state == REQ_RUNNING && reqs[i].group == group;
	return k;
}

/* Tell the caller of each request that is done, once. */
static void tell_done(struct rv_llm_req *reqs, size_t n, bool *told,
		      const struct rv_llm_run_opts *o)
{
	size_t i;

	for (i = 0; o->done && told && i < n; i++) {
		if (reqs[i].state != REQ_DONE || told[i])
			continue;
		told[i] = true;
		o->done(o->arg, i, &reqs[i]);
	}
}

void rv_llm_run(struct rv_llm_req *reqs, size_t n,
		const struct rv_llm_run_opts *o)
{
	double t0 = now_mono(), deadline_at = t0 + o->deadline;
	CURLM *multi = curl_multi_init();
	size_t i, left = n, ngroups = 0;
	bool *told = xcalloc(n + 1, sizeof(*told));
	struct group *gs;

	for (i = 0; i < n; i++) {
		reqs[i].state = REQ_WAITING;
		reqs[i].not_before = t0;
		reqs[i].held = false;
		if (reqs[i].group + 1 > ngroups)
			ngroups = reqs[i].group + 1;
	}
	gs = xcalloc(ngroups + 1, sizeof(*gs));
	for (i = 0; i < ngroups; i++)
		gs[i].probe = -1;
	if (!multi) {
		for (i = 0; i < n; i++) {
			snprintf(reqs[i].error, sizeof(reqs[i].error),
				 "cannot start HTTP (out of memory)");
			reqs[i].state = REQ_DONE;
		}
		tell_done(reqs, n, told, o);
		free(told);
		free(gs);
		return;
	}
	while (left) {
		double now = now_mono(), wake = deadline_at;
		int running, queued;
		bool ended = false, later = false;
		CURLMsg *m;

		if (now >= deadline_at) {
			for (i = 0; i < n; i++) {
				struct rv_llm_req *r = &reqs[i];

				if (r->state == REQ_DONE)
					continue;
				/* In flight, it may have been billed. */
				if (r->easy)
					r->body_sent = true;
				stop(multi, r);
				snprintf(r->error, sizeof(r->error),
					 "no answer within the review's "
					 "deadline of %.1f s",
					 o->deadline_said > 0 ? o->deadline_said
							      : o->deadline);
				r->seconds = r->attempts ? now - r->started : 0;
				r->state = REQ_DONE;
			}
			tell_done(reqs, n, told, o);
			break;
		}
		for (i = 0; i < n; i++) {
			struct rv_llm_req *r = &reqs[i];

			if (r->state != REQ_WAITING || r->held)
				continue;
			/* While a group's probe is out, the group waits. */
			if (o->breaker && gs[r->group].probe >= 0 &&
			    gs[r->group].probe != (long)i)
				continue;
			if (!r->attempts && later)
				continue; /* an earlier request goes first */
			if (r->group_max > 0 &&
			    running_in(reqs, n, r->group) >= r->group_max)
				continue; /* a transfer ending wakes the poll */
			if (r->not_before > now) {
				if (r->not_before < wake)
					wake = r->not_before;
				continue;
			}
			/* The budget is asked just before a first send. */
			if (!r->attempts && o->admit) {
				int a = o->admit(o->arg, i, r);

				if (a == RV_ADMIT_LATER) {
					later = true;
					continue;
				}
				if (a != RV_ADMIT_SEND) {
					if (!r->error[0])
						snprintf(r->error,
							 sizeof(r->error),
							 "budget");
					r->state = REQ_DONE;
					continue;
				}
			}
			if (start(multi, r, now, o) < 0) {
				snprintf(r->error, sizeof(r->error),
					 "cannot start HTTP (out of memory)");
				r->state = REQ_DONE;
			}
		}
		curl_multi_perform(multi, &running);
		now = now_mono();
		while ((m = curl_multi_info_read(multi, &queued))) {
			struct rv_llm_req *r = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
					  (char **)&r);
			if (r) {
				finish(multi, reqs, n, gs, r, m->data.result,
				       now, deadline_at, o);
				ended = true;
			}
		}
		tell_done(reqs, n, told, o);
		for (left = 0, i = 0; i < n; i++)
			left += reqs[i].state != REQ_DONE;
		if (!left)
			break;
		/* A slot came free: start the next request without waiting. */
		if (ended)
			continue;
		if (wake - now > 1.0)
			wake = now + 1.0;
		curl_multi_poll(multi, NULL, 0,
				wake > now ? (int)((wake - now) * 1000) + 1 : 1,
				NULL);
	}
	curl_multi_cleanup(multi);
	free(told);
	free(gs);
}

void rv_llm_req_settle(struct rv_ledger *l, int64_t *resv,
		       const struct rv_llm_voter *v, const struct rv_llm_req *r,
		       struct rv_charge *c, double worst)
{
	long cached;

	if (!l || !*resv)
		return;
	if (!r->ok && (!r->body_sent || r->status >= 300 ||
		       (r->status > 0 && r->status < 200))) {
		rv_ledger_release(l, *resv, NULL);
		*resv = 0;
		return;
	}
	if (!r->ok ||
	    !rv_cost_of_answer(v, r->answer.buf, r->answer.len, &c->tokens_in,
			       &c->tokens_out, &cached, &c->cost)) {
		c->cost = worst;
		c->assumed = true;
	}
	rv_ledger_settle(l, *resv, c, NULL);
	*resv = 0;
}
