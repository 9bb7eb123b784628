/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mp-internal.h - helpers shared by the files of mailparse/ that read one
 * message (message.c, charset.c, diffscan.c, trailers.c, subject.c).
 * Nothing here is part of the public contract.
 */
#ifndef QUORUM_MP_INTERNAL_H
#define QUORUM_MP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sb.h"

/* ---- charset.c ---- */

/*
 * Append text (len bytes in charset, NULL when undeclared) to out as valid
 * UTF-8. Bytes that are not valid in the declared charset, and undeclared
 * 8-bit bytes, are read as UTF-8 where they form valid sequences and
 * otherwise as windows-1252 (latin-1 for its five holes); NUL becomes
 * U+FFFD. *guessed (may be NULL) is set to true when any byte needed that
 * guess. Returns 0, or -1 when out's cap was reached.
 */
int mp_append_utf8(struct sb *out, const char *text, size_t len,
		   const char *charset, bool *guessed);

/* Valid UTF-8 without NUL bytes? */
bool mp_utf8_ok(const char *s, size_t len);

/* A valid UTF-8 copy of s (NULL for NULL); never fails (aborts on OOM). */
char *mp_strdup_utf8(const char *s, size_t len);

/* ---- rfc2047.c ---- */

/*
 * v with each run of adjacent encoded-words of one charset and encoding
 * joined into one word (base64 words decoded and their bytes joined), so
 * that GMime decodes the whole run; NULL when v has no such run (use v as
 * it is). Caller frees with free().
 */
char *mp_header_join_words(const char *v);

/* ---- diffscan.c ---- */

/* Where a diff sits inside a text. */
struct mp_diffspan {
	bool found;
	size_t start; /* offset of the first diff header line */
	size_t end;   /* offset just past the last line of the diff */
	bool clean;   /* every hunk complete, no malformed line */
};

/*
 * Find the first real diff in text[0..len): a `diff --git` line followed
 * by a git header line, a `--- `/`+++ `/`@@ ` triple (optionally preceded
 * by `diff ...` or `Index:`), skipping ```-fenced blocks unless the only
 * diff lies inside one. The end follows the hunk line counts.
 */
void mp_diff_find(const char *text, size_t len, struct mp_diffspan *span);

/* mp_diff_find() that also appends the paths (as mp_diff_files()). */
void mp_diff_find_files(const char *text, size_t len, struct mp_diffspan *span,
			char ***files, size_t *nfiles);

/*
 * The paths a diff touches (post-image name, pre-image for deletions),
 * unique, in order of appearance, as valid UTF-8 strings. Appends to
 * *files / *nfiles; caller frees each string and the array.
 */
void mp_diff_files(const char *diff, size_t len, char ***files, size_t *nfiles);

/* Is the line at p (up to end) the start of a diff? */
bool mp_diff_starts_here(const char *p, const char *end);

/* ---- lines ---- */

/* End of the line starting at p: the '\n' or end. */
static inline const char *mp_eol(const char *p, const char *end)
{
	const char *nl = p < end ? __builtin_memchr(p, '\n', end - p) : NULL;

	return nl ? nl : end;
}

/* Start of the next line after p. */
static inline const char *mp_next_line(const char *p, const char *end)
{
	const char *e = mp_eol(p, end);

	return e < end ? e + 1 : end;
}

/* Does the line [p, e) start with prefix s? */
static inline bool mp_line_starts(const char *p, const char *e, const char *s)
{
	while (*s) {
		if (p >= e || *p != *s)
			return false;
		p++;
		s++;
	}
	return true;
}

/* Is the line [p, e) empty or whitespace only? */
bool mp_line_blank(const char *p, const char *e);

/* ---- html.c ---- */

/*
 * Append the text of HTML (UTF-8, len bytes) to out: tags dropped, block
 * ends as line breaks, <pre> kept, entities decoded, <blockquote> lines
 * prefixed with "> ". Returns 0 (output stops at out's cap).
 */
int mp_html_to_text(struct sb *out, const char *html, size_t len);

/* ---- message.c ---- */

/* Initialise GMime once for this process (reference counted by GMime). */
void mp_gmime_init(void);

#endif
