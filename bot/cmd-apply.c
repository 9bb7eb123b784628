// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-apply.c - `quorum apply`: apply a series in memory and show, per
 * patch, the commit and tree ids, or exactly why it does not apply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "session.h"

static int cmd_apply(int argc, char **argv);

const struct cmd cmd_apply_def = {
	"apply",
	cmd_apply,
	"quorum apply [-C REPO] [--base REV] [--json] [--worktree DIR "
	"[--keep]] [--store-refs] [--no-3way] FILE|-",
	"apply a series in memory; per-patch commit and tree ids, or the "
	"failing hunk",
	"Reads the series in FILE (an mbox, a single patch mail, a maildir, or "
	"-\n"
	"for standard input) and applies it in memory, one commit per patch,\n"
	"without touching the working tree, the index, HEAD or any branch.\n"
	"\n"
	"The base is, in order: --base REV; the series' base-commit: when the\n"
	"repository has it; HEAD. When the series does not apply on "
	"base-commit,\n"
	"HEAD is tried too; the output says which base was used and why.\n"
	"A hunk that does not apply falls back to a 3-way merge like `git am "
	"-3`\n"
	"when the blobs named on its index line are in the repository.\n"
	"A series that needs another series of the same input (as `quorum\n"
	"review` decides: prerequisite-patch-id:, -message-id:, -change-id:,\n"
	"else the series just before it) is applied on top of it, and the\n"
	"note says so; the prerequisite is not listed on its own.\n"
	"An input of more than 10000 series is refused: split it. A series\n"
	"whose patches write more than 64 MB of trees in all (each patch\n"
	"writes every directory above the files it changes, whole) stops at\n"
	"the patch that passes it; a real series writes a few MB.\n"
	"\n"
	"Options:\n"
	"  -C REPO          the repository (default: the current directory)\n"
	"  --base REV       apply on REV and nothing else\n"
	"  --json           print JSON: base, source, note, and per patch "
	"index,\n"
	"                   title, applied, three_way, commit, tree, error\n"
	"  --worktree DIR   write the final tree to DIR (must not exist); it "
	"is\n"
	"                   removed again at the end unless --keep is given;\n"
	"                   a symlink that resolves outside DIR (an absolute\n"
	"                   target, ../.. out of the top, or through another\n"
	"                   link) is refused and nothing is left\n"
	"  --keep           keep the --worktree directory\n"
	"  --store-refs     keep the commits under refs/quorum/<id>/vN\n"
	"  --no-3way        do not fall back to a 3-way merge\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 every patch applied; 2 a patch does not apply, or the\n"
	"input is not a usable patch (a corrupt diff, a path outside the "
	"repo,\n"
	"a --worktree symlink out of DIR);\n"
	"3 repository errors (not a repository, a bad --base).",
};

static const char *source_name(enum rv_base_source s)
{
	switch (s) {
	case RV_BASE_OPTION:
		return "--base";
	case RV_BASE_SERIES:
		return "base-commit";
	case RV_BASE_BRANCH:
		return "branch";
	case RV_BASE_HEAD:
		return "HEAD";
	case RV_BASE_PARENT:
		return "the parent commit";
	}
	return "unknown";
}

static const char *title_of(const struct mp_patch *p)
{
	if (p->subject.title && *p->subject.title)
		return p->subject.title;
	return p->subject_raw ? p->subject_raw : "";
}

/* Terminal text from mail on one line: controls shown, not done. */
static void put_clean(const char *s)
{
	fput_clean(s ? s : "", stdout);
}

static int total_of(const struct mp_series *s)
{
	return s->total > 0 ? s->total : (int)s->npatches;
}

static void print_text(const struct mp_series *s,
		       const struct rv_apply_result *r, const char *worktree)
{
	size_t k, slot = 0;

	printf("base: %s (%s)\n", r->base_id, source_name(r->base_source));
	if (r->base_note && *r->base_note) {
		fputs("note: ", stdout);
		put_clean(r->base_note);
		putchar('\n');
	}
	for (k = 0; k < s->npatches && slot < r->npatches; k++) {
		const struct rv_patch_result *pr;

		if (!s->patches[k])
			continue;
		pr = &r->patches[slot++];
		if (pr->applied) {
			printf("patch %d/%d applied%s: commit %s tree %s\n",
			       pr->index, total_of(s),
			       pr->three_way ? " (3-way)" : "", pr->commit_id,
			       pr->tree_id);
		} else if (pr->error) {
			put_clean(pr->error);
			putchar('\n');
		} else {
			printf("patch %d/%d \"", pr->index, total_of(s));
			put_clean(title_of(s->patches[k]));
			printf("\" not tried: an earlier patch did not "
			       "apply\n");
		}
	}
	if (worktree) {
		fputs("worktree: ", stdout);
		put_clean(worktree);
		putchar('\n');
	}
}

static cJSON *to_json(const struct mp_series *s,
		      const struct rv_apply_result *r, const char *worktree,
		      bool kept)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	size_t k, slot = 0;

	cJSON_AddStringToObject(o, "base", r->base_id);
	cJSON_AddStringToObject(o, "source", source_name(r->base_source));
	cJSON_AddStringToObject(o, "note", r->base_note ? r->base_note : "");
	cJSON_AddBoolToObject(o, "applied", r->failed < 0);
	arr = cJSON_AddArrayToObject(o, "patches");
	for (k = 0; k < s->npatches && slot < r->npatches; k++) {
		const struct rv_patch_result *pr;
		cJSON *p;

		if (!s->patches[k])
			continue;
		pr = &r->patches[slot++];
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "index", pr->index);
		cJSON_AddNumberToObject(p, "total", total_of(s));
		cJSON_AddStringToObject(p, "title", title_of(s->patches[k]));
		cJSON_AddBoolToObject(p, "applied", pr->applied);
		cJSON_AddBoolToObject(p, "three_way", pr->three_way);
		if (pr->applied) {
			cJSON_AddStringToObject(p, "commit", pr->commit_id);
			cJSON_AddStringToObject(p, "tree", pr->tree_id);
		} else {
			cJSON_AddNullToObject(p, "commit");
			cJSON_AddNullToObject(p, "tree");
		}
		if (pr->error)
			cJSON_AddStringToObject(p, "error", pr->error);
		else
			cJSON_AddNullToObject(p, "error");
		cJSON_AddItemToArray(arr, p);
	}
	if (worktree) {
		cJSON_AddStringToObject(o, "worktree", worktree);
		cJSON_AddBoolToObject(o, "worktree_kept", kept);
	}
	return o;
}

static int exit_for(int rv)
{
	switch (rv) {
	case 0:
		return EXIT_CLEAN;
	case RV_ERR_APPLY:
	case RV_ERR_INPUT:
	case RV_ERR_UNSAFE:
		return EXIT_USAGE;
	default:
		return EXIT_ENV;
	}
}

struct apply_args {
	const char *path;     /* the mail */
	const char *worktree; /* --worktree DIR, or NULL */
	bool keep;	      /* --keep */
};

/* The options of apply; 0, or -1 to return *exit_code. */
static int apply_options(int argc, char **argv, struct cmd_opts *co,
			 struct rv_apply_opts *opts, struct apply_args *a,
			 int *exit_code)
{
	static const struct option longopts[] = {
		{"worktree", required_argument, NULL, 'w'},
		{"keep", no_argument, NULL, 'k'},
		{"store-refs", no_argument, NULL, 's'},
		{"no-3way", no_argument, NULL, '3'},
		CMD_OPT_BASE,
		CMD_OPT_JSON,
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	int c;

	cmd_opt_start();
	while ((c = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1) {
		if (c == 'w')
			a->worktree = optarg;
		else if (c == 'k')
			a->keep = true;
		else if (c == 's')
			opts->store_refs = true;
		else if (c == '3')
			opts->three_way = false;
		else if (cmd_opt(&cmd_apply_def, c, argv, co, exit_code) < 0)
			return -1;
	}
	opts->base = co->base;
	if (argc - optind != 1) {
		*exit_code = usage_error(
			&cmd_apply_def,
			"apply takes one FILE (or - for standard input)");
		return -1;
	}
	if (a->keep && !a->worktree) {
		*exit_code = usage_error(&cmd_apply_def,
					 "--keep needs --worktree DIR");
		return -1;
	}
	a->path = argv[optind];
	if (!strcmp(a->path, "-") && isatty(STDIN_FILENO)) {
		*exit_code =
			usage_error(&cmd_apply_def,
				    "standard input is a terminal; give FILE");
		return -1;
	}
	if (a->worktree && access(a->worktree, F_OK) == 0) {
		error("--worktree %s already exists; give a path that does not",
		      a->worktree);
		*exit_code = EXIT_USAGE;
		return -1;
	}
	return 0;
}

/* The mail of path as series; 0 or an exit status. */
static int apply_read_input(const char *path, struct mp_set **set)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	struct errmsg err = {""};

	if (mp_read_path(set, path, NULL, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	if ((*set)->nseries > RV_MAX_SERIES_PER_INPUT) {
		error("%s holds %zu series, more than the %d one run applies; "
		      "split it (a thread or a series a file) and apply the "
		      "parts",
		      name, (*set)->nseries, RV_MAX_SERIES_PER_INPUT);
		return EXIT_USAGE;
	}
	if ((*set)->nseries)
		return 0;
	if ((*set)->nerrors)
		error("%s: %s",
		      (*set)->errors[0].where ? (*set)->errors[0].where : name,
		      (*set)->errors[0].message);
	else
		error("%s holds no patch (no diff found); nothing to apply",
		      name);
	return EXIT_USAGE;
}

/*
 * Apply series s, show the result (text, or into jout), and check the
 * tree out into a->worktree when wanted (first series only). Returns
 * an exit status.
 */
static int apply_one(struct rv_repo *repo, const struct mp_series *s,
		     const struct rv_apply_opts *opts,
		     const struct apply_args *a, bool first, cJSON *jout)
{
	struct rv_apply_result *r = NULL;
	struct errmsg err = {""};
	const char *wt = NULL;
	int rv;

	if (!s->complete && s->nmissing)
		warning("the series lacks %zu of its %d patches; applying the "
			"rest",
			s->nmissing, s->total);
	rv = rv_apply_series(&r, repo, s, opts, &err);
	if (rv == 0 && a->worktree && first) {
		/* A tree unsafe to write (a link out) is the mail's: exit 2 */
		rv = rv_worktree_checkout(repo,
					  r->patches[r->npatches - 1].tree_id,
					  a->worktree, &err);
		if (!rv)
			wt = a->worktree;
	}
	if (r && jout)
		cJSON_AddItemToArray(jout, to_json(s, r, wt, a->keep));
	else if (r)
		print_text(s, r, wt);
	if (rv < 0)
		error("%s", err.msg);
	if (wt && !a->keep && rv_worktree_remove(wt) < 0)
		warning("could not remove the worktree %s", wt);
	rv_apply_result_free(r);
	return exit_for(rv);
}

static void print_json(cJSON *jout)
{
	char *text = cJSON_Print(cJSON_GetArraySize(jout) == 1
					 ? cJSON_GetArrayItem(jout, 0)
					 : jout);

	if (text) {
		fput_json(text, stdout);
		putchar('\n');
	}
	free(text);
}

static int cmd_apply(int argc, char **argv)
{
	struct rv_apply_opts opts = RV_APPLY_OPTS_INIT;
	struct cmd_opts co = CMD_OPTS_INIT;
	struct session s = SESSION_INIT;
	struct rv_prereq_plan plan = {0};
	struct apply_args a = {.path = NULL};
	struct mp_set *set = NULL;
	cJSON *jout = NULL;
	int ret, napplied = 0;
	size_t i;

	if (apply_options(argc, argv, &co, &opts, &a, &ret) < 0)
		return ret;
	ret = session_start(&s, &co, SESSION_REPO);
	if (ret)
		goto out;
	ret = apply_read_input(a.path, &set);
	if (ret)
		goto out;
	if (co.json)
		jout = cJSON_CreateArray();
	/* A series another one of the input needs is applied under it. */
	rv_prereq_plan_input(&plan, s.repo, set, &opts, NULL, false);
	for (i = 0; i < set->nseries; i++) {
		int r;

		if (set->series[i]->superseded || plan.used[i])
			continue;
		opts.prereqs = plan.of[i];
		opts.nprereqs = plan.nof[i];
		r = apply_one(s.repo, set->series[i], &opts, &a, !napplied++,
			      jout);
		if (r > ret)
			ret = r;
	}
	if (jout)
		print_json(jout);
out:
	rv_prereq_plan_release(&plan);
	cJSON_Delete(jout);
	mp_set_free(set);
	session_close(&s);
	return ret;
}
