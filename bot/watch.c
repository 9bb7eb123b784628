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
#include <ctype.h>
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

#include "review/cost.h"
#include "session.h"
#include "state.h"
#include "watch.h"

#define WATCH_MAX_MESSAGE ((size_t)16 << 20)
#define WATCH_MAX_THREAD 2000 /* messages read from one thread */
#define DEFAULT_WAIT (30 * 60)
#define DEFAULT_ATTEMPTS 5
#define REOPEN_AFTER 500	 /* messages tagged between notmuch reopens */
#define REPO_REOPEN_AFTER 20	 /* reviews between repository reopens */
#define DIGEST_PERIOD 86400	 /* mode = digest: one mail a day */
#define FINDINGS_KEPT_DAYS 180	 /* norepeat: fingerprints are forgotten */
#define FINDINGS_KEPT_MAX 100000 /* ... after that, or beyond this per list */

static int cmd_watch(int argc, char **argv);

const struct cmd cmd_watch_def = {
	"watch",
	cmd_watch,
	"quorum watch [--once] [--interval SECONDS]",
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
	"notmuch database, which are only read, and the reply says so; when "
	"it\n"
	"does not apply, the reply names a prerequisite that is not there.\n"
	"A finding the author was already mailed in full (the same code, for\n"
	"an earlier version) is listed in one line, with that reply's\n"
	"Message-ID, instead of being repeated.\n"
	"\n"
	"Options:\n"
	"  --once          process what is there and exit\n"
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
	"embargo (true: replies go to the maintainers only), max-per-hour\n"
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
	"Commands, in a reply in the thread from the series' author or a\n"
	"maintainer, on a line of their own: '#quorum rerun' (review again),\n"
	"'#quorum mute' (never review the author's mail on this list again),\n"
	"'#quorum explain N' (finding N in detail, with the similar past "
	"fixes).\n"
	"\n"
	"Mail is tagged quorum/seen, quorum/reviewed, quorum/skipped or\n"
	"quorum/failed; no other tag is touched.\n"
	"\n"
	"Exit status: 0 when the run completed (series that failed are tagged\n"
	"and reported), 2 usage or config error, 3 environment error (notmuch\n"
	"database, state db).",
};

enum list_mode { MODE_DRY_RUN, MODE_REPLY, MODE_DIGEST };

struct wlist {
	const char *name;
	const char *address;
	const char *repo;
	const char *branch;
	enum list_mode mode;
	bool to_author, to_list;
	char *query;
	long wait;
	char **mute; /* lowercase patterns */
	char **cc;
	size_t ncc;
	bool embargo;	    /* replies to the maintainers only */
	int per_hour;	    /* replies per hour on the list; 0: no limit */
	int per_author_day; /* replies per author per day; 0: no limit */
	struct rv_repo *rv; /* opened on first use */
	size_t rv_uses;	    /* reviews on rv since it was opened */
	char *workdir;
	struct rv_history *history;
	bool repo_failed;
};

struct watch {
	struct qconfig *cfg;
	notmuch_database_t *db;
	struct state *st;
	int64_t now;
	const char *domain;
	char *from;
	char *outbox;
	const char *method; /* for lists in reply mode */
	char **sendmail;
	struct smtp_opts smtp;
	char *smtp_from; /* the address part of from */
	int max_attempts;
	int quorum;
	struct wlist *lists;
	size_t nlists;
	struct llm_voters llm; /* [voter] sections with an LLM provider */
	struct rv_prompts *prompts;
	char prompt_hash[48]; /* X-Quorum-Prompt */
	double deadline, backoff;
	int retries;
	/* counters for the summary line */
	size_t reviewed, waiting, skipped, failed, delivered, held;
	size_t tagged; /* messages tagged since the db was opened */
};

static volatile sig_atomic_t stop_requested, wake_requested;

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

/* "30m" -> 1800. -1 when malformed. */
static long parse_duration(const char *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || n < 0 || n > 365L * 86400)
		return -1;
	switch (*end) {
	case '\0':
	case 's':
		break;
	case 'm':
		n *= 60;
		break;
	case 'h':
		n *= 3600;
		break;
	case 'd':
		n *= 86400;
		break;
	default:
		return -1;
	}
	if (*end && end[1])
		return -1;
	return n;
}

/* Split "a, b,c" into a NULL-terminated array of trimmed lowercase words. */
static char **split_commas(const char *v, size_t *n)
{
	char **arr = NULL;
	size_t cnt = 0, alloc = 0;
	const char *p = v;

	while (p && *p) {
		const char *e = strchr(p, ','), *b = p, *t;

		if (!e)
			e = p + strlen(p);
		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		t = e;
		while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (t > b) {
			char *w = xstrndup(b, (size_t)(t - b)), *c;

			for (c = w; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			ALLOC_GROW(arr, cnt + 2, alloc);
			arr[cnt++] = w;
			arr[cnt] = NULL;
		}
		p = *e ? e + 1 : e;
	}
	if (n)
		*n = cnt;
	return arr;
}

static int add_list(void *arg, const char *name)
{
	struct watch *w = arg;
	struct wlist *l;
	struct errmsg err = {""};
	struct sb key = SB_INIT;
	const char *v;
	int ret = 0;

#define LIST_GET(k)                                                            \
	(sb_reset(&key), sb_addf(&key, "list.%s.%s", name, k),                 \
	 qconfig_get(w->cfg, key.buf))

	if (!LIST_GET("address"))
		goto out; /* a section without an address reviews nothing */
	w->lists = xrealloc(w->lists, (w->nlists + 1) * sizeof(*w->lists));
	l = &w->lists[w->nlists++];
	memset(l, 0, sizeof(*l));
	l->name = xstrdup_or_null(name);
	l->address = LIST_GET("address");
	l->repo = LIST_GET("repo");
	l->branch = LIST_GET("branch");
	v = LIST_GET("mode");
	if (!v || !strcmp(v, "dry-run")) {
		l->mode = MODE_DRY_RUN;
	} else if (!strcmp(v, "reply")) {
		l->mode = MODE_REPLY;
	} else if (!strcmp(v, "digest")) {
		l->mode = MODE_DIGEST;
	} else {
		ret = error(
			"list %s: mode '%s' is not dry-run, reply or digest",
			name, v);
		goto out;
	}
	v = LIST_GET("reply-to");
	if (!v) {
		l->to_author = l->to_list = true;
	} else {
		size_t n, i;
		char **words = split_commas(v, &n);

		for (i = 0; i < n; i++) {
			if (!strcmp(words[i], "author"))
				l->to_author = true;
			else if (!strcmp(words[i], "list"))
				l->to_list = true;
			else
				ret = error("list %s: reply-to '%s' is not "
					    "author or list",
					    name, words[i]);
		}
		argv_free(words);
		if (ret)
			goto out;
	}
	v = LIST_GET("maintainers");
	l->cc = split_commas(v, &l->ncc);
	l->mute = split_commas(LIST_GET("mute"), NULL);
	v = LIST_GET("query");
	if (v) {
		l->query = xstrdup_or_null(v);
	} else {
		struct sb q = SB_INIT;

		sb_addf(&q, "tag:new and (to:\"%s\" or cc:\"%s\")", l->address,
			l->address);
		l->query = sb_detach(&q, NULL);
	}
	v = LIST_GET("embargo");
	if (v && !strcmp(v, "true"))
		l->embargo = true;
	else if (v && strcmp(v, "false"))
		ret = error("list %s: embargo '%s' is not true or false", name,
			    v);
	sb_reset(&key);
	sb_addf(&key, "list.%s.max-per-hour", name);
	if (!ret && qconfig_get_int(w->cfg, key.buf, 0, &l->per_hour, &err) < 0)
		ret = error("%s", err.msg);
	sb_reset(&key);
	sb_addf(&key, "list.%s.max-per-author-per-day", name);
	if (!ret &&
	    qconfig_get_int(w->cfg, key.buf, 0, &l->per_author_day, &err) < 0)
		ret = error("%s", err.msg);
	if (ret)
		goto out;
	v = LIST_GET("wait");
	l->wait = v ? parse_duration(v) : DEFAULT_WAIT;
	if (l->wait < 0)
		ret = error("list %s: wait '%s' is not a duration like 30m",
			    name, v);
out:
	sb_release(&key);
	return ret;
#undef LIST_GET
}

static void lists_free(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->nlists; i++) {
		struct wlist *l = &w->lists[i];

		free((char *)l->name);
		free(l->query);
		argv_free(l->mute);
		argv_free(l->cc);
		rv_history_free(l->history);
		rv_repo_free(l->rv);
		free(l->workdir);
	}
	free(w->lists);
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

/* ---- one thread ------------------------------------------------------- */

struct tmsg {
	char *msgid;
	int64_t first_seen;
	const char *tag; /* what happened to it, NULL: seen only */
};

struct thread_ctx {
	struct watch *w;
	struct wlist *l;
	const char *thread;
	struct tmsg *msgs;
	size_t n, alloc;
	struct mp_patch **cmds; /* replies that carry a #quorum command */
	size_t ncmds, cmds_alloc;
	bool retry;  /* a state or repo error: leave the mail untagged */
	int explain; /* set while answering #quorum explain N */
	const char *explain_id;	  /* ... the command's Message-ID */
	const struct mp_set *set; /* the thread's series */
};

static struct tmsg *tmsg_find(struct thread_ctx *t, const char *msgid)
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

/*
 * The stable key of a series: its thread root (the oldest reference of
 * the cover, else of the first patch present, else that mail itself),
 * version, total and the sender of the patches, so it stays the same
 * whichever of its mails arrived first.
 */
static void series_key(const struct mp_series *s, struct sb *key)
{
	const struct mp_patch *p = reply_parent(s), *first = NULL;
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

/* A message-id from a hash of key: stable across a retry. */
static void reply_msgid(struct watch *w, const char *key, const char *what,
			struct sb *out)
{
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	git_odb_hash(&oid, key, strlen(key), GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	sb_addf(out, "quorum.%.20s.%s@%s", hex, what, w->domain);
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

/* Deliver one recorded reply; updates the state. 0 delivered, -1 not. */
static int deliver_one(struct watch *w, const char *msgid, const char *method,
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

/* Open the list's repo, history and work tree once. */
static struct rv_repo *list_repo(struct watch *w, struct wlist *l)
{
	struct errmsg err = {""};
	char *path;

	if (l->rv || l->repo_failed || !l->repo)
		return l->rv;
	path = expand_home(l->repo);
	if (rv_repo_open(&l->rv, path, &err) < 0) {
		error("list %s: %s", l->name, err.msg);
		l->repo_failed = true;
		free(path);
		return NULL;
	}
	if (!l->workdir) {
		if (rv_history_open(&l->history, path, &err) < 0)
			warning("list %s: %s; reviewing without it", l->name,
				err.msg);
		l->workdir = rv_workdir_of(path);
	}
	free(path);
	return l->rv;
}

/*
 * norepeat: what a finding is across versions of a series: the list, the
 * author, the file, the function, the category and the quoted code with
 * whitespace runs collapsed (the title when nothing is quoted); not the
 * line numbers or the patch, which move when other hunks change.
 */
static void finding_fingerprint(const char *list, const char *author,
				const struct rv_finding *f,
				char out[GIT_OID_HEXSZ + 1])
{
	const char *code = f->quote && *f->quote ? f->quote : f->title;
	struct sb in = SB_INIT;
	git_oid oid;
	bool blank = false;

	sb_addf(&in, "%s\n", list);
	for (; author && *author; author++)
		sb_addch(&in, (char)tolower((unsigned char)*author));
	sb_addf(&in, "\n%s\n%s\n%s\n", f->file ? f->file : "",
		f->function ? f->function : "", f->category ? f->category : "");
	for (; code && *code; code++) {
		if (isspace((unsigned char)*code)) {
			blank = true;
			continue;
		}
		if (blank && in.len && in.buf[in.len - 1] != '\n')
			sb_addch(&in, ' ');
		blank = false;
		sb_addch(&in, *code);
	}
	git_odb_hash(&oid, in.buf, in.len, GIT_OBJECT_BLOB);
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, &oid);
	sb_release(&in);
}

/* norepeat: r's findings, and which of them an earlier reply mailed. */
struct mailed_findings {
	char (*fp)[GIT_OID_HEXSZ + 1];
	struct fingerprint_row *rows;
	struct reply_earlier *earlier; /* for reply_opts.earlier */
	size_t n, repeated;
	int version; /* of the series reviewed */
	const char *title;
};

/* Look r's findings up in the state db. 0 or -1 (a db error). */
static int mailed_findings_get(struct thread_ctx *t, const char *key,
			       const struct mp_series *s,
			       const struct rv_review *r,
			       struct mailed_findings *mf)
{
	const struct mp_patch *parent = reply_parent(s);
	size_t i;

	memset(mf, 0, sizeof(*mf));
	mf->version = s->version > 0 ? s->version : 1;
	mf->title = mp_series_title(s);
	if (!r || !r->findings.n)
		return 0;
	mf->n = r->findings.n;
	mf->fp = xcalloc(mf->n, sizeof(*mf->fp));
	mf->rows = xcalloc(mf->n, sizeof(*mf->rows));
	mf->earlier = xcalloc(mf->n, sizeof(*mf->earlier));
	for (i = 0; i < mf->n; i++) {
		int rc;

		finding_fingerprint(t->l->name, parent->author_email,
				    &r->findings.items[i], mf->fp[i]);
		rc = state_fingerprint_get(
			t->w->st, mf->fp[i], key,
			t->w->now - FINDINGS_KEPT_DAYS * 86400LL, &mf->rows[i]);
		if (rc < 0)
			return -1;
		if (!rc || !msgid_is_safe(mf->rows[i].reply_msgid))
			continue;
		mf->earlier[i].msgid = mf->rows[i].reply_msgid;
		mf->earlier[i].version = mf->rows[i].version;
		mf->earlier[i].title = mf->rows[i].title;
		mf->repeated++;
	}
	return 0;
}

static void mailed_findings_release(struct mailed_findings *mf)
{
	free(mf->fp);
	free(mf->rows);
	free(mf->earlier);
}

/*
 * The findings a reply mails in full, in its transaction: a crash leaves
 * both the reply and its fingerprints recorded, or neither.
 */
static int mailed_findings_add(struct thread_ctx *t, const char *key,
			       const char *msgid,
			       const struct mailed_findings *mf)
{
	struct watch *w = t->w;
	size_t i;

	for (i = 0; i < mf->n; i++)
		if (!mf->earlier[i].msgid &&
		    state_fingerprint_add(w->st, mf->fp[i], t->l->name, key,
					  msgid, mf->version, mf->title, w->now,
					  w->now - FINDINGS_KEPT_DAYS *
							   86400LL) < 0)
			return -1;
	if (!mf->n)
		return 0;
	return state_fingerprints_prune(w->st, t->l->name,
					w->now - FINDINGS_KEPT_DAYS * 86400LL,
					FINDINGS_KEPT_MAX);
}

/* Record the reply and the series in one transaction, then deliver. */
static int record_and_send(struct thread_ctx *t, const char *key,
			   const char *pids, const char *msgid,
			   const char *author, const char *digest_line,
			   const struct mailed_findings *mf,
			   const struct sb *raw)
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
	    (pids &&
	     state_series_set(w->st, key, t->l->name, t->thread,
			      SERIES_REVIEWED, pids, msgid, w->now) < 0) ||
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

/* prereq: what a series is applied on, and what it declares in vain. */
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
 * The threads of other series of the list that hold a patch s names in
 * a prerequisite-patch-id: line (git format-patch --base), from the state
 * db's patch-ids of the series watch has seen (so a prerequisite posted
 * in its own thread, and reviewed first, is found). Caller frees.
 */
static void prereq_patch_threads(struct thread_ctx *t,
				 const struct mp_series *s, char ***threads,
				 size_t *n)
{
	size_t k, j;

	*threads = NULL;
	*n = 0;
	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *p = k ? s->patches[k - 1] : s->cover;

		for (j = 0; p && j < p->nprereq_patch_ids; j++)
			if (state_threads_with_patch(t->w->st, t->l->name,
						     p->prereq_patch_ids[j],
						     t->thread, threads, n,
						     PREREQ_PATCH_THREADS) < 0)
				warning("state db: %s", state_error(t->w->st));
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
	struct rv_prereq_plan pl;
	size_t nc = 0, i, self = 0, n;
	bool found = false;

	char **extra;
	size_t nextra;

	memset(pq, 0, sizeof(*pq));
	if (!t->set || !rv_prereq_declares_any(s))
		return;
	prereq_patch_threads(t, s, &extra, &nextra);
	local_mail_prereqs(t->w->db, s, t->thread, extra, nextra, &pq->set,
			   &pq->missing, &pq->nmissing);
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

static void review_one(struct thread_ctx *t, const struct mp_series *s)
{
	struct watch *w = t->w;
	struct wlist *l = t->l;
	struct sb key = SB_INIT, pids = SB_INIT, msgid = SB_INIT, raw = SB_INIT;
	struct sb dline = SB_INIT;
	struct rv_ledger *ledger = NULL;
	const char *outcome;
	struct series_row row;
	struct rv_review_opts opts = RV_REVIEW_OPTS_INIT;
	struct rv_review *r = NULL;
	struct reply_opts ro = {0};
	struct errmsg err = {""};
	struct watch_prereqs pq = {0};
	struct mailed_findings mf = {0};
	const struct mp_patch *parent = reply_parent(s);
	char earlier[256];
	int64_t last;
	int rr;

	if (!parent)
		return;
	series_key(s, &key);
	if (state_series_get(w->st, key.buf, &row) < 0) {
		error("state db: %s", state_error(w->st));
		t->retry = true;
		goto out;
	}
	if (t->explain)
		goto review; /* asked for: whatever the series' status */
	if (row.status == SERIES_REVIEWED || row.status == SERIES_SKIPPED ||
	    row.status == SERIES_FAILED) {
		tag_series(t, s,
			   row.status == SERIES_REVIEWED  ? "quorum/reviewed"
			   : row.status == SERIES_SKIPPED ? "quorum/skipped"
							  : "quorum/failed");
		goto out;
	}
	if (s->superseded || is_muted(l, parent) ||
	    (parent->author_email &&
	     state_is_muted(w->st, l->name, parent->author_email) > 0)) {
		state_series_set(w->st, key.buf, l->name, t->thread,
				 SERIES_SKIPPED, NULL, NULL, w->now);
		printf("%s: skipped %s series \"%s\"\n", l->name,
		       s->superseded ? "superseded" : "muted",
		       parent->subject_raw ? parent->subject_raw : "");
		tag_series(t, s, "quorum/skipped");
		w->skipped++;
		goto out;
	}
	last = series_last_seen(t, s);
	if (!s->complete && w->now - last < l->wait) {
		if (row.status != SERIES_WAITING) {
			state_series_set(w->st, key.buf, l->name, t->thread,
					 SERIES_WAITING, NULL, NULL, w->now);
			printf("%s: waiting for %zu missing patch%s of \"%s\" "
			       "(up to %llds)\n",
			       l->name, s->nmissing,
			       s->nmissing == 1 ? "" : "es",
			       parent->subject_raw ? parent->subject_raw : "",
			       (long long)(l->wait - (w->now - last)));
		}
		w->waiting++;
		goto out;
	}
	if (s->nmissing >= s->npatches) {
		/* A cover letter alone: nothing to review. */
		state_series_set(w->st, key.buf, l->name, t->thread,
				 SERIES_SKIPPED, NULL, NULL, w->now);
		printf("%s: skipped \"%s\": no patch of it arrived\n", l->name,
		       parent->subject_raw ? parent->subject_raw : "");
		tag_series(t, s, "quorum/skipped");
		w->skipped++;
		goto out;
	}
	if (over_rate_limit(t, parent)) {
		if (row.status != SERIES_WAITING)
			state_series_set(w->st, key.buf, l->name, t->thread,
					 SERIES_WAITING, NULL, NULL, w->now);
		w->waiting++;
		goto out;
	}
review:
	patch_ids(s, &pids);
	rr = t->explain ? 0
			: state_series_same_patches(w->st, key.buf, pids.buf,
						    earlier, sizeof(earlier));
	if (rr > 0 && state_series_unchanged_noted(w->st, pids.buf) != 0) {
		/* Said "unchanged" once already: stay quiet. */
		state_series_set(w->st, key.buf, l->name, t->thread,
				 SERIES_SKIPPED, pids.buf, NULL, w->now);
		printf("%s: skipped \"%s\": unchanged, and already said so\n",
		       l->name, parent->subject_raw ? parent->subject_raw : "");
		tag_series(t, s, "quorum/skipped");
		w->skipped++;
		goto out;
	}
	if (rr > 0) {
		/* A RESEND: say so once, never review it again. */
		reply_msgid(w, key.buf, "unchanged", &msgid);
		ro.unchanged_since = earlier;
	} else {
		if (!list_repo(w, l) && l->repo) {
			/* The config's fault, not the series': try again. */
			t->retry = true;
			w->failed++;
			goto out;
		}
		opts.apply.branch = l->branch;
		opts.quorum = w->quorum;
		opts.history = l->history;
		opts.workdir = l->workdir;
		if (w->llm.n) {
			/* cost (issue 8): caps and the answer cache. */
			if (cost_review_opts(w->cfg, l->name, 0, &opts, &ledger,
					     &err) < 0) {
				error("list %s: %s", l->name, err.msg);
				goto out;
			}
			opts.series_key = key.buf;
			opts.llm = w->llm.v;
			opts.nllm = w->llm.n;
			opts.prompts = w->prompts;
			opts.deadline = w->deadline;
			opts.backoff = w->backoff;
			opts.retries = w->retries;
		}
		plan_prereqs(t, s, l->rv, &opts.apply, &pq);
		opts.apply.prereqs = pq.v;
		opts.apply.nprereqs = pq.n;
		rr = rv_review_series(&r, l->rv, s, &opts, &err);
		l->rv_uses++;
		if (rr < 0 && !r) {
			error("list %s: cannot review \"%s\": %s", l->name,
			      parent->subject_raw ? parent->subject_raw : "",
			      err.msg);
			state_series_set(w->st, key.buf, l->name, t->thread,
					 SERIES_FAILED, pids.buf, NULL, w->now);
			tag_series(t, s, "quorum/failed");
			w->failed++;
			goto out;
		}
		if (t->explain) {
			sb_addf(&key, "#%s", t->explain_id);
			reply_msgid(w, key.buf, "explain", &msgid);
			sb_setlen(&key, key.len - strlen(t->explain_id) - 1);
		} else if (row.generation) {
			/* A rerun: a new reply, a new Message-ID. */
			sb_addf(&key, "#%d", row.generation);
			reply_msgid(w, key.buf, "review", &msgid);
			sb_setlen(&key,
				  key.len - strlen(strrchr(key.buf, '#')));
		} else {
			reply_msgid(w, key.buf, "review", &msgid);
		}
	}
	ro.from = w->from;
	ro.domain = w->domain;
	ro.msgid = msgid.buf;
	ro.list_address = l->address;
	/* An embargoed (security) list: only the maintainers hear of it. */
	ro.to_author = l->to_author && !l->embargo;
	ro.to_list = l->to_list && !l->embargo;
	ro.maintainers = (const char *const *)l->cc;
	ro.nmaintainers = l->ncc;
	ro.prompt_hash = w->prompt_hash;
	ro.explain = t->explain;
	ro.now = w->now;
	ro.missing_prereqs = (const char *const *)pq.missing;
	ro.nmissing_prereqs = pq.nmissing;
	/* An explanation shows its finding whatever was mailed before. */
	if (!t->explain && !ro.unchanged_since) {
		if (mailed_findings_get(t, key.buf, s, r, &mf) < 0) {
			error("state db: %s", state_error(w->st));
			t->retry = true;
			goto out;
		}
		ro.earlier = mf.earlier;
	}
	if (reply_compose(&raw, s, r, &ro, &err) < 0) {
		error("list %s: %s", l->name, err.msg);
		state_series_set(w->st, key.buf, l->name, t->thread,
				 SERIES_FAILED, pids.buf, NULL, w->now);
		tag_series(t, s, "quorum/failed");
		w->failed++;
		goto out;
	}
	if (ro.unchanged_since)
		outcome = "unchanged since an earlier review";
	else if (r->apply && r->apply->failed >= 0)
		outcome = "does not apply";
	else
		outcome = r->findings.n ? "findings" : "no findings";
	sb_addf(&dline, "\"%s\" from %s: %s <%s>",
		parent->subject_raw ? parent->subject_raw : "",
		parent->from ? parent->from : "?", outcome, parent->message_id);
	if (r && r->findings.n && !ro.unchanged_since)
		sb_addf(&dline, " (%zu at quorum)", r->findings.n);
	if (record_and_send(t, key.buf, t->explain ? NULL : pids.buf, msgid.buf,
			    parent->author_email, t->explain ? NULL : dline.buf,
			    t->explain ? NULL : &mf, &raw) < 0) {
		t->retry = true;
		goto out;
	}
	if (t->explain) {
		printf("%s: explained finding %d of \"%s\", reply <%s> (%s)\n",
		       l->name, t->explain,
		       parent->subject_raw ? parent->subject_raw : "",
		       msgid.buf, list_method(w, l));
		goto out;
	}
	sb_reset(&dline);
	if (mf.repeated)
		sb_addf(&dline,
			" (%zu of them still open from earlier "
			"reviews)",
			mf.repeated);
	printf("%s: reviewed \"%s\": %s%s, reply <%s> (%s)\n", l->name,
	       parent->subject_raw ? parent->subject_raw : "",
	       ro.unchanged_since ? "unchanged since an earlier review"
	       : r->findings.n	  ? "findings"
				  : "no findings",
	       sb_str(&dline), msgid.buf, list_method(w, l));
	tag_series(t, s, "quorum/reviewed");
	w->reviewed++;
out:
	mailed_findings_release(&mf);
	rv_review_free(r);
	watch_prereqs_release(&pq);
	rv_ledger_free(ledger);
	/*
	 * The repo handle keeps every object a review wrote in memory:
	 * reopen it now and then so memory does not grow with the series.
	 */
	if (l->rv && l->rv_uses >= REPO_REOPEN_AFTER) {
		rv_repo_free(l->rv);
		l->rv = NULL;
		l->rv_uses = 0;
	}
	sb_release(&key);
	sb_release(&pids);
	sb_release(&msgid);
	sb_release(&raw);
	sb_release(&dline);
}

enum command { CMD_NONE, CMD_RERUN, CMD_MUTE, CMD_EXPLAIN };

/*
 * The #quorum command on a line of its own in p's text (quoted lines
 * never count), with the finding number of explain in *n.
 */
static enum command command_of(const struct mp_patch *p, int *n)
{
	const char *text = p->commit_message, *line;

	for (line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *c = line;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		while (*c == ' ' || *c == '\t')
			c++;
		if (!strncmp(c, "#quorum ", 8) && (size_t)(c - line) < len) {
			char word[16] = "";
			int num = 0;

			sscanf(c + 8, "%15s %d", word, &num);
			if (!strcmp(word, "rerun"))
				return CMD_RERUN;
			if (!strcmp(word, "mute"))
				return CMD_MUTE;
			if (!strcmp(word, "explain") && num > 0 && num < 1000) {
				if (n)
					*n = num;
				return CMD_EXPLAIN;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return CMD_NONE;
}

static bool refers_to(const struct mp_patch *cmd, const char *id)
{
	size_t i;

	if (!id)
		return false;
	if (cmd->in_reply_to && !strcmp(cmd->in_reply_to, id))
		return true;
	for (i = 0; i < cmd->nreferences; i++)
		if (!strcmp(cmd->references[i], id))
			return true;
	return false;
}

/* The series the command is about: the one its references name. */
static const struct mp_series *command_series(const struct mp_set *set,
					      const struct mp_patch *cmd)
{
	size_t i, k;

	for (i = 0; i < set->nseries; i++) {
		const struct mp_series *s = set->series[i];

		if (s->cover && refers_to(cmd, s->cover->message_id))
			return s;
		for (k = 0; k < s->npatches; k++)
			if (s->patches[k] &&
			    refers_to(cmd, s->patches[k]->message_id))
				return s;
	}
	return set->nseries == 1 ? set->series[0] : NULL;
}

/* The series' author, or a maintainer of the list? */
static bool may_command(const struct wlist *l, const struct mp_series *s,
			const char *sender)
{
	const struct mp_patch *p = reply_parent(s);
	size_t i;

	if (!sender)
		return false;
	if (p && p->author_email && !strcasecmp(p->author_email, sender))
		return true;
	for (i = 0; i < l->ncc; i++)
		if (!strcasecmp(l->cc[i], sender))
			return true;
	return false;
}

static void run_command(struct thread_ctx *t, const struct mp_set *set,
			const struct mp_patch *cmd)
{
	static const char *const names[] = {"", "rerun", "mute", "explain"};
	struct watch *w = t->w;
	const struct mp_series *s = command_series(set, cmd);
	const char *sender = cmd->author_email;
	struct tmsg *tm = tmsg_find(t, cmd->message_id);
	struct sb key = SB_INIT;
	int n = 0, fresh;
	enum command c = command_of(cmd, &n);

	if (!s)
		return;
	if (!may_command(t->l, s, sender)) {
		if (tm)
			tm->tag = "quorum/skipped";
		if (state_command_once(w->st, cmd->message_id, w->now) > 0)
			printf("%s: ignored #quorum %s from %s: not the "
			       "author or a maintainer\n",
			       t->l->name, names[c], sender ? sender : "?");
		return;
	}
	series_key(s, &key);
	if (state_begin(w->st) < 0)
		goto out;
	fresh = state_command_once(w->st, cmd->message_id, w->now);
	if (fresh > 0 && c == CMD_RERUN)
		fresh = state_series_rerun(w->st, key.buf, w->now) < 0 ? -1 : 1;
	else if (fresh > 0 && c == CMD_MUTE)
		fresh = state_mute_add(w->st, t->l->name,
				       reply_parent(s)->author_email,
				       w->now) < 0
				? -1
				: 1;
	if (fresh < 0 || state_commit(w->st) < 0) {
		state_rollback(w->st);
		error("state db: %s", state_error(w->st));
		goto out;
	}
	if (tm)
		tm->tag = "quorum/reviewed";
	if (!fresh)
		goto out;
	printf("%s: #quorum %s from %s\n", t->l->name, names[c], sender);
	if (c == CMD_EXPLAIN) {
		t->explain = n;
		t->explain_id = cmd->message_id;
		review_one(t, s);
		t->explain = 0;
		t->explain_id = NULL;
	}
out:
	sb_release(&key);
}

static int process_thread(struct watch *w, struct wlist *l, const char *thread)
{
	struct thread_ctx t = {w, l, thread, NULL, 0,	 0,   NULL,
			       0, 0, false,  0,	   NULL, NULL};
	struct mp_collector *c = mp_collector_new();
	struct mp_set *set = NULL;
	notmuch_query_t *q;
	notmuch_messages_t *msgs = NULL;
	struct sb qs = SB_INIT, raw = SB_INIT;
	struct errmsg err = {""};
	size_t i, n = 0;

	sb_addf(&qs, "thread:%s", thread);
	q = notmuch_query_create(w->db, qs.buf);
	if (!q || notmuch_query_search_messages(q, &msgs)) {
		error("notmuch: cannot search %s", qs.buf);
		goto out;
	}
	for (; notmuch_messages_valid(msgs) && n < WATCH_MAX_THREAD;
	     notmuch_messages_move_to_next(msgs), n++) {
		notmuch_message_t *m = notmuch_messages_get(msgs);
		const char *id = notmuch_message_get_message_id(m);
		const char *file = notmuch_message_get_filename(m);
		struct mp_patch *p = NULL;
		struct tmsg *tm;

		if (!id)
			continue;
		ALLOC_GROW(t.msgs, t.n + 1, t.alloc);
		tm = &t.msgs[t.n++];
		tm->msgid = xstrdup_or_null(id);
		tm->tag = NULL;
		if (state_message_seen(w->st, id, l->name, w->now,
				       &tm->first_seen) < 0)
			tm->first_seen = w->now;
		sb_reset(&raw);
		if (!file ||
		    read_file_capped(file, WATCH_MAX_MESSAGE, &raw, &err) < 0) {
			tm->tag = "quorum/failed";
			continue;
		}
		if (is_own_mail(w, id, &raw)) {
			tm->tag = "quorum/skipped";
			continue;
		}
		if (mp_patch_parse(&p, raw.buf, raw.len, NULL, &err) < 0) {
			tm->tag = "quorum/skipped";
			continue;
		}
		if (!p->auto_submitted && p->kind == MP_KIND_REPLY &&
		    command_of(p, NULL)) {
			tm->tag = "quorum/seen";
			ALLOC_GROW(t.cmds, t.ncmds + 1, t.cmds_alloc);
			t.cmds[t.ncmds++] = p;
			continue;
		}
		if (p->auto_submitted || p->subject.reply ||
		    (p->kind != MP_KIND_PATCH && p->kind != MP_KIND_COVER)) {
			/*
			 * Replies (even with a diff: a reviewer's suggestion),
			 * pull requests, auto-replies: never reviewed.
			 */
			tm->tag = "quorum/skipped";
			mp_patch_free(p);
			continue;
		}
		/* notmuch and the parser agree on the id (both strip <>). */
		mp_collector_add(c, p);
	}
	set = mp_collector_finish(c);
	c = NULL;
	t.set = set;
	for (i = 0; i < t.ncmds; i++)
		run_command(&t, set, t.cmds[i]);
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
	if (c)
		mp_set_free(mp_collector_finish(c));
	mp_set_free(set);
	if (q)
		notmuch_query_destroy(q);
	for (i = 0; i < t.n; i++)
		free(t.msgs[i].msgid);
	free(t.msgs);
	for (i = 0; i < t.ncmds; i++)
		mp_patch_free(t.cmds[i]);
	free(t.cmds);
	sb_release(&qs);
	sb_release(&raw);
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

static int process_list(struct watch *w, struct wlist *l)
{
	struct strset threads = {NULL, 0, 0};
	notmuch_query_t *q;
	notmuch_messages_t *msgs = NULL;
	struct sb qs = SB_INIT;
	size_t i;
	int ret = 0;

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
	for (i = 0; i < threads.n && !stop_requested; i++) {
		process_thread(w, l, threads.v[i]);
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
	if (q)
		notmuch_query_destroy(q);
	for (i = 0; i < threads.n; i++)
		free(threads.v[i]);
	free(threads.v);
	sb_release(&qs);
	return ret;
}

/*
 * mode = digest: once a day, one mail to the maintainers listing the
 * series reviewed since the last one; recorded like any reply.
 */
static void send_digest(struct watch *w, struct wlist *l)
{
	struct sb lines = SB_INIT, msgid = SB_INIT, raw = SB_INIT,
		  key = SB_INIT;
	struct reply_opts ro = {0};
	struct errmsg err = {""};
	const char *method = l->ncc ? w->method : "outbox";
	size_t n = 0;
	int due;

	due = state_digest_due(w->st, l->name, w->now, DIGEST_PERIOD, &lines,
			       &n);
	if (due <= 0)
		goto out;
	sb_addf(&key, "digest/%s/%lld", l->name, (long long)w->now);
	reply_msgid(w, key.buf, "digest", &msgid);
	ro.from = w->from;
	ro.msgid = msgid.buf;
	ro.maintainers = (const char *const *)l->cc;
	ro.nmaintainers = l->ncc;
	ro.now = w->now;
	if (reply_compose_digest(&raw, l->name, lines.buf, n, &ro, &err) < 0) {
		error("list %s: %s", l->name, err.msg);
		goto out;
	}
	if (state_begin(w->st) < 0)
		goto fail;
	if (state_reply_add(w->st, msgid.buf, key.buf, l->name, NULL, method,
			    raw.buf, raw.len, w->now) < 0 ||
	    state_digest_mark(w->st, l->name, msgid.buf, w->now) < 0 ||
	    state_commit(w->st) < 0) {
		state_rollback(w->st);
		goto fail;
	}
	deliver_one(w, msgid.buf, method, raw.buf, raw.len, 0);
	printf("%s: digest of %zu series, <%s> (%s)\n", l->name, n, msgid.buf,
	       method);
	goto out;
fail:
	error("state db: %s", state_error(w->st));
out:
	sb_release(&lines);
	sb_release(&msgid);
	sb_release(&raw);
	sb_release(&key);
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
	const char *v = qconfig_get(w->cfg, "notmuch.database");
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
	/* First finish what an earlier run recorded but did not deliver. */
	if (state_replies_pending(w->st, w->now, deliver_pending_one, w) < 0)
		warning("state db: %s", state_error(w->st));
	if (open_notmuch(w) < 0)
		return EXIT_ENV;
	for (i = 0; i < w->nlists && !stop_requested; i++) {
		process_list(w, &w->lists[i]);
		if (w->lists[i].mode == MODE_DIGEST)
			send_digest(w, &w->lists[i]);
	}
	notmuch_database_destroy(w->db);
	w->db = NULL;
	if (!once && !(w->reviewed + w->waiting + w->skipped + w->failed +
		       w->delivered + w->held))
		return 0;
	printf("watch: %zu reviewed, %zu waiting, %zu skipped, %zu failed, "
	       "%zu delivered, %zu held\n",
	       w->reviewed, w->waiting, w->skipped, w->failed, w->delivered,
	       w->held);
	fflush(stdout);
	return 0;
}

/* Add name and the bytes of path to the hash input; 0 or -1. */
static int hash_file(struct sb *in, const char *dir, const char *name)
{
	struct sb path = SB_INIT;
	int ret;

	sb_addf(&path, "%s/%s", dir, name);
	sb_addf(in, "%s%c", name, 0);
	ret = read_file_capped(path.buf, (size_t)4 << 20, in, NULL);
	in->cap = 0;
	sb_release(&path);
	return ret;
}

/*
 * The prompts' identity for X-Quorum-Prompt: a hash over the files the
 * LLM voters read (names and bytes, subsystems by their index order).
 */
static void hash_prompts(struct watch *w, const char *dir)
{
	static const char *const files[] = {"review.md", "false-positives.md",
					    "schema.json", "subsystems/index"};
	struct sb in = SB_INIT, idx = SB_INIT, name = SB_INIT;
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;
	const char *p;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		hash_file(&in, dir, files[i]);
	sb_addf(&name, "%s/subsystems/index", dir);
	if (read_file_capped(name.buf, (size_t)1 << 20, &idx, NULL) == 0) {
		/* Lines "PATTERN FILE": hash each FILE too. */
		for (p = sb_str(&idx); *p;) {
			const char *nl = strchr(p, '\n'), *sp;
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			sp = memrchr(p, ' ', n);
			if (sp && *p != '#') {
				sb_reset(&name);
				sb_adds(&name, "subsystems/");
				sb_add(&name, sp + 1, n - (size_t)(sp + 1 - p));
				hash_file(&in, dir, name.buf);
			}
			p += n + (nl ? 1 : 0);
		}
	}
	git_odb_hash(&oid, in.buf ? in.buf : "", in.len, GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	snprintf(w->prompt_hash, sizeof(w->prompt_hash), "sha1:%.16s", hex);
	sb_release(&in);
	sb_release(&idx);
	sb_release(&name);
}

/* [voter] sections with an LLM provider, the prompts and their hash. */
static int load_llm(struct watch *w)
{
	static const char *const keys[] = {"review.deadline", "review.backoff"};
	double vals[2] = {0, 0};
	struct errmsg err = {""};
	char *dir;
	size_t i;
	int n;

	snprintf(w->prompt_hash, sizeof(w->prompt_hash), "none");
	if (llm_voters_load(w->cfg, &w->llm, &err) < 0)
		return error("%s", err.msg);
	if (!w->llm.n)
		return 0;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = qconfig_get(w->cfg, keys[i]);
		char *end;

		if (!v)
			continue;
		vals[i] = strtod(v, &end);
		if (end == v || *end || !(vals[i] > 0 && vals[i] <= 86400))
			return error("config %s = '%s' is not a number of "
				     "seconds",
				     keys[i], v);
	}
	if (qconfig_get_int(w->cfg, "review.retries", 2, &n, &err) < 0)
		return error("%s", err.msg);
	w->deadline = vals[0];
	w->backoff = vals[1];
	w->retries = n > 0 ? n : -1;
	dir = prompts_dir();
	if (rv_prompts_load(&w->prompts, dir, &err) < 0) {
		free(dir);
		return error("%s", err.msg);
	}
	hash_prompts(w, dir);
	free(dir);
	return 0;
}

static int load_watch_config(struct watch *w)
{
	struct errmsg err = {""};
	const char *v, *xdg, *home;
	struct sb s = SB_INIT;

	w->domain = qconfig_get(w->cfg, "watch.domain");
	if (!w->domain)
		w->domain = "quorum.invalid";
	if (!msgid_is_safe(w->domain) || strchr(w->domain, '@'))
		return error("watch.domain '%s' is not a domain name",
			     w->domain);
	v = qconfig_get(w->cfg, "watch.from");
	if (v) {
		w->from = xstrdup_or_null(v);
	} else {
		sb_addf(&s, "quorum <quorum@%s>", w->domain);
		w->from = sb_detach(&s, NULL);
	}
	v = qconfig_get(w->cfg, "deliver.outbox");
	if (v) {
		w->outbox = expand_home(v);
	} else {
		xdg = getenv("XDG_DATA_HOME");
		home = getenv("HOME");
		if (xdg && *xdg)
			sb_addf(&s, "%s/quorum/outbox", xdg);
		else
			sb_addf(&s, "%s/.local/share/quorum/outbox",
				home ? home : ".");
		w->outbox = sb_detach(&s, NULL);
	}
	w->method = qconfig_get(w->cfg, "deliver.method");
	if (!w->method)
		w->method = "outbox";
	if (strcmp(w->method, "outbox") && strcmp(w->method, "sendmail") &&
	    strcmp(w->method, "smtp"))
		return error("deliver.method '%s' is not outbox, sendmail or "
			     "smtp",
			     w->method);
	w->smtp.url = qconfig_get(w->cfg, "deliver.smtp-url");
	if (!strcmp(w->method, "smtp") && !w->smtp.url)
		return error("deliver.method = smtp needs deliver.smtp-url "
			     "(smtp://host:587)");
	w->smtp.user = qconfig_get(w->cfg, "deliver.smtp-user");
	v = qconfig_get(w->cfg, "deliver.smtp-password-env");
	w->smtp.password = v ? getenv(v) : NULL;
	v = qconfig_get(w->cfg, "deliver.starttls");
	w->smtp.starttls = !v || strcmp(v, "false");
	{
		const char *lt = strrchr(w->from, '<'),
			   *gt = strrchr(w->from, '>');

		w->smtp_from = lt && gt && gt > lt
				       ? xstrndup(lt + 1, (size_t)(gt - lt - 1))
				       : xstrdup_or_null(w->from);
		w->smtp.mail_from = w->smtp_from;
	}
	v = qconfig_get(w->cfg, "deliver.sendmail");
	if (argv_split(v ? v : "sendmail -i -t", &w->sendmail) < 0)
		return error("deliver.sendmail '%s' is not a command", v);
	if (qconfig_get_int(w->cfg, "deliver.max-attempts", DEFAULT_ATTEMPTS,
			    &w->max_attempts, &err) < 0 ||
	    qconfig_get_int(w->cfg, "review.quorum", 0, &w->quorum, &err) < 0)
		return error("%s", err.msg);
	if (w->max_attempts < 1)
		w->max_attempts = 1;
	if (qconfig_subsections(w->cfg, "list", add_list, w))
		return -1;
	return load_llm(w);
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

static int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"once", no_argument, NULL, 'o'},
		{"interval", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct watch w;
	struct errmsg err = {""};
	char *state_path = NULL, *pid_path = NULL, *end;
	bool once = false;
	long interval = 300;
	int c, ret = EXIT_USAGE;

	memset(&w, 0, sizeof(w));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			once = true;
			break;
		case 'i':
			interval = strtol(optarg, &end, 10);
			if (*end || interval < 1 || interval > 86400)
				return usage_error(&cmd_watch_def,
						   "--interval wants seconds "
						   "from 1 to 86400, not '%s'",
						   optarg);
			break;
		case 'h':
			return cmd_print_help(&cmd_watch_def);
		default:
			return usage_error(&cmd_watch_def,
					   "unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(&cmd_watch_def, "watch takes no arguments");
	if (qconfig_load(&w.cfg, NULL, &err) < 0) {
		error("%s", err.msg);
		goto out;
	}
	if (load_watch_config(&w) < 0)
		goto out;
	if (!w.nlists) {
		error("no [list \"NAME\"] section with an address in the "
		      "config "
		      "(%s); nothing to watch",
		      *qconfig_sources(w.cfg) ? qconfig_sources(w.cfg)
					      : "none found");
		goto out;
	}
	state_path = qconfig_get(w.cfg, "watch.state")
			     ? expand_home(qconfig_get(w.cfg, "watch.state"))
			     : state_default_path();
	if (state_open(&w.st, state_path, &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGUSR1, on_wake);
	if (!once)
		pid_path = write_pid_file(state_path);
	for (;;) {
		wake_requested = 0;
		ret = run_once(&w, once);
		if (once || stop_requested)
			break;
		if (ret) /* notmuch busy (notmuch new?): try at the next poll */
			warning("will try again in %lds", interval);
		for (c = 0; c < interval && !stop_requested && !wake_requested;
		     c++)
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
out:
	state_close(w.st);
	free(state_path);
	free(pid_path);
	argv_free(w.sendmail);
	free(w.from);
	free(w.smtp_from);
	free(w.outbox);
	lists_free(&w);
	rv_prompts_free(w.prompts);
	llm_voters_release(&w.llm);
	qconfig_free(w.cfg);
	return ret;
}
