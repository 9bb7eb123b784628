// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-commands.c - `#quorum rerun|mute|unmute|explain N`, on a line of its
 * own in a reply in a series' thread, from its author or a maintainer.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "watch.h"

/*
 * The argument of "explain" at p, as a finding number: 1 to
 * EXPLAIN_MAX written in digits only, else -1 (missing, signed, too
 * long, or not a number). Never overflows: the digits are counted
 * before they are read.
 */
static int explain_number(const char *p, size_t len)
{
	size_t i, n = 0;
	int v = 0;

	while (n < len && p[n] >= '0' && p[n] <= '9')
		n++;
	if (!n || (n < len && p[n] != ' ' && p[n] != '\t'))
		return -1;
	while (n > 1 && *p == '0') /* leading zeros say nothing */
		p++, n--;
	if (n > 9)
		return -1;
	for (i = 0; i < n; i++)
		v = v * 10 + (p[i] - '0');
	return v >= 1 && v <= EXPLAIN_MAX ? v : -1;
}

/* The word after "#quorum explain", shown safely, in arg (may be ""). */
static void explain_arg(const char *p, size_t len, char *arg, size_t size)
{
	size_t n = 0, o = 0;

	while (n < len && p[n] != ' ' && p[n] != '\t')
		n++;
	for (; o < n && o + 4 < size; o++)
		arg[o] = (unsigned char)p[o] > ' ' && (unsigned char)p[o] < 0x7f
				 ? p[o]
				 : '?';
	if (o < n && size > 4)
		memcpy(arg + o, "...", 3), o += 3;
	if (size)
		arg[o < size ? o : size - 1] = '\0';
}

enum command command_arg(const struct mp_patch *p, int *n, char *arg,
			 size_t size)
{
	const char *text = p->commit_message, *line;

	if (arg && size)
		*arg = '\0';
	for (line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *c = line;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *end = line + len, *w;
		size_t wl;

		while (*c == ' ' || *c == '\t')
			c++;
		line = nl ? nl + 1 : NULL;
		if (c >= end || (size_t)(end - c) < 8 ||
		    strncmp(c, "#quorum ", 8))
			continue;
		for (w = c + 8; w < end && (*w == ' ' || *w == '\t'); w++)
			;
		for (wl = 0; w + wl < end && w[wl] != ' ' && w[wl] != '\t';
		     wl++)
			;
#define IS_WORD(s) (wl == strlen(s) && !strncmp(w, s, wl))
		if (IS_WORD("rerun"))
			return CMD_RERUN;
		if (IS_WORD("mute"))
			return CMD_MUTE;
		if (IS_WORD("unmute"))
			return CMD_UNMUTE;
		if (IS_WORD("explain")) {
			const char *a = w + wl;

			while (a < end && (*a == ' ' || *a == '\t'))
				a++;
			/* A malformed number is answered, never ignored. */
			if (n)
				*n = explain_number(a, (size_t)(end - a));
			if (arg && size)
				explain_arg(a, (size_t)(end - a), arg, size);
			return CMD_EXPLAIN;
		}
#undef IS_WORD
	}
	return CMD_NONE;
}

enum command command_of(const struct mp_patch *p, int *n)
{
	return command_arg(p, n, NULL, 0);
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

	if (!sender || !*sender)
		return false;
	if (p && p->author_email && !strcasecmp(p->author_email, sender))
		return true;
	for (i = 0; i < l->ncc; i++)
		if (!strcasecmp(l->cc[i], sender))
			return true;
	return false;
}

/*
 * Why command c is not taken from its sender on the thread's list, in
 * why (size bytes), or NULL when it is: the list takes no commands, the
 * mail's sender cannot be believed (as list.NAME.commands asks), or the
 * sender is neither the series' author nor a maintainer.
 */
static const char *command_refused(struct thread_ctx *t,
				   const struct mp_series *s,
				   const struct tcmd *c, char *why, size_t size)
{
	const struct wlist *l = t->l;
	enum commands_mode mode = watch_commands_mode(l);

	if (mode == COMMANDS_OFF)
		snprintf(why, size,
			 "list %.100s takes no commands (commands = off)",
			 l->name);
	else if (c->who.how == SENDER_NONE)
		snprintf(why, size, "%s", c->who.why);
	else if (mode == COMMANDS_DKIM && c->who.how != SENDER_DKIM)
		snprintf(why, size,
			 "%.200s, and list %.100s wants a DKIM signature "
			 "(commands = dkim%s)",
			 c->who.why, l->name,
			 l->commands == COMMANDS_DEFAULT
				 ? ", the default: its mail comes signed"
				 : "");
	else if (!may_command(l, s, c->who.addr))
		snprintf(why, size, "not the author or a maintainer");
	else
		return NULL;
	return why;
}

/*
 * A rerun of a muted author's series is not done: say why, to the one
 * who asked. true when the author is muted (or the state db failed).
 */
static bool rerun_refused(struct thread_ctx *t, const struct mp_series *s,
			  const struct tcmd *c)
{
	const struct mp_patch *cmd = c->p;
	const struct mp_patch *p = mp_series_first(s);
	struct sb text = SB_INIT;
	int muted = watch_author_muted(t, p);

	if (muted <= 0)
		return muted < 0;
	if (state_command_once(t->w->st, cmd->message_id, t->w->now) <= 0)
		return true;
	printf("%s: #quorum rerun from %s: skipped, the author %s is muted\n",
	       t->l->name, c->who.addr,
	       p->author_email ? p->author_email : "?");
	sb_addf(&text,
		"quorum did not review \"%s\" again: its author %s is muted "
		"on list %s (by '#quorum mute', or by list.%s.mute in "
		"quorum's config). Reply '#quorum unmute' first, then "
		"'#quorum rerun'.",
		p->subject_raw ? p->subject_raw : "the series",
		p->author_email ? p->author_email : "?", t->l->name,
		t->l->name);
	watch_send_note(t, c, text.buf);
	sb_release(&text);
	return true;
}

/* Acknowledge a mute or an unmute, to the one who asked. */
static void ack_mute(struct thread_ctx *t, const struct mp_series *s,
		     const struct tcmd *cmd, enum command c, int was)
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
				       const struct tcmd *tc)
{
	const struct mp_series *s = command_series(set, tc->p);
	char why[512];

	if (!s || command_of(tc->p, NULL) != CMD_RERUN ||
	    command_refused(t, s, tc, why, sizeof(why)) ||
	    watch_author_muted(t, mp_series_first(s)) != 0 ||
	    state_command_done(t->w->st, tc->p->message_id) != 0)
		return NULL;
	return s;
}

void run_command(struct thread_ctx *t, const struct mp_set *set,
		 const struct tcmd *tc)
{
	static const char *const names[] = {"", "rerun", "mute", "explain",
					    "unmute"};
	struct watch *w = t->w;
	const struct mp_patch *cmd = tc->p;
	const struct mp_series *s = command_series(set, cmd);
	const char *sender = tc->who.addr, *refused;
	struct tmsg *tm = tmsg_find(t, cmd->message_id);
	struct sb key = SB_INIT;
	char arg[EXPLAIN_ARG_MAX], why[512], shown[SENDER_ADDR_MAX];
	int n = 0, fresh, was = 0;
	enum command c = command_arg(cmd, &n, arg, sizeof(arg));

	if (!s)
		return;
	refused = command_refused(t, s, tc, why, sizeof(why));
	if (refused) {
		/*
		 * Said once, in the run's output for the maintainer; never
		 * answered: a note would tell a forger what got through.
		 */
		if (tm)
			tm->tag = "quorum/skipped";
		if (state_command_once(w->st, cmd->message_id, w->now) > 0)
			printf("%s: ignored #quorum %s from %s: %s\n",
			       t->l->name, names[c],
			       mp_shown(*sender	    ? sender
					: cmd->from ? cmd->from
						    : "?",
					shown, sizeof(shown)),
			       refused);
		return;
	}
	if (c == CMD_RERUN && rerun_refused(t, s, tc)) {
		if (tm)
			tm->tag = "quorum/reviewed";
		return;
	}
	watch_series_key(t, s, &key);
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
		ack_mute(t, s, tc, c, was);
	if (c == CMD_EXPLAIN) {
		t->explain = n;
		t->explain_arg = arg;
		t->explain_id = cmd->message_id;
		t->explain_cmd = cmd;
		t->explain_who = &tc->who;
		review_one(t, s);
		t->explain = 0;
		t->explain_arg = NULL;
		t->explain_who = NULL;
		t->explain_id = NULL;
		t->explain_cmd = NULL;
	}
out:
	sb_release(&key);
}
