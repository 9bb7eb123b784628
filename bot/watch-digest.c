// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-digest.c - mode = digest: once a day, one mail to the list's
 * maintainers listing the series reviewed since the last one, recorded
 * and delivered like any reply.
 */
#include <stdio.h>

#include "watch.h"

void send_digest(struct watch *w, struct wlist *l)
{
	struct sb lines = SB_INIT, msgid = SB_INIT, raw = SB_INIT,
		  key = SB_INIT;
	struct reply_opts ro = REPLY_OPTS_INIT;
	struct errmsg err = {""};
	const char *method = l->ncc ? w->method : "outbox";
	size_t n = 0;
	int due;

	due = state_digest_due(w->st, l->name, w->now, DIGEST_PERIOD, &lines,
			       &n);
	if (due <= 0)
		goto out;
	sb_addf(&key, "digest/%s/%lld", l->name, (long long)w->now);
	reply_msgid(w, key.buf, "digest", &msgid);
	ro.from = w->from;
	ro.msgid = msgid.buf;
	ro.maintainers = (const char *const *)l->cc;
	ro.nmaintainers = l->ncc;
	ro.now = w->now;
	if (reply_compose_digest(&raw, l->name, lines.buf, n, &ro, &err) < 0) {
		error("list %s: %s", l->name, err.msg);
		goto out;
	}
	if (state_begin(w->st) < 0)
		goto fail;
	if (state_reply_add(w->st, msgid.buf, key.buf, l->name, NULL, method,
			    raw.buf, raw.len, w->now) < 0 ||
	    state_digest_mark(w->st, l->name, msgid.buf, w->now) < 0 ||
	    state_commit(w->st) < 0) {
		state_rollback(w->st);
		goto fail;
	}
	deliver_one(w, msgid.buf, method, raw.buf, raw.len, 0);
	printf("%s: digest of %zu series, <%s> (%s)\n", l->name, n, msgid.buf,
	       method);
	goto out;
fail:
	error("state db: %s", state_error(w->st));
out:
	sb_release(&lines);
	sb_release(&msgid);
	sb_release(&raw);
	sb_release(&key);
}
