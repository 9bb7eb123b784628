/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deliver.h - a composed reply on its way: into an outbox maildir, to a
 * sendmail-like command (no shell), or over SMTP (bot/deliver.c).
 */
#ifndef QUORUM_DELIVER_H
#define QUORUM_DELIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "mailparse/sb.h"

/*
 * Write raw into the maildir dir (made when missing) under a name that
 * derives from msgid: tmp/ then link into new/. A second delivery of the
 * same msgid finds it in new/ or cur/ and writes nothing (returns 0).
 * held_reason, when not NULL, is added as an X-Quorum-Held header.
 * 0 or -1 with err.
 */
int deliver_outbox(const char *dir, const char *msgid, const char *raw,
		   size_t len, const char *held_reason, struct errmsg *err);

/* Is msgid already in the maildir dir? */
bool outbox_has(const char *dir, const char *msgid);

/*
 * Run argv (argv[0] looked up in PATH) with raw on its standard input,
 * no shell. 0 when it exits 0, else -1 with err naming the status.
 */
int deliver_command(char *const argv[], const char *raw, size_t len,
		    struct errmsg *err);

struct smtp_opts {
	const char *url;	     /* smtp://host:587 or smtps://host:465 */
	const char *mail_from;	     /* envelope sender address */
	const char *user, *password; /* may be NULL */
	bool starttls;		     /* require STARTTLS on smtp:// (default) */
};

/*
 * Send raw over SMTP (libcurl) to every To and Cc address in it.
 * 0, or -1 with err (never naming the password).
 */
int deliver_smtp(const struct smtp_opts *o, const char *raw, size_t len,
		 struct errmsg *err);

/*
 * Split a command line from the config into argv on blanks, honouring
 * '...' and "..." quoting (no expansion of any kind). NULL-terminated;
 * caller frees with argv_free(). -1 when empty or quotes are unbalanced.
 */
int argv_split(const char *cmd, char ***out);
void argv_free(char **argv);

#endif
