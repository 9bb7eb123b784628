// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-apply.c - review/apply against real git: every fixture is a repo
 * made with git init + commits at test time, every expected tree id is
 * what git itself (git am, git am -3, or the commit) has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "review/review.h"

static char tmp[256];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char path[512], cmd[1200];
	va_list ap;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/script.sh", tmp);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "set -e\ncd '%s'\n", tmp);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "sh %s >%s/sh.log 2>&1", path, tmp);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/sh.log >&2", tmp);
		(void)!system(cmd);
		fail_msg("fixture script failed");
	}
}

/* stdout of a shell command run in tmp, trailing newline removed. */
static char *capture(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *capture(const char *fmt, ...)
{
	char cmd[2048];
	struct sb out = SB_INIT;
	va_list ap;
	FILE *fp;
	int n, c;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", tmp);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while ((c = fgetc(fp)) != EOF)
		sb_addch(&out, c);
	pclose(fp);
	sb_rtrim(&out);
	return sb_detach(&out, NULL);
}

static char *slurp(const char *name)
{
	char path[512];
	struct sb out = SB_INIT;
	FILE *fp;
	int c;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while ((c = fgetc(fp)) != EOF)
		sb_addch(&out, c);
	fclose(fp);
	return sb_detach(&out, NULL);
}

/*
 * A patch from a `git format-patch` file (or a bare diff): the title from
 * Subject:, the diff from the first "diff --git", base-commit: and
 * prerequisite-patch-id: lines. Just enough of mailparse for these tests.
 */
static struct mp_patch *patch_from(const char *name, int index, int total)
{
	struct mp_patch *p = calloc(1, sizeof(*p));
	char *raw = slurp(name), *d, *l;

	p->kind = MP_KIND_PATCH;
	p->subject.index = index;
	p->subject.total = total;
	l = strstr(raw, "Subject: ");
	if (l) {
		char *e = strchr(l, '\n'), *t = strstr(l, "] ");

		t = t && t < e ? t + 2 : l + 9;
		p->subject.title = strndup(t, (size_t)(e - t));
	} else {
		p->subject.title = strdup("bare diff");
	}
	p->commit_message = strdup(p->subject.title);
	p->author_name = strdup("A U Thor");
	p->author_email = strdup("author@example.org");
	p->timestamp = 1700000000;
	p->message_id = strdup("test@example.org");
	d = strstr(raw, "diff --git ");
	if (!d)
		d = raw;
	p->diff = strdup(d);
	p->diff_len = strlen(d);
	l = strstr(raw, "\nbase-commit: ");
	if (l)
		p->base_commit = strndup(l + 14, 40);
	for (l = raw; (l = strstr(l, "\nprerequisite-patch-id: ")); l++) {
		p->prereq_patch_ids =
			realloc(p->prereq_patch_ids,
				(p->nprereq_patch_ids + 1) * sizeof(char *));
		p->prereq_patch_ids[p->nprereq_patch_ids++] =
			strndup(l + 24, 40);
	}
	free(raw);
	return p;
}

static void patch_free(struct mp_patch *p)
{
	size_t i;

	free(p->subject.title);
	free(p->commit_message);
	free(p->author_name);
	free(p->author_email);
	free(p->message_id);
	free(p->diff);
	free(p->base_commit);
	for (i = 0; i < p->nprereq_patch_ids; i++)
		free(p->prereq_patch_ids[i]);
	free(p->prereq_patch_ids);
	free(p);
}

/* A series of the files NAME-1 .. NAME-n made by the fixture. */
static struct mp_series *series_of(const char *const *names, size_t n)
{
	struct mp_series *s = calloc(1, sizeof(*s));
	size_t i;

	s->patches = calloc(n, sizeof(*s->patches));
	for (i = 0; i < n; i++)
		s->patches[i] = patch_from(names[i], n > 1 ? (int)i + 1 : 0,
					   n > 1 ? (int)n : 0);
	s->npatches = n;
	s->total = (int)n;
	s->version = 1;
	s->complete = true;
	return s;
}

static void series_free(struct mp_series *s)
{
	size_t i;

	for (i = 0; i < s->npatches; i++)
		patch_free(s->patches[i]);
	free(s->patches);
	free(s);
}

struct run {
	struct rv_repo *repo;
	struct rv_apply_result *res;
	struct errmsg err;
	int ret;
};

static void apply(struct run *r, const char *repo, const char *const *names,
		  size_t n, const struct rv_apply_opts *opts)
{
	struct mp_series *s = series_of(names, n);
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, repo);
	memset(r, 0, sizeof(*r));
	assert_int_equal(rv_repo_open(&r->repo, path, &r->err), 0);
	r->ret = rv_apply_series(&r->res, r->repo, s, opts, &r->err);
	series_free(s);
}

static void run_release(struct run *r)
{
	rv_apply_result_free(r->res);
	rv_repo_free(r->repo);
}

static const char *last_tree(const struct run *r)
{
	assert_non_null(r->res);
	assert_true(r->res->npatches > 0);
	return r->res->patches[r->res->npatches - 1].tree_id;
}

/* The state a user could see change: refs, index checksum, status. */
static char *repo_state(const char *repo)
{
	return capture("cd %s && git for-each-ref && sha1sum .git/index && "
		       "git status --porcelain && ls .git",
		       repo);
}

static int setup(void **state)
{
	char cmd[600];

	snprintf(tmp, sizeof(tmp), "%s/quorum-apply.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/home", tmp);
	setenv("HOME", cmd, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.org", 1);
	setenv("GIT_AUTHOR_DATE", "1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "1700000000 +0000", 1);
	setenv("LC_ALL", "C", 1);
	sh("mkdir -p home && git config --global init.defaultBranch main\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* A repo "NAME" with a 60-line C file and a few more. */
static void base_repo(const char *name)
{
	sh("rm -rf %1$s && git init -q %1$s && cd %1$s\n"
	   "i=1; while [ $i -le 60 ]; do echo \"int line$i(void) { return $i; "
	   "}\"; i=$((i+1)); done >main.c\n"
	   "mkdir -p lib docs && printf 'one\\ntwo\\nthree\\n' >lib/util.c\n"
	   "printf '#!/bin/sh\\necho hi\\n' >run.sh\n"
	   "printf 'no newline at end' >docs/eof.txt\n"
	   "printf 'a\\nb\\nc\\nd\\ne\\nf\\ng\\nh\\n' >docs/old-name.txt\n"
	   "head -c 3000 /dev/zero | tr '\\0' 'x' >blob.bin; printf "
	   "'\\0\\1\\2' >>blob.bin\n"
	   "git add . && git commit -q -m base\n",
	   name);
}

static void test_simple_series_matches_git(void **state)
{
	static const char *const names[] = {"s1/0001-first.patch",
					    "s1/0002-second.patch"};
	struct run r;
	char *want;

	base_repo("r1");
	sh("cd r1 && sed -i 's/return 10;/return 100;/' main.c && git commit "
	   "-qam first\n"
	   "sed -i 's/return 50;/return 500;/; 3a\\\nint added(void);' main.c "
	   "&& git commit -qam second\n"
	   "git format-patch -q -o ../s1 HEAD~2 && git reset -q --hard "
	   "HEAD~2\n");
	apply(&r, "r1", names, 2, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.res->npatches, 2);
	assert_int_equal(r.res->failed, -1);
	assert_true(r.res->patches[0].applied && r.res->patches[1].applied);
	assert_int_equal(r.res->base_source, RV_BASE_HEAD);
	want = capture("cd r1 && git rev-parse 'HEAD@{1}^{tree}'");
	assert_string_equal(last_tree(&r), want);
	free(want);
	want = capture("cd r1 && git rev-parse 'HEAD@{1}~1^{tree}'");
	assert_string_equal(r.res->patches[0].tree_id, want);
	free(want);
	/* The commits exist for this process: patch 2's parent is patch 1. */
	assert_int_equal(strlen(r.res->patches[1].commit_id), 40);
	run_release(&r);
}

static void test_renames_modes_binary_match_git_am(void **state)
{
	static const char *const names[] = {
		"s2/0001-rename.patch", "s2/0002-mode.patch",
		"s2/0003-binary.patch", "s2/0004-delete-and-add.patch",
		"s2/0005-eof.patch",	"s2/0006-copy.patch"};
	struct run r;
	char *want, *got_am;

	base_repo("r2");
	sh("cd r2\n"
	   "git mv docs/old-name.txt docs/new-name.txt && sed -i 's/^d$/D/' "
	   "docs/new-name.txt && git add docs && git commit -qm rename\n"
	   "chmod +x lib/util.c && git commit -qam mode\n"
	   "printf '\\3\\4' >>blob.bin && seq 1 700 | tr '\\n' '\\0' >new.bin "
	   "&& git add . && git commit -qm binary\n"
	   "git rm -q run.sh && printf 'fresh\\n' >lib/fresh.c && mkdir -p a/b "
	   "&& : >a/b/empty && git add . && git commit -qm delete-and-add\n"
	   "printf 'no newline at end, changed' >docs/eof.txt && git commit "
	   "-qam eof\n"
	   "sed 's/^int line1(/int copied1(/' main.c >main2.c && git add "
	   "main2.c && git commit -qm copy\n"
	   "git format-patch -q -C -C --binary -o ../s2 HEAD~6 && git tag tip "
	   "&& git reset -q --hard HEAD~6\n"
	   "grep -q '^similarity index [1-8]' ../s2/0001-rename.patch\n"
	   "grep -q '^copy from main.c' ../s2/0006-copy.patch\n"
	   "git worktree add -q ../r2-am HEAD 2>/dev/null && cd ../r2-am && "
	   "git am -q ../s2/*.patch\n");
	apply(&r, "r2", names, 6, NULL);
	if (r.ret)
		fail_msg("%s", r.err.msg);
	want = capture("cd r2 && git rev-parse 'tip^{tree}'");
	got_am = capture("cd r2-am && git rev-parse 'HEAD^{tree}'");
	assert_string_equal(want, got_am);
	assert_string_equal(last_tree(&r), want);
	free(want);
	free(got_am);
	run_release(&r);
}

static void test_failure_names_patch_file_hunk_and_line(void **state)
{
	static const char *const names[] = {"s3/0001-one.patch",
					    "s3/0002-foo-bar.patch"};
	struct run r;
	char *before, *after;

	base_repo("r3");
	sh("cd r3 && sed -i 's/return 5;/return 55;/' main.c && git commit "
	   "-qam one\n"
	   "sed -i 's/return 41;/if (!dev) return 41;/' main.c && git commit "
	   "-qam 'foo: bar'\n"
	   "git format-patch -q -o ../s3 HEAD~2 && git reset -q --hard HEAD~2\n"
	   "sed -i 's/return 40;/return -40;/' main.c && git commit -qam "
	   "drift\n");
	before = repo_state("r3");
	apply(&r, "r3", names, 2, &(struct rv_apply_opts){.three_way = false});
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_int_equal(r.res->failed, 1);
	assert_true(r.res->patches[0].applied);
	assert_false(r.res->patches[1].applied);
	assert_string_equal(r.res->patches[1].tree_id, "");
	assert_string_equal(
		r.res->patches[1].error,
		"patch 2/2 \"foo: bar\" does not apply: main.c hunk 1 "
		"(@@ -38,7 +38,7 @@) expected \"int line40(void) { return 40; "
		"}\" "
		"at line 40, the base has \"int line40(void) { return -40; "
		"}\"");
	assert_string_equal(r.err.msg, r.res->patches[1].error);
	after = repo_state("r3");
	assert_string_equal(before, after);
	free(before);
	free(after);
	run_release(&r);
}

static void test_three_way_matches_git_am_3(void **state)
{
	static const char *const names[] = {"s4/0001-change.patch"};
	struct run r;
	char *want;

	base_repo("r4");
	sh("cd r4 && git branch old && sed -i 's/return 20;/return 2000;/' "
	   "main.c && git commit -qam change\n"
	   "git format-patch -q -o ../s4 HEAD~1 && git reset -q --hard HEAD~1\n"
	   "sed -i 's/return 22;/return 22222;/' main.c && git commit -qam "
	   "nearby\n"
	   "git worktree add -q ../r4-am HEAD 2>/dev/null && cd ../r4-am\n"
	   "if git am -q ../s4/*.patch 2>/dev/null; then echo plain am should "
	   "fail; exit 1; fi\n"
	   "git am --abort && git am -q -3 ../s4/*.patch\n");
	want = capture("cd r4-am && git rev-parse 'HEAD^{tree}'");

	/* Without the fallback it fails, naming the line. */
	apply(&r, "r4", names, 1, &(struct rv_apply_opts){.three_way = false});
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_non_null(
		strstr(r.res->patches[0].error,
		       "the base has \"int line22(void) { return 22222; }\""));
	run_release(&r);

	apply(&r, "r4", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	assert_true(r.res->patches[0].three_way);
	assert_string_equal(last_tree(&r), want);
	free(want);
	run_release(&r);
}

static void test_three_way_conflict_names_path(void **state)
{
	static const char *const names[] = {"s5/0001-change.patch"};
	struct run r;

	base_repo("r5");
	sh("cd r5 && sed -i 's/return 20;/return 2000;/' main.c && git commit "
	   "-qam change\n"
	   "git format-patch -q -o ../s5 HEAD~1 && git reset -q --hard HEAD~1\n"
	   "sed -i 's/return 20;/return 3000;/' main.c && git commit -qam "
	   "clash\n");
	apply(&r, "r5", names, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_non_null(strstr(r.res->patches[0].error, "conflict in main.c"));
	run_release(&r);
}

/* Write a hostile diff to NAME and expect it refused with code. */
static void expect_refused(const char *repo, const char *name, int code,
			   const char *reason)
{
	static const char *names[1];
	struct run r;
	char dir[300], *before, *after;

	names[0] = name;
	snprintf(dir, sizeof(dir), "%s", repo);
	before = repo_state(dir);
	apply(&r, repo, names, 1, NULL);
	if (r.ret != code)
		fail_msg("%s: got %d (%s), want %d", name, r.ret, r.err.msg,
			 code);
	assert_non_null(r.res);
	assert_int_equal(r.res->failed, 0);
	if (!strstr(r.res->patches[0].error, reason))
		fail_msg("'%s' lacks '%s'", r.res->patches[0].error, reason);
	assert_null(strchr(r.res->patches[0].error, '\n'));
	after = repo_state(dir);
	assert_string_equal(before, after);
	free(before);
	free(after);
	run_release(&r);
}

static void test_hostile_paths_refused(void **state)
{
	base_repo("r6");
	sh("cd r6 && ln -s /tmp linkdir && git add linkdir && git commit -qm "
	   "link\n"
	   "cd .. && mkdir -p bad\n"
	   "printf 'diff --git a/../evil b/../evil\\nnew file mode "
	   "100644\\n--- /dev/null\\n+++ b/../evil\\n@@ -0,0 +1 @@\\n+x\\n' "
	   ">bad/traversal.patch\n"
	   "printf 'diff --git a/.git/config b/.git/config\\n--- "
	   "a/.git/config\\n+++ b/.git/config\\n@@ -1 +1 @@\\n-x\\n+y\\n' "
	   ">bad/dotgit.patch\n"
	   "printf 'diff --git a/sub/.GIT/hooks/x b/sub/.GIT/hooks/x\\nnew "
	   "file mode 100755\\n--- /dev/null\\n+++ b/sub/.GIT/hooks/x\\n@@ "
	   "-0,0 +1 @@\\n+x\\n' >bad/dotgit-case.patch\n"
	   "printf 'diff --git a//etc/passwd b//etc/passwd\\n--- "
	   "a//etc/passwd\\n+++ b//etc/passwd\\n@@ -1 +1 @@\\n-x\\n+y\\n' "
	   ">bad/absolute.patch\n"
	   "printf 'diff --git a/linkdir/x b/linkdir/x\\nnew file mode "
	   "100644\\n--- /dev/null\\n+++ b/linkdir/x\\n@@ -0,0 +1 @@\\n+x\\n' "
	   ">bad/symlink.patch\n"
	   "printf 'diff --git a/ok.c b/ok.c\\nrename from main.c\\nrename to "
	   "\"..\\\\057x\"\\n' >bad/quoted.patch\n");
	expect_refused("r6", "bad/traversal.patch", RV_ERR_UNSAFE,
		       "writes outside the repository: ../evil");
	expect_refused("r6", "bad/dotgit.patch", RV_ERR_UNSAFE,
		       "into the .git directory: .git/config");
	expect_refused("r6", "bad/dotgit-case.patch", RV_ERR_UNSAFE,
		       ".git directory: sub/.GIT/hooks/x");
	expect_refused("r6", "bad/absolute.patch", RV_ERR_UNSAFE,
		       "absolute path /etc/passwd");
	expect_refused("r6", "bad/symlink.patch", RV_ERR_UNSAFE,
		       "through the symlink linkdir");
	expect_refused("r6", "bad/quoted.patch", RV_ERR_UNSAFE,
		       "outside the repository: ../x");
}

static void test_corrupt_input_refused(void **state)
{
	base_repo("r7");
	sh("cd r7 && sed -i 's/return 10;/return 100;/' main.c && printf "
	   "'\\5\\6' >>blob.bin && git commit -qam x\n"
	   "git format-patch -q --binary -o ../c HEAD~1 && git reset -q --hard "
	   "HEAD~1 && cd ../c\n"
	   /* a hunk that claims more lines than it has */
	   "sed 's/^@@ -7,7 +7,7 @@/@@ -7,9 +7,9 @@/' 0001-x.patch "
	   ">short.patch\n"
	   /* a stray line inside a hunk */
	   "awk '/^ int line8/{print \"garbage line\"; next} {print}' "
	   "0001-x.patch >stray.patch\n"
	   /* the binary data cut in the middle */
	   "awk '/^(literal|delta)/{n=NR} n && NR==n+1 {print substr($0, 1, "
	   "12); exit} {print}' 0001-x.patch >trunc.patch\n"
	   "printf 'From: x\\n\\njust words\\n' >nodiff.patch\n");
	expect_refused("r7", "c/short.patch", RV_ERR_INPUT,
		       "corrupt patch: main.c hunk 1");
	expect_refused("r7", "c/stray.patch", RV_ERR_INPUT,
		       "stray line at diff line");
	expect_refused("r7", "c/trunc.patch", RV_ERR_INPUT, "blob.bin");
	expect_refused("r7", "c/nodiff.patch", RV_ERR_INPUT, "no diff");
}

static void test_base_commit_and_fallback(void **state)
{
	static const char *const names[] = {"s8/0001-x.patch"};
	struct run r;
	char *base;

	base_repo("r8");
	sh("cd r8 && git commit -q --allow-empty -m second\n"
	   "sed -i 's/return 3;/return 33;/' main.c && git commit -qam x\n"
	   "git format-patch -q --base=HEAD~2 -o ../s8 HEAD~1 && git reset -q "
	   "--hard HEAD~1\n");
	base = capture("cd r8 && git rev-parse HEAD~1");
	apply(&r, "r8", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.res->base_source, RV_BASE_SERIES);
	assert_string_equal(r.res->base_id, base);
	free(base);
	run_release(&r);

	/* A base-commit the repo lacks: said so, HEAD used. */
	sh("sed -i 's/^base-commit: .*/base-commit: "
	   "1234567890123456789012345678901234567890/' s8/0001-x.patch\n");
	apply(&r, "r8", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.res->base_source, RV_BASE_HEAD);
	assert_non_null(
		strstr(r.res->base_note,
		       "base-commit 1234567890123456789012345678901234567890 "
		       "is not in the repository"));
	assert_non_null(strstr(r.res->base_note, "used HEAD"));
	run_release(&r);

	/* --base that does not exist is a repo error, nothing to fall to. */
	apply(&r, "r8", names, 1,
	      &(struct rv_apply_opts){.base = "no-such-rev"});
	assert_int_equal(r.ret, RV_ERR_REPO);
	assert_null(r.res);
	assert_non_null(strstr(r.err.msg, "no-such-rev"));
	run_release(&r);
}

static void test_store_refs_only_when_asked(void **state)
{
	static const char *const names[] = {"s9/0001-x.patch"};
	struct run r;
	char *refs, *head;

	base_repo("r9");
	sh("cd r9 && sed -i 's/return 3;/return 33;/' main.c && git commit "
	   "-qam x\n"
	   "git format-patch -q -o ../s9 HEAD~1 && git reset -q --hard "
	   "HEAD~1\n");
	head = capture("cd r9 && git rev-parse HEAD");
	apply(&r, "r9", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	refs = capture("cd r9 && git for-each-ref refs/quorum | wc -l && "
		       "git cat-file -e %s 2>/dev/null || echo absent",
		       r.res->patches[0].commit_id);
	assert_string_equal(refs, "0\nabsent");
	free(refs);
	run_release(&r);

	apply(&r, "r9", names, 1,
	      &(struct rv_apply_opts){.three_way = true, .store_refs = true});
	assert_int_equal(r.ret, 0);
	refs = capture("cd r9 && git for-each-ref --format='%%(refname) "
		       "%%(objectname)' refs/quorum && git log --format=%%s -1 "
		       "$(git for-each-ref --format='%%(refname)' refs/quorum) "
		       "&& git rev-parse HEAD && git fsck --no-progress 2>&1 | "
		       "grep -c . || true");
	{
		char want[400];

		snprintf(want, sizeof(want), "%s %s\nx\n%s\n0",
			 "refs/quorum/a1c0eae3cc7e2ec42a8a",
			 r.res->patches[0].commit_id, head);
		/* The ref name is a hash of the message-id: check its shape. */
		assert_int_equal(strncmp(refs, "refs/quorum/", 12), 0);
		assert_non_null(strstr(refs, r.res->patches[0].commit_id));
		assert_non_null(strstr(refs, "\nx\n"));
		assert_non_null(strstr(refs, head));
		(void)want;
	}
	free(refs);
	free(head);
	run_release(&r);
}

static void test_patch_id_is_git_patch_id_stable(void **state)
{
	static const char *const files[] = {"p/0001-a.patch", "p/0002-b.patch",
					    "p/0003-c.patch"};
	char got[RV_OID_HEXSZ + 1];
	size_t i;

	base_repo("r10");
	sh("cd r10 && sed -i 's/return 3;/return 33;/; s/return 30;/return "
	   "3030;/' main.c && echo four >>lib/util.c && git commit -qam a\n"
	   "git rm -q run.sh && printf 'new\\n file\\n' >n.c && git add n.c && "
	   "git commit -qm b\n"
	   "sed -i '1d' main.c && printf 'x\\n' >>docs/eof.txt && git commit "
	   "-qam c\n"
	   "git format-patch -q -o ../p HEAD~3\n");
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char *raw = slurp(files[i]);
		char *want = capture("git patch-id --stable <%s | cut -c1-40",
				     files[i]);

		assert_int_equal(rv_patch_id(raw, strlen(raw), got), 0);
		assert_string_equal(got, want);
		free(raw);
		free(want);
	}
	assert_int_equal(rv_patch_id("no diff\n", 8, got), RV_ERR_INPUT);
}

static void test_missing_prerequisite_is_named(void **state)
{
	static const char *const names[] = {"q/0001-x.patch"};
	struct run r;
	char *pid, *base;

	base_repo("r11");
	sh("cd r11 && git tag start && sed -i 's/return 7;/return 77;/' main.c "
	   "&& git commit -qam prereq\n"
	   "sed -i 's/return 77;/return 777;/' main.c && git commit -qam x\n"
	   "git format-patch -q --base=start -o ../q -1 HEAD && git reset -q "
	   "--hard HEAD~1\n");
	pid = capture(
		"cd r11 && git show HEAD | git patch-id --stable | cut -c1-40");
	/* On HEAD the prerequisite is there: applies, nothing said. */
	apply(&r, "r11", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	assert_null(strstr(r.res->base_note, "prerequisite"));
	run_release(&r);

	/* On start (its base-commit: without --base) it is missing, and named.
	 */
	base = capture("cd r11 && git rev-parse start");
	apply(&r, "r11", names, 1, &(struct rv_apply_opts){.base = "start"});
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_string_equal(r.res->base_id, base);
	if (!strstr(r.res->patches[0].error, pid))
		fail_msg("'%s' does not name %s", r.res->patches[0].error, pid);
	assert_non_null(strstr(r.err.msg, "missing prerequisite patch-id"));
	free(pid);
	free(base);
	run_release(&r);
}

/* prereq: a series that needs another series first gets it applied first. */
static void test_prerequisite_series_applied_first(void **state)
{
	static const char *const pname[] = {"pp/0001-prereq.patch"};
	static const char *const sname[] = {"ps/0001-x.patch"};
	static const char *const oname[] = {"po/0001-other.patch"};
	struct mp_series *p, *s, *other;
	const struct mp_series *pre[2];
	struct rv_apply_opts o = RV_APPLY_OPTS_INIT;
	struct rv_apply_result *res = NULL;
	struct rv_repo *repo = NULL;
	struct errmsg err;
	char path[512], *tip, *base, *pid;

	base_repo("r20");
	sh("cd r20 && git tag start && sed -i 's/return 7;/return 77;/' main.c "
	   "&& git commit -qam prereq\n"
	   "git format-patch -q -o ../pp -1 HEAD\n"
	   "sed -i 's/return 77;/return 777;/' main.c && git commit -qam x\n"
	   "git format-patch -q --base=start -o ../ps -1 HEAD && git tag tip\n"
	   "sed -i 's/one/uno/' lib/util.c && git commit -qam uno && sed -i "
	   "'s/uno/eins/' lib/util.c && git commit -qam other\n"
	   "git format-patch -q -o ../po -1 HEAD && git reset -q --hard "
	   "start\n");
	tip = capture("cd r20 && git rev-parse tip^{tree}");
	base = capture("cd r20 && git rev-parse start");
	pid = capture("cd r20 && git show tip~1 | git patch-id --stable | cut "
		      "-c1-40");
	p = series_of(pname, 1);
	s = series_of(sname, 1);
	other = series_of(oname, 1);
	snprintf(path, sizeof(path), "%s/r20", tmp);
	assert_int_equal(rv_repo_open(&repo, path, &err), 0);

	/* Alone it does not apply, and the missing patch-id is named. */
	assert_int_equal(rv_apply_series(&res, repo, s, NULL, &err),
			 RV_ERR_APPLY);
	assert_non_null(strstr(err.msg, pid));
	assert_string_equal(res->start_id, base);
	rv_apply_result_free(res);

	/* On top of its prerequisite: git's tree, only its own patch. */
	pre[0] = p;
	o.prereqs = pre;
	o.nprereqs = 1;
	assert_int_equal(rv_apply_series(&res, repo, s, &o, &err), 0);
	assert_string_equal(res->base_id, base);
	assert_int_equal(res->base_source, RV_BASE_SERIES);
	assert_int_equal(res->npatches, 1);
	assert_int_equal(res->nprereq_patches, 1);
	assert_string_equal(res->patches[0].tree_id, tip);
	assert_string_not_equal(res->start_id, base);
	if (!strstr(res->base_note, "on top of prerequisite series 'prereq' (1 "
				    "patch) from the same input"))
		fail_msg("note '%s'", res->base_note);
	rv_apply_result_free(res);

	/* A prerequisite that does not apply is named, with its patch. */
	pre[1] = other;
	o.nprereqs = 2;
	assert_int_equal(rv_apply_series(&res, repo, s, &o, &err),
			 RV_ERR_APPLY);
	assert_int_equal(res->failed, 0);
	assert_non_null(strstr(res->patches[0].error,
			       "prerequisite series 'other' patch 1/1 "
			       "\"other\" does not apply: lib/util.c hunk 1"));
	assert_string_equal(err.msg, res->patches[0].error);
	assert_false(res->patches[0].applied);
	rv_apply_result_free(res);

	rv_repo_free(repo);
	series_free(p);
	series_free(s);
	series_free(other);
	free(tip);
	free(base);
	free(pid);
}

static void test_worktree_checkout_and_remove(void **state)
{
	static const char *const names[] = {"w/0001-x.patch"};
	struct run r;
	struct errmsg err;
	char dir[600], *diff;

	base_repo("r12");
	sh("cd r12 && chmod +x run.sh && ln -s main.c link && git add link "
	   "run.sh && sed -i 's/return 3;/return 33;/' main.c && git commit "
	   "-qam x\n"
	   "git format-patch -q -o ../w HEAD~1 && git tag tip && git reset -q "
	   "--hard HEAD~1\n");
	apply(&r, "r12", names, 1, NULL);
	assert_int_equal(r.ret, 0);
	snprintf(dir, sizeof(dir), "%s/wt", tmp);
	assert_int_equal(rv_worktree_checkout(r.repo, last_tree(&r), dir, &err),
			 0);
	/* Same files, modes and links as git's own checkout of the commit. */
	diff = capture(
		"git -C r12 archive tip | (mkdir ref && tar -C ref -xf -) && "
		"diff -r --no-dereference ref wt && stat -c %%A wt/run.sh "
		"wt/link | tr '\\n' ' '");
	assert_string_equal(diff, "-rwxr-xr-x lrwxrwxrwx");
	free(diff);
	/* It must not exist yet. */
	assert_int_equal(rv_worktree_checkout(r.repo, last_tree(&r), dir, &err),
			 RV_ERR_REPO);
	assert_non_null(strstr(err.msg, "must not exist"));
	assert_int_equal(rv_worktree_remove(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	run_release(&r);
}

/* The tree `git apply --cached` makes of PATCH on HEAD of REPO. */
static char *git_apply_tree(const char *repo, const char *patch)
{
	return capture("cd %s && export GIT_INDEX_FILE=$PWD/.git/tmp-index && "
		       "git read-tree HEAD && git apply --cached ../%s && "
		       "git write-tree && rm -f .git/tmp-index",
		       repo, patch);
}

static void test_new_file_where_a_rename_leaves(void **state)
{
	static const char *const names[] = {"sw/swap.patch"};
	struct run r;
	char *want;

	base_repo("r13");
	sh("mkdir -p sw && cat >sw/swap.patch <<'EOF'\n"
	   "diff --git a/lib/util.c b/lib/util.c\n"
	   "new file mode 100644\n"
	   "--- /dev/null\n"
	   "+++ b/lib/util.c\n"
	   "@@ -0,0 +1 @@\n"
	   "+fresh\n"
	   "diff --git a/lib/util.c b/lib/moved.c\n"
	   "similarity index 80%%\n"
	   "rename from lib/util.c\n"
	   "rename to lib/moved.c\n"
	   "--- a/lib/util.c\n"
	   "+++ b/lib/moved.c\n"
	   "@@ -1,3 +1,3 @@\n"
	   " one\n"
	   "-two\n"
	   "+TWO\n"
	   " three\n"
	   "EOF\n");
	want = git_apply_tree("r13", "sw/swap.patch");
	assert_int_equal(strlen(want), 40);
	apply(&r, "r13", names, 1, NULL);
	if (r.ret)
		fail_msg("%s", r.err.msg);
	assert_string_equal(last_tree(&r), want);
	free(want);
	run_release(&r);
}

/*
 * Every prefix of a real patch (text, binary, rename, mode) and a few
 * byte flips: a defined status each time, never a crash (run under ASan).
 */
static void test_truncated_and_mangled_patches_are_safe(void **state)
{
	struct rv_repo *repo;
	struct mp_series s = {0};
	struct mp_patch *p, *pp[1];
	struct errmsg err;
	char path[512], *full;
	size_t len, cut, i;

	base_repo("r14");
	sh("cd r14 && git mv docs/old-name.txt docs/n.txt && chmod +x run.sh "
	   "&& "
	   "printf '\\7' >>blob.bin && sed -i 's/return 9;/return 99;/' main.c "
	   "&& "
	   "git commit -qam mix && git format-patch -q --binary -o ../m -1 && "
	   "git reset -q --hard HEAD~1\n");
	p = patch_from("m/0001-mix.patch", 0, 0);
	full = p->diff;
	len = p->diff_len;
	pp[0] = p;
	s.patches = pp;
	s.npatches = 1;
	s.total = 1;
	snprintf(path, sizeof(path), "%s/r14", tmp);
	assert_int_equal(rv_repo_open(&repo, path, &err), 0);
	for (i = 0; i < 2; i++) {
		for (cut = 0; cut <= len; cut += 3) {
			struct rv_apply_result *res = NULL;
			char *d = xmalloc(len + 1);
			int ret;

			memcpy(d, full, len);
			d[len] = '\0';
			if (i) /* flip one byte instead of cutting */
				d[cut % len] ^= (char)(1 + cut % 127);
			p->diff = d;
			p->diff_len = i ? len : cut;
			ret = rv_apply_series(&res, repo, &s, NULL, &err);
			assert_true(ret == 0 || ret == RV_ERR_APPLY ||
				    ret == RV_ERR_INPUT ||
				    ret == RV_ERR_UNSAFE);
			if (ret < 0) {
				assert_non_null(res);
				assert_non_null(res->patches[0].error);
				assert_null(
					strchr(res->patches[0].error, '\n'));
			}
			rv_apply_result_free(res);
			free(d);
		}
	}
	p->diff = full;
	p->diff_len = len;
	rv_repo_free(repo);
	patch_free(p);
}

/* A hunk built to make matching quadratic is refused, quickly. */
static void test_quadratic_hunk_is_refused(void **state)
{
	static const char *const names[] = {"big/slow.patch"};
	struct run r;

	sh("rm -rf r15 && git init -q r15 && cd r15 && yes x | head -200000 "
	   ">flat.txt && "
	   "git add . && git commit -qm flat && mkdir -p ../big && "
	   "{ printf 'diff --git a/flat.txt b/flat.txt\\n--- a/flat.txt\\n+++ "
	   "b/flat.txt\\n"
	   "@@ -90000,2002 +90000,2002 @@\\n'; yes ' x' | head -2000; "
	   "printf -- '-y\\n+z\\n x\\n'; } >../big/slow.patch\n");
	apply(&r, "r15", names, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_INPUT);
	assert_non_null(strstr(r.res->patches[0].error,
			       "flat.txt hunk 1 is too costly to match"));
	run_release(&r);
}

static void test_fall_through_to_branch_and_head(void **state)
{
	static const char *const names[] = {"ft/0001-x.patch"};
	struct rv_apply_opts opts = RV_APPLY_OPTS_INIT;
	struct run r;
	struct sb buf = SB_INIT;
	struct errmsg err;
	char *bc, *dev;

	/* base-commit: names a commit where the patch does not apply. */
	base_repo("r16");
	sh("cd r16 && git tag old && sed -i 's/return 30;/return -30;/' main.c "
	   "&& git commit -qam moved\n"
	   "git branch dev && sed -i 's/return 30;/return 31;/; s/return "
	   "-30;/return 30;/' main.c && git commit -qam x\n"
	   "git format-patch -q --base=old -o ../ft -1 && git reset -q --hard "
	   "HEAD~1\n"
	   "git checkout -q -b other old\n");
	bc = capture("cd r16 && git rev-parse old");
	dev = capture("cd r16 && git rev-parse dev");
	/* HEAD is old too (same id): only base-commit is tried, and fails. */
	opts.three_way = false; /* (-3 would merge the same change cleanly) */
	apply(&r, "r16", names, 1, &opts);
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_int_equal(r.res->base_source, RV_BASE_SERIES);
	assert_string_equal(r.res->base_id, bc);
	run_release(&r);

	/* With the list's branch: base-commit fails, the branch is used. */
	opts.branch = "dev";
	apply(&r, "r16", names, 1, &opts);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.res->base_source, RV_BASE_BRANCH);
	assert_string_equal(r.res->base_id, dev);
	assert_non_null(
		strstr(r.res->base_note, "did not apply on base-commit"));
	assert_non_null(strstr(r.res->base_note, "used the list's branch"));

	/* And the tree can be read back. */
	assert_int_equal(
		rv_repo_read_file(r.repo, last_tree(&r), "main.c", &buf, &err),
		0);
	assert_non_null(strstr(sb_str(&buf), "return 31;"));
	assert_int_equal(
		rv_repo_read_file(r.repo, last_tree(&r), "nope.c", &buf, &err),
		RV_ERR_REPO);
	assert_int_equal(rv_repo_read_file(r.repo, "xyz", "main.c", &buf, &err),
			 RV_ERR_REPO);
	sb_release(&buf);
	free(bc);
	free(dev);
	run_release(&r);
}

static void test_submodules_and_binary_preimage(void **state)
{
	static const char *const names[] = {
		"gl/0001-addsub.patch", "gl/0002-b.patch",
		"gl/0003-movesub.patch", "gl/0004-rmsub.patch"};
	static const char *const bin[] = {"gb/0001-bin.patch"};
	struct run r;
	size_t i;
	char *want;

	sh("rm -rf r17 && git init -q r17 && cd r17 && echo a >a && { seq 1 "
	   "300; printf '\\0\\1'; } >b.bin && "
	   "git add . && git commit -qm a && A=$(git rev-parse HEAD)\n"
	   "git update-index --add --cacheinfo 160000,$A,sub && git commit -qm "
	   "addsub\n"
	   "echo b >>a && git add a && git commit -qm b\n"
	   "git update-index --cacheinfo 160000,$(git rev-parse HEAD),sub && "
	   "git commit -qm movesub\n"
	   "git rm -q --cached sub && git commit -qm rmsub\n"
	   "git format-patch -q -o ../gl HEAD~4 && git tag tip\n"
	   "printf '\\0two' >>b.bin && git commit -qam bin && git format-patch "
	   "-q --binary -o ../gb -1\n"
	   "git reset -q --hard tip~4 && printf '\\0other' >>b.bin && git "
	   "commit -qam other\n");
	apply(&r, "r17", names, 4, &(struct rv_apply_opts){.base = "tip~4"});
	if (r.ret)
		fail_msg("%s", r.err.msg);
	for (i = 0; i < 4; i++) {
		want = capture("cd r17 && git rev-parse 'tip~%zu^{tree}'",
			       3 - i);
		assert_string_equal(r.res->patches[i].tree_id, want);
		free(want);
	}
	run_release(&r);

	/* The binary change was made against another b.bin: refused. */
	apply(&r, "r17", bin, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_APPLY);
	assert_non_null(
		strstr(r.res->patches[0].error,
		       "the binary patch of b.bin was made against blob"));
	run_release(&r);
}

/* A zip bomb in a binary patch is refused before anything inflates it. */
static void test_binary_zip_bomb_is_refused(void **state)
{
	static const char *const bomb[] = {"zb/bomb.patch"};
	static const char *const huge[] = {"zb/huge.patch"};
	static const char *const fine[] = {"zb/fine.patch"};
	struct run r;

	base_repo("r18");
	sh("mkdir -p zb && cat >zb/mk.py <<'PY'\n"
	   "import sys, zlib\n"
	   "A = "
	   "b\"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#"
	   "$%%&()*+-;<=>?@^_`{|}~\"\n"
	   "def b85(data):\n"
	   "    out = []\n"
	   "    for i in range(0, len(data), 52):\n"
	   "        chunk = data[i:i + 52]\n"
	   "        n = len(chunk)\n"
	   "        line = bytes([ord(\"A\") + n - 1 if n <= 26 else "
	   "ord(\"a\") + n - 27])\n"
	   "        chunk += bytes(-n %% 4)\n"
	   "        for j in range(0, len(chunk), 4):\n"
	   "            v = int.from_bytes(chunk[j:j + 4], \"big\")\n"
	   "            enc = []\n"
	   "            for _ in range(5):\n"
	   "                enc.append(A[v %% 85]); v //= 85\n"
	   "            line += bytes(reversed(enc))\n"
	   "        out.append(line.decode())\n"
	   "    return \"\\n\".join(out)\n"
	   "declared, real = int(sys.argv[1]), int(sys.argv[2])\n"
	   "data = zlib.compress(bytes(real), 9)\n"
	   "sys.stdout.write(\"diff --git a/bomb.bin b/bomb.bin\\nnew file "
	   "mode 100644\\n\"\n"
	   "                 \"index "
	   "0000000000000000000000000000000000000000.."
	   "1111111111111111111111111111111111111111\\n\"\n"
	   "                 \"GIT binary patch\\nliteral "
	   "%%d\\n%%s\\n\\nliteral 0\\nHcmV?d00001\\n\\n\" %% (declared, "
	   "b85(data)))\n"
	   "PY\n"
	   "python3 zb/mk.py 100 200000000 >zb/bomb.patch\n"
	   "python3 zb/mk.py 900000000 100 >zb/huge.patch\n"
	   "python3 zb/mk.py 100 100 >zb/fine.patch\n");
	apply(&r, "r18", bomb, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_INPUT);
	assert_non_null(
		strstr(r.res->patches[0].error,
		       "does not inflate to the 100 bytes it declares"));
	run_release(&r);
	apply(&r, "r18", huge, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_INPUT);
	assert_non_null(
		strstr(r.res->patches[0].error, "declares a size over"));
	run_release(&r);
	/* The same encoder's honest patch passes the check (its made-up
	 * post-image id is then what git would refuse too). */
	apply(&r, "r18", fine, 1, NULL);
	assert_int_equal(r.ret, RV_ERR_INPUT);
	assert_non_null(
		strstr(r.res->patches[0].error, "is not blob 111111111111"));
	run_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_series_matches_git),
		cmocka_unit_test(test_renames_modes_binary_match_git_am),
		cmocka_unit_test(test_failure_names_patch_file_hunk_and_line),
		cmocka_unit_test(test_three_way_matches_git_am_3),
		cmocka_unit_test(test_three_way_conflict_names_path),
		cmocka_unit_test(test_hostile_paths_refused),
		cmocka_unit_test(test_corrupt_input_refused),
		cmocka_unit_test(test_base_commit_and_fallback),
		cmocka_unit_test(test_store_refs_only_when_asked),
		cmocka_unit_test(test_patch_id_is_git_patch_id_stable),
		cmocka_unit_test(test_missing_prerequisite_is_named),
		cmocka_unit_test(test_prerequisite_series_applied_first),
		cmocka_unit_test(test_worktree_checkout_and_remove),
		cmocka_unit_test(test_new_file_where_a_rename_leaves),
		cmocka_unit_test(test_truncated_and_mangled_patches_are_safe),
		cmocka_unit_test(test_quadratic_hunk_is_refused),
		cmocka_unit_test(test_fall_through_to_branch_and_head),
		cmocka_unit_test(test_submodules_and_binary_preimage),
		cmocka_unit_test(test_binary_zip_bomb_is_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
