// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for review/context-diff.c: the unified-diff parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "review/review.h"

static struct rv_diff *parse_ok(const char *text)
{
	struct rv_diff *d = NULL;
	struct errmsg err = {""};
	int ret = rv_diff_parse(&d, text, strlen(text), &err);

	if (ret)
		fail_msg("rv_diff_parse failed (%d): %s", ret, err.msg);
	assert_non_null(d);
	return d;
}

static int parse_err(const char *text, size_t len, struct errmsg *err)
{
	struct rv_diff *d = (struct rv_diff *)1;
	int ret;

	memset(err, 0, sizeof(*err));
	ret = rv_diff_parse(&d, text, len, err);
	assert_null(d);
	assert_true(err->msg[0] != '\0');
	return ret;
}

static const char git_modify[] =
	"diff --git a/drivers/net/foo.c b/drivers/net/foo.c\n"
	"index 1234567..89abcde 100644\n"
	"--- a/drivers/net/foo.c\n"
	"+++ b/drivers/net/foo.c\n"
	"@@ -10,6 +10,8 @@ static int foo_probe(struct device *dev)\n"
	" \tstruct foo *f;\n"
	" \n"
	"-\tf = kmalloc(sizeof(*f), GFP_KERNEL);\n"
	"+\tf = kzalloc(sizeof(*f), GFP_KERNEL);\n"
	"+\tif (!f)\n"
	"+\t\treturn -ENOMEM;\n"
	" \tf->dev = dev;\n"
	" \treturn 0;\n"
	" }\n"
	"@@ -40,3 +42,2 @@ static void foo_remove(struct device *dev)\n"
	" {\n"
	"-\tfoo_stop(dev);\n"
	" }\n"
	"-- \n"
	"2.43.0\n"
	"\n";

static void test_git_modify(void **state)
{
	struct rv_diff *d = parse_ok(git_modify);
	const struct rv_file *f;
	const struct rv_hunk *h;

	assert_int_equal(d->nfiles, 1);
	f = &d->files[0];
	assert_string_equal(f->old_path, "drivers/net/foo.c");
	assert_string_equal(f->new_path, "drivers/net/foo.c");
	assert_int_equal(f->status, RV_FILE_MODIFIED);
	assert_false(f->binary);
	assert_int_equal(f->nhunks, 2);

	h = &f->hunks[0];
	assert_int_equal(h->old_start, 10);
	assert_int_equal(h->old_lines, 6);
	assert_int_equal(h->new_start, 10);
	assert_int_equal(h->new_lines, 8);
	assert_string_equal(h->section,
			    "static int foo_probe(struct device *dev)");
	assert_int_equal(h->nlines, 9);
	/* " \tstruct foo *f;" */
	assert_int_equal(h->lines[0].origin, ' ');
	assert_int_equal(h->lines[0].old_no, 10);
	assert_int_equal(h->lines[0].new_no, 10);
	assert_string_equal(h->lines[0].text, "\tstruct foo *f;");
	/* the removed line */
	assert_int_equal(h->lines[2].origin, '-');
	assert_int_equal(h->lines[2].old_no, 12);
	assert_int_equal(h->lines[2].new_no, 0);
	/* the added lines */
	assert_int_equal(h->lines[3].origin, '+');
	assert_int_equal(h->lines[3].old_no, 0);
	assert_int_equal(h->lines[3].new_no, 12);
	assert_string_equal(h->lines[3].text,
			    "\tf = kzalloc(sizeof(*f), GFP_KERNEL);");
	assert_int_equal(h->lines[5].new_no, 14);
	/* context after the additions */
	assert_int_equal(h->lines[6].old_no, 13);
	assert_int_equal(h->lines[6].new_no, 15);
	assert_int_equal(h->lines[8].old_no, 15);
	assert_int_equal(h->lines[8].new_no, 17);

	h = &f->hunks[1];
	assert_int_equal(h->old_start, 40);
	assert_int_equal(h->new_start, 42);
	assert_int_equal(h->nlines, 3);
	assert_int_equal(h->lines[2].old_no, 42);
	assert_int_equal(h->lines[2].new_no, 43);
	rv_diff_free(d);
}

static void test_git_add_delete_rename_copy(void **state)
{
	static const char text[] = "diff --git a/new.c b/new.c\n"
				   "new file mode 100644\n"
				   "index 0000000..e69de29\n"
				   "--- /dev/null\n"
				   "+++ b/new.c\n"
				   "@@ -0,0 +1,2 @@\n"
				   "+int x;\n"
				   "+int y;\n"
				   "diff --git a/old.c b/old.c\n"
				   "deleted file mode 100644\n"
				   "index e69de29..0000000\n"
				   "--- a/old.c\n"
				   "+++ /dev/null\n"
				   "@@ -1 +0,0 @@\n"
				   "-int z;\n"
				   "diff --git a/lib/a.c b/lib/b.c\n"
				   "similarity index 90%\n"
				   "rename from lib/a.c\n"
				   "rename to lib/b.c\n"
				   "index 1111111..2222222 100644\n"
				   "--- a/lib/a.c\n"
				   "+++ b/lib/b.c\n"
				   "@@ -1 +1 @@\n"
				   "-int a;\n"
				   "+int b;\n"
				   "diff --git a/x.c b/y.c\n"
				   "similarity index 100%\n"
				   "copy from x.c\n"
				   "copy to y.c\n"
				   "diff --git a/empty b/empty\n"
				   "new file mode 100644\n"
				   "index 0000000..e69de29\n"
				   "diff --git a/script.sh b/script.sh\n"
				   "old mode 100644\n"
				   "new mode 100755\n";
	struct rv_diff *d = parse_ok(text);

	assert_int_equal(d->nfiles, 6);
	assert_int_equal(d->files[0].status, RV_FILE_ADDED);
	assert_null(d->files[0].old_path);
	assert_string_equal(d->files[0].new_path, "new.c");
	assert_int_equal(d->files[0].hunks[0].old_start, 0);
	assert_int_equal(d->files[0].hunks[0].old_lines, 0);
	assert_int_equal(d->files[0].hunks[0].lines[1].new_no, 2);

	assert_int_equal(d->files[1].status, RV_FILE_DELETED);
	assert_string_equal(d->files[1].old_path, "old.c");
	assert_null(d->files[1].new_path);
	/* "@@ -1 +0,0 @@": omitted count means 1 */
	assert_int_equal(d->files[1].hunks[0].old_lines, 1);
	assert_int_equal(d->files[1].hunks[0].new_lines, 0);

	assert_int_equal(d->files[2].status, RV_FILE_RENAMED);
	assert_string_equal(d->files[2].old_path, "lib/a.c");
	assert_string_equal(d->files[2].new_path, "lib/b.c");
	assert_int_equal(d->files[2].nhunks, 1);

	assert_int_equal(d->files[3].status, RV_FILE_COPIED);
	assert_string_equal(d->files[3].old_path, "x.c");
	assert_string_equal(d->files[3].new_path, "y.c");
	assert_int_equal(d->files[3].nhunks, 0);

	assert_int_equal(d->files[4].status, RV_FILE_ADDED);
	assert_string_equal(d->files[4].new_path, "empty");
	assert_int_equal(d->files[4].nhunks, 0);

	assert_int_equal(d->files[5].status, RV_FILE_MODIFIED);
	assert_string_equal(d->files[5].new_path, "script.sh");

	assert_ptr_equal(rv_diff_find_file(d, "lib/b.c"), &d->files[2]);
	/* the pre-image name is found when no post-image has it */
	assert_ptr_equal(rv_diff_find_file(d, "old.c"), &d->files[1]);
	assert_ptr_equal(rv_diff_find_file(d, "lib/a.c"), &d->files[2]);
	assert_null(rv_diff_find_file(d, "nope.c"));
	assert_null(rv_diff_find_file(d, NULL));
	assert_null(rv_diff_find_file(NULL, "new.c"));
	rv_diff_free(d);
}

static void test_binary(void **state)
{
	static const char text[] =
		"diff --git a/logo.png b/logo.png\n"
		"index 1111111..2222222 100644\n"
		"Binary files a/logo.png and b/logo.png differ\n"
		"diff --git a/fw.bin b/fw.bin\n"
		"new file mode 100644\n"
		"index 0000000000000000000000000000000000000000..abcdef\n"
		"GIT binary patch\n"
		"literal 12\n"
		"TcmZ?wbhEHbRA5kGU|<3O0{{X7\n"
		"\n"
		"literal 0\n"
		"HcmV?d00001\n"
		"\n"
		"diff --git a/a.c b/a.c\n"
		"--- a/a.c\n"
		"+++ b/a.c\n"
		"@@ -1 +1 @@\n"
		"-old\n"
		"+new\n";
	struct rv_diff *d = parse_ok(text);

	assert_int_equal(d->nfiles, 3);
	assert_true(d->files[0].binary);
	assert_int_equal(d->files[0].nhunks, 0);
	assert_true(d->files[1].binary);
	assert_int_equal(d->files[1].status, RV_FILE_ADDED);
	assert_string_equal(d->files[1].new_path, "fw.bin");
	assert_false(d->files[2].binary);
	assert_int_equal(d->files[2].nhunks, 1);
	rv_diff_free(d);
}

static void test_plain_unified(void **state)
{
	static const char text[] =
		"Only in linux: extra\n"
		"diff -urN linux-orig/fs/inode.c linux/fs/inode.c\n"
		"--- linux-orig/fs/inode.c\t2024-01-01 10:00:00.000000000 "
		"+0000\n"
		"+++ linux/fs/inode.c\t2024-01-02 10:00:00.000000000 +0000\n"
		"@@ -5,2 +5,3 @@\n"
		" a\n"
		"+b\n"
		" c\n"
		"--- src/main.c\n"
		"+++ src/main.c\n"
		"@@ -1,1 +1,1 @@\n"
		"-x\n"
		"+y\n"
		"--- /dev/null\n"
		"+++ b/added.c\n"
		"@@ -0,0 +1 @@\n"
		"+new\n";
	struct rv_diff *d = parse_ok(text);

	assert_int_equal(d->nfiles, 3);
	assert_string_equal(d->files[0].old_path, "fs/inode.c");
	assert_string_equal(d->files[0].new_path, "fs/inode.c");
	assert_null(d->files[0].hunks[0].section);
	assert_int_equal(d->files[0].hunks[0].lines[1].new_no, 6);
	/* -p0 style: no prefix to strip */
	assert_string_equal(d->files[1].old_path, "src/main.c");
	assert_string_equal(d->files[1].new_path, "src/main.c");
	assert_int_equal(d->files[2].status, RV_FILE_ADDED);
	assert_string_equal(d->files[2].new_path, "added.c");
	rv_diff_free(d);
}

static void test_quoted_paths(void **state)
{
	static const char text[] =
		"diff --git \"a/sp ace\\tt\\303\\251.c\" \"b/sp "
		"ace\\tt\\303\\251.c\"\n"
		"index 1111111..2222222 100644\n"
		"--- \"a/sp ace\\tt\\303\\251.c\"\n"
		"+++ \"b/sp ace\\tt\\303\\251.c\"\n"
		"@@ -1 +1 @@\n"
		"-a\n"
		"+b\n"
		"diff --git a/dir with space/f.c b/dir with space/f.c\n"
		"new file mode 100644\n"
		"index 0000000..1111111\n"
		"diff --git a/q\"uote b/q\"uote\n"
		"deleted file mode 100644\n";
	struct rv_diff *d = parse_ok(text);

	assert_int_equal(d->nfiles, 3);
	assert_string_equal(d->files[0].old_path, "sp ace\tt\xc3\xa9.c");
	assert_string_equal(d->files[0].new_path, "sp ace\tt\xc3\xa9.c");
	/* unquoted names with spaces: split where both halves agree */
	assert_string_equal(d->files[1].new_path, "dir with space/f.c");
	assert_int_equal(d->files[1].status, RV_FILE_ADDED);
	assert_string_equal(d->files[2].old_path, "q\"uote");
	rv_diff_free(d);
}

static void test_bad_quoted_path(void **state)
{
	/* "\000" would smuggle a NUL into a path */
	static const char text[] = "--- \"a/x\\000y\"\n"
				   "+++ \"b/x\\000y\"\n"
				   "@@ -1 +1 @@\n"
				   "-a\n"
				   "+b\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "file names"));
}

static void test_no_newline_crlf(void **state)
{
	static const char text[] = "diff --git a/a.c b/a.c\r\n"
				   "--- a/a.c\r\n"
				   "+++ b/a.c\r\n"
				   "@@ -1,2 +1,2 @@ int main(void)\r\n"
				   " keep\r\n"
				   "-old\r\n"
				   "\\ No newline at end of file\r\n"
				   "+new\r\n"
				   "\\ No newline at end of file";
	struct rv_diff *d = parse_ok(text);
	const struct rv_hunk *h = &d->files[0].hunks[0];

	assert_string_equal(d->files[0].new_path, "a.c");
	assert_string_equal(h->section, "int main(void)");
	assert_int_equal(h->nlines, 3);
	assert_string_equal(h->lines[0].text, "keep");
	assert_string_equal(h->lines[1].text, "old");
	assert_string_equal(h->lines[2].text, "new");
	assert_int_equal(h->lines[2].new_no, 2);
	rv_diff_free(d);
}

static void test_empty_context_line_and_no_final_newline(void **state)
{
	/* a mailer ate the space of an empty context line */
	static const char text[] = "--- a/a.c\n"
				   "+++ b/a.c\n"
				   "@@ -1,3 +1,3 @@\n"
				   " a\n"
				   "\n"
				   "-b\n"
				   "+c";
	struct rv_diff *d = parse_ok(text);
	const struct rv_hunk *h = &d->files[0].hunks[0];

	assert_int_equal(h->nlines, 4);
	assert_int_equal(h->lines[1].origin, ' ');
	assert_string_equal(h->lines[1].text, "");
	assert_int_equal(h->lines[1].new_no, 2);
	assert_string_equal(h->lines[3].text, "c");
	rv_diff_free(d);
}

static void test_hunk_fewer_lines(void **state)
{
	static const char text[] = "diff --git a/net/x.c b/net/x.c\n"
				   "--- a/net/x.c\n"
				   "+++ b/net/x.c\n"
				   "@@ -1,1 +1,1 @@\n"
				   "-a\n"
				   "+b\n"
				   "@@ -10,4 +10,5 @@ void f(void)\n"
				   " a\n"
				   "+b\n"
				   "diff --git a/net/y.c b/net/y.c\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "net/x.c hunk 2"));
	assert_non_null(strstr(err.msg, "fewer lines"));
}

static void test_hunk_truncated_at_eof(void **state)
{
	static const char text[] = "--- a/x.c\n"
				   "+++ b/x.c\n"
				   "@@ -1,3 +1,3 @@\n"
				   " a\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "x.c hunk 1"));
	assert_non_null(strstr(err.msg, "fewer lines"));
}

static void test_hunk_more_lines(void **state)
{
	static const char text[] = "--- a/lib/z.c\n"
				   "+++ b/lib/z.c\n"
				   "@@ -1,2 +1,2 @@\n"
				   " a\n"
				   "-b\n"
				   "+c\n"
				   "+d\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "lib/z.c hunk 1"));
	assert_non_null(strstr(err.msg, "more lines"));
}

static void test_hunk_wrong_kind(void **state)
{
	/* the old side is used up, yet another '-' line comes */
	static const char text[] = "--- a/k.c\n"
				   "+++ b/k.c\n"
				   "@@ -1,1 +1,3 @@\n"
				   "-a\n"
				   "-b\n"
				   "+c\n"
				   "+d\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "k.c hunk 1"));
}

static void test_huge_counts(void **state)
{
	static const char huge[] = "--- a/h.c\n"
				   "+++ b/h.c\n"
				   "@@ -1,2000000000 +1,2000000000 @@\n"
				   " a\n";
	static const char big[] = "--- a/h.c\n"
				  "+++ b/h.c\n"
				  "@@ -1,99999999 +1,99999999 @@\n"
				  " a\n";
	static const char overflow[] = "--- a/h.c\n"
				       "+++ b/h.c\n"
				       "@@ -99999999999999999999999,1 +1,1 @@\n"
				       " a\n";
	struct errmsg err;

	assert_int_equal(parse_err(huge, strlen(huge), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "malformed hunk header"));
	/* believable but a lie: nothing is preallocated, it is short */
	assert_int_equal(parse_err(big, strlen(big), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "fewer lines"));
	assert_int_equal(parse_err(overflow, strlen(overflow), &err),
			 RV_ERR_INPUT);
}

static void test_malformed_hunk_headers(void **state)
{
	static const char *const bad[] = {
		"--- a/x\n+++ b/x\n@@ -a,1 +1 @@\n",
		"--- a/x\n+++ b/x\n@@ -1 +1\n",
		"--- a/x\n+++ b/x\n@@ -1, +1 @@\n",
		"--- a/x\n+++ b/x\n@@ 1 1 @@\n",
		"--- a/x\n+++ b/x\n@@ -1 -1 @@\n",
		"@@ -1 +1 @@\n-a\n+b\n", /* no file header */
	};
	struct errmsg err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(parse_err(bad[i], strlen(bad[i]), &err),
				 RV_ERR_INPUT);
}

static void test_deleted_file_error_names_it(void **state)
{
	static const char text[] = "--- a/gone.c\n"
				   "+++ /dev/null\n"
				   "@@ -1,3 +0,0 @@\n"
				   "-a\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, strlen(text), &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "gone.c hunk 1"));
}

static void test_dot_slash_paths(void **state)
{
	struct sb sb = SB_INIT;
	struct rv_diff *d = NULL;
	struct errmsg err;
	int i;

	/* ./ prefixes go, in linear time even when there are thousands */
	sb_adds(&sb, "--- ");
	for (i = 0; i < 2000; i++)
		sb_adds(&sb, "./");
	sb_adds(&sb, "src/x.c\n+++ ./src/x.c\n@@ -1 +1 @@\n-a\n+b\n");
	assert_int_equal(rv_diff_parse(&d, sb.buf, sb.len, &err), 0);
	assert_string_equal(d->files[0].old_path, "src/x.c");
	assert_string_equal(d->files[0].new_path, "src/x.c");
	rv_diff_free(d);
	sb_release(&sb);
}

static void test_nul_byte(void **state)
{
	static const char text[] = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\0c\n";
	struct errmsg err;

	assert_int_equal(parse_err(text, sizeof(text) - 1, &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "NUL"));
}

static void test_long_line(void **state)
{
	size_t n = (size_t)RV_DIFF_MAX_LINE + 100;
	char *text = malloc(n + 64);
	struct errmsg err;
	int off;

	assert_non_null(text);
	off = sprintf(text, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+");
	memset(text + off, 'x', n);
	text[off + n] = '\n';
	assert_int_equal(parse_err(text, (size_t)off + n + 1, &err),
			 RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "longer than"));
	free(text);
}

static void test_too_many_files(void **state)
{
	struct sb sb = SB_INIT;
	struct errmsg err;
	int i;

	for (i = 0; i <= RV_DIFF_MAX_FILES; i++)
		assert_int_equal(sb_addf(&sb,
					 "diff --git a/f%d b/f%d\n"
					 "new file mode 100644\n",
					 i, i),
				 0);
	assert_int_equal(parse_err(sb.buf, sb.len, &err), RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "more than"));
	sb_release(&sb);
}

static void test_empty_and_garbage(void **state)
{
	struct rv_diff *d = NULL;
	struct errmsg err;

	assert_int_equal(rv_diff_parse(&d, "", 0, &err), 0);
	assert_int_equal(d->nfiles, 0);
	rv_diff_free(d);
	assert_int_equal(rv_diff_parse(&d, NULL, 0, &err), 0);
	assert_int_equal(d->nfiles, 0);
	rv_diff_free(d);
	d = parse_ok("Hello,\nthis is not a patch at all.\n-- \nme\n");
	assert_int_equal(d->nfiles, 0);
	rv_diff_free(d);
	rv_diff_free(NULL);
}

static void test_combined_diff_skipped(void **state)
{
	static const char text[] = "diff --cc merged.c\n"
				   "index 1,2..3\n"
				   "@@@ -1,1 -1,1 +1,1 @@@\n"
				   "- a\n"
				   " -b\n"
				   "++c\n"
				   "diff --git a/n.c b/n.c\n"
				   "--- a/n.c\n"
				   "+++ b/n.c\n"
				   "@@ -1 +1 @@\n"
				   "-a\n"
				   "+b\n";
	struct rv_diff *d = parse_ok(text);

	assert_int_equal(d->nfiles, 1);
	assert_string_equal(d->files[0].new_path, "n.c");
	rv_diff_free(d);
}

/* A random walk over hostile bytes must never crash or leak. */
static void test_random_bytes(void **state)
{
	static const char alphabet[] =
		"@@ -+,0123456789\n\r\\ \"adiff--git/b\t";
	char buf[512];
	unsigned seed = 12345;
	int round;
	size_t i;

	for (round = 0; round < 20000; round++) {
		struct rv_diff *d = NULL;
		struct errmsg err;
		size_t n;
		int ret;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % sizeof(buf);
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (round & 1) ? (char)(seed >> 16)
					     : alphabet[(seed >> 16) %
							(sizeof(alphabet) - 1)];
		}
		ret = rv_diff_parse(&d, buf, n, &err);
		if (ret == 0)
			assert_non_null(d);
		else
			assert_null(d);
		rv_diff_free(d);
	}
}

/* Linear: a hunk of 1M lines parses quickly (and is counted exactly). */
static void test_large_hunk_is_linear(void **state)
{
	struct sb sb = SB_INIT;
	struct rv_diff *d = NULL;
	struct errmsg err;
	clock_t t0;
	int i, n = 1000000;

	sb_addf(&sb, "--- a/big\n+++ b/big\n@@ -0,0 +1,%d @@\n", n);
	for (i = 0; i < n; i++)
		sb_adds(&sb, "+x\n");
	t0 = clock();
	assert_int_equal(rv_diff_parse(&d, sb.buf, sb.len, &err), 0);
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	assert_int_equal(d->files[0].hunks[0].nlines, (size_t)n);
	assert_int_equal(d->files[0].hunks[0].lines[n - 1].new_no, n);
	rv_diff_free(d);
	sb_release(&sb);
}

static size_t fn_at(const struct rv_hunk *h, size_t idx, char *buf)
{
	return rv_hunk_function(h, idx, buf, 64);
}

static void test_hunk_function(void **state)
{
	static const char text[] =
		"--- a/f.c\n"
		"+++ b/f.c\n"
		"@@ -10,10 +10,16 @@ static int first(struct dev *d)\n"
		" \tint x;\n"		   /* 0: first, from section */
		" \treturn x;\n"	   /* 1 */
		" }\n"			   /* 2: ends first */
		" \n"			   /* 3: between functions */
		" int proto(int a,\n"	   /* 4: a prototype ... */
		" \t  int b);\n"	   /* 5 */
		" static int x = 3;\n"	   /* 6: outside any function */
		"+static void\n"	   /* 7 */
		"+second(struct foo *f,\n" /* 8: K&R-style header */
		"+       int n)\n"	   /* 9 */
		"+{\n"			   /* 10 */
		"+\tif (n)\n"		   /* 11: in second */
		"+\t\treturn;\n"	   /* 12 */
		"+}\n"			   /* 13 */
		" int third(void) {\n"	   /* 14 */
		"-\told();\n"		   /* 15 */
		" \tnew();\n";		   /* 16 */
	struct rv_diff *d = parse_ok(text);
	const struct rv_hunk *h = &d->files[0].hunks[0];
	char buf[64];

	assert_int_equal(h->nlines, 17);
	assert_int_equal(fn_at(h, 0, buf), 5);
	assert_string_equal(buf, "first");
	assert_int_equal(fn_at(h, 1, buf), 5);
	assert_int_equal(fn_at(h, 3, buf), 0);
	assert_string_equal(buf, "");
	assert_int_equal(fn_at(h, 6, buf), 0);
	assert_int_equal(fn_at(h, 11, buf), 6);
	assert_string_equal(buf, "second");
	assert_int_equal(fn_at(h, 12, buf), 6);
	assert_int_equal(fn_at(h, 16, buf), 5);
	assert_string_equal(buf, "third");
	/* out of range, too small a buffer */
	assert_int_equal(fn_at(h, 17, buf), 0);
	assert_int_equal(rv_hunk_function(h, 11, buf, 4), 0);
	assert_int_equal(rv_hunk_function(NULL, 0, buf, sizeof(buf)), 0);
	rv_diff_free(d);
}

static void test_hunk_function_section_not_function(void **state)
{
	static const char text[] =
		"--- a/f.c\n"
		"+++ b/f.c\n"
		"@@ -1,1 +1,1 @@ struct foo {\n"
		"-\tint a;\n"
		"+\tlong a;\n"
		"@@ -20,1 +20,1 @@ err_free:\n"
		"-\ta;\n"
		"+\tb;\n"
		"@@ -40,1 +40,1 @@ static struct ops o = { .f = f(1) };\n"
		"-\ta;\n"
		"+\tb;\n"
		"@@ -60,1 +60,1 @@ int (*handler)(int sig)\n"
		"-\ta;\n"
		"+\tb;\n";
	struct rv_diff *d = parse_ok(text);
	char buf[64];

	assert_int_equal(fn_at(&d->files[0].hunks[0], 1, buf), 0);
	assert_int_equal(fn_at(&d->files[0].hunks[1], 1, buf), 0);
	assert_int_equal(fn_at(&d->files[0].hunks[2], 1, buf), 0);
	assert_int_equal(fn_at(&d->files[0].hunks[3], 1, buf), 0);
	rv_diff_free(d);
}

static void test_source_function(void **state)
{
	static const char src[] = "#include <x.h>\n"	      /* 1 */
				  "static int\n"	      /* 2 */
				  "first(struct dev *d,\n"    /* 3 */
				  "      int n)\n"	      /* 4 */
				  "{\n"			      /* 5 */
				  "\tint x;\n"		      /* 6 */
				  "out:\n"		      /* 7 */
				  "\treturn x;\n"	      /* 8 */
				  "}\n"			      /* 9 */
				  "\n"			      /* 10 */
				  "int proto(int a);\n"	      /* 11 */
				  "static struct ops o = {\n" /* 12 */
				  "\t.f = f(1),\n"	      /* 13 */
				  "};\r\n"		      /* 14 */
				  "int (*fp)(int);\n"	      /* 15 */
				  "void second(void) {\r\n"   /* 16 */
				  "\tcall();\n"		      /* 17 */
				  "}";			      /* 18 */
	char buf[64];
	size_t n = strlen(src);

	assert_int_equal(rv_source_function(src, n, 6, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "first");
	/* a label at column 0 is not the function */
	assert_int_equal(rv_source_function(src, n, 8, buf, sizeof(buf)), 5);
	assert_int_equal(rv_source_function(src, n, 9, buf, sizeof(buf)), 5);
	/* between functions, in an initializer, in a prototype */
	assert_int_equal(rv_source_function(src, n, 10, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(rv_source_function(src, n, 13, buf, sizeof(buf)), 0);
	assert_int_equal(rv_source_function(src, n, 15, buf, sizeof(buf)), 0);
	/* CRLF source, the last line without a newline */
	assert_int_equal(rv_source_function(src, n, 17, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "second");
	assert_int_equal(rv_source_function(src, n, 18, buf, sizeof(buf)), 6);
	/* out of range and bad arguments */
	assert_int_equal(rv_source_function(src, n, 19, buf, sizeof(buf)), 0);
	assert_int_equal(rv_source_function(src, n, 0, buf, sizeof(buf)), 0);
	assert_int_equal(rv_source_function(src, n, 1, buf, sizeof(buf)), 0);
	assert_int_equal(rv_source_function(NULL, 0, 1, buf, sizeof(buf)), 0);
	assert_int_equal(rv_source_function(src, n, 6, buf, 3), 0);
}

/*
 * The index answers what rv_source_function() walks for, on every line
 * of sources made of the pieces that matter (headers, braces, CRLF,
 * blank and over-long lines, prototypes), and a header more than 4000
 * lines up is too far for both.
 */
static void test_source_index(void **state)
{
	static const char *const piece[] = {
		"int f(int a)\n",
		"{\n",
		"}\n",
		"\tx = g(1);\n",
		"\n",
		"};\r\n",
		"void h(void) {\r\n",
		"out:\n",
		"int p(int);\n",
		"static struct s o = {\n",
		" int k(void)\n",
		"#define M(x) x\n",
		"(void)\n",
		"}",
	};
	struct sb src = SB_INIT, longl = SB_INIT;
	unsigned seed = 7;
	int round, line;

	(void)state;
	for (line = 0; line < 600; line++)
		sb_addch(&longl, 'a');
	sb_adds(&longl, "(x)\n");
	for (round = 0; round < 200; round++) {
		struct rv_source_index ix;
		int k, n = 1 + round % 40;

		sb_reset(&src);
		for (k = 0; k < n; k++) {
			seed = seed * 1103515245 + 12345;
			if ((seed >> 16) % 23 == 0)
				sb_adds(&src, longl.buf);
			else
				sb_adds(&src, piece[(seed >> 16) %
						    ARRAY_SIZE(piece)]);
		}
		rv_source_index_init(&ix, src.buf, src.len);
		for (line = 0; line <= (int)ix.n + 2; line++) {
			char a[128], b[128];
			size_t x = rv_source_function(src.buf, src.len, line, a,
						      sizeof(a));
			size_t y = rv_source_index_function(&ix, line, b,
							    sizeof(b));

			assert_int_equal(x, y);
			assert_string_equal(a, b);
		}
		rv_source_index_release(&ix);
	}
	/* 4001 lines between the header and the line: too far for both */
	sb_reset(&src);
	sb_adds(&src, "int far(void)\n{\n");
	for (line = 0; line < 4001; line++)
		sb_adds(&src, "\tx++;\n");
	{
		struct rv_source_index ix;
		char a[128], b[128];
		int s, e;

		rv_source_index_init(&ix, src.buf, src.len);
		assert_int_equal(rv_source_function(src.buf, src.len, 4000, a,
						    sizeof(a)),
				 3);
		assert_int_equal(
			rv_source_index_function(&ix, 4000, b, sizeof(b)), 3);
		assert_int_equal(rv_source_function(src.buf, src.len, 4003, a,
						    sizeof(a)),
				 0);
		assert_int_equal(
			rv_source_index_function(&ix, 4003, b, sizeof(b)), 0);
		/* no closing brace: no range */
		assert_int_equal(rv_source_index_range(&ix, 5, &s, &e), -1);
		rv_source_index_release(&ix);
	}
	sb_release(&src);
	sb_release(&longl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_modify),
		cmocka_unit_test(test_git_add_delete_rename_copy),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_plain_unified),
		cmocka_unit_test(test_quoted_paths),
		cmocka_unit_test(test_bad_quoted_path),
		cmocka_unit_test(test_no_newline_crlf),
		cmocka_unit_test(test_empty_context_line_and_no_final_newline),
		cmocka_unit_test(test_hunk_fewer_lines),
		cmocka_unit_test(test_hunk_truncated_at_eof),
		cmocka_unit_test(test_hunk_more_lines),
		cmocka_unit_test(test_hunk_wrong_kind),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_malformed_hunk_headers),
		cmocka_unit_test(test_deleted_file_error_names_it),
		cmocka_unit_test(test_dot_slash_paths),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_too_many_files),
		cmocka_unit_test(test_empty_and_garbage),
		cmocka_unit_test(test_combined_diff_skipped),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_large_hunk_is_linear),
		cmocka_unit_test(test_hunk_function),
		cmocka_unit_test(test_hunk_function_section_not_function),
		cmocka_unit_test(test_source_function),
		cmocka_unit_test(test_source_index),
	};

	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
