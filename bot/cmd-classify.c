// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-classify.c - `quorum classify`: the AUTOSEL question (should this
 * commit go to stable? is it a CVE fix?) on the review's ensemble, and
 * `quorum eval --question`, its replay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "reply.h"
#include "review/classify.h"
#include "session.h"

static int cmd_classify(int argc, char **argv);

const struct cmd cmd_classify_def = {
	"classify",
	cmd_classify,
	"quorum classify --stable|--cve|--question NAME [-C REPO] "
	"[--format text|json|email] [--budget USD] [--no-cache] "
	"[--output FILE] [--range A..B | REV | FILE | -]",
	"the AUTOSEL question: should a commit go to stable? is it a CVE fix?",
	"Answers a yes/no question about commits, the way the kernel's "
	"AUTOSEL\n"
	"does: should this commit be backported to stable (--stable)? does it\n"
	"fix a vulnerability (--cve)? or any question of the config\n"
	"(--question NAME). Input: a revision (REV), the commits of a range\n"
	"(--range A..B), or mail (FILE or - : a series, git format-patch or\n"
	"git show output). With mail, the mail is all there is: the commit is\n"
	"never looked up in the repository (the commits its Fixes: lines name\n"
	"are).\n"
	"\n"
	"The voters:\n"
	"  model    a logistic regression fitted on the repository's own "
	"labelled\n"
	"           history: Fixes:, whether the bug it fixes shipped in a\n"
	"           release tag (a bug that never reached a release needs no\n"
	"           backport), the subject's words, the directories and "
	"files\n"
	"           and how often their earlier commits were labelled yes,\n"
	"           the size of the change\n"
	"  similar  the past commits most like it (files, subject words) and\n"
	"           their labels\n"
	"  LLMs     each [voter \"NAME\"] with an LLM provider answers YES or "
	"NO\n"
	"           with an explanation, given the commit, the functions it\n"
	"           touches and the similar commits with their labels; cost\n"
	"           caps and the answer cache apply as for review\n"
	"The answer is the weighted majority of the voters that answered (a\n"
	"tie goes to the mean score). With no key, the offline voters vote "
	"alone.\n"
	"\n"
	"Questions: how past commits were labelled yes. Built in:\n"
	"  stable   a `Cc: stable@vger.kernel.org` or `Cc: stable@dpdk.org`\n"
	"           line, or a backport with \"[ Upstream commit ID ]\" (or\n"
	"           \"commit ID upstream.\") on a branch named stable*\n"
	"  cve      CVE-YYYY-NNNN in the message\n"
	"A [classify \"NAME\"] section adds a question or changes one (the\n"
	"first label key replaces the built-in labels):\n"
	"  label-regex = RE              (POSIX ERE, \\d \\s \\w allowed; "
	"may repeat)\n"
	"  label-trailer = Key: value    (a line of the message)\n"
	"  label-ids-file = PATH         (one commit id a line)\n"
	"  label-upstream-branches = GLOB (e.g. stable-v*)\n"
	"  release-tags = GLOB           (default v[0-9]*; -rc tags skipped)\n"
	"  prompt = FILE                 (default classify-NAME.md in the "
	"prompts\n"
	"                                 directory)\n"
	"  target = WORD                 (the subject tag of the mail, "
	"default NAME)\n"
	"  ripe-days = N                 (an unlabelled commit counts as no\n"
	"                                 after N days; default 120)\n"
	"  to = ADDRESS                  (To: of --format email)\n"
	"The model and the commits' facts are cached in <git dir>/quorum/\n"
	"classify.db (keyed by question and HEAD).\n"
	"\n"
	"Options:\n"
	"  --stable, --cve, --question NAME   the question\n"
	"  -C REPO        the repository (default: the current directory)\n"
	"  --range A..B   every non-merge commit in A..B\n"
	"  --format FMT   text (default: one line per commit, then details),\n"
	"                 json (contrib/classify-json.md) or email (one\n"
	"                 AUTOSEL-style mail per commit, in an mbox)\n"
	"  --budget USD   spend at most USD on LLM requests; 0: offline only\n"
	"  --no-cache     ask the models even about commits they have seen\n"
	"  --output FILE  write there instead of standard output\n"
	"  -h, --help     this text\n"
	"\n"
	"`quorum eval --question NAME --since DATE --until DATE` replays a\n"
	"window (see `quorum help eval`).\n"
	"\n"
	"The output is written whole or not at all: when nothing could be\n"
	"classified (the one REV or FILE cannot be read, a bad question "
	"config)\n"
	"nothing is written to standard output or --output, only one line to\n"
	"standard error; an input of several that cannot be read is in the\n"
	"output with its error.\n"
	"\n"
	"Exit status: 0 every answer is no, 1 some answer is yes, 2 usage or\n"
	"input error (including a bad question config, and an input that "
	"could\n"
	"not be read), 3 environment error.",
};

struct cl_args {
	const char *question;
	const char *range;
	const char *arg;
	bool eval;
	int64_t since, until;
	bool have_since, have_until;
};

enum {
	OPT_STABLE = 1000,
	OPT_CVE,
	OPT_QUESTION,
	OPT_RANGE,
	OPT_SINCE,
	OPT_UNTIL
};

static int set_question(const struct cmd *c, struct cl_args *a,
			const char *name, int *exit_code)
{
	if (a->question && strcmp(a->question, name)) {
		*exit_code = usage_error(c,
					 "give one question, not '%s' and "
					 "'%s'",
					 a->question, name);
		return -1;
	}
	a->question = name;
	return 0;
}

static int classify_options(const struct cmd *c, int argc, char **argv,
			    struct cmd_opts *co, struct cl_args *a,
			    int *exit_code)
{
	static const struct option longopts[] = {
		{"stable", no_argument, NULL, OPT_STABLE},
		{"cve", no_argument, NULL, OPT_CVE},
		{"question", required_argument, NULL, OPT_QUESTION},
		{"range", required_argument, NULL, OPT_RANGE},
		{"since", required_argument, NULL, OPT_SINCE},
		{"until", required_argument, NULL, OPT_UNTIL},
		CMD_OPT_BUDGET,
		CMD_OPT_FORMAT,
		CMD_OPT_OUTPUT,
		CMD_OPT_NO_CACHE,
		CMD_OPT_JSON,
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	int o;

	co->formats = (1u << FMT_TEXT) | (1u << FMT_JSON) | (1u << FMT_EMAIL);
	cmd_opt_start();
	while ((o = getopt_long(argc, argv, "+hC:", longopts, NULL)) != -1) {
		switch (o) {
		case OPT_STABLE:
			if (set_question(c, a, "stable", exit_code) < 0)
				return -1;
			break;
		case OPT_CVE:
			if (set_question(c, a, "cve", exit_code) < 0)
				return -1;
			break;
		case OPT_QUESTION:
			if (set_question(c, a, optarg, exit_code) < 0)
				return -1;
			break;
		case OPT_RANGE:
			if (a->eval)
				goto unknown;
			a->range = optarg;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (!a->eval)
				goto unknown;
			*exit_code = cmd_opt_date(
				c, o == OPT_SINCE ? "--since" : "--until",
				optarg, o == OPT_UNTIL,
				o == OPT_SINCE ? &a->since : &a->until);
			if (*exit_code)
				return -1;
			if (o == OPT_SINCE)
				a->have_since = true;
			else
				a->have_until = true;
			break;
		case OPT_JSON:
			if (!a->eval)
				goto unknown;
			co->json = true;
			break;
		default:
			if (cmd_opt(c, o, argv, co, exit_code) < 0)
				return -1;
		}
	}
	if (!a->question) {
		*exit_code = usage_error(c, "which question? give --stable, "
					    "--cve or --question NAME");
		return -1;
	}
	if (a->eval) {
		if (optind < argc || !a->have_since || !a->have_until) {
			*exit_code = usage_error(
				c, "eval --question wants --since and --until "
				   "and nothing else");
			return -1;
		}
		return 0;
	}
	if (argc - optind > 1 || (a->range && optind < argc)) {
		*exit_code = usage_error(c, "classify takes --range A..B, or "
					    "one REV, FILE or -");
		return -1;
	}
	a->arg = optind < argc ? argv[optind] : NULL;
	if (!a->range && !a->arg) {
		if (isatty(STDIN_FILENO)) {
			*exit_code = usage_error(
				c, "no REV or FILE given and standard input "
				   "is a terminal");
			return -1;
		}
		a->arg = "-";
	}
	return 0;
unknown:
	*exit_code = usage_error(c, "unknown or incomplete option '%s'",
				 argv[optind - 1]);
	return -1;
}

/* ---- the question ---- */

struct qset {
	struct rv_question *q;
	struct errmsg *err;
	char *to;
	bool any;
};

static int question_key(void *arg, const char *key, const char *value)
{
	struct qset *qs = arg;

	qs->any = true;
	if (!strcmp(key, "to")) {
		/* value lives as long as the config's iterator only */
		free(qs->to);
		qs->to = xstrdup_or_null(value);
		return 0;
	}
	return rv_question_set(qs->q, key, value, qs->err) < 0 ? -1 : 0;
}

/* The question from its name and the config; 0 or an exit status. */
static int load_question(struct qconfig *cfg, const char *name,
			 struct rv_question *q, char **to)
{
	struct errmsg err = {""};
	struct qset qs = {q, &err, NULL, false};
	struct sb prefix = SB_INIT;
	int ret;

	if (rv_question_init(q, name, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	sb_addf(&prefix, "classify.%s.", name);
	ret = qconfig_foreach(cfg, prefix.buf, question_key, &qs);
	sb_release(&prefix);
	if (ret) {
		error("%s", err.msg);
		goto fail;
	}
	if (!qs.any && strcmp(name, "stable") && strcmp(name, "cve")) {
		error("no question '%s': add a [classify \"%s\"] section to "
		      "the config (see `quorum help classify`)",
		      name, name);
		goto fail;
	}
	if (rv_question_check(q, &err) < 0) {
		error("%s", err.msg);
		goto fail;
	}
	*to = qs.to;
	return 0;
fail:
	free(qs.to);
	return EXIT_USAGE;
}

/* ---- output ---- */

static const char *vote_word(const struct rv_cl_vote *v)
{
	return !v->answered ? "abstained" : v->yes ? "yes" : "no";
}

static void tally_line(const struct rv_cl_result *r, struct sb *out)
{
	size_t i, yes = 0, answered = 0;

	for (i = 0; i < r->nvotes; i++) {
		answered += r->votes[i].answered;
		yes += r->votes[i].answered && r->votes[i].yes;
	}
	sb_addf(out, "%zu of %zu voters said yes (", yes, answered);
	for (i = 0; i < r->nvotes; i++) {
		sb_addf(out, "%s%s %s", i ? ", " : "", r->votes[i].voter,
			vote_word(&r->votes[i]));
		if (r->votes[i].answered && !r->votes[i].llm)
			sb_addf(out, " %.2f", r->votes[i].score);
	}
	sb_adds(out, ")");
}

static void print_text(FILE *f, const struct rv_cl_result *res, size_t n)
{
	struct sb buf = SB_INIT, line = SB_INIT;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct rv_cl_result *r = &res[i];

		if (r->error) {
			if (n > 1)
				fprintf(f, "-    ----  %-12.12s  %s\n",
					r->commit[0] ? r->commit : "?",
					text_clean(&buf, r->error));
			continue;
		}
		fprintf(f, "%-3s  %.2f  %-12.12s  ", r->yes ? "yes" : "no",
			r->score, r->commit[0] ? r->commit : "(mail)");
		fputs(text_clean(&buf, r->subject ? r->subject : ""), f);
		if (r->nreasons)
			fprintf(f, " -- %s", text_clean(&buf, r->reasons[0]));
		fputc('\n', f);
	}
	for (i = 0; i < n; i++) {
		const struct rv_cl_result *r = &res[i];

		if (r->error)
			continue;
		fprintf(f, "\n%s ", r->commit[0] ? "commit" : "mail");
		fput_clean(r->commit[0] ? r->commit
					: (r->message_id ? r->message_id : "?"),
			   f);
		fprintf(f, ": %s\n",
			text_clean(&buf, r->subject ? r->subject : ""));
		sb_reset(&line);
		tally_line(r, &line);
		fprintf(f, "  answer: %s (score %.2f); %s\n",
			r->yes ? "YES" : "NO", r->score, line.buf);
		if (r->known)
			fprintf(f, "  already labelled yes in this tree\n");
		for (j = 0; j < r->nreasons; j++)
			fprintf(f, "  - %s\n", text_clean(&buf, r->reasons[j]));
		for (j = 0; j < r->nvotes; j++)
			if (r->votes[j].why && *r->votes[j].why &&
			    (!r->votes[j].llm || !r->votes[j].answered))
				fprintf(f, "  %s: %s\n", r->votes[j].voter,
					text_clean(&buf, r->votes[j].why));
		if (r->nsimilar)
			fprintf(f, "  similar past commits:\n");
		for (j = 0; j < r->nsimilar; j++)
			fprintf(f, "    %.12s [%s] %.2f %s\n",
				r->similar[j].commit, r->similar[j].label,
				r->similar[j].score,
				text_clean(&buf, r->similar[j].subject));
		for (j = 0; j < r->nvotes; j++) {
			struct sb w = SB_INIT;

			if (!r->votes[j].llm || !r->votes[j].answered)
				continue;
			fprintf(f, "  %s says %s:\n", r->votes[j].voter,
				r->votes[j].yes ? "YES" : "NO");
			/* A model's text: DEL, CSI, bidi shown, not done. */
			sb_reset(&buf);
			sb_add_visible(&buf, r->votes[j].why,
				       SB_VIS_NEWLINE | SB_VIS_TAB);
			rv_wrap(&w, sb_str(&buf), "    ", 76, true);
			fputs(sb_str(&w), f);
			if (w.len && w.buf[w.len - 1] != '\n')
				fputc('\n', f);
			sb_release(&w);
		}
	}
	sb_release(&buf);
	sb_release(&line);
}

static char *print_json(const char *question, const struct rv_cl_result *res,
			size_t n)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	char *s;
	size_t i, j;

	cJSON_AddStringToObject(root, "schema", "quorum-classify/1");
	cJSON_AddStringToObject(root, "version", QUORUM_VERSION);
	cJSON_AddStringToObject(root, "question", question);
	arr = cJSON_AddArrayToObject(root, "results");
	for (i = 0; i < n; i++) {
		const struct rv_cl_result *r = &res[i];
		cJSON *o = cJSON_CreateObject(), *a;

		if (r->commit[0])
			cJSON_AddStringToObject(o, "commit", r->commit);
		else
			cJSON_AddNullToObject(o, "commit");
		if (r->message_id)
			cJSON_AddStringToObject(o, "message_id", r->message_id);
		else
			cJSON_AddNullToObject(o, "message_id");
		cJSON_AddStringToObject(o, "subject",
					r->subject ? r->subject : "");
		if (r->upstream)
			cJSON_AddStringToObject(o, "upstream", r->upstream);
		else
			cJSON_AddNullToObject(o, "upstream");
		cJSON_AddStringToObject(o, "answer",
					!r->error && r->yes ? "yes" : "no");
		cJSON_AddNumberToObject(o, "score",
					(double)(long)(r->score * 1000) / 1000);
		cJSON_AddBoolToObject(o, "known", r->known != NULL);
		a = cJSON_AddArrayToObject(o, "votes");
		for (j = 0; j < r->nvotes; j++) {
			const struct rv_cl_vote *v = &r->votes[j];
			cJSON *vo = cJSON_CreateObject();

			cJSON_AddStringToObject(vo, "voter", v->voter);
			cJSON_AddStringToObject(vo, "kind",
						v->llm ? "llm" : "offline");
			cJSON_AddStringToObject(vo, "vote", vote_word(v));
			cJSON_AddNumberToObject(
				vo, "score",
				(double)(long)(v->score * 1000) / 1000);
			cJSON_AddStringToObject(vo, "why",
						v->why ? v->why : "");
			cJSON_AddItemToArray(a, vo);
		}
		a = cJSON_AddArrayToObject(o, "reasons");
		for (j = 0; j < r->nreasons; j++)
			cJSON_AddItemToArray(a,
					     cJSON_CreateString(r->reasons[j]));
		a = cJSON_AddArrayToObject(o, "similar");
		for (j = 0; j < r->nsimilar; j++) {
			cJSON *so = cJSON_CreateObject();

			cJSON_AddStringToObject(so, "commit",
						r->similar[j].commit);
			cJSON_AddStringToObject(so, "subject",
						r->similar[j].subject);
			cJSON_AddStringToObject(so, "label",
						r->similar[j].label);
			cJSON_AddNumberToObject(
				so, "score",
				(double)(long)(r->similar[j].score * 1000) /
					1000);
			cJSON_AddItemToArray(a, so);
		}
		if (r->explanation)
			cJSON_AddStringToObject(o, "explanation",
						r->explanation);
		else
			cJSON_AddNullToObject(o, "explanation");
		if (r->error)
			cJSON_AddStringToObject(o, "error", r->error);
		else
			cJSON_AddNullToObject(o, "error");
		cJSON_AddItemToArray(arr, o);
	}
	s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

/* Body text for mail: each line of text, on a line of its own. */
static void mail_text(struct sb *out, const char *text)
{
	const char *p = text ? text : "";

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		sb_add(out, p, len);
		sb_addch(out, '\n');
		p = e ? e + 1 : p + len;
	}
}

/* At most max bytes of s on one line, its controls made visible. */
static void one_line(struct sb *out, const char *s, size_t max)
{
	if (s)
		sb_add_visible_mem(out, s, mp_utf8_cut(s, max), 0);
}

/* s for a Message-ID's local part or domain: [A-Za-z0-9.-], else '_'. */
static void msgid_part(struct sb *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s && s[i] && i < max; i++)
		sb_addch(out, (s[i] >= 'a' && s[i] <= 'z') ||
					      (s[i] >= 'A' && s[i] <= 'Z') ||
					      (s[i] >= '0' && s[i] <= '9') ||
					      s[i] == '.' || s[i] == '-'
				      ? s[i]
				      : '_');
}

/* The body of the AUTOSEL-style mail for r. */
static void email_body(struct sb *body, const struct rv_question *q,
		       const struct rv_cl_result *r, struct rv_repo *repo)
{
	struct sb tally = SB_INIT;
	size_t j;

	if (r->upstream) {
		sb_adds(body, "[ Upstream commit ");
		one_line(body, r->upstream, 100);
		sb_adds(body, " ]\n\n");
	}
	sb_addf(body, "**%s**\n\n", r->yes ? "YES" : "NO");
	sb_adds(body, "quorum's answer to \"");
	one_line(body, q->name, 100);
	sb_addf(body, "\" for this commit is %s (score %.2f).\n",
		r->yes ? "yes" : "no", r->score);
	tally_line(r, &tally);
	sb_adds(body, "Vote: ");
	one_line(body, tally.buf, 2000);
	sb_adds(body, ".\n\n");
	if (r->explanation) {
		sb_adds(body, "Explanation (from a language model):\n\n");
		mail_text(body, r->explanation);
		sb_addch(body, '\n');
	}
	if (r->nreasons) {
		sb_adds(body, "Reasons (from the tree's history):\n");
		for (j = 0; j < r->nreasons; j++) {
			sb_adds(body, "- ");
			one_line(body, r->reasons[j], 1000);
			sb_addch(body, '\n');
		}
		sb_addch(body, '\n');
	}
	if (r->nsimilar) {
		sb_adds(body, "Comparison with similar commits:\n");
		for (j = 0; j < r->nsimilar; j++) {
			sb_addf(body, "- %.12s (", r->similar[j].commit);
			one_line(body, q->target ? q->target : q->name, 100);
			sb_addf(body, ": %s, similarity %.2f) ",
				r->similar[j].label, r->similar[j].score);
			one_line(body, r->similar[j].subject, 200);
			sb_addch(body, '\n');
		}
		sb_addch(body, '\n');
	}
	sb_adds(body,
		"This mail was written by a program (quorum classify), not by "
		"a person.\nIt is automated and may be wrong: check the "
		"commit before acting on it.\n");
	if (repo && r->commit[0] && !r->message_id) {
		struct sb m = SB_INIT;
		char parent[RV_OID_HEXSZ + 1];
		const char *sep;

		if (!rv_commit_email(repo, r->commit, &m, parent, NULL) &&
		    (sep = strstr(sb_str(&m), "\n\n"))) {
			sb_addch(body, '\n');
			mail_text(body, sep + 2);
		}
		sb_release(&m);
	}
	sb_release(&tally);
}

/*
 * The AUTOSEL-style mail for r, appended to the mbox out: composed by
 * reply_compose_mail(), the path of the review replies, so no byte of
 * the mail classified can add a recipient or a header. 0 or -1 with err.
 */
static int print_email(struct sb *out, const struct rv_question *q,
		       const char *from, const char *domain, const char *to,
		       const struct rv_cl_result *r, struct rv_repo *repo,
		       struct errmsg *err)
{
	struct reply_opts o = REPLY_OPTS_INIT;
	struct reply_mail mail = {0};
	struct sb body = SB_INIT, subj = SB_INIT, id = SB_INIT, dom = SB_INIT,
		  def = SB_INIT, msg = SB_INIT, verdict = SB_INIT;
	const char *headers[3];
	time_t now = time(NULL);
	int ret;

	msgid_part(&dom, domain, 200);
	if (!dom.len || !strchr(dom.buf, '.'))
		sb_adds(&dom, dom.len ? ".invalid" : "quorum.invalid");
	sb_adds(&id, "classify-");
	msgid_part(&id, q->name, 40);
	sb_addf(&id, "-%.12s-%ld@%s", r->commit[0] ? r->commit : "mail",
		(long)now, dom.buf);
	sb_addf(&def, "quorum <quorum@%s>", dom.buf);
	o.from = from ? from : def.buf;
	o.msgid = id.buf;
	o.now = (int64_t)now;
	sb_adds(&subj, "[PATCH AUTOSEL ");
	sb_adds(&subj, q->target ? q->target : q->name);
	sb_adds(&subj, "] ");
	sb_adds(&subj, r->subject ? r->subject : "");
	sb_addf(&verdict, "%s %s %.2f", q->name, r->yes ? "yes" : "no",
		r->score);
	headers[0] = "X-Quorum-Classify";
	headers[1] = verdict.buf;
	headers[2] = NULL;
	email_body(&body, q, r, repo);
	mail.to = to;
	mail.cc_name = r->author_name;
	mail.cc_addr = r->author_email;
	mail.subject = subj.buf;
	mail.in_reply_to = r->message_id;
	mail.headers = headers;
	mail.body = body.buf;
	if (r->message_id && !mp_msgid_valid(r->message_id))
		warning("the mail <%.200s> has a Message-ID no header can "
			"name; its AUTOSEL mail is not threaded under it",
			r->message_id);
	ret = reply_compose_mail(&msg, &mail, &o, err);
	if (!ret)
		reply_mbox_add(out, msg.buf);
	sb_release(&body);
	sb_release(&subj);
	sb_release(&id);
	sb_release(&dom);
	sb_release(&def);
	sb_release(&msg);
	sb_release(&verdict);
	return ret;
}

/* ---- input ---- */

struct inputs {
	struct rv_cl_input *v;
	size_t n, alloc;
	struct rv_range range;
	struct mp_set *set;
};

static void inputs_release(struct inputs *in)
{
	free(in->v);
	rv_range_release(&in->range);
	mp_set_free(in->set);
}

static void add_input(struct inputs *in, const char *rev,
		      const struct mp_patch *p)
{
	ALLOC_GROW(in->v, in->n + 1, in->alloc);
	in->v[in->n].rev = rev;
	in->v[in->n].patch = p;
	in->n++;
}

static int read_inputs(struct session *s, const struct cl_args *a,
		       struct inputs *in)
{
	struct errmsg err = {""};
	struct stat st;
	size_t i, k;

	if (a->range) {
		int r = rv_range_commits(&in->range, s->repo, a->range, &err);

		if (r < 0) {
			error("%s", err.msg);
			return r == RV_ERR_REPO ? EXIT_ENV : EXIT_USAGE;
		}
		for (i = 0; i < in->range.n; i++)
			add_input(in, in->range.ids[i], NULL);
		if (!in->n) {
			error("%s holds no commit to classify", a->range);
			return EXIT_USAGE;
		}
		return 0;
	}
	if (strcmp(a->arg, "-") && stat(a->arg, &st) < 0) {
		add_input(in, a->arg, NULL); /* a revision */
		return 0;
	}
	if (mp_read_path(&in->set, a->arg, NULL, &err) < 0) {
		error("%s", err.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < in->set->nseries; i++) {
		const struct mp_series *ser = in->set->series[i];

		if (ser->superseded)
			continue;
		for (k = 0; k < ser->npatches; k++)
			if (ser->patches[k])
				add_input(in, NULL, ser->patches[k]);
	}
	if (!in->n) {
		const char *name =
			strcmp(a->arg, "-") ? a->arg : "standard input";

		if (in->set->nerrors)
			error("%s: %s", name, in->set->errors[0].message);
		else
			error("%s holds no patch to classify (no diff "
			      "found)",
			      name);
		return EXIT_USAGE;
	}
	return 0;
}

static void progress_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "\r\033[K");
	fput_clean(line, stderr);
}

static int open_classifier(struct session *s, const struct rv_question *q,
			   struct rv_classify_opts *o,
			   struct rv_classifier **cl)
{
	struct errmsg err = {""};
	int r;

	if (isatty(STDERR_FILENO))
		o->progress = progress_line;
	r = rv_classifier_open(cl, s->repo_path ? s->repo_path : ".", q, o,
			       &err);
	if (o->progress)
		fputs("\r\033[K", stderr);
	if (r < 0) {
		error("%s", err.msg);
		return r == RV_ERR_INPUT ? EXIT_USAGE : EXIT_ENV;
	}
	if (!rv_classifier_labelled(*cl))
		warning("no commit of this tree carries the label of question "
			"'%s'; the model and the similar commits abstain",
			q->name);
	return 0;
}

static int write_out(const char *path, const char *text, struct errmsg *err)
{
	FILE *f = stdout;

	if (path && strcmp(path, "-")) {
		f = fopen(path, "w");
		if (!f)
			return errmsg_set(err, -1, "cannot write %s", path);
	}
	fputs(text, f);
	if (f != stdout && fclose(f))
		return errmsg_set(err, -1, "cannot write %s", path);
	return 0;
}

static int cmd_classify(int argc, char **argv)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct cl_args a = {0};
	struct session s = SESSION_INIT;
	struct rv_question q = {0};
	struct rv_classify_opts o = RV_CLASSIFY_OPTS_INIT;
	struct rv_classifier *cl = NULL;
	struct inputs in = {0};
	struct rv_cl_result *res = NULL;
	struct errmsg err = {""};
	char *to = NULL;
	struct sb out = SB_INIT;
	bool any_yes = false, any_error = false;
	size_t i;
	int ret;

	if (classify_options(&cmd_classify_def, argc, argv, &co, &a, &ret) < 0)
		return ret;
	ret = session_start(&s, &co,
			    SESSION_REPO | SESSION_VOTERS | SESSION_COST);
	if (ret)
		goto out;
	ret = load_question(s.cfg, a.question, &q, &to);
	if (ret)
		goto out;
	ret = read_inputs(&s, &a, &in);
	if (ret)
		goto out;
	o.llm = s.opts.llm;
	o.nllm = s.opts.nllm;
	o.prompts_dir = s.prompts_dir;
	o.deadline = s.opts.deadline;
	o.retries = s.opts.retries;
	o.backoff = s.opts.backoff;
	o.ledger = s.opts.ledger;
	o.budget_review = s.opts.budget_review;
	o.budget_day = s.opts.budget_day;
	o.budget_run = s.opts.budget_run;
	o.budget_month = s.opts.budget_month;
	o.list = s.opts.list;
	o.no_cache = co.no_cache;
	ret = open_classifier(&s, &q, &o, &cl);
	if (ret)
		goto out;
	res = xcalloc(in.n + 1, sizeof(*res));
	rv_classify(cl, in.v, in.n, &o, res, &err);
	for (i = 0; i < in.n; i++) {
		any_yes = any_yes || (!res[i].error && res[i].yes);
		any_error = any_error || res[i].error != NULL;
	}
	if (in.n == 1 && res[0].error) {
		/* Nothing was classified: no document, in any format. */
		error("%s", res[0].error);
		ret = EXIT_USAGE;
		goto out;
	}
	if (co.format == FMT_JSON) {
		char *j = print_json(q.name, res, in.n);

		sb_add_json_visible(&out, j ? j : "");
		sb_addch(&out, '\n');
		free(j);
	} else if (co.format == FMT_EMAIL) {
		for (i = 0; i < in.n; i++) {
			if (res[i].error)
				continue;
			if (print_email(&out, &q,
					qconfig_get(s.cfg, "watch.from"),
					qconfig_get(s.cfg, "watch.domain"), to,
					&res[i], s.repo, &err) < 0) {
				error("classify --format email: %s", err.msg);
				ret = EXIT_USAGE;
				goto out;
			}
		}
	} else {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (f) {
			print_text(f, res, in.n);
			fclose(f);
			/* Each field is clean; this catches what one missed. */
			sb_add_visible_mem(&out, buf, len,
					   SB_VIS_NEWLINE | SB_VIS_TAB);
			free(buf);
		}
	}
	if (write_out(co.output, sb_str(&out), &err) < 0) {
		error("%s", err.msg);
		ret = EXIT_ENV;
		goto out;
	}
	/* An input of several that could not be read: in the document. */
	ret = any_error ? EXIT_USAGE : any_yes ? EXIT_FINDINGS : EXIT_CLEAN;
out:
	for (i = 0; res && i < in.n; i++)
		rv_cl_result_release(&res[i]);
	free(res);
	free(to);
	sb_release(&out);
	rv_classifier_free(cl);
	inputs_release(&in);
	rv_question_release(&q);
	session_close(&s);
	return ret;
}

/* ---- eval --question ---- */

/* "KEY": [lo, hi] (or null) of interval k of ci, and ", ". */
static void json_ci(const char *key, const struct rv_auc_ci *ci, int k)
{
	if (ci->ok)
		printf("\"%s\": [%.4f, %.4f], ", key, ci->lo[k], ci->hi[k]);
	else
		printf("\"%s\": null, ", key);
}

/* A margin of AUCs with its 95% interval, when both are defined. */
static void print_margin(const char *what, double a, double b,
			 const struct rv_auc_ci *ci)
{
	if (a < 0 || b < 0)
		return;
	printf("margin: %s %+.3f", what, a - b);
	if (ci->ok)
		printf(" (95%% %+.3f to %+.3f)", ci->lo[2], ci->hi[2]);
	putchar('\n');
}

static const char *auc_str(double v, char *buf, size_t n)
{
	if (v < 0)
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.3f", v);
	return buf;
}

int cmd_classify_eval(const struct cmd *c, int argc, char **argv)
{
	struct cmd_opts co = CMD_OPTS_INIT;
	struct cl_args a = {0};
	struct session s = SESSION_INIT;
	struct rv_question q = {0};
	struct rv_classify_opts o = RV_CLASSIFY_OPTS_INIT;
	struct rv_classifier *cl = NULL;
	struct rv_cl_eval ev;
	struct errmsg err = {""};
	char *to = NULL;
	char b[8][16];
	int ret;

	a.eval = true;
	if (classify_options(c, argc, argv, &co, &a, &ret) < 0)
		return ret;
	ret = session_start(&s, &co, SESSION_REPO | SESSION_CONFIG);
	if (ret)
		goto out;
	ret = load_question(s.cfg, a.question, &q, &to);
	if (ret)
		goto out;
	ret = open_classifier(&s, &q, &o, &cl);
	if (ret)
		goto out;
	rv_classify_eval(cl, a.since, a.until, &ev, &err);
	if (co.json) {
		printf("{\"question\": \"%s\", \"commits\": %zu, "
		       "\"positives\": %zu, \"auc\": %.4f, \"auc_model\": "
		       "%.4f, \"auc_similar\": %.4f, \"auc_has_fixes\": %.4f, "
		       "\"auc_subject_fix\": %.4f, \"fixes\": %zu, "
		       "\"fixes_positives\": %zu, \"fixes_auc\": %.4f, "
		       "\"fixes_auc_shipped\": %.4f, "
		       "\"fixes_auc_subject_fix\": %.4f, \"answered_yes\": "
		       "%zu, \"answered_yes_labelled\": %zu, ",
		       q.name, ev.commits, ev.positives, ev.auc, ev.auc_model,
		       ev.auc_similar, ev.auc_has_fixes, ev.auc_subject_fix,
		       ev.fixes, ev.fixes_positives, ev.fixes_auc,
		       ev.fixes_auc_shipped, ev.fixes_auc_subject_fix, ev.yes,
		       ev.true_yes);
		json_ci("auc_ci", &ev.ci_has_fixes, 0);
		json_ci("margin_has_fixes_ci", &ev.ci_has_fixes, 2);
		json_ci("margin_subject_fix_ci", &ev.ci_subject_fix, 2);
		json_ci("fixes_auc_ci", &ev.ci_fixes_shipped, 0);
		json_ci("fixes_margin_shipped_ci", &ev.ci_fixes_shipped, 2);
		printf("\"seconds\": %.3f}\n", ev.seconds);
	} else {
		printf("question %s: %zu commits replayed, %zu labelled yes\n",
		       q.name, ev.commits, ev.positives);
		printf("AUC  quorum %s (model %s, similar %s)   baselines: "
		       "has Fixes: %s, subject says fix %s\n",
		       auc_str(ev.auc, b[0], 16),
		       auc_str(ev.auc_model, b[1], 16),
		       auc_str(ev.auc_similar, b[2], 16),
		       auc_str(ev.auc_has_fixes, b[3], 16),
		       auc_str(ev.auc_subject_fix, b[4], 16));
		printf("among the %zu with Fixes: (%zu labelled yes): AUC "
		       "quorum %s   baselines: the bug shipped %s, subject "
		       "says fix %s\n",
		       ev.fixes, ev.fixes_positives,
		       auc_str(ev.fixes_auc, b[5], 16),
		       auc_str(ev.fixes_auc_shipped, b[6], 16),
		       auc_str(ev.fixes_auc_subject_fix, b[7], 16));
		print_margin("quorum over has Fixes:", ev.auc, ev.auc_has_fixes,
			     &ev.ci_has_fixes);
		print_margin("quorum over subject says fix", ev.auc,
			     ev.auc_subject_fix, &ev.ci_subject_fix);
		print_margin("among those with Fixes:, quorum over the bug "
			     "shipped",
			     ev.fixes_auc, ev.fixes_auc_shipped,
			     &ev.ci_fixes_shipped);
		printf("answered yes: %zu, of them labelled yes: %zu; %.2f "
		       "seconds\n",
		       ev.yes, ev.true_yes, ev.seconds);
	}
	ret = 0;
out:
	free(to);
	rv_classifier_free(cl);
	rv_question_release(&q);
	session_close(&s);
	return ret;
}
