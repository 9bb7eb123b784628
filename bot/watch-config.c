// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-config.c - `quorum watch`'s config: the [list "NAME"] sections,
 * the sender and delivery of replies, and the prompts' identity.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "watch.h"

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

/* Split "a, b,c" into a NULL-terminated array of trimmed words. */
static char **split_words(const char *v, size_t *n, bool lower)
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

			for (c = w; lower && *c; c++)
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

/* ... lowercased. */
static char **split_commas(const char *v, size_t *n)
{
	return split_words(v, n, true);
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
	 qconfig_get(w->s.cfg, key.buf))

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
	l->prereq_from = LIST_GET("prerequisites-from");
	v = LIST_GET("commands");
	if (!v) {
		l->commands = COMMANDS_DEFAULT;
	} else if (!strcmp(v, "dkim")) {
		l->commands = COMMANDS_DKIM;
	} else if (!strcmp(v, "from")) {
		l->commands = COMMANDS_FROM;
	} else if (!strcmp(v, "off")) {
		l->commands = COMMANDS_OFF;
	} else {
		ret = error("list %s: commands '%s' is not dkim, from or off",
			    name, v);
		goto out;
	}
	v = LIST_GET("dkim-keys");
	if (v) {
		char *path = expand_home(v);

		/* libopendkim keeps the path in a buffer of its own. */
		if (strlen(path) >= 1024 || access(path, R_OK) < 0)
			ret = error("list %s: dkim-keys %s cannot be read: %s",
				    name, path,
				    strlen(path) >= 1024 ? "path too long"
							 : strerror(errno));
		l->dkim_keys = path;
		if (ret)
			goto out;
	}
	v = LIST_GET("embargo");
	if (v && !strcmp(v, "true"))
		l->embargo = true;
	else if (v && strcmp(v, "false"))
		ret = error("list %s: embargo '%s' is not true or false", name,
			    v);
	sb_reset(&key);
	sb_addf(&key, "list.%s.max-per-hour", name);
	if (!ret &&
	    qconfig_get_int(w->s.cfg, key.buf, 0, &l->per_hour, &err) < 0)
		ret = error("%s", err.msg);
	sb_reset(&key);
	sb_addf(&key, "list.%s.max-per-author-per-day", name);
	if (!ret &&
	    qconfig_get_int(w->s.cfg, key.buf, 0, &l->per_author_day, &err) < 0)
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

void watch_config_release(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->nlists; i++) {
		struct wlist *l = &w->lists[i];

		free((char *)l->name);
		free(l->query);
		argv_free(l->mute);
		argv_free(l->cc);
		argv_free(l->share_addr);
		argv_free(l->share_lists);
		free((char *)l->dkim_keys);
		watch_dkim_release(l);
		rv_history_free(l->history);
		rv_repo_free(l->rv);
		free(l->workdir);
	}
	free(w->lists);
	argv_free(w->sendmail);
	free(w->from);
	free(w->smtp_from);
	free(w->outbox);
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

/* The sender and the delivery of replies. */
static int load_deliver_config(struct watch *w)
{
	struct qconfig *cfg = w->s.cfg;
	struct errmsg err = {""};
	const char *v, *xdg, *home;
	struct sb s = SB_INIT;

	w->domain = qconfig_get(cfg, "watch.domain");
	if (!w->domain)
		w->domain = "quorum.invalid";
	if (!mp_msgid_valid(w->domain) || strchr(w->domain, '@'))
		return error("watch.domain '%s' is not a domain name",
			     w->domain);
	v = qconfig_get(cfg, "watch.from");
	if (v) {
		w->from = xstrdup_or_null(v);
	} else {
		sb_addf(&s, "quorum <quorum@%s>", w->domain);
		w->from = sb_detach(&s, NULL);
	}
	v = qconfig_get(cfg, "deliver.outbox");
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
	w->method = qconfig_get(cfg, "deliver.method");
	if (!w->method)
		w->method = "outbox";
	if (strcmp(w->method, "outbox") && strcmp(w->method, "sendmail") &&
	    strcmp(w->method, "smtp"))
		return error("deliver.method '%s' is not outbox, sendmail or "
			     "smtp",
			     w->method);
	w->smtp.url = qconfig_get(cfg, "deliver.smtp-url");
	if (!strcmp(w->method, "smtp") && !w->smtp.url)
		return error("deliver.method = smtp needs deliver.smtp-url "
			     "(smtp://host:587)");
	w->smtp.user = qconfig_get(cfg, "deliver.smtp-user");
	v = qconfig_get(cfg, "deliver.smtp-password-env");
	w->smtp.password = v ? getenv(v) : NULL;
	v = qconfig_get(cfg, "deliver.starttls");
	w->smtp.starttls = !v || strcmp(v, "false");
	{
		const char *lt = strrchr(w->from, '<'),
			   *gt = strrchr(w->from, '>');

		w->smtp_from = lt && gt && gt > lt
				       ? xstrndup(lt + 1, (size_t)(gt - lt - 1))
				       : xstrdup_or_null(w->from);
		w->smtp.mail_from = w->smtp_from;
	}
	v = qconfig_get(cfg, "deliver.sendmail");
	if (argv_split(v ? v : "sendmail -i -t", &w->sendmail) < 0)
		return error("deliver.sendmail '%s' is not a command", v);
	if (qconfig_get_int(cfg, "deliver.max-attempts", DEFAULT_ATTEMPTS,
			    &w->max_attempts, &err) < 0)
		return error("%s", err.msg);
	if (w->max_attempts < 1)
		w->max_attempts = 1;
	return 0;
}

static void push_word(char ***arr, size_t *n, const char *word, bool lower)
{
	char *c;

	*arr = xrealloc(*arr, (*n + 2) * sizeof(**arr));
	(*arr)[(*n)++] = c = xstrdup_or_null(word);
	(*arr)[*n] = NULL;
	for (; lower && *c; c++)
		*c = (char)tolower((unsigned char)*c);
}

/* A bare address: local@domain, nothing a header would need quoted. */
static bool plain_address(const char *a)
{
	const char *at = strchr(a, '@');

	return at && at > a && at[1] && !strchr(at + 1, '@') &&
	       !a[strcspn(a, " \t<>\"(),;:\\[]")];
}

/*
 * list.NAME.prerequisites-from, once every list is read: each word a
 * [list] section with an address, or an address; never an embargoed
 * list other than NAME itself, whose mail never leaves it. 0 or -1.
 */
static int resolve_shares(struct watch *w, struct wlist *l)
{
	size_t nw, i, j, na = 0, nl = 0;
	char **words = split_words(l->prereq_from, &nw, false);
	int ret = 0;

	for (i = 0; i < nw && !ret; i++) {
		const struct wlist *src = NULL;

		for (j = 0; j < w->nlists && !src; j++)
			if (strchr(words[i], '@')
				    ? !strcasecmp(w->lists[j].address, words[i])
				    : !strcmp(w->lists[j].name, words[i]))
				src = &w->lists[j];
		if (src == l)
			continue; /* its own mail is its own */
		if (src && src->embargo)
			ret = error("list %s: prerequisites-from names %s, an "
				    "embargoed list: its mail never leaves it",
				    l->name, words[i]);
		else if (!src && !plain_address(words[i]))
			ret = error("list %s: prerequisites-from names %s, "
				    "which is neither a [list] section with an "
				    "address nor an address",
				    l->name, words[i]);
		else if (src)
			push_word(&l->share_addr, &na, src->address, true),
				push_word(&l->share_lists, &nl, src->name,
					  false);
		else
			push_word(&l->share_addr, &na, words[i], true);
	}
	argv_free(words);
	return ret;
}

int watch_config_load(struct watch *w)
{
	size_t i;

	if (load_deliver_config(w) < 0)
		return -1;
	if (qconfig_subsections(w->s.cfg, "list", add_list, w))
		return -1;
	for (i = 0; i < w->nlists; i++)
		if (w->lists[i].prereq_from &&
		    resolve_shares(w, &w->lists[i]) < 0)
			return -1;
	if (w->s.prompts_dir)
		hash_prompts(w, w->s.prompts_dir);
	else
		snprintf(w->prompt_hash, sizeof(w->prompt_hash), "none");
	return 0;
}
