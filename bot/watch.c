// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch.c - `quorum watch`: read each opted-in list's new mail from
 * notmuch, assemble series, review the complete (or long-waiting) ones
 * and reply in their thread exactly once.
 *
 * Exactly once: a reply is composed, then recorded as intended in the
 * state db in the same transaction that marks its series reviewed, then
 * delivered, then marked sent. A run starts by delivering whatever is
 * still intended, and outbox delivery is idempotent by file name, so a
 * kill -9 anywhere neither loses nor doubles a reply. (A sendmail
 * command that exits 0 just before a kill is the one window left: the
 * retry carries the same Message-ID, so receivers see one mail.)
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <notmuch.h>

#include "report.h"
#include "review/cost.h"
#include "watch.h"

static int cmd_watch(int argc, char **argv);

const struct cmd cmd_watch_def = {
	"watch",
	cmd_watch,
	"quorum watch [--once [--dry-run[=DIR]]] [--interval SECONDS]",
	"the mailing-list bot: review new series from notmuch, reply in-thread",
	"Reads the notmuch database (notmuch.database in the config, else\n"
	"notmuch's own config) and, for each [list \"NAME\"] section with an\n"
	"address, the new mail to that list. Complete series (or incomplete "
	"ones\n"
	"after list.NAME.wait with no new patch) are reviewed with the list's\n"
	"repo and branch, and the review is written as a reply in the series'\n"
	"thread, exactly once. Lists without a section are never reviewed.\n"
	"A series that names prerequisite series (prerequisite-message-id:,\n"
	"-patch-id:, -change-id:) is applied on top of those found in the\n"
	"notmuch database among the list's own mail and that of the lists\n"
	"its prerequisites-from names, which are only read, and the reply "
	"says\n"
	"so; when it does not apply, the reply names a prerequisite that is "
	"not\n"
	"there (one on another list is not there). A message is a list's "
	"when\n"
	"its To or Cc holds the list's address; each list reads only its own\n"
	"mail in a thread, and an embargoed list's mail serves no other list.\n"
	"A finding the author was already mailed in full (the same code, for\n"
	"an earlier version) is listed in one line, with that reply's\n"
	"Message-ID, instead of being repeated.\n"
	"\n"
	"Options:\n"
	"  --once          process what is there and exit\n"
	"  --dry-run[=DIR] with --once: plan the pass and say it, send "
	"nothing:\n"
	"                  per series, the voters the plan gives it, its "
	"requests\n"
	"                  and their cost planned (answers at the voters'\n"
	"                  floors) and at most, then each request the models\n"
	"                  would get, as review --dry-run prints it (or its "
	"body\n"
	"                  in DIR/NNNN-VOTER.json), and the totals; no model\n"
	"                  request, no mail, no tag, nothing recorded in the\n"
	"                  state db (only the voters' free token counters are\n"
	"                  asked)\n"
	"  --interval N    seconds between polls without --once (default "
	"300);\n"
	"                  SIGUSR1 polls at once (contrib/notmuch-post-new),\n"
	"                  SIGTERM or SIGINT ends the loop after the series\n"
	"                  at hand; the pid is in watch.pid next to the state "
	"db\n"
	"  -h, --help      this text\n"
	"\n"
	"Per list: address, repo, branch, mode (dry-run: replies only to the\n"
	"outbox maildir, the default; reply: delivered; digest: reviews to "
	"the\n"
	"outbox, and one mail a day to the maintainers listing the series),\n"
	"reply-to (author,list),\n"
	"maintainers (Cc'd, and may send commands), query (notmuch query; "
	"default\n"
	"'tag:new and (to:ADDR or cc:ADDR)'), wait (30m; s, m, h, d "
	"suffixes),\n"
	"mute (comma-separated senders or subject words never reviewed),\n"
	"embargo (true: replies go to the maintainers only, its mail serves "
	"no\n"
	"other list), prerequisites-from (lists, by name or address, whose\n"
	"series may be its prerequisites; never an embargoed one), "
	"max-per-hour\n"
	"(replies on the list), max-per-author-per-day (series over a limit\n"
	"wait for the next pass).\n"
	"[deliver] method = outbox | sendmail | smtp, outbox (a maildir; "
	"default\n"
	"$XDG_DATA_HOME/quorum/outbox), sendmail (a command, split into argv,\n"
	"never run by a shell; default 'sendmail -i -t'), smtp-url\n"
	"(smtp://host:587, STARTTLS required unless starttls = false; or\n"
	"smtps://), smtp-user, smtp-password-env (the variable holding the\n"
	"password), max-attempts (5).\n"
	"[watch] domain (of quorum's Message-IDs), from, state (the state db;\n"
	"default $XDG_STATE_HOME/quorum/state.db).\n"
	"\n"
	"Money: with list.NAME.budget-per-day or budget.monthly, each pass "
	"plans\n"
	"the list's money before its first model request (plan:): every "
	"series\n"
	"it will review, a '#quorum rerun' of the pass too, is built as a dry\n"
	"run and its requests bounded as the review bounds them (token counts\n"
	"where the server counts for free, else bytes) at each voter's "
	"answer\n"
	"floor; riskiest first (history risk, else the larger diff) each gets\n"
	"that while the tightest cap lasts, the next what is left. Those are\n"
	"reviewed first; the others at the end of the pass, riskiest first,\n"
	"each with what the series before it did not spend, or by the "
	"offline\n"
	"voters only, and their replies say so (posting order is kept for a\n"
	"thread with a command and those before it, a v1 and its v2, and\n"
	"under max-per-hour); no cap is ever passed.\n"
	"\n"
	"Commands, in a reply in the thread from the series' author or a\n"
	"maintainer (list.NAME.commands: dkim, a DKIM signature of the From\n"
	"domain must vouch for the sender, the default once the list's mail\n"
	"comes signed; from, the From header, one plain mailbox; off, none;\n"
	"dkim-keys = FILE reads the keys from FILE instead of DNS), on a line\n"
	"of their own: '#quorum rerun' (review again),\n"
	"'#quorum mute' (never review the author's mail on this list again;\n"
	"acknowledged to the sender), '#quorum unmute' (undo it),\n"
	"'#quorum explain N' (finding N in detail, with the similar past\n"
	"fixes; in reply to the command mail, to its sender only when there\n"
	"is no finding N or N is not a number in digits). An answer says how\n"
	"the sender was verified; a command not taken gets none (the run says\n"
	"why).\n"
	"\n"
	"Mail is tagged quorum/seen, quorum/reviewed, quorum/skipped or\n"
	"quorum/failed; no other tag is touched.\n"
	"\n"
	"Exit status: 0 when the run completed (series that failed are tagged\n"
	"quorum/failed and counted), 2 usage or config error (a malformed\n"
	"config, a key quorum does not know, a [voter] without url or model,\n"
	"a list whose repo is missing or not a repository), 3 environment\n"
	"error (notmuch database, state db, a missing API key).",
};

volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t wake_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGUSR1 (contrib/notmuch-post-new): new mail, look now. */
static void on_wake(int sig)
{
	(void)sig;
	wake_requested = 1;
}

/* ---- tagging ---------------------------------------------------------- */

static void tag_message(struct watch *w, const char *msgid, const char *tag)
{
	notmuch_message_t *m = NULL;

	if (notmuch_database_find_message(w->db, msgid, &m) || !m)
		return;
	notmuch_message_add_tag(m, "quorum/seen");
	if (tag)
		notmuch_message_add_tag(m, tag);
	notmuch_message_destroy(m);
}

struct tmsg *tmsg_find(struct thread_ctx *t, const char *msgid)
{
	size_t i;

	for (i = 0; msgid && i < t->n; i++)
		if (!strcmp(t->msgs[i].msgid, msgid))
			return &t->msgs[i];
	return NULL;
}

/* Mail quorum wrote: its own Message-ID domain or an X-Quorum- header. */
static bool is_own_mail(struct watch *w, const char *msgid,
			const struct sb *raw)
{
	const char *at = msgid ? strrchr(msgid, '@') : NULL;
	const char *p = raw->buf, *end = raw->buf + raw->len;

	if (at && !strcasecmp(at + 1, w->domain))
		return true;
	/* Scan the header block only. */
	while (p && p < end) {
		if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n'))
			break;
		if (end - p > 9 && !strncasecmp(p, "X-Quorum-", 9))
			return true;
		p = memchr(p, '\n', (size_t)(end - p));
		if (p)
			p++;
	}
	return false;
}

/*
 * The stable key of a series: its thread root (the oldest reference of
 * the cover, else of the first patch present, else that mail itself),
 * version, total and the sender of the patches, so it stays the same
 * whichever of its mails arrived first.
 */
static void series_key_of(const struct mp_series *s, struct sb *key)
{
	const struct mp_patch *p = mp_series_first(s), *first = NULL;
	const char *root;
	size_t k;

	for (k = 0; k < s->npatches && !first; k++)
		first = s->patches[k];
	if (!first)
		first = p;
	root = p->nreferences ? p->references[0] : p->message_id;
	if (!s->cover && first->nreferences)
		root = first->references[0];
	sb_addf(key, "%s/v%d/%d/%s", root ? root : "", s->version, s->total,
		first->from ? first->from : "");
}

/*
 * ... led by the list's name: a series of another list, or one made to
 * look like it (References: and From: are the sender's to write), is
 * never taken for one of this list, nor the other way round. A series
 * recorded for this list before keys carried the list keeps its key.
 */
void watch_series_key(struct thread_ctx *t, const struct mp_series *s,
		      struct sb *key)
{
	struct sb old = SB_INIT;
	struct series_row row;

	series_key_of(s, &old);
	/* A newline: no list name has one. */
	sb_addf(key, "%s\n%s", t->l->name, old.buf);
	if (!state_series_get(t->w->st, key->buf, &row) && !row.exists &&
	    !state_series_get(t->w->st, old.buf, &row) && row.exists &&
	    !strcmp(row.list, t->l->name)) {
		sb_reset(key);
		sb_adds(key, old.buf);
	}
	sb_release(&old);
}

/* A message-id from a hash of key: stable across a retry. */
void reply_msgid(struct watch *w, const char *key, const char *what,
		 struct sb *out)
{
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	git_odb_hash(&oid, key, strlen(key), GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	sb_addf(out, "quorum.%.20s.%s@%s", hex, what, w->domain);
}

/* Deliver one recorded reply; updates the state. 0 delivered, -1 not. */
int deliver_one(struct watch *w, const char *msgid, const char *method,
		const char *raw, size_t len, int attempts)
{
	struct errmsg err = {""};
	int r;

	if (!strcmp(method, "sendmail"))
		r = deliver_command(w->sendmail, raw, len, &err);
	else if (!strcmp(method, "smtp"))
		r = deliver_smtp(&w->smtp, raw, len, &err);
	else
		r = deliver_outbox(w->outbox, msgid, raw, len, NULL, &err);
	if (r == 0) {
		if (state_reply_sent(w->st, msgid, w->now) < 0)
			warning("state db: %s", state_error(w->st));
		w->delivered++;
		return 0;
	}
	if (attempts + 1 >= w->max_attempts) {
		struct errmsg e2 = {""};

		warning("reply <%s> not delivered after %d attempts (%s); "
			"it waits in the outbox",
			msgid, attempts + 1, err.msg);
		if (deliver_outbox(w->outbox, msgid, raw, len, err.msg, &e2) <
		    0)
			warning("%s", e2.msg);
		state_reply_failed(w->st, msgid, err.msg, 0, true);
		w->held++;
	} else {
		int64_t delay = 60LL << (attempts < 10 ? attempts : 10);

		warning("reply <%s> not delivered (%s); retrying in %llds",
			msgid, err.msg, (long long)delay);
		state_reply_failed(w->st, msgid, err.msg, w->now + delay,
				   false);
	}
	return -1;
}

static int deliver_pending_one(void *arg, const struct reply_row *r)
{
	struct watch *w = arg;

	deliver_one(w, r->msgid, r->method ? r->method : "outbox", r->raw,
		    r->len, r->attempts);
	return stop_requested ? 1 : 0;
}

/*
 * Sort one message of the thread: its tag when it is not for review,
 * a #quorum command into t->cmds, a patch or cover letter into c.
 */
static void thread_add_message(struct thread_ctx *t, struct mp_collector *c,
			       notmuch_message_t *m, struct sb *raw)
{
	struct watch *w = t->w;
	const char *id = notmuch_message_get_message_id(m);
	const char *file = notmuch_message_get_filename(m);
	struct errmsg err = {""};
	struct mp_patch *p = NULL;
	struct tmsg *tm;

	bool readable;

	if (!id)
		return;
	sb_reset(raw);
	readable = file &&
		   read_file_capped(file, WATCH_MAX_MESSAGE, raw, &err) == 0;
	/*
	 * Another list's mail (notmuch threads by references, which
	 * anyone can write): not this list's to read, record or tag.
	 */
	if (readable && !watch_mail_usable(w, t->l, raw->buf ? raw->buf : "",
					   raw->len, !t->near_embargo))
		return;
	ALLOC_GROW(t->msgs, t->n + 1, t->alloc);
	tm = &t->msgs[t->n++];
	tm->msgid = xstrdup_or_null(id);
	tm->tag = NULL;
	/* A dry run records nothing, not even that it saw the mail. */
	if ((w->dry_run ? state_message_first_seen(w->st, id, w->now,
						   &tm->first_seen)
			: state_message_seen(w->st, id, t->l->name, w->now,
					     &tm->first_seen)) < 0)
		tm->first_seen = w->now;
	if (!readable) {
		tm->tag = "quorum/failed";
		return;
	}
	if (is_own_mail(w, id, raw) ||
	    mp_patch_parse(&p, raw->buf, raw->len, NULL, &err) < 0) {
		tm->tag = "quorum/skipped";
		return;
	}
	if (!p->auto_submitted && p->kind == MP_KIND_REPLY &&
	    command_of(p, NULL)) {
		struct tcmd *tc;

		tm->tag = "quorum/seen";
		ALLOC_GROW(t->cmds, t->ncmds + 1, t->cmds_alloc);
		tc = &t->cmds[t->ncmds++];
		tc->p = p;
		/* Verified now: the raw mail is at hand only here. */
		watch_sender_check(t->l, raw->buf, raw->len, &tc->who);
		return;
	}
	/*
	 * A patch or cover letter of the list came signed: from now on its
	 * commands want a signature too (unless commands says otherwise).
	 */
	if ((p->kind == MP_KIND_PATCH || p->kind == MP_KIND_COVER) &&
	    !t->l->signed_mail && watch_mail_signed(raw->buf, raw->len)) {
		t->l->signed_mail = true;
		if (!w->dry_run &&
		    state_list_signed_add(w->st, t->l->name, w->now) < 0)
			warning("state db: %s", state_error(w->st));
	}
	if (p->auto_submitted || p->subject.reply ||
	    (p->kind != MP_KIND_PATCH && p->kind != MP_KIND_COVER)) {
		/*
		 * Replies (even with a diff: a reviewer's suggestion), pull
		 * requests, auto-replies: never reviewed.
		 */
		tm->tag = "quorum/skipped";
		mp_patch_free(p);
		return;
	}
	/* notmuch and the parser agree on the id (both strip <>). */
	mp_collector_add(c, p);
}

/*
 * Does the thread hold mail to an embargoed list other than l's (mail
 * that, sent to l as well, l may use)? Then mail in it sent to no list
 * may be that list's private talk, and serves l no more than the
 * embargoed mail does. A query that fails counts as yes.
 */
static bool thread_near_embargo(struct watch *w, const struct wlist *l,
				const char *thread)
{
	struct sb qs = SB_INIT;
	bool near = false;
	size_t i;

	for (i = 0; i < w->nlists && !near; i++) {
		const struct wlist *e = &w->lists[i];
		notmuch_query_t *q;
		unsigned n = 1;

		if (!e->embargo || e == l)
			continue;
		sb_reset(&qs);
		sb_addf(&qs, "thread:%s and (to:\"%s\" or cc:\"%s\")", thread,
			e->address, e->address);
		q = notmuch_query_create(w->db, qs.buf);
		if (!q || notmuch_query_count_messages(q, &n))
			n = 1;
		if (q)
			notmuch_query_destroy(q);
		near = n > 0;
	}
	sb_release(&qs);
	return near;
}

/* The thread's series, its messages sorted into t. NULL: no search. */
static struct mp_set *thread_read(struct thread_ctx *t)
{
	struct mp_collector *c;
	notmuch_query_t *q;
	notmuch_messages_t *msgs = NULL;
	struct sb qs = SB_INIT, raw = SB_INIT;
	struct mp_set *set = NULL;
	size_t n = 0;

	t->near_embargo = thread_near_embargo(t->w, t->l, t->thread);
	sb_addf(&qs, "thread:%s", t->thread);
	q = notmuch_query_create(t->w->db, qs.buf);
	if (!q || notmuch_query_search_messages(q, &msgs)) {
		error("notmuch: cannot search %s", qs.buf);
		goto out;
	}
	c = mp_collector_new();
	for (; notmuch_messages_valid(msgs) && n < WATCH_MAX_THREAD;
	     notmuch_messages_move_to_next(msgs), n++)
		thread_add_message(t, c, notmuch_messages_get(msgs), &raw);
	set = mp_collector_finish(c);
out:
	if (q)
		notmuch_query_destroy(q);
	sb_release(&qs);
	sb_release(&raw);
	return set;
}

static void thread_release(struct thread_ctx *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->msgs[i].msgid);
	free(t->msgs);
	for (i = 0; i < t->ncmds; i++)
		mp_patch_free(t->cmds[i].p);
	free(t->cmds);
}

static int process_thread(struct watch *w, struct wlist *l, const char *thread)
{
	struct thread_ctx t = THREAD_CTX_INIT(w, l, thread);
	struct mp_set *set = thread_read(&t);
	size_t i;

	if (!set)
		goto out;
	t.set = set;
	for (i = 0; i < t.ncmds; i++)
		run_command(&t, set, &t.cmds[i]);
	for (i = 0; i < set->nseries && !stop_requested; i++)
		review_one(&t, set->series[i]);
	/* Untagged mail is looked at again by the next pass. */
	if (!t.retry) {
		notmuch_database_begin_atomic(w->db);
		for (i = 0; i < t.n; i++)
			tag_message(w, t.msgs[i].msgid, t.msgs[i].tag);
		w->tagged += t.n;
		notmuch_database_end_atomic(w->db);
	}
out:
	mp_set_free(set);
	thread_release(&t);
	return 0;
}

struct strset {
	char **v;
	size_t n, alloc;
};

static int strset_add(void *arg, const char *s)
{
	struct strset *set = arg;
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->v[i], s))
			return 0;
	ALLOC_GROW(set->v, set->n + 1, set->alloc);
	set->v[set->n++] = xstrdup_or_null(s);
	return 0;
}

static int open_notmuch(struct watch *w);

/* How many messages match qs; 0 when the query cannot run. */
static unsigned count_of(struct watch *w, const char *qs)
{
	notmuch_query_t *q = notmuch_query_create(w->db, qs);
	unsigned n = 0;

	if (q && notmuch_query_count_messages(q, &n))
		n = 0;
	if (q)
		notmuch_query_destroy(q);
	return n;
}

/*
 * A new setup whose query matches nothing of the list's mail (notmuch
 * tagged it before new.tags had "new"): say so, or the pass reads as
 * "0 reviewed" and nothing else. Quiet once quorum has seen a message
 * of the list.
 */
static void hint_unmatched(struct watch *w, const struct wlist *l)
{
	struct sb qs = SB_INIT;
	unsigned seen, all, matched;

	sb_addf(&qs, "tag:quorum/seen and (to:\"%s\" or cc:\"%s\")", l->address,
		l->address);
	seen = count_of(w, qs.buf);
	sb_reset(&qs);
	sb_addf(&qs, "to:\"%s\" or cc:\"%s\"", l->address, l->address);
	all = seen ? 0 : count_of(w, qs.buf);
	sb_reset(&qs);
	sb_addf(&qs, "(%s) and (to:\"%s\" or cc:\"%s\")", l->query, l->address,
		l->address);
	matched = all ? count_of(w, qs.buf) : 0;
	if (all && !matched)
		warning("list %s: none of the %u messages to %s matches the "
			"query '%s'; tag them new (notmuch tag +new -- "
			"to:%s) or set list.%s.query (contrib/watch.md)",
			l->name, all, l->address, l->query, l->address,
			l->name);
	sb_release(&qs);
}

/*
 * The pass's plan of a list's money. Before the first model request of
 * the pass, each series it will review (one a '#quorum rerun' of the
 * pass reopens too) is reviewed as a dry run, so its requests are
 * bounded by the review's own planner (rv_ensemble_run: token counts
 * where they are free, else bytes), each at its voter's answer floor:
 * the fewest answer tokens the review sends it with. The series are
 * ranked by their offline risk and granted that estimate, riskiest
 * first, while the tightest cap (the list's day, the month) lasts; the
 * riskiest that does not fit gets what is left, the others are
 * reviewed by the offline voters only. The series promised money are
 * reviewed first, oldest first (a v2's reply points at v1's); the
 * others at the end of the pass, riskiest first (plan_defer), each
 * re-planned with what the ones before it left (watch_grant_cap); the
 * ledger still holds every request to every cap.
 */
enum plan_kind {
	PLAN_FULL,    /* granted its estimate */
	PLAN_REST,    /* the riskiest that did not fit: what is left */
	PLAN_CAPS,    /* nothing granted to anyone: the caps, as before */
	PLAN_OFFLINE, /* the money went to riskier series */
};

struct plan_item {
	char *key;
	char *subject;
	size_t thread; /* its thread's place in the pass */
	char *author;  /* who posted it, and what it is called: a later */
	char *title;   /* version by the same author is never reviewed first */
	double risk;   /* the highest history risk of its patches; < 0: none */
	size_t bytes;  /* of its diffs: the risk when the index has none */
	double usd;    /* estimated model cost; PLAN_REST: what is left */
	double want;   /* estimated model cost, within budget-per-review */
	double floor1; /* its cheapest request at its voter's floor */
	double est;    /* estimated model cost */
	double worst;  /* at every voter's max-tokens */
	enum plan_kind kind;
	/* Its dry review; only its requests are read once the thread is gone.
	 */
	struct rv_review *dry;
};

static size_t series_bytes(const struct mp_series *s)
{
	size_t k, all = 0;

	for (k = 0; k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];

		if (p && p->diff)
			all += p->diff_len +
			       (p->commit_message ? strlen(p->commit_message)
						  : 0);
	}
	return all;
}

/* The highest history risk of s's patches; < 0 when none is scored. */
static double plan_risk(const struct wlist *l, const struct mp_series *s)
{
	double max = -1;
	size_t k;

	for (k = 0; l->history && k < s->npatches; k++) {
		const struct mp_patch *p = s->patches[k];
		struct rv_diff *d = NULL;
		struct errmsg err = {""};
		double r;

		if (!p || !p->diff ||
		    rv_diff_parse(&d, p->diff, p->diff_len, &err) < 0)
			continue;
		if (!rv_history_risk(l->history, d, p->commit_message,
				     p->author_email, &r, NULL, &err) &&
		    r > max)
			max = r;
		rv_diff_free(d);
	}
	return max;
}

/*
 * Will the pass review s? As series_due decides, leaving no trace; a
 * rerun of the pass reopens a series reviewed before.
 */
static bool plan_due(struct thread_ctx *t, const struct mp_series *s,
		     const struct sb *key, bool rerun)
{
	struct series_row row;
	int64_t last = 0;
	struct tmsg *m;
	size_t k;

	if (!mp_series_first(s) || s->superseded || s->nmissing >= s->npatches)
		return false;
	/* Incomplete: due once it waited long enough for the rest. */
	for (k = 0; !s->complete && k < s->npatches; k++)
		if (s->patches[k] &&
		    (m = tmsg_find(t, s->patches[k]->message_id)) &&
		    m->first_seen > last)
			last = m->first_seen;
	if (!s->complete && t->w->now - last < t->l->wait)
		return false;
	if (state_series_get(t->w->st, key->buf, &row) < 0)
		return false;
	if (!rerun &&
	    (row.status == SERIES_REVIEWED || row.status == SERIES_SKIPPED ||
	     row.status == SERIES_FAILED))
		return false;
	return watch_author_muted(t, mp_series_first(s)) <= 0;
}

static int plan_cmp(const void *a, const void *b)
{
	const struct plan_item *x = *(const struct plan_item *const *)a;
	const struct plan_item *y = *(const struct plan_item *const *)b;

	if (x->risk != y->risk)
		return x->risk < y->risk ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return 0; /* qsort is not stable: the caller breaks ties by order */
}

static void plan_list_say(const struct wlist *l, double left, bool monthly,
			  struct plan_item **by, size_t n, bool history)
{
	static const char *const what[] = {
		[PLAN_FULL] = "the models",
		[PLAN_REST] = "what is left",
		[PLAN_CAPS] = "the models as the caps allow",
		[PLAN_OFFLINE] = "offline",
	};
	struct sb line = SB_INIT;
	size_t i, j, nk;
	int k;

	sb_addf(&line,
		"plan: $%.4f left %s for list %s; %zu series, "
		"riskiest first (%s): ",
		left, monthly ? "this month (budget.monthly)" : "today",
		l->name, n,
		history ? "history risk, their riskiest patch"
			: "no risk model: the larger diff");
	for (k = PLAN_FULL; k <= PLAN_OFFLINE; k++) {
		for (i = nk = 0; i < n; i++)
			nk += by[i]->kind == (enum plan_kind)k;
		if (!nk)
			continue;
		if (line.buf[line.len - 1] != ' ')
			sb_adds(&line, ", ");
		for (i = j = 0; i < n; i++) {
			if (by[i]->kind != (enum plan_kind)k)
				continue;
			sb_addf(&line, "%s\"%s\"", j++ ? ", " : "",
				by[i]->subject);
			if (k == PLAN_FULL || k == PLAN_REST)
				sb_addf(&line, " ($%.4f)", by[i]->usd);
		}
		if (k == PLAN_OFFLINE)
			sb_adds(&line, " offline");
		else
			sb_addf(&line, " get%s %s", nk == 1 ? "s" : "",
				what[k]);
	}
	/* Subjects are the mail's: no terminal controls. */
	fput_clean(line.buf, stdout);
	putchar('\n');
	sb_release(&line);
}

/*
 * Riskiest first, each series gets its estimate while it fits; the
 * riskiest that did not fit gets what is left after them, the others
 * none. When no series got a thing (the money is spent), each is
 * reviewed under the caps, which say so as before.
 */
static void plan_grant(struct plan_item **by, size_t n, double rest)
{
	size_t i, nfull = 0;
	bool rest_given = false;

	for (i = 0; i < n; i++)
		if (by[i]->usd <= rest + 1e-12) {
			by[i]->kind = PLAN_FULL;
			rest -= by[i]->usd;
			nfull++;
		}
	for (i = 0; i < n; i++) {
		if (by[i]->kind == PLAN_FULL)
			continue;
		if (!rest_given && rest > 1e-9) {
			/* Alone, it has all the money: the caps suffice. */
			by[i]->kind = nfull ? PLAN_REST : PLAN_CAPS;
			by[i]->usd = rest;
			rest_given = true;
		} else if (!nfull && !rest_given) {
			by[i]->kind = PLAN_CAPS;
		}
	}
}

static void plan_free(struct wlist *l)
{
	size_t i;

	for (i = 0; i < l->ngrants; i++) {
		free(l->grants[i].key);
		rv_built_free(l->grants[i].built);
	}
	free(l->grants);
	l->grants = NULL;
	l->ngrants = 0;
}

struct pass_grant *watch_grant(struct wlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->ngrants; i++)
		if (!strcmp(l->grants[i].key, key))
			return &l->grants[i];
	return NULL;
}

/*
 * The series promised nothing (the plan ran out before them, or gave
 * one what was left) share avail strictly riskiest first: each its
 * estimate while it fits, the first that does not fit what is left
 * (the plan's "what is left" however little, another's when that
 * buys one of its requests), the others nothing. Their shares in
 * share[], by grant.
 */
static void replan_shares(const struct wlist *l, double avail, double *share)
{
	double rest = avail;
	size_t i;

	for (i = 0; i < l->ngrants; i++) {
		const struct pass_grant *h = &l->grants[i];

		share[i] = 0;
		if (h->full || h->done || h->est <= 0)
			continue;
		if (h->est <= rest + 1e-12) {
			share[i] = h->est;
			rest -= h->est;
			continue;
		}
		if (h->rest ? rest > 1e-9 : rest >= h->floor1)
			share[i] = rest;
		rest = 0;
	}
}

double watch_grant_cap(struct wlist *l, struct pass_grant *g, double left)
{
	double *share = xcalloc(l->ngrants + 1, sizeof(*share));
	double avail = left, others = 0;
	size_t i;

	/* The promises stand: those series were planned first. */
	for (i = 0; i < l->ngrants; i++)
		if (l->grants[i].full && !l->grants[i].done)
			avail -= l->grants[i].usd;
	replan_shares(l, avail > 0 ? avail : 0, share);
	for (i = 0; i < l->ngrants; i++)
		if (&l->grants[i] != g)
			others += share[i];
	g->models = g->full || share[g - l->grants] > 1e-9;
	free(share);
	if (g->full)
		return avail + g->usd - others;
	return g->models ? avail - others : 0;
}

/* --dry-run: what the pass would do with each series, and its requests. */
static void plan_dry_say(struct watch *w, const struct wlist *l,
			 struct plan_item **by, size_t n, bool capped)
{
	struct errmsg err = {""};
	size_t i, k;

	dry_run_say(&w->dry, stdout);
	if (!n)
		printf("dry run: list %s: no series to review\n", l->name);
	for (i = 0; i < n; i++) {
		const struct plan_item *it = by[i];
		const struct rv_review *r = it->dry;
		bool models = r && r->ndry && w->s.opts.nllm &&
			      it->kind != PLAN_OFFLINE;
		struct sb voters = SB_INIT;

		for (k = 0; r && k < r->ndry; k++) {
			size_t j;

			for (j = 0; j < k; j++)
				if (!strcmp(r->dry[j].voter, r->dry[k].voter))
					break;
			if (j == k)
				sb_addf(&voters, "%s%s", voters.len ? ", " : "",
					r->dry[k].voter);
		}
		/* The subject is the mail's: no terminal controls. */
		printf("dry run: list %s, \"", l->name);
		fput_clean(it->subject, stdout);
		printf("\": ");
		if (!r)
			printf("does not apply: no model is asked\n");
		else if (!models && !r->ndry)
			printf("the offline voters only (no model request "
			       "to send)\n");
		else if (!models)
			printf("the offline voters only: the money goes to "
			       "riskier series first (%zu request%s, $%.4f "
			       "planned, not sent)\n",
			       r->ndry, r->ndry == 1 ? "" : "s", it->est);
		else
			printf("the models %s: %zu request%s, $%.4f planned "
			       "(answers at the voters' floors), at most "
			       "$%.4f%s\n",
			       voters.buf, r->ndry, r->ndry == 1 ? "" : "s",
			       it->est, it->worst,
			       !capped		       ? ""
			       : it->kind == PLAN_FULL ? " (in the plan)"
			       : it->kind == PLAN_REST
				       ? " (what is left: the review steps "
					 "down)"
				       : " (as the caps allow)");
		sb_release(&voters);
		if (models && dry_run_add(&w->dry, r, stdout, &err) < 0)
			error("%s", err.msg);
	}
}

/* Is s one of the series the pass's commands rerun? */
static bool is_rerun(const struct mp_series *const *rerun, size_t n,
		     const struct mp_series *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rerun[i] == s)
			return true;
	return false;
}

/*
 * The series of the pass's thread ti the pass will review, as items;
 * true when the thread carries a #quorum command.
 */
static bool plan_thread(struct watch *w, struct wlist *l,
			const struct strset *threads, size_t ti,
			struct plan_item **items, size_t *n, size_t *alloc,
			bool models)
{
	struct thread_ctx t = THREAD_CTX_INIT(w, l, threads->v[ti]);
	struct mp_set *set = thread_read(&t);
	const struct mp_series **rerun = NULL;
	size_t nrerun = 0, j;

	if (!set)
		goto out;
	t.set = set;
	rerun = xcalloc(t.ncmds + 1, sizeof(*rerun));
	for (j = 0; j < t.ncmds; j++)
		if ((rerun[nrerun] = watch_rerun_of(&t, set, &t.cmds[j])))
			nrerun++;
	for (j = 0; j < set->nseries; j++) {
		const struct mp_series *s = set->series[j];
		struct sb key = SB_INIT;
		struct plan_item *it;
		size_t k;

		watch_series_key(&t, s, &key);
		if (!plan_due(&t, s, &key, is_rerun(rerun, nrerun, s))) {
			sb_release(&key);
			continue;
		}
		ALLOC_GROW(*items, *n + 1, *alloc);
		it = &(*items)[(*n)++];
		memset(it, 0, sizeof(*it));
		it->key = sb_detach(&key, NULL);
		it->thread = ti;
		it->author = xstrdup_or_null(mp_series_first(s)->author_email);
		it->title = xstrdup_or_null(mp_series_title(s));
		it->subject = xstrdup_or_null(
			mp_series_first(s)->subject_raw
				? mp_series_first(s)->subject_raw
				: "");
		it->risk = plan_risk(l, s);
		it->bytes = series_bytes(s);
		it->kind = PLAN_OFFLINE;
		if (models || w->dry_run)
			watch_series_dry(&t, s, &it->dry);
		for (k = 0; it->dry && k < it->dry->ndry; k++) {
			if (!k || it->dry->dry[k].floor < it->floor1)
				it->floor1 = it->dry->dry[k].floor;
			it->est += it->dry->dry[k].floor;
			it->worst += it->dry->dry[k].worst;
		}
		it->usd = it->est;
	}
out:
	free(rerun);
	mp_set_free(set);
	thread_release(&t);
	return t.ncmds > 0;
}

/*
 * May series x be reviewed after y, a later one of the pass? Not when
 * y may be a later version of x (its author, its title: v1's reply
 * has the findings in full, v2's points to it), nor when they share an
 * author the list holds to replies a day (the older one goes first).
 */
static bool plan_may_follow(const struct wlist *l, const struct plan_item *x,
			    const struct plan_item *y)
{
	if (!x->author || !y->author || strcasecmp(x->author, y->author))
		return true;
	if (l->per_author_day > 0)
		return false;
	return !x->title || !y->title || strcmp(x->title, y->title);
}

/* May the threads a and b be reviewed in either order? */
static bool plan_threads_free(const struct wlist *l,
			      const struct plan_item *items, size_t n, size_t a,
			      size_t b)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; items[i].thread == a && j < n; j++)
			if (items[j].thread == b &&
			    !plan_may_follow(l, &items[i], &items[j]))
				return false;
	return true;
}

/*
 * The order of the pass's threads in order[]: oldest first, but those
 * whose series the plan promised nothing wait for the end of the pass,
 * riskiest first, so that what the series promised money do not spend
 * reaches them, the riskiest first (watch_grant_cap). Never a thread
 * with a command or before one (a mute changes what follows), never
 * under a list's replies an hour (the oldest get them), never past a
 * later version of its series (plan_may_follow).
 */
static void plan_defer(const struct wlist *l, struct plan_item **by,
		       const struct plan_item *items, size_t n,
		       const bool *cmds, size_t nthreads, size_t *order)
{
	bool *defer = xcalloc(nthreads + 1, sizeof(*defer));
	size_t *rank = xcalloc(nthreads + 1, sizeof(*rank));
	bool later_cmds = false;
	size_t ti, i, j, k;

	if (l->per_hour > 0)
		goto out;
	for (i = 0; i < nthreads; i++)
		rank[i] = n;
	for (i = n; i-- > 0;)
		rank[by[i]->thread] = i;
	for (ti = nthreads; ti-- > 0;) {
		bool ok = !cmds[ti] && !later_cmds, any = false;

		later_cmds |= cmds[ti];
		for (i = 0; ok && i < n; i++) {
			const struct plan_item *x = &items[i];

			if (x->thread != ti)
				continue;
			if (x->kind == PLAN_FULL || x->kind == PLAN_CAPS)
				ok = false;
			any |= x->dry && x->dry->ndry;
		}
		for (j = ti + 1; ok && j < nthreads; j++)
			if (!defer[j] && !plan_threads_free(l, items, n, ti, j))
				ok = false;
		defer[ti] = ok && any;
	}
	for (i = k = 0; i < nthreads; i++)
		if (!defer[i])
			order[k++] = i;
	for (i = 0; i < nthreads; i++) {
		if (!defer[i])
			continue;
		/* Riskiest first, never past a thread it must follow. */
		for (j = k++; j > 0 && defer[order[j - 1]] &&
			      rank[order[j - 1]] > rank[i] &&
			      plan_threads_free(l, items, n, order[j - 1], i);
		     j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
out:
	free(defer);
	free(rank);
}

static void plan_pass(struct watch *w, struct wlist *l,
		      const struct strset *threads, size_t *order)
{
	struct rv_review_opts o = w->s.opts;
	struct rv_ledger *ledger = NULL;
	struct rv_caps caps = {0};
	struct errmsg err = {""};
	struct plan_item *items = NULL, **by = NULL;
	bool *cmds;
	size_t n = 0, alloc = 0, i, j;
	double left = 1e18;
	char which[128] = "";
	bool history = false, capped, models = w->s.llm.n && w->s.opts.nllm;

	if (!models && !w->dry_run)
		return;
	cmds = xcalloc(threads->n + 1, sizeof(*cmds));
	if (models &&
	    cost_review_opts(w->s.cfg, l->name, 0, &o, &ledger, &err) < 0) {
		if (w->dry_run)
			error("list %s: %s", l->name, err.msg);
		goto out; /* each review says it */
	}
	caps.list = l->name;
	caps.per_day = o.budget_day;
	caps.monthly = o.budget_month;
	capped = models && (caps.per_day > 0 || caps.monthly > 0);
	if (capped && rv_ledger_left(ledger, &caps, &left, which, sizeof(which),
				     &err) < 0)
		goto out;
	if (!capped && !w->dry_run)
		goto out;
	for (i = 0; i < threads->n; i++)
		cmds[i] = plan_thread(w, l, threads, i, &items, &n, &alloc,
				      models);
	by = xcalloc(n + 1, sizeof(*by));
	for (i = 0; i < n; i++) {
		by[i] = &items[i];
		history |= items[i].risk >= 0;
		/* A review spends no more than its own cap. */
		if (o.budget_review > 0 && items[i].usd > o.budget_review)
			items[i].usd = o.budget_review;
		items[i].want = items[i].usd;
		if (!capped && models)
			items[i].kind = PLAN_FULL;
	}
	/* Insertion sort: stable, so equal risks keep the posting order. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && plan_cmp(&by[j - 1], &by[j]) > 0; j--) {
			struct plan_item *x = by[j];

			by[j] = by[j - 1];
			by[j - 1] = x;
		}
	if (capped && n) {
		plan_grant(by, n, left > 0 ? left : 0);
		plan_list_say(l, left > 0 ? left : 0,
			      strstr(which, "monthly") != NULL, by, n, history);
	}
	if (w->dry_run)
		plan_dry_say(w, l, by, n, capped);
	if (!capped || !n)
		goto out;
	/* Riskiest first: the order each re-plan shares the money in. */
	l->grants = xcalloc(n, sizeof(*l->grants));
	for (i = 0; i < n; i++) {
		struct pass_grant *g = &l->grants[l->ngrants++];

		g->key = by[i]->key;
		by[i]->key = NULL;
		g->usd = by[i]->usd;
		g->est = by[i]->want;
		g->floor1 = by[i]->floor1;
		g->full = by[i]->kind == PLAN_FULL || by[i]->kind == PLAN_CAPS;
		/* Reviewed under the caps, as before the plan. */
		g->caps = by[i]->kind == PLAN_CAPS;
		g->rest = by[i]->kind == PLAN_REST;
		g->models = by[i]->kind != PLAN_OFFLINE;
		/* Built once: the review sends what the plan priced. */
		if (by[i]->dry) {
			g->built = by[i]->dry->built;
			by[i]->dry->built = NULL;
		}
	}
	if (!w->dry_run)
		plan_defer(l, by, items, n, cmds, threads->n, order);
out:
	for (i = 0; i < n; i++) {
		free(items[i].key);
		free(items[i].subject);
		free(items[i].author);
		free(items[i].title);
		rv_review_free(items[i].dry);
	}
	free(cmds);
	free(items);
	free(by);
	rv_ledger_free(ledger);
}

static int process_list(struct watch *w, struct wlist *l)
{
	struct strset threads = {NULL, 0, 0};
	notmuch_query_t *q;
	notmuch_messages_t *msgs = NULL;
	struct sb qs = SB_INIT;
	size_t *order = NULL;
	size_t i;
	int ret = 0;

	hint_unmatched(w, l);
	sb_addf(&qs, "(%s) and not tag:quorum/seen", l->query);
	q = notmuch_query_create(w->db, qs.buf);
	/*
	 * Oldest first: when v1 and v2 of a series arrive in one pass (in
	 * two threads), v1's reply has the findings in full, v2's the
	 * "still open" lines.
	 */
	if (q)
		notmuch_query_set_sort(q, NOTMUCH_SORT_OLDEST_FIRST);
	if (!q || notmuch_query_search_messages(q, &msgs)) {
		ret = error("list %s: notmuch cannot run the query '%s'",
			    l->name, l->query);
		goto out;
	}
	for (; notmuch_messages_valid(msgs);
	     notmuch_messages_move_to_next(msgs)) {
		notmuch_message_t *m = notmuch_messages_get(msgs);
		const char *tid = notmuch_message_get_thread_id(m);

		if (tid)
			strset_add(&threads, tid);
		/* Otherwise each message lives as long as the query. */
		notmuch_message_destroy(m);
	}
	notmuch_query_destroy(q);
	q = NULL;
	/* Series still waiting for patches: look again (the wait may be over).
	 */
	state_series_waiting(w->st, l->name, strset_add, &threads);
	order = xcalloc(threads.n + 1, sizeof(*order));
	for (i = 0; i < threads.n; i++)
		order[i] = i;
	/* Oldest first, but for the threads the plan left to the end. */
	plan_pass(w, l, &threads, order);
	for (i = 0; i < threads.n && !stop_requested && !w->dry_run; i++) {
		process_thread(w, l, threads.v[order[i]]);
		/*
		 * notmuch keeps tag changes in memory until it commits (every
		 * few thousand messages): reopen now and then so memory stays
		 * flat however much mail there is.
		 */
		if (w->tagged >= REOPEN_AFTER) {
			notmuch_database_destroy(w->db);
			w->db = NULL;
			w->tagged = 0;
			if (open_notmuch(w) < 0) {
				ret = -1;
				break;
			}
		}
	}
out:
	plan_free(l);
	free(order);
	if (q)
		notmuch_query_destroy(q);
	for (i = 0; i < threads.n; i++)
		free(threads.v[i]);
	free(threads.v);
	sb_release(&qs);
	return ret;
}

static int64_t watch_now(void)
{
	/* QUORUM_NOW: a fixed clock for the tests, never for real use. */
	const char *v = getenv("QUORUM_NOW");

	if (v && *v)
		return strtoll(v, NULL, 10);
	return (int64_t)time(NULL);
}

static int open_notmuch(struct watch *w)
{
	struct qconfig *cfg = w->s.cfg;
	const char *v = qconfig_get(cfg, "notmuch.database");
	char *path = v ? expand_home(v) : NULL, *msg = NULL;
	notmuch_status_t s;

	s = notmuch_database_open_with_config(path,
					      NOTMUCH_DATABASE_MODE_READ_WRITE,
					      NULL, NULL, &w->db, &msg);
	if (s) {
		error("cannot open the notmuch database %s: %s",
		      path ? path : "(from notmuch's config)",
		      msg ? msg : notmuch_status_to_string(s));
		free(msg);
		free(path);
		return -1;
	}
	free(msg);
	free(path);
	return 0;
}

static int run_once(struct watch *w, bool once)
{
	size_t i;

	w->now = watch_now();
	for (i = 0; i < w->nlists; i++)
		w->lists[i].repo_failed = false; /* perhaps it is back */
	w->reviewed = w->waiting = w->skipped = w->failed = 0;
	w->delivered = w->held = 0;
	w->misconfigured = false;
	/* First finish what an earlier run recorded but did not deliver. */
	if (!w->dry_run &&
	    state_replies_pending(w->st, w->now, deliver_pending_one, w) < 0)
		warning("state db: %s", state_error(w->st));
	if (open_notmuch(w) < 0)
		return EXIT_ENV;
	/* A list that cannot be reviewed is said every pass, mail or not. */
	for (i = 0; i < w->nlists; i++)
		if (!watch_list_repo_ok(w, &w->lists[i]))
			w->misconfigured = true;
	/* Signed mail seen in an earlier pass makes commands = dkim. */
	for (i = 0; i < w->nlists; i++)
		if (!w->lists[i].signed_mail &&
		    state_list_signed(w->st, w->lists[i].name) > 0)
			w->lists[i].signed_mail = true;
	for (i = 0; i < w->nlists && !stop_requested; i++) {
		process_list(w, &w->lists[i]);
		if (w->lists[i].mode == MODE_DIGEST && !w->dry_run)
			send_digest(w, &w->lists[i]);
	}
	notmuch_database_destroy(w->db);
	w->db = NULL;
	if (w->dry_run) {
		dry_run_finish(&w->dry, stdout);
		fflush(stdout);
		return w->misconfigured ? EXIT_USAGE : 0;
	}
	if (!once && !(w->reviewed + w->waiting + w->skipped + w->failed +
		       w->delivered + w->held))
		return w->misconfigured ? EXIT_USAGE : 0;
	printf("watch: %zu reviewed, %zu waiting, %zu skipped, %zu failed, "
	       "%zu delivered, %zu held\n",
	       w->reviewed, w->waiting, w->skipped, w->failed, w->delivered,
	       w->held);
	fflush(stdout);
	return w->misconfigured ? EXIT_USAGE : 0;
}

/* watch.pid next to the state db, for the post-new hook. */
static char *write_pid_file(const char *state_path)
{
	struct sb p = SB_INIT;
	const char *slash = strrchr(state_path, '/');
	FILE *fp;

	if (slash)
		sb_add(&p, state_path, (size_t)(slash - state_path + 1));
	sb_adds(&p, "watch.pid");
	fp = fopen(p.buf, "w");
	if (!fp) {
		warning("cannot write %s: %s", p.buf, strerror(errno));
		sb_release(&p);
		return NULL;
	}
	fprintf(fp, "%ld\n", (long)getpid());
	fclose(fp);
	return sb_detach(&p, NULL);
}

/* The options of watch; 0, or -1 to return *exit_code. */
static int watch_options(int argc, char **argv, bool *once, long *interval,
			 struct watch *w, int *exit_code)
{
	static const struct option longopts[] = {
		{"once", no_argument, NULL, 'o'},
		{"interval", required_argument, NULL, 'i'},
		{"dry-run", optional_argument, NULL, 'd'},
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	struct cmd_opts co = CMD_OPTS_INIT;
	char *end;
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'o') {
			*once = true;
		} else if (c == 'd') {
			w->dry_run = true;
			w->dry.dir = optarg && *optarg ? optarg : NULL;
		} else if (c == 'i') {
			*interval = strtol(optarg, &end, 10);
			if (*end || *interval < 1 || *interval > 86400) {
				*exit_code = usage_error(
					&cmd_watch_def,
					"--interval wants seconds from 1 to "
					"86400, not '%s'",
					optarg);
				return -1;
			}
		} else if (cmd_opt(&cmd_watch_def, c, argv, &co, exit_code) <
			   0) {
			return -1;
		}
	}
	if (optind < argc) {
		*exit_code =
			usage_error(&cmd_watch_def, "watch takes no arguments");
		return -1;
	}
	if (w->dry_run && !*once) {
		*exit_code = usage_error(&cmd_watch_def,
					 "--dry-run plans one pass: give "
					 "--once too");
		return -1;
	}
	return 0;
}

/*
 * The session (config, quorum, voters), the lists and the state db.
 * 0, or an exit status after an error on stderr.
 */
static int watch_open(struct watch *w, char **state_path)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct qconfig *cfg;
	struct errmsg err = {""};
	const char *v;
	int ret;

	ret = session_start(&w->s, &co, SESSION_CONFIG_GLOBAL | SESSION_VOTERS);
	if (ret)
		return ret;
	if (watch_config_load(w) < 0)
		return EXIT_USAGE;
	if (!w->nlists) {
		v = qconfig_sources(w->s.cfg);
		error("no [list \"NAME\"] section with an address in the "
		      "config (%s); nothing to watch",
		      *v ? v : "none found");
		return EXIT_USAGE;
	}
	cfg = w->s.cfg;
	v = qconfig_get(cfg, "watch.state");
	*state_path = v ? expand_home(v) : state_default_path();
	if (state_open(&w->st, *state_path, &err) < 0) {
		error("%s", err.msg);
		return EXIT_ENV;
	}
	return 0;
}

/* Pass after pass until a signal; one pass with once. */
static int watch_loop(struct watch *w, bool once, long interval,
		      const char *state_path)
{
	char *pid_path = NULL;
	long i;
	int ret;

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGUSR1, on_wake);
	if (!once)
		pid_path = write_pid_file(state_path);
	for (;;) {
		wake_requested = 0;
		/* A voter's circuit opens for one pass: it may be back. */
		if (w->s.opts.state) {
			rv_llm_state_free(w->s.opts.state);
			w->s.opts.state = rv_llm_state_new();
		}
		ret = run_once(w, once);
		if (once || stop_requested)
			break;
		if (ret) /* notmuch busy (notmuch new?): try at the next poll */
			warning("will try again in %lds", interval);
		for (i = 0; i < interval && !stop_requested && !wake_requested;
		     i++)
			sleep(1);
		if (stop_requested)
			break;
	}
	if (!once) {
		ret = 0;
		fprintf(stderr, "quorum: watch stopped%s\n",
			stop_requested ? " on a signal" : "");
	}
	if (pid_path)
		unlink(pid_path);
	free(pid_path);
	return ret;
}

static int cmd_watch(int argc, char **argv)
{
	struct watch w = {.s = SESSION_INIT};
	char *state_path = NULL;
	bool once = false;
	long interval = 300;
	int ret;

	if (watch_options(argc, argv, &once, &interval, &w, &ret) < 0)
		return ret;
	ret = watch_open(&w, &state_path);
	if (!ret)
		ret = watch_loop(&w, once, interval, state_path);
	dry_run_release(&w.dry);
	state_close(w.st);
	free(state_path);
	watch_config_release(&w);
	session_close(&w.s);
	return ret;
}
