// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * classify-question.c - what a question is: its name, how past commits
 * were labelled yes, its prompt. Config is untrusted: every regex is
 * bounded and compiled once here so a bad one is a one-line error.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify-int.h"

void cl_regex_translate(const char *in, struct sb *out)
{
	/* Perl's \d \s \w, which people write, in POSIX ERE. */
	for (; *in; in++) {
		if (in[0] == '\\' && in[1]) {
			switch (in[1]) {
			case 'd':
				sb_adds(out, "[0-9]");
				in++;
				continue;
			case 's':
				sb_adds(out, "[[:space:]]");
				in++;
				continue;
			case 'w':
				sb_adds(out, "[[:alnum:]_]");
				in++;
				continue;
			default:
				sb_add(out, in, 2);
				in++;
				continue;
			}
		}
		sb_addch(out, *in);
	}
}

int cl_regex_compile(regex_t *re, const char *pattern, struct errmsg *err)
{
	struct sb p = SB_INIT;
	int rc;

	if (strlen(pattern) > RV_CL_MAX_REGEX)
		return errmsg_set(err, RV_ERR_INPUT,
				  "label regex is longer than %d bytes",
				  RV_CL_MAX_REGEX);
	cl_regex_translate(pattern, &p);
	rc = regcomp(re, sb_str(&p), REG_EXTENDED | REG_ICASE | REG_NEWLINE);
	sb_release(&p);
	if (rc) {
		char buf[128];

		regerror(rc, re, buf, sizeof(buf));
		return errmsg_set(err, RV_ERR_INPUT,
				  "label regex '%.80s' does not compile: %s",
				  pattern, buf);
	}
	return 0;
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (!n || n > RV_CL_MAX_NAME)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' &&
		    name[i] != '_')
			return false;
	return true;
}

static void add_regex(struct rv_question *q, const char *re)
{
	q->regex[q->nregex++] = xstrdup_or_null(re);
}

int rv_question_init(struct rv_question *q, const char *name,
		     struct errmsg *err)
{
	struct sb p = SB_INIT;

	memset(q, 0, sizeof(*q));
	if (!name || !name_ok(name))
		return errmsg_set(err, RV_ERR_INPUT,
				  "question name '%.64s' is not 1 to %d "
				  "letters, digits, - or _",
				  name ? name : "", RV_CL_MAX_NAME);
	q->name = xstrdup_or_null(name);
	sb_addf(&p, "classify-%s.md", name);
	q->prompt = sb_detach(&p, NULL);
	q->release_tags = xstrdup_or_null("v[0-9]*");
	q->ripe_days = 120;
	if (!strcmp(name, "stable")) {
		/* The kernel's and DPDK's convention, and backport branches. */
		add_regex(q, "^[[:space:]]*cc:.*stable@(vger\\.)?(kernel|dpdk)"
			     "\\.org");
		q->upstream_branches = xstrdup_or_null("stable*");
		q->target = xstrdup_or_null("stable");
	} else if (!strcmp(name, "cve")) {
		add_regex(q, "CVE-[0-9]{4}-[0-9]{4,}");
		q->target = xstrdup_or_null("CVE");
	} else {
		q->target = xstrdup_or_null(name);
	}
	q->ripe_days = 120;
	return 0;
}

void rv_question_release(struct rv_question *q)
{
	size_t i;

	free(q->name);
	free(q->prompt);
	free(q->target);
	for (i = 0; i < q->nregex; i++)
		free(q->regex[i]);
	free(q->ids_file);
	free(q->upstream_branches);
	free(q->release_tags);
	memset(q, 0, sizeof(*q));
}

/* The first label key of the config replaces the built-in labels. */
static void labels_from_config(struct rv_question *q, bool *replaced)
{
	size_t i;

	if (*replaced)
		return;
	for (i = 0; i < q->nregex; i++)
		free(q->regex[i]);
	q->nregex = 0;
	free(q->upstream_branches);
	q->upstream_branches = NULL;
	free(q->ids_file);
	q->ids_file = NULL;
	*replaced = true;
}

/* "Cc: stable@dpdk.org" as a regex matching that line of a message. */
static void trailer_regex(const char *t, struct sb *out)
{
	const char *colon = strchr(t, ':');
	const char *p;

	sb_adds(out, "^[[:space:]]*");
	for (p = t; *p; p++) {
		if (p == colon) {
			sb_adds(out, ":.*");
			while (p[1] == ' ' || p[1] == '\t')
				p++;
			continue;
		}
		if (strchr(".[]()*+?{}|^$\\", *p))
			sb_addch(out, '\\');
		sb_addch(out, *p);
	}
}

int rv_question_set(struct rv_question *q, const char *key, const char *value,
		    struct errmsg *err)
{
	/* Which keys were set in config: set per question by the caller. */
	bool *replaced = &q->labels_replaced;
	regex_t re;
	char *end;
	long n;

	if (!value)
		return errmsg_set(err, RV_ERR_INPUT,
				  "classify.%s.%s has no value", q->name, key);
	if (!strcmp(key, "label-regex") || !strcmp(key, "label-trailer")) {
		struct sb r = SB_INIT;
		struct errmsg why = {""};
		int ret;

		if (!strcmp(key, "label-trailer")) {
			if (!strchr(value, ':') ||
			    strlen(value) > RV_CL_MAX_REGEX / 2)
				return errmsg_set(
					err, RV_ERR_INPUT,
					"classify.%s.label-trailer = '%.80s' "
					"is not 'Key: value'",
					q->name, value);
			trailer_regex(value, &r);
		} else {
			sb_adds(&r, value);
		}
		ret = cl_regex_compile(&re, sb_str(&r), &why);
		if (ret < 0) {
			sb_release(&r);
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s.%s: %s", q->name, key,
					  why.msg);
		}
		regfree(&re);
		labels_from_config(q, replaced);
		if (q->nregex >= RV_CL_MAX_REGEXES) {
			sb_release(&r);
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s: more than %d label "
					  "regexes",
					  q->name, RV_CL_MAX_REGEXES);
		}
		q->regex[q->nregex++] = sb_detach(&r, NULL);
		return 0;
	}
	if (!strcmp(key, "label-ids-file")) {
		labels_from_config(q, replaced);
		free(q->ids_file);
		q->ids_file = xstrdup_or_null(value);
		return 0;
	}
	if (!strcmp(key, "label-upstream-branches")) {
		if (!*value || strlen(value) > 256)
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s.label-upstream-branches "
					  "wants a branch pattern such as "
					  "stable-v*",
					  q->name);
		labels_from_config(q, replaced);
		free(q->upstream_branches);
		q->upstream_branches = xstrdup_or_null(value);
		return 0;
	}
	if (!strcmp(key, "release-tags")) {
		if (!*value || strlen(value) > 256)
			return errmsg_set(
				err, RV_ERR_INPUT,
				"classify.%s.release-tags wants a tag "
				"pattern such as v[0-9]*",
				q->name);
		free(q->release_tags);
		q->release_tags = xstrdup_or_null(value);
		return 0;
	}
	if (!strcmp(key, "prompt")) {
		if (!*value || strchr(value, '/') || value[0] == '.' ||
		    strlen(value) > 128)
			return errmsg_set(
				err, RV_ERR_INPUT,
				"classify.%s.prompt = '%.80s' must be "
				"a file name in the prompts directory",
				q->name, value);
		free(q->prompt);
		q->prompt = xstrdup_or_null(value);
		return 0;
	}
	if (!strcmp(key, "target")) {
		if (!*value || strlen(value) > 64 || strpbrk(value, "\r\n"))
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s.target wants one short "
					  "word such as stable",
					  q->name);
		free(q->target);
		q->target = xstrdup_or_null(value);
		return 0;
	}
	if (!strcmp(key, "ripe-days")) {
		n = strtol(value, &end, 10);
		if (end == value || *end || n < 0 || n > 3650)
			return errmsg_set(err, RV_ERR_INPUT,
					  "classify.%s.ripe-days wants days "
					  "from 0 to 3650, not '%.40s'",
					  q->name, value);
		q->ripe_days = (int)n;
		return 0;
	}
	return errmsg_set(err, RV_ERR_INPUT,
			  "classify.%s.%s is not a classify key (label-regex, "
			  "label-trailer, label-ids-file, "
			  "label-upstream-branches, release-tags, prompt, "
			  "target, ripe-days)",
			  q->name, key);
}

int rv_question_check(const struct rv_question *q, struct errmsg *err)
{
	if (!q->nregex && !q->ids_file && !q->upstream_branches)
		return errmsg_set(err, RV_ERR_INPUT,
				  "question '%s' has no labels: set "
				  "label-regex, label-trailer, label-ids-file "
				  "or label-upstream-branches in "
				  "[classify \"%s\"]",
				  q->name, q->name);
	return 0;
}

char *rv_question_strip(const struct rv_question *q, const char *message)
{
	regex_t re[RV_CL_MAX_REGEXES];
	struct sb out = SB_INIT;
	size_t n = 0, i;
	const char *p = message ? message : "";

	for (i = 0; i < q->nregex; i++)
		if (!cl_regex_compile(&re[n], q->regex[i], NULL))
			n++;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *line = xstrndup(p, len);
		bool hit = false;

		for (i = 0; i < n && !hit; i++)
			hit = !regexec(&re[i], line, 0, NULL, 0);
		if (!hit) {
			sb_add(&out, p, len);
			if (e)
				sb_addch(&out, '\n');
		}
		free(line);
		p = e ? e + 1 : p + len;
	}
	for (i = 0; i < n; i++)
		regfree(&re[i]);
	return sb_detach(&out, NULL);
}
