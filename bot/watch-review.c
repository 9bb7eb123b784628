// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-review.c - one series of a list's thread: is it due, is it a
 * RESEND, its review with the list's repository and prerequisites, the
 * reply composed, recorded with the series in one transaction, then
 * delivered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "review/cost.h"
#include "watch.h"

static bool is_muted(const struct wlist *l, const struct mp_patch *p)
{
	size_t i;

	for (i = 0; l->mute && l->mute[i]; i++) {
		if (p->author_email && strcasestr(p->author_email, l->mute[i]))
			return true;
		if (p->from && strcasestr(p->from, l->mute[i]))
			return true;
		if (p->subject_raw && strcasestr(p->subject_raw, l->mute[i]))
			return true;
	}
	return false;
}

int watch_author_muted(struct thread_ctx *t, const struct mp_patch *parent)
{
	if (is_muted(t->l, parent))
		return 1;
	if (!parent->author_email)
		return 0;
	return state_is_muted(t->w->st, t->l->name, parent->author_email);
}

static void patch_ids(const struct mp_series *s, struct sb *out)
{
	size_t k;
	char id[RV_OID_HEXSZ + 1];

	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];

		if (!p || !p->diff || rv_patch_id(p->diff, p->diff_len, id) < 0)
			sb_adds(out, "-,");
		else
			sb_addf(out, "%s,", id);
	}
}

static void tag_series(struct thread_ctx *t, const struct mp_series *s,
		       const char *tag)
{
	struct tmsg *m;
	size_t k;

	if (s->cover && (m = tmsg_find(t, s->cover->message_id)))
		m->tag = tag;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k] &&
		    (m = tmsg_find(t, s->patches[k]->message_id)))
			m->tag = tag;
}

static int64_t series_last_seen(struct thread_ctx *t, const struct mp_series *s)
{
	int64_t last = 0;
	struct tmsg *m;
	size_t k;

	if (s->cover && (m = tmsg_find(t, s->cover->message_id)))
		last = m->first_seen;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k] &&
		    (m = tmsg_find(t, s->patches[k]->message_id)) &&
		    m->first_seen > last)
			last = m->first_seen;
	return last;
}

static const char *list_method(struct watch *w, const struct wlist *l)
{
	/* digest: the reviews stay in the outbox; the digest is sent. */
	if (l->mode == MODE_DIGEST)
		return "outbox";
	/* An embargoed list with no maintainers has no one to send to. */
	if (l->embargo && !l->ncc)
		return "outbox";
	return l->mode == MODE_REPLY ? w->method : "outbox";
}

/* Open the list's repo, history and work tree once. */
static struct rv_repo *list_repo(struct watch *w, struct wlist *l)
{
	struct errmsg err = {""};
	char *path;

	if (l->rv || l->repo_failed || !l->repo)
		return l->rv;
	path = expand_home(l->repo);
	if (access(path, F_OK) < 0)
		errmsg_set(&err, -1, "%s: %s", path, strerror(errno));
	if (*err.msg || rv_repo_open(&l->rv, path, &err) < 0) {
		error("list %s: repo = %s: %s; its series are tagged "
		      "quorum/failed until it is fixed and '#quorum rerun'",
		      l->name, l->repo, err.msg);
		l->repo_failed = true;
		free(path);
		return NULL;
	}
	if (!l->workdir) {
		struct sb what = SB_INIT;

		/* The history index with the embeddings, as in review. */
		sb_addf(&what, "list %s", l->name);
		l->history = session_history(w->s.cfg, path, what.buf);
		l->workdir = rv_workdir_of(path);
		sb_release(&what);
	}
	free(path);
	return l->rv;
}

/* Record the reply and the series in one transaction, then deliver. */
static int record_and_send(struct thread_ctx *t, const char *key,
			   const char *pids, const char *msgid,
			   const char *author, const char *digest_line,
			   const struct mailed_findings *mf,
			   const struct sb *raw, enum series_status status)
{
	struct watch *w = t->w;
	const char *method = list_method(w, t->l);

	if (state_begin(w->st) < 0)
		goto fail;
	if (digest_line && t->l->mode == MODE_DIGEST &&
	    state_digest_add(w->st, key, t->l->name, digest_line, w->now) < 0) {
		state_rollback(w->st);
		goto fail;
	}
	/* pids NULL: an explanation, which leaves the series as it is. */
	if (state_reply_add(w->st, msgid, key, t->l->name, author, method,
			    raw->buf, raw->len, w->now) < 0 ||
	    (pids && state_series_set(w->st, key, t->l->name, t->thread, status,
				      pids, msgid, w->now) < 0) ||
	    (mf && mailed_findings_add(t, key, msgid, mf) < 0)) {
		state_rollback(w->st);
		goto fail;
	}
	if (state_commit(w->st) < 0) {
		state_rollback(w->st);
		goto fail;
	}
	deliver_one(w, msgid, method, raw->buf, raw->len, 0);
	return 0;
fail:
	return error("state db: %s", state_error(w->st));
}

/* Would one more reply pass the list's or the author's rate limit? */
static bool over_rate_limit(struct thread_ctx *t, const struct mp_patch *parent)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	long n;

	if (l->per_hour > 0 &&
	    (n = state_replies_since(w->st, l->name, NULL, w->now - 3600)) >=
		    l->per_hour) {
		printf("%s: rate limit of %d replies an hour reached; \"%s\" "
		       "waits\n",
		       l->name, l->per_hour,
		       parent->subject_raw ? parent->subject_raw : "");
		return true;
	}
	if (l->per_author_day > 0 && parent->author_email &&
	    (n = state_replies_since(w->st, l->name, parent->author_email,
				     w->now - 86400)) >= l->per_author_day) {
		printf("%s: rate limit of %d replies a day to %s reached; "
		       "\"%s\" waits\n",
		       l->name, l->per_author_day, parent->author_email,
		       parent->subject_raw ? parent->subject_raw : "");
		return true;
	}
	return false;
}

/* What a series is applied on, and what it declares in vain. */
struct watch_prereqs {
	struct mp_set *set;	    /* the prerequisite threads read */
	const struct mp_series **v; /* applied first, in order */
	size_t n;
	char **missing; /* prerequisite-message-ids not in the database */
	size_t nmissing;
};

/* Threads of the list's series looked up by prerequisite-patch-id:. */
#define PREREQ_PATCH_THREADS 8

/*
 * The threads of other series of the list (or of a watched list it
 * takes prerequisites from) that hold a patch s names in a
 * prerequisite-patch-id: line (git format-patch --base), from the state
 * db's patch-ids of the series watch has seen (so a prerequisite posted
 * in its own thread, and reviewed first, is found). Caller frees.
 */
static void prereq_patch_threads(struct thread_ctx *t,
				 const struct mp_series *s, char ***threads,
				 size_t *n)
{
	const struct wlist *l = t->l;
	size_t k, j, i;

	*threads = NULL;
	*n = 0;
	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *p = k ? s->patches[k - 1] : s->cover;

		for (j = 0; p && j < p->nprereq_patch_ids; j++)
			for (i = 0;
			     !i || (l->share_lists && l->share_lists[i - 1]);
			     i++)
				if (state_threads_with_patch(
					    t->w->st,
					    i ? l->share_lists[i - 1] : l->name,
					    p->prereq_patch_ids[j], t->thread,
					    threads, n,
					    PREREQ_PATCH_THREADS) < 0)
					warning("state db: %s",
						state_error(t->w->st));
	}
}

/*
 * The series s declares as its prerequisites (review/apply-prereq.c), found in
 * its own thread, in the threads its prerequisite-message-id: lines name, or in
 * those of the list's series with a patch its prerequisite-patch-id: lines
 * name; they are read from notmuch and never tagged: they are not reviewed
 * here. None when s applies without them (they are in the tree already).
 */
static void plan_prereqs(struct thread_ctx *t, const struct mp_series *s,
			 struct rv_repo *repo,
			 const struct rv_apply_opts *aopts,
			 struct watch_prereqs *pq)
{
	const struct mp_series **cand;
	struct local_mail_filter filter;
	struct rv_prereq_plan pl;
	size_t nc = 0, i, self = 0, n;
	bool found = false;

	char **extra;
	size_t nextra;

	memset(pq, 0, sizeof(*pq));
	if (!t->set || !rv_prereq_declares_any(s))
		return;
	prereq_patch_threads(t, s, &extra, &nextra);
	/* Only the list's mail, and that of the lists it shares with. */
	filter.keep = watch_file_usable;
	filter.arg = t;
	local_mail_prereqs(t->w->db, s, t->thread, extra, nextra, &filter,
			   &pq->set, &pq->missing, &pq->nmissing);
	for (i = 0; i < nextra; i++)
		free(extra[i]);
	free(extra);
	cand = xcalloc(t->set->nseries + (pq->set ? pq->set->nseries : 0) + 1,
		       sizeof(*cand));
	for (i = 0; i < t->set->nseries; i++) {
		if (t->set->series[i] == s) {
			self = nc;
			found = true;
		}
		cand[nc++] = t->set->series[i];
	}
	for (i = 0; pq->set && i < pq->set->nseries; i++)
		cand[nc++] = pq->set->series[i];
	if (found) {
		rv_prereq_plan_init(&pl, cand, nc);
		pq->v = xcalloc(nc + 1, sizeof(*pq->v));
		n = rv_prereq_declared(&pl, self, pq->v);
		if (n && repo && !rv_prereq_applies(repo, s, aopts, pq->v, n) &&
		    rv_prereq_applies(repo, s, aopts, NULL, 0))
			n = 0; /* already in the tree */
		pq->n = n;
		rv_prereq_plan_release(&pl);
	}
	free(cand);
}

static void watch_prereqs_release(struct watch_prereqs *pq)
{
	size_t i;

	for (i = 0; i < pq->nmissing; i++)
		free(pq->missing[i]);
	free(pq->missing);
	free(pq->v);
	mp_set_free(pq->set);
}

/* A series of a thread on its way to a reply. */
struct series_review {
	const struct mp_series *s;
	const struct mp_patch *parent; /* the mail the reply answers */
	struct sb key, pids, msgid, raw;
	struct series_row row;
	char earlier[256]; /* a RESEND: the Message-ID of the earlier reply */
	bool unchanged;	   /* ... which this reply points to */
	struct rv_review *r;
	struct rv_ledger *ledger;
	struct watch_prereqs pq;
	struct mailed_findings mf;
};

/* The series' subject as posted; patch 1's title for an untouched cover. */
static const char *subject_of(const struct mp_series *s)
{
	const struct mp_patch *p = mp_series_first(s);

	if (!p || !p->subject_raw)
		return "";
	if (strstr(p->subject_raw, "*** SUBJECT HERE ***") &&
	    mp_series_title(s))
		return mp_series_title(s);
	return p->subject_raw;
}

/* Record what became of the series, and tag its mail so. */
static void series_settle(struct thread_ctx *t, struct series_review *sr,
			  enum series_status status, const char *pids)
{
	static const char *const tags[] = {
		[SERIES_REVIEWED] = "quorum/reviewed",
		[SERIES_SKIPPED] = "quorum/skipped",
		[SERIES_FAILED] = "quorum/failed",
	};

	state_series_set(t->w->st, sr->key.buf, t->l->name, t->thread, status,
			 pids, NULL, t->w->now);
	tag_series(t, sr->s, tags[status]);
	if (status == SERIES_SKIPPED)
		t->w->skipped++;
	else if (status == SERIES_FAILED)
		t->w->failed++;
}

/* The series waits (for its patches, or under a rate limit). */
static void series_wait(struct thread_ctx *t, struct series_review *sr)
{
	if (sr->row.status != SERIES_WAITING)
		state_series_set(t->w->st, sr->key.buf, t->l->name, t->thread,
				 SERIES_WAITING, NULL, NULL, t->w->now);
	t->w->waiting++;
}

/*
 * Is the series to be reviewed now? Not when it was already, when it
 * is superseded or muted, waits for patches, has none, or is over a
 * rate limit; each is recorded and said.
 */
static bool series_due(struct thread_ctx *t, struct series_review *sr)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	const struct mp_series *s = sr->s;
	const struct mp_patch *parent = sr->parent;
	int64_t last;

	if (sr->row.status == SERIES_REVIEWED ||
	    sr->row.status == SERIES_SKIPPED ||
	    sr->row.status == SERIES_FAILED) {
		tag_series(t, s,
			   sr->row.status == SERIES_REVIEWED ? "quorum/reviewed"
			   : sr->row.status == SERIES_SKIPPED
				   ? "quorum/skipped"
				   : "quorum/failed");
		return false;
	}
	if (s->superseded || watch_author_muted(t, parent) > 0) {
		printf("%s: skipped %s series \"%s\"\n", l->name,
		       s->superseded ? "superseded" : "muted", subject_of(s));
		series_settle(t, sr, SERIES_SKIPPED, NULL);
		return false;
	}
	last = series_last_seen(t, s);
	if (!s->complete && w->now - last < l->wait) {
		if (sr->row.status != SERIES_WAITING)
			printf("%s: waiting for %zu missing patch%s of \"%s\" "
			       "(up to %llds)\n",
			       l->name, s->nmissing,
			       s->nmissing == 1 ? "" : "es", subject_of(s),
			       (long long)(l->wait - (w->now - last)));
		series_wait(t, sr);
		return false;
	}
	if (s->nmissing >= s->npatches) {
		/* A cover letter alone: nothing to review. */
		printf("%s: skipped \"%s\": no patch of it arrived\n", l->name,
		       subject_of(s));
		series_settle(t, sr, SERIES_SKIPPED, NULL);
		return false;
	}
	if (over_rate_limit(t, parent)) {
		series_wait(t, sr);
		return false;
	}
	return true;
}

/*
 * A RESEND of patches reviewed before: said "unchanged" once (then
 * sr->unchanged, with the earlier reply), then skipped. false when the
 * series is skipped.
 */
static bool series_check_unchanged(struct thread_ctx *t,
				   struct series_review *sr)
{
	struct watch *w = t->w;
	int rr;

	if (t->explain)
		return true;
	/* The list's own series: a RESEND elsewhere says nothing here. */
	rr = state_series_same_patches(w->st, sr->key.buf, t->l->name,
				       sr->pids.buf, sr->earlier,
				       sizeof(sr->earlier));
	if (rr <= 0)
		return true;
	if (state_series_unchanged_noted(w->st, t->l->name, sr->pids.buf) !=
	    0) {
		/* Said "unchanged" once already: stay quiet. */
		printf("%s: skipped \"%s\": unchanged, and already said so\n",
		       t->l->name, subject_of(sr->s));
		series_settle(t, sr, SERIES_SKIPPED, sr->pids.buf);
		return false;
	}
	/* A RESEND: say so once, never review it again. */
	reply_msgid(w, sr->key.buf, "unchanged", &sr->msgid);
	sr->unchanged = true;
	return true;
}

/* The Message-ID of the reply: a review, a rerun's, an explanation. */
static void review_msgid(struct thread_ctx *t, struct series_review *sr)
{
	struct sb key = SB_INIT;

	sb_adds(&key, sr->key.buf);
	if (t->explain) {
		sb_addf(&key, "#%s", t->explain_id);
		reply_msgid(t->w, key.buf, "explain", &sr->msgid);
	} else if (sr->row.generation) {
		/* A rerun: a new reply, a new Message-ID. */
		sb_addf(&key, "#%d", sr->row.generation);
		reply_msgid(t->w, key.buf, "review", &sr->msgid);
	} else {
		reply_msgid(t->w, key.buf, "review", &sr->msgid);
	}
	sb_release(&key);
}

bool watch_list_repo_ok(struct watch *w, struct wlist *l)
{
	struct sb where = SB_INIT;

	if (!l->repo) {
		qconfig_where(w->s.cfg, "list", l->name, NULL, &where);
		error("list %s (%s) has no repo key: its series cannot be "
		      "applied, and are tagged quorum/failed",
		      l->name, where.buf);
		sb_release(&where);
		return false;
	}
	return list_repo(w, l) != NULL;
}

/*
 * The pass's plan left the series to the offline voters: its reply says
 * why, and what is left of the day, as a review that asked would.
 */
static void plan_offline_said(struct rv_review *r,
			      const struct rv_review_opts *opts)
{
	struct rv_caps day = {0};

	if (!r->stepdown)
		r->stepdown = xstrdup_or_null(
			"not reviewed by the models: the day's budget went "
			"to riskier series first; only the offline voters "
			"voted");
	if (!opts->ledger || !opts->list || opts->budget_day <= 0 || r->list)
		return;
	day.list = opts->list;
	day.per_day = opts->budget_day;
	if (rv_ledger_left(opts->ledger, &day, &r->day_left, NULL, 0, NULL) < 0)
		return;
	r->day_budget = opts->budget_day;
	r->list = xstrdup_or_null(opts->list);
}

int watch_series_dry(struct thread_ctx *t, const struct mp_series *s,
		     struct rv_review **out)
{
	/* Not the offline voters: the plan needs the model requests only. */
	static const struct rv_voter *const no_voters[1];
	struct watch *w = t->w;
	struct wlist *l = t->l;
	struct rv_review_opts opts = w->s.opts;
	struct rv_ledger *ledger = NULL;
	struct watch_prereqs pq;
	struct errmsg err = {""};
	int rr;

	*out = NULL;
	if (!list_repo(w, l))
		return -1;
	opts.apply.branch = l->branch;
	opts.history = l->history;
	opts.workdir = l->workdir;
	opts.voters = no_voters;
	opts.nvoters = 0;
	if (w->s.llm.n &&
	    cost_review_opts(w->s.cfg, l->name, 0, &opts, &ledger, &err) < 0)
		return error("list %s: %s", l->name, err.msg);
	/*
	 * Every request as the review would build it, bounded as its own
	 * plan bounds it (token counts where they are free), under no cap:
	 * the pass's plan is what shares the caps out.
	 */
	opts.dry_run = true;
	opts.keep_built = true;
	opts.budget_review = opts.budget_day = 0;
	opts.budget_run = opts.budget_month = 0;
	plan_prereqs(t, s, l->rv, &opts.apply, &pq);
	opts.apply.prereqs = pq.v;
	opts.apply.nprereqs = pq.n;
	rr = rv_review_series(out, l->rv, s, &opts, &err);
	l->rv_uses++;
	watch_prereqs_release(&pq);
	rv_ledger_free(ledger);
	if (rr < 0 && *out) {
		/* It does not apply: its review asks no model. */
		rv_review_free(*out);
		*out = NULL;
	}
	return rr < 0 ? -1 : 0;
}

/*
 * The run budget of a series in the pass's plan, re-planned with what
 * is left under the list's caps now (watch_grant_cap): the money the
 * series before it did not spend goes on to the next, riskiest first,
 * and none is taken from the series still promised theirs. 0: the
 * offline voters only.
 */
static double grant_cap(struct wlist *l, const struct rv_review_opts *opts,
			struct pass_grant *g)
{
	struct rv_caps caps = {0};
	double left = 0;

	caps.list = l->name;
	caps.per_day = opts->budget_day;
	caps.monthly = opts->budget_month;
	if (!opts->ledger ||
	    rv_ledger_left(opts->ledger, &caps, &left, NULL, 0, NULL) < 0)
		return g->models ? g->usd : 0; /* the plan as it was made */
	return watch_grant_cap(l, g, left);
}

/*
 * Review the series with the list's repository, the session's voters
 * and the list's caps. 0, or -1 when there is nothing to reply.
 */
static int series_review_run(struct thread_ctx *t, struct series_review *sr)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	struct rv_review_opts opts = w->s.opts;
	struct pass_grant *g = NULL;
	struct errmsg err = {""};
	int rr;

	if (!list_repo(w, l)) {
		/*
		 * The config's fault, said once a pass: failed, not
		 * retried every pass (a rerun or a new version is).
		 */
		printf("%s: failed \"%s\": the list's repo is %s\n", l->name,
		       subject_of(sr->s),
		       l->repo ? "not a repository" : "not set");
		series_settle(t, sr, SERIES_FAILED, sr->pids.buf);
		w->misconfigured = true;
		return -1;
	}
	opts.apply.branch = l->branch;
	opts.history = l->history;
	opts.workdir = l->workdir;
	if (w->s.llm.n) {
		/* The list's caps, and the answer cache. */
		if (cost_review_opts(w->s.cfg, l->name, 0, &opts, &sr->ledger,
				     &err) < 0)
			return error("list %s: %s", l->name, err.msg);
		opts.series_key = sr->key.buf;
		/*
		 * The pass's plan: what is left less the promises to the
		 * series still to come caps this series' run (a ledger
		 * handle of its own), or the money went to riskier series
		 * and the offline voters vote alone.
		 */
		g = watch_grant(l, sr->key.buf);
		if (g)
			opts.reuse = g->built;
		if (g && !g->caps) {
			bool planned = g->models;
			double cap = grant_cap(l, &opts, g);

			if (g->models && !planned)
				printf("%s: \"%s\" gets the models after all: "
				       "$%.4f the series before it left\n",
				       l->name, subject_of(sr->s), cap);
			/* A run budget of 0 is no cap: 1e-9 buys none. */
			if (g->models)
				opts.budget_run = cap > 1e-9 ? cap : 1e-9;
			else
				opts.nllm = 0;
		}
	}
	plan_prereqs(t, sr->s, l->rv, &opts.apply, &sr->pq);
	opts.apply.prereqs = sr->pq.v;
	opts.apply.nprereqs = sr->pq.n;
	rr = rv_review_series(&sr->r, l->rv, sr->s, &opts, &err);
	l->rv_uses++;
	if (sr->r && g && !g->models)
		plan_offline_said(sr->r, &opts);
	if (rr < 0 && !sr->r) {
		error("list %s: cannot review \"%s\": %s", l->name,
		      subject_of(sr->s), err.msg);
		series_settle(t, sr, SERIES_FAILED, sr->pids.buf);
		return -1;
	}
	review_msgid(t, sr);
	return 0;
}

/* Compose the reply into sr->raw. 0, or -1 (recorded and said). */
static int series_compose(struct thread_ctx *t, struct series_review *sr)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	struct reply_opts ro = REPLY_OPTS_INIT;
	struct errmsg err = {""};
	struct sb said = SB_INIT;

	ro.from = w->from;
	ro.domain = w->domain;
	ro.msgid = sr->msgid.buf;
	ro.list_address = l->address;
	/* An embargoed (security) list: only the maintainers hear of it. */
	ro.to_author = l->to_author && !l->embargo;
	ro.to_list = l->to_list && !l->embargo;
	ro.maintainers = (const char *const *)l->cc;
	ro.nmaintainers = l->ncc;
	ro.prompt_hash = w->prompt_hash;
	ro.unchanged_since = sr->unchanged ? sr->earlier : NULL;
	ro.explain = t->explain;
	ro.explain_arg = t->explain_arg;
	if (t->explain) {
		/* In reply to the command; no such finding: its sender only. */
		ro.command = t->explain_cmd;
		if (t->explain_who) {
			ro.command_name = t->explain_who->name;
			ro.command_addr = t->explain_who->addr;
			watch_sender_said(l, t->explain_who, &said);
			ro.command_said = said.buf;
		}
		ro.sender_only = !sr->r || t->explain < 1 ||
				 (size_t)t->explain > sr->r->findings.n;
	}
	ro.now = w->now;
	ro.missing_prereqs = (const char *const *)sr->pq.missing;
	ro.nmissing_prereqs = sr->pq.nmissing;
	/* An explanation shows its finding whatever was mailed before. */
	if (!t->explain && !sr->unchanged) {
		if (mailed_findings_get(t, sr->key.buf, sr->s, sr->r, &sr->mf) <
		    0) {
			error("state db: %s", state_error(w->st));
			t->retry = true;
			sb_release(&said);
			return -1;
		}
		ro.earlier = sr->mf.earlier;
	}
	if (reply_compose(&sr->raw, sr->s, sr->r, &ro, &err) < 0) {
		error("list %s: %s", l->name, err.msg);
		series_settle(t, sr, SERIES_FAILED, sr->pids.buf);
		sb_release(&said);
		return -1;
	}
	sb_release(&said);
	return 0;
}

/* The series' line in the list's digest. */
static void series_digest_line(const struct series_review *sr, struct sb *out)
{
	const struct mp_patch *parent = sr->parent;
	const char *outcome;

	if (sr->unchanged)
		outcome = "unchanged since an earlier review";
	else if (sr->r->apply && sr->r->apply->failed >= 0)
		outcome = "does not apply";
	else
		outcome = sr->r->findings.n ? "findings" : "no findings";
	sb_addf(out, "\"%s\" from %s: %s <%s>", subject_of(sr->s),
		parent->from ? parent->from : "?", outcome, parent->message_id);
	if (!sr->unchanged && sr->r->findings.n)
		sb_addf(out, " (%zu at quorum)", sr->r->findings.n);
}

/* The series did not apply: the reply says so, and it is failed. */
static bool series_not_applied(const struct series_review *sr)
{
	return !sr->unchanged && sr->r && sr->r->apply &&
	       sr->r->apply->failed >= 0;
}

int watch_send_note(struct thread_ctx *t, const struct tcmd *c,
		    const char *text)
{
	struct watch *w = t->w;
	const struct mp_patch *cmd = c->p;
	struct reply_opts ro = REPLY_OPTS_INIT;
	struct sb key = SB_INIT, msgid = SB_INIT, raw = SB_INIT, body = SB_INIT;
	struct errmsg err = {""};
	int ret = -1;

	sb_addf(&key, "#note#%s", cmd->message_id);
	reply_msgid(w, key.buf, "note", &msgid);
	ro.from = w->from;
	ro.domain = w->domain;
	ro.msgid = msgid.buf;
	ro.now = w->now;
	/* To the From that was checked, never the mail's in-body From:. */
	ro.command_name = c->who.name;
	ro.command_addr = c->who.addr;
	sb_adds(&body, text);
	sb_adds(&body, "\n\n");
	watch_sender_said(t->l, &c->who, &body);
	if (reply_compose_note(&raw, cmd, body.buf, &ro, &err) < 0) {
		error("list %s: %s", t->l->name, err.msg);
		goto out;
	}
	/* pids NULL: the series is left as it is. */
	ret = record_and_send(t, key.buf, NULL, msgid.buf, c->who.addr, NULL,
			      NULL, &raw, SERIES_REVIEWED);
	if (!ret)
		printf("%s: answered %s, reply <%s> (%s)\n", t->l->name,
		       c->who.addr, msgid.buf, list_method(w, t->l));
out:
	sb_release(&key);
	sb_release(&msgid);
	sb_release(&raw);
	sb_release(&body);
	return ret;
}

/* Say what was sent, and count it. */
static void series_report(struct thread_ctx *t, struct series_review *sr)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	const struct pass_grant *g;

	if (t->explain) {
		if (t->explain > 0 && sr->r &&
		    (size_t)t->explain <= sr->r->findings.n)
			printf("%s: explained finding %d of \"%s\", reply <%s> "
			       "(%s)\n",
			       l->name, t->explain, subject_of(sr->s),
			       sr->msgid.buf, list_method(w, l));
		else
			printf("%s: no finding '%s' to explain in \"%s\", "
			       "said to the sender, reply <%s> (%s)\n",
			       l->name, t->explain_arg ? t->explain_arg : "",
			       subject_of(sr->s), sr->msgid.buf,
			       list_method(w, l));
		return;
	}
	if (series_not_applied(sr)) {
		const struct rv_patch_result *pr =
			&sr->r->apply->patches[sr->r->apply->failed];

		printf("%s: failed \"%s\": patch %d does not apply, "
		       "reply <%s> (%s)\n",
		       l->name, subject_of(sr->s), pr->index, sr->msgid.buf,
		       list_method(w, l));
		tag_series(t, sr->s, "quorum/failed");
		w->failed++;
		return;
	}
	printf("%s: reviewed \"%s\": %s", l->name, subject_of(sr->s),
	       sr->unchanged	   ? "unchanged since an earlier review"
	       : sr->r->findings.n ? "findings"
				   : "no findings");
	if (sr->mf.repeated)
		printf(" (%zu of them still open from earlier reviews)",
		       sr->mf.repeated);
	g = sr->unchanged ? NULL : watch_grant(l, sr->key.buf);
	if (g && !g->models)
		printf(" (offline voters only: the day's budget went to "
		       "riskier series first)");
	printf(", reply <%s> (%s)\n", sr->msgid.buf, list_method(w, l));
	tag_series(t, sr->s, "quorum/reviewed");
	w->reviewed++;
}

static void series_review_release(struct series_review *sr)
{
	mailed_findings_release(&sr->mf);
	rv_review_free(sr->r);
	watch_prereqs_release(&sr->pq);
	rv_ledger_free(sr->ledger);
	sb_release(&sr->key);
	sb_release(&sr->pids);
	sb_release(&sr->msgid);
	sb_release(&sr->raw);
}

void review_one(struct thread_ctx *t, const struct mp_series *s)
{
	struct series_review sr = {
		.s = s,
		.parent = mp_series_first(s),
		.key = SB_INIT,
		.pids = SB_INIT,
		.msgid = SB_INIT,
		.raw = SB_INIT,
	};
	struct sb dline = SB_INIT;
	struct wlist *l = t->l;
	struct pass_grant *g;

	if (!sr.parent)
		return;
	watch_series_key(t, s, &sr.key);
	if (state_series_get(t->w->st, sr.key.buf, &sr.row) < 0) {
		error("state db: %s", state_error(t->w->st));
		t->retry = true;
		goto out;
	}
	/* An explanation is asked for: whatever the series' status. */
	if (!t->explain && !series_due(t, &sr))
		goto out;
	patch_ids(s, &sr.pids);
	if (!series_check_unchanged(t, &sr))
		goto out;
	if (!sr.unchanged && series_review_run(t, &sr) < 0)
		goto out;
	if (series_compose(t, &sr) < 0)
		goto out;
	if (!t->explain)
		series_digest_line(&sr, &dline);
	/* pids NULL: an explanation, which leaves the series as it is. */
	if (record_and_send(t, sr.key.buf, t->explain ? NULL : sr.pids.buf,
			    sr.msgid.buf, sr.parent->author_email,
			    t->explain ? NULL : dline.buf,
			    t->explain ? NULL : &sr.mf, &sr.raw,
			    series_not_applied(&sr) ? SERIES_FAILED
						    : SERIES_REVIEWED) < 0) {
		t->retry = true;
		goto out;
	}
	series_report(t, &sr);
out:
	/*
	 * Reviewed, skipped or waiting, the series is done with this pass:
	 * what the plan promised it is no longer held from the others.
	 */
	if (!t->explain && (g = watch_grant(l, sr.key.buf)))
		g->done = true;
	series_review_release(&sr);
	sb_release(&dline);
	/*
	 * The repo handle keeps every object a review wrote in memory:
	 * reopen it now and then so memory does not grow with the series.
	 */
	if (l->rv && l->rv_uses >= REPO_REOPEN_AFTER) {
		rv_repo_free(l->rv);
		l->rv = NULL;
		l->rv_uses = 0;
	}
}
