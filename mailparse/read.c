// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * read.c - read every message of a file (or maildir, or stdin) into a
 * collector: the glue between mbox.c, the message parser and series.c.
 * A message that cannot be used becomes an entry in the set's errors;
 * only a file that cannot be read at all fails the call.
 */
#include <stdlib.h>
#include <string.h>

#include "mailparse.h"

int mp_collect_path(struct mp_collector *c, const char *path,
		    const struct mp_limits *lim, struct errmsg *err)
{
	struct mp_limits def = MP_LIMITS_INIT;
	struct mp_mbox *mb = NULL;
	struct sb msg = SB_INIT;
	const char *where = NULL;
	int ret, count = 0;

	if (!lim)
		lim = &def;
	ret = mp_mbox_open(&mb, path, lim, err);
	if (ret)
		return ret;
	sb_init(&msg, lim->max_message);
	for (;;) {
		struct mp_patch *p = NULL;
		struct errmsg perr = {""};
		int r;

		ret = mp_mbox_next(mb, &msg, &where);
		if (ret == 0)
			break;
		if (ret == MP_ERR_TOO_BIG) {
			struct sb m = SB_INIT;

			sb_addf(&m,
				"the message is larger than the %zu MiB "
				"limit; it was skipped",
				lim->max_message >> 20);
			mp_collector_error(c, where, sb_str(&m));
			sb_release(&m);
			count++;
			continue;
		}
		if (ret < 0) {
			if (count == 0) {
				ret = errmsg_set(err, ret,
						 "cannot read %s: read error",
						 path);
				goto out;
			}
			mp_collector_error(c, where,
					   "read error; the rest of the file "
					   "was not read");
			break;
		}
		count++;
		r = mp_patch_parse(&p, msg.buf, msg.len, lim, &perr);
		if (p) {
			mp_collector_add(c, p);
			continue;
		}
		if (r == 0)
			r = MP_ERR_NOT_MAIL;
		mp_collector_error(c, where,
				   perr.msg[0]
					   ? perr.msg
					   : "the message could not be read");
	}
	if (count == 0) {
		ret = errmsg_set(err, MP_ERR_EMPTY,
				 "%s is empty: no mail message in it",
				 strcmp(path, "-") ? path : "standard input");
		goto out;
	}
	ret = count;
out:
	sb_release(&msg);
	mp_mbox_free(mb);
	return ret;
}

int mp_read_path(struct mp_set **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err)
{
	struct mp_collector *c = mp_collector_new();
	int ret;

	*out = NULL;
	ret = mp_collect_path(c, path, lim, err);
	if (ret < 0) {
		mp_set_free(mp_collector_finish(c));
		return ret;
	}
	*out = mp_collector_finish(c);
	return 0;
}
