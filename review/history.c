// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history.c - the history index as a reader sees it: the db, its schema,
 * the tokens and lines we match on, and opening an index.
 */
#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history-int.h"

/* ---- small text helpers --------------------------------------------- */

uint64_t hist_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	while (n--) {
		h ^= *s++;
		h *= 1099511628211ULL;
	}
	return h;
}

void hist_sanitize(char *s)
{
	for (; s && *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n') ||
		    *s == 0x7f)
			*s = '?';
}

/* Words too common in C to say anything about which code this is. */
static const char *const stopwords[] = {
	"auto",	   "break",    "case",	   "char",     "const",	   "continue",
	"default", "do",       "double",   "else",     "enum",	   "extern",
	"float",   "for",      "goto",	   "if",       "inline",   "int",
	"long",	   "register", "return",   "short",    "signed",   "sizeof",
	"static",  "struct",   "switch",   "typedef",  "union",	   "unsigned",
	"void",	   "volatile", "while",	   "NULL",     "bool",	   "true",
	"false",   "the",      "and",	   "err",      "ret",	   "len",
	"size_t",  "uint8_t",  "uint16_t", "uint32_t", "uint64_t", "__u8",
	"__u16",   "__u32",    "__u64",	   "int32_t",  "int64_t",  "fprintf",
	"stderr",  "stdout",   "printf",   "argc",     "argv",	   "include",
	"define",  "endif",    "ifdef",	   "ifndef",
};

static bool is_stopword(const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stopwords); i++)
		if (strlen(stopwords[i]) == n && !memcmp(stopwords[i], w, n))
			return true;
	return false;
}

static bool ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool ident_char(int c)
{
	return isalnum(c) || c == '_';
}

void hist_tokens(const char *text, struct sb *out, size_t max_tokens)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t ntok = 0;

	while (*p && ntok < max_tokens) {
		const unsigned char *w;
		size_t n;

		if (!ident_start(*p)) {
			/* Skip numbers whole so "0x1f" gives no "x1f". */
			if (isdigit(*p))
				while (ident_char(*p))
					p++;
			else
				p++;
			continue;
		}
		w = p;
		while (ident_char(*p))
			p++;
		n = (size_t)(p - w);
		if (n < 3 || n > 64 || is_stopword((const char *)w, n))
			continue;
		if (out->len)
			sb_addch(out, ' ');
		sb_add(out, w, n);
		ntok++;
	}
}

void hist_normalize(const char *line, size_t len, struct sb *out)
{
	size_t i;
	bool space = false;

	sb_reset(out);
	for (i = 0; i < len && line[i]; i++) {
		unsigned char c = (unsigned char)line[i];

		if (isspace(c)) {
			space = out->len > 0;
			continue;
		}
		if (space)
			sb_addch(out, ' ');
		space = false;
		/* A line ends up on a terminal: no escape sequences. */
		sb_addch(out, c < 0x20 || c == 0x7f ? '?' : c);
		if (out->len >= HIST_MAX_LINE)
			break;
	}
}

bool hist_line_significant(const char *norm)
{
	const unsigned char *p = (const unsigned char *)norm;
	size_t idents = 0, n = strlen(norm);

	if (n < 10)
		return false;
	/* Comments and preprocessor lines say little about behaviour. */
	if (p[0] == '/' || p[0] == '*' || p[0] == '#')
		return false;
	/* Two names that are not keywords: "if (newline)" is not enough. */
	while (*p) {
		if (ident_start(*p)) {
			const unsigned char *w = p;

			while (ident_char(*p))
				p++;
			if (p - w >= 2 &&
			    !is_stopword((const char *)w, (size_t)(p - w)))
				idents++;
		} else {
			p++;
		}
	}
	return idents >= 2;
}

char *hist_function_name(const char *section)
{
	const char *paren, *e, *b;

	if (!section)
		return NULL;
	paren = strchr(section, '(');
	if (!paren)
		return NULL;
	e = paren;
	while (e > section && isspace((unsigned char)e[-1]))
		e--;
	b = e;
	while (b > section && ident_char((unsigned char)b[-1]))
		b--;
	if (b == e || !ident_start((unsigned char)*b) || e - b > 128)
		return NULL;
	/* "if (", "while (" and friends are statements, not functions. */
	if (is_stopword(b, (size_t)(e - b)))
		return NULL;
	return xstrndup(b, (size_t)(e - b));
}

bool hist_starts_function(const char *s, size_t len)
{
	const char *paren;
	size_t i;

	/*
	 * Python's "def name(args):", a method's indented too, ends in ':'
	 * as a C label does.
	 */
	for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	if (len - i > 4 && !strncmp(s + i, "def ", 4) &&
	    memchr(s + i, '(', len - i))
		return true;
	if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	paren = memchr(s, '(', len);
	/* "x = f(" is an assignment: no definition has '=' before "(". */
	if (!paren || memchr(s, '=', (size_t)(paren - s)))
		return false;
	for (i = len; i > 0 && isspace((unsigned char)s[i - 1]); i--)
		;
	if (i && (s[i - 1] == ';' || s[i - 1] == ',' || s[i - 1] == ':'))
		return false;
	return strncmp(s, "return", 6) && strncmp(s, "if", 2) &&
	       strncmp(s, "typedef", 7);
}

/* The last byte of s that is not a blank, or '\0'. */
static char last_char(const char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n ? s[n - 1] : '\0';
}

/*
 * Does line i of hk start a definition whose parameters wrap ("static int
 * f(int a," then "int b)")? Its parameter list must close without a ';'.
 */
static bool wrapped_definition(const struct rv_hunk *hk, size_t i, char skip)
{
	const char *t = hk->lines[i].text ? hk->lines[i].text : "";

	if (!(isalpha((unsigned char)t[0]) || t[0] == '_') || !strchr(t, '(') ||
	    last_char(t) != ',' || !strncmp(t, "return", 6))
		return false;
	for (i++; i < hk->nlines; i++) {
		char end;

		if (hk->lines[i].origin == skip)
			continue;
		t = hk->lines[i].text ? hk->lines[i].text : "";
		end = last_char(t);
		if (!isspace((unsigned char)t[0]) || end == ';')
			return false;
		if (end == ')' || end == '{')
			return true;
	}
	return false;
}

char *hist_hunk_function(const char *path, const struct rv_hunk *hk, size_t k)
{
	/* A removed line lives in the pre-image, any other in the post. */
	char skip = k < hk->nlines && hk->lines[k].origin == '-' ? '+' : '-';
	char *cur;
	size_t i;

	if (!hist_path_has_functions(path))
		return NULL;
	cur = hist_function_name(hk->section);
	for (i = 0; i <= k && i < hk->nlines; i++) {
		const char *t = hk->lines[i].text ? hk->lines[i].text : "";

		if (hk->lines[i].origin == skip)
			continue;
		if (hist_starts_function(t, strlen(t)) ||
		    wrapped_definition(hk, i, skip)) {
			free(cur);
			cur = hist_function_name(t);
		} else if (i < k && !strcmp(t, "}")) {
			/* the end of a function: what follows is file scope */
			free(cur);
			cur = NULL;
		}
	}
	return cur;
}

void hist_top_dir(const char *path, char *buf, size_t len)
{
	const char *slash = strchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/* ---- the facts the index stores per commit ------------------------- */

void hist_facts_from_row(sqlite3_stmt *st, int col, struct hist_facts *f)
{
	double *v[HIST_NFACTS] = {&f->src,	&f->hdr,    &f->other,
				  &f->fixhist,	&f->author, &f->kw,
				  &f->isfix,	&f->files,  &f->dirs,
				  &f->age_days, &f->subsys};
	int i;

	for (i = 0; i < HIST_NFACTS; i++)
		*v[i] = sqlite3_column_double(st, col + i);
}

void hist_facts_bind(sqlite3_stmt *st, int col, const struct hist_facts *f)
{
	const double v[HIST_NFACTS] = {
		f->src,	  f->hdr,   f->other, f->fixhist,  f->author, f->kw,
		f->isfix, f->files, f->dirs,  f->age_days, f->subsys};
	int i;

	for (i = 0; i < HIST_NFACTS; i++)
		sqlite3_bind_double(st, col + i, v[i]);
}

double hist_subsys_rate(int64_t commits, int64_t bugs)
{
	return ((double)bugs + 1.0) / ((double)commits + 10.0);
}

void hist_subsystem(const char *subject, char *buf, size_t len)
{
	const char *p = subject, *colon;
	size_t n, i;

	buf[0] = '\0';
	if (!strncmp(p, "Revert \"", 8))
		p += 8;
	colon = strchr(p, ':');
	if (!colon || colon == p || colon - p > 40)
		return;
	n = (size_t)(colon - p);
	for (i = 0; i < n; i++)
		if (isspace((unsigned char)p[i]))
			return;
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)p[i]);
	buf[n] = '\0';
}

/*
 * What a file's extension says: its kind for hist_file_kind (0 source,
 * 1 header, 2 other) and whether its hunks can be in functions
 * (hist_path_has_functions: not assembly, whose sections are labels,
 * nor grammars and awk, not measured).
 */
static const struct file_ext {
	const char *ext;
	int kind;
	bool functions;
} file_exts[] = {
	{".c", 0, true},    {".cc", 0, true},	{".cpp", 0, true},
	{".y", 0, false},   {".l", 0, false},	{".sh", 0, true},
	{".py", 0, true},   {".pl", 0, true},	{".rs", 0, true},
	{".go", 0, true},   {".S", 0, false},	{".awk", 0, false},
	{".h", 1, true},    {".hpp", 1, true},	{".cxx", 2, true},
	{".hh", 2, true},   {".hxx", 2, true},	{".pyx", 2, true},
	{".pxd", 2, true},  {".bash", 2, true}, {".pm", 2, true},
	{".java", 2, true}, {".js", 2, true},	{".ts", 2, true},
	{".rb", 2, true},   {".lua", 2, true},	{".php", 2, true},
};

static const struct file_ext *file_ext_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	size_t i;

	if (!dot || strchr(dot, '/'))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(file_exts); i++)
		if (!strcmp(dot, file_exts[i].ext))
			return &file_exts[i];
	return NULL;
}

int hist_file_kind(const char *path)
{
	const struct file_ext *e = file_ext_of(path);

	return e ? e->kind : 2;
}

bool hist_path_has_functions(const char *path)
{
	const struct file_ext *e = file_ext_of(path);

	return e && e->functions;
}

static bool has_word(const char *s, const char *const *words, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		const unsigned char *w;
		size_t len, i;

		while (*p && !isalpha(*p))
			p++;
		w = p;
		while (isalpha(*p))
			p++;
		len = (size_t)(p - w);
		for (i = 0; len && i < n; i++)
			if (strlen(words[i]) == len &&
			    !strncasecmp((const char *)w, words[i], len))
				return true;
	}
	return false;
}

/*
 * The subject's verb, after its "subsystem: " prefixes, takes something
 * away ("remove support for iptables action", "drop new API").
 */
static bool subject_removes(const char *subject)
{
	static const char *const verbs[] = {
		"remove", "removes", "removed", "drop",	     "drops",
		"delete", "deletes", "disable", "deprecate", "kill",
		"revert", "reverts", "undo",
	};
	const char *p = subject, *c;
	size_t len, i;

	while ((c = strstr(p, ": ")))
		p = c + 2;
	while (*p == ' ')
		p++;
	for (len = 0; isalpha((unsigned char)p[len]); len++)
		;
	for (i = 0; len && i < ARRAY_SIZE(verbs); i++)
		if (strlen(verbs[i]) == len && !strncasecmp(p, verbs[i], len))
			return true;
	return false;
}

bool hist_subject_adds(const char *subject)
{
	static const char *const words[] = {"add",     "adds",	    "added",
					    "support", "introduce", "implement",
					    "new",     "enable",    "allow"};

	return subject && !subject_removes(subject) &&
	       has_word(subject, words, ARRAY_SIZE(words));
}

bool hist_subject_fixes(const char *subject)
{
	static const char *const words[] = {"fix", "fixes", "fixed", "revert",
					    "bug", "crash", "leak"};

	return subject && has_word(subject, words, ARRAY_SIZE(words));
}

/* ---- the db --------------------------------------------------------- */

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);"
	"CREATE TABLE IF NOT EXISTS tips(oid TEXT PRIMARY KEY);"
	"CREATE TABLE IF NOT EXISTS commits("
	" seq INTEGER PRIMARY KEY, oid TEXT NOT NULL UNIQUE,"
	" time INTEGER NOT NULL, subject TEXT, author TEXT,"
	" src REAL, hdr REAL, other REAL, fixhist REAL, authorexp REAL,"
	" kw REAL, isfix REAL, files REAL, dirs REAL, age REAL,"
	" subsys REAL);"
	"CREATE TABLE IF NOT EXISTS subsystems(name TEXT PRIMARY KEY,"
	" commits INTEGER, bugs INTEGER);"
	"CREATE INDEX IF NOT EXISTS commits_time ON commits(time);"
	"CREATE TABLE IF NOT EXISTS paths(path TEXT PRIMARY KEY,"
	" commits INTEGER, fixes INTEGER, last_time INTEGER);"
	"CREATE TABLE IF NOT EXISTS authors(email TEXT PRIMARY KEY,"
	" commits INTEGER);"
	"CREATE TABLE IF NOT EXISTS pairs(id INTEGER PRIMARY KEY,"
	" kind TEXT, how TEXT,"
	" fix_seq INTEGER, fix_oid TEXT, fix_subject TEXT, fix_expl TEXT,"
	" bug_seq INTEGER, bug_oid TEXT, bug_subject TEXT);"
	"CREATE INDEX IF NOT EXISTS pairs_bug ON pairs(bug_seq);"
	"CREATE TABLE IF NOT EXISTS unresolved(fix_oid TEXT, ref TEXT,"
	" subject TEXT, reason TEXT);"
	"CREATE TABLE IF NOT EXISTS hunks(id INTEGER PRIMARY KEY,"
	" pair_id INTEGER, role INTEGER, file TEXT, func TEXT,"
	" lines TEXT, nshape INTEGER NOT NULL DEFAULT 0);"
	/* The winnowed shingles of each hunk's shape (history-shape.c). */
	"CREATE TABLE IF NOT EXISTS shapes(h INTEGER NOT NULL,"
	" hunk_id INTEGER NOT NULL, PRIMARY KEY(h, hunk_id)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS funcfix(file TEXT, func TEXT,"
	" fix_seq INTEGER);"
	"CREATE INDEX IF NOT EXISTS funcfix_ff ON funcfix(file, func);"
	/* Risk features by commit, and the state that computes them. */
	"CREATE TABLE IF NOT EXISTS risk(seq INTEGER PRIMARY KEY, x BLOB,"
	" foot TEXT, words BLOB);"
	"CREATE TABLE IF NOT EXISTS riskstate(k TEXT PRIMARY KEY, v BLOB);"
	"CREATE TABLE IF NOT EXISTS vectors(hunk_id INTEGER PRIMARY KEY,"
	" v BLOB NOT NULL);"
	"CREATE VIRTUAL TABLE IF NOT EXISTS hunks_fts USING fts5(tokens,"
	" content='', tokenize=\"unicode61 tokenchars '_'\");";

int hist_exec(sqlite3 *db, const char *sql, struct errmsg *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
			   msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return RV_ERR_INTERNAL;
	}
	return 0;
}

int64_t hist_meta_int(sqlite3 *db, const char *key, int64_t def)
{
	sqlite3_stmt *st = NULL;
	int64_t v = def;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

int hist_meta_set_int(sqlite3 *db, const char *key, int64_t v)
{
	sqlite3_stmt *st = NULL;
	int rc = RV_ERR_INTERNAL;

	if (sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO meta(key, value) "
			       "VALUES (?, ?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, v);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : RV_ERR_INTERNAL;
	}
	sqlite3_finalize(st);
	return rc;
}

bool hist_meta_text(sqlite3 *db, const char *key, struct sb *out)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *v =
				(const char *)sqlite3_column_text(st, 0);

			sb_adds(out, v ? v : "");
			found = true;
		}
	}
	sqlite3_finalize(st);
	return found;
}

int hist_meta_set_text(sqlite3 *db, const char *key, const char *v)
{
	sqlite3_stmt *st = NULL;
	int rc = RV_ERR_INTERNAL;

	if (sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO meta(key, value) "
			       "VALUES (?, ?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : RV_ERR_INTERNAL;
	}
	sqlite3_finalize(st);
	return rc;
}

char *hist_db_path(git_repository *repo)
{
	const char *gd = git_repository_path(repo);
	struct sb p = SB_INIT;

	if (!gd)
		return NULL;
	sb_addf(&p, "%s%squorum/history.db", gd,
		gd[0] && gd[strlen(gd) - 1] == '/' ? "" : "/");
	return sb_detach(&p, NULL);
}

void hist_db_remove(const char *path)
{
	struct sb p = SB_INIT;

	unlink(path);
	sb_addf(&p, "%s-wal", path);
	unlink(sb_str(&p));
	sb_reset(&p);
	sb_addf(&p, "%s-shm", path);
	unlink(sb_str(&p));
	sb_release(&p);
}

/* Is the db there, readable, and of our schema? Fills why when not. */
static bool db_valid(sqlite3 *db, char *why, size_t len, bool deep)
{
	sqlite3_stmt *st = NULL;
	bool ok = false;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema'",
				-1, &st, NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, len, "it is unreadable (%s)", sqlite3_errmsg(db));
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		snprintf(why, len, "it has no schema version (%s)",
			 rc == SQLITE_DONE ? "empty" : sqlite3_errmsg(db));
		goto out;
	}
	if (!sqlite3_column_text(st, 0) ||
	    strcmp((const char *)sqlite3_column_text(st, 0),
		   HIST_SCHEMA_VERSION)) {
		snprintf(why, len, "it has schema version %s, not %s",
			 sqlite3_column_text(st, 0)
				 ? (const char *)sqlite3_column_text(st, 0)
				 : "(none)",
			 HIST_SCHEMA_VERSION);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	ok = !deep;
	if (ok)
		goto out;
	/* A look at every table's pages: catches a torn or junk file. */
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		snprintf(why, len, "it is corrupt (%s)",
			 rc == SQLITE_OK && sqlite3_column_text(st, 0)
				 ? (const char *)sqlite3_column_text(st, 0)
				 : sqlite3_errmsg(db));
		goto out;
	}
	ok = true;
out:
	sqlite3_finalize(st);
	return ok;
}

static int db_open_raw(sqlite3 **db, const char *path, int flags)
{
	int rc = sqlite3_open_v2(path, db, flags, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_extended_result_codes(*db, 1);
	return SQLITE_OK;
}

int hist_db_open(sqlite3 **out, const char *path, bool create, char *reason,
		 size_t reason_len, struct errmsg *err)
{
	sqlite3 *db = NULL;
	char why[200] = "";
	int ret = 0;

	*out = NULL;
	if (access(path, F_OK) == 0) {
		if (db_open_raw(&db, path, SQLITE_OPEN_READWRITE) ==
			    SQLITE_OK &&
		    db_valid(db, why, sizeof(why), create))
			goto ready;
		if (!why[0])
			snprintf(why, sizeof(why), "it cannot be opened (%s)",
				 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		db = NULL;
		if (!create)
			return errmsg_set(
				err, RV_ERR_INTERNAL,
				"the history index %s is unusable: "
				"%s; run `quorum index` to rebuild it",
				path, why);
		if (reason)
			snprintf(reason, reason_len,
				 "the history index %s was unusable (%s) and "
				 "was rebuilt",
				 path, why);
		hist_db_remove(path);
	} else if (!create) {
		return 0; /* no index */
	}
	if (db_open_raw(&db, path,
			SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) !=
	    SQLITE_OK) {
		ret = errmsg_set(err, RV_ERR_INTERNAL,
				 "cannot create the history index %s: %s", path,
				 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return ret;
	}
	ret = hist_exec(db, "PRAGMA journal_mode=WAL;", err);
	if (!ret)
		ret = hist_exec(db, schema_sql, err);
	if (!ret)
		ret = hist_exec(db,
				"INSERT OR REPLACE INTO meta(key, value) VALUES"
				" ('schema', '" HIST_SCHEMA_VERSION "');",
				err);
	if (ret) {
		sqlite3_close(db);
		return ret;
	}
ready:
	hist_exec(db, "PRAGMA synchronous=NORMAL;", NULL);
	*out = db;
	return 0;
}

/* ---- opening an index for reading ----------------------------------- */

int rv_history_open(struct rv_history **out, const char *repo_path,
		    struct errmsg *err)
{
	git_repository *repo = NULL;
	struct rv_history *h;
	sqlite3 *db = NULL;
	char *path = NULL;
	int ret;

	*out = NULL;
	if (git_repository_open_ext(&repo, repo_path ? repo_path : ".", 0,
				    NULL) < 0)
		return errmsg_set(err, RV_ERR_REPO,
				  "%s is not in a git repository",
				  repo_path ? repo_path : ".");
	path = hist_db_path(repo);
	ret = path ? hist_db_open(&db, path, false, NULL, 0, err)
		   : RV_ERR_INTERNAL;
	free(path);
	if (ret < 0 || !db) {
		git_repository_free(repo);
		return ret;
	}
	h = xcalloc(1, sizeof(*h));
	h->db = db;
	h->repo = repo;
	h->workdir = xstrdup_or_null(git_repository_workdir(repo));
	h->horizon = INT64_MAX;
	hist_model_load(db, &h->model);
	{
		struct sb api = SB_INIT;

		if (hist_meta_text(db, "api", &api))
			hist_api_parse(sb_str(&api), &h->api);
		sb_release(&api);
	}
	/* Measuring only: the ranking before shapes. */
	h->lexical_only = getenv("QUORUM_SIMILAR_LEXICAL") &&
			  *getenv("QUORUM_SIMILAR_LEXICAL") == '1';
	*out = h;
	return 0;
}

void rv_history_set_embeddings(struct rv_history *h,
			       const struct rv_embed_opts *o)
{
	free(h->embed_url);
	free(h->embed_model);
	free(h->embed_key);
	h->embed_url = o ? xstrdup_or_null(o->url) : NULL;
	h->embed_model = o && o->url ? xstrdup_or_null(o->model) : NULL;
	h->embed_key = o && o->url ? xstrdup_or_null(o->key) : NULL;
	h->embed_error[0] = '\0';
}

const char *rv_history_embed_error(const struct rv_history *h)
{
	return h && h->embed_error[0] ? h->embed_error : NULL;
}

void rv_history_free(struct rv_history *h)
{
	if (!h)
		return;
	free(h->embed_url);
	free(h->embed_model);
	free(h->embed_key);
	sqlite3_close(h->db);
	git_repository_free(h->repo);
	free(h->workdir);
	free(h);
}

int rv_history_commit_diff(struct rv_history *h, const char *rev,
			   struct sb *diff, struct sb *message,
			   char id[RV_OID_HEXSZ + 1], struct errmsg *err)
{
	git_object *obj = NULL;
	git_commit *c = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *d = NULL;
	git_diff_find_options fo;
	git_buf buf = {0};
	int ret = 0;

	/*
	 * Renames as renames, as `git format-patch` shows them: replayed as
	 * a patch, a moved file is the lines that changed in it, not all
	 * of them added (and the index counts it so, see risk_changes).
	 */
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	fo.flags = GIT_DIFF_FIND_RENAMES;
	if (git_revparse_single(&obj, h->repo, rev) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "'%s' does not name a commit in this "
				 "repository",
				 rev);
		goto out;
	}
	git_oid_tostr(id, RV_OID_HEXSZ + 1, git_commit_id(c));
	if (message)
		sb_adds(message,
			git_commit_message(c) ? git_commit_message(c) : "");
	if (git_commit_tree(&tree, c) < 0 ||
	    (git_commit_parentcount(c) &&
	     (git_commit_parent(&parent, c, 0) < 0 ||
	      git_commit_tree(&ptree, parent) < 0)) ||
	    git_diff_tree_to_tree(&d, h->repo, ptree, tree, NULL) < 0 ||
	    git_diff_find_similar(d, &fo) < 0 ||
	    git_diff_to_buf(&buf, d, GIT_DIFF_FORMAT_PATCH) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO, "cannot diff %s: %s", rev,
				 git_error_last() ? git_error_last()->message
						  : "unknown error");
		goto out;
	}
	if (sb_add(diff, buf.ptr, buf.size) < 0)
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the diff of %s is too large", rev);
out:
	git_buf_dispose(&buf);
	git_diff_free(d);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	git_commit_free(c);
	git_object_free(obj);
	return ret;
}

int rv_history_fix_id(struct rv_history *h, const char *prefix,
		      char out[RV_OID_HEXSZ + 1])
{
	char lower[RV_OID_HEXSZ + 2];
	sqlite3_stmt *st = NULL;
	size_t i, n = prefix ? strlen(prefix) : 0;
	int rc, found = 0;

	out[0] = '\0';
	if (!h || n < 7 || n > RV_OID_HEXSZ)
		return 0;
	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)prefix[i]))
			return 0;
		lower[i] = (char)tolower((unsigned char)prefix[i]);
	}
	lower[n] = '*';
	lower[n + 1] = '\0';
	if (sqlite3_prepare_v2(
		    h->db,
		    "SELECT DISTINCT fix_oid FROM pairs"
		    " WHERE fix_oid GLOB ?1 AND fix_seq < ?2 LIMIT 2",
		    -1, &st, NULL) != SQLITE_OK)
		return RV_ERR_INTERNAL;
	sqlite3_bind_text(st, 1, lower, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->horizon);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *oid = (const char *)sqlite3_column_text(st, 0);

		if (!oid || strlen(oid) != RV_OID_HEXSZ)
			continue;
		/* Two fixes share the prefix: it names neither. */
		if (found++) {
			out[0] = '\0';
			break;
		}
		memcpy(out, oid, RV_OID_HEXSZ + 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return RV_ERR_INTERNAL;
	return found == 1;
}

int rv_history_set_horizon(struct rv_history *h, const char *id)
{
	sqlite3_stmt *st = NULL;

	h->horizon = INT64_MAX;
	if (sqlite3_prepare_v2(h->db, "SELECT seq FROM commits WHERE oid = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		h->horizon = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}
