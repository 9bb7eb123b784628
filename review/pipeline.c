// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pipeline.c - one review: apply the series, ask each voter about each
 * patch, keep only the findings that enough distinct voters agree on and
 * that point at lines the patch really has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm.h"
#include "review.h"
#include "vote.h"

static const struct rv_voter *const default_voters[] = {
	&rv_voter_rules,
};

double rv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The review's seconds, as the config gives them. */
static double deadline_secs(const struct rv_review_opts *opts)
{
	return opts->deadline > 0 ? opts->deadline : 600;
}

bool rv_review_past_deadline(const struct rv_review_opts *opts,
			     const char *stage, struct errmsg *err)
{
	if (rv_now() <= opts->deadline_at)
		return false;
	errmsg_set(err, RV_ERR_DEADLINE,
		   "the review passed its deadline of %g s (review.deadline) "
		   "while %s; raise review.deadline or review the series in "
		   "parts",
		   deadline_secs(opts), stage);
	return true;
}

/*
 * The default offline set grows with what the repo has:
 * history and risk with a history index, checkpatch when the tree has a
 * checker. out holds at least 4.
 */
static size_t offline_voters(const struct rv_review_opts *opts,
			     const struct rv_voter **out)
{
	size_t n = 0;

	out[n++] = &rv_voter_rules;
	if (opts->history) {
		out[n++] = &rv_voter_history;
		out[n++] = &rv_voter_risk;
	}
	if (opts->workdir && rv_checkpatch_present(opts->workdir))
		out[n++] = &rv_voter_checkpatch;
	return n;
}

/* Per-patch risk score and the top similar past fixes. */
#define REVIEW_SIMILAR_TOP 3

static void patch_history(struct rv_review *r, size_t k,
			  const struct rv_review_opts *opts,
			  const struct mp_patch *p, const struct rv_diff *d)
{
	struct errmsg herr;
	struct sb why = SB_INIT;

	if (!opts->history || k >= r->npatch_info)
		return;
	herr.msg[0] = '\0';
	if (rv_history_risk(opts->history, d, p->commit_message,
			    p->author_email, &r->risk[k], &why, &herr) == 0) {
		if (why.len)
			r->risk_why[k] = sb_detach(&why, NULL);
	} else if (herr.msg[0]) {
		/* "risk n/a" says why: no fixes to learn from, or the like. */
		r->risk_why[k] = xstrdup_or_null(herr.msg);
	}
	sb_release(&why);
	rv_history_similar(opts->history, d, REVIEW_SIMILAR_TOP, &r->similar[k],
			   &herr);
}

/*
 * Where the series' first patch starts: after the prerequisite
 * series of the same input, whose changes count as the base.
 */
static const char *apply_start(const struct rv_apply_result *a)
{
	return a->start_id[0] ? a->start_id : a->base_id;
}

/*
 * The whole series as one more patch for the models, from the base
 * to the tip's tree, when it has more than one patch and all applied.
 * Fills slot s->npatches of diffs[] and pp[]; true when it did.
 */
static bool series_tip(struct rv_review *r, struct rv_repo *repo,
		       struct rv_diff **diffs, struct rv_ensemble_patch *pp,
		       struct mp_patch *tp, struct sb *text, char *label,
		       size_t labelsz)
{
	const struct mp_series *s = r->series;
	const struct rv_apply_result *a = r->apply;
	struct sb msg = SB_INIT;
	struct errmsg derr;
	size_t k, n = s->npatches;

	if (n < 2 || !a || a->failed >= 0 || !a->npatches || !repo)
		return false;
	if (rv_tree_diff(repo, apply_start(a),
			 a->patches[a->npatches - 1].tree_id, text) < 0 ||
	    rv_diff_parse(&diffs[n], text->buf ? text->buf : "", text->len,
			  &derr) < 0 ||
	    !diffs[n]->nfiles) {
		rv_diff_free(diffs[n]);
		diffs[n] = NULL;
		return false;
	}
	sb_addf(&msg,
		"The whole series, patches 1-%zu combined, as the tip "
		"leaves the tree.\n",
		n);
	if (s->cover && s->cover->commit_message)
		sb_addf(&msg, "\nThe cover letter:\n%s\n",
			s->cover->commit_message);
	sb_adds(&msg, "\nThe patches:\n");
	for (k = 0; k < n; k++)
		if (s->patches[k])
			sb_addf(&msg, "%zu. %s\n", k + 1,
				s->patches[k]->subject_raw
					? s->patches[k]->subject_raw
					: "");
	tp->commit_message = sb_detach(&msg, NULL);
	tp->diff = text->buf;
	tp->diff_len = text->len;
	pp[n].diff = diffs[n];
	pp[n].post_tree = a->patches[a->npatches - 1].tree_id;
	pp[n].patch = tp;
	snprintf(label, labelsz, "1-%zu combined (the series tip)", n);
	pp[n].label = label;
	return true;
}

/*
 * A finding may cite only past fixes of the history index: a prefix that
 * names exactly one becomes its full id; a made-up, ambiguous or
 * duplicate cite is dropped, and without an index every cite is.
 */
static void check_cites(struct rv_finding *f, struct rv_history *h)
{
	char full[RV_OID_HEXSZ + 1];
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(f->cites); i++) {
		if (!f->cites[i][0] ||
		    rv_history_fix_id(h, f->cites[i], full) != 1 ||
		    (n && !strcmp(f->cites[0], full)))
			continue;
		memcpy(f->cites[n++], full, sizeof(full));
	}
	for (; n < ARRAY_SIZE(f->cites); n++)
		f->cites[n][0] = '\0';
}

/*
 * diffs[] and pp[] hold np patches and, when tip, one more slot: the
 * whole series from its base to the tip. A finding on the tip is checked
 * against that diff and then belongs to the patch that added its lines.
 */
static int verify_llm(struct rv_review *r, struct rv_repo *repo,
		      const struct rv_review_opts *opts,
		      struct rv_diff *const *diffs,
		      const struct rv_ensemble_patch *pp, size_t np, bool tip,
		      struct rv_findings *llm, struct rv_findings *pool,
		      struct errmsg *err)
{
	struct sb post = SB_INIT;
	const char *have_file = NULL;
	int have_patch = -1;
	bool have_post = false;
	size_t i;

	for (i = 0; i < llm->n; i++) {
		struct rv_finding *f = &llm->items[i];
		const struct rv_diff *d;
		enum rv_verdict v;

		if (rv_review_past_deadline(
			    opts, "checking the models' answers", err)) {
			sb_release(&post);
			return RV_ERR_DEADLINE;
		}
		if (f->patch < 0 || (size_t)f->patch >= np + tip ||
		    !(d = diffs[f->patch])) {
			r->dropped++;
			continue;
		}
		/* Only a path the diff has is ever read from the tree. */
		if (!rv_diff_find_file(d, f->file)) {
			r->dropped++;
			continue;
		}
		if (f->patch != have_patch || !have_file ||
		    strcmp(have_file, f->file)) {
			sb_reset(&post);
			have_post =
				repo && pp[f->patch].post_tree &&
				*pp[f->patch].post_tree &&
				rv_repo_read_file(repo, pp[f->patch].post_tree,
						  f->file, &post, NULL) == 0;
			have_patch = f->patch;
			have_file = f->file;
		}
		v = rv_verify_finding(f, d, have_post ? sb_str(&post) : NULL,
				      have_post ? post.len : 0);
		if (v == RV_VERDICT_OUTSIDE || v == RV_VERDICT_HALLUCINATED) {
			r->dropped++;
			r->hallucinated += v == RV_VERDICT_HALLUCINATED;
			continue;
		}
		f->preexisting = v == RV_VERDICT_PREEXISTING;
		check_cites(f, opts->history);
		/* The function is ours to name, from the post-image. */
		if (have_post) {
			char name[128];

			if (rv_source_function(post.buf, post.len,
					       f->line_start, name,
					       sizeof(name))) {
				free(f->function);
				f->function = xstrdup_or_null(name);
			}
		}
		if ((size_t)f->patch == np) {
			if (rv_verify_tip_owner(f, diffs, np) < 0) {
				r->dropped++;
				continue;
			}
		} else if (rv_verify_fixed_later(f, diffs, np)) {
			r->fixed_later++;
			continue;
		}
		rv_findings_add(pool, f);
	}
	sb_release(&post);
	return 0;
}

/* The tree each patch starts from and ends at, "" when not applied. */
static void patch_trees(const struct rv_review *r, size_t k, const char **pre,
			const char **post)
{
	*pre = "";
	*post = "";
	if (!r->apply || k >= r->apply->npatches)
		return;
	*post = r->apply->patches[k].tree_id;
	*pre = k ? r->apply->patches[k - 1].tree_id : apply_start(r->apply);
}

/* The voters that take part, their weights, and the quorum they need. */
static void take_voters(struct rv_review *r, const struct rv_review_opts *opts,
			const struct rv_voter *const *voters, size_t nvoters)
{
	size_t i;

	r->voters = xcalloc(nvoters + opts->nllm + 1, sizeof(*r->voters));
	r->weights = xcalloc(nvoters + opts->nllm + 1, sizeof(*r->weights));
	r->is_llm = xcalloc(nvoters + opts->nllm + 1, sizeof(*r->is_llm));
	for (i = 0; i < nvoters; i++) {
		r->weights[r->nvoters] =
			voters[i]->weight > 0 ? voters[i]->weight : 1.0;
		r->voters[r->nvoters++] = xstrdup_or_null(voters[i]->name);
	}
	for (i = 0; opts->prompts && i < opts->nllm; i++) {
		r->weights[r->nvoters] =
			opts->llm[i].weight > 0 ? opts->llm[i].weight : 1.0;
		r->is_llm[r->nvoters] = true;
		r->voters[r->nvoters++] = xstrdup_or_null(opts->llm[i].name);
	}
	/*
	 * The offline voters look at different things (C heuristics, past
	 * bugs, risk, style), so they cannot agree on a finding: when they
	 * vote alone, each is its own quorum.
	 */
	r->quorum = opts->quorum > 0 ? opts->quorum
		    : !opts->voters  ? 1
				     : (int)nvoters / 2 + 1;
}

/* Room for each patch's risk and similar past fixes, when there is history. */
static void alloc_patch_info(struct rv_review *r, const struct mp_series *s,
			     const struct rv_review_opts *opts)
{
	size_t k;

	r->no_history = !opts->history;
	if (!opts->history)
		return;
	r->npatch_info = s->npatches;
	r->risk = xcalloc(s->npatches + 1, sizeof(*r->risk));
	r->risk_why = xcalloc(s->npatches + 1, sizeof(*r->risk_why));
	r->similar = xcalloc(s->npatches + 1, sizeof(*r->similar));
	for (k = 0; k < s->npatches; k++)
		r->risk[k] = -1;
}

/*
 * Ask the offline voters about patch k (apply slot slot), whose diff is
 * d, and add what lies inside the patch's lines to pool. Returns the
 * post-image tree the LLM voters will read.
 */
static const char *review_patch_offline(struct rv_review *r,
					struct rv_repo *repo, size_t k,
					size_t slot, const struct rv_diff *d,
					const struct rv_review_opts *opts,
					const struct rv_voter *const *voters,
					size_t nvoters,
					struct rv_findings *pool)
{
	const struct mp_series *s = r->series;
	const struct mp_patch *p = s->patches[k];
	struct rv_findings mine = {0};
	struct rv_context ctx = {0};
	size_t i;

	ctx.series = s;
	ctx.patch = p;
	ctx.patch_index = (int)k;
	ctx.diff = d;
	ctx.repo = repo;
	patch_trees(r, slot, &ctx.pre_tree, &ctx.post_tree);
	ctx.history = opts->history;
	ctx.workdir = opts->workdir;
	patch_history(r, k, opts, p, d);
	for (i = 0; i < nvoters; i++) {
		struct errmsg verr;

		if (voters[i]->review(voters[i], &ctx, &mine, &verr) < 0)
			continue; /* an abstaining voter */
	}
	for (i = 0; i < mine.n; i++) {
		mine.items[i].patch = (int)k;
		if (rv_finding_in_diff(&mine.items[i], d))
			rv_findings_add(pool, &mine.items[i]);
		else
			r->dropped++;
	}
	rv_findings_release(&mine);
	return ctx.post_tree;
}

/*
 * Parse each patch's diff into diffs[k] and pp[k] (a diff we cannot read
 * gets no findings, not a crash) and run the offline voters on it.
 */
static int review_patches_offline(struct rv_review *r, struct rv_repo *repo,
				  const struct rv_review_opts *opts,
				  const struct rv_voter *const *voters,
				  size_t nvoters, struct rv_diff **diffs,
				  struct rv_ensemble_patch *pp,
				  struct rv_findings *pool, struct errmsg *err)
{
	const struct mp_series *s = r->series;
	size_t k, present = 0;

	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];
		struct rv_diff *d = NULL;
		struct errmsg derr;
		size_t slot;

		if (!p)
			continue;
		if (rv_review_past_deadline(opts, "running the offline voters",
					    err))
			return RV_ERR_DEADLINE;
		slot = present++; /* apply results list present patches only */
		if (!p->diff)
			continue;
		if (rv_diff_parse(&d, p->diff, p->diff_len, &derr) < 0) {
			rv_diff_free(d);
			continue;
		}
		pp[k].post_tree = review_patch_offline(
			r, repo, k, slot, d, opts, voters, nvoters, pool);
		diffs[k] = d;
		pp[k].diff = d;
	}
	return 0;
}

/*
 * Series awareness: what the offline voters found on a patch that a
 * later patch of the series changes is not the series' problem (the LLM
 * findings get the same check in verify_llm()).
 */
static void drop_fixed_later(struct rv_review *r, struct rv_findings *pool,
			     struct rv_diff *const *diffs, size_t ndiffs)
{
	size_t i, k;

	for (i = k = 0; i < pool->n; i++) {
		if (rv_verify_fixed_later(&pool->items[i], diffs, ndiffs)) {
			r->fixed_later++;
			rv_finding_release(&pool->items[i]);
			continue;
		}
		pool->items[k++] = pool->items[i];
	}
	pool->n = k;
}

/*
 * Ask the LLM voters about every patch and the series tip, and add
 * their verified findings to pool; llm keeps what they said. tip_patch
 * and tip_diff hold the tip for as long as the findings point at it.
 */
static int review_llm(struct rv_review *r, struct rv_repo *repo,
		      const struct rv_review_opts *opts, struct rv_diff **diffs,
		      struct rv_ensemble_patch *pp, struct mp_patch *tip_patch,
		      struct sb *tip_diff, struct rv_findings *llm,
		      struct rv_findings *pool, struct errmsg *err)
{
	size_t np = r->series->npatches;
	char tip_label[64];
	bool tip = series_tip(r, repo, diffs, pp, tip_patch, tip_diff,
			      tip_label, sizeof(tip_label));
	int ret;

	if (rv_review_past_deadline(opts, "comparing the series tip", err))
		return RV_ERR_DEADLINE;
	ret = rv_ensemble_run(r, repo, opts, pp, np + tip, llm, err);
	if (ret < 0)
		return ret;
	ret = verify_llm(r, repo, opts, diffs, pp, np, tip, llm, pool, err);
	if (ret < 0)
		return ret;
	/*
	 * A majority (by weight) of the LLM voters that answered; the
	 * offline voters add their votes but look at too little to raise
	 * the bar. With no model answering, the offline rule holds.
	 */
	if (opts->quorum <= 0 && r->llm_answered)
		r->quorum = (int)(rv_vote_answered_weight(r) / 2) + 1;
	return 0;
}

/* Where the findings' lines are at the series tip. */
static void place_at_tip(struct rv_review *r, struct rv_diff *const *diffs)
{
	size_t np = r->series->npatches, i;

	for (i = 0; i < r->findings.n; i++)
		rv_verify_at_tip(&r->findings.items[i], diffs, np);
	for (i = 0; i < r->minority.n; i++)
		rv_verify_at_tip(&r->minority.items[i], diffs, np);
}

int rv_review_series(struct rv_review **out, struct rv_repo *repo,
		     const struct mp_series *s,
		     const struct rv_review_opts *opts, struct errmsg *err)
{
	static const struct rv_review_opts defaults = RV_REVIEW_OPTS_INIT;
	const struct rv_voter *const *voters;
	const struct rv_voter *offline[4];
	struct rv_findings pool = {0}, llm = {0};
	struct rv_review_opts o;
	struct rv_ensemble_patch *pp;
	struct mp_patch tip_patch = {0};
	struct sb tip_diff = SB_INIT;
	struct rv_diff **diffs;
	struct rv_review *r;
	size_t nvoters, i, k;
	int ret = 0;

	*out = NULL;
	/* One deadline for every stage, applying included. */
	o = opts ? *opts : defaults;
	if (o.deadline_at <= 0)
		o.deadline_at = rv_now() + deadline_secs(&o);
	if (o.apply.deadline_at <= 0 || o.apply.deadline_at > o.deadline_at)
		o.apply.deadline_at = o.deadline_at;
	opts = &o;
	if (rv_review_past_deadline(opts, "reading the input", err))
		return RV_ERR_DEADLINE;
	voters = opts->voters ? opts->voters : default_voters;
	nvoters = opts->voters ? opts->nvoters : ARRAY_SIZE(default_voters);
	if (!opts->voters) {
		nvoters = offline_voters(opts, offline);
		voters = offline;
	}

	r = xcalloc(1, sizeof(*r));
	r->series = s;
	if (opts->apply.nprereqs) {
		r->prereqs = xcalloc(opts->apply.nprereqs, sizeof(*r->prereqs));
		for (i = 0; i < opts->apply.nprereqs; i++)
			if (opts->apply.prereqs[i])
				r->prereqs[r->nprereqs++] =
					opts->apply.prereqs[i];
	}
	if (repo) {
		ret = rv_apply_series(&r->apply, repo, s, &opts->apply, err);
		/* Also when apply stopped at it (RV_ERR_DEADLINE). */
		if (rv_review_past_deadline(opts, "applying the series", err)) {
			rv_review_free(r);
			return RV_ERR_DEADLINE;
		}
		if (ret < 0) {
			if (ret == RV_ERR_APPLY && r->apply) {
				*out = r;
				return ret;
			}
			rv_review_free(r);
			return ret;
		}
	}
	take_voters(r, opts, voters, nvoters);
	alloc_patch_info(r, s, opts);

	diffs = xcalloc(s->npatches + 1, sizeof(*diffs));
	pp = xcalloc(s->npatches + 1, sizeof(*pp));
	ret = review_patches_offline(r, repo, opts, voters, nvoters, diffs, pp,
				     &pool, err);
	if (!ret) {
		drop_fixed_later(r, &pool, diffs, s->npatches);
		if (opts->nllm && opts->prompts)
			ret = review_llm(r, repo, opts, diffs, pp, &tip_patch,
					 &tip_diff, &llm, &pool, err);
	}
	if (!ret && !rv_review_past_deadline(opts, "voting", err)) {
		rv_vote(r, &pool);
		place_at_tip(r, diffs);
	} else if (!ret) {
		ret = RV_ERR_DEADLINE;
	}
	rv_findings_release(&pool);
	rv_findings_release(&llm);
	for (k = 0; k <= s->npatches; k++)
		rv_diff_free(diffs[k]);
	free(diffs);
	free(pp);
	free(tip_patch.commit_message);
	sb_release(&tip_diff);
	if (ret < 0) {
		rv_review_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void rv_review_free(struct rv_review *r)
{
	size_t i;

	if (!r)
		return;
	rv_apply_result_free(r->apply);
	free(r->prereqs);
	for (i = 0; i < r->nvoters; i++)
		free(r->voters[i]);
	free(r->voters);
	free(r->weights);
	free(r->is_llm);
	for (i = 0; i < r->ncalls; i++) {
		free(r->calls[i].voter);
		free(r->calls[i].reason);
	}
	free(r->calls);
	for (i = 0; i < r->nleft_out; i++)
		free(r->left_out[i]);
	free(r->left_out);
	rv_findings_release(&r->findings);
	rv_findings_release(&r->minority);
	for (i = 0; i < r->npatch_info; i++) {
		rv_similar_list_release(&r->similar[i]);
		free(r->risk_why[i]);
	}
	free(r->similar);
	free(r->risk_why);
	free(r->risk);
	free(r->stepdown);
	free(r->list);
	free(r->plan.cap);
	free(r->plan.order);
	free(r->plan.text);
	for (i = 0; i < r->nbreakers; i++)
		free(r->breakers[i]);
	free(r->breakers);
	for (i = 0; i < r->ndry; i++) {
		free(r->dry[i].voter);
		free(r->dry[i].label);
		free(r->dry[i].url);
		free(r->dry[i].body);
	}
	free(r->dry);
	rv_built_free(r->built);
	free(r);
}
