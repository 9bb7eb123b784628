// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * state.c - the watch state db (SQLite, WAL). Every write that decides
 * whether a reply goes out happens in a transaction, so a kill -9 leaves
 * either the reply recorded (and re-delivered on restart) or nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "state.h"
#include "review/review.h"

struct state {
	sqlite3 *db;
};

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"PRAGMA busy_timeout=10000;"
	"CREATE TABLE IF NOT EXISTS messages ("
	"  msgid TEXT PRIMARY KEY, list TEXT, first_seen INTEGER);"
	"CREATE TABLE IF NOT EXISTS series ("
	"  key TEXT PRIMARY KEY, list TEXT, thread TEXT, status INTEGER,"
	"  patch_ids TEXT, reply_msgid TEXT, first_seen INTEGER,"
	"  updated INTEGER, generation INTEGER DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS digest_items ("
	"  series_key TEXT PRIMARY KEY, list TEXT, line TEXT, at INTEGER,"
	"  digest TEXT);"
	"CREATE TABLE IF NOT EXISTS digests ("
	"  msgid TEXT PRIMARY KEY, list TEXT, at INTEGER);"
	"CREATE TABLE IF NOT EXISTS commands ("
	"  msgid TEXT PRIMARY KEY, at INTEGER);"
	"CREATE TABLE IF NOT EXISTS mutes ("
	"  list TEXT, address TEXT, at INTEGER, PRIMARY KEY (list, address));"
	"CREATE INDEX IF NOT EXISTS series_pids ON series(patch_ids);"
	"CREATE TABLE IF NOT EXISTS replies ("
	"  msgid TEXT PRIMARY KEY, series_key TEXT, list TEXT, method TEXT,"
	"  state INTEGER, attempts INTEGER DEFAULT 0, last_error TEXT,"
	"  next_try INTEGER DEFAULT 0, created INTEGER, sent INTEGER,"
	"  raw BLOB, author TEXT);"
	/* The findings each reply mailed in full (fingerprints). */
	"CREATE TABLE IF NOT EXISTS fingerprints ("
	"  fp TEXT PRIMARY KEY, list TEXT, series_key TEXT, reply_msgid TEXT,"
	"  version INTEGER, title TEXT, at INTEGER);"
	"CREATE INDEX IF NOT EXISTS fingerprints_age ON fingerprints(list, "
	"at);"
	/* Lists whose mail came DKIM-signed: commands = dkim by default. */
	"CREATE TABLE IF NOT EXISTS lists_signed ("
	"  list TEXT PRIMARY KEY, since INTEGER);";

char *state_default_path(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct sb p = SB_INIT;

	if (xdg && *xdg)
		sb_addf(&p, "%s/quorum/state.db", xdg);
	else
		sb_addf(&p, "%s/.local/state/quorum/state.db",
			home && *home ? home : ".");
	return sb_detach(&p, NULL);
}

int state_open(struct state **out, const char *path, struct errmsg *err)
{
	struct state *st = xcalloc(1, sizeof(*st));
	char *msg = NULL;

	*out = NULL;
	if (mkdir_parents(path, false) < 0) {
		free(st);
		return errmsg_set(err, -1,
				  "cannot create the directory of %s: %s", path,
				  strerror(errno));
	}
	if (sqlite3_open(path, &st->db) != SQLITE_OK) {
		errmsg_set(err, -1, "cannot open state db %s: %s", path,
			   sqlite3_errmsg(st->db));
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	if (sqlite3_exec(st->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		errmsg_set(err, -1, "state db %s: %s", path,
			   msg ? msg : "cannot create tables");
		sqlite3_free(msg);
		goto fail;
	}
	*out = st;
	return 0;
fail:
	sqlite3_close(st->db);
	free(st);
	return -1;
}

void state_close(struct state *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st);
}

const char *state_error(struct state *st)
{
	return st ? sqlite3_errmsg(st->db) : "no state db";
}

static int exec(struct state *st, const char *sql)
{
	return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0
									: -1;
}

int state_begin(struct state *st)
{
	return exec(st, "BEGIN IMMEDIATE");
}

int state_commit(struct state *st)
{
	return exec(st, "COMMIT");
}

void state_rollback(struct state *st)
{
	exec(st, "ROLLBACK");
}

/* Prepare sql and bind the arguments described by types: s text, i int64. */
static sqlite3_stmt *prep(struct state *st, const char *sql, const char *types,
			  ...)
{
	sqlite3_stmt *s = NULL;
	va_list ap;
	int i;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return NULL;
	va_start(ap, types);
	for (i = 0; types[i]; i++) {
		if (types[i] == 's') {
			const char *v = va_arg(ap, const char *);

			if (v)
				sqlite3_bind_text(s, i + 1, v, -1,
						  SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
		}
	}
	va_end(ap);
	return s;
}

/* Run a statement that returns no rows; 0 or -1. Finalizes s. */
static int run(sqlite3_stmt *s)
{
	int rc;

	if (!s)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Run a query: 1 when it has a row, 0 when none, -1. Finalizes s. */
static int exists(sqlite3_stmt *s)
{
	int rc;

	if (!s)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int state_message_first_seen(struct state *st, const char *msgid, int64_t now,
			     int64_t *first_seen)
{
	sqlite3_stmt *s;

	s = prep(st, "SELECT first_seen FROM messages WHERE msgid = ?1", "s",
		 msgid);
	if (!s)
		return -1;
	*first_seen = now;
	if (sqlite3_step(s) == SQLITE_ROW)
		*first_seen = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}

int state_message_seen(struct state *st, const char *msgid, const char *list,
		       int64_t now, int64_t *first_seen)
{
	if (run(prep(st, "INSERT OR IGNORE INTO messages VALUES (?1, ?2, ?3)",
		     "ssi", msgid, list, now)) < 0)
		return -1;
	return state_message_first_seen(st, msgid, now, first_seen);
}

static void copy_col(sqlite3_stmt *s, int col, char *out, size_t outsz)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	snprintf(out, outsz, "%s", v ? (const char *)v : "");
}

int state_series_get(struct state *st, const char *key, struct series_row *row)
{
	sqlite3_stmt *s =
		prep(st,
		     "SELECT status, thread, reply_msgid, generation, list FROM"
		     " series WHERE key = ?1",
		     "s", key);
	int rc;

	memset(row, 0, sizeof(*row));
	if (!s)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		row->exists = true;
		row->status = (enum series_status)sqlite3_column_int(s, 0);
		copy_col(s, 1, row->thread, sizeof(row->thread));
		copy_col(s, 2, row->reply_msgid, sizeof(row->reply_msgid));
		row->generation = sqlite3_column_int(s, 3);
		copy_col(s, 4, row->list, sizeof(row->list));
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int state_series_set(struct state *st, const char *key, const char *list,
		     const char *thread, enum series_status status,
		     const char *patch_ids, const char *reply_msgid,
		     int64_t now)
{
	return run(
		prep(st,
		     "INSERT INTO series (key, list, thread, status,"
		     " patch_ids, reply_msgid, first_seen, updated)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"
		     " ON CONFLICT(key) DO UPDATE SET thread = ?3,"
		     " status = ?4, patch_ids = coalesce(?5, patch_ids),"
		     " reply_msgid = coalesce(?6, reply_msgid), updated = ?7",
		     "sssissi", key, list, thread, (int64_t)status, patch_ids,
		     reply_msgid, now));
}

int state_series_same_patches(struct state *st, const char *key,
			      const char *list, const char *patch_ids,
			      char *out, size_t outsz)
{
	sqlite3_stmt *s =
		prep(st,
		     "SELECT reply_msgid FROM series WHERE"
		     " patch_ids = ?1 AND key != ?2 AND status = ?3"
		     " AND list = ?4 AND reply_msgid IS NOT NULL"
		     " ORDER BY first_seen LIMIT 1",
		     "ssis", patch_ids, key, (int64_t)SERIES_REVIEWED, list);
	int rc;

	if (!s)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		copy_col(s, 0, out, outsz);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int state_threads_with_patch(struct state *st, const char *list,
			     const char *patch_id, const char *not_thread,
			     char ***threads, size_t *n, size_t max)
{
	char want[RV_OID_HEXSZ + 2];
	sqlite3_stmt *s;
	size_t len = strlen(patch_id), i;
	int rc;

	/* A whole id of the comma-separated list, in patch_id()'s case. */
	if (len != RV_OID_HEXSZ ||
	    strspn(patch_id, "0123456789abcdefABCDEF") != len)
		return 0;
	for (i = 0; i < len; i++)
		want[i] = (char)tolower((unsigned char)patch_id[i]);
	want[len] = '\0';
	s = prep(st,
		 "SELECT DISTINCT thread FROM series WHERE list = ?1"
		 " AND thread IS NOT NULL AND thread != ?2"
		 " AND (patch_ids LIKE ?3 || ',%'"
		 " OR patch_ids LIKE '%,' || ?3 || ',%')"
		 " ORDER BY first_seen LIMIT 16",
		 "sss", list, not_thread ? not_thread : "", want);
	if (!s)
		return -1;
	while (*n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);

		for (i = 0; t && i < *n; i++)
			if (!strcmp((*threads)[i], t))
				break;
		if (!t || i < *n)
			continue;
		*threads = xrealloc(*threads, (*n + 1) * sizeof(**threads));
		(*threads)[(*n)++] = xstrdup_or_null(t);
	}
	sqlite3_finalize(s);
	return 0;
}

int state_series_unchanged_noted(struct state *st, const char *list,
				 const char *patch_ids)
{
	sqlite3_stmt *s = prep(st,
			       "SELECT count(*) FROM series WHERE"
			       " patch_ids = ?1 AND list = ?2 AND reply_msgid"
			       " LIKE 'quorum.%.unchanged@%'",
			       "ss", patch_ids, list);
	int n = -1;

	if (!s)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0) > 0;
	sqlite3_finalize(s);
	return n;
}

int state_series_waiting(struct state *st, const char *list,
			 int (*fn)(void *arg, const char *thread), void *arg)
{
	sqlite3_stmt *s = prep(st,
			       "SELECT DISTINCT thread FROM series WHERE"
			       " list = ?1 AND status = ?2",
			       "si", list, (int64_t)SERIES_WAITING);
	int rc, ret = 0;

	if (!s)
		return -1;
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);

		if (t)
			ret = fn(arg, (const char *)t);
	}
	sqlite3_finalize(s);
	return ret;
}

int state_reply_add(struct state *st, const char *msgid, const char *key,
		    const char *list, const char *author, const char *method,
		    const char *raw, size_t len, int64_t now)
{
	sqlite3_stmt *s = prep(st,
			       "INSERT OR IGNORE INTO replies (msgid,"
			       " series_key, list, method, state, created,"
			       " author, raw)"
			       " VALUES (?1, ?2, ?3, ?4, 0, ?5, lower(?6), ?7)",
			       "ssssis", msgid, key, list, method, now, author);

	if (!s)
		return -1;
	sqlite3_bind_blob(s, 7, raw, (int)len, SQLITE_TRANSIENT);
	return run(s);
}

long state_replies_since(struct state *st, const char *list, const char *author,
			 int64_t since)
{
	sqlite3_stmt *s = prep(st,
			       "SELECT count(*) FROM replies WHERE list = ?1"
			       " AND created >= ?2 AND (?3 IS NULL OR"
			       " author = lower(?3))",
			       "sis", list, since, author);
	long n = -1;

	if (!s)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

int state_reply_sent(struct state *st, const char *msgid, int64_t now)
{
	return run(prep(st,
			"UPDATE replies SET state = ?2, sent = ?3,"
			" attempts = attempts + 1 WHERE msgid = ?1",
			"sii", msgid, (int64_t)REPLY_SENT, now));
}

int state_reply_failed(struct state *st, const char *msgid, const char *reason,
		       int64_t next_try, bool held)
{
	return run(prep(st,
			"UPDATE replies SET attempts = attempts + 1,"
			" last_error = ?2, next_try = ?3, state = ?4"
			" WHERE msgid = ?1",
			"ssii", msgid, reason, next_try,
			(int64_t)(held ? REPLY_HELD : REPLY_INTENDED)));
}

int state_replies_pending(struct state *st, int64_t now,
			  int (*fn)(void *arg, const struct reply_row *r),
			  void *arg)
{
	sqlite3_stmt *s = prep(st,
			       "SELECT msgid, list, method, raw, attempts"
			       " FROM replies WHERE state = 0 AND"
			       " next_try <= ?1 ORDER BY created",
			       "i", now);
	int rc, ret = 0;

	if (!s)
		return -1;
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct reply_row r;

		r.msgid = xstrdup_or_null(
			(const char *)sqlite3_column_text(s, 0));
		r.list = xstrdup_or_null(
			(const char *)sqlite3_column_text(s, 1));
		r.method = xstrdup_or_null(
			(const char *)sqlite3_column_text(s, 2));
		r.len = (size_t)sqlite3_column_bytes(s, 3);
		r.raw = xmalloc(r.len + 1);
		if (r.len)
			memcpy(r.raw, sqlite3_column_blob(s, 3), r.len);
		r.raw[r.len] = '\0';
		r.attempts = sqlite3_column_int(s, 4);
		ret = fn(arg, &r);
		free(r.msgid);
		free(r.list);
		free(r.method);
		free(r.raw);
	}
	sqlite3_finalize(s);
	return ret;
}

long state_count_replies(struct state *st, int state)
{
	sqlite3_stmt *s = state < 0
				  ? prep(st, "SELECT count(*) FROM replies", "")
				  : prep(st,
					 "SELECT count(*) FROM replies"
					 " WHERE state = ?1",
					 "i", (int64_t)state);
	long n = -1;

	if (!s)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

int state_fingerprint_add(struct state *st, const char *fp, const char *list,
			  const char *key, const char *reply_msgid, int version,
			  const char *title, int64_t now, int64_t since)
{
	/*
	 * A finding is mailed in full again when the earlier mailing no
	 * longer counts (expired, or its reply held): the new one replaces
	 * it, else the expired row would be pruned with the new mailing
	 * unrecorded. A rerun of the same series keeps the first.
	 */
	return run(
		prep(st,
		     "INSERT INTO fingerprints (fp, list,"
		     " series_key, reply_msgid, version, title, at)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
		     " ON CONFLICT(fp) DO UPDATE SET list = excluded.list,"
		     " series_key = excluded.series_key,"
		     " reply_msgid = excluded.reply_msgid,"
		     " version = excluded.version, title = excluded.title,"
		     " at = excluded.at WHERE fingerprints.at < ?8 OR"
		     " fingerprints.reply_msgid IN (SELECT msgid FROM replies"
		     " WHERE state = ?9)",
		     "ssssisiii", fp, list, key, reply_msgid, (int64_t)version,
		     title, now, since, (int64_t)REPLY_HELD));
}

int state_fingerprint_get(struct state *st, const char *fp, const char *key,
			  int64_t since, struct fingerprint_row *row)
{
	/* A reply given up on (held) was never read: it does not count. */
	sqlite3_stmt *s = prep(st,
			       "SELECT f.reply_msgid, f.version, f.title FROM"
			       " fingerprints f JOIN replies r ON r.msgid ="
			       " f.reply_msgid WHERE f.fp = ?1 AND"
			       " f.series_key != ?2 AND r.state != ?3 AND"
			       " f.at >= ?4",
			       "ssii", fp, key, (int64_t)REPLY_HELD, since);
	int rc;

	memset(row, 0, sizeof(*row));
	if (!s)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		copy_col(s, 0, row->reply_msgid, sizeof(row->reply_msgid));
		row->version = sqlite3_column_int(s, 1);
		copy_col(s, 2, row->title, sizeof(row->title));
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int state_fingerprints_prune(struct state *st, const char *list, int64_t before,
			     long max)
{
	if (run(prep(st, "DELETE FROM fingerprints WHERE list = ?1 AND at < ?2",
		     "si", list, before)) < 0)
		return -1;
	return run(prep(st,
			"DELETE FROM fingerprints WHERE rowid IN (SELECT rowid"
			" FROM fingerprints WHERE list = ?1 ORDER BY at DESC,"
			" rowid DESC LIMIT -1 OFFSET ?2)",
			"si", list, (int64_t)max));
}

int state_series_rerun(struct state *st, const char *key, int64_t now)
{
	return run(prep(st,
			"UPDATE series SET status = ?2, generation ="
			" generation + 1, updated = ?3 WHERE key = ?1",
			"sii", key, (int64_t)SERIES_NEW, now));
}

int state_list_signed(struct state *st, const char *list)
{
	return exists(prep(st, "SELECT 1 FROM lists_signed WHERE list = ?1",
			   "s", list));
}

int state_list_signed_add(struct state *st, const char *list, int64_t now)
{
	return run(prep(st,
			"INSERT OR IGNORE INTO lists_signed VALUES (?1, ?2)",
			"si", list, now));
}

int state_command_once(struct state *st, const char *msgid, int64_t now)
{
	if (run(prep(st, "INSERT OR IGNORE INTO commands VALUES (?1, ?2)", "si",
		     msgid, now)) < 0)
		return -1;
	return sqlite3_changes(st->db) > 0;
}

int state_command_done(struct state *st, const char *msgid)
{
	return exists(prep(st, "SELECT 1 FROM commands WHERE msgid = ?1", "s",
			   msgid));
}

int state_mute_add(struct state *st, const char *list, const char *address,
		   int64_t now)
{
	return run(prep(st,
			"INSERT OR IGNORE INTO mutes"
			" VALUES (?1, lower(?2), ?3)",
			"ssi", list, address, now));
}

int state_mute_remove(struct state *st, const char *list, const char *address)
{
	if (run(prep(
		    st,
		    "DELETE FROM mutes WHERE list = ?1 AND address = lower(?2)",
		    "ss", list, address)) < 0)
		return -1;
	return sqlite3_changes(st->db) > 0 ? 1 : 0;
}

int state_is_muted(struct state *st, const char *list, const char *address)
{
	return exists(prep(st,
			   "SELECT 1 FROM mutes WHERE list = ?1 AND"
			   " address = lower(?2)",
			   "ss", list, address));
}

int state_digest_add(struct state *st, const char *key, const char *list,
		     const char *line, int64_t now)
{
	return run(prep(st,
			"INSERT OR IGNORE INTO digest_items (series_key, list,"
			" line, at) VALUES (?1, ?2, ?3, ?4)",
			"sssi", key, list, line, now));
}

int state_digest_due(struct state *st, const char *list, int64_t now,
		     int64_t period, struct sb *lines, size_t *n)
{
	sqlite3_stmt *s = prep(st,
			       "SELECT coalesce((SELECT max(at) FROM digests"
			       " WHERE list = ?1), (SELECT min(at) FROM"
			       " digest_items WHERE list = ?1 AND digest IS"
			       " NULL))",
			       "s", list);
	int64_t since = 0;
	int rc;

	*n = 0;
	if (!s)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		since = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return -1;
	if (!since || now - since < period)
		return 0;
	s = prep(st,
		 "SELECT line FROM digest_items WHERE list = ?1 AND digest IS"
		 " NULL ORDER BY at, series_key",
		 "s", list);
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *l = sqlite3_column_text(s, 0);

		sb_adds(lines, l ? (const char *)l : "");
		sb_addch(lines, '\n');
		(*n)++;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? (*n > 0) : -1;
}

int state_digest_mark(struct state *st, const char *list, const char *msgid,
		      int64_t now)
{
	if (run(prep(st,
		     "UPDATE digest_items SET digest = ?2 WHERE list = ?1 AND"
		     " digest IS NULL",
		     "ss", list, msgid)) < 0)
		return -1;
	return run(prep(st, "INSERT OR IGNORE INTO digests VALUES (?1, ?2, ?3)",
			"ssi", msgid, list, now));
}
