// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mbox.c - a streaming reader over mboxes, single message files and
 * maildirs.
 *
 * The file is read through one fixed-size buffer and split on From_ lines
 * the way `git mailsplit` does: a line starting "From " only starts a new
 * message when it also carries a sender and a date, because
 * `git format-patch --stdout` does not escape body lines such as
 * "From upstream commit ...". Memory is bounded by the largest message,
 * which is itself capped by mp_limits.max_message.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mailparse.h"

#define MBOX_BUF_SIZE ((size_t)64 << 10)
/* A From_ line is short; anything longer is body text. */
#define FROM_LINE_MAX 1000
/* Entries of one maildir we are willing to list. */
#define MAILDIR_MAX_FILES 1000000

enum mbox_mode {
	MODE_UNKNOWN, /* nothing read yet from the current file */
	MODE_MBOX,    /* the file starts with a From_ line */
	MODE_SINGLE,  /* no From_ line at the start: one message */
};

struct mp_mbox {
	struct mp_limits lim;
	char *name; /* path as given, for messages */

	/* The stream being read now. */
	FILE *fp;
	bool own_fp;
	char *cur_name; /* name of the current file (maildir entry or path) */
	enum mbox_mode mode;
	bool mid_line; /* the next chunk continues a line */
	bool at_eof;
	bool file_done; /* the current stream has no more messages */
	char *buf;
	size_t start, end; /* unread bytes are buf[start..end) */
	struct sb
		pending; /* a From_ line read ahead: starts the next message */
	unsigned long nmsg; /* messages started in the current file */

	/* Directory mode: the files still to read, in name order. */
	char **files;
	size_t nfiles, next_file;
	bool is_dir;

	char where[600];
};

/*
 * Is line (without its line end) a From_ line of an mbox? The rule of
 * git's mailsplit, made a little stricter: "From ", a sender with no
 * spaces, then a date with hh:mm and a year after the time.
 */
static bool is_from_line(const char *line, size_t len)
{
	const char *p, *end, *colon;
	size_t i;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len < 20 || len > FROM_LINE_MAX || memcmp(line, "From ", 5))
		return false;
	p = line + 5;
	end = line + len;
	/* sender: at least one non-space byte, then a space */
	if (p >= end || *p == ' ' || *p == '\t')
		return false;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	if (p >= end)
		return false;
	/* the last colon of the line must sit inside hh:mm */
	colon = NULL;
	for (i = len; i-- > (size_t)(p - line);)
		if (line[i] == ':') {
			colon = line + i;
			break;
		}
	if (!colon || colon - p < 4 || end - colon < 3)
		return false;
	if (!isdigit((unsigned char)colon[-4]) ||
	    !isdigit((unsigned char)colon[-2]) ||
	    !isdigit((unsigned char)colon[-1]) ||
	    !isdigit((unsigned char)colon[1]) ||
	    !isdigit((unsigned char)colon[2]))
		return false;
	/* a year follows the time (git: a number above 90) */
	for (p = colon + 3; p < end && !isdigit((unsigned char)*p); p++)
		if (*p != ' ' && *p != '\t' && !isalpha((unsigned char)*p) &&
		    *p != '+' && *p != '-')
			return false;
	if (p >= end)
		return false;
	{
		long year = 0;
		int digits = 0;

		while (p < end && isdigit((unsigned char)*p) && digits < 6) {
			year = year * 10 + (*p - '0');
			p++;
			digits++;
		}
		if (year <= 90)
			return false;
	}
	return true;
}

/* Is the line blank (only a line end or spaces)? */
static bool is_blank(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			return false;
	return true;
}

/*
 * Fill the buffer. Returns false at end of file with nothing new.
 */
static bool refill(struct mp_mbox *mb)
{
	size_t n;

	if (mb->at_eof)
		return false;
	if (mb->start > 0) {
		memmove(mb->buf, mb->buf + mb->start, mb->end - mb->start);
		mb->end -= mb->start;
		mb->start = 0;
	}
	if (mb->end >= MBOX_BUF_SIZE)
		return false;
	n = fread(mb->buf + mb->end, 1, MBOX_BUF_SIZE - mb->end, mb->fp);
	if (n == 0) {
		mb->at_eof = true;
		return false;
	}
	mb->end += n;
	return true;
}

/*
 * The next piece of input: a whole line with its "\n" (*complete true),
 * or, when a line is longer than the buffer, the part that fits (*complete
 * false, and the next chunk continues it). Returns false at the end.
 */
static bool next_chunk(struct mp_mbox *mb, const char **chunk, size_t *len,
		       bool *complete)
{
	for (;;) {
		char *nl = NULL;

		if (mb->end > mb->start)
			nl = memchr(mb->buf + mb->start, '\n',
				    mb->end - mb->start);
		if (nl) {
			*chunk = mb->buf + mb->start;
			*len = (size_t)(nl + 1 - *chunk);
			*complete = true;
			mb->start += *len;
			return true;
		}
		if (refill(mb))
			continue;
		if (mb->end == mb->start)
			return false;
		/* last line without "\n", or a line longer than the buffer */
		*chunk = mb->buf + mb->start;
		*len = mb->end - mb->start;
		*complete = mb->at_eof;
		mb->start = mb->end;
		return true;
	}
}

static void close_stream(struct mp_mbox *mb)
{
	if (mb->fp && mb->own_fp)
		fclose(mb->fp);
	mb->fp = NULL;
	mb->own_fp = false;
}

static void reset_stream_state(struct mp_mbox *mb)
{
	mb->mode = MODE_UNKNOWN;
	mb->mid_line = false;
	mb->at_eof = false;
	mb->file_done = false;
	mb->start = mb->end = 0;
	mb->nmsg = 0;
	sb_reset(&mb->pending);
}

static struct mp_mbox *mbox_alloc(const char *name, const struct mp_limits *lim)
{
	struct mp_mbox *mb = xcalloc(1, sizeof(*mb));
	struct mp_limits def = MP_LIMITS_INIT;

	mb->lim = lim ? *lim : def;
	if (!mb->lim.max_message)
		mb->lim.max_message = def.max_message;
	mb->name = xstrdup_or_null(name ? name : "input");
	mb->buf = xmalloc(MBOX_BUF_SIZE);
	sb_init(&mb->pending, FROM_LINE_MAX + 2);
	return mb;
}

int mp_mbox_open_fp(struct mp_mbox **out, FILE *fp, const char *name,
		    const struct mp_limits *lim, struct errmsg *err)
{
	struct mp_mbox *mb;

	*out = NULL;
	if (!fp)
		return errmsg_set(err, MP_ERR_IO, "no input stream to read");
	mb = mbox_alloc(name, lim);
	mb->fp = fp;
	mb->cur_name = xstrdup_or_null(mb->name);
	*out = mb;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	const char *bx = strrchr(*x, '/'), *by = strrchr(*y, '/');

	return strcmp(bx ? bx + 1 : *x, by ? by + 1 : *y);
}

/* Append the regular files of dir (not dot files) to mb->files. */
static int list_dir(struct mp_mbox *mb, const char *dir, size_t *alloc,
		    struct errmsg *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return errmsg_set(err, MP_ERR_IO,
				  "cannot read directory %s: %s", dir,
				  strerror(errno));
	while ((de = readdir(d))) {
		struct sb path = SB_INIT;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		sb_addf(&path, "%s/%s", dir, de->d_name);
		if (stat(sb_str(&path), &st) || !S_ISREG(st.st_mode)) {
			sb_release(&path);
			continue;
		}
		if (mb->nfiles >= MAILDIR_MAX_FILES) {
			sb_release(&path);
			closedir(d);
			return errmsg_set(err, MP_ERR_TOO_BIG,
					  "%s has more than %d files; split it",
					  dir, MAILDIR_MAX_FILES);
		}
		ALLOC_GROW(mb->files, mb->nfiles + 1, *alloc);
		mb->files[mb->nfiles++] = sb_detach(&path, NULL);
	}
	closedir(d);
	return 0;
}

static int open_dir(struct mp_mbox *mb, const char *path, struct errmsg *err)
{
	struct sb sub = SB_INIT;
	struct stat st;
	size_t alloc = 0;
	bool maildir = false;
	const char *parts[] = {"cur", "new"};
	size_t i;
	int ret = 0;

	mb->is_dir = true;
	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		sb_reset(&sub);
		sb_addf(&sub, "%s/%s", path, parts[i]);
		if (stat(sb_str(&sub), &st) || !S_ISDIR(st.st_mode))
			continue;
		maildir = true;
		ret = list_dir(mb, sb_str(&sub), &alloc, err);
		if (ret)
			goto out;
	}
	if (!maildir)
		ret = list_dir(mb, path, &alloc, err);
	if (ret)
		goto out;
	if (mb->nfiles)
		qsort(mb->files, mb->nfiles, sizeof(*mb->files), cmp_names);
out:
	sb_release(&sub);
	return ret;
}

int mp_mbox_open(struct mp_mbox **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err)
{
	struct mp_mbox *mb;
	struct stat st;
	FILE *fp;
	int ret;

	*out = NULL;
	if (!path)
		return errmsg_set(err, MP_ERR_IO, "no file to read");
	if (!strcmp(path, "-"))
		return mp_mbox_open_fp(out, stdin, "standard input", lim, err);
	if (stat(path, &st))
		return errmsg_set(err, MP_ERR_IO, "cannot read %s: %s", path,
				  strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		mb = mbox_alloc(path, lim);
		ret = open_dir(mb, path, err);
		if (ret) {
			mp_mbox_free(mb);
			return ret;
		}
		mb->file_done = true; /* open the first entry on first read */
		*out = mb;
		return 0;
	}
	fp = fopen(path, "rb");
	if (!fp)
		return errmsg_set(err, MP_ERR_IO, "cannot read %s: %s", path,
				  strerror(errno));
	ret = mp_mbox_open_fp(out, fp, path, lim, err);
	if (ret) {
		fclose(fp);
		return ret;
	}
	(*out)->own_fp = true;
	return 0;
}

/* Move to the next file of a directory; false when there is none. */
static bool open_next_file(struct mp_mbox *mb)
{
	while (mb->next_file < mb->nfiles) {
		const char *f = mb->files[mb->next_file++];
		FILE *fp = fopen(f, "rb");

		if (!fp)
			continue; /* vanished since listing: maildirs move */
		close_stream(mb);
		reset_stream_state(mb);
		mb->fp = fp;
		mb->own_fp = true;
		free(mb->cur_name);
		mb->cur_name = xstrdup_or_null(f);
		return true;
	}
	return false;
}

static void set_where(struct mp_mbox *mb)
{
	if (mb->is_dir && mb->mode == MODE_SINGLE)
		snprintf(mb->where, sizeof(mb->where), "%s", mb->cur_name);
	else
		snprintf(mb->where, sizeof(mb->where), "%s message %lu",
			 mb->cur_name, mb->nmsg);
}

/*
 * The first "From " in [s, e). memchr() skips to each 'F' at vector speed,
 * rare in mail; memmem() took 3 instructions a byte, a quarter of parse.
 */
static char *find_from(char *s, char *e)
{
	while (s < e && (s = memchr(s, 'F', (size_t)(e - s)))) {
		if (e - s >= 5 && !memcmp(s, "From ", 5))
			return s;
		s++;
	}
	return NULL;
}

/*
 * The fast path: append, in one piece, the whole lines at the head of the
 * buffer up to the first line that holds "From " anywhere (which the line
 * by line path then examines). Returns the bytes consumed; 0 when the
 * line by line path must take the next line.
 */
static size_t bulk_lines(struct mp_mbox *mb, struct sb *msg, bool *too_big,
			 bool *content)
{
	char *s, *e, *lastnl, *hit, *stop;
	size_t n, i;

	if (mb->start == mb->end && !refill(mb))
		return 0;
	s = mb->buf + mb->start;
	e = mb->buf + mb->end;
	lastnl = memrchr(s, '\n', (size_t)(e - s));
	if (!lastnl)
		return 0;
	hit = find_from(s, lastnl + 1);
	if (!hit) {
		stop = lastnl + 1;
	} else {
		char *ls = hit > s ? memrchr(s, '\n', (size_t)(hit - s)) : NULL;

		stop = ls ? ls + 1 : s;
	}
	n = (size_t)(stop - s);
	if (!n)
		return 0;
	mb->start += n;
	if (!*too_big && msg->len + n > mb->lim.max_message)
		*too_big = true;
	if (*too_big)
		return n;
	if (sb_add(msg, s, n)) {
		*too_big = true;
		return n;
	}
	for (i = 0; !*content && i < n; i++)
		if (!isspace((unsigned char)s[i]))
			*content = true;
	return n;
}

/*
 * Read one message of the current stream into msg. Returns 1, 0 at the
 * end of the stream, or MP_ERR_TOO_BIG (message skipped).
 */
static int read_message(struct mp_mbox *mb, struct sb *msg)
{
	const char *chunk;
	size_t len;
	bool complete, too_big = false, started = false, content = false;

	if (mb->file_done)
		return 0;
	if (mb->pending.len) {
		/* the From_ line that ended the previous message */
		sb_add(msg, mb->pending.buf, mb->pending.len);
		sb_reset(&mb->pending);
		started = true;
		mb->nmsg++;
	}
	for (;;) {
		bool line_start;

		if (started && !mb->mid_line && mb->mode != MODE_UNKNOWN &&
		    bulk_lines(mb, msg, &too_big, &content))
			continue;
		if (!next_chunk(mb, &chunk, &len, &complete))
			break;
		line_start = !mb->mid_line;

		mb->mid_line = !complete;
		if (line_start && mb->mode == MODE_UNKNOWN) {
			if (is_blank(chunk, len))
				continue; /* leading blank lines, as git does */
			mb->mode = complete && is_from_line(chunk, len)
					   ? MODE_MBOX
					   : MODE_SINGLE;
		}
		if (line_start && mb->mode == MODE_MBOX && complete &&
		    is_from_line(chunk, len)) {
			if (started) {
				sb_add(&mb->pending, chunk, len);
				goto done;
			}
			started = true;
			mb->nmsg++;
		} else if (line_start && mb->mode == MODE_MBOX && len > 5 &&
			   chunk[0] == '>') {
			/* mboxrd: ">From " and ">>From " lose one '>' */
			size_t i = 0;

			while (i < len && chunk[i] == '>')
				i++;
			if (len - i >= 5 && !memcmp(chunk + i, "From ", 5)) {
				chunk++;
				len--;
			}
		}
		if (!started) {
			started = true;
			mb->nmsg++;
		}
		if (!too_big && msg->len + len > mb->lim.max_message)
			too_big = true;
		if (too_big)
			continue;
		if (sb_add(msg, chunk, len))
			too_big = true;
		else if (!content &&
			 !(mb->mode == MODE_MBOX && line_start &&
			   msg->len == len) &&
			 !is_blank(chunk, len))
			content = true;
	}
	mb->file_done = true;
done:
	if (!started)
		return 0;
	set_where(mb);
	if (too_big) {
		sb_reset(msg);
		return MP_ERR_TOO_BIG;
	}
	if (!content) {
		/* a From_ line with nothing after it: not a message */
		sb_reset(msg);
		return 2;
	}
	return 1;
}

int mp_mbox_next(struct mp_mbox *mb, struct sb *msg, const char **where)
{
	int ret;

	if (where)
		*where = mb->where;
	sb_reset(msg);
	if (msg->cap == 0 || msg->cap > mb->lim.max_message)
		msg->cap = mb->lim.max_message;
	for (;;) {
		if (mb->file_done) {
			if (!mb->is_dir || !open_next_file(mb)) {
				close_stream(mb);
				return 0;
			}
		}
		ret = read_message(mb, msg);
		if (ret == 2)
			continue; /* empty message: skip */
		if (ret == 0)
			continue; /* end of this file: maybe another one */
		if (ferror(mb->fp)) {
			snprintf(mb->where, sizeof(mb->where), "%s",
				 mb->cur_name);
			mb->file_done = true;
			return MP_ERR_IO;
		}
		return ret;
	}
}

void mp_mbox_free(struct mp_mbox *mb)
{
	size_t i;

	if (!mb)
		return;
	close_stream(mb);
	for (i = 0; i < mb->nfiles; i++)
		free(mb->files[i]);
	free(mb->files);
	free(mb->buf);
	free(mb->name);
	free(mb->cur_name);
	sb_release(&mb->pending);
	free(mb);
}
