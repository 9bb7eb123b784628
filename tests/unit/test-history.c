// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pieces of the history index that need no repository: reading
 * Fixes: trailers and reverts from hostile messages, tokens, function
 * names, the risk model, and a db that is not a db.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "review/history-int.h"
#include "review/history-parse.h"

static void parse(const char *msg, struct hist_refs *r)
{
	const char *nl = strchr(msg, '\n');
	char subj[256];

	snprintf(subj, sizeof(subj), "%.*s",
		 (int)(nl ? (size_t)(nl - msg) : strlen(msg)), msg);
	memset(r, 0, sizeof(*r));
	hist_parse_refs(msg, subj, r);
}

static void test_fixes_usual(void **state)
{
	struct hist_refs r;

	parse("net: fix it\n\nBody.\n\n"
	      "Fixes: 12ab34cd5678 (\"net: add it\")\n"
	      "Signed-off-by: A <a@b>\n",
	      &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].id, "12ab34cd5678");
	assert_string_equal(r.v[0].subject, "net: add it");
	assert_false(r.v[0].is_revert);
	hist_refs_release(&r);
}

static void test_fixes_lengths(void **state)
{
	struct hist_refs r;

	/* 40 digits, "commit" spelling, lower-case key, 7 digits lenient. */
	parse("x\n\nFixes: commit 0123456789abcdef0123456789abcdef01234567\n"
	      "fixes: 1234abc (\"short\")\n"
	      "Fixes: 12345 (\"too short an id\")\n",
	      &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.v[0].id,
			    "0123456789abcdef0123456789abcdef01234567");
	assert_null(r.v[0].subject);
	assert_string_equal(r.v[1].id, "1234abc");
	/* Five digits are no id, but the subject is still a reference. */
	assert_string_equal(r.v[2].id, "");
	assert_string_equal(r.v[2].subject, "too short an id");
	hist_refs_release(&r);

	/* 41 hex digits: not an id. A hex-looking word: not an id. */
	parse("x\n\nFixes: 0123456789abcdef0123456789abcdef012345678\n"
	      "Fixes: deadbeefs\n",
	      &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.not_commit, 2);
	hist_refs_release(&r);
}

static void test_fixes_wrapped(void **state)
{
	struct hist_refs r;

	parse("x\n\nFixes: 0c263d7c36ff (\"iplink_can: add new CAN FD "
	      "bittiming parameters:\n"
	      "Transmitter Delay Compensation (TDC)\")\n"
	      "Signed-off-by: A <a@b>\n",
	      &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].subject,
			    "iplink_can: add new CAN FD bittiming parameters: "
			    "Transmitter Delay Compensation (TDC)");
	hist_refs_release(&r);

	/* A subject in parentheses of its own, and one with no quotes. */
	parse("x\n\nFixes: aba5acdfdb34 (\"(Logical change 1.3)\")\n"
	      "Fixes: aba5acdfdb35 (tc: no quotes)\n"
	      "Fixes: f888f4e20534 tc: flower: no parentheses\n",
	      &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.v[0].subject, "(Logical change 1.3)");
	assert_string_equal(r.v[1].subject, "tc: no quotes");
	assert_string_equal(r.v[2].subject, "tc: flower: no parentheses");
	hist_refs_release(&r);

	/* A wrap that never closes stops at the trailer after it. */
	parse("x\n\nFixes: 123456789abc (\"never closed\n"
	      "Signed-off-by: A <a@b>\n",
	      &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].subject, "never closed");
	hist_refs_release(&r);
}

static void test_fixes_not_commits(void **state)
{
	struct hist_refs r;

	parse("x\n\nFixes: https://bugzilla.kernel.org/show_bug.cgi?id=1\n"
	      "Fixes: #123\nNot-Fixes: 123456789abc\n",
	      &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.not_commit, 2);
	hist_refs_release(&r);
}

static void test_revert(void **state)
{
	struct hist_refs r;

	parse("Revert \"net: add it\"\n\nThis reverts commit "
	      "0123456789abcdef0123456789abcdef01234567.\n",
	      &r);
	assert_int_equal(r.n, 1);
	assert_true(r.v[0].is_revert);
	assert_string_equal(r.v[0].subject, "net: add it");
	assert_string_equal(r.v[0].id,
			    "0123456789abcdef0123456789abcdef01234567");
	hist_refs_release(&r);

	/* "Revert" without the reverts line names nothing. */
	parse("Revert \"net: add it\"\n\nIt broke things.\n", &r);
	assert_int_equal(r.n, 0);
	hist_refs_release(&r);
}

static void test_hostile(void **state)
{
	struct sb msg = SB_INIT;
	struct hist_refs r;
	int i;

	sb_adds(&msg, "x\n\n");
	for (i = 0; i < 500; i++)
		sb_adds(&msg, "Fixes: 123456789abc (\"s\")\n");
	/* A subject that never closes and runs to the end of input. */
	sb_adds(&msg, "Fixes: 123456789abc (\"");
	for (i = 0; i < 10000; i++)
		sb_adds(&msg, "\xff\xfe(\"");
	parse(sb_str(&msg), &r);
	assert_int_equal(r.n, HIST_MAX_FIXES_PER_COMMIT);
	hist_refs_release(&r);
	sb_release(&msg);

	parse("", &r);
	assert_int_equal(r.n, 0);
	parse("Fixes:", &r);
	assert_int_equal(r.n, 0);
	parse("Fixes: (", &r);
	hist_refs_release(&r);
}

static void test_text_helpers(void **state)
{
	struct sb out = SB_INIT;
	char *f;
	char dir[16];

	f = hist_function_name(" static int parse_opts(int argc, char **argv)");
	assert_string_equal(f, "parse_opts");
	free(f);
	assert_null(hist_function_name(" if (x) {"));
	assert_null(hist_function_name("struct foo {"));
	assert_null(hist_function_name(NULL));

	hist_tokens("if (dev->mtu > 0x1f && rtnl_open(&rth, 0) < 0) return;",
		    &out, 100);
	assert_string_equal(sb_str(&out), "dev mtu rtnl_open rth");
	sb_reset(&out);

	hist_normalize("  \tif (x)   {  ", 15, &out);
	assert_string_equal(sb_str(&out), "if (x) {");
	assert_false(hist_line_significant("}"));
	assert_false(hist_line_significant("return 0;"));
	assert_false(hist_line_significant("/* a comment about it */"));
	assert_true(hist_line_significant("if (dev->mtu > max_mtu)"));
	assert_false(hist_line_significant("if (newline) {"));
	assert_false(hist_line_significant("return err ? err : ret;"));
	sb_release(&out);

	hist_top_dir("ip/ipaddress.c", dir, sizeof(dir));
	assert_string_equal(dir, "ip");
	hist_top_dir("Makefile", dir, sizeof(dir));
	assert_string_equal(dir, "");
}

/* The model learns that big commits are the buggy ones here. */
static void test_model(void **state)
{
	struct hist_model m;
	double X[400 * HF_N], x[HF_N];
	int y[400];
	size_t i;
	double small, big;

	memset(X, 0, sizeof(X));
	for (i = 0; i < 400; i++) {
		struct hist_facts f = {0};

		f.src = (double)((i * 37) % 5000);
		f.author = 1 + (double)(i % 3);
		y[i] = f.src > 4000 && i % 2;
		hist_features(&f, &X[i * HF_N]);
	}
	hist_model_fit(&m, X, y, 400, 0.05);
	assert_true(m.ok);
	memcpy(x, &X[0], sizeof(x));
	x[HF_SRC] = log1p(10);
	small = hist_model_score(&m, x);
	x[HF_SRC] = log1p(4900);
	big = hist_model_score(&m, x);
	assert_true(big > small);
	assert_true(small >= 0 && big <= 1);

	/* One class only: no model, and scoring says so. */
	memset(y, 0, sizeof(y));
	hist_model_fit(&m, X, y, 400, 0.05);
	assert_false(m.ok);
	assert_true(hist_model_score(&m, x) < 0);
}

static void test_db_not_a_db(void **state)
{
	char path[] = "/tmp/quorum-hist-XXXXXX";
	char file[64], reason[256] = "";
	struct errmsg err = {""};
	sqlite3 *db = NULL;
	FILE *fp;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	snprintf(file, sizeof(file), "%s.db", path);
	fp = fopen(file, "w");
	assert_non_null(fp);
	fputs("garbage garbage garbage garbage garbage garbage garbage\n", fp);
	fclose(fp);

	/* Read-only open: an error that says what to run. */
	assert_int_equal(hist_db_open(&db, file, false, NULL, 0, &err),
			 RV_ERR_INTERNAL);
	assert_null(db);
	assert_non_null(strstr(err.msg, "quorum index"));

	/* Opening to write: rebuilt, and the reason is told. */
	assert_int_equal(
		hist_db_open(&db, file, true, reason, sizeof(reason), &err), 0);
	assert_non_null(db);
	assert_non_null(strstr(reason, "rebuilt"));
	assert_int_equal(hist_meta_int(db, "schema", 0),
			 atoi(HIST_SCHEMA_VERSION));
	sqlite3_close(db);

	/* Now valid: opened as is, nothing to report. */
	reason[0] = '\0';
	assert_int_equal(
		hist_db_open(&db, file, false, reason, sizeof(reason), &err),
		0);
	assert_non_null(db);
	assert_string_equal(reason, "");
	sqlite3_close(db);
	hist_db_remove(file);

	/* Missing and not to be created: no index, no error. */
	assert_int_equal(hist_db_open(&db, file, false, NULL, 0, &err), 0);
	assert_null(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixes_usual),
		cmocka_unit_test(test_fixes_lengths),
		cmocka_unit_test(test_fixes_wrapped),
		cmocka_unit_test(test_fixes_not_commits),
		cmocka_unit_test(test_revert),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_text_helpers),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_db_not_a_db),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
