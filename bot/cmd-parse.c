// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd-parse.c - `quorum parse [--json] FILE...`: show how mail was
 * understood: which series, which versions, which patches are missing,
 * who sent follow-up trailers. The JSON is a stable interface, documented
 * in contrib/parse-json.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>

#include "cmd.h"
#include "mailparse/mailparse.h"

static int cmd_parse(int argc, char **argv);

const struct cmd cmd_parse_def = {
	"parse",
	cmd_parse,
	"quorum parse [--json] FILE...",
	"show how mail was understood: series, versions, gaps",
	"Reads every message of each FILE (an mbox, mboxrd or mboxo; a single\n"
	"mail or `git show` output; a maildir with cur/ and new/; or - for\n"
	"standard input), groups the patches into series by thread (then by\n"
	"sender, version and total where threading is broken) and prints, for\n"
	"each series: version, total, complete or the missing numbers, the "
	"cover\n"
	"letter's subject and message-id, and for each patch its number, "
	"title,\n"
	"message-id, author, files touched, trailers, follow-up trailers sent\n"
	"as replies, and base-commit. An older version that a newer one in "
	"the\n"
	"same input replaces is marked superseded; a series sent twice in its\n"
	"own thread is shown twice, the later posting marked as the resend.\n"
	"Replies, pull requests and mail without a diff are counted (--json\n"
	"lists them as \"others\"); mail that could not be read, or is over a\n"
	"size cap, is listed as an error and does not stop the run.\n"
	"\n"
	"Options:\n"
	"  --json         print JSON instead (schema: contrib/parse-json.md)\n"
	"  -h, --help     this text\n"
	"\n"
	"Exit status: 0 when at least one series was found; 2 on a usage "
	"error,\n"
	"a FILE that cannot be read or is empty, or mail with no patch at all\n"
	"(--json still prints what was found).",
};

/* Text for a terminal: control bytes from mail become '?'. */
static void put_clean(const char *s)
{
	fput_clean(s, stdout);
}

static char *author_of(const struct mp_patch *p)
{
	if (p->author_name && p->author_email)
		return g_strdup_printf("%s <%s>", p->author_name,
				       p->author_email);
	if (p->author_email)
		return g_strdup(p->author_email);
	return g_strdup(p->from ? p->from : "");
}

static const char *title_of(const struct mp_patch *p)
{
	if (p->subject.title && *p->subject.title)
		return p->subject.title;
	return p->subject_raw ? p->subject_raw : "";
}

static const char *kind_name(enum mp_kind k)
{
	switch (k) {
	case MP_KIND_PATCH:
		return "patch";
	case MP_KIND_COVER:
		return "cover";
	case MP_KIND_REPLY:
		return "reply";
	case MP_KIND_PULL:
		return "pull";
	default:
		return "other";
	}
}

/* ---- JSON ---- */

/*
 * Add a long text (a commit message) as valid UTF-8: escaped here in one
 * pass over runs of plain bytes, as cJSON's own printer spent a fifth of
 * `parse --json` on them.
 */
static void json_text(cJSON *obj, const char *key, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char *valid = NULL;
	GString *out;
	const unsigned char *p;

	if (!s) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	if (!g_utf8_validate(s, -1, NULL))
		s = valid = g_utf8_make_valid(s, -1);
	out = g_string_sized_new(strlen(s) + 32);
	g_string_append_c(out, '"');
	for (p = (const unsigned char *)s; *p;) {
		const unsigned char *q = p;

		while (*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		g_string_append_len(out, (const char *)p, q - p);
		if (!*q)
			break;
		g_string_append_c(out, '\\');
		if (*q == '"' || *q == '\\')
			g_string_append_c(out, (char)*q);
		else if (*q == '\n')
			g_string_append_c(out, 'n');
		else if (*q == '\t')
			g_string_append_c(out, 't');
		else if (*q == '\r')
			g_string_append_c(out, 'r');
		else {
			g_string_append(out, "u00");
			g_string_append_c(out, hex[*q >> 4]);
			g_string_append_c(out, hex[*q & 15]);
		}
		p = q + 1;
	}
	g_string_append_c(out, '"');
	cJSON_AddRawToObject(obj, key, out->str);
	g_string_free(out, TRUE);
	g_free(valid);
}

static cJSON *json_trailers(const struct mp_trailer *t, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		rv_json_put_str(o, "key", t[i].key ? t[i].key : "");
		rv_json_put_str(o, "value", t[i].value ? t[i].value : "");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* A list of strings from the mail, made valid UTF-8. */
static cJSON *json_strings(char *const *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		char *u = g_utf8_make_valid(v[i] ? v[i] : "", -1);

		cJSON_AddItemToArray(arr, cJSON_CreateString(u));
		g_free(u);
	}
	return arr;
}

/* What the mail says the series needs first (format-patch --base, b4). */
static cJSON *json_prereqs(const struct mp_patch *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(
		o, "patch_ids",
		json_strings(p->prereq_patch_ids, p->nprereq_patch_ids));
	cJSON_AddItemToObject(
		o, "message_ids",
		json_strings(p->prereq_message_ids, p->nprereq_message_ids));
	cJSON_AddItemToObject(
		o, "change_ids",
		json_strings(p->prereq_change_ids, p->nprereq_change_ids));
	return o;
}

static cJSON *json_patch(const struct mp_patch *p, int index)
{
	cJSON *o = cJSON_CreateObject(), *files = cJSON_CreateArray();
	char *author = author_of(p);
	size_t i;

	cJSON_AddNumberToObject(o, "index", index);
	rv_json_put_str(o, "title", title_of(p));
	rv_json_put_str(o, "message_id", p->message_id);
	rv_json_put_str(o, "from", author);
	rv_json_put_str(o, "sender", p->from);
	rv_json_put_str(o, "subject", p->subject_raw);
	rv_json_put_str(o, "date", p->date);
	for (i = 0; i < p->nfiles; i++) {
		char *v = g_utf8_make_valid(p->files[i] ? p->files[i] : "", -1);

		cJSON_AddItemToArray(files, cJSON_CreateString(v));
		g_free(v);
	}
	cJSON_AddItemToObject(o, "files", files);
	cJSON_AddItemToObject(o, "trailers",
			      json_trailers(p->trailers, p->ntrailers));
	cJSON_AddItemToObject(o, "followups",
			      json_trailers(p->followups, p->nfollowups));
	rv_json_put_str(o, "base_commit", p->base_commit);
	rv_json_put_str(o, "change_id", p->change_id);
	cJSON_AddItemToObject(o, "prerequisites", json_prereqs(p));
	json_text(o, "commit_message", p->commit_message);
	g_free(author);
	return o;
}

static cJSON *json_series(const struct mp_series *s)
{
	cJSON *o = cJSON_CreateObject(), *missing = cJSON_CreateArray();
	cJSON *patches = cJSON_CreateArray();
	size_t i;

	cJSON_AddNumberToObject(o, "version", s->version);
	cJSON_AddNumberToObject(o, "total", s->total);
	cJSON_AddBoolToObject(o, "complete", s->complete);
	for (i = 0; i < s->nmissing; i++)
		cJSON_AddItemToArray(missing,
				     cJSON_CreateNumber(s->missing[i]));
	cJSON_AddItemToObject(o, "missing", missing);
	cJSON_AddBoolToObject(o, "superseded", s->superseded);
	if (s->repost_of)
		cJSON_AddNumberToObject(o, "repost_of",
					(double)(s->repost_of - 1));
	else
		cJSON_AddNullToObject(o, "repost_of");
	cJSON_AddBoolToObject(o, "resend", s->resend);
	if (s->cover) {
		cJSON *c = cJSON_CreateObject();
		char *author = author_of(s->cover);

		rv_json_put_str(c, "message_id", s->cover->message_id);
		rv_json_put_str(c, "subject", s->cover->subject_raw);
		rv_json_put_str(c, "from", author);
		rv_json_put_str(c, "change_id", s->cover->change_id);
		cJSON_AddItemToObject(c, "prerequisites",
				      json_prereqs(s->cover));
		g_free(author);
		cJSON_AddItemToObject(o, "cover", c);
	} else {
		cJSON_AddNullToObject(o, "cover");
	}
	cJSON_AddItemToObject(o, "followups",
			      json_trailers(s->followups, s->nfollowups));
	for (i = 0; i < s->npatches; i++)
		if (s->patches[i])
			cJSON_AddItemToArray(
				patches, json_patch(s->patches[i], (int)i + 1));
	cJSON_AddItemToObject(o, "patches", patches);
	return o;
}

/* Print one JSON value (and free it); -1 when memory ran out. */
static int put_json(cJSON *item)
{
	char *text = cJSON_PrintUnformatted(item);

	cJSON_Delete(item);
	if (!text)
		return -1;
	fput_json(text, stdout);
	free(text);
	return 0;
}

/*
 * One series at a time, so the output never exists twice in memory
 * (a big mbox makes thousands of series).
 */
static int print_json(const struct mp_set *set)
{
	size_t i;

	fputs("{\"series\":[", stdout);
	for (i = 0; i < set->nseries; i++) {
		if (i)
			fputs(",\n", stdout);
		if (put_json(json_series(set->series[i])))
			goto nomem;
	}
	fputs("],\n\"others\":[", stdout);
	for (i = 0; i < set->nothers; i++) {
		cJSON *o = cJSON_CreateObject();

		rv_json_put_str(o, "message_id", set->others[i]->message_id);
		rv_json_put_str(o, "subject", set->others[i]->subject_raw);
		rv_json_put_str(o, "kind", kind_name(set->others[i]->kind));
		if (i)
			fputs(",\n", stdout);
		if (put_json(o))
			goto nomem;
	}
	fputs("],\n\"errors\":[", stdout);
	for (i = 0; i < set->nerrors; i++) {
		cJSON *o = cJSON_CreateObject();

		rv_json_put_str(o, "where", set->errors[i].where);
		rv_json_put_str(o, "message", set->errors[i].message);
		if (i)
			fputs(",\n", stdout);
		if (put_json(o))
			goto nomem;
	}
	fputs("]}\n", stdout);
	return 0;
nomem:
	return error("out of memory while writing JSON");
}

/* ---- text ---- */

static void print_trailers(const struct mp_trailer *t, size_t n,
			   const char *indent, const char *mark)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fputs(indent, stdout);
		fputs(mark, stdout);
		put_clean(t[i].key);
		fputs(": ", stdout);
		put_clean(t[i].value);
		putchar('\n');
	}
}

static void print_text(const struct mp_set *set)
{
	size_t i, j;

	for (i = 0; i < set->nseries; i++) {
		const struct mp_series *s = set->series[i];

		if (i)
			putchar('\n');
		printf("series %zu: v%d, %d patch%s, ", i + 1, s->version,
		       s->total, s->total == 1 ? "" : "es");
		if (s->complete) {
			fputs("complete", stdout);
		} else {
			fputs("incomplete, missing ", stdout);
			for (j = 0; j < s->nmissing; j++)
				printf("%s%d", j ? ", " : "", s->missing[j]);
		}
		if (s->repost_of)
			printf(" (%s series %zu again%s)",
			       s->resend ? "a resend: the patches of"
					 : "posted in the thread of",
			       s->repost_of,
			       s->superseded ? "; reviewed there" : "");
		else if (s->superseded)
			fputs(" (superseded by a newer version or a repost)",
			      stdout);
		putchar('\n');
		if (s->cover) {
			fputs("  cover: ", stdout);
			put_clean(s->cover->subject_raw);
			fputs("\n         <", stdout);
			put_clean(s->cover->message_id);
			fputs(">\n", stdout);
			print_trailers(s->followups, s->nfollowups, "         ",
				       "+ ");
		} else {
			fputs("  cover: none\n", stdout);
		}
		for (j = 0; j < s->npatches; j++) {
			const struct mp_patch *p = s->patches[j];
			char *author;
			size_t f;

			printf("  [%zu/%d] ", j + 1, s->total);
			if (!p) {
				fputs("(missing)\n", stdout);
				continue;
			}
			put_clean(title_of(p));
			fputs("\n        message-id: <", stdout);
			put_clean(p->message_id);
			fputs(">\n        author: ", stdout);
			author = author_of(p);
			put_clean(author);
			g_free(author);
			fputs("\n        files:", stdout);
			for (f = 0; f < p->nfiles; f++) {
				fputs(f ? ", " : " ", stdout);
				put_clean(p->files[f]);
			}
			if (!p->nfiles)
				fputs(" (none)", stdout);
			putchar('\n');
			if (p->base_commit) {
				fputs("        base-commit: ", stdout);
				put_clean(p->base_commit);
				putchar('\n');
			}
			print_trailers(p->trailers, p->ntrailers, "        ",
				       "");
			print_trailers(p->followups, p->nfollowups, "        ",
				       "+ ");
		}
	}
	if (set->nothers)
		printf("%s%zu other message%s (replies, pull requests, "
		       "mail with no patch)\n",
		       set->nseries ? "\n" : "", set->nothers,
		       set->nothers == 1 ? "" : "s");
	for (i = 0; i < set->nerrors; i++) {
		fputs(i ? "  " : "errors:\n  ", stdout);
		put_clean(set->errors[i].where);
		fputs(": ", stdout);
		put_clean(set->errors[i].message);
		putchar('\n');
	}
}

static int cmd_parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		CMD_OPT_JSON,
		CMD_OPT_HELP,
		CMD_OPT_END,
	};
	struct cmd_opts co = CMD_OPTS_INIT;
	struct mp_collector *c = NULL;
	struct mp_set *set = NULL;
	int opt, i, ret;

	cmd_opt_start();
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1)
		if (cmd_opt(&cmd_parse_def, opt, argv, &co, &ret) < 0)
			return ret;
	if (optind >= argc)
		return usage_error(&cmd_parse_def,
				   "no FILE given (use - for standard input)");

	c = mp_collector_new();
	/* metadata only: memory stays flat whatever the mbox size */
	mp_collector_set_keep_bodies(c, false);
	for (i = optind; i < argc; i++) {
		struct errmsg err = {""};

		if (mp_collect_path(c, argv[i], NULL, &err) < 0) {
			error("%s", err.msg);
			mp_set_free(mp_collector_finish(c));
			return EXIT_USAGE;
		}
	}
	set = mp_collector_finish(c);
	if (co.json) {
		if (print_json(set) < 0) {
			ret = EXIT_ENV;
			goto out;
		}
	} else {
		print_text(set);
	}
	ret = EXIT_CLEAN;
	if (!set->nseries) {
		if (set->nothers)
			error("no patch found: the mail holds %zu message%s "
			      "but none carries a diff",
			      set->nothers, set->nothers == 1 ? "" : "s");
		else
			error("no patch found: no message could be read "
			      "(first problem: %s: %s)",
			      set->nerrors ? set->errors[0].where : "input",
			      set->nerrors ? set->errors[0].message
					   : "unknown");
		ret = EXIT_USAGE;
	}
out:
	mp_set_free(set);
	return ret;
}
