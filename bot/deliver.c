// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * deliver.c - get a composed reply out: into a maildir (the outbox), or
 * to a sendmail-compatible command run with argv, never a shell.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <git2.h>
#include <gmime/gmime.h>

#include "deliver.h"

extern char **environ;

/* The file name of msgid in the maildir: stable, so a retry finds it. */
static void outbox_name(const char *msgid, char out[64])
{
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	git_odb_hash(&oid, msgid, strlen(msgid), GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	snprintf(out, 64, "quorum-%s", hex);
}

bool outbox_has(const char *dir, const char *msgid)
{
	char name[64];
	struct sb p = SB_INIT;
	struct stat st;
	DIR *d;
	struct dirent *de;
	bool found;
	size_t nlen;

	outbox_name(msgid, name);
	nlen = strlen(name);
	sb_addf(&p, "%s/new/%s", dir, name);
	found = stat(p.buf, &st) == 0;
	sb_reset(&p);
	sb_addf(&p, "%s/cur", dir);
	/* A mail client moves read mail to cur/NAME:2,FLAGS. */
	if (!found && (d = opendir(p.buf))) {
		while (!found && (de = readdir(d)))
			found = !strncmp(de->d_name, name, nlen) &&
				(de->d_name[nlen] == ':' || !de->d_name[nlen]);
		closedir(d);
	}
	sb_release(&p);
	return found;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Remove tmp/NAME.* left by a delivery that was killed half-way. */
static void remove_stale_tmp(const char *dir, const char *name)
{
	struct sb p = SB_INIT;
	size_t nlen = strlen(name);
	struct dirent *de;
	DIR *d;

	sb_addf(&p, "%s/tmp", dir);
	d = opendir(p.buf);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, name, nlen) || de->d_name[nlen] != '.')
			continue;
		sb_reset(&p);
		sb_addf(&p, "%s/tmp/%s", dir, de->d_name);
		unlink(p.buf);
	}
	if (d)
		closedir(d);
	sb_release(&p);
}

int deliver_outbox(const char *dir, const char *msgid, const char *raw,
		   size_t len, const char *held_reason, struct errmsg *err)
{
	char name[64];
	struct sb tmp = SB_INIT, dst = SB_INIT, sub = SB_INIT, hdr = SB_INIT;
	int fd = -1, ret = -1;
	const char *sd[] = {"tmp", "new", "cur"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sd); i++) {
		sb_reset(&sub);
		sb_addf(&sub, "%s/%s", dir, sd[i]);
		if (mkdir_parents(sub.buf, true) < 0) {
			errmsg_set(err, -1, "cannot create outbox %s: %s",
				   sub.buf, strerror(errno));
			goto out;
		}
	}
	outbox_name(msgid, name);
	remove_stale_tmp(dir, name);
	if (outbox_has(dir, msgid)) {
		ret = 0;
		goto out;
	}
	sb_addf(&tmp, "%s/tmp/%s.%ld", dir, name, (long)getpid());
	sb_addf(&dst, "%s/new/%s", dir, name);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		errmsg_set(err, -1, "cannot write %s: %s", tmp.buf,
			   strerror(errno));
		goto out;
	}
	if (held_reason) {
		const char *c;

		/* One line of printable text: no header injection. */
		sb_adds(&hdr, "X-Quorum-Held: ");
		for (c = held_reason; *c && hdr.len < 900; c++)
			sb_addch(&hdr, (unsigned char)*c < 0x20 ? ' ' : *c);
		sb_addch(&hdr, '\n');
	}
	if (write_all(fd, hdr.buf ? hdr.buf : "", hdr.len) < 0 ||
	    write_all(fd, raw, len) < 0 || fsync(fd) < 0) {
		errmsg_set(err, -1, "cannot write %s: %s", tmp.buf,
			   strerror(errno));
		unlink(tmp.buf);
		goto out;
	}
	close(fd);
	fd = -1;
	/* link() never replaces: a racing or earlier copy wins. */
	if (link(tmp.buf, dst.buf) < 0 && errno != EEXIST) {
		errmsg_set(err, -1, "cannot move %s into new/: %s", tmp.buf,
			   strerror(errno));
		unlink(tmp.buf);
		goto out;
	}
	unlink(tmp.buf);
	sb_reset(&sub);
	sb_addf(&sub, "%s/new", dir);
	fsync_dir(sub.buf);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	sb_release(&tmp);
	sb_release(&dst);
	sb_release(&sub);
	sb_release(&hdr);
	return ret;
}

int deliver_command(char *const argv[], const char *raw, size_t len,
		    struct errmsg *err)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], status = 0, ret = -1;
	pid_t pid;
	void (*old)(int);

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return errmsg_set(err, -1, "cannot make a pipe: %s",
				  strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[0], STDIN_FILENO);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		errmsg_set(err, -1, "cannot run %s: %s", argv[0],
			   strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[0]);
	old = signal(SIGPIPE, SIG_IGN);
	if (write_all(pfd[1], raw, len) < 0)
		errmsg_set(err, -1, "%s did not read the whole message",
			   argv[0]);
	else
		ret = 0;
	close(pfd[1]);
	signal(SIGPIPE, old);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errmsg_set(err, -1, "cannot wait for %s",
					  argv[0]);
	if (ret < 0)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return errmsg_set(err, -1, "%s exited with status %d", argv[0],
				  WEXITSTATUS(status));
	return errmsg_set(err, -1, "%s was killed by signal %d", argv[0],
			  WTERMSIG(status));
}

void argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int argv_split(const char *cmd, char ***out)
{
	char **argv = NULL;
	size_t n = 0, alloc = 0;
	struct sb word = SB_INIT;
	const char *p = cmd;

	*out = NULL;
	while (*p) {
		bool have = false;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		sb_reset(&word);
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\'' || *p == '"') {
				char q = *p++;

				while (*p && *p != q)
					sb_addch(&word, *p++);
				if (!*p)
					goto fail;
				p++;
			} else {
				sb_addch(&word, *p++);
			}
			have = true;
		}
		if (!have)
			continue;
		ALLOC_GROW(argv, n + 2, alloc);
		argv[n++] = xstrdup_or_null(sb_str(&word));
		argv[n] = NULL;
	}
	sb_release(&word);
	if (!n)
		return -1;
	*out = argv;
	return 0;
fail:
	sb_release(&word);
	if (argv)
		argv[n] = NULL;
	argv_free(argv);
	return -1;
}

/* ---- SMTP (libcurl) ----------------------------------------------------- */

struct upload {
	const char *data;
	size_t len, off;
};

static size_t upload_read(char *buf, size_t size, size_t n, void *arg)
{
	struct upload *u = arg;
	size_t want = size * n, left = u->len - u->off;

	if (want > left)
		want = left;
	memcpy(buf, u->data + u->off, want);
	u->off += want;
	return want;
}

/* The envelope: every To and Cc address of the message, via GMime. */
static struct curl_slist *envelope_rcpts(const char *raw, size_t len)
{
	GMimeStream *st = g_mime_stream_mem_new_with_buffer(raw, len);
	GMimeParser *p = g_mime_parser_new_with_stream(st);
	GMimeMessage *m = g_mime_parser_construct_message(p, NULL);
	struct curl_slist *rcpts = NULL;
	InternetAddressList *all;
	int i, n;

	g_object_unref(p);
	g_object_unref(st);
	if (!m)
		return NULL;
	all = g_mime_message_get_all_recipients(m);
	n = all ? internet_address_list_length(all) : 0;
	for (i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(all, i);
		struct sb s = SB_INIT;

		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		sb_addf(&s, "<%s>",
			internet_address_mailbox_get_addr(
				INTERNET_ADDRESS_MAILBOX(a)));
		rcpts = curl_slist_append(rcpts, s.buf);
		sb_release(&s);
	}
	if (all)
		g_object_unref(all);
	g_object_unref(m);
	return rcpts;
}

int deliver_smtp(const struct smtp_opts *o, const char *raw, size_t len,
		 struct errmsg *err)
{
	struct upload u = {raw, len, 0};
	struct curl_slist *rcpts = envelope_rcpts(raw, len);
	char cerr[CURL_ERROR_SIZE] = "";
	struct sb from = SB_INIT;
	CURL *c = NULL;
	CURLcode rc;
	int ret = -1;

	if (!rcpts) {
		errmsg_set(err, -1, "the reply has no recipient");
		goto out;
	}
	c = curl_easy_init();
	if (!c) {
		errmsg_set(err, -1, "cannot start libcurl");
		goto out;
	}
	sb_addf(&from, "<%s>", o->mail_from);
	curl_easy_setopt(c, CURLOPT_URL, o->url);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.buf);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpts);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, upload_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &u);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	/* STARTTLS is required unless the config says otherwise. */
	curl_easy_setopt(c, CURLOPT_USE_SSL,
			 o->starttls ? (long)CURLUSESSL_ALL
				     : (long)CURLUSESSL_NONE);
	if (o->user)
		curl_easy_setopt(c, CURLOPT_USERNAME, o->user);
	if (o->password)
		curl_easy_setopt(c, CURLOPT_PASSWORD, o->password);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		/* curl's message may echo the server; never our password. */
		struct sb url = SB_INIT;

		sb_add_url_shown(&url, o->url);
		errmsg_set(err, -1, "SMTP to %s failed: %s", sb_str(&url),
			   *cerr ? cerr : curl_easy_strerror(rc));
		sb_release(&url);
		goto out;
	}
	ret = 0;
out:
	curl_slist_free_all(rcpts);
	if (c)
		curl_easy_cleanup(c);
	sb_release(&from);
	return ret;
}
