// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * local-mail.c - `quorum review MESSAGE-ID|URL`: the named message's
 * thread, and the threads of its series' prerequisites, read from the
 * local notmuch database opened read-only. quorum never fetches mail: a
 * message that is not in the database is an error that says how to get it.
 * `quorum watch` reads a series' prerequisite threads the same way, from
 * the database it has open (local_mail_prereqs()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <notmuch.h>

#include "cmd.h"
#include "local-mail.h"

#define LOCAL_MAX_MESSAGE ((size_t)16 << 20) /* bytes of one file, as watch */
#define LOCAL_MAX_THREAD 2000 /* messages read from one thread, as watch */
#define LOCAL_MAX_THREADS 16  /* the named thread plus prerequisite threads */
#define PREREQ_MAX_DEPTH 5    /* prerequisites of prerequisites of ... */
#define PREREQ_MAX_IDS 64     /* prerequisite-message-ids looked up at all */

static struct mp_series *series_holding(const struct mp_set *set,
					const char *id)
{
	size_t i;

	for (i = 0; id && i < set->nseries; i++)
		if (mp_series_has_msgid(set->series[i], id))
			return set->series[i];
	return NULL;
}

/* The series holding id, else the one the reply id answers (nearest first). */
static struct mp_series *series_of(const struct mp_set *set, const char *id)
{
	struct mp_series *s = series_holding(set, id);
	const struct mp_patch *p = NULL;
	size_t i;

	for (i = 0; !s && i < set->nothers; i++)
		if (set->others[i]->message_id &&
		    !strcmp(set->others[i]->message_id, id))
			p = set->others[i];
	if (s || !p)
		return s;
	if ((s = series_holding(set, p->in_reply_to)))
		return s;
	for (i = p->nreferences; i-- > 0;)
		if ((s = series_holding(set, p->references[i])))
			return s;
	return NULL;
}

struct lookup {
	notmuch_database_t *db;
	char *db_path;	/* for messages */
	char **threads; /* thread ids of the input, the named one first */
	size_t nthreads, threads_alloc;
	char **ids; /* prerequisite-message-ids queued, never twice */
	int *depth;
	size_t nids, ids_alloc;
	bool borrowed;	/* db is the caller's (watch's): not closed here */
	bool quiet;	/* no notes or warnings; missing ids collected */
	char **missing; /* quiet: prerequisite-message-ids not in the db */
	size_t nmissing, missing_alloc;
	const struct local_mail_filter *filter; /* the mail it may read */
};

/* May the lookup read the message file path? */
static bool may_read(const struct lookup *lk, const char *path)
{
	return !lk->filter || (path && lk->filter->keep(lk->filter->arg, path));
}

static int open_db(struct lookup *lk, struct qconfig *cfg, struct errmsg *err)
{
	const char *v = qconfig_get(cfg, "notmuch.database");
	const char *env = getenv("NOTMUCH_CONFIG");
	char *path = v ? expand_home(v) : NULL, *msg = NULL;
	notmuch_status_t st;
	int ret = 0;

	/* Read-only: looking a message up never changes the user's mail. */
	st = notmuch_database_open_with_config(path,
					       NOTMUCH_DATABASE_MODE_READ_ONLY,
					       NULL, NULL, &lk->db, &msg);
	if (st) {
		const char *why = msg ? msg : notmuch_status_to_string(st);
		int n;

		if (!strncmp(why, "Error: ", 7))
			why += 7;
		n = (int)strcspn(why, "\n");
		while (n > 0 && (why[n - 1] == '.' || why[n - 1] == ' '))
			n--;
		if (path)
			ret = errmsg_set(
				err, LOCAL_MAIL_DB,
				"cannot open the notmuch database %s: "
				"%.*s; set notmuch.database in quorum's "
				"config to a maildir indexed by `notmuch "
				"new`",
				path, n, why);
		else
			ret = errmsg_set(
				err, LOCAL_MAIL_DB,
				"cannot open the notmuch database of "
				"notmuch's config (%s): %.*s; set "
				"notmuch.database in quorum's config, or "
				"NOTMUCH_CONFIG",
				env && *env ? env : "~/.notmuch-config", n,
				why);
		lk->db = NULL;
	} else {
		lk->db_path =
			xstrdup_or_null(notmuch_database_get_path(lk->db));
	}
	free(msg);
	free(path);
	return ret;
}

/*
 * Add every message of thread tid (at most LOCAL_MAX_THREAD, oldest
 * first) to c, each file read the way an mbox is. Returns the count.
 */
static size_t collect_thread(struct lookup *lk, const char *tid,
			     struct mp_collector *c)
{
	struct mp_limits lim = MP_LIMITS_INIT;
	notmuch_query_t *q;
	notmuch_messages_t *msgs = NULL;
	struct sb qs = SB_INIT;
	size_t n = 0;

	lim.max_message = LOCAL_MAX_MESSAGE;
	sb_addf(&qs, "thread:%s", tid);
	q = notmuch_query_create(lk->db, qs.buf);
	if (!q) {
		sb_release(&qs);
		return 0;
	}
	notmuch_query_set_sort(q, NOTMUCH_SORT_OLDEST_FIRST);
	if (notmuch_query_search_messages(q, &msgs)) {
		mp_collector_error(c, qs.buf,
				   "notmuch cannot search the thread");
		goto out;
	}
	for (; notmuch_messages_valid(msgs);
	     notmuch_messages_move_to_next(msgs)) {
		notmuch_message_t *m = notmuch_messages_get(msgs);
		const char *file = notmuch_message_get_filename(m);
		struct errmsg perr = {""};
		struct stat st;

		if (n == LOCAL_MAX_THREAD) {
			if (!lk->quiet)
				warning("thread %s holds more than %d "
					"messages; reading the oldest %d",
					tid, LOCAL_MAX_THREAD,
					LOCAL_MAX_THREAD);
			break;
		}
		n++;
		/* Another list's mail: as if it were not there. */
		if (lk->filter && !may_read(lk, file)) {
			notmuch_message_destroy(m);
			continue;
		}
		/* A file, not a maildir a renamed entry might now name. */
		if (!file || stat(file, &st) < 0 || !S_ISREG(st.st_mode))
			mp_collector_error(
				c, notmuch_message_get_message_id(m),
				"its file is gone (run notmuch new)");
		else if (mp_collect_path(c, file, &lim, &perr) < 0)
			mp_collector_error(c, file, perr.msg);
		notmuch_message_destroy(m);
	}
out:
	notmuch_query_destroy(q);
	sb_release(&qs);
	return n;
}

/* The thread of the mail with id, after a read of that thread alone. */
static struct mp_set *read_thread(struct lookup *lk, const char *tid, size_t *n)
{
	struct mp_collector *c = mp_collector_new();

	*n = collect_thread(lk, tid, c);
	return mp_collector_finish(c);
}

/* 1 found (*tid set, caller frees), 0 not in the database, -1 error. */
static int find_thread(struct lookup *lk, const char *id, char **tid,
		       struct errmsg *err)
{
	notmuch_message_t *m = NULL;
	notmuch_status_t st;
	char b[160];

	*tid = NULL;
	st = notmuch_database_find_message(lk->db, id, &m);
	if (st)
		return errmsg_set(err, -1, "notmuch cannot look up <%s>: %s",
				  mp_shown(id, b, sizeof(b)),
				  notmuch_status_to_string(st));
	if (!m)
		return 0;
	/* Mail the lookup may not read is not there, nor hinted at. */
	if (!may_read(lk, notmuch_message_get_filename(m))) {
		notmuch_message_destroy(m);
		return 0;
	}
	*tid = xstrdup_or_null(notmuch_message_get_thread_id(m));
	notmuch_message_destroy(m);
	return *tid ? 1 : -1;
}

static bool thread_seen(struct lookup *lk, const char *tid)
{
	size_t i;

	for (i = 0; i < lk->nthreads; i++)
		if (!strcmp(lk->threads[i], tid))
			return true;
	return false;
}

/* Queue the prerequisite-message-ids of series s, found at depth. */
static void queue_prereqs(struct lookup *lk, const struct mp_series *s,
			  int depth)
{
	size_t k, j, i;

	for (k = 0; k <= s->npatches; k++) {
		const struct mp_patch *p = k ? s->patches[k - 1] : s->cover;

		for (j = 0; p && j < p->nprereq_message_ids; j++) {
			const char *id = p->prereq_message_ids[j];

			for (i = 0; i < lk->nids; i++)
				if (!strcmp(lk->ids[i], id))
					break;
			if (i < lk->nids || lk->nids >= PREREQ_MAX_IDS)
				continue;
			ALLOC_GROW(lk->ids, lk->nids + 1, lk->ids_alloc);
			lk->depth = xrealloc(
				lk->depth, lk->ids_alloc * sizeof(*lk->depth));
			lk->ids[lk->nids] = xstrdup_or_null(id);
			lk->depth[lk->nids++] = depth;
		}
	}
}

/*
 * Put the threads of the prerequisites (prerequisite-message-id:) into
 * the input, breadth first, at most PREREQ_MAX_DEPTH deep; a thread is
 * read once, so a loop ends. What is not in the database is named in a
 * warning, and the review goes on without it.
 */
static void follow_prereqs(struct lookup *lk)
{
	size_t i;

	for (i = 0; i < lk->nids; i++) {
		const char *id = lk->ids[i];
		struct errmsg e = {""};
		struct mp_series *s;
		struct mp_set *set;
		char b[160], t[80], *tid = NULL;
		size_t n;
		int r;

		if (!mp_msgid_valid(id)) {
			if (!lk->quiet)
				warning("prerequisite-message-id '%s' is not "
					"a message-id; ignored",
					mp_shown(id, b, sizeof(b)));
			continue;
		}
		r = find_thread(lk, id, &tid, &e);
		if (r < 0 && !lk->quiet)
			warning("%s; reviewing without that prerequisite",
				e.msg);
		if (!r && lk->quiet) {
			ALLOC_GROW(lk->missing, lk->nmissing + 1,
				   lk->missing_alloc);
			lk->missing[lk->nmissing++] = xstrdup_or_null(id);
		} else if (!r) {
			warning("prerequisite <%s> is not in the local notmuch "
				"database (%s); reviewing without it",
				mp_shown(id, b, sizeof(b)), lk->db_path);
		}
		if (r <= 0)
			continue;
		if (thread_seen(lk, tid) || lk->nthreads >= LOCAL_MAX_THREADS) {
			if (!thread_seen(lk, tid) && !lk->quiet)
				warning("prerequisite <%s>: more than %d "
					"threads; "
					"reviewing without it",
					mp_shown(id, b, sizeof(b)),
					LOCAL_MAX_THREADS);
			free(tid);
			continue;
		}
		ALLOC_GROW(lk->threads, lk->nthreads + 1, lk->threads_alloc);
		lk->threads[lk->nthreads++] = tid;
		set = read_thread(lk, tid, &n);
		s = series_of(set, id);
		/* watch says in its reply what it applied. */
		if (!lk->quiet && s && mp_series_first(s))
			fprintf(stderr,
				"quorum: prerequisite <%s> is in the local "
				"database: \"%s\" v%d (a thread of %zu "
				"message%s) joins the input\n",
				mp_shown(id, b, sizeof(b)),
				mp_shown(mp_series_first(s)->subject.title
						 ? mp_series_first(s)
							   ->subject.title
						 : "",
					 t, sizeof(t)),
				s->version, n, n == 1 ? "" : "s");
		else if (!lk->quiet)
			warning("prerequisite <%s> is in the local database "
				"but is no patch; its thread joins the input",
				mp_shown(id, b, sizeof(b)));
		if (s && lk->depth[i] < PREREQ_MAX_DEPTH)
			queue_prereqs(lk, s, lk->depth[i] + 1);
		mp_set_free(set);
	}
}

static void lookup_release(struct lookup *lk)
{
	size_t i;

	for (i = 0; i < lk->nthreads; i++)
		free(lk->threads[i]);
	free(lk->threads);
	for (i = 0; i < lk->nids; i++)
		free(lk->ids[i]);
	free(lk->ids);
	free(lk->depth);
	free(lk->db_path);
	for (i = 0; i < lk->nmissing; i++)
		free(lk->missing[i]);
	free(lk->missing);
	if (lk->db && !lk->borrowed)
		notmuch_database_destroy(lk->db);
}

/* A newer version of s in set (its thread): the highest, or 0. */
static int newer_version(const struct mp_set *set, const struct mp_series *s)
{
	int v = 0;
	size_t i;

	for (i = 0; s->superseded && i < set->nseries; i++)
		if (set->series[i]->version > s->version &&
		    set->series[i]->version > v)
			v = set->series[i]->version;
	return v;
}

int local_mail_read(struct qconfig *cfg, const char *spec, struct mp_set **out,
		    char **target, struct errmsg *err)
{
	struct lookup lk = {0};
	struct mp_collector *c;
	struct mp_set *set = NULL;
	struct mp_series *s;
	char *id = NULL, *tid = NULL, b[160];
	size_t i, n;
	int r, ret;

	*out = NULL;
	*target = NULL;
	if (mp_msgid_from_spec(spec, &id, err) < 0)
		return LOCAL_MAIL_SPEC;
	ret = open_db(&lk, cfg, err);
	if (ret < 0)
		goto out;
	r = find_thread(&lk, id, &tid, err);
	if (r <= 0) {
		if (r == 0)
			errmsg_set(
				err, LOCAL_MAIL_NOT_FOUND,
				"<%s> is not in the local notmuch database "
				"(%s); quorum never fetches mail: run `b4 am "
				"-o - %s | quorum review -`, or fetch the "
				"thread and `notmuch new`",
				mp_shown(id, b, sizeof(b)), lk.db_path, id);
		ret = r == 0 ? LOCAL_MAIL_NOT_FOUND : LOCAL_MAIL_DB;
		goto out;
	}
	ALLOC_GROW(lk.threads, 1, lk.threads_alloc);
	lk.threads[lk.nthreads++] = tid;

	/* The named thread alone: which series, which version. */
	set = read_thread(&lk, tid, &n);
	if (!set->nseries) {
		ret = errmsg_set(err, LOCAL_MAIL_NO_SERIES,
				 "the thread of <%s> (%zu message%s) holds "
				 "mail but no patch (no diff found); nothing "
				 "to review",
				 mp_shown(id, b, sizeof(b)), n,
				 n == 1 ? "" : "s");
		goto out;
	}
	s = series_of(set, id);
	if (!s || !mp_series_first(s)) {
		ret = errmsg_set(
			err, LOCAL_MAIL_NO_SERIES,
			"<%s> is neither a patch, a cover letter nor a "
			"reply to one; name one of the %zu series in "
			"its thread (`quorum parse` shows them)",
			mp_shown(id, b, sizeof(b)), set->nseries);
		goto out;
	}
	*target = xstrdup_or_null(mp_series_first(s)->message_id);
	r = newer_version(set, s);
	if (r)
		fprintf(stderr,
			"quorum: note: the thread holds a newer version (v%d) "
			"of this series; reviewing v%d as asked\n",
			r, s->version);
	queue_prereqs(&lk, s, 1);
	mp_set_free(set);
	set = NULL;
	follow_prereqs(&lk);

	/*
	 * One input of every thread read: the review looks only at the
	 * named series, and (the prereq work) applies the prerequisite
	 * series it finds in the same input first.
	 */
	c = mp_collector_new();
	for (i = 0; i < lk.nthreads; i++)
		collect_thread(&lk, lk.threads[i], c);
	set = mp_collector_finish(c);
	if (!series_holding(set, *target)) {
		ret = errmsg_set(err, LOCAL_MAIL_NO_SERIES,
				 "the series of <%s> changed while it was read "
				 "(notmuch new running?); try again",
				 mp_shown(id, b, sizeof(b)));
		goto out;
	}
	*out = set;
	set = NULL;
	ret = 0;
out:
	if (ret < 0) {
		free(*target);
		*target = NULL;
	}
	mp_set_free(set);
	lookup_release(&lk);
	free(id);
	return ret;
}

int local_mail_prereqs(struct _notmuch_database *db, const struct mp_series *s,
		       const char *thread, char *const *extra, size_t nextra,
		       const struct local_mail_filter *filter,
		       struct mp_set **out, char ***missing, size_t *nmissing)
{
	struct lookup lk = {0};
	struct mp_collector *c;
	size_t i;
	int n;

	*out = NULL;
	*missing = NULL;
	*nmissing = 0;
	lk.db = db;
	lk.borrowed = true;
	lk.quiet = true;
	lk.filter = filter;
	lk.db_path = xstrdup_or_null(notmuch_database_get_path(db));
	/* s's own thread counts as read: its series are the caller's. */
	if (thread) {
		ALLOC_GROW(lk.threads, 1, lk.threads_alloc);
		lk.threads[lk.nthreads++] = xstrdup_or_null(thread);
	}
	queue_prereqs(&lk, s, 1);
	follow_prereqs(&lk);
	/* The caller's threads too (found by prerequisite-patch-id:). */
	for (i = 0; i < nextra && lk.nthreads < LOCAL_MAX_THREADS; i++)
		if (extra[i] && !thread_seen(&lk, extra[i])) {
			ALLOC_GROW(lk.threads, lk.nthreads + 1,
				   lk.threads_alloc);
			lk.threads[lk.nthreads++] = xstrdup_or_null(extra[i]);
		}
	n = (int)(lk.nthreads - (thread ? 1 : 0));
	if (n > 0) {
		c = mp_collector_new();
		for (i = thread ? 1 : 0; i < lk.nthreads; i++)
			collect_thread(&lk, lk.threads[i], c);
		*out = mp_collector_finish(c);
	}
	*missing = lk.missing;
	*nmissing = lk.nmissing;
	lk.missing = NULL;
	lk.nmissing = 0;
	lookup_release(&lk);
	return n;
}
