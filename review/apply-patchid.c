// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * apply-patchid.c - `git patch-id --stable`, and finding a series'
 * prerequisite-patch-id: lines among the recent commits of a base.
 *
 * The algorithm follows git's builtin/patch-id.c line by line (hash each
 * file's diff with whitespace removed and line numbers ignored, then add
 * the per-file hashes as 160-bit numbers so file order does not matter),
 * so ids agree with what `git format-patch --base` writes.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apply-int.h"

/* ---- SHA-1 (FIPS 180-1); libgit2 does not export a raw hasher -------- */

struct sha1 {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

#define ROL(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static void sha1_block(struct sha1 *c, const unsigned char *p)
{
	uint32_t w[80], a, b, d, e, f, k, t, cc;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & cc) | (~b & d), k = 0x5A827999;
		else if (i < 40)
			f = b ^ cc ^ d, k = 0x6ED9EBA1;
		else if (i < 60)
			f = (b & cc) | (b & d) | (cc & d), k = 0x8F1BBCDC;
		else
			f = b ^ cc ^ d, k = 0xCA62C1D6;
		t = ROL(a, 5) + f + e + k + w[i];
		e = d, d = cc, cc = ROL(b, 30), b = a, a = t;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d, c->h[4] += e;
}

static void sha1_init(struct sha1 *c)
{
	static const uint32_t iv[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE,
				       0x10325476, 0xC3D2E1F0};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->n = 0;
}

static void sha1_update(struct sha1 *c, const void *data, size_t len)
{
	const unsigned char *p = data;

	c->len += len;
	while (len) {
		size_t take = 64 - c->n < len ? 64 - c->n : len;

		memcpy(c->buf + c->n, p, take);
		c->n += take;
		p += take;
		len -= take;
		if (c->n == 64) {
			sha1_block(c, c->buf);
			c->n = 0;
		}
	}
}

static void sha1_final(struct sha1 *c, unsigned char out[20])
{
	uint64_t bits = c->len * 8;
	unsigned char pad = 0x80, zero = 0, lenb[8];
	int i;

	sha1_update(c, &pad, 1);
	while (c->n != 56)
		sha1_update(c, &zero, 1);
	for (i = 0; i < 8; i++)
		lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_update(c, lenb, 8);
	for (i = 0; i < 20; i++)
		out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* ---- git patch-id --stable ----------------------------------------- */

static void flush_one_hunk(unsigned char result[20], struct sha1 *ctx)
{
	unsigned char hash[20];
	unsigned short carry = 0;
	int i;

	sha1_final(ctx, hash);
	sha1_init(ctx);
	for (i = 0; i < 20; i++) {
		carry += result[i] + hash[i];
		result[i] = (unsigned char)carry;
		carry >>= 8;
	}
}

static size_t remove_space(char *line, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			line[n++] = line[i];
	return n;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static int scan_count(const char **q, const char *end, int *out)
{
	int v = 0, n = 0;

	while (*q < end && isdigit((unsigned char)**q) && n < 9) {
		v = v * 10 + (**q - '0');
		(*q)++;
		n++;
	}
	*out = v;
	return n;
}

static void scan_hunk_header(const char *p, size_t len, int *before, int *after)
{
	const char *q = p + 4, *end = p + len;
	int v;

	scan_count(&q, end, &v);
	*before = 1;
	if (q < end && *q == ',') {
		q++;
		if (!scan_count(&q, end, before))
			return;
	}
	if (q + 1 >= end || q[0] != ' ' || q[1] != '+')
		return;
	q += 2;
	scan_count(&q, end, &v);
	*after = 1;
	if (q < end && *q == ',') {
		q++;
		scan_count(&q, end, after);
	}
}

static bool hex40(const char *p, size_t len)
{
	size_t i;

	if (len < 40)
		return false;
	for (i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return true;
}

int rv_patch_id(const char *diff, size_t len, char out[RV_OID_HEXSZ + 1])
{
	unsigned char result[20] = {0};
	char pre_oid[GIT_OID_HEXSZ + 1] = "", post_oid[GIT_OID_HEXSZ + 1] = "";
	const char *pos = diff, *end = diff + len;
	int before = -1, after = -1, i;
	bool binary = false;
	size_t patchlen = 0;
	struct sha1 ctx;
	char *line = NULL;
	size_t aline = 0;

	out[0] = '\0';
	sha1_init(&ctx);
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t n = nl ? (size_t)(nl - pos) + 1 : (size_t)(end - pos);
		const char *p;

		if (n + 1 > aline) {
			aline = n + 64;
			line = xrealloc(line, aline);
		}
		memcpy(line, pos, n);
		line[n] = '\0';
		pos += n;

		p = line;
		if (starts(line, n, "diff-tree "))
			p = line + 10;
		else if (starts(line, n, "commit "))
			p = line + 7;
		else if (starts(line, n, "From "))
			p = line + 5;
		else if (starts(line, n, "\\ ") && n > 12)
			continue;
		if (hex40(p, n - (size_t)(p - line))) {
			if (patchlen)
				break; /* the next commit of a log */
			continue;      /* this commit's own header */
		}
		if (!patchlen && !starts(line, n, "diff "))
			continue;
		if (before == -1) {
			if (starts(line, n, "GIT binary patch") ||
			    starts(line, n, "Binary files")) {
				binary = true;
				before = 0;
				sha1_update(&ctx, pre_oid, strlen(pre_oid));
				sha1_update(&ctx, post_oid, strlen(post_oid));
				flush_one_hunk(result, &ctx);
				continue;
			} else if (starts(line, n, "index ")) {
				char *o1 = strstr(line, ".."), *o2 = NULL;

				if (o1)
					o2 = strchr(o1, ' ');
				if (!o2)
					o2 = line + n - 1;
				if (o1 && o1 > line + 6 && o2 > o1 + 2) {
					size_t l1 = (size_t)(o1 - line - 6),
					       l2 = (size_t)(o2 - o1 - 2);

					if (l1 > GIT_OID_HEXSZ)
						l1 = GIT_OID_HEXSZ;
					if (l2 > GIT_OID_HEXSZ)
						l2 = GIT_OID_HEXSZ;
					memcpy(pre_oid, line + 6, l1);
					pre_oid[l1] = '\0';
					memcpy(post_oid, o1 + 2, l2);
					post_oid[l2] = '\0';
				}
				continue;
			} else if (starts(line, n, "--- ")) {
				before = after = 1;
			} else if (!isalpha((unsigned char)line[0])) {
				break;
			}
		}
		if (binary) {
			if (starts(line, n, "diff ")) {
				binary = false;
				before = -1;
			}
			continue;
		}
		if (before == 0 && after == 0) {
			if (starts(line, n, "@@ -")) {
				scan_hunk_header(line, n, &before, &after);
				continue;
			}
			if (!starts(line, n, "diff "))
				break;
			flush_one_hunk(result, &ctx);
			before = after = -1;
		}
		if (line[0] == '-' || line[0] == ' ')
			before--;
		if (line[0] == '+' || line[0] == ' ')
			after--;
		n = remove_space(line, n);
		patchlen += n;
		sha1_update(&ctx, line, n);
	}
	free(line);
	flush_one_hunk(result, &ctx);
	if (!patchlen)
		return RV_ERR_INPUT;
	for (i = 0; i < 20; i++) {
		out[2 * i] = "0123456789abcdef"[result[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[result[i] & 15];
	}
	out[40] = '\0';
	return 0;
}

/* ---- prerequisites -------------------------------------------------- */

static int commit_patch_id(struct rv_repo *repo, git_commit *c,
			   char out[GIT_OID_HEXSZ + 1])
{
	git_commit *parent = NULL;
	git_tree *old = NULL, *new = NULL;
	git_diff *diff = NULL;
	git_buf buf = {0};
	git_diff_options opts;
	int ret = -1;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 3;
	if (git_commit_parentcount(c) != 1)
		return -1; /* merges and roots are never prerequisites */
	if (git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_tree(&old, parent) < 0 || git_commit_tree(&new, c) < 0 ||
	    git_diff_tree_to_tree(&diff, repo->git, old, new, &opts) < 0 ||
	    git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH) < 0)
		goto out;
	ret = rv_patch_id(buf.ptr, buf.size, out) == 0 ? 0 : -1;
out:
	git_buf_dispose(&buf);
	git_diff_free(diff);
	git_tree_free(old);
	git_tree_free(new);
	git_commit_free(parent);
	return ret;
}

int rv__find_patch_ids(struct rv_repo *repo, const git_oid *base,
		       char *const *ids, size_t nids, bool *missing,
		       size_t limit, struct errmsg *err)
{
	git_revwalk *walk = NULL;
	git_oid oid;
	size_t i, left = 0, seen = 0;
	int ret = 0;

	for (i = 0; i < nids; i++) {
		missing[i] = true;
		left++;
	}
	if (git_revwalk_new(&walk, repo->git) < 0 ||
	    git_revwalk_push(walk, base) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO,
				    "cannot walk the history");
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	while (left && seen < limit && git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;
		char pid[GIT_OID_HEXSZ + 1];

		seen++;
		if (git_commit_lookup(&c, repo->git, &oid) < 0)
			continue;
		if (commit_patch_id(repo, c, pid) == 0)
			for (i = 0; i < nids; i++)
				if (missing[i] && ids[i] &&
				    !strncasecmp(ids[i], pid, GIT_OID_HEXSZ)) {
					missing[i] = false;
					left--;
				}
		git_commit_free(c);
	}
out:
	git_revwalk_free(walk);
	return ret;
}
