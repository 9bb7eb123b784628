// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * voter-llm-provider.c - the two LLM APIs quorum speaks: OpenAI chat
 * completions (vLLM, llama.cpp server, Ollama and hosted ones) and Anthropic
 * messages. Only request bodies and answer extraction live here; the
 * transfer is voter-llm-run.c's.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "voter-llm.h"

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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
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
