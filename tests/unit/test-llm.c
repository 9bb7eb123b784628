// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Model answers are hostile: JSON is found inside fences and prose,
 * every field is checked, a bad answer is rejected whole with a reason;
 * both APIs' bodies are built and read; categories and titles compare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "review/llm.h"

static int parse(const char *text, struct rv_findings *out, struct errmsg *err)
{
	return rv_llm_parse_answer(text, strlen(text), "a", 2, out, err);
}

static void test_answer_plain(void **state)
{
	struct rv_findings fs = {0};
	struct errmsg err = {""};

	(void)state;
	assert_int_equal(
		parse("{\"findings\": [{\"file\": \"x.c\", \"line_start\": 4,"
		      " \"line_end\": 6, \"severity\": \"HIGH\","
		      " \"category\": \"leak\", \"title\": \"t\","
		      " \"quote\": \"q\", \"cites\": [\"abcdef1\", \"nope\","
		      " 3]}]}",
		      &fs, &err),
		1);
	assert_string_equal(fs.items[0].file, "x.c");
	assert_int_equal(fs.items[0].line_start, 4);
	assert_int_equal(fs.items[0].line_end, 6);
	assert_int_equal(fs.items[0].severity, RV_SEV_HIGH);
	assert_int_equal(fs.items[0].patch, 2);
	assert_string_equal(fs.items[0].voters[0], "a");
	assert_string_equal(fs.items[0].cites[0], "abcdef1");
	assert_string_equal(fs.items[0].cites[1], "");
	rv_findings_release(&fs);
}

static void test_answer_fenced_and_prose(void **state)
{
	struct rv_findings fs = {0};

	(void)state;
	assert_int_equal(parse("I found {one} thing:\n```json\n{\"findings\": "
			       "[{\"file\":"
			       " \"a/b.c\", \"line_start\": \"7\", "
			       "\"severity\": \"low\","
			       " \"title\": \"t\"}]}\n```\nHope it helps.",
			       &fs, NULL),
			 1);
	assert_int_equal(fs.items[0].line_end, 7);
	assert_string_equal(fs.items[0].category, "general");
	rv_findings_release(&fs);
	/* No fence, prose with a brace before the JSON. */
	assert_int_equal(
		parse("Note {x}. [{\"file\": \"b.c\", \"line_start\": 1,"
		      " \"severity\": \"low\", \"title\": \"t\"}]",
		      &fs, NULL),
		1);
	rv_findings_release(&fs);
	assert_int_equal(parse("```\n{\"findings\": []}\n```", &fs, NULL), 0);
	assert_int_equal(fs.n, 0);
}

static void test_answer_no_escapes(void **state)
{
	struct rv_findings fs = {0};

	(void)state;
	assert_int_equal(
		parse("{\"findings\": [{\"file\": \"x.c\", \"line_start\": 1,"
		      " \"severity\": \"low\", \"title\": "
		      "\"\\u001b]0;pwn\\u0007t\","
		      " \"explanation\": \"a\\nb\\u001b[31m\"}]}",
		      &fs, NULL),
		1);
	assert_string_equal(fs.items[0].title, "?]0;pwn?t");
	assert_string_equal(fs.items[0].explanation, "a\nb?[31m");
	rv_findings_release(&fs);
}

static void expect_reject(const char *text, const char *why)
{
	struct rv_findings fs = {0};
	struct errmsg err = {""};

	assert_int_equal(parse(text, &fs, &err), RV_ERR_INPUT);
	assert_int_equal(fs.n, 0);
	if (!strstr(err.msg, why))
		fail_msg("'%s' does not say '%s'", err.msg, why);
}

static void test_answer_rejected(void **state)
{
	char big[8192];
	size_t n = 0;
	int i;

	(void)state;
	expect_reject("", "empty");
	expect_reject("Looks good to me!", "no JSON object");
	expect_reject("{\"findings\": [{\"file\": ", "no JSON object");
	expect_reject("{\"result\": []}", "no \"findings\" list");
	expect_reject(
		"{\"findings\": [{\"line_start\": 1, \"severity\": \"low\","
		" \"title\": \"t\"}]}",
		"finding 1 has no usable file");
	expect_reject(
		"{\"findings\": [{\"file\": \"/etc/passwd\", \"line_start\":"
		" 1, \"severity\": \"low\", \"title\": \"t\"}]}",
		"no usable file");
	expect_reject(
		"{\"findings\": [{\"file\": \"a/../../x\", \"line_start\":"
		" 1, \"severity\": \"low\", \"title\": \"t\"}]}",
		"no usable file");
	expect_reject("{\"findings\": [{\"file\": \"a.c\", \"line_start\": 0,"
		      " \"severity\": \"low\", \"title\": \"t\"}]}",
		      "no line_start");
	expect_reject(
		"{\"findings\": [{\"file\": \"a.c\", \"line_start\": 9,"
		" \"line_end\": 3, \"severity\": \"low\", \"title\": \"t\"}]}",
		"bad line range");
	expect_reject("{\"findings\": [{\"file\": \"a.c\", \"line_start\": 9,"
		      " \"severity\": \"apocalyptic\", \"title\": \"t\"}]}",
		      "no valid severity");
	expect_reject("{\"findings\": [{\"file\": \"a.c\", \"line_start\": 9,"
		      " \"severity\": \"low\"}]}",
		      "missing or oversized field");
	expect_reject("{\"findings\": [{\"file\": \"a.c\", \"line_start\": 9,"
		      " \"severity\": \"low\", \"title\": 42}]}",
		      "missing or oversized field");
	expect_reject("{\"findings\": [7]}", "finding 1 is not an object");
	/* 51 findings: more than any review needs. */
	n += (size_t)snprintf(big, sizeof(big), "{\"findings\": [");
	for (i = 0; i < RV_LLM_MAX_FINDINGS + 1; i++)
		n += (size_t)snprintf(
			big + n, sizeof(big) - n,
			"%s{\"file\": \"a.c\", \"line_start\": 1,"
			" \"severity\": \"low\", \"title\": \"t\"}",
			i ? "," : "");
	snprintf(big + n, sizeof(big) - n, "]}");
	expect_reject(big, "more than 50 findings");
}

static void test_provider_bodies(void **state)
{
	struct rv_llm_voter o = {0}, a = {0};
	struct sb body = SB_INIT, text = SB_INIT;
	long in, out;
	char *url;

	(void)state;
	o.provider = RV_PROVIDER_OPENAI;
	o.url = "http://h:1/v1/";
	o.model = "m";
	a = o;
	a.provider = RV_PROVIDER_ANTHROPIC;
	url = rv_llm_endpoint(&o);
	assert_string_equal(url, "http://h:1/v1/chat/completions");
	free(url);
	url = rv_llm_endpoint(&a);
	assert_string_equal(url, "http://h:1/v1/messages");
	free(url);
	a.url = "http://h/x/messages";
	url = rv_llm_endpoint(&a);
	assert_string_equal(url, "http://h/x/messages");
	free(url);

	assert_int_equal(rv_llm_request_body(&o, "SYS", "USER", &body), 0);
	assert_non_null(
		strstr(body.buf, "\"role\":\"system\",\"content\":\"SYS\""));
	assert_non_null(strstr(body.buf, "\"max_tokens\":2048"));
	sb_reset(&body);
	assert_int_equal(rv_llm_request_body(&a, "SYS", "USER", &body), 0);
	assert_non_null(strstr(body.buf, "\"system\":\"SYS\""));
	assert_null(strstr(body.buf, "\"role\":\"system\""));
	sb_release(&body);

	static const char ob[] =
		"{\"choices\":[{\"message\":{\"content\":\"hi\"}}],"
		"\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}";
	assert_int_equal(
		rv_llm_extract(&o, ob, strlen(ob), &text, &in, &out, NULL), 0);
	assert_string_equal(text.buf, "hi");
	assert_int_equal(in, 12);
	assert_int_equal(out, 3);
	sb_reset(&text);
	static const char ab[] =
		"{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
		"{\"type\":\"text\",\"text\":\"b\"}],"
		"\"usage\":{\"input_tokens\":5,\"output_tokens\":-4}}";
	assert_int_equal(
		rv_llm_extract(&a, ab, strlen(ab), &text, &in, &out, NULL), 0);
	assert_string_equal(text.buf, "ab");
	assert_int_equal(in, 5);
	assert_int_equal(out, 0); /* a negative count is not believed */
	sb_reset(&text);
	assert_int_equal(
		rv_llm_extract(&o, ab, strlen(ab), &text, &in, &out, NULL),
		RV_ERR_INPUT);
	assert_int_equal(
		rv_llm_extract(&a, "{\"content\":", 11, &text, &in, &out, NULL),
		RV_ERR_INPUT);
	sb_release(&text);
	assert_int_equal(rv_provider_parse("openai"), RV_PROVIDER_OPENAI);
	assert_int_equal(rv_provider_parse("anthropic"), RV_PROVIDER_ANTHROPIC);
	assert_int_equal(rv_provider_parse("gemini"), -1);
}

static void test_categories_and_titles(void **state)
{
	char a[64], b[64];

	(void)state;
	rv_category_normalise("Buffer_Overflow", a, sizeof(a));
	rv_category_normalise("out-of-bounds", b, sizeof(b));
	assert_string_equal(a, "bounds");
	assert_string_equal(b, "bounds");
	rv_category_normalise("NULL pointer dereference", a, sizeof(a));
	assert_string_equal(a, "null-deref");
	rv_category_normalise("Logic Error", a, sizeof(a));
	assert_string_equal(a, "logic-error");
	rv_category_normalise("null_pointer_dereference", a, sizeof(a));
	assert_string_equal(a, "null-deref");
	assert_true(rv_titles_similar("loop reads past the end of items",
				      "the loop reads items[n], past the end"));
	assert_false(rv_titles_similar("lock leaked on the error path",
				       "loop reads past the end"));
	assert_false(rv_titles_similar("leak", "leak"));
}

/*
 * The token counters: their endpoints and bodies per provider, and
 * their answers are hostile: a count is believed only between the
 * bytes over 32 and the bytes; a missing or absurd one is -1.
 */
static long count_of(const struct rv_llm_voter *v, const char *answer)
{
	return rv_llm_count_parse(v, answer, strlen(answer));
}

static void test_token_counters(void **state)
{
	struct rv_llm_voter v = {0};
	struct sb body = SB_INIT, req = SB_INIT;
	char *url;

	(void)state;
	v.model = "m";
	v.url = "http://h:8080/v1/";
	assert_int_equal(rv_llm_count_mode(&v), RV_COUNT_TOKENIZE);
	url = rv_llm_count_endpoint(&v);
	assert_string_equal(url, "http://h:8080/tokenize");
	free(url);
	v.url = "http://h:8080/v1/chat/completions";
	url = rv_llm_count_endpoint(&v);
	assert_string_equal(url, "http://h:8080/tokenize");
	free(url);
	assert_int_equal(rv_llm_request_body(&v, "sys", "user text", &req), 0);
	assert_int_equal(rv_llm_count_body(&v, req.buf, &body), 0);
	assert_non_null(strstr(body.buf, "\"content\":\"sys\\nuser text\""));
	assert_non_null(strstr(body.buf, "\"prompt\":\"sys\\nuser text\""));
	assert_int_equal(count_of(&v, "{\"count\": 7, \"tokens\": []}"), 7);
	assert_int_equal(count_of(&v, "{\"tokens\": [1, 2, 3]}"), 3);
	assert_int_equal(count_of(&v, "{\"count\": -4}"), -1);
	assert_int_equal(count_of(&v, "{\"count\": \"9\"}"), -1);
	assert_int_equal(count_of(&v, "not json"), -1);
	sb_release(&body);
	sb_release(&req);

	v.provider = RV_PROVIDER_ANTHROPIC;
	v.url = "https://api.anthropic.com/v1";
	assert_int_equal(rv_llm_count_mode(&v), RV_COUNT_ANTHROPIC);
	url = rv_llm_count_endpoint(&v);
	assert_string_equal(
		url, "https://api.anthropic.com/v1/messages/count_tokens");
	free(url);
	assert_int_equal(rv_llm_request_body(&v, "sys", "user", &req), 0);
	assert_int_equal(rv_llm_count_body(&v, req.buf, &body), 0);
	assert_null(strstr(body.buf, "max_tokens"));
	assert_non_null(strstr(body.buf, "\"system\":\"sys\""));
	assert_int_equal(count_of(&v, "{\"input_tokens\": 1234}"), 1234);
	v.count_tokens = RV_COUNT_NONE;
	assert_int_equal(rv_llm_count_mode(&v), RV_COUNT_NONE);
	sb_release(&body);
	sb_release(&req);

	/* A count with a margin, never above the bytes. */
	assert_int_equal(rv_llm_input_bound(1000, 4000), 1000 + 50 + 64);
	assert_int_equal(rv_llm_input_bound(-1, 4000), 4000);
	/* More tokens than bytes, or far too few: not believed. */
	assert_int_equal(rv_llm_input_bound(5000, 4000), 4000);
	assert_int_equal(rv_llm_input_bound(10, 4000), 4000);
	assert_int_equal(rv_llm_input_bound(3990, 4000), 4000);

	assert_int_equal(rv_count_tokens_parse("auto"), RV_COUNT_AUTO);
	assert_int_equal(rv_count_tokens_parse("tokenize"), RV_COUNT_TOKENIZE);
	assert_int_equal(rv_count_tokens_parse("bytes"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_plain),
		cmocka_unit_test(test_answer_fenced_and_prose),
		cmocka_unit_test(test_answer_rejected),
		cmocka_unit_test(test_answer_no_escapes),
		cmocka_unit_test(test_provider_bodies),
		cmocka_unit_test(test_categories_and_titles),
		cmocka_unit_test(test_token_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
