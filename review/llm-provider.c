// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-provider.c - the two LLM APIs quorum speaks: OpenAI chat
 * completions (vLLM, llama.cpp server, Ollama and hosted ones) and Anthropic
 * messages. Only request bodies and answer extraction live here; the
 * transfer is llm-run.c's.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "llm.h"

int rv_provider_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "openai"))
		return RV_PROVIDER_OPENAI;
	if (!strcmp(s, "anthropic"))
		return RV_PROVIDER_ANTHROPIC;
	return -1;
}

int rv_count_tokens_parse(const char *s)
{
	static const char *const names[] = {
		[RV_COUNT_AUTO] = "auto",
		[RV_COUNT_NONE] = "none",
		[RV_COUNT_ANTHROPIC] = "anthropic",
		[RV_COUNT_TOKENIZE] = "tokenize",
	};
	size_t i;

	for (i = 0; s && i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

enum rv_count_tokens rv_llm_count_mode(const struct rv_llm_voter *v)
{
	if (v->count_tokens != RV_COUNT_AUTO)
		return v->count_tokens;
	return v->provider == RV_PROVIDER_ANTHROPIC ? RV_COUNT_ANTHROPIC
						    : RV_COUNT_TOKENIZE;
}

/* url without a trailing "/", and without suffix when it ends so. */
static size_t url_cut(const char *url, const char *suffix)
{
	size_t n = strlen(url), m = strlen(suffix);

	while (n && url[n - 1] == '/')
		n--;
	if (n >= m && !strncmp(url + n - m, suffix, m))
		n -= m;
	while (n && url[n - 1] == '/')
		n--;
	return n;
}

char *rv_llm_count_endpoint(const struct rv_llm_voter *v)
{
	const char *url = v->url ? v->url : "";
	struct sb sb = SB_INIT;
	size_t n;

	if (rv_llm_count_mode(v) == RV_COUNT_ANTHROPIC) {
		/* .../v1 or .../v1/messages -> .../v1/messages/count_tokens */
		n = url_cut(url, "/messages");
		sb_add(&sb, url, n);
		sb_adds(&sb, "/messages/count_tokens");
	} else {
		/* llama.cpp and vLLM serve /tokenize at the root, not /v1. */
		n = url_cut(url, "/chat/completions");
		while (n && url[n - 1] == '/')
			n--;
		if (n >= 3 && !strncmp(url + n - 3, "/v1", 3))
			n -= 3;
		sb_add(&sb, url, n);
		sb_adds(&sb, "/tokenize");
	}
	return sb_detach(&sb, NULL);
}

int rv_llm_count_body(const struct rv_llm_voter *v, const char *request,
		      struct sb *out)
{
	cJSON *root = cJSON_Parse(request), *m;
	struct sb all = SB_INIT;
	char *text = NULL;
	int ret = RV_ERR_NOMEM;

	if (!root)
		return RV_ERR_INPUT;
	if (rv_llm_count_mode(v) == RV_COUNT_ANTHROPIC) {
		/* The same request, less what count_tokens does not take. */
		cJSON_DeleteItemFromObjectCaseSensitive(root, "max_tokens");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "temperature");
		text = cJSON_PrintUnformatted(root);
	} else {
		cJSON *t = cJSON_CreateObject();

		/* Every message's text, as the template would put them. */
		cJSON_ArrayForEach(
			m, cJSON_GetObjectItemCaseSensitive(root, "messages"))
		{
			const cJSON *c =
				cJSON_GetObjectItemCaseSensitive(m, "content");

			if (cJSON_IsString(c))
				sb_addf(&all, "%s%s", all.len ? "\n" : "",
					c->valuestring);
		}
		/* llama.cpp reads content, vLLM model and prompt. */
		if (t) {
			cJSON_AddStringToObject(t, "model",
						v->model ? v->model : "");
			cJSON_AddStringToObject(t, "content", sb_str(&all));
			cJSON_AddStringToObject(t, "prompt", sb_str(&all));
			text = cJSON_PrintUnformatted(t);
			cJSON_Delete(t);
		}
	}
	if (text)
		ret = sb_adds(out, text) < 0 ? RV_ERR_INPUT : 0;
	cJSON_free(text);
	cJSON_Delete(root);
	sb_release(&all);
	return ret;
}

long rv_llm_count_parse(const struct rv_llm_voter *v, const char *body,
			size_t len)
{
	cJSON *root = body ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *n;
	long count = -1;

	if (!root)
		return -1;
	if (rv_llm_count_mode(v) == RV_COUNT_ANTHROPIC) {
		n = cJSON_GetObjectItemCaseSensitive(root, "input_tokens");
	} else {
		n = cJSON_GetObjectItemCaseSensitive(root, "count");
		if (!n) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(
				root, "tokens");

			if (cJSON_IsArray(t))
				count = (long)cJSON_GetArraySize(t);
		}
	}
	if (cJSON_IsNumber(n) && n->valuedouble >= 0 && n->valuedouble < 1e12)
		count = (long)n->valuedouble;
	cJSON_Delete(root);
	return count;
}

int rv_llm_body_max_tokens(const struct rv_llm_voter *v, char **body,
			   int max_tokens)
{
	cJSON *root = cJSON_Parse(*body);
	char *text;

	(void)v;
	if (!root)
		return RV_ERR_INPUT;
	cJSON_DeleteItemFromObjectCaseSensitive(root, "max_tokens");
	cJSON_AddNumberToObject(root, "max_tokens", max_tokens);
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		return RV_ERR_NOMEM;
	free(*body);
	*body = xstrdup_or_null(text);
	cJSON_free(text);
	return 0;
}

char *rv_llm_endpoint(const struct rv_llm_voter *v)
{
	const char *path = v->provider == RV_PROVIDER_ANTHROPIC
				   ? "/messages"
				   : "/chat/completions";
	struct sb sb = SB_INIT;
	const char *url = v->url ? v->url : "";
	size_t n = strlen(url);

	if (ends_with(url, path))
		return xstrdup_or_null(url);
	while (n && url[n - 1] == '/')
		n--;
	sb_add(&sb, url, n);
	sb_adds(&sb, path);
	return sb_detach(&sb, NULL);
}

int rv_llm_request_body(const struct rv_llm_voter *v, const char *system,
			const char *user, struct sb *out)
{
	cJSON *root = cJSON_CreateObject(), *msgs, *m;
	char *text;
	int ret = RV_ERR_NOMEM;

	if (!root)
		return RV_ERR_NOMEM;
	cJSON_AddStringToObject(root, "model", v->model ? v->model : "");
	cJSON_AddNumberToObject(root, "max_tokens",
				v->max_tokens > 0 ? v->max_tokens : 2048);
	cJSON_AddNumberToObject(root, "temperature", 0);
	if (v->provider == RV_PROVIDER_ANTHROPIC)
		cJSON_AddStringToObject(root, "system", system);
	msgs = cJSON_AddArrayToObject(root, "messages");
	if (v->provider != RV_PROVIDER_ANTHROPIC) {
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "system");
		cJSON_AddStringToObject(m, "content", system);
		cJSON_AddItemToArray(msgs, m);
	}
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddStringToObject(m, "content", user);
	cJSON_AddItemToArray(msgs, m);
	text = cJSON_PrintUnformatted(root);
	if (text)
		ret = sb_adds(out, text) < 0 ? RV_ERR_INPUT : 0;
	cJSON_free(text);
	cJSON_Delete(root);
	return ret;
}

static long usage_field(const cJSON *usage, const char *name)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(usage, name);

	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e12)
		return 0;
	return (long)n->valuedouble;
}

int rv_llm_extract(const struct rv_llm_voter *v, const char *body, size_t len,
		   struct sb *text, long *tokens_in, long *tokens_out,
		   struct errmsg *err)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *usage, *c = NULL, *it;
	int ret = RV_ERR_INPUT;

	*tokens_in = *tokens_out = 0;
	if (!root)
		return errmsg_set(err, RV_ERR_INPUT,
				  "the answer is not JSON (%zu bytes)", len);
	usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	if (cJSON_IsObject(usage)) {
		bool a = v->provider == RV_PROVIDER_ANTHROPIC;

		*tokens_in = usage_field(usage,
					 a ? "input_tokens" : "prompt_tokens");
		*tokens_out = usage_field(usage, a ? "output_tokens"
						   : "completion_tokens");
	}
	if (v->provider == RV_PROVIDER_ANTHROPIC) {
		/* The text blocks of content[], concatenated. */
		const cJSON *content =
			cJSON_GetObjectItemCaseSensitive(root, "content");

		if (!cJSON_IsArray(content)) {
			errmsg_set(err, ret, "the answer has no content");
			goto out;
		}
		cJSON_ArrayForEach(it, content)
		{
			const cJSON *t =
				cJSON_GetObjectItemCaseSensitive(it, "text");

			if (cJSON_IsString(t) &&
			    sb_adds(text, t->valuestring)) {
				errmsg_set(err, ret, "the answer is too long");
				goto out;
			}
			if (cJSON_IsString(t))
				c = t;
		}
	} else {
		const cJSON *choices =
			cJSON_GetObjectItemCaseSensitive(root, "choices");
		const cJSON *msg;

		msg = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(choices, 0), "message");
		c = cJSON_GetObjectItemCaseSensitive(msg, "content");
		if (cJSON_IsString(c) && sb_adds(text, c->valuestring)) {
			errmsg_set(err, ret, "the answer is too long");
			goto out;
		}
	}
	if (!cJSON_IsString(c)) {
		errmsg_set(err, ret, "the answer has no text");
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(root);
	return ret;
}

bool rv_llm_cut_short(const struct rv_llm_voter *v, const char *body,
		      size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *r;
	bool cut = false;

	if (!root)
		return false;
	if (v->provider == RV_PROVIDER_ANTHROPIC) {
		r = cJSON_GetObjectItemCaseSensitive(root, "stop_reason");
		cut = cJSON_IsString(r) &&
		      !strcmp(r->valuestring, "max_tokens");
	} else {
		r = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
						   root, "choices"),
					   0),
			"finish_reason");
		cut = cJSON_IsString(r) && !strcmp(r->valuestring, "length");
	}
	cJSON_Delete(root);
	return cut;
}

int rv_llm_req_prepare(const struct rv_llm_voter *v, const char *system,
		       const char *user, struct rv_llm_req *r,
		       const char **reason)
{
	struct sb body = SB_INIT;

	if (rv_llm_request_body(v, system, user, &body) < 0) {
		sb_release(&body);
		*reason = "cannot build the request";
		return -1;
	}
	rv_llm_req_with_body(v, sb_detach(&body, NULL), r);
	return 0;
}

void rv_llm_req_with_body(const struct rv_llm_voter *v, char *body,
			  struct rv_llm_req *r)
{
	struct sb hdr = SB_INIT;

	r->url = rv_llm_endpoint(v);
	r->body = body;
	r->timeout = v->timeout > 0 ? v->timeout : 120;
	r->group_max = v->max_parallel > 0 ? v->max_parallel : 4;
	r->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (v->key && *v->key) {
		if (v->provider == RV_PROVIDER_ANTHROPIC)
			sb_addf(&hdr, "x-api-key: %s", v->key);
		else
			sb_addf(&hdr, "Authorization: Bearer %s", v->key);
		r->headers = curl_slist_append(r->headers, hdr.buf);
		/* The key was in hdr: wipe it before the memory goes back. */
		memset(hdr.buf, 0, hdr.alloc);
		sb_release(&hdr);
	}
	if (v->provider == RV_PROVIDER_ANTHROPIC)
		r->headers = curl_slist_append(r->headers,
					       "anthropic-version: 2023-06-01");
}
