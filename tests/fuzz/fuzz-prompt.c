// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the prompt an LLM voter is shown, for a hostile
 * patch against a small tree made here. The input is a source file, a
 * NUL, and a diff (no NUL: the input is both). The file is written at
 * every path the diff names, the prompt built with rv_context_build() at
 * a budget the input picks, and its data blocks checked: each opens and
 * closes once, and nothing but them holds the boundary. The per-line
 * function index is checked against the line walks it replaces
 * (rv_source_function(), and rv_function_range() as it was) on every
 * line of the file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "review/apply-int.h"
#include "review/llm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rv_repo *repo;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/quorum-fuzz-prompt.XXXXXX";
	git_repository *r = NULL;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	git_libgit2_init();
	if (git_repository_init(&r, dir, 0) < 0)
		abort();
	git_repository_free(r);
	if (rv_repo_open(&repo, dir, NULL) < 0)
		abort();
	return 0;
}

/* rv_function_range() as it walked before the index: the reference. */
static int range_walk(const struct rv_source_index *ix, int line, int *start,
		      int *end)
{
	size_t i, walked;

	if (line < 1 || (size_t)line > ix->n)
		return -1;
	*start = *end = 0;
	for (i = (size_t)line - 1, walked = 0; walked < 4000; walked++) {
		const char *s = ix->start[i];
		size_t n = rv_source_index_line_len(ix, i);

		if (n && *s == '}' && i + 1 != (size_t)line)
			return -1;
		if (rv_line_is_header(s, n)) {
			*start = (int)i + 1;
			break;
		}
		if (!i)
			return -1;
		i--;
	}
	if (!*start)
		return -1;
	for (i = (size_t)line - 1, walked = 0; i < ix->n && walked < 4000;
	     i++, walked++) {
		if (rv_source_index_line_len(ix, i) && *ix->start[i] == '}') {
			*end = (int)i + 1;
			return 0;
		}
	}
	return -1;
}

static void check_index(const char *src, size_t len)
{
	struct rv_source_index ix;
	size_t line;

	rv_source_index_init(&ix, src, len);
	for (line = 0; line <= ix.n + 1 && line < 3000; line++) {
		char a[128], b[128];
		int s1, e1, s2, e2, r1, r2;

		if (rv_source_function(src, len, (int)line, a, sizeof(a)) !=
			    rv_source_index_function(&ix, (int)line, b,
						     sizeof(b)) ||
		    strcmp(a, b))
			abort();
		r1 = range_walk(&ix, (int)line, &s1, &e1);
		r2 = rv_source_index_range(&ix, (int)line, &s2, &e2);
		if (r1 != r2 || (!r1 && (s1 != s2 || e1 != e2)))
			abort();
	}
	rv_source_index_release(&ix);
}

/* A tree with src at every path d names (at most 64), or "" when none. */
static void make_tree(const struct rv_diff *d, const char *src, size_t len,
		      char out[RV_OID_HEXSZ + 1])
{
	git_tree_update ups[64];
	git_treebuilder *tb = NULL;
	git_oid blob, empty, tree;
	size_t i, n = 0;

	out[0] = '\0';
	if (git_blob_create_from_buffer(&blob, repo->git, src, len) < 0 ||
	    git_treebuilder_new(&tb, repo->git, NULL) < 0 ||
	    git_treebuilder_write(&empty, tb) < 0)
		goto out;
	for (i = 0; i < d->nfiles && n < 64; i++) {
		if (!d->files[i].new_path)
			continue;
		ups[n].action = GIT_TREE_UPDATE_UPSERT;
		git_oid_cpy(&ups[n].id, &blob);
		ups[n].filemode = GIT_FILEMODE_BLOB;
		ups[n].path = d->files[i].new_path;
		n++;
	}
	if (!n) {
		git_oid_tostr(out, RV_OID_HEXSZ + 1, &empty);
		goto out;
	}
	{
		git_tree *base = NULL;

		if (git_tree_lookup(&base, repo->git, &empty) == 0 &&
		    git_tree_create_updated(&tree, repo->git, base, n, ups) ==
			    0)
			git_oid_tostr(out, RV_OID_HEXSZ + 1, &tree);
		git_tree_free(base);
	}
out:
	git_treebuilder_free(tb);
}

static size_t count(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, nl = strlen(needle);
	const char *p = hay, *end = hay + len, *hit;

	while ((hit = memmem(p, (size_t)(end - p), needle, nl))) {
		n++;
		p = hit + nl;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	const char *src = (const char *)data, *diff = (const char *)data;
	size_t srclen = size, difflen = size, budget;
	struct rv_diff *d = NULL;
	struct mp_patch p = {0};
	struct rv_context_in in = {0};
	struct sb user = SB_INIT, left = SB_INIT, text = SB_INIT;
	char tree[RV_OID_HEXSZ + 1], b[40], open[64], close[64];
	const char *texts[3];
	struct sb srcz = SB_INIT;

	if (nul) {
		srclen = (size_t)(nul - src);
		diff = nul + 1;
		difflen = size - srclen - 1;
	}
	check_index(src, srclen);
	/* NUL-terminated copies: the prompt code reads C strings. */
	sb_add(&text, diff, difflen);
	if (rv_diff_parse(&d, sb_str(&text), text.len, NULL) < 0)
		goto out;
	make_tree(d, src, srclen, tree);
	p.commit_message = (char *)"fuzz: a patch\n\nIts message.";
	p.diff = (char *)sb_str(&text);
	p.diff_len = text.len;
	in.patch = &p;
	in.diff = d;
	in.repo = repo;
	in.post_tree = tree;
	in.patch_label = "1/1";
	sb_add(&srcz, src, srclen);
	texts[0] = sb_str(&text);
	texts[1] = p.commit_message;
	texts[2] = sb_str(&srcz);
	if (rv_boundary_make(b, texts, 3) < 0)
		goto out;
	/* Budgets from too small for anything to all of it. */
	budget = size ? 200 + (size_t)data[0] * 997 % 200000 : 200;
	if (rv_context_build(&in, budget, b, &user, &left) == 0) {
		snprintf(open, sizeof(open), "<<<%s ", b);
		snprintf(close, sizeof(close), "<<<END %s>>>", b);
		/* As blocks_sound(): the header names both forms once. */
		if (count(user.buf, user.len, open) !=
			    count(user.buf, user.len, close) ||
		    count(user.buf, user.len, b) !=
			    2 * count(user.buf, user.len, open))
			abort();
	}
out:
	rv_diff_free(d);
	sb_release(&user);
	sb_release(&left);
	sb_release(&text);
	sb_release(&srcz);
	return 0;
}
