// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-voters.c - [voter "NAME"] sections -> struct rv_llm_voter, with
 * the key from an environment variable or a key file only its owner
 * can read. A key is never printed, not even in an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llm-voters.h"

#ifndef QUORUM_PROMPTS_DIR
#define QUORUM_PROMPTS_DIR "/usr/local/share/quorum/prompts"
#endif

#define KEY_FILE_MAX 4096

struct load {
	struct qconfig *cfg;
	struct llm_voters *out;
	struct errmsg *err;
	size_t alloc;
	char name[128]; /* the voter being read, for the error's place */
	bool env;	/* the error is the environment's (a key) */
};

/*
 * A config value for an error message: as it is, unless it looks like a
 * key (one pasted into the wrong line must not reach a log).
 */
static const char *shown(const char *v)
{
	return mp_looks_like_key(v) ? "(not shown: it looks like a key)" : v;
}

/*
 * key-env or key-file holding what looks like the key itself: say which
 * voter and what to do, never the value. -1 with l->err.
 */
static int key_in_config(struct load *l, const char *name, const char *key)
{
	struct sb var = SB_INIT;
	const char *p;

	if (strcmp(key, "key-env"))
		return errmsg_set(l->err, -1,
				  "voter \"%s\": key-file names no file, and "
				  "its value looks like a key itself (not "
				  "shown); put the key in a file only you can "
				  "read (chmod 600) and name that file",
				  name);
	/* A variable name to suggest: QUORUM_KEY_ and the voter's. */
	sb_adds(&var, "QUORUM_KEY_");
	for (p = name; *p && var.len < 40; p++)
		sb_addch(&var,
			 *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A'
			 : (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
				 ? *p
				 : '_');
	errmsg_set(l->err, -1,
		   "voter \"%s\": key-env must name an environment variable, "
		   "and its value looks like a key itself (not shown); put "
		   "the key in the environment and name the variable "
		   "(key-env = %s, with %s set to the key)",
		   name, var.buf, var.buf);
	sb_release(&var);
	return -1;
}

static char *own(struct llm_voters *lv, char *s)
{
	lv->owned = xrealloc(lv->owned, (lv->nowned + 1) * sizeof(*lv->owned));
	lv->owned[lv->nowned++] = s;
	return s;
}

static const char *get(struct load *l, const char *name, const char *key)
{
	struct sb k = SB_INIT;
	const char *v;

	sb_addf(&k, "voter.%s.%s", name, key);
	v = qconfig_get(l->cfg, k.buf);
	sb_release(&k);
	return v;
}

static int get_num(struct load *l, const char *name, const char *key, double lo,
		   double hi, double *out)
{
	const char *v = get(l, name, key);
	char *end;
	double d;

	if (!v)
		return 0;
	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi))
		return errmsg_set(
			l->err, -1,
			"voter \"%s\": %s = '%s' is not a number from %g to %g",
			name, key, shown(v), lo, hi);
	*out = d;
	return 0;
}

static int read_key_file(const char *name, const char *path, char **out,
			 struct errmsg *err)
{
	struct stat st;
	char buf[KEY_FILE_MAX + 1];
	ssize_t n;
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errmsg_set(err, -1,
				  "voter \"%s\": cannot open key-file %s: %s",
				  name, path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return errmsg_set(
			err, -1,
			"voter \"%s\": key-file %s is not a regular file", name,
			path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return errmsg_set(err, -1,
				  "voter \"%s\": key-file %s is readable by "
				  "others (mode %04o); run chmod 600 %s",
				  name, path, (unsigned)(st.st_mode & 07777),
				  path);
	}
	n = read(fd, buf, KEY_FILE_MAX + 1);
	close(fd);
	if (n < 0 || n > KEY_FILE_MAX)
		return errmsg_set(err, -1,
				  "voter \"%s\": key-file %s is unreadable or "
				  "larger than %d bytes",
				  name, path, KEY_FILE_MAX);
	len = (size_t)n;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
		       buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	buf[len] = '\0';
	if (!len || strchr(buf, '\n') || strchr(buf, '\r')) {
		memset(buf, 0, sizeof(buf));
		return errmsg_set(err, -1,
				  "voter \"%s\": key-file %s must hold one key "
				  "on one line",
				  name, path);
	}
	*out = xstrndup(buf, len);
	memset(buf, 0, sizeof(buf));
	return 0;
}

static int one_voter(void *arg, const char *name)
{
	struct load *l = arg;
	struct llm_voters *lv = l->out;
	struct rv_llm_voter v = {0};
	const char *provider = get(l, name, "provider"), *env, *file;
	double d;
	int p;

	snprintf(l->name, sizeof(l->name), "%s", name);

	if (!provider)
		return errmsg_set(l->err, -1, "voter \"%s\" has no provider",
				  name);
	p = rv_provider_parse(provider);
	if (p < 0) {
		/* The offline voters run by default; nothing to configure. */
		if (!strcmp(provider, "history") ||
		    !strcmp(provider, "rules") ||
		    !strcmp(provider, "checkpatch") ||
		    !strcmp(provider, "risk"))
			return 0;
		return errmsg_set(l->err, -1,
				  "voter \"%s\": provider '%s' is not openai, "
				  "anthropic, history, rules or checkpatch",
				  name, shown(provider));
	}
	v.provider = (enum rv_provider)p;
	v.name = own(lv, xstrdup_or_null(name));
	v.url = get(l, name, "url");
	v.model = get(l, name, "model");
	if (!v.url || strncmp(v.url, "http", 4))
		return errmsg_set(l->err, -1,
				  "voter \"%s\" needs url = http(s)://...",
				  name);
	if (!v.model)
		return errmsg_set(l->err, -1, "voter \"%s\" needs a model",
				  name);
	env = get(l, name, "key-env");
	file = get(l, name, "key-file");
	if (env && file)
		return errmsg_set(
			l->err, -1,
			"voter \"%s\": give key-env or key-file, not both",
			name);
	if (env) {
		const char *k;

		if (!mp_env_name_ok(env)) {
			if (mp_looks_like_key(env))
				return key_in_config(l, name, "key-env");
			return errmsg_set(l->err, -1,
					  "voter \"%s\": key-env = '%s' is not "
					  "the name of an environment variable "
					  "(letters, digits and _, no $)",
					  name, env);
		}
		k = getenv(env);
		if ((!k || !*k) && mp_looks_like_key(env))
			return key_in_config(l, name, "key-env");
		l->env = true;
		if (!k || !*k)
			return errmsg_set(l->err, -1,
					  "voter \"%s\": environment variable "
					  "%s (key-env) is not set",
					  name, env);
		v.key = own(lv, xstrdup_or_null(k));
		l->env = false;
	} else if (file) {
		char *k = NULL;

		/* No such file, and a key's looks: the key pasted here. */
		if (mp_looks_like_key(file) && access(file, F_OK) < 0)
			return key_in_config(l, name, "key-file");
		l->env = true;
		if (read_key_file(name, file, &k, l->err) < 0)
			return -1;
		l->env = false;
		v.key = own(lv, k);
	}
	d = 1;
	if (get_num(l, name, "weight", 0.01, 100, &d) < 0)
		return -1;
	v.weight = d;
	if (get_num(l, name, "price-in", 0, 1e6, &v.price_in) < 0 ||
	    get_num(l, name, "price-out", 0, 1e6, &v.price_out) < 0 ||
	    get_num(l, name, "price-cached", 0, 1e6, &v.price_cached) < 0)
		return -1;
	d = 0;
	if (get_num(l, name, "max-tokens", 1, 1e6, &d) < 0)
		return -1;
	v.max_tokens = (int)d;
	d = 0;
	if (get_num(l, name, "timeout", 0.05, 3600, &d) < 0)
		return -1;
	v.timeout = d;
	d = 0;
	if (get_num(l, name, "context-tokens", 256, 4e6, &d) < 0)
		return -1;
	v.context_tokens = (int)d;
	d = 0;
	if (get_num(l, name, "max-parallel", 1, 64, &d) < 0)
		return -1;
	v.max_parallel = (int)d;
	env = get(l, name, "count-tokens");
	p = env ? rv_count_tokens_parse(env) : RV_COUNT_AUTO;
	if (p < 0)
		return errmsg_set(l->err, -1,
				  "voter \"%s\": count-tokens = '%s' is not "
				  "auto, anthropic, tokenize or none",
				  name, shown(env));
	v.count_tokens = (enum rv_count_tokens)p;
	ALLOC_GROW(lv->v, lv->n + 1, l->alloc);
	lv->v[lv->n++] = v;
	return 0;
}

int llm_voters_load(struct qconfig *cfg, struct llm_voters *out,
		    struct errmsg *err)
{
	struct load l = {cfg, out, err, 0, "", false};
	struct sb msg = SB_INIT;

	memset(out, 0, sizeof(*out));
	if (qconfig_subsections(cfg, "voter", one_voter, &l)) {
		llm_voters_release(out);
		/* Name the file and the voter's line, whatever went wrong. */
		if (err && *l.name) {
			sb_adds(&msg, "config ");
			qconfig_where(cfg, "voter", l.name, NULL, &msg);
			sb_addf(&msg, ": %s", err->msg);
			errmsg_set(err, -1, "%s", msg.buf);
			sb_release(&msg);
		}
		return l.env ? LLM_VOTERS_ERR_ENV : LLM_VOTERS_ERR_CONFIG;
	}
	return 0;
}

void llm_voters_release(struct llm_voters *lv)
{
	size_t i;

	for (i = 0; i < lv->nowned; i++) {
		/* Keys are among these: wipe before freeing. */
		memset(lv->owned[i], 0, strlen(lv->owned[i]));
		free(lv->owned[i]);
	}
	free(lv->owned);
	free(lv->v);
	memset(lv, 0, sizeof(*lv));
}

static bool is_prompts(const char *dir)
{
	struct sb p = SB_INIT;
	bool ok;

	sb_addf(&p, "%s/review.md", dir);
	ok = access(p.buf, R_OK) == 0;
	sb_release(&p);
	return ok;
}

char *prompts_dir(void)
{
	static const char *const rel[] = {"/prompts", "/../prompts",
					  "/../share/quorum/prompts"};
	const char *env = getenv("QUORUM_PROMPTS");
	char exe[PATH_MAX];
	ssize_t n;
	size_t i;

	if (env && *env)
		return xstrdup_or_null(env);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (i = 0; i < ARRAY_SIZE(rel); i++) {
			struct sb p = SB_INIT;

			sb_addf(&p, "%s%s", exe, rel[i]);
			if (is_prompts(p.buf))
				return sb_detach(&p, NULL);
			sb_release(&p);
		}
	}
	return xstrdup_or_null(QUORUM_PROMPTS_DIR);
}
