// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cost.c - the ledger, reservations against hard caps, and the answer
 * cache, in our own tables of the state db. See cost.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <git2.h>
#include <sqlite3.h>

#include "cost.h"

struct rv_ledger {
	sqlite3 *db;
	char run[48]; /* scope of per_run: this handle */
	char *path;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS cost_meta ("
	"  key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE IF NOT EXISTS cost_ledger ("
	"  id INTEGER PRIMARY KEY, t INTEGER NOT NULL, voter TEXT,"
	"  model TEXT, list TEXT, series TEXT, review TEXT, run TEXT,"
	"  tokens_in INTEGER, tokens_out INTEGER, cost REAL NOT NULL,"
	"  settled INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS cost_ledger_t ON cost_ledger(t);"
	"CREATE TABLE IF NOT EXISTS cost_reservations ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, t INTEGER NOT NULL,"
	"  expires INTEGER NOT NULL, amount REAL NOT NULL, voter TEXT,"
	"  model TEXT, list TEXT, series TEXT, review TEXT, run TEXT);"
	"CREATE TABLE IF NOT EXISTS cost_cache ("
	"  key TEXT PRIMARY KEY, answer TEXT NOT NULL, t INTEGER);";

/*
 * Columns added since schema 1, each nullable: an older quorum writes
 * its rows without them and still reads the tables.
 */
static const char *const added_columns[][2] = {
	{"cost_ledger", "est_in"},
	{"cost_ledger", "est_out"},
	{"cost_reservations", "est_in"},
	{"cost_reservations", "est_out"},
};

static bool has_column(sqlite3 *db, const char *table, const char *column)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	bool found = false;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 1);

		found = name && !strcmp((const char *)name, column);
	}
	sqlite3_finalize(st);
	return found;
}

/* Inside the schema's transaction: add what an older db lacks. */
static int add_columns(sqlite3 *db)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(added_columns); i++) {
		char sql[160];

		if (has_column(db, added_columns[i][0], added_columns[i][1]))
			continue;
		/* Names are ours, never outside input. */
		snprintf(sql, sizeof(sql),
			 "ALTER TABLE %s ADD COLUMN %s INTEGER",
			 added_columns[i][0], added_columns[i][1]);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return SQLITE_ERROR;
	}
	return SQLITE_OK;
}

/* Ledger ids follow reservation ids; start them past any ledger row. */
static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

static int db_error(struct rv_ledger *l, struct errmsg *err, const char *what)
{
	int code = sqlite3_errcode(l->db);

	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return errmsg_set(err, RV_ERR_INTERNAL,
				  "state db %s is damaged (%s); move it aside "
				  "(quorum starts a new one, losing the cost "
				  "ledger and watch state)",
				  l->path, sqlite3_errmsg(l->db));
	return errmsg_set(err, RV_ERR_INTERNAL, "state db %s: cannot %s: %s",
			  l->path, what, sqlite3_errmsg(l->db));
}

static int check_schema(struct rv_ledger *l, struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0, rc;

	rc = sqlite3_prepare_v2(
		l->db, "SELECT value FROM cost_meta WHERE key = 'schema'", -1,
		&st, NULL);
	if (rc != SQLITE_OK)
		return db_error(l, err, "read its schema version");
	if (sqlite3_step(st) == SQLITE_ROW) {
		int v = sqlite3_column_int(st, 0);

		if (v > RV_COST_SCHEMA)
			ret = errmsg_set(err, RV_ERR_INTERNAL,
					 "state db %s holds cost tables of a "
					 "newer quorum (schema %d > %d); "
					 "upgrade quorum",
					 l->path, v, RV_COST_SCHEMA);
		sqlite3_finalize(st);
		return ret;
	}
	sqlite3_finalize(st);
	rc = sqlite3_prepare_v2(l->db,
				"INSERT OR IGNORE INTO cost_meta VALUES "
				"('schema', ?)",
				-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int(st, 1, RV_COST_SCHEMA);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : db_error(l, err, "write its schema");
}

/*
 * WAL and our tables. Processes opening a new db at once can get BUSY
 * without the busy handler (SQLite's deadlock escape): try again.
 */
static int setup_db(struct rv_ledger *l)
{
	int i, rc = SQLITE_OK;

	for (i = 0; i < 300; i++) {
		rc = sqlite3_exec(l->db,
				  "PRAGMA journal_mode=WAL;"
				  "PRAGMA synchronous=FULL;",
				  NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			rc = sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL,
					  NULL);
			if (rc == SQLITE_OK) {
				rc = sqlite3_exec(l->db, schema, NULL, NULL,
						  NULL);
				if (rc == SQLITE_OK)
					rc = add_columns(l->db);
				if (rc == SQLITE_OK)
					rc = sqlite3_exec(l->db, "COMMIT", NULL,
							  NULL, NULL);
				if (rc != SQLITE_OK)
					sqlite3_exec(l->db, "ROLLBACK", NULL,
						     NULL, NULL);
			}
		}
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		usleep(20000);
	}
	return rc == SQLITE_OK ? 0 : -1;
}

int rv_ledger_open(struct rv_ledger **out, const char *path, struct errmsg *err)
{
	struct rv_ledger *l = xcalloc(1, sizeof(*l));
	static unsigned seq;

	*out = NULL;
	l->path = xstrdup_or_null(path);
	snprintf(l->run, sizeof(l->run), "%ld-%lld-%u", (long)getpid(),
		 (long long)now_s(), seq++);
	if (mkdir_parents(path, false) < 0) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "cannot create the directory of %s: %s", path,
			   strerror(errno));
		goto fail;
	}
	if (sqlite3_open(path, &l->db) != SQLITE_OK) {
		db_error(l, err, "open it");
		goto fail;
	}
	sqlite3_busy_timeout(l->db, 30000);
	if (setup_db(l) < 0) {
		db_error(l, err, "create the cost tables");
		goto fail;
	}
	if (check_schema(l, err) < 0)
		goto fail;
	*out = l;
	return 0;
fail:
	rv_ledger_free(l);
	return RV_ERR_INTERNAL;
}

void rv_ledger_free(struct rv_ledger *l)
{
	if (!l)
		return;
	sqlite3_close(l->db);
	free(l->path);
	free(l);
}

static int exec(struct rv_ledger *l, const char *sql)
{
	return sqlite3_exec(l->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Start of the UTC day and month holding t. */
static int64_t day_start(int64_t t)
{
	return t - t % 86400;
}

static int64_t month_start(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	return (int64_t)timegm(&tm);
}

/* Reservations past their expiry become ledger rows at full amount. */
static int fold_expired(struct rv_ledger *l, int64_t now)
{
	static const char *const sql[] = {
		"INSERT OR REPLACE INTO cost_ledger (id, t, voter, model, "
		"list, series, review, run, tokens_in, tokens_out, cost, "
		"settled, est_in, est_out) SELECT id, t, voter, model, list, "
		"series, review, run, 0, 0, amount, 0, est_in, est_out "
		"FROM cost_reservations WHERE expires < ?",
		"DELETE FROM cost_reservations WHERE expires < ?",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sql); i++) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (sqlite3_prepare_v2(l->db, sql[i], -1, &st, NULL) !=
		    SQLITE_OK)
			return -1;
		sqlite3_bind_int64(st, 1, now);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* Spent plus reserved in one scope: column = value and t >= since. */
static int scope_sum(struct rv_ledger *l, const char *column, const char *value,
		     int64_t since, double *sum)
{
	char sql[512];
	sqlite3_stmt *st = NULL;
	int rc;

	/* column is one of ours, never outside input. */
	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT COALESCE(SUM(cost), 0) FROM cost_ledger "
		 "WHERE t >= ?1 AND (?2 IS NULL OR %s = ?2)) + "
		 "(SELECT COALESCE(SUM(amount), 0) FROM cost_reservations "
		 "WHERE t >= ?1 AND (?2 IS NULL OR %s = ?2))",
		 column, column);
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, since);
	bind_text(st, 2, value);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*sum = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

struct cap {
	const char *column;
	const char *value;
	int64_t since;
	double limit;
	char name[160];
};

static size_t caps_list(struct rv_ledger *l, const struct rv_caps *c,
			int64_t now, struct cap *out)
{
	size_t n = 0;

	if (c->per_review > 0 && c->review) {
		out[n] =
			(struct cap){"review", c->review, 0, c->per_review, ""};
		snprintf(out[n++].name, sizeof(out[0].name),
			 "the budget per review");
	}
	if (c->per_day > 0 && c->list) {
		out[n] = (struct cap){"list", c->list, day_start(now),
				      c->per_day, ""};
		snprintf(out[n++].name, sizeof(out[0].name),
			 "the daily budget of list %.100s", c->list);
	}
	if (c->per_run > 0) {
		out[n] = (struct cap){"run", l->run, 0, c->per_run, ""};
		snprintf(out[n++].name, sizeof(out[0].name),
			 "the budget of this run");
	}
	if (c->monthly > 0) {
		out[n] = (struct cap){"run", NULL, month_start(now), c->monthly,
				      ""};
		snprintf(out[n++].name, sizeof(out[0].name),
			 "the monthly budget");
	}
	return n;
}

/* Least left under caps; *at is the index of that cap or -1. */
static int tightest(struct rv_ledger *l, const struct rv_caps *caps,
		    int64_t now, struct cap *cs, size_t *ncs, double *left,
		    double *used, int *at)
{
	size_t i;

	*ncs = caps_list(l, caps, now, cs);
	*left = 1e18;
	*used = 0;
	*at = -1;
	for (i = 0; i < *ncs; i++) {
		double sum = 0;

		if (scope_sum(l, cs[i].column, cs[i].value, cs[i].since, &sum) <
		    0)
			return -1;
		if (cs[i].limit - sum < *left) {
			*left = cs[i].limit - sum;
			*used = sum;
			*at = (int)i;
		}
	}
	return 0;
}

/* Fold expired reservations in a transaction of their own. */
static int fold_now(struct rv_ledger *l)
{
	if (exec(l, "BEGIN IMMEDIATE") < 0)
		return -1;
	if (fold_expired(l, now_s()) < 0 || exec(l, "COMMIT") < 0) {
		exec(l, "ROLLBACK");
		return -1;
	}
	return 0;
}

int rv_ledger_left(struct rv_ledger *l, const struct rv_caps *caps,
		   double *left, char *which, size_t whichsz,
		   struct errmsg *err)
{
	struct cap cs[4];
	size_t ncs;
	double used;
	int at;

	if (which && whichsz)
		which[0] = '\0';
	if (fold_now(l) < 0 ||
	    tightest(l, caps, now_s(), cs, &ncs, left, &used, &at) < 0)
		return db_error(l, err, "read the ledger");
	if (at >= 0 && which)
		snprintf(which, whichsz, "%s", cs[at].name);
	return 0;
}

int rv_ledger_reserve(struct rv_ledger *l, const struct rv_caps *caps,
		      const struct rv_charge *c, double amount, double ttl,
		      int64_t *id, char *why, size_t whysz, struct errmsg *err)
{
	struct cap cs[4];
	sqlite3_stmt *st = NULL;
	int64_t now = now_s();
	size_t ncs, i;
	int ret = RV_ERR_INTERNAL;

	*id = 0;
	if (why && whysz)
		why[0] = '\0';
	/* Take the write lock first: the check and the insert are one. */
	if (exec(l, "BEGIN IMMEDIATE") < 0)
		return db_error(l, err, "lock the ledger");
	if (fold_expired(l, now) < 0)
		goto fail;
	ncs = caps_list(l, caps, now, cs);
	for (i = 0; i < ncs; i++) {
		double sum = 0;

		if (scope_sum(l, cs[i].column, cs[i].value, cs[i].since, &sum) <
		    0)
			goto fail;
		if (sum + amount > cs[i].limit + 1e-12) {
			if (why)
				snprintf(why, whysz,
					 "%s ($%.4f, $%.4f spent or reserved, "
					 "this request may cost $%.4f)",
					 cs[i].name, cs[i].limit, sum, amount);
			exec(l, "ROLLBACK");
			return 0;
		}
	}
	if (sqlite3_prepare_v2(l->db,
			       "INSERT INTO cost_reservations (t, expires, "
			       "amount, voter, model, list, series, review, "
			       "run, est_in, est_out) VALUES (?, ?, ?, ?, ?, "
			       "?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 2, now + (int64_t)(ttl + 1));
	sqlite3_bind_double(st, 3, amount);
	bind_text(st, 4, c->voter);
	bind_text(st, 5, c->model);
	bind_text(st, 6, c->list);
	bind_text(st, 7, c->series);
	bind_text(st, 8, caps->review);
	bind_text(st, 9, l->run);
	sqlite3_bind_int64(st, 10, c->est_in);
	sqlite3_bind_int64(st, 11, c->est_out);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	*id = sqlite3_last_insert_rowid(l->db);
	if (exec(l, "COMMIT") < 0)
		goto fail;
	return 1;
fail:
	ret = db_error(l, err, "reserve in the ledger");
	sqlite3_finalize(st);
	exec(l, "ROLLBACK");
	*id = 0;
	return ret;
}

int rv_ledger_settle(struct rv_ledger *l, int64_t id, const struct rv_charge *c,
		     struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if (exec(l, "BEGIN IMMEDIATE") < 0)
		return db_error(l, err, "lock the ledger");
	/*
	 * The row keeps the reservation's id, time and scopes; REPLACE
	 * also covers a reservation already folded in at its full amount.
	 */
	if (sqlite3_prepare_v2(
		    l->db,
		    "INSERT OR REPLACE INTO cost_ledger (id, t, voter, model, "
		    "list, series, review, run, tokens_in, tokens_out, cost, "
		    "settled, est_in, est_out) SELECT ?1, COALESCE((SELECT t "
		    "FROM cost_reservations WHERE id = ?1), (SELECT t FROM "
		    "cost_ledger WHERE id = ?1), ?2), ?3, ?4, ?5, ?6, "
		    "COALESCE((SELECT review FROM cost_reservations WHERE id = "
		    "?1), (SELECT review FROM cost_ledger WHERE id = ?1)), ?7, "
		    "?8, ?9, ?10, ?11, ?12, ?13",
		    -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now_s());
	bind_text(st, 3, c->voter);
	bind_text(st, 4, c->model);
	bind_text(st, 5, c->list);
	bind_text(st, 6, c->series);
	bind_text(st, 7, l->run);
	sqlite3_bind_int64(st, 8, c->tokens_in);
	sqlite3_bind_int64(st, 9, c->tokens_out);
	sqlite3_bind_double(st, 10, c->cost);
	sqlite3_bind_int(st, 11, c->assumed ? 0 : 1);
	sqlite3_bind_int64(st, 12, c->est_in);
	sqlite3_bind_int64(st, 13, c->est_out);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(l->db,
			       "DELETE FROM cost_reservations WHERE id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	if (exec(l, "COMMIT") < 0) {
		st = NULL;
		goto fail;
	}
	return 0;
fail:
	ret = db_error(l, err, "settle in the ledger");
	sqlite3_finalize(st);
	exec(l, "ROLLBACK");
	return ret;
}

int rv_ledger_release(struct rv_ledger *l, int64_t id, struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(l->db,
			       "DELETE FROM cost_reservations WHERE id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return db_error(l, err, "release a reservation");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0
				 : db_error(l, err, "release a reservation");
}

int rv_ledger_totals(struct rv_ledger *l, int64_t since, enum rv_cost_by by,
		     struct rv_cost_row **rows, size_t *n, struct errmsg *err)
{
	static const char *const keys[] = {
		[RV_COST_BY_NONE] = "''",
		[RV_COST_BY_LIST] = "COALESCE(list, '')",
		[RV_COST_BY_VOTER] = "COALESCE(voter, '')",
		[RV_COST_BY_DAY] = "date(t, 'unixepoch')",
	};
	char sql[1024];
	sqlite3_stmt *st = NULL;
	size_t alloc = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if ((unsigned)by >= ARRAY_SIZE(keys))
		by = RV_COST_BY_NONE;
	if (fold_now(l) < 0)
		return db_error(l, err, "read the ledger");
	snprintf(sql, sizeof(sql),
		 "SELECT k, SUM(r), SUM(ti), SUM(tt), SUM(c), SUM(a), SUM(u)"
		 " FROM ("
		 " SELECT %s AS k, 1 AS r, tokens_in AS ti, tokens_out AS tt,"
		 "  cost AS c, 0 AS a, CASE WHEN settled THEN 0 ELSE cost END"
		 "  AS u FROM cost_ledger WHERE t >= ?1"
		 " UNION ALL"
		 " SELECT %s, 0, 0, 0, 0, amount, 0 FROM cost_reservations"
		 "  WHERE t >= ?1)"
		 " GROUP BY k ORDER BY k",
		 keys[by], keys[by]);
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(l, err, "read the ledger");
	sqlite3_bind_int64(st, 1, since);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rv_cost_row *r;
		const unsigned char *k = sqlite3_column_text(st, 0);

		ALLOC_GROW(*rows, *n + 1, alloc);
		r = &(*rows)[(*n)++];
		r->key = xstrdup_or_null(k ? (const char *)k : "");
		r->requests = (long)sqlite3_column_int64(st, 1);
		r->tokens_in = (long)sqlite3_column_int64(st, 2);
		r->tokens_out = (long)sqlite3_column_int64(st, 3);
		r->cost = sqlite3_column_double(st, 4);
		r->reserved = sqlite3_column_double(st, 5);
		r->unsettled = sqlite3_column_double(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rv_cost_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return db_error(l, err, "read the ledger");
	}
	return 0;
}

void rv_cost_rows_free(struct rv_cost_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
}

int rv_cache_get(struct rv_ledger *l, const char *key, struct sb *answer)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(l->db,
			       "SELECT answer FROM cost_cache WHERE key = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return RV_ERR_INTERNAL;
	bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const void *a = sqlite3_column_text(st, 0);
		int len = sqlite3_column_bytes(st, 0);

		ret = a && sb_add(answer, a, (size_t)len) == 0 ? 1 : 0;
	} else if (rc != SQLITE_DONE) {
		ret = RV_ERR_INTERNAL;
	}
	sqlite3_finalize(st);
	return ret;
}

int rv_cache_put(struct rv_ledger *l, const char *key, const char *answer,
		 size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(l->db,
			       "INSERT OR REPLACE INTO cost_cache VALUES "
			       "(?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return RV_ERR_INTERNAL;
	bind_text(st, 1, key);
	sqlite3_bind_text(st, 2, answer, (int)len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now_s());
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : RV_ERR_INTERNAL;
}

int rv_cache_key(const struct rv_llm_voter *v, const char *diff, size_t difflen,
		 const char *system, char out[41])
{
	char pid[RV_OID_HEXSZ + 1];
	struct sb buf = SB_INIT;
	git_oid oid;
	int ret = 0;

	out[0] = '\0';
	if (!diff || rv_patch_id(diff, difflen, pid) < 0)
		return RV_ERR_INPUT;
	sb_addf(&buf,
		"quorum-cache 1\npatch-id %s\nprovider %d\nurl %s\n"
		"model %s\nmax-tokens %d\ncontext %d\nprompt\n%s",
		pid, (int)v->provider, v->url ? v->url : "",
		v->model ? v->model : "", v->max_tokens, v->context_tokens,
		system ? system : "");
	if (git_odb_hash(&oid, sb_str(&buf), buf.len, GIT_OBJECT_BLOB) < 0)
		ret = RV_ERR_INTERNAL;
	else
		git_oid_tostr(out, 41, &oid);
	sb_release(&buf);
	return ret;
}

static long usage_num(const cJSON *o, const char *name)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e12)
		return 0;
	return (long)n->valuedouble;
}

static double cached_price(const struct rv_llm_voter *v)
{
	return v->price_cached > 0 ? v->price_cached : v->price_in;
}

bool rv_cost_of_answer(const struct rv_llm_voter *v, const char *body,
		       size_t len, long *tin, long *tout, long *tcached,
		       double *cost)
{
	cJSON *root = body ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *u;
	long write = 0;

	*tin = *tout = *tcached = 0;
	*cost = 0;
	u = root ? cJSON_GetObjectItemCaseSensitive(root, "usage") : NULL;
	if (!cJSON_IsObject(u)) {
		cJSON_Delete(root);
		return false;
	}
	if (v->provider == RV_PROVIDER_ANTHROPIC) {
		*tcached = usage_num(u, "cache_read_input_tokens");
		write = usage_num(u, "cache_creation_input_tokens");
		*tin = usage_num(u, "input_tokens") + *tcached + write;
		*tout = usage_num(u, "output_tokens");
	} else {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(
			u, "prompt_tokens_details");

		*tin = usage_num(u, "prompt_tokens");
		*tout = usage_num(u, "completion_tokens");
		if (cJSON_IsObject(d))
			*tcached = usage_num(d, "cached_tokens");
		if (*tcached > *tin)
			*tcached = *tin;
	}
	cJSON_Delete(root);
	*cost = (double)(*tin - *tcached - write) * v->price_in / 1e6 +
		(double)write * v->price_in * 1.25 / 1e6 +
		(double)*tcached * cached_price(v) / 1e6 +
		(double)*tout * v->price_out / 1e6;
	return *tin || *tout;
}

double rv_cost_bound(const struct rv_llm_voter *v, long in, long out)
{
	double pin =
		cached_price(v) > v->price_in ? cached_price(v) : v->price_in;

	/* We never ask for cache writes (no cache_control): no 1.25x. */
	return (double)in * pin / 1e6 + (double)out * v->price_out / 1e6;
}

double rv_cost_worst(const struct rv_llm_voter *v, size_t body_bytes)
{
	int max_out = v->max_tokens > 0 ? v->max_tokens : 2048;

	/* No tokenizer makes more tokens than bytes: a true upper bound. */
	return rv_cost_bound(v, (long)body_bytes, max_out);
}

int rv_ledger_answer_tokens(struct rv_ledger *l, const char *voter,
			    long *longest, long *n, struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*longest = *n = 0;
	if (sqlite3_prepare_v2(l->db,
			       "SELECT COALESCE(MAX(tokens_out), 0), COUNT(*) "
			       "FROM (SELECT tokens_out FROM cost_ledger "
			       "WHERE voter = ? AND settled AND tokens_out > 0 "
			       "ORDER BY id DESC LIMIT 50)",
			       -1, &st, NULL) != SQLITE_OK)
		return db_error(l, err, "read the ledger");
	bind_text(st, 1, voter);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*longest = (long)sqlite3_column_int64(st, 0);
		*n = (long)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_error(l, err, "read the ledger");
}

int rv_ledger_slack(struct rv_ledger *l, int64_t since,
		    struct rv_slack_row **rows, size_t *n, struct errmsg *err)
{
	sqlite3_stmt *st = NULL;
	size_t alloc = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(
		    l->db,
		    "SELECT COALESCE(voter, ''), COUNT(*), SUM(est_in), "
		    "SUM(tokens_in), SUM(est_out), SUM(tokens_out) FROM "
		    "cost_ledger WHERE t >= ? AND settled AND est_in > 0 "
		    "GROUP BY 1 ORDER BY 1",
		    -1, &st, NULL) != SQLITE_OK)
		return db_error(l, err, "read the ledger");
	sqlite3_bind_int64(st, 1, since);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rv_slack_row *r;
		const unsigned char *k = sqlite3_column_text(st, 0);

		ALLOC_GROW(*rows, *n + 1, alloc);
		r = &(*rows)[(*n)++];
		r->voter = xstrdup_or_null(k ? (const char *)k : "");
		r->requests = (long)sqlite3_column_int64(st, 1);
		r->est_in = (long)sqlite3_column_int64(st, 2);
		r->tokens_in = (long)sqlite3_column_int64(st, 3);
		r->est_out = (long)sqlite3_column_int64(st, 4);
		r->tokens_out = (long)sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rv_slack_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return db_error(l, err, "read the ledger");
	}
	return 0;
}

void rv_slack_rows_free(struct rv_slack_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i].voter);
	free(rows);
}
