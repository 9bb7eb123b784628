/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify.h - the AUTOSEL question: should this commit go to stable? is
 * it a CVE fix? Answered by the same kind of ensemble as a review: a
 * model fitted on the tree's own labelled history, the nearest past
 * commits with their labels, and LLM voters asked YES/NO.
 *
 * A question says how past commits were labelled yes (a trailer or a
 * regex in the message, a file of commit ids, or "[ Upstream commit ID ]"
 * lines on backport branches) and which prompt file the models read.
 * Errors as in review.h: 0 or a negative rv_status with a sentence in err.
 */
#ifndef QUORUM_REVIEW_CLASSIFY_H
#define QUORUM_REVIEW_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "auc.h"
#include "review.h"

/* Caps on what a question (config, untrusted) may make us hold. */
#define RV_CL_MAX_REGEX 512		     /* bytes of one label regex */
#define RV_CL_MAX_REGEXES 8		     /* label regexes of one question */
#define RV_CL_MAX_IDS_FILE ((size_t)4 << 20) /* bytes of a label-ids file */
#define RV_CL_MAX_NAME 64		     /* bytes of a question name */
#define RV_CL_MAX_MESSAGE ((size_t)64 << 10) /* bytes of a message read */

struct rv_question {
	char *name;   /* "stable", "cve", or a [classify "NAME"] */
	char *prompt; /* file in the prompts dir: classify-NAME.md */
	char *target; /* what a yes is for, e.g. "stable" (mail) */
	char *regex[RV_CL_MAX_REGEXES]; /* label-regex / label-trailer, ERE */
	size_t nregex;
	char *ids_file;		 /* label-ids-file: one commit id a line */
	char *upstream_branches; /* label-upstream-branches glob, or NULL */
	char *release_tags;	 /* glob of release tags (default v[0-9]*) */
	int ripe_days;	      /* unlabelled for this long: a no (default 120) */
	bool labels_replaced; /* private: config replaced built-in labels */
};

/*
 * Fill q with the built-in question name ("stable" or "cve"), or with an
 * empty question of that name (no labels yet) for any other valid name.
 * Returns 0, or RV_ERR_INPUT for a name that is empty, too long or not
 * [A-Za-z0-9_-]. Release with rv_question_release().
 */
int rv_question_init(struct rv_question *q, const char *name,
		     struct errmsg *err);
/*
 * Set one key of a [classify "NAME"] section: label-regex, label-trailer
 * ("Key: value" as a line of the message), label-ids-file,
 * label-upstream-branches, release-tags, prompt, target, ripe-days. The
 * first label key set in config replaces the built-in labels. Returns 0,
 * or RV_ERR_INPUT with one line naming the key (unknown key, a regex that
 * does not compile or is over RV_CL_MAX_REGEX, a bad number).
 */
int rv_question_set(struct rv_question *q, const char *key, const char *value,
		    struct errmsg *err);
/* Is the question able to label anything? RV_ERR_INPUT when not. */
int rv_question_check(const struct rv_question *q, struct errmsg *err);
void rv_question_release(struct rv_question *q);

/* One commit or mail to classify (exactly one of rev and patch). */
struct rv_cl_input {
	const char *rev; /* a revision of the repository */
	const struct mp_patch
		*patch; /* a mail: all there is, never looked up */
};

struct rv_cl_vote {
	char *voter;
	bool llm;
	bool answered; /* false: abstained (why says why) */
	bool yes;
	double score; /* in [0,1]; 0.5 is the voter's own threshold */
	char *why;    /* one line (offline) or the model's explanation */
};

struct rv_cl_similar {
	char commit[RV_OID_HEXSZ + 1];
	char *subject;
	const char *label; /* "yes", "no" or "unknown" (static) */
	double score;	   /* in [0,1] */
};

struct rv_cl_result {
	char commit[RV_OID_HEXSZ + 1]; /* "" for mail with no commit id */
	char *message_id;	       /* of the mail, or NULL */
	char *subject;
	char *author;			  /* "Name <addr>", or NULL */
	char *author_name, *author_email; /* its parts, each may be NULL */
	char *upstream; /* id from "[ Upstream commit ID ]" / commit_id, or NULL
			 */
	bool yes;
	double score;
	struct rv_cl_vote *votes;
	size_t nvotes;
	char **reasons; /* the top reasons, one line each */
	size_t nreasons;
	struct rv_cl_similar *similar;
	size_t nsimilar;
	char *explanation; /* an LLM's explanation for the answer, or NULL */
	const char *known; /* the label history already holds: "yes"/NULL */
	char *error;	   /* why it could not be classified, or NULL */
};

struct rv_ledger;
struct rv_classify_opts {
	/* LLM voters; none when nllm is 0. */
	const struct rv_llm_voter *llm;
	size_t nllm;
	const char *prompts_dir;  /* required when nllm > 0 */
	double deadline;	  /* seconds for all requests; 0: 600 */
	int retries;		  /* 0: 2; < 0: none */
	double backoff;		  /* 0: 1.0 */
	struct rv_ledger *ledger; /* borrowed; NULL: no caps, no cache */
	double budget_review, budget_day, budget_run, budget_month;
	const char *list;
	bool no_cache;
	size_t similar; /* similar commits shown; 0: 5 */
	rv_progress_fn progress;
	void *progress_arg;
};

#define RV_CLASSIFY_OPTS_INIT                                                  \
	{                                                                      \
		.llm = NULL                                                    \
	}

struct rv_classifier;

/*
 * Read repo_path's history (HEAD), its release tags and the question's
 * labels, and fit the model (cached in <git dir>/quorum/classify.db,
 * keyed by question and HEAD; the per-commit facts are cached by id so
 * a moved HEAD reads only new commits). Returns 0, RV_ERR_REPO, or
 * RV_ERR_INPUT (a label file that cannot be read or is too large).
 * Caller frees with rv_classifier_free().
 */
int rv_classifier_open(struct rv_classifier **out, const char *repo_path,
		       const struct rv_question *q,
		       const struct rv_classify_opts *opts, struct errmsg *err);
void rv_classifier_free(struct rv_classifier *c);

/* How many past commits carry the label (for a "no labels" warning). */
size_t rv_classifier_labelled(const struct rv_classifier *c);

/*
 * Classify in[0..n) into res[0..n) (caller-allocated, zeroed), LLM
 * requests of all of them at once. An input that cannot be read gets
 * res[i].error and counts as no. Returns 0 or RV_ERR_NOMEM.
 */
int rv_classify(struct rv_classifier *c, const struct rv_cl_input *in, size_t n,
		const struct rv_classify_opts *opts, struct rv_cl_result *res,
		struct errmsg *err);
void rv_cl_result_release(struct rv_cl_result *r);

/* Remove the lines of message that carry the question's label. */
char *rv_question_strip(const struct rv_question *q, const char *message);

struct rv_cl_eval {
	size_t commits, positives;	       /* replayed, labelled yes */
	size_t fixes, fixes_positives;	       /* ... of them with Fixes: */
	double auc, auc_model, auc_similar;    /* ensemble, voters */
	double auc_has_fixes, auc_subject_fix; /* the baselines */
	double fixes_auc, fixes_auc_shipped, fixes_auc_subject_fix;
	/*
	 * 95% bootstrap intervals, the ensemble against a baseline on the
	 * same draws ([0] the ensemble's AUC, [1] the baseline's, [2] the
	 * margin): has Fixes:, subject says fix, and among the commits
	 * with Fixes:, the bug shipped.
	 */
	struct rv_auc_ci ci_has_fixes, ci_subject_fix, ci_fixes_shipped;
	size_t yes, true_yes; /* answers yes, ... labelled yes */
	double seconds;
};

/*
 * Replay the non-merge commits of HEAD committed in [since, until]:
 * each is classified offline with the model fitted on what was known
 * before it (labels known by then, unlabelled commits counted as no only
 * once ripe), and scored against its label as known now. AUC of the
 * ensemble and of the baselines (has Fixes:, subject says fix), overall
 * and among commits with Fixes: (where the baseline is "the bug
 * shipped"). -1 when undefined.
 */
int rv_classify_eval(struct rv_classifier *c, int64_t since, int64_t until,
		     struct rv_cl_eval *res, struct errmsg *err);

#endif
