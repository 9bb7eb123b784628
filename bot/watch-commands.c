// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-commands.c - `#quorum rerun|mute|unmute|explain N`, on a line of its
 * own in a reply in a series' thread, from its author or a maintainer.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "watch.h"

enum command command_of(const struct mp_patch *p, int *n)
{
	const char *text = p->commit_message, *line;

	for (line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *c = line;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		while (*c == ' ' || *c == '\t')
			c++;
		if (!strncmp(c, "#quorum ", 8) && (size_t)(c - line) < len) {
			char word[16] = "";
			int num = 0;

			sscanf(c + 8, "%15s %d", word, &num);
			if (!strcmp(word, "rerun"))
				return CMD_RERUN;
			if (!strcmp(word, "mute"))
				return CMD_MUTE;
			if (!strcmp(word, "unmute"))
				return CMD_UNMUTE;
			if (!strcmp(word, "explain") && num > 0 && num < 1000) {
				if (n)
					*n = num;
				return CMD_EXPLAIN;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return CMD_NONE;
}

static bool refers_to(const struct mp_patch *cmd, const char *id)
{
	size_t i;

	if (!id)
		return false;
	if (cmd->in_reply_to && !strcmp(cmd->in_reply_to, id))
		return true;
	for (i = 0; i < cmd->nreferences; i++)
		if (!strcmp(cmd->references[i], id))
			return true;
	return false;
}

/* The series the command is about: the one its references name. */
static const struct mp_series *command_series(const struct mp_set *set,
					      const struct mp_patch *cmd)
{
	size_t i, k;

	for (i = 0; i < set->nseries; i++) {
		const struct mp_series *s = set->series[i];

		if (s->cover && refers_to(cmd, s->cover->message_id))
			return s;
		for (k = 0; k < s->npatches; k++)
			if (s->patches[k] &&
			    refers_to(cmd, s->patches[k]->message_id))
				return s;
	}
	return set->nseries == 1 ? set->series[0] : NULL;
}

/* The series' author, or a maintainer of the list? */
static bool may_command(const struct wlist *l, const struct mp_series *s,
			const char *sender)
{
	const struct mp_patch *p = mp_series_first(s);
	size_t i;

	if (!sender)
		return false;
	if (p && p->author_email && !strcasecmp(p->author_email, sender))
		return true;
	for (i = 0; i < l->ncc; i++)
		if (!strcasecmp(l->cc[i], sender))
			return true;
	return false;
}

/*
 * A rerun of a muted author's series is not done: say why, to the one
 * who asked. true when the author is muted (or the state db failed).
 */
static bool rerun_refused(struct thread_ctx *t, const struct mp_series *s,
			  const struct mp_patch *cmd)
{
	const struct mp_patch *p = mp_series_first(s);
	struct sb text = SB_INIT;
	int muted = watch_author_muted(t, p);

	if (muted <= 0)
		return muted < 0;
	if (state_command_once(t->w->st, cmd->message_id, t->w->now) <= 0)
		return true;
	printf("%s: #quorum rerun from %s: skipped, the author %s is muted\n",
	       t->l->name, cmd->author_email,
	       p->author_email ? p->author_email : "?");
	sb_addf(&text,
		"quorum did not review \"%s\" again: its author %s is muted "
		"on list %s (by '#quorum mute', or by list.%s.mute in "
		"quorum's config). Reply '#quorum unmute' first, then "
		"'#quorum rerun'.",
		p->subject_raw ? p->subject_raw : "the series",
		p->author_email ? p->author_email : "?", t->l->name,
		t->l->name);
	watch_send_note(t, cmd, text.buf);
	sb_release(&text);
	return true;
}

/* Acknowledge a mute or an unmute, to the one who asked. */
static void ack_mute(struct thread_ctx *t, const struct mp_series *s,
		     const struct mp_patch *cmd, enum command c, int was)
{
	const struct mp_patch *p = mp_series_first(s);
	const char *who = p->author_email ? p->author_email : "?";
	struct sb text = SB_INIT;

	if (c == CMD_MUTE)
		sb_addf(&text,
			"quorum will not review mail from %s on list %s "
			"any more, as asked. Reply '#quorum unmute' to undo "
			"it.",
			who, t->l->name);
	else if (!was)
		sb_addf(&text,
			"%s was not muted on list %s by '#quorum "
			"mute'; nothing changed.",
			who, t->l->name);
	else
		sb_addf(&text,
			"quorum reviews mail from %s on list %s again, as "
			"asked. Reply '#quorum rerun' to review this "
			"series.",
			who, t->l->name);
	if (c == CMD_UNMUTE && watch_author_muted(t, p) > 0)
		sb_addf(&text,
			" Note: list.%s.mute in quorum's config still mutes "
			"this mail.",
			t->l->name);
	watch_send_note(t, cmd, text.buf);
	sb_release(&text);
}

const struct mp_series *watch_rerun_of(struct thread_ctx *t,
				       const struct mp_set *set,
				       const struct mp_patch *cmd)
{
	const struct mp_series *s = command_series(set, cmd);

	if (!s || command_of(cmd, NULL) != CMD_RERUN ||
	    !may_command(t->l, s, cmd->author_email) ||
	    watch_author_muted(t, mp_series_first(s)) != 0 ||
	    state_command_done(t->w->st, cmd->message_id) != 0)
		return NULL;
	return s;
}

void run_command(struct thread_ctx *t, const struct mp_set *set,
		 const struct mp_patch *cmd)
{
	static const char *const names[] = {"", "rerun", "mute", "explain",
					    "unmute"};
	struct watch *w = t->w;
	const struct mp_series *s = command_series(set, cmd);
	const char *sender = cmd->author_email;
	struct tmsg *tm = tmsg_find(t, cmd->message_id);
	struct sb key = SB_INIT;
	int n = 0, fresh, was = 0;
	enum command c = command_of(cmd, &n);

	if (!s)
		return;
	if (!may_command(t->l, s, sender)) {
		if (tm)
			tm->tag = "quorum/skipped";
		if (state_command_once(w->st, cmd->message_id, w->now) > 0)
			printf("%s: ignored #quorum %s from %s: not the "
			       "author or a maintainer\n",
			       t->l->name, names[c], sender ? sender : "?");
		return;
	}
	if (c == CMD_RERUN && rerun_refused(t, s, cmd)) {
		if (tm)
			tm->tag = "quorum/reviewed";
		return;
	}
	watch_series_key(s, &key);
	if (state_begin(w->st) < 0)
		goto out;
	fresh = state_command_once(w->st, cmd->message_id, w->now);
	if (fresh > 0 && c == CMD_RERUN)
		fresh = state_series_rerun(w->st, key.buf, w->now) < 0 ? -1 : 1;
	else if (fresh > 0 && c == CMD_MUTE)
		fresh = state_mute_add(w->st, t->l->name,
				       mp_series_first(s)->author_email,
				       w->now) < 0
				? -1
				: 1;
	else if (fresh > 0 && c == CMD_UNMUTE)
		was = state_mute_remove(w->st, t->l->name,
					mp_series_first(s)->author_email),
		fresh = was < 0 ? -1 : 1;
	if (fresh < 0 || state_commit(w->st) < 0) {
		state_rollback(w->st);
		error("state db: %s", state_error(w->st));
		goto out;
	}
	if (tm)
		tm->tag = "quorum/reviewed";
	if (!fresh)
		goto out;
	printf("%s: #quorum %s from %s\n", t->l->name, names[c], sender);
	if (c == CMD_MUTE || c == CMD_UNMUTE)
		ack_mute(t, s, cmd, c, was);
	if (c == CMD_EXPLAIN) {
		t->explain = n;
		t->explain_id = cmd->message_id;
		t->explain_cmd = cmd;
		review_one(t, s);
		t->explain = 0;
		t->explain_id = NULL;
		t->explain_cmd = NULL;
	}
out:
	sb_release(&key);
}
