/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.h - what a command opens before it works: the repository, the
 * config, the history index (with the embeddings the config names), the
 * voters and the cost ledger. One setup for every command, so that the
 * same config and the same option mean the same everywhere.
 */
#ifndef QUORUM_SESSION_H
#define QUORUM_SESSION_H

#include "cmd.h"
#include "config.h"
#include "llm-voters.h"
#include "review/review.h"

/* What session_open() opens; the parts a command needs, or-ed. */
enum session_need {
	/* The repository (-C, default the current directory) must open. */
	SESSION_REPO = 1 << 0,
	/* Without -C, the current directory when it is a repository. */
	SESSION_REPO_IF_ANY = 1 << 1,
	/* The config: the user's, then the repository's quorum.conf. */
	SESSION_CONFIG = 1 << 2,
	/* ... the user's only, whatever the current directory is. */
	SESSION_CONFIG_GLOBAL = 1 << 3,
	/* The history index and work tree; reviewing without when broken. */
	SESSION_HISTORY = 1 << 4,
	/* The history index, which must exist (`quorum index` first). */
	SESSION_HISTORY_NEEDED = 1 << 5,
	/* The quorum, the LLM voters, their prompts and limits. */
	SESSION_VOTERS = 1 << 6,
	/* The cost caps and ledger, when a model may be paid. */
	SESSION_COST = 1 << 7,
	/* The cost ledger alone. */
	SESSION_LEDGER = 1 << 8,
};

/* How session_open() failed; session_exit_status() maps to an exit. */
enum session_status {
	SESSION_ERR_CONFIG = -1, /* a bad config value: EXIT_USAGE */
	SESSION_ERR_ENV = -2, /* repository, index, voters, prompts, ledger */
};

struct session {
	/* The repository: its path (NULL: none), handle, history, tree. */
	const char *repo_path;
	struct rv_repo *repo;
	struct rv_history *history;
	char *workdir;

	struct qconfig *cfg;

	/* The voters, and the review options that carry them and the caps. */
	struct llm_voters llm;
	struct rv_prompts *prompts;
	char *prompts_dir; /* where prompts were read from; NULL: no LLM */
	struct rv_ledger *ledger;
	struct rv_review_opts opts;
};

#define SESSION_INIT                                                           \
	{                                                                      \
		.opts = RV_REVIEW_OPTS_INIT,                                   \
	}

/*
 * Open what need names for a command with options o (borrowed, as long
 * as s lives). Warnings (a broken history index, --budget 0 with LLM
 * voters) go to stderr. 0, or a negative enum session_status with err;
 * session_close() s either way.
 */
int session_open(struct session *s, const struct cmd_opts *o, unsigned need,
		 struct errmsg *err);
void session_close(struct session *s);

/*
 * session_open() for a command: 0, or the exit status the command is to
 * return, after the error is printed (EXIT_USAGE for a bad config value,
 * else EXIT_ENV). session_close() s either way.
 */
int session_start(struct session *s, const struct cmd_opts *o, unsigned need);

/*
 * The embeddings the config names: [history] embeddings-url,
 * embeddings-model and embeddings-key-env (the variable holding the
 * key). url NULL: none. The strings are cfg's.
 */
void session_embed_opts(struct qconfig *cfg, struct rv_embed_opts *eo);

/*
 * The history index of the repository at path, with cfg's embeddings;
 * NULL when there is none, or (after a warning, prefixed with what
 * when not NULL) when it cannot be opened.
 */
struct rv_history *session_history(struct qconfig *cfg, const char *path,
				   const char *what);

/*
 * The cost caps from cfg (review.budget-per-review, budget.monthly,
 * list.LIST.budget-per-day when list is not NULL) and run_budget
 * (--budget; <= 0: none) into opts, and the cost ledger of the state db
 * in *ledger (for rv_ledger_free()). list is borrowed. 0, or -1 with err.
 */
int cost_review_opts(struct qconfig *cfg, const char *list, double run_budget,
		     struct rv_review_opts *opts, struct rv_ledger **ledger,
		     struct errmsg *err);

#endif
