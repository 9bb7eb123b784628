/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm-voters.h - the LLM voters of the [voter "NAME"] sections, and the
 * prompts they read.
 */
#ifndef QUORUM_LLM_VOTERS_H
#define QUORUM_LLM_VOTERS_H

#include "config.h"
#include "review/review.h"

struct llm_voters {
	struct rv_llm_voter *v;
	size_t n;
	char **owned; /* strings (names, keys) to free; keys are wiped */
	size_t nowned;
};

enum {
	LLM_VOTERS_ERR_CONFIG = -1, /* a voter section is wrong or incomplete */
	LLM_VOTERS_ERR_ENV = -2, /* its key is not there (key-env, key-file) */
};

/*
 * Read every [voter] section whose provider is openai or anthropic,
 * with its key from key-env or a 0600 key-file. 0, or an LLM_VOTERS_ERR_*
 * with err (a sentence naming the file and line, never holding a key).
 */
int llm_voters_load(struct qconfig *cfg, struct llm_voters *out,
		    struct errmsg *err);
void llm_voters_release(struct llm_voters *lv);

/*
 * The prompts directory: $QUORUM_PROMPTS, else prompts/ next to (or one
 * up from) the binary, else share/quorum/prompts one up from it, else
 * the compiled-in default. Caller frees.
 */
char *prompts_dir(void);

#endif
