// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * session.c - one setup for every command: repository, config, history
 * index, voters and ledger, opened in the same order with the same
 * errors whichever command asks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "review/cost.h"
#include "session.h"
#include "state.h"

void session_embed_opts(struct qconfig *cfg, struct rv_embed_opts *eo)
{
	const char *env = qconfig_get(cfg, "history.embeddings-key-env");

	eo->url = qconfig_get(cfg, "history.embeddings-url");
	eo->model = qconfig_get(cfg, "history.embeddings-model");
	eo->key = env ? getenv(env) : NULL;
}

/* Give h (may be NULL) the embeddings cfg names, if any. */
static void history_embeddings(struct rv_history *h, struct qconfig *cfg)
{
	struct rv_embed_opts eo;

	session_embed_opts(cfg, &eo);
	if (h && eo.url)
		rv_history_set_embeddings(h, &eo);
}

struct rv_history *session_history(struct qconfig *cfg, const char *path,
				   const char *what)
{
	struct rv_history *h = NULL;
	struct errmsg err = {""};

	if (rv_history_open(&h, path, &err) < 0) {
		warning("%s%s%s; reviewing without it", what ? what : "",
			what ? ": " : "", err.msg);
		return NULL;
	}
	history_embeddings(h, cfg);
	return h;
}

static bool in_git_repo(const char *dir)
{
	struct rv_repo *repo = NULL;
	int r = rv_repo_open(&repo, dir, NULL);

	rv_repo_free(repo);
	return r == 0;
}

static int open_repo(struct session *s, const char *path, unsigned need,
		     struct errmsg *err)
{
	struct stat st;

	s->repo_path = path ? path : ".";
	if (need & SESSION_REPO_IF_ANY && !path && !in_git_repo(".")) {
		s->repo_path = NULL;
		return 0;
	}
	/* Say it plainly when the path is not there at all. */
	if (path && stat(path, &st) < 0)
		return errmsg_set(err, SESSION_ERR_ENV, "-C %s: %s", path,
				  strerror(errno));
	if (!(need & (SESSION_REPO | SESSION_REPO_IF_ANY)))
		return 0;
	if (rv_repo_open(&s->repo, s->repo_path, err) < 0)
		return SESSION_ERR_ENV;
	return 0;
}

static int open_history(struct session *s, unsigned need, struct errmsg *err)
{
	if (!s->repo_path)
		return 0;
	if (need & SESSION_HISTORY_NEEDED) {
		const char *p = s->repo_path;
		bool here = !strcmp(p, ".");

		if (rv_history_open(&s->history, p, err) < 0)
			return SESSION_ERR_ENV;
		if (!s->history)
			return errmsg_set(err, SESSION_ERR_ENV,
					  "no history index in %s; run `quorum "
					  "index%s%s` first",
					  p, here ? "" : " -C ", here ? "" : p);
		history_embeddings(s->history, s->cfg);
		return 0;
	}
	s->history = session_history(s->cfg, s->repo_path, NULL);
	s->workdir = rv_workdir_of(s->repo_path);
	s->opts.history = s->history;
	s->opts.workdir = s->workdir;
	return 0;
}

/* review.deadline, review.retries and review.backoff, the prompts. */
static int load_llm_limits(struct session *s, struct errmsg *err)
{
	static const char *const keys[] = {"review.deadline", "review.backoff"};
	double vals[2] = {0, 0};
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = qconfig_get(s->cfg, keys[i]);
		char *end;

		if (!v)
			continue;
		vals[i] = strtod(v, &end);
		if (end == v || *end || !(vals[i] > 0 && vals[i] <= 86400))
			return errmsg_set(
				err, SESSION_ERR_ENV,
				"config %s = '%s' is not a number of seconds",
				keys[i], v);
	}
	if (qconfig_get_int(s->cfg, "review.retries", 2, &n, err) < 0)
		return SESSION_ERR_ENV;
	s->prompts_dir = prompts_dir();
	if (rv_prompts_load(&s->prompts, s->prompts_dir, err) < 0)
		return SESSION_ERR_ENV;
	s->opts.llm = s->llm.v;
	s->opts.nllm = s->llm.n;
	s->opts.prompts = s->prompts;
	s->opts.deadline = vals[0];
	s->opts.backoff = vals[1];
	s->opts.retries = n > 0 ? n : -1;
	/* What the run learns: dead voters, voters without a counter. */
	s->opts.state = rv_llm_state_new();
	return 0;
}

/*
 * A quorum the voters present can never reach hides every finding:
 * offline voters look at different things and never agree, so alone
 * each is its own quorum, and with models the most a finding can get is
 * their weight and one offline vote. Say so, naming where it was set.
 */
static void check_quorum(struct session *s, const struct cmd_opts *o)
{
	struct sb where = SB_INIT;
	double most = 1;
	size_t i;

	if (s->opts.quorum <= 1)
		return;
	for (i = 0; i < s->llm.n; i++)
		most += s->llm.v[i].weight > 0 ? s->llm.v[i].weight : 1.0;
	if (s->opts.quorum <= most + 1e-9)
		return;
	if (o->quorum)
		sb_addf(&where, "--quorum %d", o->quorum);
	else {
		sb_addf(&where, "review.quorum = %d (", s->opts.quorum);
		qconfig_where(s->cfg, "review", NULL, "quorum", &where);
		sb_addch(&where, ')');
	}
	if (!s->llm.n) {
		warning("%s can never be met by the offline voters alone; "
			"each is its own quorum, so a finding needs 1",
			where.buf);
		s->opts.quorum = 0;
	} else {
		warning("%s can never be met by these voters (at most %g: "
			"the models' weight and one offline vote)",
			where.buf, most);
	}
	sb_release(&where);
}

static int load_voters(struct session *s, const struct cmd_opts *o,
		       struct errmsg *err)
{
	int ret;

	s->opts.quorum = o->quorum;
	if (!o->quorum && qconfig_get_int(s->cfg, "review.quorum", 0,
					  &s->opts.quorum, err) < 0)
		return SESSION_ERR_CONFIG;
	ret = llm_voters_load(s->cfg, &s->llm, err);
	if (ret < 0)
		return ret == LLM_VOTERS_ERR_ENV ? SESSION_ERR_ENV
						 : SESSION_ERR_CONFIG;
	if (s->llm.n && o->budget == 0) {
		/* A budget of nothing: never ask a model, say so once. */
		warning("--budget 0: reviewing with the offline voters only");
		llm_voters_release(&s->llm);
	}
	check_quorum(s, o);
	return s->llm.n ? load_llm_limits(s, err) : 0;
}

/* A USD amount from the config; 0 when absent. */
static int cfg_usd(struct qconfig *cfg, const char *key, double *out,
		   struct errmsg *err)
{
	const char *v = qconfig_get(cfg, key);
	char *end;

	*out = 0;
	if (!v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !(*out >= 0 && *out <= 1e9))
		return errmsg_set(err, -1,
				  "config %s = '%s' is not an amount in USD",
				  key, v);
	return 0;
}

int cost_review_opts(struct qconfig *cfg, const char *list, double run_budget,
		     struct rv_review_opts *opts, struct rv_ledger **ledger,
		     struct errmsg *err)
{
	struct sb key = SB_INIT;
	char *path;
	int ret;

	*ledger = NULL;
	if (cfg_usd(cfg, "review.budget-per-review", &opts->budget_review,
		    err) < 0 ||
	    cfg_usd(cfg, "budget.monthly", &opts->budget_month, err) < 0)
		return -1;
	if (list) {
		const char *v;

		sb_addf(&key, "list.%s.budget-per-day", list);
		ret = cfg_usd(cfg, key.buf, &opts->budget_day, err);
		sb_reset(&key);
		sb_addf(&key, "list.%s.embargo", list);
		v = qconfig_get(cfg, key.buf);
		sb_release(&key);
		if (ret < 0)
			return -1;
		/* Its answers come from its mail: cached for it alone. */
		opts->cache_scope = v && !strcmp(v, "true") ? list : NULL;
	}
	opts->list = list;
	opts->budget_run = run_budget > 0 ? run_budget : 0;
	path = state_default_path();
	ret = rv_ledger_open(ledger, path, err);
	free(path);
	if (ret < 0)
		return -1;
	opts->ledger = *ledger;
	return 0;
}

static int open_ledger(struct session *s, const struct cmd_opts *o,
		       unsigned need, struct errmsg *err)
{
	char *path;
	int ret;

	if (need & SESSION_COST) {
		if (s->llm.n && cost_review_opts(s->cfg, o->list, o->budget,
						 &s->opts, &s->ledger, err) < 0)
			return SESSION_ERR_ENV;
		return 0;
	}
	path = state_default_path();
	ret = rv_ledger_open(&s->ledger, path, err);
	free(path);
	return ret < 0 ? SESSION_ERR_ENV : 0;
}

int session_open(struct session *s, const struct cmd_opts *o, unsigned need,
		 struct errmsg *err)
{
	const char *cfg_repo;
	int ret;

	if (need & (SESSION_HISTORY | SESSION_HISTORY_NEEDED | SESSION_VOTERS |
		    SESSION_COST))
		need |= SESSION_CONFIG;
	ret = open_repo(s, o->repo_path, need, err);
	if (ret < 0)
		return ret;
	if (need & (SESSION_CONFIG | SESSION_CONFIG_GLOBAL)) {
		cfg_repo = need & SESSION_CONFIG_GLOBAL ? NULL : s->repo_path;
		if (qconfig_load(&s->cfg, cfg_repo, err) < 0)
			return SESSION_ERR_CONFIG;
		/* A typo in --list would silently drop the list's caps. */
		if (o->list && !qconfig_has_section(s->cfg, "list", o->list))
			return errmsg_set(err, SESSION_ERR_CONFIG,
					  "--list %s: no [list \"%s\"] section "
					  "in the config (%s)",
					  o->list, o->list,
					  *qconfig_sources(s->cfg)
						  ? qconfig_sources(s->cfg)
						  : "no config file");
	}
	s->opts.apply.base = o->base;
	s->opts.no_cache = o->no_cache;
	s->opts.dry_run = o->dry_run;
	if (need & SESSION_VOTERS && (ret = load_voters(s, o, err)) < 0)
		return ret;
	if (need & (SESSION_COST | SESSION_LEDGER) &&
	    (ret = open_ledger(s, o, need, err)) < 0)
		return ret;
	if (need & (SESSION_HISTORY | SESSION_HISTORY_NEEDED) &&
	    (ret = open_history(s, need, err)) < 0)
		return ret;
	return 0;
}

void session_close(struct session *s)
{
	rv_llm_state_free(s->opts.state);
	rv_ledger_free(s->ledger);
	rv_prompts_free(s->prompts);
	free(s->prompts_dir);
	llm_voters_release(&s->llm);
	rv_history_free(s->history);
	free(s->workdir);
	rv_repo_free(s->repo);
	qconfig_free(s->cfg);
	memset(s, 0, sizeof(*s));
}

int session_start(struct session *s, const struct cmd_opts *o, unsigned need)
{
	struct errmsg err = {""};
	int rc = session_open(s, o, need, &err);

	if (!rc)
		return 0;
	error("%s", err.msg);
	return rc == SESSION_ERR_CONFIG ? EXIT_USAGE : EXIT_ENV;
}
