// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-llm-tools.c - the tools a model calls, against a real git repo made
 * at test time: a base with history (a bug and its fix, links, a
 * submodule, binary and long files) and a series commit on top. The
 * answers are the tree's true answers (the post-image for read_file and
 * grep, the base for log and blame, as git itself says), cut at the caps
 * with a note; paths never leave the tree; hostile calls stay bounded in
 * time and memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "review/llm.h"

static char tmp[256];
static char repo_path[300];
static char base_id[RV_OID_HEXSZ + 1], tip_id[RV_OID_HEXSZ + 1];
static char bug_id[RV_OID_HEXSZ + 1], fix_id[RV_OID_HEXSZ + 1];
static struct rv_repo *repo;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char path[512], cmd[1200];
	va_list ap;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/script.sh", tmp);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "set -e\ncd '%s'\n", tmp);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "sh %s >%s/sh.log 2>&1", path, tmp);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/sh.log >&2", tmp);
		(void)!system(cmd);
		fail_msg("fixture script failed");
	}
}

/* stdout of a shell command run in tmp, trailing newline removed. */
static char *capture(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *capture(const char *fmt, ...)
{
	char cmd[2048];
	struct sb out = SB_INIT;
	va_list ap;
	FILE *fp;
	int n, c;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", tmp);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while ((c = fgetc(fp)) != EOF)
		sb_addch(&out, c);
	pclose(fp);
	sb_rtrim(&out);
	return sb_detach(&out, NULL);
}

static void capture_id(char out[RV_OID_HEXSZ + 1], const char *rev)
{
	char *s = capture("git -C r rev-parse %s", rev);

	assert_int_equal(strlen(s), RV_OID_HEXSZ);
	memcpy(out, s, RV_OID_HEXSZ + 1);
	free(s);
}

static double now(void)
{
	return rv_tool_now();
}

/* The repository: a base with history and odd entries, a series on it. */
static int setup(void **state)
{
	char home[600];
	struct errmsg err = {""};

	snprintf(tmp, sizeof(tmp), "%s/quorum-tools.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(home, sizeof(home), "%s/home", tmp);
	setenv("HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.org", 1);
	setenv("LC_ALL", "C", 1);
	sh("mkdir -p home && git config --global init.defaultBranch main\n"
	   "git init -q r && cd r\n"
	   "t=1700000000\n"
	   "c() { export GIT_AUTHOR_DATE=\"$t +0000\" "
	   "GIT_COMMITTER_DATE=\"$t +0000\"; t=$((t + 86400)); "
	   "git commit -q -m \"$1\"; }\n"
	   "mkdir lib\n"
	   "printf '#include \"lib/util.h\"\\n\\nstatic int\\nfoo(int a)\\n{\\n"
	   "\\treturn a + 1;\\n}\\n\\nint bar(int b)\\n{\\n\\treturn b * 2;"
	   "\\n}\\n' >main.c\n"
	   "printf '#define UTIL 1\\nint util(void);\\n' >lib/util.h\n"
	   "git add . && c 'main: foo and bar'\n"
	   "sed -i 's/return a + 1;/return a + 2;/' main.c && git add . && "
	   "c 'main: foo adds two'\n"
	   "sed -i 's/return b \\* 2;/return b * 3;/' main.c && git add . && "
	   "c 'main: bar triples'\n"
	   /* A bug and its fix, for similar. */
	   "cat >net.c <<'EOC'\n"
	   "#include <string.h>\n\nstruct opts {\n\tchar name[16];\n"
	   "\tint mtu;\n};\n\n"
	   "int parse_opts(struct opts *o, const char *arg)\n{\n"
	   "\tsize_t arg_len = strlen(arg);\n\n"
	   "\tmemcpy(o->name, arg, arg_len);\n"
	   "\to->mtu = parse_mtu_value(arg, arg_len);\n\treturn 0;\n}\n"
	   "EOC\n"
	   "git add . && c 'net: parse the interface name'\n"
	   "bug=$(git rev-parse HEAD)\n"
	   "sed -i 's/memcpy(o->name, arg, arg_len);/"
	   "memcpy(o->name, arg, arg_len < 15 ? arg_len : 15);/' net.c\n"
	   "git add . && c \"net: bound the interface name\n\n"
	   "Fixes: $(git rev-parse --short=12 $bug) (\\\"net: parse the "
	   "interface name\\\")\"\n"
	   /* What a tree may hold that a tool must not follow or show. */
	   "ln -s /etc/passwd link-out && ln -s lib link-dir\n"
	   "printf 'ab\\0cd' >blob.bin\n"
	   "i=1; while [ $i -le 1000 ]; do echo \"line $i\"; i=$((i+1)); "
	   "done >big.txt\n"
	   "python3 -c \"print('a' * 30000 + '!')\" >long.txt\n"
	   "printf 'ok \\377 \\033[31m red\\r\\n' >bad-utf8.txt\n"
	   "printf 'weird\\n' >\"$(printf 'tab\\there.c')\"\n"
	   "git add link-out link-dir blob.bin big.txt long.txt bad-utf8.txt "
	   "tab*.c\n"
	   "git update-index --add --cacheinfo 160000,$bug,sub\n"
	   "c 'odds and ends'\n"
	   "git tag base\n"
	   /* The series: foo changes, a new file repeats the bug. */
	   "sed -i 's/return a + 2;/int series_only = 1;\\n\\n"
	   "\\treturn a + series_only;/' main.c\n"
	   "cat >other.c <<'EOC'\n"
	   "#include <string.h>\n\nstruct alias {\n\tchar name[16];\n};\n\n"
	   "int parse_alias(struct alias *o, const char *arg)\n{\n"
	   "\tsize_t arg_len = strlen(arg);\n\n"
	   "\tmemcpy(o->name, arg, arg_len);\n\treturn 0;\n}\n"
	   "EOC\n"
	   "git add main.c other.c && c 'series: foo and an alias'\n");
	capture_id(base_id, "base");
	capture_id(tip_id, "HEAD^{tree}");
	capture_id(bug_id, "base~2");
	capture_id(fix_id, "base~1");
	snprintf(repo_path, sizeof(repo_path), "%s/r", tmp);
	if (rv_repo_open(&repo, repo_path, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	rv_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static struct rv_tool_ctx ctx(void)
{
	struct rv_tool_ctx c = RV_TOOL_CTX_INIT;

	c.repo = repo;
	c.tree = tip_id;
	c.base = base_id;
	return c;
}

struct answer {
	int ret;
	char *text;
	struct errmsg err;
	double seconds;
};

static void call_with(const struct rv_tool_ctx *c, struct answer *a,
		      const char *name, const char *args)
{
	struct sb out = SB_INIT;
	double t0 = now();

	memset(a, 0, sizeof(*a));
	a->ret = rv_tool_call(c, name, args, args ? strlen(args) : 0, &out,
			      &a->err);
	a->seconds = now() - t0;
	a->text = sb_detach(&out, NULL);
	if (!a->text)
		a->text = strdup("");
}

static void call(struct answer *a, const char *name, const char *args)
{
	struct rv_tool_ctx c = ctx();

	call_with(&c, a, name, args);
}

static void answer_release(struct answer *a)
{
	free(a->text);
	a->text = NULL;
}

static bool has(const struct answer *a, const char *s)
{
	return strstr(a->text, s) != NULL;
}

#define assert_has(a, s)                                                       \
	do {                                                                   \
		if (!has(a, s))                                                \
			fail_msg("answer lacks \"%s\":\n%s", s, (a)->text);    \
	} while (0)
#define assert_lacks(a, s)                                                     \
	do {                                                                   \
		if (has(a, s))                                                 \
			fail_msg("answer has \"%s\":\n%s", s, (a)->text);      \
	} while (0)

/* The first line of the answer. */
static char *first_line(const struct answer *a)
{
	return strndup(a->text, strcspn(a->text, "\n"));
}

static void test_read_file_is_the_post_image(void **state)
{
	struct answer a;
	struct sb base = SB_INIT;
	char *l;

	call(&a, "read_file", "{\"path\": \"main.c\"}");
	assert_int_equal(a.ret, 0);
	l = first_line(&a);
	assert_string_equal(l, "read_file \"main.c\"");
	free(l);
	/* The series' line, numbered as in the post-image. */
	assert_has(&a, "     6\t\tint series_only = 1;\n");
	assert_has(&a, "     8\t\treturn a + series_only;\n");
	assert_has(&a, "(lines 1-14 of 14, the end of the file)\n");
	answer_release(&a);
	/* The base has none of it. */
	assert_int_equal(
		rv_tool_read_blob(repo, base_id, "main.c", &base, NULL), 0);
	assert_null(strstr(sb_str(&base), "series_only"));
	sb_release(&base);

	/* A range: exactly those lines. */
	call(&a, "read_file",
	     "{\"path\": \"main.c\", \"start_line\": 3, \"end_line\": 4}");
	assert_int_equal(a.ret, 0);
	assert_string_equal(a.text, "read_file \"main.c\" lines 3-4\n"
				    "     3\tstatic int\n"
				    "     4\tfoo(int a)\n"
				    "(lines 3-4 of 14)\n");
	answer_release(&a);

	/* A new file of the series, a directory, a path C-quoted. */
	call(&a, "read_file", "{\"path\": \"other.c\", \"end_line\": 1}");
	assert_has(&a, "     1\t#include <string.h>\n");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"lib/\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "util.h\n(a directory of 1 entry)");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"tab\\there.c\"}");
	assert_int_equal(a.ret, 0);
	l = first_line(&a);
	assert_string_equal(l, "read_file \"tab\\there.c\"");
	free(l);
	answer_release(&a);

	/* Bytes that are not text are shown as '?', never passed on. */
	call(&a, "read_file", "{\"path\": \"bad-utf8.txt\"}");
	assert_has(&a, "     1\tok ? ?[31m red\n");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"blob.bin\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "(a binary file of 5 bytes; not shown)");
	answer_release(&a);
}

static void test_paths_stay_in_the_tree(void **state)
{
	static const char *const refused[] = {
		"../etc/passwd",   "/etc/passwd", ".git/config",
		"lib/../../x",	   ".GIT/config", "lib/./util.h",
		"link-dir/util.h", "sub/x",	  "lib//util.h",
		"main.c/../net.c",
	};
	static const char *const tools[] = {"read_file", "log", "blame"};
	struct answer a;
	char args[256];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		for (j = 0; j < ARRAY_SIZE(tools); j++) {
			bool lines = !strcmp(tools[j], "blame");

			snprintf(args, sizeof(args), "{\"path\": \"%s\"%s}",
				 refused[i],
				 lines ? ", \"start_line\": 1, \"end_line\": 2"
				       : "");
			call(&a, tools[j], args);
			/* log names no commit for what is not in the tree;
			 * it reads no file. */
			if (!strcmp(tools[j], "log") && !a.ret)
				assert_has(&a,
					   "(no commit of the base touches");
			else if (a.ret != RV_ERR_UNSAFE &&
				 a.ret != RV_ERR_INPUT)
				fail_msg("%s %s: %d\n%s", tools[j], refused[i],
					 a.ret, a.text);
			assert_lacks(&a, "root:");
			answer_release(&a);
		}
	}
	call(&a, "read_file", "{\"path\": \"../etc/passwd\"}");
	assert_int_equal(a.ret, RV_ERR_UNSAFE);
	assert_string_equal(a.text, "read_file \"../etc/passwd\"\nerror: "
				    "'..' components are refused: paths stay "
				    "inside the tree\n");
	assert_string_equal(a.err.msg, "'..' components are refused: paths "
				       "stay inside the tree");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \".git/config\"}");
	assert_int_equal(a.ret, RV_ERR_UNSAFE);
	assert_has(&a, ".git is refused");
	answer_release(&a);

	/* A link is named, not followed; a submodule is not entered. */
	call(&a, "read_file", "{\"path\": \"link-out\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "(a symbolic link to \"/etc/passwd\"; links are not "
		       "followed)");
	assert_lacks(&a, "root:");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"link-dir/util.h\"}");
	assert_int_equal(a.ret, RV_ERR_UNSAFE);
	assert_has(&a, "link-dir is a symbolic link; links are not followed");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"sub\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "a submodule at commit");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"sub/net.c\"}");
	assert_int_equal(a.ret, RV_ERR_UNSAFE);
	assert_has(&a, "sub is a submodule");
	answer_release(&a);
	call(&a, "read_file", "{\"path\": \"nothere.c\"}");
	assert_int_equal(a.ret, RV_ERR_REPO);
	assert_has(&a, "error: there is no nothere.c in the tree");
	answer_release(&a);
	/* A glob selects files; a directory selects what is under it. */
	call(&a, "grep", "{\"pattern\": \"UTIL\", \"path_glob\": \"lib\"}");
	assert_has(&a,
		   "lib/util.h:1: #define UTIL 1\n(1 match in 1 of 1 file)");
	answer_release(&a);
	call(&a, "grep",
	     "{\"pattern\": \"UTIL\", \"path_glob\": \"l?b/*.[ch]\"}");
	assert_has(&a, "lib/util.h:1: #define UTIL 1\n");
	answer_release(&a);
	call(&a, "grep", "{\"pattern\": \"UTIL\", \"path_glob\": \"*.c\"}");
	assert_has(&a, "(no match in ");
	answer_release(&a);
	/* grep reads neither links nor submodules. */
	call(&a, "grep", "{\"pattern\": \"passwd|root:|parse_opts\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "net.c:8: int parse_opts(");
	assert_lacks(&a, "link-out");
	assert_lacks(&a, "sub/");
	assert_has(&a, "(1 match in 1 of ");
	answer_release(&a);
}

static void test_answers_are_cut_at_the_caps(void **state)
{
	struct rv_tool_ctx c = ctx();
	struct answer a;

	/* A range of 10^9 lines: the first 200, and where to go on. */
	call(&a, "read_file",
	     "{\"path\": \"big.txt\", \"start_line\": 1, \"end_line\": "
	     "1000000000}");
	assert_int_equal(a.ret, 0);
	assert_true(a.seconds < 1.0);
	assert_has(&a, "   200\tline 200\n(cut at 200 lines: lines 1-200 "
		       "shown; ask for lines 201-1000; the file has 1000 "
		       "lines)\n");
	assert_lacks(&a, "line 201\n");
	answer_release(&a);
	call(&a, "read_file",
	     "{\"path\": \"big.txt\", \"start_line\": 1000000000}");
	assert_int_equal(a.ret, RV_ERR_INPUT);
	assert_has(&a, "start_line 1000000000 is past the end of the file "
		       "(1000 lines)");
	answer_release(&a);
	call(&a, "blame",
	     "{\"path\": \"big.txt\", \"start_line\": 990, \"end_line\": "
	     "1000000000}");
	assert_int_equal(a.ret, 0);
	assert_true(a.seconds < 1.0);
	assert_has(&a, "   1000\tline 1000\n(lines 990-1000 of 1000)\n");
	answer_release(&a);
	call(&a, "blame",
	     "{\"path\": \"big.txt\", \"start_line\": 1, \"end_line\": "
	     "1000000000}");
	assert_has(&a, "(cut at 200 lines: lines 1-200 shown; ask for lines "
		       "201-1000; the file has 1000 lines)");
	answer_release(&a);

	/* Bytes. */
	c.max_bytes = 100;
	call_with(&c, &a, "read_file", "{\"path\": \"big.txt\"}");
	assert_has(&a, "(cut at 100 bytes: lines 1-7 shown; ask for lines "
		       "8-1000; the file has 1000 lines)");
	answer_release(&a);
	/* A 30,000-byte line is cut at RV_TOOL_MAX_LINE. */
	call(&a, "read_file", "{\"path\": \"long.txt\"}");
	assert_has(&a, "... [29489 more bytes]\n");
	answer_release(&a);

	/* Entries. */
	call(&a, "grep", "{\"pattern\": \"^line\", \"path_glob\": \"*.txt\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "big.txt:50: line 50\n(the first 50 of 1000 matches "
		       "in 1 file; narrow the pattern or path_glob to see "
		       "others)");
	answer_release(&a);
	c = ctx();
	c.max_entries = 1;
	call_with(&c, &a, "log", "{\"path\": \"main.c\"}");
	assert_has(&a, "(the newest 1 commits; older ones are left out;");
	answer_release(&a);
	c.max_entries = 2;
	c.max_bytes = 30;
	call_with(&c, &a, "grep", "{\"pattern\": \"line 1\"}");
	assert_has(&a, "big.txt:1: line 1\n(the first 1 of 112 matches in 1 "
		       "file, cut at the answer's bytes;");
	answer_release(&a);
}

static void test_regex_is_bounded(void **state)
{
	static const char *const bad[] = {
		"(a*)*b",
		"(a|aa)*c",
		"^(a+)+$",
		"(\\\\w*)*\\\\d",
		"^(a|a)*$",
		"(.*a){20}$",
		"^(([a-z])+.)+[A-Z]([a-z])+$",
	};
	struct rv_tool_ctx c = ctx();
	struct answer a;
	struct sb big = SB_INIT;
	char args[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(args, sizeof(args),
			 "{\"pattern\": \"%s\", \"path_glob\": \"long.txt\"}",
			 bad[i]);
		call(&a, "grep", args);
		if (a.seconds >= 1.0)
			fail_msg("%s took %.2f s", bad[i], a.seconds);
		/* An answer, or the error that says it was stopped. */
		if (a.ret)
			assert_has(&a, "backtracks too much; simplify it");
		else
			assert_has(&a, "(no match in 1 file)");
		answer_release(&a);
	}
	call(&a, "grep", "{\"pattern\": \"^(a+)+$\"}");
	assert_int_equal(a.ret, RV_ERR_INPUT);
	assert_has(&a, "error: the pattern was stopped at long.txt line 1 ");
	answer_release(&a);

	/* A pattern of 1 MB is refused before it is compiled. */
	sb_adds(&big, "{\"pattern\": \"");
	for (i = 0; i < (1 << 20); i++)
		sb_addch(&big, 'a');
	sb_adds(&big, "\"}");
	call(&a, "grep", sb_str(&big));
	assert_int_equal(a.ret, RV_ERR_INPUT);
	assert_true(a.seconds < 1.0);
	assert_has(&a, "the arguments are 1048591 bytes; at most 65536");
	answer_release(&a);
	sb_reset(&big);
	sb_adds(&big, "{\"pattern\": \"");
	for (i = 0; i < 5000; i++)
		sb_addch(&big, 'a');
	sb_adds(&big, "\"}");
	call(&a, "grep", sb_str(&big));
	assert_int_equal(a.ret, RV_ERR_INPUT);
	assert_has(&a, "the pattern is 5000 bytes long; at most 1000");
	answer_release(&a);
	sb_release(&big);
	call(&a, "grep", "{\"pattern\": \"(\"}");
	assert_int_equal(a.ret, RV_ERR_INPUT);
	assert_has(&a, "the pattern does not compile at offset 1: ");
	answer_release(&a);

	/* The clock and the bytes read stop a search, and it says where. */
	c.seconds = 1e-9;
	call_with(&c, &a, "grep", "{\"pattern\": \"line\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "the search stopped after 0.0 s at ");
	answer_release(&a);
	c = ctx();
	c.max_scan = 100;
	call_with(&c, &a, "grep", "{\"pattern\": \"line\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "the search stopped after reading ");
	answer_release(&a);
}

static void test_bad_arguments_are_tool_errors(void **state)
{
	static const struct {
		const char *tool, *args, *error;
	} cases[] = {
		{"rm", "{}",
		 "there is no tool of that name; the tools are read_file, "
		 "grep, log, blame"},
		{"read_file", "{\"path\": ",
		 "the arguments are not a JSON "
		 "object; read_file takes {path, "
		 "start_line?, end_line?}"},
		{"read_file", "[\"main.c\"]", "are not a JSON object"},
		{"read_file", "", "are not a JSON object"},
		{"read_file", NULL, "are not a JSON object"},
		{"read_file", "{}", "path is missing"},
		{"read_file", "{\"path\": 3}", "path must be a string"},
		{"read_file", "{\"path\": \"main.c\", \"start_line\": \"2\"}",
		 "start_line must be a whole number from 1 to 2147483647"},
		{"read_file", "{\"path\": \"main.c\", \"start_line\": 1.5}",
		 "start_line must be a whole number"},
		{"read_file", "{\"path\": \"main.c\", \"end_line\": 0}",
		 "end_line must be a whole number"},
		{"read_file", "{\"path\": \"main.c\", \"end_line\": -4}",
		 "end_line must be a whole number"},
		{"read_file", "{\"path\": \"main.c\", \"end_line\": 1e12}",
		 "end_line must be a whole number"},
		{"read_file",
		 "{\"path\": \"main.c\", \"start_line\": 5, \"end_line\": 2}",
		 "end_line 2 is before start_line 5"},
		{"read_file", "{\"path\": \"main.c\", \"mode\": \"w\"}",
		 "unknown argument \"mode\"; read_file takes path, "
		 "start_line?, end_line?"},
		{"read_file", "{\"path\": \"main.c\", \"path\": \"net.c\"}",
		 "path is given twice"},
		{"read_file", "{\"path\": \"\"}", "the path is empty"},
		{"grep", "{\"pattern\": \"\"}", "the pattern is empty"},
		{"log", "{\"path\": \"main.c\", \"function\": \"a b\"}",
		 "function must be a C identifier"},
		{"log", "{\"path\": \"lib\", \"function\": \"util\"}",
		 "function needs the path of a file"},
		{"blame", "{\"path\": \"main.c\", \"start_line\": 1}",
		 "end_line is missing"},
		{"blame",
		 "{\"path\": \"other.c\", \"start_line\": 1, "
		 "\"end_line\": 2}",
		 "there is no other.c in the tree"},
		{"similar",
		 "{\"path\": \"main.c\", \"start_line\": 1, \"end_line\": 2}",
		 "similar is not offered in this review (the repository has "
		 "no history index)"},
	};
	struct answer a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		call(&a, cases[i].tool, cases[i].args);
		if (a.ret >= 0 || !strstr(a.err.msg, cases[i].error) ||
		    !strstr(a.text, "\nerror: ") ||
		    !strstr(a.text, cases[i].error))
			fail_msg("%s %s: %d %s\n%s", cases[i].tool,
				 cases[i].args ? cases[i].args : "(null)",
				 a.ret, a.err.msg, a.text);
		answer_release(&a);
	}
	/* null is what strict schemas send for an absent argument. */
	call(&a, "read_file",
	     "{\"path\": \"main.c\", \"start_line\": null, \"end_line\": 2}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "(lines 1-2 of 14)");
	answer_release(&a);
}

static void test_log_and_blame_read_the_base(void **state)
{
	struct answer a;
	char *git, *p, *want;
	const char *l;

	call(&a, "log", "{\"path\": \"main.c\"}");
	assert_int_equal(a.ret, 0);
	/* As git log says it, newest first; the series is not the base. */
	git = capture("git -C r log --format='%%h %%ad %%an: %%s' "
		      "--date=short --abbrev=12 base -- main.c");
	p = strchr(a.text, '\n') + 1;
	assert_int_equal(strncmp(p, git, strlen(git)), 0);
	assert_has(&a, "(3 commits, newest first; ");
	assert_lacks(&a, "series:");
	free(git);
	answer_release(&a);

	/* Only the commits whose diff touches foo(). */
	call(&a, "log", "{\"path\": \"main.c\", \"function\": \"foo\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "main: foo adds two\n");
	assert_has(&a, "main: foo and bar [adds the file]\n");
	assert_lacks(&a, "bar triples");
	assert_has(&a, "(2 commits, newest first; only those whose diff "
		       "touches the function;");
	answer_release(&a);
	call(&a, "log", "{\"path\": \"main.c\", \"function\": \"bar\"}");
	assert_has(&a, "main: bar triples\n");
	assert_lacks(&a, "foo adds two");
	answer_release(&a);
	call(&a, "log", "{\"path\": \"lib\"}");
	assert_has(&a, "main: foo and bar [adds the file]\n(1 commit, newest "
		       "first; 6 commits read; renames are not followed)");
	answer_release(&a);
	call(&a, "log", "{\"path\": \"other.c\"}");
	assert_int_equal(a.ret, 0);
	assert_has(&a, "(no commit of the base touches other.c; ");
	answer_release(&a);

	/* blame: the ids and lines git blame gives, on the base. */
	call(&a, "blame",
	     "{\"path\": \"main.c\", \"start_line\": 6, \"end_line\": 10}");
	assert_int_equal(a.ret, 0);
	git = capture("git -C r blame --root -l -s -L 6,10 base -- main.c | "
		      "cut -c1-12");
	for (p = git, l = strchr(a.text, '\n') + 1; *p;) {
		want = strndup(p, 12);
		if (strncmp(l, want, 12))
			fail_msg("blame line differs from git: %s\n%s", want,
				 a.text);
		free(want);
		p += strcspn(p, "\n");
		p += *p == '\n';
		l = strchr(l, '\n') + 1;
	}
	assert_has(&a, "A U Thor      6\t\treturn a + 2;\n");
	assert_has(&a, "(lines 6-10 of 12)");
	free(git);
	answer_release(&a);
}

/* Blame reads a bounded history: older lines stop at a boundary. */
static void test_blame_is_bounded(void **state)
{
	struct rv_repo *deep = NULL;
	struct rv_tool_ctx c = RV_TOOL_CTX_INIT;
	char path[400], head[RV_OID_HEXSZ + 1], *want;
	struct answer a;

	/* RV_TOOL_BLAME_DEPTH + 5 commits, each adding a line. */
	sh("git init -q deep && cd deep && python3 - %d <<'EOP' | "
	   "git fast-import --quiet\n"
	   "import sys\n"
	   "n = int(sys.argv[1])\n"
	   "text = ''\n"
	   "for i in range(1, n + 1):\n"
	   "    text += 'line %%d\\n' %% i\n"
	   "    msg = 'commit %%d' %% i\n"
	   "    print('commit refs/heads/main')\n"
	   "    print('committer C <c@example.org> %%d +0000' %% "
	   "(1700000000 + i))\n"
	   "    print('data %%d' %% len(msg)); print(msg)\n"
	   "    print('M 644 inline f.txt')\n"
	   "    print('data %%d' %% len(text)); print(text, end='')\n"
	   "EOP\n",
	   RV_TOOL_BLAME_DEPTH + 5);
	snprintf(path, sizeof(path), "%s/deep", tmp);
	assert_int_equal(rv_repo_open(&deep, path, NULL), 0);
	assert_int_equal(rv_repo_resolve(deep, "main", head, NULL), 0);
	c.repo = deep;
	c.tree = head;
	c.base = head;
	call_with(&c, &a, "blame",
		  "{\"path\": \"f.txt\", \"start_line\": 1, \"end_line\": "
		  "1000000000}");
	assert_int_equal(a.ret, 0);
	assert_true(a.seconds < 5.0);
	/* Line 1 is older than the boundary: named as such, no author. */
	want = capture("git -C deep rev-parse --short=11 main~%d",
		       RV_TOOL_BLAME_DEPTH);
	assert_has(&a, want);
	assert_has(&a, " (older)      1\tline 1\n");
	free(want);
	/* The newest lines are blamed on their commits, as git does. */
	want = capture("git -C deep blame --root -l -s -L 1005,1005 main -- "
		       "f.txt | cut -c1-12");
	c.max_lines = 1000000;
	answer_release(&a);
	call_with(&c, &a, "blame",
		  "{\"path\": \"f.txt\", \"start_line\": 1005, "
		  "\"end_line\": 1005}");
	assert_has(&a, want);
	assert_has(&a, " C   1005\tline 1005\n(lines 1005-1005 of 1005)\n");
	assert_lacks(&a, "(^:");
	free(want);
	answer_release(&a);
	call_with(&c, &a, "blame",
		  "{\"path\": \"f.txt\", \"start_line\": 1, \"end_line\": 3}");
	assert_has(&a, "(^: older than that commit, ");
	answer_release(&a);
	rv_repo_free(deep);
}

static void test_similar_as_quorum_similar_shows(void **state)
{
	struct rv_index_stats st;
	struct rv_index_opts io = RV_INDEX_OPTS_INIT;
	struct rv_tool_ctx c = ctx();
	struct rv_history *h = NULL;
	struct errmsg err = {""};
	struct answer a;
	char want[64];
	const char *bin = getenv("QUORUM_BIN");

	memset(&st, 0, sizeof(st));
	assert_int_equal(rv_history_index(repo_path, &io, &st, &err), 0);
	assert_int_equal(rv_history_open(&h, repo_path, &err), 0);
	assert_non_null(h);
	c.hist = h;
	call_with(&c, &a, "similar",
		  "{\"path\": \"other.c\", \"start_line\": 7, \"end_line\": "
		  "13}");
	assert_int_equal(a.ret, 0);
	snprintf(want, sizeof(want), "   bug  %.12s net: parse the", bug_id);
	assert_has(&a, want);
	snprintf(want, sizeof(want), "   fix  %.12s net: bound the", fix_id);
	assert_has(&a, want);
	assert_has(&a, "   + other.c:11: memcpy(o->name, arg, arg_len);");
	answer_release(&a);
	call_with(&c, &a, "similar",
		  "{\"path\": \"link-dir/util.h\", \"start_line\": 1, "
		  "\"end_line\": 2}");
	assert_int_equal(a.ret, RV_ERR_UNSAFE);
	answer_release(&a);
	call_with(&c, &a, "similar",
		  "{\"path\": \"other.c\", \"start_line\": 7, \"end_line\": "
		  "13}");
	/* The same text as `quorum similar` on a patch adding the lines. */
	if (bin && *bin) {
		char *got;

		sh("{ printf 'From: A <a@example.org>\\nSubject: [PATCH] x\\n"
		   "Message-ID: <x@example.org>\\n\\nx\\n---\\n"
		   "diff --git a/other.c b/other.c\\n--- a/other.c\\n"
		   "+++ b/other.c\\n@@ -6,0 +7,7 @@ struct alias {\\n'; "
		   "sed -n 7,13p r/other.c | sed 's/^/+/'; } >sim.eml\n");
		got = capture("'%s' similar -C r sim.eml | tail -n +2", bin);
		assert_non_null(strstr(got, "1. score "));
		if (!strstr(a.text, got))
			fail_msg("quorum similar shows:\n%s\nthe tool:\n%s",
				 got, a.text);
		free(got);
	}
	answer_release(&a);
	rv_history_free(h);
}

static void test_declarations(void **state)
{
	struct rv_tool_ctx c = ctx();
	struct rv_history *h = NULL;
	struct errmsg err = {""};
	cJSON *o = cJSON_CreateArray(), *an = cJSON_CreateArray();
	const cJSON *d, *f;
	char dir[400];

	assert_int_equal(rv_history_open(&h, repo_path, &err), 0);
	c.hist = h; /* may be NULL when the test runs alone */
	assert_int_equal(
		rv_tools_declare("prompts", &c, RV_PROVIDER_OPENAI, o, &err),
		0);
	assert_int_equal(cJSON_GetArraySize(o), h ? 5 : 4);
	d = cJSON_GetArrayItem(o, 0);
	assert_string_equal(
		cJSON_GetObjectItemCaseSensitive(d, "type")->valuestring,
		"function");
	f = cJSON_GetObjectItemCaseSensitive(d, "function");
	assert_string_equal(
		cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring,
		"read_file");
	assert_true(cJSON_IsString(
		cJSON_GetObjectItemCaseSensitive(f, "description")));
	assert_true(cJSON_IsObject(
		cJSON_GetObjectItemCaseSensitive(f, "parameters")));
	assert_int_equal(rv_tools_declare("prompts", &c, RV_PROVIDER_ANTHROPIC,
					  an, &err),
			 0);
	d = cJSON_GetArrayItem(an, 1);
	assert_string_equal(
		cJSON_GetObjectItemCaseSensitive(d, "name")->valuestring,
		"grep");
	assert_true(cJSON_IsObject(
		cJSON_GetObjectItemCaseSensitive(d, "input_schema")));
	assert_null(cJSON_GetObjectItemCaseSensitive(d, "type"));
	cJSON_Delete(o);
	cJSON_Delete(an);
	rv_history_free(h);

	/* Without a base or an index, only what can be answered. */
	c = ctx();
	c.base = NULL;
	o = cJSON_CreateArray();
	assert_int_equal(
		rv_tools_declare("prompts", &c, RV_PROVIDER_OPENAI, o, &err),
		0);
	assert_int_equal(cJSON_GetArraySize(o), 2);
	assert_false(rv_tool_offered(&c, "log"));
	assert_true(rv_tool_offered(&c, "grep"));
	assert_false(rv_tool_offered(&c, "rm"));

	/* tools.json must declare what quorum answers, as it reads it. */
	snprintf(dir, sizeof(dir), "%s/prompts", tmp);
	sh("mkdir -p prompts && cp '%s/prompts/tools.json' prompts/\n"
	   "sed -i 's/\"name\": \"blame\"/\"name\": \"blam\"/' "
	   "prompts/tools.json\n",
	   getenv("PWD"));
	assert_int_equal(rv_tools_declare(dir, &c, RV_PROVIDER_OPENAI, o, &err),
			 RV_ERR_INPUT);
	assert_string_equal(err.msg, "tools.json declares \"blam\", a tool "
				     "quorum does not answer");
	sh("cp '%s/prompts/tools.json' prompts/\n"
	   "python3 -c 'import json; d = json.load(open(\"prompts/"
	   "tools.json\")); d[\"tools\"].pop(); json.dump(d, "
	   "open(\"prompts/tools.json\", \"w\"))'\n",
	   getenv("PWD"));
	assert_int_equal(rv_tools_declare(dir, &c, RV_PROVIDER_OPENAI, o, &err),
			 RV_ERR_INPUT);
	assert_string_equal(err.msg, "tools.json does not declare similar");
	sh("cp '%s/prompts/tools.json' prompts/\n"
	   "sed -i '0,/\"type\": \"integer\"/s//\"type\": \"string\"/' "
	   "prompts/tools.json\n",
	   getenv("PWD"));
	assert_int_equal(rv_tools_declare(dir, &c, RV_PROVIDER_OPENAI, o, &err),
			 RV_ERR_INPUT);
	assert_string_equal(err.msg, "tools.json: read_file: argument "
				     "start_line must be declared of type "
				     "integer");
	sh("echo '{\"tools\": 1}' >prompts/tools.json\n");
	assert_int_equal(rv_tools_declare(dir, &c, RV_PROVIDER_OPENAI, o, &err),
			 RV_ERR_INPUT);
	assert_int_equal(cJSON_GetArraySize(o), 2); /* left as it was */
	cJSON_Delete(o);
}

/* Resident memory now, in KiB (the peak would hide a slow growth). */
static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* A model that calls a thousand times holds no more than one call. */
static void test_a_thousand_calls_stay_bounded(void **state)
{
	static const struct {
		const char *tool, *args;
	} calls[] = {
		{"read_file", "{\"path\": \"big.txt\"}"},
		{"grep", "{\"pattern\": \"line 9\"}"},
		{"grep",
		 "{\"pattern\": \"^(a+)+$\", \"path_glob\": \"long*\"}"},
		{"log", "{\"path\": \"main.c\", \"function\": \"foo\"}"},
		{"blame",
		 "{\"path\": \"big.txt\", \"start_line\": 1, \"end_line\": "
		 "1000000000}"},
		{"read_file", "{\"path\": \"../../etc/passwd\"}"},
		{"nope", "{}"},
	};
	struct answer a;
	long rss0, rss1;
	double t0 = now();
	size_t i;

	/* Warm up: the first calls fill libgit2's caches. */
	for (i = 0; i < 2 * ARRAY_SIZE(calls); i++) {
		call(&a, calls[i % ARRAY_SIZE(calls)].tool,
		     calls[i % ARRAY_SIZE(calls)].args);
		answer_release(&a);
	}
	rss0 = rss_kb();
	for (i = 0; i < 1000; i++) {
		call(&a, calls[i % ARRAY_SIZE(calls)].tool,
		     calls[i % ARRAY_SIZE(calls)].args);
		assert_true(strlen(a.text) < RV_TOOL_MAX_BYTES + 16384);
		answer_release(&a);
	}
	rss1 = rss_kb();
#ifndef UNDER_ASAN
	/* ASan keeps freed memory in quarantine: only a plain build's
	 * peak says what the calls hold. */
	if (rss1 - rss0 > 16 * 1024)
		fail_msg("memory grew by %ld KiB over 1000 calls", rss1 - rss0);
#endif
	print_message("1000 calls: %.2f s, resident memory %+ld KiB\n",
		      now() - t0, rss1 - rss0);
	assert_true(now() - t0 < 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file_is_the_post_image),
		cmocka_unit_test(test_paths_stay_in_the_tree),
		cmocka_unit_test(test_answers_are_cut_at_the_caps),
		cmocka_unit_test(test_regex_is_bounded),
		cmocka_unit_test(test_bad_arguments_are_tool_errors),
		cmocka_unit_test(test_log_and_blame_read_the_base),
		cmocka_unit_test(test_blame_is_bounded),
		cmocka_unit_test(test_similar_as_quorum_similar_shows),
		cmocka_unit_test(test_declarations),
		cmocka_unit_test(test_a_thousand_calls_stay_bounded),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
