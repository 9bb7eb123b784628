// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for mailparse/message.c (with charset.c and diffscan.c):
 * one raw message -> struct mp_patch. Real mail comes from a scratch git
 * repo and `git format-patch` run by the test; hand-written mails cover
 * what git does not produce (QP, base64, CRLF, flowed, web mailers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>

#include "mailparse/mailparse.h"

static char tmpdir[] = "/tmp/quorum-test-message.XXXXXX";

static int setup_all(void **state)
{
	char home[256];

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(home, sizeof(home), "%s/home", tmpdir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.org", 1);
	setenv("GIT_AUTHOR_DATE", "1700000000 +0100", 1);
	setenv("GIT_COMMITTER_DATE", "1700000000 +0100", 1);
	setenv("LC_ALL", "C", 1);
	return 0;
}

static int teardown_all(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *read_file(const char *path, size_t *len)
{
	gchar *data = NULL;
	gsize n = 0;
	char *r;

	if (!g_file_get_contents(path, &data, &n, NULL))
		return NULL;
	r = malloc(n + 1);
	memcpy(r, data, n);
	r[n] = '\0';
	g_free(data);
	*len = n;
	return r;
}

/*
 * Run a fixed shell script (test text, never input) in a fresh repo
 * directory NAME under tmpdir; return what it wrote to "out".
 */
static char *git_fixture(const char *name, const char *script, size_t *len)
{
	char *cmd, *out, path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	cmd = g_strdup_printf("set -e; mkdir -p '%s'; cd '%s'; "
			      "git init -q -b main .; "
			      "git config user.name 'A U Thor'; "
			      "git config user.email author@example.org; %s",
			      path, path, script);
	rc = system(cmd);
	g_free(cmd);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/%s/out", tmpdir, name);
	out = read_file(path, len);
	assert_non_null(out);
	return out;
}

static struct mp_patch *parse_len(const char *raw, size_t len)
{
	struct mp_patch *p = NULL;
	struct errmsg e = {{0}};
	int rc = mp_patch_parse(&p, raw, len, NULL, &e);

	if (rc)
		print_error("mp_patch_parse: %d %s\n", rc, e.msg);
	assert_int_equal(rc, 0);
	assert_non_null(p);
	return p;
}

static struct mp_patch *parse(const char *raw)
{
	return parse_len(raw, strlen(raw));
}

static bool has_file(const struct mp_patch *p, const char *f)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i], f))
			return true;
	return false;
}

static bool starts_with(const char *s, const char *pre)
{
	return s && !strncmp(s, pre, strlen(pre));
}

static bool ends_with(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return s && len >= n && !memcmp(s + len - n, suf, n);
}

/* Every string of a patch is valid UTF-8 (the contract). */
static void assert_all_utf8(const struct mp_patch *p)
{
	const char *s[] = {p->message_id,  p->in_reply_to,   p->from,
			   p->author_name, p->author_email,  p->date,
			   p->subject_raw, p->subject.title, p->commit_message,
			   p->notes,	   p->diff,	     p->base_commit,
			   p->change_id,   p->commit_id,     p->list_id};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		if (s[i])
			assert_true(g_utf8_validate(s[i], -1, NULL));
	for (size_t i = 0; i < p->nfiles; i++)
		assert_true(g_utf8_validate(p->files[i], -1, NULL));
	for (size_t i = 0; i < p->ntrailers; i++) {
		assert_true(g_utf8_validate(p->trailers[i].key, -1, NULL));
		assert_true(g_utf8_validate(p->trailers[i].value, -1, NULL));
	}
	for (size_t i = 0; i < p->nreferences; i++)
		assert_true(g_utf8_validate(p->references[i], -1, NULL));
	if (p->diff)
		assert_int_equal(strlen(p->diff), p->diff_len);
}

/* ---- real git format-patch output ---- */

static const char repo_script[] =
	"printf 'int a;\\nint b;\\nint c;\\n' > main.c; "
	"printf 'old\\n' > gone.txt; printf 'keep me\\n' > old-name.txt; "
	"git add .; git commit -q -m initial; "
	"printf 'int a;\\nint bb;\\nint c;\\n' > main.c; "
	"git commit -q -a -s -m 'main: rename b to bb' "
	"-m 'The variable b was too short.' "
	"-m 'Fixes: 0123456789ab (\"main: add b\")'; "
	"git rm -q gone.txt; git mv old-name.txt new-name.txt; "
	"printf 'new\\n' > 'dir with space.c'; "
	"printf '\\000\\001\\002' > blob.bin; git add .; "
	"git commit -q -s -m 'files: delete, rename, add, binary'; ";

static void test_format_patch_single(void **state)
{
	size_t len;
	char *raw =
		git_fixture("single",
			    "printf 'x\\ny\\n' > f.c; git add f.c; "
			    "git commit -q -m init; printf 'x\\nz\\n' > f.c; "
			    "git commit -q -a -s -m 'f: use z' "
			    "-m 'Because z is better.'; "
			    "git format-patch -q --stdout -1 > out; "
			    "git rev-parse HEAD > sha",
			    &len);
	struct mp_patch *p = parse_len(raw, len);
	char path[512], *sha;
	size_t shalen;

	snprintf(path, sizeof(path), "%s/single/sha", tmpdir);
	sha = read_file(path, &shalen);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->subject.title, "f: use z");
	assert_true(p->subject.has_patch_tag);
	assert_string_equal(p->author_name, "A U Thor");
	assert_string_equal(p->author_email, "author@example.org");
	assert_string_equal(p->from, "A U Thor <author@example.org>");
	assert_int_equal(p->timestamp, 1700000000);
	assert_int_equal(p->tz_offset, 60);
	assert_string_equal(
		p->commit_message,
		"f: use z\n\nBecause z is better.\n\n"
		"Signed-off-by: C O Mitter <committer@example.org>\n");
	assert_int_equal(p->ntrailers, 1);
	assert_string_equal(p->trailers[0].key, "Signed-off-by");
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "f.c");
	assert_true(starts_with(p->diff, "diff --git a/f.c b/f.c\n"));
	/* the diff ends with its last hunk line, not the `-- ` signature */
	assert_true(ends_with(p->diff, p->diff_len, "+z\n"));
	assert_non_null(p->notes); /* the diffstat */
	assert_non_null(strstr(p->notes, "1 file changed"));
	assert_memory_equal(p->commit_id, sha, 40);
	assert_true(starts_with(p->message_id, "quorum-"));
	assert_all_utf8(p);
	mp_patch_free(p);
	free(sha);
	free(raw);
}

static void test_format_patch_files(void **state)
{
	size_t len;
	struct mp_patch *p;
	char *raw, *script;

	script = g_strdup_printf("%s git format-patch -q --stdout --binary "
				 "-M -1 > out",
				 repo_script);
	raw = git_fixture("files2", script, &len);
	g_free(script);
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_int_equal(p->nfiles, 4);
	assert_true(has_file(p, "gone.txt"));	  /* deletion: old name */
	assert_true(has_file(p, "new-name.txt")); /* rename: new name */
	assert_true(has_file(p, "dir with space.c"));
	assert_true(has_file(p, "blob.bin"));
	assert_false(has_file(p, "old-name.txt"));
	assert_non_null(strstr(p->diff, "GIT binary patch"));
	assert_true(
		ends_with(p->diff, p->diff_len, "rename to new-name.txt\n"));
	assert_all_utf8(p);
	mp_patch_free(p);
	free(raw);
}

static void test_format_patch_series(void **state)
{
	size_t len;
	char *script = g_strdup_printf(
		"%s git format-patch -q -2 --cover-letter --base=HEAD~2 "
		"-o series; git rev-parse HEAD~2 > out; "
		"git format-patch -q --stdout -M --base=HEAD~2 -1 > "
		"prereq.patch",
		repo_script);
	char *base = git_fixture("series", script, &len), path[512], *raw;
	struct mp_patch *p;

	g_free(script);
	snprintf(path, sizeof(path), "%s/series/series/0000-cover-letter.patch",
		 tmpdir);
	raw = read_file(path, &len);
	assert_non_null(raw);
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_COVER);
	assert_int_equal(p->subject.index, 0);
	assert_int_equal(p->subject.total, 2);
	assert_null(p->diff);
	assert_non_null(p->base_commit);
	assert_memory_equal(p->base_commit, base, 40);
	mp_patch_free(p);
	free(raw);

	snprintf(path, sizeof(path),
		 "%s/series/series/0001-main-rename-b-to-bb.patch", tmpdir);
	raw = read_file(path, &len);
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_int_equal(p->subject.index, 1);
	assert_int_equal(p->subject.total, 2);
	assert_string_equal(p->subject.title, "main: rename b to bb");
	assert_string_equal(mp_trailer_get(p->trailers, p->ntrailers, "Fixes"),
			    "0123456789ab (\"main: add b\")");
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "main.c");
	mp_patch_free(p);
	free(raw);

	/* with a cover letter, git puts base-commit there only */
	snprintf(path, sizeof(path),
		 "%s/series/series/0002-files-delete-rename-add-binary.patch",
		 tmpdir);
	raw = read_file(path, &len);
	p = parse_len(raw, len);
	assert_int_equal(p->subject.index, 2);
	assert_null(p->base_commit);
	mp_patch_free(p);
	free(raw);

	/* base-commit and a prerequisite-patch-id after the diff */
	snprintf(path, sizeof(path), "%s/series/prereq.patch", tmpdir);
	raw = read_file(path, &len);
	p = parse_len(raw, len);
	assert_non_null(p->base_commit);
	assert_memory_equal(p->base_commit, base, 40);
	assert_int_equal(p->nprereq_patch_ids, 1);
	assert_int_equal(strlen(p->prereq_patch_ids[0]), 40);
	assert_true(
		ends_with(p->diff, p->diff_len, "rename to new-name.txt\n"));
	mp_patch_free(p);
	free(raw);
	free(base);
}

static void test_format_patch_attach_inline(void **state)
{
	size_t len;
	char *script = g_strdup_printf(
		"%s git format-patch -q --stdout --attach -1 HEAD~1 > out",
		repo_script);
	char *raw = git_fixture("attach", script, &len);
	struct mp_patch *p = parse_len(raw, len);

	g_free(script);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	assert_string_equal(p->subject.title, "main: rename b to bb");
	assert_true(starts_with(p->commit_message, "main: rename b to bb\n\n"
						   "The variable b was too "
						   "short.\n"));
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "main.c");
	assert_true(starts_with(p->diff, "diff --git a/main.c b/main.c\n"));
	assert_true(ends_with(p->diff, p->diff_len, " int c;\n"));
	mp_patch_free(p);
	free(raw);

	script = g_strdup_printf(
		"%s git format-patch -q --stdout --inline -1 HEAD~1 > out",
		repo_script);
	raw = git_fixture("inline", script, &len);
	g_free(script);
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->files[0], "main.c");
	mp_patch_free(p);
	free(raw);
}

static void test_format_patch_utf8_author(void **state)
{
	size_t len;
	char *raw = git_fixture(
		"utf8",
		"printf 'a\\n' > f; git add f; git commit -q -m init; "
		"printf 'b\\n' > f; "
		"GIT_AUTHOR_NAME='J\303\266rg D\305\223' git commit -q -a "
		"-m 'f: \303\274ber alles' -m 'Caf\303\251 body.'; "
		"git format-patch -q --stdout -1 > out",
		&len);
	struct mp_patch *p = parse_len(raw, len);

	/* git encodes both the From: and the Subject: with RFC 2047 */
	assert_non_null(strstr(raw, "=?UTF-8?q?"));
	assert_string_equal(p->author_name, "J\303\266rg D\305\223");
	assert_string_equal(p->subject.title, "f: \303\274ber alles");
	assert_non_null(strstr(p->commit_message, "Caf\303\251 body."));
	assert_false(p->repairs & MP_CHARSET_GUESSED);
	mp_patch_free(p);
	free(raw);
}

static void test_git_show_and_log(void **state)
{
	size_t len;
	char *script = g_strdup_printf("%s git show HEAD~1 > out", repo_script);
	char *raw = git_fixture("show", script, &len);
	struct mp_patch *p = parse_len(raw, len);

	g_free(script);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_FROM_GIT_SHOW);
	assert_non_null(p->commit_id);
	assert_int_equal(strlen(p->commit_id), 40);
	assert_string_equal(p->author_name, "A U Thor");
	assert_string_equal(p->author_email, "author@example.org");
	assert_int_equal(p->timestamp, 1700000000);
	assert_int_equal(p->tz_offset, 60);
	assert_string_equal(p->subject.title, "main: rename b to bb");
	/* the 4-space indent is gone */
	assert_string_equal(
		p->commit_message,
		"main: rename b to bb\n\n"
		"The variable b was too short.\n\n"
		"Fixes: 0123456789ab (\"main: add b\")\n"
		"Signed-off-by: C O Mitter <committer@example.org>\n");
	assert_int_equal(p->ntrailers, 2);
	assert_string_equal(p->files[0], "main.c");
	mp_patch_free(p);
	free(raw);

	/* --format=fuller: AuthorDate wins over CommitDate */
	script = g_strdup_printf("%s GIT_COMMITTER_DATE='1800000000 +0000' "
				 "git commit -q --amend --no-edit; "
				 "git show --format=fuller HEAD > out",
				 repo_script);
	raw = git_fixture("fuller", script, &len);
	g_free(script);
	p = parse_len(raw, len);
	assert_true(p->repairs & MP_FROM_GIT_SHOW);
	assert_int_equal(p->timestamp, 1700000000);
	assert_string_equal(p->subject.title,
			    "files: delete, rename, add, binary");
	assert_string_equal(p->author_email, "author@example.org");
	assert_int_equal(p->nfiles, 4);
	mp_patch_free(p);
	free(raw);

	/* git log -p: the first commit only */
	script = g_strdup_printf("%s git log -p -2 > out", repo_script);
	raw = git_fixture("log", script, &len);
	g_free(script);
	p = parse_len(raw, len);
	assert_string_equal(p->subject.title,
			    "files: delete, rename, add, binary");
	assert_false(has_file(p, "main.c"));
	assert_true(has_file(p, "gone.txt"));
	mp_patch_free(p);
	free(raw);
}

/* ---- the seeds in ../shared/seeds ---- */

static char *read_seed(const char *prefix, size_t *len)
{
	const char *dir = getenv("QUORUM_SEEDS");
	char *path = NULL, *data = NULL;
	GDir *d;
	const char *name;

	if (!dir)
		dir = "../shared/seeds";
	d = g_dir_open(dir, 0, NULL);
	if (!d)
		return NULL;
	while ((name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, prefix))
			path = g_build_filename(dir, name, NULL);
	g_dir_close(d);
	if (path)
		data = read_file(path, len);
	g_free(path);
	return data;
}

static void test_seed_autosel(void **state)
{
	size_t len;
	char *raw = read_seed("001-", &len);
	struct mp_patch *p;

	if (!raw)
		skip();
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->subject.title,
			    "wil6210: fix support for sparrow chipsets");
	assert_int_equal(p->subject.index, 6);
	assert_int_equal(p->subject.total, 6);
	assert_string_equal(p->subject.tags[0], "AUTOSEL");
	assert_string_equal(p->subject.tags[1], "5.10");
	/* the in-body From: names the author, the mail From: the sender */
	assert_string_equal(p->author_name, "Sebastian Gottschall");
	assert_string_equal(p->author_email, "s.gottschall@dd-wrt.com");
	assert_string_equal(p->from, "Sasha Levin <sashal@kernel.org>");
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0],
			    "drivers/net/wireless/ath/wil6210/interrupt.c");
	/* the diff starts at the real header, not in the ```c notes */
	assert_true(starts_with(p->diff, "diff --git a/drivers/net/wireless/"
					 "ath/wil6210/interrupt.c"));
	assert_non_null(strstr(p->notes, "**YES**"));
	assert_non_null(strstr(p->notes, "```c"));
	assert_null(strstr(p->commit_message, "**YES**"));
	assert_true(starts_with(p->commit_message,
				"wil6210: fix support for sparrow chipsets\n\n"
				"[ Upstream commit 5939636609"));
	assert_int_equal(p->ntrailers, 4);
	assert_string_equal(mp_trailer_get(p->trailers, p->ntrailers, "Link"),
			    "https://patch.msgid.link/"
			    "20250304012131.25970-2-s.gottschall@dd-wrt.com");
	assert_true(ends_with(p->diff, p->diff_len,
			      "wmb(); /* make sure write completed */\n"));
	assert_all_utf8(p);
	mp_patch_free(p);
	free(raw);
}

static void test_seed_git_show(void **state)
{
	size_t len;
	char *raw = read_seed("002-", &len);
	struct mp_patch *p;

	if (!raw)
		skip();
	p = parse_len(raw, len);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_FROM_GIT_SHOW);
	assert_string_equal(p->commit_id,
			    "391dda1bd7c56de62b96126214f040fe8965561b");
	assert_string_equal(p->subject.title,
			    "tracing: Use hashtable.h for event_hash");
	assert_string_equal(p->author_name, "Sasha Levin");
	assert_null(p->author_email);
	assert_int_equal(p->timestamp, 1742688000); /* 2025-03-23 UTC */
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "kernel/trace/trace_output.c");
	assert_true(starts_with(p->diff, "diff --git a/kernel/trace/"));
	assert_int_equal(p->ntrailers, 2);
	assert_null(strstr(p->commit_message, "Repository:"));
	assert_all_utf8(p);
	mp_patch_free(p);
	free(raw);
}

/* ---- hand-written mail ---- */

#define HDRS                                                                   \
	"From: A U Thor <author@example.org>\n"                                \
	"To: list@example.org\n"                                               \
	"Date: Tue, 14 Nov 2023 22:13:20 +0000\n"                              \
	"Message-ID: <1.patch@example.org>\n"

#define DIFF                                                                   \
	"diff --git a/f.c b/f.c\n"                                             \
	"index 1111111..2222222 100644\n"                                      \
	"--- a/f.c\n"                                                          \
	"+++ b/f.c\n"                                                          \
	"@@ -1,3 +1,3 @@\n"                                                    \
	" int a;\n"                                                            \
	"-int b = 1;\n"                                                        \
	"+int b = 2;\n"                                                        \
	" int c;\n"

static void test_quoted_printable(void **state)
{
	struct mp_patch *p = parse(
		HDRS
		"Subject: [PATCH] f: qp\n"
		"MIME-Version: 1.0\n"
		"Content-Type: text/plain; charset=utf-8\n"
		"Content-Transfer-Encoding: quoted-printable\n"
		"\n"
		"A very long line that a mailer wrapped with a soft break=\n"
		" here, and caf=C3=A9.\n"
		"\n"
		"Signed-off-by: A U Thor <author@example.org>\n"
		"---\n"
		"diff --git a/f.c b/f.c\n"
		"index 1111111..2222222 100644\n"
		"--- a/f.c\n"
		"+++ b/f.c\n"
		"@@ -1,3 +1,3 @@\n"
		" int a;\n"
		"-int b =3D 1;\n"
		"+int b =3D 2;\n"
		" int c;\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_non_null(
		strstr(p->commit_message, "soft break here, and caf\303\251."));
	assert_string_equal(p->diff, DIFF);
	assert_int_equal(p->ntrailers, 1);
	mp_patch_free(p);
}

static void test_base64(void **state)
{
	static const char body[] = "Body in base64.\n\n"
				   "Signed-off-by: X <x@example.org>\n"
				   "---\n" DIFF;
	gchar *b64 = g_base64_encode((const guchar *)body, strlen(body));
	char *mail = g_strdup_printf(HDRS "Subject: [PATCH] f: b64\n"
					  "MIME-Version: 1.0\n"
					  "Content-Type: text/plain; "
					  "charset=\"utf-8\"\n"
					  "Content-Transfer-Encoding: base64\n"
					  "\n%s\n",
				     b64);
	struct mp_patch *p = parse(mail);

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->commit_message,
			    "f: b64\n\nBody in base64.\n\n"
			    "Signed-off-by: X <x@example.org>\n");
	mp_patch_free(p);
	g_free(mail);
	g_free(b64);
}

static void test_attachment_octet_stream(void **state)
{
	static const char att[] = DIFF;
	gchar *b64 = g_base64_encode((const guchar *)att, strlen(att));
	char *mail = g_strdup_printf(
		HDRS "Subject: [PATCH] f: attached\n"
		     "MIME-Version: 1.0\n"
		     "Content-Type: multipart/mixed; boundary=\"XX\"\n"
		     "\n"
		     "--XX\n"
		     "Content-Type: text/plain; charset=us-ascii\n"
		     "\n"
		     "Please apply the attached fix.\n"
		     "\n"
		     "Signed-off-by: A U Thor <author@example.org>\n"
		     "--XX\n"
		     "Content-Type: application/octet-stream; name=fix.patch\n"
		     "Content-Disposition: attachment; filename=fix.patch\n"
		     "Content-Transfer-Encoding: base64\n"
		     "\n%s\n"
		     "--XX--\n",
		b64);
	struct mp_patch *p = parse(mail);

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->files[0], "f.c");
	assert_non_null(strstr(p->commit_message, "Please apply"));
	assert_int_equal(p->ntrailers, 1);
	mp_patch_free(p);
	g_free(mail);
	g_free(b64);
}

static void test_patch_file_attached_to_empty_mail(void **state)
{
	size_t len;
	char *patch =
		git_fixture("attfile",
			    "printf 'x\\ny\\n' > f.c; git add f.c; "
			    "git commit -q -m init; printf 'x\\nz\\n' > f.c; "
			    "GIT_AUTHOR_NAME='Real Author' git commit -q -a "
			    "-m 'f: use z' -m 'Because z.' -s; "
			    "git format-patch -q --stdout -1 > out",
			    &len);
	gchar *b64 = g_base64_encode((const guchar *)patch, len);
	char *mail = g_strdup_printf(
		"From: Forwarder <fw@example.org>\n"
		"Subject: patch for you\n"
		"Message-ID: <fw@example.org>\n"
		"Content-Type: multipart/mixed; boundary=b\n"
		"\n"
		"--b\n"
		"Content-Type: text/plain\n"
		"\n"
		"\n"
		"--b\n"
		"Content-Type: text/x-patch; name=0001-f-use-z.patch\n"
		"Content-Disposition: attachment; filename=0001-f-use-z.patch\n"
		"Content-Transfer-Encoding: base64\n"
		"\n%s\n"
		"--b--\n",
		b64);
	struct mp_patch *p = parse(mail);

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	/* the attached mail's own headers give author, title, message */
	assert_string_equal(p->author_name, "Real Author");
	assert_string_equal(p->from, "Forwarder <fw@example.org>");
	assert_string_equal(p->subject.title, "f: use z");
	assert_true(starts_with(p->commit_message,
				"f: use z\n\nBecause z.\n\nSigned-off-by:"));
	assert_int_equal(p->ntrailers, 1);
	assert_int_equal(strlen(p->commit_id), 40);
	assert_int_equal(p->timestamp, 1700000000);
	assert_string_equal(p->files[0], "f.c");
	assert_true(ends_with(p->diff, p->diff_len, "+z\n"));
	mp_patch_free(p);
	g_free(mail);
	g_free(b64);
	free(patch);

	/* a single-part mail with a filename is still read as the body */
	p = parse(HDRS "Subject: [PATCH] f: named\n"
		       "Content-Type: text/plain; name=x.patch\n"
		       "Content-Disposition: inline; filename=x.patch\n"
		       "\n"
		       "Body.\n"
		       "---\n" DIFF);
	assert_string_equal(p->commit_message, "f: named\n\nBody.\n");
	assert_false(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	mp_patch_free(p);
}

static void test_forwarded_patch(void **state)
{
	struct mp_patch *p =
		parse("From: Forwarder <fw@example.org>\n"
		      "Subject: Fwd: [PATCH 2/3] f: thing\n"
		      "Message-ID: <fwd@example.org>\n"
		      "Content-Type: multipart/mixed; boundary=b\n"
		      "\n"
		      "--b\n"
		      "Content-Type: text/plain\n"
		      "\n"
		      "Please look at this one.\n"
		      "--b\n"
		      "Content-Type: message/rfc822\n"
		      "\n"
		      "From: Real Author <real@example.org>\n"
		      "Date: Mon, 1 Jan 2024 10:00:00 +0000\n"
		      "Subject: [PATCH 2/3] f: thing\n"
		      "Message-ID: <orig@example.org>\n"
		      "Content-Type: text/plain; charset=utf-8\n"
		      "Content-Transfer-Encoding: quoted-printable\n"
		      "\n"
		      "Original body.\n"
		      "\n"
		      "Signed-off-by: Real Author <real@example.org>\n"
		      "---\n"
		      "diff --git a/f.c b/f.c\n"
		      "--- a/f.c\n"
		      "+++ b/f.c\n"
		      "@@ -1 +1 @@\n"
		      "-int b =3D 1;\n"
		      "+int b =3D 2;\n"
		      "--b--\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	assert_string_equal(p->message_id, "fwd@example.org");
	assert_string_equal(p->from, "Forwarder <fw@example.org>");
	assert_string_equal(p->author_name, "Real Author");
	assert_int_equal(p->timestamp, 1704103200);
	assert_string_equal(p->commit_message,
			    "f: thing\n\nOriginal body.\n\n"
			    "Signed-off-by: Real Author <real@example.org>\n");
	assert_int_equal(p->ntrailers, 1);
	assert_int_equal(p->subject.index, 2);
	assert_true(p->subject.reply);
	assert_true(ends_with(p->diff, p->diff_len, "+int b = 2;\n"));
	assert_string_equal(p->files[0], "f.c");
	mp_patch_free(p);

	/* a forwarded mail with no diff leaves the outer mail as it is */
	p = parse("From: F <fw@example.org>\n"
		  "Subject: Fwd: hello\n"
		  "Content-Type: multipart/mixed; boundary=b\n"
		  "\n"
		  "--b\n"
		  "Content-Type: text/plain\n"
		  "\n"
		  "fyi\n"
		  "--b\n"
		  "Content-Type: message/rfc822\n"
		  "\n"
		  "From: X <x@example.org>\nSubject: hello\n\nhi\n"
		  "--b--\n");
	assert_int_equal(p->kind, MP_KIND_REPLY);
	assert_string_equal(p->commit_message, "hello\n\nfyi\n");
	assert_string_equal(p->author_name, "F");
	mp_patch_free(p);
}

static void test_text_plain_attachment(void **state)
{
	struct mp_patch *p =
		parse(HDRS "Subject: fix for f\n"
			   "Content-Type: multipart/mixed; boundary=b\n"
			   "\n"
			   "--b\n"
			   "Content-Type: text/html\n"
			   "\n"
			   "<p>see attachment</p>\n"
			   "--b\n"
			   "Content-Type: text/plain; name=f.diff\n"
			   "Content-Disposition: attachment; filename=f.diff\n"
			   "\n" DIFF "--b--\n");

	/* no [PATCH] tag, but it carries a diff */
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	assert_string_equal(p->diff, DIFF);
	mp_patch_free(p);
}

static void test_alternative_and_signed(void **state)
{
	/* a web mailer: text and HTML; the text part is the body */
	struct mp_patch *p = parse(
		HDRS "Subject: [PATCH] f: alt\n"
		     "Content-Type: multipart/alternative; boundary=\"a\"\n"
		     "\n"
		     "--a\n"
		     "Content-Type: text/plain; charset=utf-8\n"
		     "\n"
		     "Body.\n"
		     "---\n" DIFF "\n"
		     "--a\n"
		     "Content-Type: text/html; charset=utf-8\n"
		     "\n"
		     "<pre>--- a/evil.c\n+++ b/evil.c\n@@ -1 +1 @@\n-a\n+b\n"
		     "</pre>\n"
		     "--a--\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->diff, DIFF);
	assert_int_equal(p->nfiles, 1);
	assert_false(p->repairs & MP_DIFF_FROM_ATTACHMENT);
	mp_patch_free(p);

	/* PGP/MIME: the signed text part is read, the signature ignored */
	p = parse(HDRS "Subject: [PATCH] f: signed\n"
		       "Content-Type: multipart/signed; micalg=pgp-sha256;\n"
		       " protocol=\"application/pgp-signature\"; boundary=s\n"
		       "\n"
		       "--s\n"
		       "Content-Type: multipart/mixed; boundary=m\n"
		       "\n"
		       "--m\n"
		       "Content-Type: text/plain\n"
		       "Content-Transfer-Encoding: quoted-printable\n"
		       "\n"
		       "Signed body.\n"
		       "---\n" DIFF "--m--\n"
		       "\n"
		       "--s\n"
		       "Content-Type: application/pgp-signature\n"
		       "\n"
		       "-----BEGIN PGP SIGNATURE-----\nxyz\n"
		       "-----END PGP SIGNATURE-----\n"
		       "--s--\n");
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->commit_message, "f: signed\n\nSigned body.\n");
	mp_patch_free(p);
}

static void test_html_only(void **state)
{
	/* an HTML-only review: its own trailer counts, the quoted one not */
	struct mp_patch *p = parse(
		"From: Reviewer <rev@example.org>\n"
		"Subject: Re: [PATCH] f: thing\n"
		"Content-Type: text/html; charset=utf-8\n"
		"\n"
		"<html><head><style>p {color: red}</style></head><body>\n"
		"<p>Looks&nbsp;good &amp; clean.</p>\n"
		"<blockquote><div>Signed-off-by: Quoted &lt;q@example.org&gt;"
		"</div></blockquote>\n"
		"<div>Reviewed-by: Reviewer &lt;rev@example.org&gt;</div>\n"
		"<pre>  kept   as is</pre>\n"
		"</body></html>\n");

	assert_int_equal(p->kind, MP_KIND_REPLY);
	assert_non_null(strstr(p->commit_message, "Looks good & clean.\n"));
	assert_non_null(strstr(p->commit_message,
			       "> Signed-off-by: Quoted <q@example.org>\n"));
	assert_non_null(strstr(p->commit_message, "\n  kept   as is\n"));
	assert_null(strstr(p->commit_message, "color"));
	assert_int_equal(p->ntrailers, 1);
	assert_string_equal(p->trailers[0].key, "Reviewed-by");
	assert_string_equal(p->trailers[0].value, "Reviewer <rev@example.org>");
	assert_all_utf8(p);
	mp_patch_free(p);

	/* hostile HTML: cut tags, bad entities, deep quotes */
	p = parse("From: a@example.org\nSubject: x\n"
		  "Content-Type: text/html\n\n"
		  "&#0; &#x110000; &#xD800; &bogus; &#65;"
		  "<blockquote><blockquote><blockquote>q<br>"
		  "<a href=\"x");
	assert_non_null(strstr(p->commit_message, "&#0; &#x110000; &#xD800; "
						  "&bogus; A"));
	assert_non_null(strstr(p->commit_message, ">>> q\n"));
	assert_all_utf8(p);
	mp_patch_free(p);
}

static void test_crlf(void **state)
{
	const char *lf = HDRS "Subject: [PATCH] f: crlf\n"
			      "\n"
			      "Body.\n"
			      "---\n" DIFF;
	GString *crlf = g_string_new(NULL);
	struct mp_patch *p;

	for (const char *c = lf; *c; c++) {
		if (*c == '\n')
			g_string_append_c(crlf, '\r');
		g_string_append_c(crlf, *c);
	}
	p = parse(crlf->str);
	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_true(p->repairs & MP_REPAIRED_CRLF);
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->subject.title, "f: crlf");
	assert_string_equal(p->commit_message, "f: crlf\n\nBody.\n");
	mp_patch_free(p);
	g_string_free(crlf, TRUE);

	/* a diff that adds a DOS line keeps its CR: not every line has one */
	p = parse(HDRS "Subject: [PATCH] dos\n\nx\n---\n"
		       "--- a/d.txt\n+++ b/d.txt\n@@ -1 +1 @@\n"
		       "-a\r\n+b\r\n");
	assert_false(p->repairs & MP_REPAIRED_CRLF);
	assert_non_null(strstr(p->diff, "+b\r\n"));
	assert_string_equal(p->files[0], "d.txt");
	mp_patch_free(p);
}

static void test_format_flowed(void **state)
{
	struct mp_patch *p = parse(
		HDRS "Subject: [PATCH] f: flowed\n"
		     "Content-Type: text/plain; charset=utf-8; format=flowed\n"
		     "\n"
		     "This paragraph was flowed by the mailer \n"
		     "into two lines.\n"
		     "\n"
		     "Signed-off-by: A U Thor <author@example.org>\n"
		     "---\n" DIFF);

	assert_true(p->repairs & MP_REPAIRED_FLOWED);
	assert_false(p->repairs & MP_FLOWED_UNSAFE);
	assert_non_null(strstr(p->commit_message,
			       "flowed by the mailer into two lines."));
	assert_string_equal(p->diff, DIFF);
	mp_patch_free(p);

	/* space-stuffed context lines are unstuffed, and that mends it */
	p = parse(HDRS "Subject: [PATCH] f: stuffed\n"
		       "Content-Type: text/plain; format=flowed\n"
		       "\n"
		       "Body.\n"
		       "---\n"
		       "diff --git a/f.c b/f.c\n"
		       "--- a/f.c\n"
		       "+++ b/f.c\n"
		       "@@ -1,3 +1,3 @@\n"
		       "  int a;\n"
		       "-int b = 1;\n"
		       "+int b = 2;\n"
		       "  int c;\n");
	assert_true(p->repairs & MP_REPAIRED_FLOWED);
	assert_false(p->repairs & MP_FLOWED_UNSAFE);
	assert_non_null(strstr(p->diff, "\n int a;\n"));
	mp_patch_free(p);

	/* a diff that flowed decoding would break is left as is, reported */
	p = parse(HDRS "Subject: [PATCH] f: unsafe\n"
		       "Content-Type: text/plain; format=flowed\n"
		       "\n"
		       "Body.\n"
		       "---\n"
		       "--- a/f.c\n"
		       "+++ b/f.c\n"
		       "@@ -1,2 +1,2 @@\n"
		       "-int b = 1; \n"
		       "+int b = 2;\n"
		       "-x\n"
		       "+y\n");
	assert_true(p->repairs & MP_FLOWED_UNSAFE);
	assert_non_null(strstr(p->diff, "-int b = 1; \n+int b = 2;\n"));
	mp_patch_free(p);
}

static void test_rfc2047_subjects(void **state)
{
	struct mp_patch *p =
		parse(HDRS "Subject: [PATCH] =?UTF-8?B?Y2Fmw6k6IGZpeA==?=\n"
			   "\n"
			   "x\n");

	assert_string_equal(p->subject.title, "caf\303\251: fix");
	assert_string_equal(p->subject_raw, "[PATCH] caf\303\251: fix");
	mp_patch_free(p);

	p = parse("From: =?ISO-8859-1?Q?Andr=E9_M=FCller?= <am@example.org>\n"
		  "Subject: =?iso-8859-1?q?=5BPATCH=5D_na=EFve?=\n"
		  " =?iso-8859-1?q?_folded?=\n"
		  "\n"
		  "x\n");
	assert_string_equal(p->author_name, "Andr\303\251 M\303\274ller");
	assert_string_equal(p->subject.title, "na\303\257ve folded");
	assert_true(p->subject.has_patch_tag);
	assert_false(p->repairs & MP_CHARSET_GUESSED);
	mp_patch_free(p);
}

static void test_undeclared_8bit(void **state)
{
	/* latin-1 bytes, no charset anywhere */
	struct mp_patch *p = parse("From: Ren\xe9 <r@example.org>\n"
				   "Subject: [PATCH] caf\xe9\n"
				   "\n"
				   "Na\xefve body \x93quoted\x94.\n"
				   "---\n" DIFF);

	assert_true(p->repairs & MP_CHARSET_GUESSED);
	assert_string_equal(p->subject.title, "caf\303\251");
	assert_string_equal(p->author_name, "Ren\303\251");
	/* windows-1252 curly quotes */
	assert_non_null(
		strstr(p->commit_message,
		       "Na\303\257ve body \342\200\234quoted\342\200\235."));
	assert_all_utf8(p);
	mp_patch_free(p);

	/* a declared charset that lies: utf-8 with a latin-1 byte */
	p = parse(HDRS "Subject: x\n"
		       "Content-Type: text/plain; charset=utf-8\n"
		       "\n"
		       "ok \303\251 and bad \xe9 and \x81.\n");
	assert_non_null(strstr(p->commit_message,
			       "ok \303\251 and bad \303\251 and \302\201."));
	assert_all_utf8(p);
	mp_patch_free(p);

	/* a declared legacy charset is converted */
	p = parse(HDRS "Subject: x\n"
		       "Content-Type: text/plain; charset=iso-8859-15\n"
		       "\n"
		       "euro \xa4.\n");
	assert_non_null(strstr(p->commit_message, "euro \342\202\254."));
	assert_false(p->repairs & MP_CHARSET_GUESSED);
	mp_patch_free(p);
}

static void test_in_body_headers(void **state)
{
	struct mp_patch *p =
		parse("From: Sender <sender@example.org>\n"
		      "Date: Tue, 14 Nov 2023 22:13:20 +0000\n"
		      "Subject: [PATCH v2 1/2] sender's subject\n"
		      "Message-ID: <2@example.org>\n"
		      "\n"
		      "From: Real Author <real@example.org>\n"
		      "Date: Mon, 1 Jan 2024 10:00:00 +0200\n"
		      "Subject: [PATCH] the real title\n"
		      "\n"
		      "Body.\n"
		      "\n"
		      "Signed-off-by: Real Author <real@example.org>\n"
		      "---\n" DIFF);

	assert_string_equal(p->author_name, "Real Author");
	assert_string_equal(p->author_email, "real@example.org");
	assert_string_equal(p->from, "Sender <sender@example.org>");
	assert_int_equal(p->timestamp, 1704096000);
	assert_int_equal(p->tz_offset, 120);
	assert_string_equal(p->subject.title, "the real title");
	/* the numbering is the mail's */
	assert_int_equal(p->subject.index, 1);
	assert_int_equal(p->subject.version, 2);
	assert_string_equal(p->commit_message,
			    "the real title\n\nBody.\n\n"
			    "Signed-off-by: Real Author <real@example.org>\n");
	mp_patch_free(p);
}

static void test_b4_metadata(void **state)
{
	struct mp_patch *p = parse(
		HDRS "Subject: [PATCH 1/1] f: b4\n"
		     "\n"
		     "Body.\n"
		     "\n"
		     "Signed-off-by: A U Thor <author@example.org>\n"
		     "---\n"
		     " f.c | 2 +-\n"
		     "\n" DIFF "\n"
		     "---\n"
		     "base-commit: 0123456789abcdef0123456789abcdef01234567\n"
		     "change-id: 20240101-topic-0123456789ab\n"
		     "prerequisite-change-id: 20231201-other-abcdef\n"
		     "prerequisite-change-id: 20231202-more-0a1b2c:v3\n"
		     "prerequisite-change-id: bad id; rm -rf /\n"
		     "prerequisite-patch-id: "
		     "1111111111111111111111111111111111111111\n"
		     "prerequisite-patch-id: "
		     "2222222222222222222222222222222222222222\n"
		     "prerequisite-message-id: <dep-1@example.org>\n"
		     "\n"
		     "Best regards,\n"
		     "-- \n"
		     "A U Thor <author@example.org>\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->base_commit,
			    "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(p->change_id, "20240101-topic-0123456789ab");
	assert_int_equal(p->nprereq_patch_ids, 2);
	assert_string_equal(p->prereq_patch_ids[1],
			    "2222222222222222222222222222222222222222");
	assert_int_equal(p->nprereq_message_ids, 1);
	assert_string_equal(p->prereq_message_ids[0], "dep-1@example.org");
	/* b4's change-ids, with a version or not; anything else is dropped */
	assert_int_equal(p->nprereq_change_ids, 2);
	assert_string_equal(p->prereq_change_ids[0], "20231201-other-abcdef");
	assert_string_equal(p->prereq_change_ids[1], "20231202-more-0a1b2c:v3");
	mp_patch_free(p);
}

static void test_fence_in_notes(void **state)
{
	/* a complete diff quoted in a ```diff fence of the notes */
	struct mp_patch *p = parse(HDRS "Subject: [PATCH] f: real\n"
					"\n"
					"Body.\n"
					"---\n"
					"Reviewer notes:\n"
					"```diff\n"
					"--- a/other.c\n"
					"+++ b/other.c\n"
					"@@ -1 +1 @@\n"
					"-old\n"
					"+new\n"
					"```\n"
					"\n" DIFF "-- \n2.39.5\n");

	assert_string_equal(p->diff, DIFF);
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "f.c");
	assert_non_null(strstr(p->notes, "--- a/other.c"));
	mp_patch_free(p);
}

static void test_plain_unified_diff(void **state)
{
	struct mp_patch *p =
		parse(HDRS "Subject: [PATCH] two files, no git\n"
			   "\n"
			   "Made with diff -u.\n"
			   "\n"
			   "diff -u a/x.c b/x.c\n"
			   "--- a/x.c\t2024-01-01 00:00:00.000000000 +0000\n"
			   "+++ b/x.c\t2024-01-02 00:00:00.000000000 +0000\n"
			   "@@ -1,2 +1,2 @@\n"
			   "-a\n"
			   "+b\n"
			   "\n" /* an empty context line a mailer trimmed */
			   "--- y.c.orig\n"
			   "+++ y.c\n"
			   "@@ -1 +0,0 @@\n"
			   "-gone\n"
			   "--- a/z.c\n"
			   "+++ /dev/null\n"
			   "@@ -1 +0,0 @@\n"
			   "-z\n"
			   "\\ No newline at end of file\n"
			   "-- \n"
			   "sig\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_int_equal(p->nfiles, 3);
	assert_string_equal(p->files[0], "x.c");
	assert_string_equal(p->files[1], "y.c");
	assert_string_equal(p->files[2], "z.c");
	assert_true(starts_with(p->diff, "diff -u a/x.c b/x.c\n"));
	assert_true(ends_with(p->diff, p->diff_len,
			      "-z\n\\ No newline at end of file\n"));
	assert_string_equal(p->commit_message,
			    "two files, no git\n\nMade with diff -u.\n");
	mp_patch_free(p);
}

static void test_miscounted_hunks(void **state)
{
	/* b4's hand-made samples: "@@@" header, counts that are too low */
	struct mp_patch *p = parse(HDRS "Subject: [PATCH] Simple test\n"
					"\n"
					"Body.\n"
					"\n"
					"Signed-off-by: A <a@example.org>\n"
					"\n"
					"--- a/b4/junk.py\n"
					"+++ b/b4/junk.py\n"
					"@@@ -1,1 +1,1 @@ def junk():\n"
					" \n"
					" \n"
					"-junk1\n"
					"+junk2\n"
					" \n"
					" \n"
					"-- \n"
					"2.wong.fu\n");

	assert_int_equal(p->kind, MP_KIND_PATCH);
	assert_string_equal(p->files[0], "b4/junk.py");
	assert_true(ends_with(p->diff, p->diff_len, "-junk1\n+junk2\n \n \n"));
	assert_int_equal(p->ntrailers, 1);
	mp_patch_free(p);

	/* the same with the blank context lines stripped to nothing */
	p = parse(HDRS "Subject: [PATCH] Simple test\n"
		       "\n"
		       "Body.\n"
		       "\n"
		       "--- a/b4/junk.py\n"
		       "+++ b/b4/junk.py\n"
		       "@@ -1,1 +1,1 @@ def junk():\n"
		       "\n"
		       "\n"
		       "-junk1\n"
		       "+junk2\n"
		       "\n"
		       "\n"
		       "-- \n"
		       "2.wong.fu\n");
	assert_true(ends_with(p->diff, p->diff_len, "\n-junk1\n+junk2\n"));
	mp_patch_free(p);

	/* a right count followed by the signature and b4's --- stays put */
	p = parse(HDRS "Subject: [PATCH] x\n\nBody.\n---\n" DIFF
		       "---\nbase-commit: 0123456789abcdef\n-- \nsig\n");
	assert_string_equal(p->diff, DIFF);
	assert_string_equal(p->base_commit, "0123456789abcdef");
	mp_patch_free(p);
}

/* rename from/to before the ---/+++ of an edited renamed file */
#define RDIFF                                                                  \
	"diff --git a/old.c b/new.c\n"                                         \
	"similarity index 80%\n"                                               \
	"rename from old.c\n"                                                  \
	"rename to new.c\n"                                                    \
	"index 1111111..2222222 100644\n"                                      \
	"--- a/old.c\n"                                                        \
	"+++ b/new.c\n"                                                        \
	"@@ -1,2 +1,2 @@\n"                                                    \
	" a\n"                                                                 \
	"-b\n"                                                                 \
	"+c\n"                                                                 \
	"diff --git a/x.c b/y.c\n"                                             \
	"similarity index 100%\n"                                              \
	"copy from x.c\n"                                                      \
	"copy to y.c\n"

static void test_rename_with_edit(void **state)
{
	struct mp_patch *p = parse(HDRS "Subject: [PATCH] mv\n\nmv\n---\n" RDIFF
					"-- \n2.39.5\n");

	assert_string_equal(p->diff, RDIFF);
	assert_int_equal(p->nfiles, 2);
	assert_string_equal(p->files[0], "new.c");
	assert_string_equal(p->files[1], "y.c");
	mp_patch_free(p);
}

static void test_pull_request(void **state)
{
	struct mp_patch *p = parse(
		HDRS "Subject: [GIT PULL] net fixes for 6.8\n"
		     "\n"
		     "Hi Linus,\n"
		     "\n"
		     "The following changes since commit "
		     "0123456789abcdef0123456789abcdef01234567:\n"
		     "\n"
		     "  Linux 6.8-rc1 (2024-01-21 14:11:32 -0800)\n"
		     "\n"
		     "are available in the Git repository at:\n"
		     "\n"
		     "  git://git.kernel.org/pub/scm/linux/kernel/git/net.git "
		     "tags/net-6.8\n"
		     "\n"
		     "---------------------------------------------------------"
		     "-------\n"
		     "A U Thor (1):\n"
		     "      f: fix\n"
		     "\n" DIFF);

	assert_int_equal(p->kind, MP_KIND_PULL);
	assert_string_equal(p->base_commit,
			    "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(p->subject.tags[0], "GIT PULL");
	mp_patch_free(p);

	/* the subject alone says so too; a reply to it does not */
	p = parse(HDRS "Subject: [PULL] tree for 6.9\n\nPlease pull.\n");
	assert_int_equal(p->kind, MP_KIND_PULL);
	mp_patch_free(p);
	p = parse(HDRS "Subject: Re: [GIT PULL] tree\n\nPulled, thanks.\n");
	assert_int_equal(p->kind, MP_KIND_REPLY);
	mp_patch_free(p);
}

static void test_reply_and_cover(void **state)
{
	struct mp_patch *p =
		parse("From: Reviewer <rev@example.org>\n"
		      "Subject: Re: [PATCH 2/3] f: thing\n"
		      "Message-ID: <r1@example.org>\n"
		      "In-Reply-To: <p2@example.org>\n"
		      "References: <cover@example.org>\n"
		      "  <p2@example.org> <cover@example.org>\n"
		      "\n"
		      "On Mon, A U Thor wrote:\n"
		      "> -int b = 1;\n"
		      "> +int b = 2;\n"
		      "> Signed-off-by: Quoted <q@example.org>\n"
		      "\n"
		      "Looks good.\n"
		      "\n"
		      "Reviewed-by: Reviewer <rev@example.org>\n"
		      "Tested-by: Reviewer <rev@example.org>\n"
		      "\n"
		      "-- \n"
		      "Acked-by: In Signature <sig@example.org>\n");

	assert_int_equal(p->kind, MP_KIND_REPLY);
	assert_true(p->subject.reply);
	assert_null(p->diff);
	assert_string_equal(p->in_reply_to, "p2@example.org");
	assert_int_equal(p->nreferences, 2);
	assert_string_equal(p->references[0], "cover@example.org");
	assert_string_equal(p->references[1], "p2@example.org");
	assert_int_equal(p->ntrailers, 2);
	assert_string_equal(p->trailers[0].key, "Reviewed-by");
	assert_string_equal(p->trailers[1].key, "Tested-by");
	mp_patch_free(p);

	p = parse(HDRS
		  "Subject: [PATCH net-next 0/2] two things\n"
		  "\n"
		  "This series does two things.\n"
		  "\n"
		  "A U Thor (2):\n"
		  "  f: one\n"
		  "  f: two\n"
		  "\n"
		  " f.c | 4 ++--\n"
		  " 1 file changed, 2 insertions(+), 2 deletions(-)\n"
		  "\n"
		  "base-commit: abcdef0123456789abcdef0123456789abcdef01\n");
	assert_int_equal(p->kind, MP_KIND_COVER);
	assert_int_equal(p->subject.total, 2);
	assert_string_equal(p->base_commit,
			    "abcdef0123456789abcdef0123456789abcdef01");
	mp_patch_free(p);

	/* a patch-tagged subject with no diff is a cover, too */
	p = parse(HDRS "Subject: [PATCH] lost its diff\n\nbody\n");
	assert_int_equal(p->kind, MP_KIND_COVER);
	mp_patch_free(p);
}

static void test_no_diff_and_headers(void **state)
{
	struct mp_patch *p = parse("From: bot@example.org\n"
				   "Subject: Weekly report\n"
				   "Auto-Submitted: auto-generated\n"
				   "List-Id: The list <list.example.org>\n"
				   "\n"
				   "Nothing to see.\n");

	assert_int_equal(p->kind, MP_KIND_OTHER);
	assert_true(p->auto_submitted);
	assert_string_equal(p->list_id, "list.example.org");
	assert_string_equal(p->subject.title, "Weekly report");
	assert_null(p->diff);
	assert_int_equal(p->nfiles, 0);
	assert_string_equal(p->author_email, "bot@example.org");
	/* no Message-ID: a stable synthetic one */
	assert_true(starts_with(p->message_id, "quorum-"));
	assert_true(g_str_has_suffix(p->message_id, "@local"));
	{
		struct mp_patch *q =
			parse("From: bot@example.org\n"
			      "Subject: Weekly report\n"
			      "Auto-Submitted: auto-generated\n"
			      "List-Id: The list <list.example.org>\n"
			      "\n"
			      "Nothing to see.\n");
		struct mp_patch *r = parse("From: bot@example.org\n"
					   "Subject: Weekly report 2\n\nx\n");

		assert_string_equal(p->message_id, q->message_id);
		assert_string_not_equal(p->message_id, r->message_id);
		mp_patch_free(q);
		mp_patch_free(r);
	}
	mp_patch_free(p);

	p = parse("From: a@example.org\nPrecedence: bulk\n"
		  "Auto-Submitted: no\nSubject: s\n\nb\n");
	assert_true(p->auto_submitted);
	mp_patch_free(p);
	p = parse("From: a@example.org\nAuto-Submitted: no\n"
		  "Subject: s\n\nb\n");
	assert_false(p->auto_submitted);
	mp_patch_free(p);
}

static void test_references_capped(void **state)
{
	GString *m = g_string_new("From: a@example.org\nSubject: Re: x\n"
				  "References:");
	struct mp_patch *p;

	for (int i = 0; i < 600; i++)
		g_string_append_printf(m, " <r%d@example.org>", i % 500);
	g_string_append(m, "\n\nbody\n");
	p = parse(m->str);
	assert_int_equal(p->nreferences, 128);
	assert_string_equal(p->references[0], "r0@example.org"); /* root */
	/* the newest unique ones are kept, repeats of older ones dropped */
	assert_string_equal(p->references[127], "r499@example.org");
	assert_string_equal(p->references[1], "r373@example.org");
	for (size_t i = 0; i < p->nreferences; i++)
		for (size_t j = i + 1; j < p->nreferences; j++)
			assert_string_not_equal(p->references[i],
						p->references[j]);
	mp_patch_free(p);

	/* a hostile header of 300,000 ids: linear work, root + newest kept */
	g_string_assign(m, "From: a@example.org\nSubject: Re: x\n"
			   "References:");
	for (int i = 0; i < 300000; i++)
		g_string_append_printf(m, " <%d@x>", i);
	g_string_append(m, "\n\nbody\n");
	p = parse(m->str);
	assert_int_equal(p->nreferences, 128);
	assert_string_equal(p->references[0], "0@x");
	assert_string_equal(p->references[127], "299999@x");
	mp_patch_free(p);
	g_string_free(m, TRUE);
}

static void test_bad_dates(void **state)
{
	struct mp_patch *p = parse("From: a@example.org\nDate: not a date\n"
				   "Subject: s\n\nb\n");

	assert_int_equal(p->timestamp, 0);
	assert_string_equal(p->date, "not a date");
	mp_patch_free(p);
	p = parse("commit 0123456789abcdef0123456789abcdef01234567\n"
		  "Author: X <x@example.org>\n"
		  "Date:   2024-02-29T12:00:00+01:00\n\n    t\n");
	assert_int_equal(p->timestamp, 1709204400);
	assert_int_equal(p->tz_offset, 60);
	assert_int_equal(p->kind, MP_KIND_OTHER);
	assert_string_equal(p->commit_message, "t\n");
	mp_patch_free(p);
	/* a From_ line before `commit`: the commit line wins, no leak */
	p = parse("From 1111111111111111111111111111111111111111 Mon Sep 17 "
		  "00:00:00 2001\n"
		  "commit 2222222222222222222222222222222222222222\n"
		  "Author: X <x@example.org>\n\n    t\n");
	assert_string_equal(p->commit_id,
			    "2222222222222222222222222222222222222222");
	mp_patch_free(p);
}

static void test_headers_only(void **state)
{
	/* no body at all, and a body of CRLF blank lines */
	struct mp_patch *p = parse("From: a@example.org\nSubject: [PATCH] x\n");

	assert_int_equal(p->kind, MP_KIND_COVER);
	assert_string_equal(p->commit_message, "x\n");
	assert_null(p->notes);
	assert_null(p->diff);
	mp_patch_free(p);
	p = parse("From: a@example.org\r\nSubject: y\r\n\r\n\r\n");
	assert_int_equal(p->kind, MP_KIND_OTHER);
	assert_string_equal(p->subject.title, "y");
	assert_string_equal(p->commit_message, "y\n");
	mp_patch_free(p);
}

/* ---- bad input and limits ---- */

static int parse_err(const char *raw, size_t len, const struct mp_limits *lim,
		     char *msg)
{
	struct mp_patch *p = (struct mp_patch *)1;
	struct errmsg e = {{0}};
	int rc = mp_patch_parse(&p, raw, len, lim, &e);

	assert_null(p);
	strcpy(msg, e.msg);
	return rc;
}

static void test_bad_input(void **state)
{
	char msg[512];
	static const char blob[] = "\x7f"
				   "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0";
	struct mp_patch *p = NULL;

	assert_int_equal(parse_err("", 0, NULL, msg), MP_ERR_EMPTY);
	assert_non_null(strstr(msg, "empty"));
	assert_int_equal(mp_patch_parse(&p, NULL, 0, NULL, NULL), MP_ERR_EMPTY);
	assert_int_equal(parse_err("\n\n  \n", 5, NULL, msg), MP_ERR_EMPTY);
	assert_int_equal(parse_err(blob, sizeof(blob) - 1, NULL, msg),
			 MP_ERR_NOT_MAIL);
	assert_non_null(strstr(msg, "NUL byte at offset 7"));
	assert_int_equal(
		parse_err("just some words\nand more\n", 25, NULL, msg),
		MP_ERR_NOT_MAIL);
	assert_non_null(strstr(msg, "mail headers"));
	assert_int_equal(parse_err("From nobody Mon Jan  1 00:00:00 2024\n", 37,
				   NULL, msg),
			 MP_ERR_EMPTY);
}

static void test_limits(void **state)
{
	char msg[512];
	struct mp_limits lim = MP_LIMITS_INIT;
	GString *m = g_string_new(NULL);
	const char *ok = HDRS "Subject: [PATCH] x\n\nbody\n---\n" DIFF;

	lim.max_message = 100;
	assert_int_equal(parse_err(ok, strlen(ok), &lim, msg), MP_ERR_TOO_BIG);
	assert_non_null(strstr(msg, "more than the limit of 100 bytes"));

	lim = (struct mp_limits)MP_LIMITS_INIT;
	lim.max_diff = 50;
	assert_int_equal(parse_err(ok, strlen(ok), &lim, msg), MP_ERR_TOO_BIG);
	assert_non_null(strstr(msg, "the diff is"));
	assert_non_null(strstr(msg, "limit of 50 bytes"));

	/* 1500 header fields against the default 1000 */
	g_string_append(m, "From: a@example.org\n");
	for (int i = 0; i < 1500; i++)
		g_string_append_printf(m, "X-H%d: v\n", i);
	g_string_append(m, "Subject: s\n\nbody\n");
	assert_int_equal(parse_err(m->str, m->len, NULL, msg), MP_ERR_TOO_BIG);
	assert_non_null(strstr(msg, "1502 header fields, more than the "
				    "limit of 1000"));

	/* MIME depth */
	g_string_assign(m, "From: a@example.org\nSubject: deep\n");
	for (int i = 0; i < 20; i++)
		g_string_append_printf(m,
				       "Content-Type: multipart/mixed; "
				       "boundary=b%d\n\n--b%d\n",
				       i, i);
	g_string_append(m, "Content-Type: text/plain\n\nx\n");
	for (int i = 19; i >= 0; i--)
		g_string_append_printf(m, "--b%d--\n", i);
	assert_int_equal(parse_err(m->str, m->len, NULL, msg), MP_ERR_TOO_BIG);
	assert_non_null(strstr(msg, "deep"));

	/* attachment count */
	g_string_assign(m, "From: a@example.org\nSubject: many\n"
			   "Content-Type: multipart/mixed; boundary=b\n\n");
	for (int i = 0; i < 70; i++)
		g_string_append(m, "--b\nContent-Type: text/plain\n\nx\n");
	g_string_append(m, "--b--\n");
	assert_int_equal(parse_err(m->str, m->len, NULL, msg), MP_ERR_TOO_BIG);
	assert_non_null(strstr(msg, "more than 64 MIME parts"));

	/* a pathological nest GMime would recurse into is refused first */
	g_string_assign(m, "From: a@example.org\nSubject: nest\n");
	for (int i = 0; i < 5000; i++)
		g_string_append_printf(m,
				       "Content-Type: multipart/mixed; "
				       "boundary=b%d\n\n--b%d\n",
				       i, i);
	assert_int_equal(parse_err(m->str, m->len, NULL, msg), MP_ERR_TOO_BIG);
	g_string_free(m, TRUE);
}

static void test_hostile_bytes(void **state)
{
	/* random 8-bit bytes after valid headers: parses, all UTF-8 */
	GString *m =
		g_string_new("From: a@example.org\nSubject: [PATCH] r\n\n");
	uint32_t x = 12345;
	struct mp_patch *p;

	for (int i = 0; i < 20000; i++) {
		x = x * 1103515245 + 12345;
		char c = (char)((x >> 16) & 0xff);

		g_string_append_c(m, c ? c : '\n');
		if (i % 997 == 0)
			g_string_append(m, "\ndiff --git a/\"q\\303\\x\" b/\n"
					   "--- a/\"\\377\\0\"\n+++ b/\n"
					   "@@ -1 +1,99999999999 @@\n-\n");
	}
	p = parse_len(m->str, m->len);
	assert_all_utf8(p);
	mp_patch_free(p);
	g_string_free(m, TRUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_patch_single),
		cmocka_unit_test(test_format_patch_files),
		cmocka_unit_test(test_format_patch_series),
		cmocka_unit_test(test_format_patch_attach_inline),
		cmocka_unit_test(test_format_patch_utf8_author),
		cmocka_unit_test(test_git_show_and_log),
		cmocka_unit_test(test_seed_autosel),
		cmocka_unit_test(test_seed_git_show),
		cmocka_unit_test(test_quoted_printable),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_attachment_octet_stream),
		cmocka_unit_test(test_patch_file_attached_to_empty_mail),
		cmocka_unit_test(test_forwarded_patch),
		cmocka_unit_test(test_text_plain_attachment),
		cmocka_unit_test(test_alternative_and_signed),
		cmocka_unit_test(test_html_only),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_format_flowed),
		cmocka_unit_test(test_rfc2047_subjects),
		cmocka_unit_test(test_undeclared_8bit),
		cmocka_unit_test(test_in_body_headers),
		cmocka_unit_test(test_b4_metadata),
		cmocka_unit_test(test_fence_in_notes),
		cmocka_unit_test(test_plain_unified_diff),
		cmocka_unit_test(test_miscounted_hunks),
		cmocka_unit_test(test_rename_with_edit),
		cmocka_unit_test(test_pull_request),
		cmocka_unit_test(test_reply_and_cover),
		cmocka_unit_test(test_no_diff_and_headers),
		cmocka_unit_test(test_references_capped),
		cmocka_unit_test(test_headers_only),
		cmocka_unit_test(test_bad_dates),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_hostile_bytes),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
