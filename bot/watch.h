/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.h - `quorum watch` internals: the pass over the lists' threads
 * (bot/watch.c), one series' review and reply (watch-review.c), the
 * config (watch-config.c), the #quorum commands in replies
 * (watch-commands.c), the fingerprints that keep a finding from being
 * mailed twice (watch-fingerprint.c), the daily digest (watch-digest.c),
 * reply composition (reply.c) and delivery (deliver.c).
 */
#ifndef QUORUM_WATCH_H
#define QUORUM_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <signal.h>

#include "deliver.h"
#include "dry-run.h"
#include "local-mail.h"
#include "reply.h"
#include "session.h"
#include "state.h"

struct _notmuch_database;

/* ---- the lists and the watcher (bot/watch-config.c) ------------------- */

#define WATCH_MAX_MESSAGE ((size_t)16 << 20)
#define WATCH_MAX_THREAD 2000 /* messages read from one thread */
#define DEFAULT_WAIT (30 * 60)
#define DEFAULT_ATTEMPTS 5
#define REOPEN_AFTER 500	 /* messages tagged between notmuch reopens */
#define REPO_REOPEN_AFTER 20	 /* reviews between repository reopens */
#define DIGEST_PERIOD 86400	 /* mode = digest: one mail a day */
#define FINDINGS_KEPT_DAYS 180	 /* fingerprints are forgotten after this */
#define FINDINGS_KEPT_MAX 100000 /* ... or beyond this many per list */

enum list_mode { MODE_DRY_RUN, MODE_REPLY, MODE_DIGEST };

/* list.NAME.commands: whom a #quorum command is believed from. */
enum commands_mode {
	COMMANDS_DEFAULT, /* dkim once the list's mail is seen signed */
	COMMANDS_DKIM,	  /* a DKIM signature of the From domain */
	COMMANDS_FROM,	  /* the From header (one plain mailbox) */
	COMMANDS_OFF,	  /* none: commands are ignored */
};

/* A [list "NAME"] section, and the repository its series apply to. */
/*
 * A watch pass's plan for one series of a list: whether the models
 * review it, and with how much (watch.c, plan_pass); the grants are
 * kept riskiest first, for the re-plan before each review.
 */
struct pass_grant {
	char *key;     /* the series' key (watch_series_key) */
	double usd;    /* promised to it (full): held until it is done */
	double est;    /* its requests at the voters' answer floors */
	double floor1; /* the cheapest of them */
	bool full;   /* promised usd by the plan; else it waits for a re-plan */
	bool caps;   /* the plan gave what was left: the caps alone bound it */
	bool rest;   /* the plan gave it what was left, however little */
	bool models; /* the models review it (the plan, then the re-plan) */
	bool done;   /* reviewed in this pass: its promise is spent */
	/* The requests its dry review built: its review sends them. */
	struct rv_built *built;
};

struct wlist {
	const char *name;
	const char *address;
	char *query; /* notmuch query for its new mail */
	long wait;   /* seconds an incomplete series waits */
	char **mute; /* lowercase patterns, NULL-terminated */

	/* the reply: mode, who gets it, and how many */
	enum list_mode mode;
	bool to_author, to_list;
	char **cc; /* maintainers: Cc'd, and may send commands */
	size_t ncc;
	bool embargo; /* replies to the maintainers only */
	/*
	 * list.NAME.prerequisites-from: the lists whose mail this one's
	 * reviews may use besides its own (bot/watch-lists.c): their
	 * addresses, lowercase, and the names of those quorum watches (for
	 * the state db's patch-ids); NULL-terminated, may be NULL.
	 */
	const char *prereq_from;
	char **share_addr;
	char **share_lists;

	/* #quorum commands (bot/watch-sender.c) */
	enum commands_mode commands;
	const char *dkim_keys; /* a key file instead of DNS, or NULL */
	void *dkim_lib;	       /* libopendkim's handle, made on first use */
	bool signed_mail;      /* a patch of the list came DKIM-signed */
	int per_hour;	       /* replies per hour on the list; 0: no limit */
	int per_author_day;    /* replies per author per day; 0: no limit */

	/* the repository, opened on first use */
	const char *repo;
	const char *branch;
	struct rv_repo *rv;
	size_t rv_uses; /* reviews on rv since it was opened */
	char *workdir;
	struct rv_history *history;
	bool repo_failed;

	/* This pass's plan of the list's money; ngrants 0: no plan. */
	struct pass_grant *grants;
	size_t ngrants;
};

struct watch {
	struct session s; /* config, quorum and voters of every list */
	struct _notmuch_database *db;
	struct state *st;
	int64_t now;
	struct wlist *lists;
	size_t nlists;

	/* replies: who sends them, and how they are delivered */
	const char *domain;
	char *from;
	char *outbox;
	const char *method; /* for lists in reply mode */
	char **sendmail;
	struct smtp_opts smtp;
	char *smtp_from; /* the address part of from */
	int max_attempts;
	char prompt_hash[48]; /* X-Quorum-Prompt */

	/* counters for the summary line */
	size_t reviewed, waiting, skipped, failed, delivered, held;
	bool misconfigured; /* a list's repo is missing: the pass exits 2 */
	/* --dry-run: plan each list's pass and say it; nothing else. */
	bool dry_run;
	struct dry_run dry; /* its requests, and where they go (.dir) */
	size_t tagged;	    /* messages tagged since the db was opened */
};

/* SIGTERM or SIGINT: end after the series at hand. */
extern volatile sig_atomic_t stop_requested;

/*
 * Read the config (after session_open()): the sender, delivery, the
 * lists, the prompts' hash. 0, or -1 after an error on stderr.
 */
int watch_config_load(struct watch *w);
void watch_config_release(struct watch *w);

/* ---- which list a message is of (bot/watch-lists.c) ------------------ */

/*
 * Every value of header name (case-insensitive) in the header block of
 * raw, unfolded, NULL-terminated in *vals (caller frees with
 * argv_free(); NULL when none). The count, or -1 when the header block
 * is too long to be mail.
 */
int mail_header_values(const char *raw, size_t len, const char *name,
		       char ***vals);
/*
 * May list l's review use the message raw? When its To or Cc holds l's
 * address; else never when they hold an embargoed list's; else when
 * they hold an address of l->share_addr; else, with own_thread (the
 * thread watch reads for l), when they hold no watched list's address.
 */
bool watch_mail_usable(const struct watch *w, const struct wlist *l,
		       const char *raw, size_t len, bool own_thread);
/* The same for the file at path, for a struct thread_ctx *arg's list. */
bool watch_file_usable(void *arg, const char *path);

/* ---- one thread of a list (bot/watch.c) ------------------------------- */

/* ---- who sent a command (bot/watch-sender.c) -------------------------- */

#define SENDER_ADDR_MAX 256

enum sender_how {
	SENDER_NONE, /* no one to believe: why says */
	SENDER_FROM, /* the From header's one plain mailbox (why: not DKIM) */
	SENDER_DKIM, /* ... and a DKIM signature of its domain verifies */
};

struct cmd_sender {
	enum sender_how how;
	bool signed_mail;	    /* it carries a DKIM-Signature */
	char addr[SENDER_ADDR_MAX]; /* the From address, lowercase */
	char name[128];		    /* its display name, decoded */
	char domain[256];	    /* SENDER_DKIM: the signing domain */
	char why[200];		    /* otherwise: why not more */
};

/*
 * Who sent the command mail raw (in l's thread): its From when that is
 * exactly one plain mailbox (Name <addr>, <addr> or addr, no list, no
 * group, one From header, and at most one Message-ID, In-Reply-To and
 * References), and whether a DKIM signature vouches for it: it verifies
 * (keys from l's dkim-keys file, else DNS), its d= is the From domain or
 * a parent of it, it signs the whole body and From, Message-ID,
 * In-Reply-To and References (those present).
 */
void watch_sender_check(struct wlist *l, const char *raw, size_t len,
			struct cmd_sender *who);
/* Does raw carry a DKIM-Signature header? */
bool watch_mail_signed(const char *raw, size_t len);
/* l's commands setting, the default resolved (dkim once signed). */
enum commands_mode watch_commands_mode(const struct wlist *l);
/* "Sender X, verified by ..." for the answer to a command. */
void watch_sender_said(const struct wlist *l, const struct cmd_sender *who,
		       struct sb *out);
void watch_dkim_release(struct wlist *l);

/* A #quorum command mail of the thread, and who sent it. */
struct tcmd {
	struct mp_patch *p;
	struct cmd_sender who;
};

struct tmsg {
	char *msgid;
	int64_t first_seen;
	const char *tag; /* what happened to it, NULL: seen only */
};

struct thread_ctx {
	struct watch *w;
	struct wlist *l;
	const char *thread;
	struct tmsg *msgs;
	size_t n, alloc;
	struct tcmd *cmds; /* replies that carry a #quorum command */
	size_t ncmds, cmds_alloc;
	bool retry; /* a state or repo error: leave the mail untagged */
	/* it holds mail of an embargoed list not l (watch_mail_usable) */
	bool near_embargo;
	int explain; /* set while answering #quorum explain N (-1: no N) */
	const char *explain_arg;	    /* ... N as written, shown safely */
	const char *explain_id;		    /* ... the command's Message-ID */
	const struct mp_patch *explain_cmd; /* ... and the command mail */
	const struct cmd_sender *explain_who; /* ... and who sent it */
	const struct mp_set *set;	      /* the thread's series */
};

#define THREAD_CTX_INIT(w_, l_, thread_)                                       \
	{                                                                      \
		.w = (w_), .l = (l_), .thread = (thread_),                     \
	}

/* The pass's plan for the series of key on l, or NULL. */
struct pass_grant *watch_grant(struct wlist *l, const char *key);
/*
 * Re-plan the list's money before series g's review, with left under
 * the caps now: the series promised money keep it, the others share
 * the rest riskiest first as the plan did. g's run budget (the money
 * no other series holds), or 0: the offline voters only. Sets
 * g->models.
 */
double watch_grant_cap(struct wlist *l, struct pass_grant *g, double left);
struct tmsg *tmsg_find(struct thread_ctx *t, const char *msgid);
/*
 * The stable key of series s of the thread's list, whichever of its
 * mails came first; another list's series never has it.
 */
void watch_series_key(struct thread_ctx *t, const struct mp_series *s,
		      struct sb *key);
/* A Message-ID from a hash of key and what: stable across a retry. */
void reply_msgid(struct watch *w, const char *key, const char *what,
		 struct sb *out);
/* Deliver one recorded reply and update the state. 0, or -1 not yet. */
int deliver_one(struct watch *w, const char *msgid, const char *method,
		const char *raw, size_t len, int attempts);
/*
 * Review series s of the thread and reply, or explain a finding
 * (t->explain); bot/watch-review.c.
 */
void review_one(struct thread_ctx *t, const struct mp_series *s);
/*
 * The review of series s of the thread as a dry run (no offline voter,
 * no cap, nothing sent but the voters' free token counts): each model
 * request it would send, bounded and priced, in (*out)->dry. *out is
 * NULL when the series does not apply; caller frees with
 * rv_review_free(). 0, or -1 (the list's repo, the state db: said).
 */
int watch_series_dry(struct thread_ctx *t, const struct mp_series *s,
		     struct rv_review **out);
/*
 * Is the author of parent muted on the thread's list (list.NAME.mute,
 * or #quorum mute)? 1, 0, or -1 on a state db error.
 */
int watch_author_muted(struct thread_ctx *t, const struct mp_patch *parent);
/*
 * Answer the #quorum command mail cmd with text, to its sender only,
 * exactly once (recorded and delivered as a reply), saying how the
 * sender was verified. 0 or -1.
 */
int watch_send_note(struct thread_ctx *t, const struct tcmd *cmd,
		    const char *text);
/*
 * Open the list's repository (once a pass): false, said on stderr,
 * when it has no repo key or the repo cannot be opened.
 */
bool watch_list_repo_ok(struct watch *w, struct wlist *l);

/* ---- #quorum commands (bot/watch-commands.c) -------------------------- */

enum command { CMD_NONE, CMD_RERUN, CMD_MUTE, CMD_EXPLAIN, CMD_UNMUTE };

/* The highest finding number '#quorum explain N' takes as a number. */
#define EXPLAIN_MAX 999999999
#define EXPLAIN_ARG_MAX 32 /* bytes of N as shown in the answer */

/*
 * The #quorum command on a line of its own in p's text (quoted lines
 * never count), with the finding number of explain in *n (may be NULL):
 * 1 to EXPLAIN_MAX, digits only, or -1 when N is missing or is not such
 * a number (the answer says so). command_arg() also copies N as written
 * into arg (printable ASCII, cut with "..." to fit size; "" when none).
 */
enum command command_of(const struct mp_patch *p, int *n);
enum command command_arg(const struct mp_patch *p, int *n, char *arg,
			 size_t size);
/*
 * The series of the thread's set that command cmd will review again
 * when it is carried out (a '#quorum rerun' not done yet, from one who
 * may, of an author not muted), or NULL. Nothing is recorded.
 */
const struct mp_series *watch_rerun_of(struct thread_ctx *t,
				       const struct mp_set *set,
				       const struct tcmd *cmd);
/* Carry out command cmd of the thread's set, when its sender may. */
void run_command(struct thread_ctx *t, const struct mp_set *set,
		 const struct tcmd *cmd);

/* ---- findings already mailed (bot/watch-fingerprint.c) ---------------- */

/* A review's findings, and which of them an earlier reply mailed. */
struct mailed_findings {
	char (*fp)[RV_OID_HEXSZ + 1];
	struct fingerprint_row *rows;
	struct reply_earlier *earlier; /* for reply_opts.earlier */
	size_t n, repeated;
	int version; /* of the series reviewed */
	const char *title;
};

/* Look r's findings up in the state db. 0 or -1 (a db error). */
int mailed_findings_get(struct thread_ctx *t, const char *key,
			const struct mp_series *s, const struct rv_review *r,
			struct mailed_findings *mf);
/*
 * Record the findings the reply msgid mails in full; in the reply's
 * transaction, so a crash leaves both recorded, or neither. 0 or -1.
 */
int mailed_findings_add(struct thread_ctx *t, const char *key,
			const char *msgid, const struct mailed_findings *mf);
void mailed_findings_release(struct mailed_findings *mf);

/* ---- the daily digest (bot/watch-digest.c) ---------------------------- */

/* mode = digest: when a day has passed, mail the maintainers the list. */
void send_digest(struct watch *w, struct wlist *l);

#endif
