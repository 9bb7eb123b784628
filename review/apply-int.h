/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * apply-int.h - internals shared by the review/apply files (apply-repo.c,
 * apply-patch.c, apply.c, apply-patchid.c, apply-worktree.c). Not part of the
 * contract: libgit2 types appear here and must never leave review/.
 */
#ifndef QUORUM_APPLY_INT_H
#define QUORUM_APPLY_INT_H

#include <git2.h>

#include "review.h"

struct rv_repo {
	git_repository *git;
	git_odb *odb;
	/* New objects go to memory first; flushed only when refs are stored. */
	git_odb_backend *mempack;
};

/* Fill err from libgit2's last error, prefixed by what we were doing. */
int rv__git_error(struct errmsg *err, int code, const char *what);

/* Write the objects held in memory to the repo's object store (a pack). */
int rv__repo_flush(struct rv_repo *repo, struct errmsg *err);

/* ---- one patch's diff, parsed for applying ------------------------- */

struct ap_line {
	const char *text; /* points into the diff, after the origin */
	size_t len;	  /* bytes of text, including '\n' unless no_eol */
	char origin;	  /* ' ', '+', '-' */
};

struct ap_hunk {
	int old_start, old_lines, new_start, new_lines;
	const char *header; /* "@@ -a,b +c,d @@", not NUL-terminated */
	size_t header_len;
	size_t first, n;    /* range in the file's lines[] */
	size_t diff_lineno; /* line of the @@ in the diff, 1-based */
};

struct ap_file {
	char *old_path, *new_path;   /* NULL for /dev/null */
	unsigned old_mode, new_mode; /* 0 when not given */
	bool is_new, is_delete, is_rename, is_copy;
	bool binary; /* GIT binary patch or "Binary files ... differ" */
	bool binary_has_data;
	char old_idx[GIT_OID_HEXSZ + 1], new_idx[GIT_OID_HEXSZ + 1];
	const char *text; /* this file's whole section of the diff */
	size_t text_len;
	struct ap_hunk *hunks;
	size_t nhunks, ahunks;
	struct ap_line *lines;
	size_t nlines, alines;
	size_t diff_lineno;
};

struct ap_patch {
	struct ap_file *files;
	size_t nfiles, afiles;
};

/*
 * Parse a git (or plain unified) diff. Paths are unquoted, stripped of
 * their first component and checked for safety (RV_ERR_UNSAFE). Lines
 * point into diff, which must outlive *p. RV_ERR_INPUT on a corrupt diff.
 */
int ap_patch_parse(struct ap_patch *p, const char *diff, size_t len,
		   struct errmsg *err);
void ap_patch_release(struct ap_patch *p);

/*
 * Check every literal/delta section of a binary file patch: base85 that
 * decodes, a declared size within bounds, and zlib data that inflates to
 * exactly that size (capped, so a zip bomb costs nothing). 0 or
 * RV_ERR_INPUT.
 */
int ap_binary_check(const struct ap_file *f, struct errmsg *err);

/* Is path acceptable inside a repo? Fills err with the reason if not. */
int ap_path_check(const char *path, struct errmsg *err);

/* Where a text hunk failed, for the message. */
struct ap_fail {
	size_t hunk; /* 0-based */
	int line;    /* 1-based line in the pre-image where it should be */
	const char *expected; /* first preimage line that did not match */
	size_t expected_len;
	const char *found; /* what the file has there, NULL past the end */
	size_t found_len;
	bool corrupt_delete; /* a deletion that leaves content */
	bool too_costly;     /* over the work budget: a hostile patch */
};

/*
 * Apply f's text hunks to buf/len (the pre-image) into out, with git
 * apply's rules (exact context, offset search, no fuzz, beginning and
 * end anchors). Returns 0, RV_ERR_APPLY with *fail filled, or
 * RV_ERR_INPUT (fail->too_costly) when matching would take too long.
 */
int ap_apply_text(const struct ap_file *f, const char *buf, size_t len,
		  struct sb *out, struct ap_fail *fail);

/* ---- patch ids ------------------------------------------------------ */

/*
 * Which of ids[] are not the patch-id of any of the last `limit` commits
 * reachable from base? Sets missing[i] true for those. 0 or rv_status.
 */
int rv__find_patch_ids(struct rv_repo *repo, const git_oid *base,
		       char *const *ids, size_t nids, bool *missing,
		       size_t limit, struct errmsg *err);

#endif
