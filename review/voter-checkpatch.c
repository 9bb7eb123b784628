// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * voter-checkpatch.c - the `checkpatch` voter: the tree's own style checker
 * (scripts/checkpatch.pl, as in Linux, or devtools/checkpatches.sh, as
 * in DPDK) run on the patch, its complaints mapped to file:line.
 *
 * The checker is the tree's code, the patch is a stranger's: the patch
 * goes in a private temporary file, the checker runs from argv (no
 * shell), with a time limit and a cap on what it may print.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "review.h"

#define CHECKPATCH_TIMEOUT_MS 30000
#define CHECKPATCH_MAX_OUTPUT ((size_t)1 << 20)
#define CHECKPATCH_MAX_FINDINGS 20

static bool is_file(const char *dir, const char *rel, struct sb *path)
{
	struct stat st;

	sb_reset(path);
	sb_addf(path, "%s%s%s", dir,
		dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
	return stat(sb_str(path), &st) == 0 && S_ISREG(st.st_mode);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Run argv in dir with no input, collecting stdout into out (capped).
 * Returns the exit status (>= 0), or -1 when it could not run or was
 * killed at the time limit.
 */
static int run_capture(char *const argv[], const char *dir, struct sb *out,
		       int timeout_ms)
{
	int pipefd[2], status = 0, ret = -1;
	long long deadline = now_ms() + timeout_ms;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 ||
		    dup2(null, 2) < 0 || chdir(dir) < 0)
			_exit(127);
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = {pipefd[0], POLLIN, 0};
		long long left = deadline - now_ms();
		char buf[8192];
		ssize_t n;

		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			break;
		}
		if (!pfd.revents)
			continue;
		n = read(pipefd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = 0;
			break;
		}
		/* Past the cap the rest is read and dropped. */
		sb_add(out, buf, (size_t)n);
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret == 0 && WIFEXITED(status))
		return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
	return -1;
}

/* The patch as a mail checkpatch understands: subject, message, diff. */
static void patch_text(const struct mp_patch *p, struct sb *out)
{
	const char *msg = p->commit_message ? p->commit_message : "";
	const char *body = strchr(msg, '\n');

	sb_addf(out, "From: %s\nSubject: [PATCH] %s\n\n",
		p->from ? p->from : "unknown <unknown@example.org>",
		p->subject.title ? p->subject.title
		: p->subject_raw ? p->subject_raw
				 : "(no subject)");
	if (body)
		sb_adds(out, body + 1);
	sb_adds(out, "\n---\n");
	sb_add(out, p->diff, p->diff_len);
}

/*
 * Parse checkpatch's report:
 *   WARNING: Missing a blank line after declarations
 *   #22: FILE: main.c:12:
 */
static void parse_report(const char *text, const char *name,
			 const struct rv_context *ctx, struct rv_findings *out)
{
	const char *voters[1] = {name};
	const char *p = text;
	char *level = NULL, *msg = NULL;
	size_t raised = 0;

	while (*p && raised < CHECKPATCH_MAX_FINDINGS) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *f;

		if (len > 9 && (!strncmp(p, "ERROR: ", 7) ||
				!strncmp(p, "WARNING: ", 9))) {
			free(level);
			free(msg);
			level = xstrndup(p, *p == 'E' ? 5 : 7);
			msg = xstrndup(p + strlen(level) + 2,
				       len - strlen(level) - 2 > 300
					       ? 300
					       : len - strlen(level) - 2);
		} else if (msg && len > 1 && *p == '#' &&
			   (f = strstr(p, ": FILE: ")) && f < p + len) {
			/* "#22: FILE: path:12:" - the path may hold colons. */
			const char *path = f + 8, *end = p + len, *colon;
			int lineno = 0;

			while (end > path && end[-1] == ':')
				end--;
			colon = end;
			while (colon > path && colon[-1] != ':')
				colon--;
			if (colon > path + 1) {
				struct rv_finding fi = {0};
				char *file = xstrndup(
					path, (size_t)(colon - 1 - path));

				lineno = atoi(colon);
				fi.patch = ctx->patch_index;
				fi.file = file;
				fi.line_start = fi.line_end = lineno;
				fi.severity = level[0] == 'E' ? RV_SEV_MEDIUM
							      : RV_SEV_LOW;
				fi.category = (char *)"style";
				fi.title = msg;
				fi.explanation = NULL;
				fi.voters = (char **)voters;
				fi.nvoters = 1;
				if (lineno > 0) {
					rv_findings_add(out, &fi);
					raised++;
				}
				free(file);
			}
			free(msg);
			msg = NULL;
		}
		p = nl ? nl + 1 : p + len;
	}
	free(level);
	free(msg);
}

bool rv_checkpatch_present(const char *workdir)
{
	struct sb path = SB_INIT;
	bool yes;

	yes = workdir && (is_file(workdir, "scripts/checkpatch.pl", &path) ||
			  is_file(workdir, "devtools/checkpatches.sh", &path));
	sb_release(&path);
	return yes;
}

char *rv_workdir_of(const char *path)
{
	git_repository *repo = NULL;
	char *wd = NULL;

	if (git_repository_open_ext(&repo, path, 0, NULL) == 0 &&
	    git_repository_workdir(repo))
		wd = xstrdup_or_null(git_repository_workdir(repo));
	git_repository_free(repo);
	return wd;
}

static int checkpatch_review(const struct rv_voter *v,
			     const struct rv_context *ctx,
			     struct rv_findings *out, struct errmsg *err)
{
	struct sb script = SB_INIT, text = SB_INIT, report = SB_INIT;
	struct sb tmp = SB_INIT;
	int fd = -1, rc;
	bool dpdk = false;

	if (!ctx->workdir || !ctx->patch || !ctx->patch->diff)
		return 0;
	if (!is_file(ctx->workdir, "scripts/checkpatch.pl", &script)) {
		if (!is_file(ctx->workdir, "devtools/checkpatches.sh", &script))
			goto out; /* the tree has no checker: abstain */
		dpdk = true;
	}
	/* Library code reads no environment: P_tmpdir, not $TMPDIR. */
	sb_addf(&tmp, "%s/quorum-checkpatch-XXXXXX", P_tmpdir);
	fd = mkstemp(tmp.buf);
	if (fd < 0)
		goto out;
	patch_text(ctx->patch, &text);
	if (write(fd, text.buf, text.len) != (ssize_t)text.len) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "checkpatch: cannot write a temporary file");
		goto out;
	}
	sb_init(&report, CHECKPATCH_MAX_OUTPUT);
	if (dpdk) {
		char *argv[] = {(char *)"sh", script.buf, tmp.buf, NULL};

		rc = run_capture(argv, ctx->workdir, &report,
				 CHECKPATCH_TIMEOUT_MS);
	} else {
		char *argv[] = {
			(char *)"perl",		script.buf, (char *)"--no-tree",
			(char *)"--no-summary", tmp.buf,    NULL};

		rc = run_capture(argv, ctx->workdir, &report,
				 CHECKPATCH_TIMEOUT_MS);
	}
	/* 0 clean, 1 complaints; anything else: the checker itself failed. */
	if (rc == 0 || rc == 1)
		parse_report(sb_str(&report), v->name, ctx, out);
	else
		errmsg_set(err, RV_ERR_INTERNAL,
			   "checkpatch: %s did not run to completion",
			   sb_str(&script));
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp.buf);
	}
	sb_release(&tmp);
	sb_release(&script);
	sb_release(&text);
	sb_release(&report);
	return 0;
}

const struct rv_voter rv_voter_checkpatch = {"checkpatch", 1.0,
					     checkpatch_review, NULL};
