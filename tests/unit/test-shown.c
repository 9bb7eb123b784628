// SPDX-License-Identifier: GPL-2.0-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mailparse/mailparse.h"

static char *visible(const char *s, unsigned flags)
{
	struct sb sb = SB_INIT;

	assert_int_equal(sb_add_visible(&sb, s, flags), 0);
	return sb_detach(&sb, NULL);
}

#define assert_visible(in, flags, want)                                        \
	do {                                                                   \
		char *got_ = visible(in, flags);                               \
		assert_string_equal(got_, want);                               \
		free(got_);                                                    \
	} while (0)

/* Every C0 control, and DEL, gets a visible escape. */
static void test_c0_and_del(void **state)
{
	assert_visible("a\033]52;c;ZXZpbA==\007b", 0, "a\\e]52;c;ZXZpbA==\\ab");
	assert_visible("\033[2J", 0, "\\e[2J");
	assert_visible("x\by\tz\v\f\r\n", 0, "x\\by\\tz\\v\\f\\r\\n");
	assert_visible("\001\037\177", 0, "\\x01\\x1f\\x7f");
	assert_visible("plain text, no change", 0, "plain text, no change");
	assert_visible(NULL, 0, "");
}

/* A newline forges no line unless the text may have lines. */
static void test_newline_and_tab(void **state)
{
	assert_visible("a\nb", 0, "a\\nb");
	assert_visible("a\nb", SB_VIS_NEWLINE, "a\nb");
	assert_visible("a\r\nb\rc", SB_VIS_NEWLINE, "a\nb\\rc");
	assert_visible("\tx = 1;", SB_VIS_TAB, "\tx = 1;");
	assert_visible("\tx = 1;", 0, "\\tx = 1;");
}

/* C1 as UTF-8, and a raw 0x9b that is no UTF-8 at all. */
static void test_c1_and_8bit(void **state)
{
	assert_visible("a\xc2\x9b"
		       "2J",
		       0, "a<U+009B>2J");
	assert_visible("a\x9b"
		       "2J",
		       0, "a\\x9b2J");
	assert_visible("\xc2\x85", 0, "<U+0085>");
	/* Overlong ESC, a surrogate, a truncated sequence, past U+10FFFF. */
	assert_visible("\xc0\x9b", 0, "\\xc0\\x9b");
	assert_visible("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	assert_visible("\xe2\x80", 0, "\\xe2\\x80");
	assert_visible("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");
	/* Text in other scripts is text. */
	assert_visible("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xa7",
		       0,
		       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xa7");
}

/* What reorders or hides text is named. */
static void test_bidi_and_invisible(void **state)
{
	assert_visible("gnp.\xe2\x80\xae"
		       "exe",
		       0, "gnp.<U+202E>exe");
	assert_visible("\xe2\x81\xa6x\xe2\x81\xa9", 0, "<U+2066>x<U+2069>");
	assert_visible("\xe2\x80\x8f\xe2\x80\x8e\xd8\x9c", 0,
		       "<U+200F><U+200E><U+061C>");
	assert_visible("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0,
		       "<U+202A><U+202B><U+202C><U+202D>");
	assert_visible("ma\xe2\x80\x8bin.c", 0, "ma<U+200B>in.c");
	assert_visible("\xef\xbb\xbf", 0, "<U+FEFF>");
	assert_visible("a\xe2\x80\xa8z", SB_VIS_NEWLINE, "a<U+2028>z");
	assert_visible("\xf3\xa0\x81\x81", 0, "<U+E0041>");
	assert_true(mp_codepoint_hidden(0x202e));
	assert_false(mp_codepoint_hidden(0xe9));
}

/* A name is quoted as git quotes it, only when it must be. */
static void test_quote(void **state)
{
	assert_visible("net/core/dev.c", SB_VIS_QUOTE, "net/core/dev.c");
	assert_visible("a\nb.c", SB_VIS_QUOTE, "\"a\\nb.c\"");
	assert_visible("a\\nb.c", SB_VIS_QUOTE, "\"a\\\\nb.c\"");
	assert_visible("say \"hi\".c", SB_VIS_QUOTE, "\"say \\\"hi\\\".c\"");
	assert_visible("tab\there", SB_VIS_QUOTE, "\"tab\\there\"");
	assert_visible("\xe2\x80\xae.c", SB_VIS_QUOTE, "\"<U+202E>.c\"");
	assert_visible("caf\xc3\xa9.c", SB_VIS_QUOTE, "caf\xc3\xa9.c");
}

/* Cleaning twice is cleaning once: a report is cleaned after its fields. */
static void test_idempotent(void **state)
{
	const char *in = "\033]52;\x9b\xc2\x9b\xe2\x80\xae\\e\n\"q\"";
	char *once = visible(in, SB_VIS_QUOTE);
	char *twice = visible(once, SB_VIS_NEWLINE | SB_VIS_TAB);

	assert_string_equal(once, twice);
	free(twice);
	twice = visible(once, 0);
	assert_string_equal(once, twice);
	free(once);
	free(twice);
}

/* The cap holds: a cleaned string that does not fit leaves sb as it was. */
static void test_cap(void **state)
{
	struct sb sb;

	sb_init(&sb, 8);
	assert_int_equal(sb_adds(&sb, "ab"), 0);
	assert_int_equal(sb_add_visible(&sb, "\033\033\033\033", 0), -1);
	assert_string_equal(sb_str(&sb), "ab");
	sb_release(&sb);
}

static void test_json(void **state)
{
	struct sb sb = SB_INIT;

	assert_int_equal(sb_add_json_visible(&sb, "{\"t\": \"a\xc2\x9b"
						  "b\xe2\x80\xae"
						  "c\x7f\x9b\xf3\xa0\x81\x81"
						  "\xc3\xa9\"}"),
			 0);
	assert_string_equal(sb_str(&sb), "{\"t\": \"a\\u009bb\\u202ec\\u007f"
					 "\\ufffd\\udb40\\udc41\xc3\xa9\"}");
	sb_release(&sb);
}

static void test_mp_shown(void **state)
{
	char buf[16];

	assert_string_equal(mp_shown("a\nb", buf, sizeof(buf)), "a\\nb");
	assert_string_equal(
		mp_shown("\033\033\033\033\033\033\033", buf, sizeof(buf)),
		"\\e\\e\\e\\e\\e\\e...");
	/* Cut on a character, never inside one. */
	assert_string_equal(
		mp_shown("abcdefghijk\xc3\xa9\xc3\xa9", buf, sizeof(buf)),
		"abcdefghijk...");
}

static void test_looks_like_key(void **state)
{
	assert_true(mp_looks_like_key("sk-SECRETKEY0123456789abcdef"));
	assert_true(mp_looks_like_key("sk-proj-Ab12Cd34Ef56Gh78"));
	assert_true(mp_looks_like_key("sk-ant-api03-xyzxyzxyz"));
	assert_true(
		mp_looks_like_key("ghp_16C7e42F292c6912E7710c838347Ae178B4a"));
	assert_true(mp_looks_like_key("AIzaSyA1b2C3d4E5f6G7h8I9j0"));
	assert_true(mp_looks_like_key("3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"));
	assert_true(mp_looks_like_key("aB3dE6gH9jK2mN5pQ8sT1vW4"));
	assert_false(mp_looks_like_key("QUORUM_KEY_A"));
	assert_false(mp_looks_like_key("OPENAI_API_KEY"));
	assert_false(
		mp_looks_like_key("QUORUM_OPENAI_KEY_FOR_PRODUCTION_2024"));
	assert_false(mp_looks_like_key("sk-short"));
	assert_false(mp_looks_like_key(""));
	assert_false(mp_looks_like_key(NULL));
	assert_true(mp_env_name_ok("QUORUM_KEY_A"));
	assert_true(mp_env_name_ok("_x1"));
	assert_false(mp_env_name_ok("sk-abc"));
	assert_false(mp_env_name_ok("$QUORUM_KEY"));
	assert_false(mp_env_name_ok("1ABC"));
	assert_false(mp_env_name_ok(""));
}

static void test_url_shown(void **state)
{
	struct sb sb = SB_INIT;

	sb_add_url_shown(&sb, "https://bob:hunter2@llm.example/v1");
	assert_string_equal(sb_str(&sb), "https://bob:***@llm.example/v1");
	sb_reset(&sb);
	sb_add_url_shown(&sb, "http://127.0.0.1:8080/v1");
	assert_string_equal(sb_str(&sb), "http://127.0.0.1:8080/v1");
	sb_reset(&sb);
	sb_add_url_shown(&sb, "https://x.example/v1?api-version=2024&key="
			      "AIzaSyA1b2C3d4E5f6G7h8I9j0#f");
	assert_string_equal(sb_str(&sb),
			    "https://x.example/v1?api-version=2024&key=***#f");
	sb_reset(&sb);
	sb_add_url_shown(&sb, "smtp://alice@mail.example:587");
	assert_string_equal(sb_str(&sb), "smtp://alice@mail.example:587");
	sb_reset(&sb);
	sb_add_url_shown(&sb, "http://h/\033[2J");
	assert_string_equal(sb_str(&sb), "http://h/\\e[2J");
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c0_and_del),
		cmocka_unit_test(test_newline_and_tab),
		cmocka_unit_test(test_c1_and_8bit),
		cmocka_unit_test(test_bidi_and_invisible),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_mp_shown),
		cmocka_unit_test(test_looks_like_key),
		cmocka_unit_test(test_url_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
