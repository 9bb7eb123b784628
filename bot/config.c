// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config.c - quorum's config, git-config syntax, read with libgit2.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "config.h"

/* A config file bigger than this is not a config file. */
#define CONFIG_MAX_BYTES (1 << 20)

struct qconfig {
	git_config *cfg;
	git_config *snap; /* read-only snapshot: strings stay valid */
	struct sb sources;
	char **files; /* the files read, in order (the last one wins) */
	size_t nfiles;
};

/*
 * Every key quorum reads, in one table: a key that is not here is a
 * typo, reported with its file and line. sub: the section takes a
 * [section "NAME"]; name "*": any key of that section. A new key goes
 * here and in contrib/quorum.conf.example (t0020 checks both).
 */
struct known_key {
	const char *section;
	bool sub;
	const char *name;
};

static const struct known_key known_keys[] = {
	{"review", false, "quorum"},
	{"review", false, "deadline"},
	{"review", false, "retries"},
	{"review", false, "backoff"},
	{"review", false, "budget-per-review"},
	{"ci", false, "max-commits"},
	{"budget", false, "monthly"},
	{"history", false, "embeddings-url"},
	{"history", false, "embeddings-model"},
	{"history", false, "embeddings-key-env"},
	{"notmuch", false, "database"},
	{"watch", false, "domain"},
	{"watch", false, "from"},
	{"watch", false, "state"},
	{"deliver", false, "method"},
	{"deliver", false, "sendmail"},
	{"deliver", false, "outbox"},
	{"deliver", false, "max-attempts"},
	{"deliver", false, "smtp-url"},
	{"deliver", false, "smtp-user"},
	{"deliver", false, "smtp-password-env"},
	{"deliver", false, "starttls"},
	{"list", true, "address"},
	{"list", true, "repo"},
	{"list", true, "branch"},
	{"list", true, "mode"},
	{"list", true, "reply-to"},
	{"list", true, "maintainers"},
	{"list", true, "query"},
	{"list", true, "wait"},
	{"list", true, "mute"},
	{"list", true, "max-per-hour"},
	{"list", true, "max-per-author-per-day"},
	{"list", true, "embargo"},
	{"list", true, "prerequisites-from"},
	{"list", true, "commands"},
	{"list", true, "dkim-keys"},
	{"list", true, "budget-per-day"},
	{"voter", true, "provider"},
	{"voter", true, "url"},
	{"voter", true, "model"},
	{"voter", true, "key-env"},
	{"voter", true, "key-file"},
	{"voter", true, "price-in"},
	{"voter", true, "price-out"},
	{"voter", true, "price-cached"},
	{"voter", true, "weight"},
	{"voter", true, "max-tokens"},
	{"voter", true, "timeout"},
	{"voter", true, "max-parallel"},
	{"voter", true, "context-tokens"},
	{"voter", true, "count-tokens"},
	{"classify", true, "*"},
};

/* One key of a file as scan_file() saw it; sub may be NULL. */
struct scanned {
	const char *path;
	int line;
	const char *section; /* lower-case */
	const char *sub;     /* as written */
	const char *name;    /* lower-case; "" for a section header */
};

/*
 * Walk the keys of buf, the text of a file libgit2 has already parsed,
 * and call fn for each section header and each key with its line;
 * stops at fn's first nonzero result. libgit2 gives no line numbers,
 * and accepts a key outside any section, so we read the file too.
 */
static int scan_file(const char *path, const char *buf,
		     int (*fn)(void *arg, const struct scanned *k), void *arg)
{
	struct sb section = SB_INIT, sub = SB_INIT, name = SB_INIT;
	const char *p = buf;
	bool has_sub = false;
	int line = 0, ret = 0;

	while (!ret && *p) {
		struct scanned k = {path, ++line, NULL, NULL, ""};
		bool quoted = false;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			sb_reset(&section);
			sb_reset(&sub);
			has_sub = false;
			for (p++; *p && *p != ']' && *p != ' ' && *p != '.' &&
				  *p != '\n';
			     p++)
				sb_addch(&section, tolower((unsigned char)*p));
			if (*p == '.') {
				has_sub = true;
				for (p++; *p && *p != ']' && *p != '\n'; p++)
					sb_addch(&sub,
						 tolower((unsigned char)*p));
			}
			while (*p == ' ')
				p++;
			if (*p == '"') {
				has_sub = true;
				for (p++; *p && *p != '"' && *p != '\n'; p++) {
					if (*p == '\\' && p[1] && p[1] != '\n')
						p++;
					sb_addch(&sub, *p);
				}
			}
			while (*p && *p != ']' && *p != '\n')
				p++;
			if (*p == ']')
				p++;
			k.section = section.buf ? section.buf : "";
			k.sub = has_sub ? sb_str(&sub) : NULL;
			ret = fn(arg, &k);
			while (*p == ' ' || *p == '\t')
				p++;
		}
		if (!ret && isalpha((unsigned char)*p)) {
			sb_reset(&name);
			while (isalnum((unsigned char)*p) || *p == '-')
				sb_addch(&name, tolower((unsigned char)*p++));
			k.section = sb_str(&section);
			k.sub = has_sub ? sb_str(&sub) : NULL;
			k.name = name.buf;
			ret = fn(arg, &k);
		}
		/* The rest of the line, and the lines a backslash joins. */
		while (*p && *p != '\n') {
			if (*p == '"')
				quoted = !quoted;
			else if (!quoted && (*p == '#' || *p == ';'))
				while (*p && *p != '\n')
					p++;
			else if (*p == '\\' && p[1] == '\n') {
				p++;
				line++;
			} else if (*p == '\\' && p[1])
				p++;
			if (*p && *p != '\n')
				p++;
		}
		if (*p)
			p++;
	}
	sb_release(&section);
	sb_release(&sub);
	sb_release(&name);
	return ret;
}

/* Edits to turn a into b, for "did you mean"; both short. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[64];

	if (la >= ARRAY_SIZE(d) || lb >= ARRAY_SIZE(d))
		return 99;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = d[0];

		d[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = d[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (d[j - 1] + 1 < best)
				best = d[j - 1] + 1;
			diag = up;
			d[j] = best;
		}
	}
	return d[lb];
}

static int check_key(void *arg, const struct scanned *k)
{
	struct errmsg *err = arg;
	const struct known_key *near = NULL;
	bool section_known = false;
	size_t i, dist, best = 3;

	if (!*k->section)
		return errmsg_set(err, -1,
				  "config %s:%d: '%s' is outside any section "
				  "(a [section] line must come first)",
				  k->path, k->line, k->name);
	for (i = 0; i < ARRAY_SIZE(known_keys); i++) {
		const struct known_key *kk = &known_keys[i];

		if (strcmp(kk->section, k->section))
			continue;
		section_known = true;
		if (!*k->name)
			break;
		if (kk->sub != !!k->sub)
			continue;
		if (!strcmp(kk->name, "*") || !strcmp(kk->name, k->name))
			return 0;
		dist = edit_distance(kk->name, k->name);
		if (dist < best) {
			best = dist;
			near = kk;
		}
	}
	if (!*k->name) {
		if (!section_known)
			return errmsg_set(err, -1,
					  "config %s:%d: unknown section [%s]",
					  k->path, k->line, k->section);
		if (i < ARRAY_SIZE(known_keys) && known_keys[i].sub != !!k->sub)
			return errmsg_set(
				err, -1,
				known_keys[i].sub
					? "config %s:%d: [%s] needs a name: "
					  "[%s \"NAME\"]"
					: "config %s:%d: [%s] takes no name",
				k->path, k->line, k->section, k->section);
		return 0;
	}
	if (near)
		return errmsg_set(
			err, -1,
			"config %s:%d: unknown key '%s' in [%s%s%s%s] "
			"(did you mean %s?)",
			k->path, k->line, k->name, k->section,
			k->sub ? " \"" : "", k->sub ? k->sub : "",
			k->sub ? "\"" : "", near->name);
	return errmsg_set(err, -1,
			  "config %s:%d: unknown key '%s' in [%s%s%s%s] "
			  "(contrib/quorum.conf.example lists every key)",
			  k->path, k->line, k->name, k->section,
			  k->sub ? " \"" : "", k->sub ? k->sub : "",
			  k->sub ? "\"" : "");
}

/* Every key of path is one quorum reads, else -1 with FILE:LINE in err. */
static int check_file(const char *path, struct errmsg *err)
{
	struct sb text = SB_INIT;
	int ret;

	ret = read_file_capped(path, CONFIG_MAX_BYTES + 1, &text, err);
	if (!ret)
		ret = scan_file(path, sb_str(&text), check_key, err);
	sb_release(&text);
	return ret;
}

static int add_file(struct qconfig *q, const char *path, git_config_level_t lvl,
		    bool must_exist, struct errmsg *err)
{
	struct stat st;
	const git_error *ge;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return errmsg_set(err, -1, "cannot read config %s: %s", path,
				  strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return errmsg_set(err, -1, "config %s is not a regular file",
				  path);
	if (st.st_size > CONFIG_MAX_BYTES)
		return errmsg_set(err, -1,
				  "config %s is larger than %d bytes; is it "
				  "the right file?",
				  path, CONFIG_MAX_BYTES);
	if (git_config_add_file_ondisk(q->cfg, path, lvl, NULL, 0) < 0) {
		static const char prefix[] = "failed to parse config file: ";
		const char *msg;

		ge = git_error_last();
		msg = ge && ge->message ? ge->message : "cannot parse it";
		if (!strncmp(msg, prefix, sizeof(prefix) - 1))
			msg += sizeof(prefix) - 1;
		/* libgit2 names the file and line: "... (in FILE:LINE)". */
		if (strstr(msg, path))
			return errmsg_set(err, -1, "bad config: %s", msg);
		return errmsg_set(err, -1, "bad config %s: %s", path, msg);
	}
	if (check_file(path, err) < 0)
		return -1;
	if (q->sources.len)
		sb_adds(&q->sources, ", ");
	sb_adds(&q->sources, path);
	q->files = xrealloc(q->files, (q->nfiles + 1) * sizeof(*q->files));
	q->files[q->nfiles++] = xstrdup_or_null(path);
	return 0;
}

static const char *getenv_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/*
 * The user's config file into path: $QUORUM_CONFIG (which must exist),
 * else $XDG_CONFIG_HOME/quorum/config or ~/.config/quorum/config.
 * False when there is no such name at all (no HOME).
 */
static bool user_config_path(struct sb *path)
{
	const char *env = getenv_nonempty("QUORUM_CONFIG");
	const char *xdg = getenv_nonempty("XDG_CONFIG_HOME");
	const char *home = getenv_nonempty("HOME");

	if (env)
		sb_adds(path, env);
	else if (xdg)
		sb_addf(path, "%s/quorum/config", xdg);
	else if (home)
		sb_addf(path, "%s/.config/quorum/config", home);
	return path->len > 0;
}

bool qconfig_user_file_present(void)
{
	struct sb path = SB_INIT;
	bool present =
		user_config_path(&path) && (getenv_nonempty("QUORUM_CONFIG") ||
					    access(path.buf, F_OK) == 0);

	sb_release(&path);
	return present;
}

int qconfig_load(struct qconfig **out, const char *repo, struct errmsg *err)
{
	struct qconfig *q = xcalloc(1, sizeof(*q));
	struct sb path = SB_INIT;
	git_buf gitdir = GIT_BUF_INIT;
	int ret = -1;

	*out = NULL;
	if (git_config_new(&q->cfg) < 0) {
		errmsg_set(err, -1, "cannot create a config object");
		goto out;
	}
	if (user_config_path(&path) &&
	    add_file(q, path.buf, GIT_CONFIG_LEVEL_GLOBAL,
		     !!getenv_nonempty("QUORUM_CONFIG"), err) < 0)
		goto out;
	if (repo) {
		/* .git/quorum.conf of the repo, when there is one. */
		if (git_repository_discover(&gitdir, repo, 0, NULL) == 0) {
			sb_reset(&path);
			sb_addf(&path, "%s%squorum.conf", gitdir.ptr,
				gitdir.size && gitdir.ptr[gitdir.size - 1] ==
							'/'
					? ""
					: "/");
			if (add_file(q, path.buf, GIT_CONFIG_LEVEL_LOCAL, false,
				     err) < 0)
				goto out;
		}
	}
	if (git_config_snapshot(&q->snap, q->cfg) < 0) {
		errmsg_set(err, -1, "cannot read config: %s",
			   git_error_last() ? git_error_last()->message : "?");
		goto out;
	}
	*out = q;
	q = NULL;
	ret = 0;
out:
	git_buf_dispose(&gitdir);
	sb_release(&path);
	qconfig_free(q);
	return ret;
}

void qconfig_free(struct qconfig *q)
{
	if (!q)
		return;
	git_config_free(q->snap);
	git_config_free(q->cfg);
	sb_release(&q->sources);
	while (q->nfiles)
		free(q->files[--q->nfiles]);
	free(q->files);
	free(q);
}

const char *qconfig_get(struct qconfig *q, const char *key)
{
	const char *v = NULL;

	if (!q || !q->snap)
		return NULL;
	if (git_config_get_string(&v, q->snap, key) < 0)
		return NULL;
	return v;
}

int qconfig_get_int(struct qconfig *q, const char *key, int def, int *out,
		    struct errmsg *err)
{
	const char *v = qconfig_get(q, key);
	char *end;
	long n;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < -1000000 || n > 1000000)
		return errmsg_set(err, -1,
				  "config %s = '%s' is not a number (in %s)",
				  key, v, sb_str(&q->sources));
	*out = (int)n;
	return 0;
}

int qconfig_subsections(struct qconfig *q, const char *section,
			int (*fn)(void *arg, const char *name), void *arg)
{
	git_config_iterator *it = NULL;
	git_config_entry *e;
	struct sb seen = SB_INIT, name = SB_INIT;
	size_t slen = strlen(section);
	int ret = 0;

	if (!q || !q->snap || git_config_iterator_new(&it, q->snap) < 0)
		return 0;
	/* seen holds "\nname\n" for each name already reported. */
	sb_addch(&seen, '\n');
	while (!ret && git_config_next(&e, it) == 0) {
		const char *sub, *last;

		if (strncmp(e->name, section, slen) || e->name[slen] != '.')
			continue;
		sub = e->name + slen + 1;
		last = strrchr(sub, '.');
		if (!last || last == sub)
			continue;
		sb_reset(&name);
		sb_addch(&name, '\n');
		sb_add(&name, sub, (size_t)(last - sub));
		sb_addch(&name, '\n');
		if (strstr(sb_str(&seen), name.buf))
			continue;
		sb_add(&seen, name.buf + 1, name.len - 1);
		sb_setlen(&name, name.len - 1);
		ret = fn(arg, name.buf + 1);
	}
	git_config_iterator_free(it);
	sb_release(&seen);
	sb_release(&name);
	return ret;
}

int qconfig_foreach(struct qconfig *q, const char *prefix,
		    int (*fn)(void *arg, const char *key, const char *value),
		    void *arg)
{
	git_config_iterator *it = NULL;
	git_config_entry *e;
	size_t plen = strlen(prefix);
	int ret = 0;

	if (!q || !q->snap || git_config_iterator_new(&it, q->snap) < 0)
		return 0;
	while (!ret && git_config_next(&e, it) == 0)
		if (!strncmp(e->name, prefix, plen))
			ret = fn(arg, e->name + plen, e->value);
	git_config_iterator_free(it);
	return ret;
}

struct find_key {
	const char *section, *sub, *name;
	int line;
};

static int match_key(void *arg, const struct scanned *k)
{
	struct find_key *f = arg;

	if (strcmp(k->section, f->section) || strcmp(k->name, f->name) ||
	    !k->sub != !f->sub || (k->sub && strcmp(k->sub, f->sub)))
		return 0;
	f->line = k->line; /* the last one wins, as in git */
	return 0;
}

/* The line of the last file that sets the key (or header), or 0. */
static int find_line(struct qconfig *q, const char *section, const char *sub,
		     const char *name, const char **file)
{
	struct find_key f = {section, sub, name ? name : "", 0};
	struct sb text = SB_INIT;
	size_t i;

	for (i = q ? q->nfiles : 0; !f.line && i-- > 0;) {
		sb_reset(&text);
		if (read_file_capped(q->files[i], CONFIG_MAX_BYTES + 1, &text,
				     NULL) < 0)
			continue;
		scan_file(q->files[i], sb_str(&text), match_key, &f);
		*file = q->files[i];
	}
	sb_release(&text);
	return f.line;
}

void qconfig_where(struct qconfig *q, const char *section, const char *sub,
		   const char *name, struct sb *out)
{
	const char *file = NULL;
	int line = find_line(q, section, sub, name, &file);

	if (line)
		sb_addf(out, "%s:%d", file, line);
	else
		sb_adds(out, q && q->sources.len ? q->sources.buf
						 : "no config file");
}

bool qconfig_has_section(struct qconfig *q, const char *section,
			 const char *sub)
{
	const char *file;

	return find_line(q, section, sub, NULL, &file) > 0;
}

const char *qconfig_sources(struct qconfig *q)
{
	return q ? sb_str(&q->sources) : "";
}

char *expand_home(const char *p)
{
	const char *home = getenv("HOME");
	struct sb s = SB_INIT;

	if (p[0] == '~' && p[1] == '/' && home)
		sb_addf(&s, "%s%s", home, p + 1);
	else
		sb_adds(&s, p);
	return sb_detach(&s, NULL);
}

int read_file_capped(const char *path, size_t cap, struct sb *out,
		     struct errmsg *err)
{
	FILE *fp;
	char buf[65536];
	size_t n;
	int ret = 0;

	if (!strcmp(path, "-"))
		fp = stdin;
	else if (!(fp = fopen(path, "rb")))
		return errmsg_set(err, -1, "cannot open %s: %s", path,
				  strerror(errno));
	out->cap = cap;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
		if (sb_add(out, buf, n) < 0) {
			ret = errmsg_set(err, -1, "%s is larger than %zu bytes",
					 path, cap);
			break;
		}
	}
	if (!ret && ferror(fp))
		ret = errmsg_set(err, -1, "cannot read %s: %s", path,
				 strerror(errno));
	if (fp != stdin)
		fclose(fp);
	return ret;
}
