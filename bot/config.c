// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config.c - quorum's config, git-config syntax, read with libgit2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "config.h"

/* A config file bigger than this is not a config file. */
#define CONFIG_MAX_BYTES (1 << 20)

struct qconfig {
	git_config *cfg;
	git_config *snap; /* read-only snapshot: strings stay valid */
	struct sb sources;
};

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
				  "config %s is larger than %d bytes; is it the right file?",
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
	if (q->sources.len)
		sb_adds(&q->sources, ", ");
	sb_adds(&q->sources, path);
	return 0;
}

int qconfig_load(struct qconfig **out, const char *repo, struct errmsg *err)
{
	struct qconfig *q = xcalloc(1, sizeof(*q));
	const char *env, *xdg, *home;
	struct sb path = SB_INIT;
	git_buf gitdir = GIT_BUF_INIT;
	int ret = -1;

	*out = NULL;
	if (git_config_new(&q->cfg) < 0) {
		errmsg_set(err, -1, "cannot create a config object");
		goto out;
	}
	env = getenv("QUORUM_CONFIG");
	if (env && *env) {
		if (add_file(q, env, GIT_CONFIG_LEVEL_GLOBAL, true, err) < 0)
			goto out;
	} else {
		xdg = getenv("XDG_CONFIG_HOME");
		home = getenv("HOME");
		if (xdg && *xdg)
			sb_addf(&path, "%s/quorum/config", xdg);
		else if (home && *home)
			sb_addf(&path, "%s/.config/quorum/config", home);
		if (path.len &&
		    add_file(q, path.buf, GIT_CONFIG_LEVEL_GLOBAL, false, err) < 0)
			goto out;
	}
	if (repo) {
		/* .git/quorum.conf of the repo, when there is one. */
		if (git_repository_discover(&gitdir, repo, 0, NULL) == 0) {
			sb_reset(&path);
			sb_addf(&path, "%s%squorum.conf", gitdir.ptr,
				gitdir.size && gitdir.ptr[gitdir.size - 1] == '/' ?
					"" :
					"/");
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
