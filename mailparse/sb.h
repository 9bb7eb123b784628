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
 * Text shown to a person (mailparse/shown.c): the one sanitiser for
 * every byte of mail, diff, model answer or config that reaches a
 * terminal, a mail or a report. A hostile byte is shown, never acted on:
 *
 *   C0 controls       \a \b \t \n \v \f \r \e (ESC), else \xNN (\x00..)
 *   DEL               \x7f
 *   not UTF-8         \xNN per byte: a raw 0x9b (8-bit CSI) is \x9b, so
 *                     is a byte of an overlong or truncated sequence
 *   C1 controls       <U+0080>..<U+009F> (U+009B is CSI, U+0085 NEL)
 *   invisible format  <U+XXXX> for what reorders or hides text: the bidi
 *                     controls U+202A..U+202E, U+2066..U+2069, U+200E,
 *                     U+200F, U+061C; zero widths U+200B..U+200D,
 *                     U+2060..U+2064, U+FEFF; U+2028/U+2029 (line
 *                     breaks to some viewers); U+180E, U+206A..U+206F,
 *                     U+FFF9..U+FFFB and the tags U+E0000..U+E007F
 *
 * Everything else (printable ASCII, valid UTF-8 text) is kept as it is,
 * backslashes too, so cleaning text twice changes nothing and a whole
 * report can be cleaned again after its fields were. flags:
 *
 *   SB_VIS_NEWLINE  keep '\n' (and read CRLF as '\n'): text of several
 *                   lines; without it a newline in a file name or title
 *                   cannot start a line of its own
 *   SB_VIS_TAB      keep '\t': code quotes keep their indentation, a
 *                   folded subject its whitespace (a tab moves the
 *                   cursor, it cannot hide or overwrite text)
 *   SB_VIS_QUOTE    a name, as git's quote_c_style: when anything in it
 *                   is escaped (or it holds '"' or '\'), the whole of it
 *                   goes in double quotes with '"' and '\' escaped too,
 *                   so "a\nb.c" is told from a file named a\nb.c
 *
 * 0, or -1 (sb unchanged) when sb's cap is reached.
 */
#define SB_VIS_NEWLINE 0x1
#define SB_VIS_TAB 0x2
#define SB_VIS_QUOTE 0x4
int sb_add_visible(struct sb *sb, const char *s, unsigned flags);
int sb_add_visible_mem(struct sb *sb, const char *s, size_t len,
		       unsigned flags);

/*
 * A JSON document (cJSON's output) with the same characters made safe to
 * print: DEL, C1 and the invisible format characters above as \uXXXX
 * escapes (cJSON escapes C0 itself), so the document parses to the exact
 * value; a byte that is not UTF-8, which no JSON string can hold, as
 * \ufffd. Such bytes only occur inside strings. 0 or -1 as above.
 */
int sb_add_json_visible(struct sb *sb, const char *json);

/*
 * url for a message or a dry run: the password of user:password@ and
 * the value of a query parameter that carries a key (key=, token=, ...,
 * or a value that looks like one) shown as ***, the rest made visible.
 */
int sb_add_url_shown(struct sb *sb, const char *url);

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
