/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * voter-llm.h - the parts of the LLM voters that review/ shares with itself
 * and with the unit tests: providers, the answer parser, the concurrent
 * runner, the context builder and the verifier. Not for bot/.
 */
#ifndef QUORUM_REVIEW_LLM_H
#define QUORUM_REVIEW_LLM_H

#include "review.h"

/* Caps on what a model may make us hold. */
#define RV_LLM_MAX_ANSWER ((size_t)1 << 20) /* bytes of an HTTP answer */
#define RV_LLM_MAX_FINDINGS 50 /* per answer; more is an invalid answer */
#define RV_LLM_MAX_TITLE 300
#define RV_LLM_MAX_TEXT 8000 /* explanation, quote */

struct rv_llm_req;

/* ---- voter-llm-provider.c ---------------------------------------------- */

/* The endpoint to POST to: url itself or url + the API's path. */
char *rv_llm_endpoint(const struct rv_llm_voter *v);

/*
 * Append the JSON request body for v with the system and user texts to
 * out. 0, RV_ERR_NOMEM, or RV_ERR_INPUT when it is over out's cap.
 */
int rv_llm_request_body(const struct rv_llm_voter *v, const char *system,
			const char *user, struct sb *out);

/*
 * Fill r's url, body, headers (with v's key), timeout and group limit
 * for asking v with the system and user texts. 0, or -1 with *reason
 * (static text) when the body cannot be built.
 */
int rv_llm_req_prepare(const struct rv_llm_voter *v, const char *system,
		       const char *user, struct rv_llm_req *r,
		       const char **reason);
/* The same, with a body already built (taken over: freed with r). */
void rv_llm_req_with_body(const struct rv_llm_voter *v, char *body,
			  struct rv_llm_req *r);

/*
 * Take the model's text and token usage out of an HTTP answer body.
 * Returns 0, or RV_ERR_INPUT with a reason (never quoting the body at
 * length) when it is not an answer of v's API.
 */
int rv_llm_extract(const struct rv_llm_voter *v, const char *body, size_t len,
		   struct sb *text, long *tokens_in, long *tokens_out,
		   struct errmsg *err);

/* The token counter v uses: its count_tokens, auto resolved. */
enum rv_count_tokens rv_llm_count_mode(const struct rv_llm_voter *v);

/* The endpoint that counts a request's input tokens for v. */
char *rv_llm_count_endpoint(const struct rv_llm_voter *v);

/*
 * Append to out the body that asks v's counter about request (a body
 * of rv_llm_request_body()). 0, RV_ERR_INPUT or RV_ERR_NOMEM.
 */
int rv_llm_count_body(const struct rv_llm_voter *v, const char *request,
		      struct sb *out);

/*
 * The token count in a counter's answer; -1 when there is none. The
 * caller decides whether to believe it.
 */
long rv_llm_count_parse(const struct rv_llm_voter *v, const char *body,
			size_t len);

/* Set the max_tokens of request *body (replaced) to max_tokens. */
int rv_llm_body_max_tokens(const struct rv_llm_voter *v, char **body,
			   int max_tokens);

/* Did the model stop at max_tokens (its answer is cut short)? */
bool rv_llm_cut_short(const struct rv_llm_voter *v, const char *body,
		      size_t len);

/* ---- voter-llm-answer.c -------------------------------------------------- */

/*
 * Parse a model's text (JSON per prompts/schema.json, maybe in a code
 * fence or after prose) into findings raised by voter on patch. Returns
 * the number of findings appended, or RV_ERR_INPUT with the reason; on
 * error nothing is appended.
 */
int rv_llm_parse_answer(const char *text, size_t len, const char *voter,
			int patch, struct rv_findings *out, struct errmsg *err);

/* ---- voter-llm-run.c ----------------------------------------------------- */

struct rv_llm_req {
	/* in */
	char *url;
	char *body;
	struct curl_slist *headers; /* owned; freed by rv_llm_req_release() */
	double timeout;		    /* seconds per attempt */
	/* out */
	struct sb answer; /* the last answer body, capped */
	long status;
	int attempts;
	double seconds;
	bool ok;	 /* a 2xx answer arrived whole */
	char error[256]; /* why not, when !ok */
	bool body_sent;	 /* the body went out, so it may be billed */
	/* private */
	void *easy;
	double not_before; /* monotonic seconds: do not start before */
	double started;
	double retry_after; /* from the last answer, -1 when none */
	int state;
	size_t group;  /* requests of one voter */
	int group_max; /* at most this many of a group at once; 0: any */
	bool held;     /* waits for its group's probe to succeed or fail */
	bool breaker;  /* done: its group's circuit was open */
};

void rv_llm_req_release(struct rv_llm_req *r);

struct rv_ledger;
struct rv_charge;
/*
 * Close reservation *resv of voter v's finished request r in ledger l:
 * an HTTP error is not billed, nor is a request that never went out
 * (released); an answer is charged what it says it used, and one that
 * went out and got no whole answer (a timeout, a reset, a cut body), or
 * that says nothing usable, is charged worst. c names the charge; its
 * tokens and cost are filled here. *resv is 0 after.
 */
void rv_llm_req_settle(struct rv_ledger *l, int64_t *resv,
		       const struct rv_llm_voter *v, const struct rv_llm_req *r,
		       struct rv_charge *c, double worst);

struct rv_llm_run_opts {
	double deadline;      /* seconds from now for everything */
	double deadline_said; /* the deadline messages name; 0: deadline */
	int retries;	      /* retries per request on 429, 5xx, reset */
	double backoff;	      /* first retry delay; doubles, with jitter */
	size_t max_answer;    /* bytes per answer */
	/*
	 * Both may be NULL. admit is called just before request i is first
	 * sent, in order of i; RV_ADMIT_SEND: send it; RV_ADMIT_REFUSE: it
	 * is not sent, done with error (admit may have written it);
	 * RV_ADMIT_LATER: ask again once another request is done, and
	 * admit no request after i until then (i goes first). done is
	 * called once when request i is done (sent or not), so a
	 * reservation is settled as soon as its answer is in.
	 */
	int (*admit)(void *arg, size_t i, struct rv_llm_req *r);
	void (*done)(void *arg, size_t i, struct rv_llm_req *r);
	/*
	 * The circuit breaker, per group: once a request of a group failed
	 * with a server error or a reset, only it is tried again (the
	 * probe) while the group's other requests wait; when it has failed
	 * every try that way, the group's circuit opens: every request of
	 * the group not yet answered is done with breaker set, and opened
	 * (may be NULL) is told which request opened it.
	 */
	bool breaker;
	void (*opened)(void *arg, size_t i, struct rv_llm_req *r);
	void *arg;
};

enum { RV_ADMIT_SEND, RV_ADMIT_REFUSE, RV_ADMIT_LATER };

/* Run every request concurrently on one curl multi handle. */
void rv_llm_run(struct rv_llm_req *reqs, size_t n,
		const struct rv_llm_run_opts *o);

/* ---- voter-llm-count.c --------------------------------------------------- */

/*
 * Count the input tokens of bodies[i] (a request to voters[i]; NULL:
 * none) with each voter's counter, concurrently: counts[i] gets the
 * count, or -1 when there is none (no counter, it failed). A voter
 * whose counter is not there is asked once per run (st).
 */
void rv_llm_count_inputs(struct rv_llm_state *st,
			 const struct rv_llm_voter *const *voters,
			 char *const *bodies, long *counts, size_t n);

/*
 * The bound on the input tokens of a request of bytes bytes that a
 * counter said holds count tokens (-1: none): the count with a margin,
 * never above the bytes; the bytes when the count is not believable.
 */
long rv_llm_input_bound(long count, size_t bytes);

/* Why voter's circuit is open in st, or NULL when it is closed. */
const char *rv_llm_state_open(struct rv_llm_state *st, const char *voter);
void rv_llm_state_set_open(struct rv_llm_state *st, const char *voter,
			   const char *why);

/* ---- context.c ----------------------------------------------------- */

/*
 * The C function around line (1-based) of src: *start is its header
 * line, *end its column-0 closing brace. Returns 0, or -1 when the line
 * is not inside a function.
 */
int rv_function_range(const char *src, size_t len, int line, int *start,
		      int *end);

/* What goes into one prompt about one patch. */
struct rv_context_in {
	const struct mp_patch *patch;
	const struct rv_diff *diff;
	struct rv_repo *repo;		       /* may be NULL */
	const char *post_tree;		       /* "" when not applied */
	const struct rv_similar_list *similar; /* NULL: no history index */
	const char *patch_label;	       /* "2/3" */
};

/*
 * Write the data blocks of one patch into user, fitted to budget bytes,
 * each block delimited by boundary. What was left out is appended to
 * left_out as "; "-separated phrases, and named to the model in a
 * left-out block: no text from mail or the tree is ever outside a block.
 * 0 or RV_ERR_INPUT when the budget cannot hold even the commit message
 * and one hunk header.
 */
int rv_context_build(const struct rv_context_in *in, size_t budget,
		     const char *boundary, struct sb *user,
		     struct sb *left_out);

/*
 * Append s as an attribute value of a block's opening line: bare when it
 * is letters, digits and ._/+,@~:- only, else in double quotes with C
 * escapes as git quotes a path (\n, \", \\, \ooo for other control and
 * non-ASCII bytes), '<' and '>' escaped too: no value can end the line,
 * the attribute or the opening line, or look like a fence.
 */
void rv_prompt_attr(struct sb *out, const char *s);

/*
 * A boundary token (32 hex digits from the kernel's random source) that
 * occurs in none of the texts. 0, or RV_ERR_INTERNAL when none could
 * be made (no random source).
 */
int rv_boundary_make(char out[40], const char *const *texts, size_t n);

/*
 * Append file dir/name, at most cap bytes, to out. 0, or RV_ERR_INPUT
 * with a reason naming the file when it cannot be read or is larger.
 */
int rv_prompt_read(const char *dir, const char *name, size_t cap,
		   struct sb *out, struct errmsg *err);

/*
 * Append the system prompt for a patch touching d's files to out. 0, or
 * RV_ERR_INPUT when it is over out's cap.
 */
int rv_prompts_system(const struct rv_prompts *p, const struct rv_diff *d,
		      const char *boundary, struct sb *out);

/* ---- vote-verify.c ------------------------------------------------------ */

enum rv_verdict {
	RV_VERDICT_KEEP,
	RV_VERDICT_OUTSIDE, /* not in the patch's files, hunks or functions */
	/* quotes code the post-image does not have, or lines past its end */
	RV_VERDICT_HALLUCINATED,
	RV_VERDICT_PREEXISTING, /* inside, but not near a line it changed */
};

/*
 * Check f against the patch's diff and the post-image of f->file (post,
 * NULL when unreadable: then the diff's own lines are the reference).
 */
enum rv_verdict rv_verify_finding(const struct rv_finding *f,
				  const struct rv_diff *d, const char *post,
				  size_t postlen);

/*
 * Does a later patch of the series change the lines f points at?
 * diffs[k] is patch k's diff (NULL when absent); f->patch is f's patch.
 */
bool rv_verify_fixed_later(const struct rv_finding *f,
			   struct rv_diff *const *diffs, size_t ndiffs);

/*
 * Where f's lines are at the series tip: f->tip_file, tip_line_start and
 * tip_line_end get the place in the last patch's post-image (diffs[0..
 * ndiffs) are the patches). Returns 0, or -1 (tip fields cleared) when
 * a later patch changes the lines or f has no file.
 */
int rv_verify_at_tip(struct rv_finding *f, struct rv_diff *const *diffs,
		     size_t ndiffs);

/*
 * A finding on the series tip (lines of the tip's post-image) belongs
 * to the patch that added its lines: f's patch, file and lines become
 * that patch's. diffs[0..np) are the patches. When no patch added them,
 * f->patch is the last patch that changes the file (lines unchanged).
 * Returns f->patch, or -1 when no patch changes the file.
 */
int rv_verify_tip_owner(struct rv_finding *f, struct rv_diff *const *diffs,
			size_t np);

/* A category as the vote compares it: lower case, synonyms folded. */
void rv_category_normalise(const char *in, char *out, size_t outsz);

/* Do two titles share enough words to be about the same problem? */
bool rv_titles_similar(const char *a, const char *b);

/* ---- context-tip.c ----------------------------------------------------- */

/*
 * The unified diff from one tree (or commit) to another, hex ids, as
 * text in out. 0, RV_ERR_REPO (an id is not there) or RV_ERR_INPUT (too
 * large for out's cap).
 */
int rv_tree_diff(struct rv_repo *repo, const char *old_tree,
		 const char *new_tree, struct sb *out);

/* ---- voter-llm.c ---------------------------------------------------- */

/*
 * Per patch k of the series, what the pipeline prepared; one more slot
 * after the series' patches may hold the whole series (its tip).
 */
struct rv_ensemble_patch {
	const struct rv_diff *diff; /* NULL: skipped */
	const char *post_tree;
	const struct mp_patch *patch; /* NULL: series->patches[k] */
	const char *label;	      /* NULL: "n/m" */
};

/*
 * Ask every LLM voter of opts about every prepared patch, concurrently;
 * record the calls, abstentions and left-out context in r and append
 * the parsed findings to pool (unverified). 0, or RV_ERR_DEADLINE when
 * the deadline passed while the prompts were built (nothing was sent).
 */
int rv_ensemble_run(struct rv_review *r, struct rv_repo *repo,
		    const struct rv_review_opts *opts,
		    const struct rv_ensemble_patch *pp, size_t np,
		    struct rv_findings *pool, struct errmsg *err);
/*
 * Past opts->deadline_at? Then err says so ("... while STAGE") and it
 * returns true (pipeline.c).
 */
bool rv_review_past_deadline(const struct rv_review_opts *opts,
			     const char *stage, struct errmsg *err);

#endif
