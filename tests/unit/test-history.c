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

	/* What starts a definition, at column 0, and what only looks so. */
#define STARTS(s) hist_starts_function(s, strlen(s))
	assert_true(STARTS("static int parse_opts(int argc, char **argv)"));
	assert_true(STARTS("int main(void)"));
	assert_false(STARTS("int foo(int x);"));
	assert_false(STARTS("\treturn foo(x);"));
	assert_false(STARTS("Entry = namedtuple('Entry', 'name size')"));
	assert_false(STARTS("static struct ops dev_ops = OPS_INIT("));
	assert_false(STARTS("if (x)"));
	assert_true(STARTS("def create_qp(ctx, attr):"));
	assert_true(STARTS("    def create_qp(self, attr):"));
	assert_false(STARTS("    define(x)"));
	assert_false(STARTS("out:"));
#undef STARTS

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

	/* A feature is added, not taken away. */
	assert_true(hist_subject_adds("devlink: add support for port params"));
	assert_true(hist_subject_adds("Introduce ip netconf"));
	assert_false(hist_subject_adds("remove support for iptables action"));
	assert_false(hist_subject_adds("tc: m_xt: Drop support for new API"));
	assert_false(hist_subject_adds("rdma: Deprecate the new link flag"));
	assert_false(hist_subject_adds("ip: fix a leak in ipaddr_list"));
	assert_true(hist_subject_fixes("ip: fix a leak in ipaddr_list"));
}

/*
 * The function a line of a hunk is in: the header names the one before
 * the hunk; definitions the hunk starts (wrapped ones too) and the end of
 * one at column 0 change it; a removed line reads the pre-image.
 */
static void test_hunk_function(void **state)
{
	static const char diff[] =
		"diff --git a/f.c b/f.c\n"
		"--- a/f.c\n"
		"+++ b/f.c\n"
		"@@ -10,7 +10,20 @@ static int first(int x)\n"
		" \treturn x;\n"
		" }\n"
		"+\n"
		"+static struct thing table[] = {\n"
		"+};\n"
		"+\n"
		"+static int second(struct rd *rd,\n"
		"+\t\t  int y)\n"
		"+{\n"
		"+\treturn y;\n"
		"+}\n"
		"+\n"
		"+int third(int z);\n"
		"+int fourth(int a,\n"
		"+\t   int b);\n"
		" \n"
		"-int old_one(void)\n"
		"+int new_one(void)\n"
		" {\n"
		"-\treturn 1;\n"
		"+\treturn 2;\n"
		" }\n";
	static const char *const want[] = {
		"first",   "first",   NULL,	 NULL,	    NULL,
		NULL,	   "second",  "second",	 "second",  "second",
		"second",  NULL,      NULL,	 NULL,	    NULL,
		NULL,	   "old_one", "new_one", "new_one", "old_one",
		"new_one", "new_one",
	};
	struct rv_diff *d = NULL;
	struct errmsg err;
	size_t k;

	(void)state;
	assert_int_equal(rv_diff_parse(&d, diff, sizeof(diff) - 1, &err), 0);
	assert_int_equal(d->files[0].hunks[0].nlines, ARRAY_SIZE(want));
	for (k = 0; k < ARRAY_SIZE(want); k++) {
		char *f = hist_hunk_function("f.c", &d->files[0].hunks[0], k);

		if (!want[k] != !f || (f && strcmp(f, want[k])))
			print_message("line %zu: %s, want %s\n", k,
				      f ? f : "(none)",
				      want[k] ? want[k] : "(none)");
		if (want[k])
			assert_non_null(f);
		else
			assert_null(f);
		if (want[k])
			assert_string_equal(f, want[k]);
		free(f);
		/* A man page's or a Makefile's hunk has no function. */
		assert_null(hist_hunk_function("man/f.8", &d->files[0].hunks[0],
					       k));
		assert_null(hist_hunk_function("Makefile",
					       &d->files[0].hunks[0], k));
	}
	assert_true(hist_path_has_functions("lib/utils.c"));
	assert_true(hist_path_has_functions("pyverbs/qp.pyx"));
	assert_false(hist_path_has_functions("man/man8/dpll.8"));
	assert_false(hist_path_has_functions("redhat/rdma-core.spec"));
	assert_false(hist_path_has_functions("CMakeLists.txt"));
	assert_false(hist_path_has_functions("src.c/README"));
	assert_false(hist_path_has_functions(NULL));
	rv_diff_free(d);
}

static struct rv_diff *parse_diff(const char *text)
{
	struct rv_diff *d = NULL;
	struct errmsg err;

	assert_int_equal(rv_diff_parse(&d, text, strlen(text), &err), 0);
	return d;
}

/*
 * A risk finding points where a later fix is likeliest to land: in the
 * function the patch adds the most hazards to (conditions, error
 * returns, allocations), not at the top of its biggest hunk, a table at
 * file scope; equal hazards, the bigger function; no function at all,
 * the first line of the biggest hunk.
 */
static void test_risk_anchor(void **state)
{
	static const char added[] = "diff --git a/a.c b/a.c\n"
				    "new file mode 100644\n"
				    "--- /dev/null\n"
				    "+++ b/a.c\n"
				    "@@ -0,0 +1,32 @@\n"
				    "+#include <stdlib.h>\n"
				    "+\n"
				    "+static const int table[] = {\n"
				    "+\t1, 2, 3, 4,\n"
				    "+\t5, 6, 7, 8,\n"
				    "+};\n"
				    "+\n"
				    "+int plain(int *v)\n"
				    "+{\n"
				    "+\tv[0] = 1;\n"
				    "+\tv[1] = 2;\n"
				    "+\tv[2] = 3;\n"
				    "+\tv[3] = 4;\n"
				    "+\treturn 0;\n"
				    "+}\n"
				    "+\n"
				    "+/* Allocates. */\n"
				    "+int *risky(int n)\n"
				    "+{\n"
				    "+\tint *p = malloc(n);\n"
				    "+\n"
				    "+\tif (!p)\n"
				    "+\t\treturn NULL;\n"
				    "+\treturn p;\n"
				    "+}\n"
				    "+\n"
				    "+int checks(int n)\n"
				    "+{\n"
				    "+\tif (n < 0)\n"
				    "+\t\treturn -1;\n"
				    "+\treturn n;\n"
				    "+}\n";
	static const char ties[] = "diff --git a/b.c b/b.c\n"
				   "--- a/b.c\n"
				   "+++ b/b.c\n"
				   "@@ -1,3 +1,5 @@ int short_one(int n)\n"
				   " {\n"
				   "+\tif (n > 1)\n"
				   "+\t\tn--;\n"
				   " \treturn n;\n"
				   " }\n"
				   "@@ -10,3 +12,6 @@ int long_one(int n)\n"
				   " {\n"
				   "+\tif (n > 2)\n"
				   "+\t\tn -= 2;\n"
				   "+\tn *= 3;\n"
				   " \treturn n;\n"
				   " }\n";
	static const char scope[] = "diff --git a/c.h b/c.h\n"
				    "--- a/c.h\n"
				    "+++ b/c.h\n"
				    "@@ -1,2 +1,3 @@\n"
				    " #define A 1\n"
				    "+#define B 2\n"
				    " #define C 3\n"
				    "@@ -10,2 +11,4 @@\n"
				    " #define X 1\n"
				    "+#define Y 2\n"
				    "+#define Z 3\n"
				    " #define W 4\n";
	struct rv_diff *d;
	const char *file = NULL;
	int line = 0;

	(void)state;
	d = parse_diff(added);
	assert_true(hist_risk_anchor(d, &file, &line));
	assert_string_equal(file, "a.c");
	assert_int_equal(line, 18); /* int *risky(int n): malloc, if, return */
	rv_diff_free(d);

	d = parse_diff(ties);
	assert_true(hist_risk_anchor(d, &file, &line));
	assert_string_equal(file, "b.c");
	assert_int_equal(line, 13); /* long_one(): one if each, more lines */
	rv_diff_free(d);

	d = parse_diff(scope);
	assert_true(hist_risk_anchor(d, &file, &line));
	assert_string_equal(file, "c.h");
	assert_int_equal(line, 12); /* no function: the biggest hunk */
	rv_diff_free(d);
}

/* The model learns that big commits are the buggy ones here. */
static void test_model(void **state)
{
	struct hist_model m, back;
	static double X[400 * HF_N];
	double x[HF_N];
	int y[400];
	size_t i;
	double small, big;
	sqlite3 *db = NULL;

	memset(X, 0, sizeof(X));
	for (i = 0; i < 400; i++) {
		struct hist_rfeat f = {{0}};

		f.v[HR_LA] = (double)((i * 37) % 5000);
		f.v[HR_EXP] = 1 + (double)(i % 3);
		y[i] = f.v[HR_LA] > 4000 && i % 2;
		hist_features(&f, &X[i * HF_N]);
	}
	hist_model_fit(&m, X, y, 400, 0.05);
	assert_true(m.ok);
	memcpy(x, &X[0], sizeof(x));
	x[HR_LA] = log1p(10);
	small = hist_model_score(&m, x);
	x[HR_LA] = log1p(4900);
	big = hist_model_score(&m, x);
	assert_true(big > small);
	assert_true(small >= 0 && big <= 1);
	/* A score is a share of the history: the top 5% start near 0.95. */
	assert_true(m.threshold > 0.9 && m.threshold < 0.99);
	/*
	 * A score reads as the fix rate the history had there: the
	 * biggest commits (half of those over 4000 lines were fixed) far
	 * above the small ones (none), never falling as the score rises.
	 */
	assert_true(hist_model_rate(&m, big) > 0.3);
	assert_true(hist_model_rate(&m, small) < 0.05);
	for (i = 1; i < HIST_RATE_BINS; i++)
		assert_true(m.rate[i] >= m.rate[i - 1]);
	assert_true(hist_model_rate(&m, -1) < 0);

	/* The model round-trips through the db, score for score. */
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(hist_exec(db,
				   "CREATE TABLE meta(key TEXT PRIMARY KEY,"
				   " value)",
				   NULL),
			 0);
	assert_int_equal(hist_model_save(db, &m), 0);
	hist_model_load(db, &back);
	assert_true(back.ok);
	assert_true(fabs(back.threshold - m.threshold) < 1e-12);
	assert_true(fabs(hist_model_score(&back, x) - big) < 1e-12);
	assert_true(fabs(hist_model_rate(&back, big) -
			 hist_model_rate(&m, big)) < 1e-12);

	/* One class only: no model, scoring says so, and so does why. */
	memset(y, 0, sizeof(y));
	hist_model_fit(&m, X, y, 400, 0.05);
	assert_false(m.ok);
	assert_true(hist_model_score(&m, x) < 0);
	assert_non_null(strstr(m.why, "cannot be fitted"));
	assert_int_equal(hist_model_save(db, &m), 0);
	hist_model_load(db, &back);
	assert_false(back.ok);
	assert_non_null(strstr(back.why, "Fixes:"));
	sqlite3_close(db);
}

/*
 * A score is a place among the history as the fit weighs it: with the
 * old half of the rows (small commits) weighing almost nothing, a
 * commit of the recent rows' median size sits in the middle, and the
 * top 5% are the top 5% of the recent rows; unweighted, the small old
 * commits pushed it to three quarters.
 */
static void test_model_places(void **state)
{
	struct hist_model m, plain;
	static double X[400 * HF_N];
	double wt[400], x[HF_N], mid;
	int y[400];
	size_t i, over = 0;

	memset(X, 0, sizeof(X));
	for (i = 0; i < 400; i++) {
		struct hist_rfeat f = {{0}};
		bool old = i < 200;

		/* old: 1-100 lines; recent: 101-200; fixed ones among the big
		 */
		f.v[HR_LA] = (double)(old ? 1 + i % 100 : 101 + i % 100);
		f.v[HR_EXP] = 1 + (double)(i % 3);
		y[i] = f.v[HR_LA] > 150 && i % 2;
		wt[i] = old ? 1e-6 : 1;
		hist_features(&f, &X[i * HF_N]);
	}
	hist_model_fit_w(&m, X, y, wt, 400, 0.05);
	hist_model_fit(&plain, X, y, 400, 0.05);
	assert_true(m.ok && plain.ok);
	memcpy(x, &X[0], sizeof(x));
	x[HR_LA] = log1p(150);
	mid = hist_model_score(&m, x);
	assert_true(mid > 0.4 && mid < 0.6);
	assert_true(hist_model_score(&plain, x) > 0.7);
	for (i = 200; i < 400; i++)
		over += hist_model_score(&m, &X[i * HF_N]) >= m.threshold;
	assert_in_range(over, 8, 12);
	(void)state;
}

/* A model to explain with: no weights, features at mean 0, sd 1. */
static void explain_model(struct hist_model *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->ok = true;
	for (i = 0; i < HF_N; i++)
		m->sd[i] = 1;
}

/* Reasons name what the patch does, in words, not bytes. */
static void test_explain(void **state)
{
	struct hist_model m;
	struct hist_rfeat f = {{0}};
	struct sb why = SB_INIT;

	explain_model(&m);
	m.w[HR_ERRPATH] = 2;
	m.w[HR_FIXES_YEAR] = 1;
	m.w[HR_LA] = 0.01;
	f.v[HR_ERRPATH] = 3;
	f.v[HR_FIXES] = 6;
	f.v[HR_FIXES_YEAR] = 4;
	f.v[HR_LA] = 7;
	hist_risk_explain(&m, &f, NULL, &why);
	assert_non_null(strstr(sb_str(&why), "adds 3 error paths"));
	assert_non_null(strstr(sb_str(&why), "fixed 6 times before"));
	assert_null(strstr(sb_str(&why), "bytes"));
	/* Error paths weigh most: they come first. */
	assert_true(strstr(sb_str(&why), "error paths") <
		    strstr(sb_str(&why), "fixed 6"));
	sb_release(&why);
}

/*
 * A reason is what the patch has more of than most commits: a low value
 * that raises the score (no resemblance to an earlier bug, a directory
 * where few commits were fixed) is not said; an author's few commits are,
 * as such.
 */
static void test_explain_lacks(void **state)
{
	struct hist_model m;
	struct hist_rfeat f = {{0}};
	struct sb why = SB_INIT;

	explain_model(&m);
	m.w[HR_GROUND] = -2;
	m.mean[HR_GROUND] = 0.3;
	m.w[HR_DIR_BUGRATE] = -1;
	m.mean[HR_DIR_BUGRATE] = 0.2;
	f.v[HR_DIR_BUGRATE] = 0.01;
	hist_risk_explain(&m, &f, NULL, &why);
	assert_string_equal(sb_str(&why), "");

	/* Above the mean, the same features are reasons when they raise. */
	m.w[HR_GROUND] = 2;
	f.v[HR_GROUND] = 0.8;
	sb_reset(&why);
	hist_risk_explain(&m, &f, NULL, &why);
	assert_non_null(strstr(sb_str(&why), "(80% alike in names)"));

	/* Few commits of the author: a lack the phrase says. */
	memset(m.w, 0, sizeof(m.w));
	m.w[HR_EXP] = -1;
	m.mean[HR_EXP] = 3; /* log1p of about 19 commits */
	f.v[HR_EXP] = 2;
	f.v[HR_SEXP] = 1;
	sb_reset(&why);
	hist_risk_explain(&m, &f, NULL, &why);
	assert_string_equal(sb_str(&why), "the author has 2 earlier commits "
					  "here, 1 in this subsystem");
	sb_release(&why);
}

/*
 * The history reasons name the place they come from: the file with the
 * most earlier commits later fixed, the function, the file fixed most;
 * with the total over all the patch's files when there is more. A path
 * prints as printable ASCII only; a long one keeps its end.
 */
static void test_explain_places(void **state)
{
	struct hist_model m;
	struct hist_rfeat f = {{0}};
	struct hist_rwords w;
	struct sb why = SB_INIT;
	char p[HIST_RPLACE], longp[300];

	explain_model(&m);
	memset(&w, 0, sizeof(w));
	w.base = -1;
	m.w[HR_FILE_BUGS] = 3;
	m.w[HR_FUNC_BUGS] = 2;
	m.w[HR_FIXES] = 1;
	f.v[HR_FILE_BUGS] = 45;
	f.v[HR_FUNC_BUGS] = 6;
	f.v[HR_FIXES] = 12;
	hist_place_copy(w.place.file, "providers/hns/hns_roce_u_hw_v2.c");
	w.place.file_named = 41;
	w.place.file_commits = 165;
	hist_place_copy(w.place.func, "hns_roce_u_v2_post_send");
	hist_place_copy(w.place.func_file, "providers/hns/hns_roce_u_hw_v2.c");
	w.place.func_named = 6;
	w.place.func_commits = 20;
	hist_place_copy(w.place.fixed, "providers/hns/hns_roce_u_verbs.c");
	w.place.fixed_n = 7;
	w.place.fixed_year = 2.5;
	hist_risk_explain(&m, &f, &w, &why);
	assert_string_equal(
		sb_str(&why),
		"touches providers/hns/hns_roce_u_hw_v2.c, where 41 of 165 "
		"earlier commits were later fixed (45 in all its files); "
		"touches hns_roce_u_v2_post_send() in "
		"providers/hns/hns_roce_u_hw_v2.c, where 6 of 20 earlier "
		"commits were later fixed; providers/hns/hns_roce_u_verbs.c "
		"was fixed 7 times before (2.5 weighted to the last year; 12 "
		"in all its files)");

	/* No place known (eval, an old index): the general sentences. */
	memset(&w.place, 0, sizeof(w.place));
	sb_reset(&why);
	hist_risk_explain(&m, &f, &w, &why);
	assert_non_null(strstr(sb_str(&why), "touches files where 45 earlier "
					     "commits were later fixed"));

	/* Hostile bytes print as '?'; a long path keeps its end. */
	hist_place_copy(p, "a\n\x1b[31mb\xc3\xa9 c.c");
	assert_string_equal(p, "a??[31mb?? c.c");
	memset(longp, 'd', sizeof(longp));
	memcpy(longp + sizeof(longp) - 8, "/tail.c", 8);
	hist_place_copy(p, longp);
	assert_int_equal(strlen(p), HIST_RPLACE - 1);
	assert_memory_equal(p, "...", 3);
	assert_string_equal(p + strlen(p) - 7, "/tail.c");
	sb_release(&why);
}

/* The words features' reasons name the words, with their figures. */
static void test_explain_words(void **state)
{
	struct hist_model m;
	struct hist_rfeat f = {{0}};
	struct hist_rwords w = {0};
	struct sb why = SB_INIT;

	explain_model(&m);
	m.w[HR_WORDS_CODE] = 1;
	m.w[HR_WORDS_SUBJECT] = 0.5;
	f.v[HR_WORDS_CODE] = 0.8;
	f.v[HR_WORDS_SUBJECT] = 0.4;
	snprintf(w.code[0].text, sizeof(w.code[0].text), "mlx5_ifc_dr_ste");
	w.code[0].n = 14, w.code[0].b = 6;
	snprintf(w.code[1].text, sizeof(w.code[1].text), "MLX5_SET");
	w.code[1].n = 31, w.code[1].b = 9;
	w.ncode = 2;
	snprintf(w.subject[0].text, sizeof(w.subject[0].text), "steering");
	w.subject[0].n = 10, w.subject[0].b = 5;
	w.nsubject = 1;
	w.base = 0.09;
	hist_risk_explain(&m, &f, &w, &why);
	assert_string_equal(
		sb_str(&why),
		"its code uses mlx5_ifc_dr_ste and MLX5_SET (in 14 and 31 "
		"earlier commits, 43% and 29% of them later fixed, against 9% "
		"of all); its subject says 'steering' (in the subjects of 10 "
		"earlier commits, 50% of them later fixed, against 9% of all)");

	/* Three words: a list; no base known: no comparison. */
	snprintf(w.code[2].text, sizeof(w.code[2].text), "dr_ste_v1");
	w.code[2].n = 8, w.code[2].b = 2;
	w.ncode = 3;
	w.nsubject = 0;
	w.base = -1;
	sb_reset(&why);
	hist_risk_explain(&m, &f, &w, &why);
	assert_non_null(strstr(sb_str(&why),
			       "its code uses mlx5_ifc_dr_ste, MLX5_SET and "
			       "dr_ste_v1 (in 14, 31 and 8 earlier commits, "
			       "43%, 29% and 25% of them later fixed)"));
	/* No word named: the feature's own sentence, which is still true. */
	assert_non_null(strstr(sb_str(&why), "its subject's words were more "
					     "often those of commits"));

	/* Without the words (eval, a test): the general sentences. */
	sb_reset(&why);
	hist_risk_explain(&m, &f, NULL, &why);
	assert_non_null(strstr(sb_str(&why), "its code uses names that"));
	assert_null(strstr(sb_str(&why), "MLX5_SET"));

	/*
	 * Words less likely to be fixed than the tree's (a mean log ratio
	 * below 0) may sit above the fitted mean, yet are no reason.
	 */
	m.mean[HR_WORDS_CODE] = -0.5;
	m.mean[HR_WORDS_SUBJECT] = -0.5;
	f.v[HR_WORDS_CODE] = -0.1;
	f.v[HR_WORDS_SUBJECT] = 0;
	sb_reset(&why);
	hist_risk_explain(&m, &f, &w, &why);
	assert_string_equal(sb_str(&why), "");
	sb_release(&why);
}

/* What commit_words() hashes: the index's word hash, top bit the kind. */
static uint32_t word_hash(const char *s, bool subject)
{
	uint32_t h = (uint32_t)hist_hash(s, strlen(s)) & ~0x80000000u;

	return (h ? h : 1) | (subject ? 0x80000000u : 0);
}

static void put_word(unsigned char *blob, size_t *len, const char *s,
		     bool subject, float n, float b)
{
	uint32_t h = word_hash(s, subject);

	memcpy(blob + *len, &h, 4);
	memcpy(blob + *len + 4, &n, 4);
	memcpy(blob + *len + 8, &b, 4);
	*len += 12;
}

/*
 * The words a patch is explained by are read from its own text with the
 * feature's rules and looked up in the table the index left: only added
 * lines of C files, no comments, no keywords, no over-long "words";
 * seen in 5 commits, 2 of them later fixed, and more likely to be fixed
 * than the tree's; the best 3, most raising first.
 */
static void test_risk_words(void **state)
{
	static const char diff[] =
		"diff --git a/dr.c b/dr.c\n"
		"--- a/dr.c\n"
		"+++ b/dr.c\n"
		"@@ -1,3 +1,9 @@\n"
		" int x;\n"
		"-\tgone_word(1);\n"
		"+\t/* comment_word */\n"
		"+\tMLX5_SET(mlx5_ifc_dr_ste, p, rare_name, once_fixed);\n"
		"+\treturn cold_name(dr_ste_v1, ste_ctx_x);\n"
		"+\tAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AA"
		"AAAAAAAAA();\n"
		"+\tdr_ste_v1++;\n"
		"+\t<script>\"x\"</script>;\n"
		"+\tx = 1;\n"
		" int y;\n"
		"diff --git a/README b/README\n"
		"--- a/README\n"
		"+++ b/README\n"
		"@@ -1 +1,2 @@\n"
		" x\n"
		"+doc_word\n";
	/* 63 characters: what a 70-character name would be if cut. */
	char long_word[64];
	unsigned char blob[12 * 32];
	size_t blen = 0;
	struct rv_history h = {0};
	struct rv_diff *d = NULL;
	struct errmsg err = {""};
	struct hist_rwords w;
	sqlite3_stmt *st;

	memset(long_word, 'A', 63);
	long_word[63] = '\0';
	assert_int_equal(sqlite3_open(":memory:", &h.db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h.db,
				      "CREATE TABLE riskstate(k TEXT PRIMARY "
				      "KEY, v BLOB)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(rv_diff_parse(&d, diff, strlen(diff), &err), 0);

	/* No table: nothing named, and no share of all to compare with. */
	hist_risk_words(&h, d, "net/mlx5: Steering DR", &w);
	assert_int_equal(w.ncode + w.nsubject, 0);
	assert_true(w.base < 0);

	put_word(blob, &blen, "mlx5_ifc_dr_ste", false, 14, 6);
	put_word(blob, &blen, "MLX5_SET", false, 31, 9);
	put_word(blob, &blen, "dr_ste_v1", false, 8, 3);
	put_word(blob, &blen, "ste_ctx_x", false, 40, 5);
	put_word(blob, &blen, "rare_name", false, 4, 4);      /* too few */
	put_word(blob, &blen, "once_fixed", false, 20, 1);    /* one fix */
	put_word(blob, &blen, "cold_name", false, 50, 2);     /* below */
	put_word(blob, &blen, "return", false, 90, 60);	      /* keyword */
	put_word(blob, &blen, "comment_word", false, 10, 10); /* comment */
	put_word(blob, &blen, "gone_word", false, 10, 10);    /* removed */
	put_word(blob, &blen, "doc_word", false, 10, 10);     /* not C */
	put_word(blob, &blen, "script", false, 10, 10);	 /* its letters only */
	put_word(blob, &blen, long_word, false, 10, 10); /* cut */
	put_word(blob, &blen, "steering", true, 10, 5);
	put_word(blob, &blen, "dr", true, 8, 3);
	put_word(blob, &blen, "net", true, 400, 30); /* below */
	put_word(blob, &blen, "mlx5", true, 10, 10);
	put_word(blob, &blen, "MLX5_SET", true, 10, 10); /* kinds apart */
	assert_int_equal(sqlite3_prepare_v2(h.db,
					    "INSERT INTO riskstate VALUES "
					    "('W', ?)",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_blob(st, 1, blob, (int)blen, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	hist_risk_words(&h, d, "net/mlx5: Steering DR\n\nBody dr_ste_v1.", &w);
	/*
	 * The tree's share without a "G" row is shrunk from nothing to
	 * 1/10: script (10 of 10) raises most, then mlx5_ifc_dr_ste
	 * (6 of 14), then MLX5_SET (9 of 31) over dr_ste_v1 (3 of 8).
	 */
	assert_int_equal(w.ncode, 3);
	assert_string_equal(w.code[0].text, "script");
	assert_string_equal(w.code[1].text, "mlx5_ifc_dr_ste");
	assert_int_equal(w.code[1].n, 14);
	assert_int_equal(w.code[1].b, 6);
	assert_string_equal(w.code[2].text, "MLX5_SET");
	assert_int_equal(w.code[2].n, 31);
	/* Subject words lowercased, as hashed; "net" is below the tree's. */
	assert_int_equal(w.nsubject, 3);
	assert_string_equal(w.subject[0].text, "mlx5");
	assert_string_equal(w.subject[1].text, "steering");
	assert_string_equal(w.subject[2].text, "dr");
	assert_int_equal(w.subject[2].n, 8);
	assert_int_equal(w.subject[2].b, 3);
	assert_true(w.base < 0);

	rv_diff_free(d);
	sqlite3_close(h.db);
}

/* What the added lines do, counted line by line. */
static void test_content_counts(void **state)
{
	struct hist_racc *a = hist_racc_new();
	static const char *const lines[] = {
		"static int foo_open(struct foo *f, size_t n)",
		"\tbuf = malloc(n * sizeof(*buf));",
		"\tif (!buf)",
		"\t\treturn -ENOMEM;",
		"\tpthread_mutex_lock(&f->lock);",
		"\tpthread_mutex_unlock(&f->lock);",
		"\tgoto out;",
		"\tp = (char *)buf + off;",
		"\t/* malloc(x) in a comment */",
	};
	struct hist_rfeat f;
	size_t i;

	hist_racc_file(a, "lib/foo.c", false);
	hist_racc_hunk(a, " int foo_init(void)");
	for (i = 0; i < ARRAY_SIZE(lines); i++)
		hist_racc_line(a, '+', lines[i], strlen(lines[i]));
	hist_racc_line(a, '-', "\tif (x)", 7);
	hist_racc_patch_done(a, &f);
	assert_int_equal((int)f.v[HR_LA], 9);
	assert_int_equal((int)f.v[HR_LD], 1);
	assert_int_equal((int)f.v[HR_NEWFUNC], 1);
	assert_int_equal((int)f.v[HR_ALLOC], 1);
	assert_int_equal((int)f.v[HR_SIZEMUL], 1);
	assert_int_equal((int)f.v[HR_ERRPATH], 1);
	assert_int_equal((int)f.v[HR_LOCK], 1);
	assert_int_equal((int)f.v[HR_UNLOCK], 1);
	assert_int_equal((int)f.v[HR_GOTO], 1);
	assert_int_equal((int)f.v[HR_CAST], 1);
	assert_int_equal((int)f.v[HR_DEL_CHECK], 1);
	assert_int_equal((int)f.v[HR_FUNCS], 1);
	assert_int_equal((int)f.v[HR_NF], 1);
	hist_racc_free(a);
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

/* What a model cites: a prefix of one fix of the index, else nothing. */
static void test_fix_id(void **state)
{
	struct rv_history h;
	char out[RV_OID_HEXSZ + 1];

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(sqlite3_open(":memory:", &h.db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(h.db,
			     "CREATE TABLE pairs(fix_seq INTEGER, fix_oid TEXT,"
			     " bug_oid TEXT);"
			     "INSERT INTO pairs VALUES"
			     " (5, '1234567aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',"
			     "  'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),"
			     " (6, '1234567ccccccccccccccccccccccccccccccccc',"
			     "  'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),"
			     " (7, '1234567ccccccccccccccccccccccccccccccccc',"
			     "  'dddddddddddddddddddddddddddddddddddddddd'),"
			     " (9, 'feedface00000000000000000000000000000000',"
			     "  'dddddddddddddddddddddddddddddddddddddddd');",
			     NULL, NULL, NULL),
		SQLITE_OK);
	h.horizon = INT64_MAX;
	/* One fix (twice in the index, for two bugs): its full id. */
	assert_int_equal(rv_history_fix_id(&h, "1234567c", out), 1);
	assert_string_equal(out, "1234567ccccccccccccccccccccccccccccccccc");
	assert_int_equal(rv_history_fix_id(&h, "FEEDFACE", out), 1);
	assert_string_equal(out, "feedface00000000000000000000000000000000");
	/* Two fixes share the prefix: it names neither. */
	assert_int_equal(rv_history_fix_id(&h, "1234567", out), 0);
	assert_string_equal(out, "");
	/* Made up, a bug not a fix, too short, not hex, or no index. */
	assert_int_equal(rv_history_fix_id(&h, "deadbeefdead", out), 0);
	assert_int_equal(rv_history_fix_id(&h, "bbbbbbbbbbbb", out), 0);
	assert_int_equal(rv_history_fix_id(&h, "feedfa", out), 0);
	assert_int_equal(rv_history_fix_id(&h, "feedface*", out), 0);
	assert_int_equal(rv_history_fix_id(&h, "feedfac?", out), 0);
	assert_int_equal(rv_history_fix_id(NULL, "feedface", out), 0);
	/* A fix past the horizon (a replay of the past) is not there yet. */
	h.horizon = 9;
	assert_int_equal(rv_history_fix_id(&h, "feedface", out), 0);
	sqlite3_close(h.db);
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
		cmocka_unit_test(test_hunk_function),
		cmocka_unit_test(test_risk_anchor),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_model_places),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_explain_lacks),
		cmocka_unit_test(test_explain_places),
		cmocka_unit_test(test_explain_words),
		cmocka_unit_test(test_risk_words),
		cmocka_unit_test(test_content_counts),
		cmocka_unit_test(test_db_not_a_db),
		cmocka_unit_test(test_fix_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
