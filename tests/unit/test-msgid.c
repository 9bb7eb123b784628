// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for mailparse/msgid.c: a message named on the command line
 * (<ID>, ID@HOST, public-inbox URLs) and the hostile arguments refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mailparse/mailparse.h"

/* The id spec names, or NULL when refused (err then says why). */
static char *id_of(const char *spec, struct errmsg *err)
{
	char *id = (char *)0x1;

	if (mp_msgid_from_spec(spec, &id, err) < 0) {
		assert_null(id);
		assert_true(err->msg[0] != '\0');
		return NULL;
	}
	return id;
}

static void expect(const char *spec, const char *want)
{
	struct errmsg err = {""};
	char *id = id_of(spec, &err);

	if (!id)
		fail_msg("%s: refused: %s", spec, err.msg);
	assert_string_equal(id, want);
	free(id);
}

static void test_forms(void **state)
{
	static const char id[] = "20240101.123-1-author@example.org";

	(void)state;
	expect("<20240101.123-1-author@example.org>", id);
	expect("20240101.123-1-author@example.org", id);
	expect("https://lore.kernel.org/netdev/"
	       "20240101.123-1-author@example.org/",
	       id);
	expect("https://lore.kernel.org/netdev/"
	       "20240101.123-1-author@example.org",
	       id);
	expect("https://lore.kernel.org/all/20240101.123-1-author@example.org/"
	       "T/#u",
	       id);
	expect("https://lore.kernel.org/netdev/"
	       "20240101.123-1-author@example.org/raw",
	       id);
	expect("https://lore.kernel.org/netdev/"
	       "20240101.123-1-author@example.org/t.mbox.gz",
	       id);
	expect("https://lore.kernel.org/r/20240101.123-1-author@example.org",
	       id);
	expect("https://patch.msgid.link/20240101.123-1-author@example.org",
	       id);
	expect("http://lkml.kernel.org/r/20240101.123-1-author@example.org?x=1",
	       id);
	expect("HTTPS://lore.kernel.org/netdev/"
	       "20240101.123-1-author%40example.org/",
	       id);
	expect("https://lore.kernel.org/netdev/"
	       "%3C20240101.123-1-author@example.org%3E/",
	       id);
}

static void refused(const char *spec, const char *why)
{
	struct errmsg err = {""};
	char *id = id_of(spec, &err);

	if (id)
		fail_msg("%s: taken as <%s>", spec, id);
	if (!strstr(err.msg, why))
		fail_msg("%s: '%s' does not say '%s'", spec, err.msg, why);
	/* one line, and no control character from the input in it */
	for (const char *p = err.msg; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
}

static void test_hostile(void **state)
{
	char *big = malloc(5001);

	(void)state;
	refused("a b@example.org", "no whitespace or control");
	refused("evil\033]0;pwned\007@example.org", "no whitespace or control");
	refused("../../etc/passwd@x", "no '/'");
	refused("https://lore.kernel.org/netdev/", "no message-id in the URL");
	refused("https://lore.kernel.org/netdev/x%40y%00z/", "malformed");
	refused("https://lore.kernel.org/netdev/x%4/", "malformed");
	refused("https://lore.kernel.org/netdev/x%0Ay@z/",
		"is not a message-id");
	refused("<>", "is not a message-id");
	refused("<a<b>@x>", "is not a message-id");
	memset(big, 'a', 5000);
	big[0] = '<';
	big[5000] = '\0';
	refused(big, "at most 998");
	assert_true(mp_msgid_is_spec(big));
	free(big);
}

static void test_is_spec(void **state)
{
	(void)state;
	assert_true(mp_msgid_is_spec("<x@y>"));
	assert_true(mp_msgid_is_spec("x@y"));
	assert_true(mp_msgid_is_spec("https://lore.kernel.org/r/x@y"));
	assert_true(mp_msgid_is_spec("bad\tname"));
	assert_false(mp_msgid_is_spec("series.mbox"));
	assert_false(mp_msgid_is_spec("-"));
	assert_false(mp_msgid_is_spec("dir/0001-fix.patch"));
}

static void test_shown(void **state)
{
	char b[16];

	(void)state;
	assert_string_equal(mp_shown("plain", b, sizeof(b)), "plain");
	assert_string_equal(mp_shown("\033]0\xc2\x9b", b, sizeof(b)),
			    "\\e]0<U+009B>");
	assert_string_equal(mp_shown("0123456789abcdefghij", b, sizeof(b)),
			    "0123456789ab...");
	assert_string_equal(mp_shown(NULL, b, sizeof(b)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_is_spec),
		cmocka_unit_test(test_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
