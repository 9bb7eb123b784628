/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sb.h - growing strings with a hard size cap, and one-sentence errors.
 *
 * Every buffer that outside input can grow is a struct sb: it refuses to
 * grow past sb->cap, so a hostile mail or model answer cannot make quorum
 * allocate without bound (the habit comes from git's strbuf and curl's
 * dynbuf).
 */
#ifndef QUORUM_SB_H
#define QUORUM_SB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Default cap of a struct sb whose cap is 0: 256 MiB. */
#define SB_DEFAULT_CAP ((size_t)256 << 20)

struct sb {
	char *buf;  /* NUL-terminated when alloc > 0; NULL until first growth */
	size_t len; /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* the most len may become; 0 means SB_DEFAULT_CAP */
};

#define SB_INIT                                                                \
	{                                                                      \
		.buf = NULL                                                    \
	}

/* Initialise an empty buffer that may hold at most cap bytes (0: default). */
void sb_init(struct sb *sb, size_t cap);

/* Free the buffer; sb is empty and reusable afterwards (cap is kept). */
void sb_release(struct sb *sb);

/* Empty the buffer, keeping its memory. */
void sb_reset(struct sb *sb);

/*
 * Append. Each returns 0, or -1 when the cap would be exceeded or memory
 * ran out; on -1 the buffer is left as it was.
 */
int sb_add(struct sb *sb, const void *data, size_t len);
int sb_adds(struct sb *sb, const char *s);
int sb_addch(struct sb *sb, int c);
int sb_addf(struct sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sb_vaddf(struct sb *sb, const char *fmt, va_list ap);

/* Make room for at least extra more bytes; 0 or -1 as above. */
int sb_grow(struct sb *sb, size_t extra);

/* Shorten to len bytes (len <= sb->len). */
void sb_setlen(struct sb *sb, size_t len);

/* The contents as a C string: never NULL ("" when empty). */
const char *sb_str(const struct sb *sb);

/*
 * Hand the buffer to the caller, who frees it with free(); sb is empty
 * afterwards. Never returns NULL unless memory ran out. *len may be NULL.
 */
char *sb_detach(struct sb *sb, size_t *len);

/* Remove trailing whitespace. */
void sb_rtrim(struct sb *sb);

/*
 * Append s (NULL: nothing) for a terminal: mail text is hostile, and a
 * subject or quoted line may carry escapes. C0 controls (tab kept, and
 * newline when keep_newlines), DEL and C1 controls (UTF-8 U+0080..
 * U+009F, e.g. the CSI U+009B) are each shown as '?'.
 */
int sb_add_clean(struct sb *sb, const char *s, bool keep_newlines);

/*
 * A one-sentence error a person can act on, filled by library code and
 * printed by bot/ only. Functions take a struct errmsg * that may be NULL.
 */
struct errmsg {
	char msg[512];
};

/* Format into e (when not NULL) and return code: `return errmsg_set(...)`. */
int errmsg_set(struct errmsg *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Small helpers used across modules. */

/* strdup that returns NULL for NULL input; aborts on out-of-memory. */
char *xstrdup_or_null(const char *s);
/*
 * mkdir -p (mode 0700) of path's directories: its parents only, or with
 * self path itself too. 0, or -1 when one could not be made.
 */
int mkdir_parents(const char *path, bool self);
/* strndup that aborts on out-of-memory. */
char *xstrndup(const char *s, size_t n);
/* malloc/calloc/realloc that abort with a message on out-of-memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);

/* Grow an array to hold at least n elements; doubles capacity. */
#define ALLOC_GROW(arr, n, alloc)                                              \
	do {                                                                   \
		if ((n) > (alloc)) {                                           \
			size_t alloc_grow_new_ = (alloc) ? (alloc)*2 : 8;      \
			while (alloc_grow_new_ < (n))                          \
				alloc_grow_new_ *= 2;                          \
			(arr) = xrealloc((arr),                                \
					 alloc_grow_new_ * sizeof(*(arr)));    \
			(alloc) = alloc_grow_new_;                             \
		}                                                              \
	} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
