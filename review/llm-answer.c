// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-answer.c - a model's answer -> findings. Every answer is hostile:
 * it is looked for inside code fences and prose, parsed with cJSON,
 * checked field by field against prompts/schema.json's shape, and
 * rejected whole when it does not fit (the voter then abstains).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "llm.h"

/* How many '{' or '[' we try as the start of the JSON. */
#define MAX_STARTS 32
/* A finding spanning more lines than this is not pointing at anything. */
#define MAX_SPAN 400

static cJSON *parse_from(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int tries = 0;

	while (p < end && tries < MAX_STARTS) {
		const char *ret_end = NULL;
		cJSON *root;

		while (p < end && *p != '{' && *p != '[')
			p++;
		if (p >= end)
			break;
		tries++;
		root = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &ret_end,
						 false);
		if (root && (cJSON_IsObject(root) || cJSON_IsArray(root)))
			return root;
		cJSON_Delete(root);
		p++;
	}
	return NULL;
}

/* The body of the first ``` fence, or the whole text. */
static void unfence(const char **text, size_t *len)
{
	const char *s = *text, *end = s + *len, *open, *close, *nl;

	open = memmem(s, *len, "```", 3);
	if (!open)
		return;
	nl = memchr(open, '\n', (size_t)(end - open));
	if (!nl)
		return;
	close = memmem(nl, (size_t)(end - nl), "```", 3);
	if (!close)
		close = end;
	*text = nl + 1;
	*len = (size_t)(close - nl - 1);
}

static bool safe_path(const char *p)
{
	const char *c;

	if (!*p || *p == '/' || strlen(p) > RV_DIFF_MAX_PATH)
		return false;
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '\\')
			return false;
	/* No ".." component anywhere. */
	for (c = p; c; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		if (c[0] == '.' && c[1] == '.' && (!c[2] || c[2] == '/'))
			return false;
	}
	return true;
}

static const char *str_field(const cJSON *o, const char *name, size_t cap,
			     bool *bad)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!v || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsString(v) || strlen(v->valuestring) > cap) {
		*bad = true;
		return NULL;
	}
	return v->valuestring;
}

static bool int_field(const cJSON *o, const char *name, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (cJSON_IsString(v)) {
		char *e;
		long n = strtol(v->valuestring, &e, 10);

		if (e == v->valuestring || *e || n < 1 || n > 10000000)
			return false;
		*out = (int)n;
		return true;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
	    v->valuedouble > 10000000)
		return false;
	*out = (int)v->valuedouble;
	return true;
}

/* Control characters (escape sequences) become '?'; tabs stay. */
static void printable(char *s, bool multiline)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t' && !(multiline && c == '\n')) ||
		    c == 0x7f)
			*s = '?';
	}
}

static bool hex_id(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 7 || n > RV_OID_HEXSZ)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int one_finding(const cJSON *o, size_t idx, const char *voter, int patch,
		       struct rv_finding *f, struct errmsg *err)
{
	const char *sev, *file;
	const cJSON *cites, *c;
	bool bad = false;
	size_t nc = 0;
	int sv;

	if (!cJSON_IsObject(o))
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu is not an object", idx + 1);
	file = str_field(o, "file", RV_DIFF_MAX_PATH, &bad);
	if (!file || !safe_path(file))
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu has no usable file", idx + 1);
	if (!int_field(o, "line_start", &f->line_start))
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu has no line_start", idx + 1);
	f->line_end = f->line_start;
	if (cJSON_GetObjectItemCaseSensitive(o, "line_end") &&
	    !int_field(o, "line_end", &f->line_end))
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu has a bad line_end", idx + 1);
	if (f->line_end < f->line_start ||
	    f->line_end - f->line_start > MAX_SPAN)
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu has a bad line range", idx + 1);
	sev = str_field(o, "severity", 16, &bad);
	sv = rv_severity_parse(sev);
	if (sv < 0)
		return errmsg_set(err, RV_ERR_INPUT,
				  "finding %zu has no valid severity", idx + 1);
	f->severity = (enum rv_severity)sv;
	f->file = (char *)file;
	f->category = (char *)str_field(o, "category", 64, &bad);
	f->title = (char *)str_field(o, "title", RV_LLM_MAX_TITLE, &bad);
	f->function = (char *)str_field(o, "function", 256, &bad);
	f->explanation =
		(char *)str_field(o, "explanation", RV_LLM_MAX_TEXT, &bad);
	f->quote = (char *)str_field(o, "quote", RV_LLM_MAX_TEXT, &bad);
	if (bad || !f->title || !*f->title)
		return errmsg_set(
			err, RV_ERR_INPUT,
			"finding %zu has a missing or oversized field",
			idx + 1);
	if (!f->category || !*f->category)
		f->category = (char *)"general";
	cites = cJSON_GetObjectItemCaseSensitive(o, "cites");
	if (cites && !cJSON_IsNull(cites)) {
		if (!cJSON_IsArray(cites))
			return errmsg_set(err, RV_ERR_INPUT,
					  "finding %zu: cites is not a list",
					  idx + 1);
		cJSON_ArrayForEach(c, cites)
		{
			if (!cJSON_IsString(c) || !hex_id(c->valuestring))
				continue; /* not a commit id: not a citation */
			if (nc < ARRAY_SIZE(f->cites))
				snprintf(f->cites[nc++], sizeof(f->cites[0]),
					 "%s", c->valuestring);
		}
	}
	f->patch = patch;
	return 0;
}

int rv_llm_parse_answer(const char *text, size_t len, const char *voter,
			int patch, struct rv_findings *out, struct errmsg *err)
{
	struct rv_findings tmp = {0};
	const cJSON *list, *o;
	cJSON *root;
	size_t i = 0;
	int ret;

	if (!text || !len)
		return errmsg_set(err, RV_ERR_INPUT, "the answer is empty");
	unfence(&text, &len);
	root = parse_from(text, len);
	if (!root)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the answer holds no JSON object");
	list = cJSON_IsArray(root)
		       ? root
		       : cJSON_GetObjectItemCaseSensitive(root, "findings");
	if (!cJSON_IsArray(list)) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the answer has no \"findings\" list");
		goto out;
	}
	if (cJSON_GetArraySize(list) > RV_LLM_MAX_FINDINGS) {
		ret = errmsg_set(err, RV_ERR_INPUT,
				 "the answer has more than %d findings",
				 RV_LLM_MAX_FINDINGS);
		goto out;
	}
	cJSON_ArrayForEach(o, list)
	{
		struct rv_finding f = {0};

		ret = one_finding(o, i++, voter, patch, &f, err);
		if (ret < 0)
			goto out;
		f.voters = (char **)&voter;
		f.nvoters = 1;
		rv_findings_add(&tmp, &f);
	}
	for (i = 0; i < tmp.n; i++) {
		struct rv_finding *f = &tmp.items[i];

		/* Nothing a terminal or a mail reader would act on. */
		printable(f->function, false);
		printable(f->category, false);
		printable(f->title, false);
		printable(f->explanation, true);
		printable(f->quote, true);
		rv_findings_add(out, f);
	}
	ret = (int)tmp.n;
out:
	rv_findings_release(&tmp);
	cJSON_Delete(root);
	return ret;
}
