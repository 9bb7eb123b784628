// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dry-run.c - what a review would send and what it may cost, printed
 * instead of sent. See dry-run.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dry-run.h"
#include "report.h"

static struct dry_voter *voter_of(struct dry_run *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nv; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	ALLOC_GROW(d->v, d->nv + 1, d->alloc);
	memset(&d->v[d->nv], 0, sizeof(d->v[0]));
	d->v[d->nv].name = xstrdup_or_null(name);
	return &d->v[d->nv++];
}

/* A file name part from a voter's name (config, not trusted). */
static void safe_name(const char *s, char *out, size_t n)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < n && i < 40; i++)
		out[i] = (s[i] >= 'a' && s[i] <= 'z') ||
					 (s[i] >= 'A' && s[i] <= 'Z') ||
					 (s[i] >= '0' && s[i] <= '9') ||
					 s[i] == '-' || s[i] == '_'
				 ? s[i]
				 : '_';
	out[i] = '\0';
}

static int write_body(const char *dir, size_t n, const char *voter,
		      const char *body, char *path, size_t pathsz,
		      struct errmsg *err)
{
	char name[48];
	size_t len = strlen(body), off = 0;
	int fd;

	safe_name(voter, name, sizeof(name));
	snprintf(path, pathsz, "%s/%04zu-%s.json", dir, n, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return errmsg_set(err, -1, "cannot write %s: %s", path,
				  strerror(errno));
	while (off < len) {
		ssize_t w = write(fd, body + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return errmsg_set(err, -1, "cannot write %s: %s", path,
					  strerror(errno));
		}
		off += (size_t)w;
	}
	if (write(fd, "\n", 1) != 1 || close(fd) < 0)
		return errmsg_set(err, -1, "cannot write %s: %s", path,
				  strerror(errno));
	return 0;
}

void dry_run_say(struct dry_run *d, FILE *out)
{
	if (d->said)
		return;
	fputs("dry run: no request is sent to the models; only their "
	      "free token counters (Anthropic's count_tokens, "
	      "/tokenize) may be asked\n",
	      out);
	d->said = true;
}

/* A URL without its credentials (user:password@, key=...). */
static void fput_url(const char *url, FILE *out)
{
	struct sb u = SB_INIT;

	sb_add_url_shown(&u, url);
	fputs(sb_str(&u), out);
	sb_release(&u);
}

/*
 * The requests the review would not send either: a voter left out of a
 * patch (over its context budget, no boundary, ...), one line each.
 */
static void add_left_out(struct dry_run *d, const struct rv_review *r,
			 FILE *out)
{
	const struct mp_series *s = r->series;
	size_t i;

	for (i = 0; i < r->ncalls; i++) {
		const struct rv_llm_call *c = &r->calls[i];
		const struct mp_patch *p;

		if (c->answered || !c->reason || c->budget || c->breaker)
			continue;
		voter_of(d, c->voter)->left_out++;
		d->nleft_out++;
		fputs("not sent: voter ", out);
		fput_clean(c->voter, out);
		p = c->patch >= 0 && (size_t)c->patch < s->npatches
			    ? s->patches[c->patch]
			    : NULL;
		if (p)
			fprintf(out, ", patch %d/%d: ",
				p->subject.index ? p->subject.index
						 : c->patch + 1,
				s->total > 0 ? s->total : (int)s->npatches);
		else
			fputs(", the series tip: ", out);
		fput_clean(c->reason, out);
		fputs("; the voter abstains there\n", out);
	}
}

int dry_run_add(struct dry_run *d, const struct rv_review *r, FILE *out,
		struct errmsg *err)
{
	char path[4096];
	size_t i;

	if (d->dir && mkdir(d->dir, 0700) < 0 && errno != EEXIST)
		return errmsg_set(err, -1, "cannot make %s: %s", d->dir,
				  strerror(errno));
	dry_run_say(d, out);
	if (r->plan.made && r->plan.text) {
		fputs("plan: ", out);
		fput_clean(r->plan.text, out);
		fputc('\n', out);
	}
	for (i = 0; i < r->ndry; i++) {
		const struct rv_dry_request *q = &r->dry[i];
		struct dry_voter *v = voter_of(d, q->voter);

		d->n++;
		v->n++;
		v->worst += q->worst;
		v->estimate += q->estimate;
		fprintf(out, "request %zu: voter ", d->n);
		fput_clean(q->voter, out);
		fputs(", patch ", out);
		fput_clean(q->label, out);
		fputs(", POST ", out);
		fput_url(q->url, out);
		fprintf(out,
			"\n  input: %ld tokens at most (%s; %zu bytes), "
			"max-tokens %d: at most $%.4f, about $%.4f%s\n",
			q->tokens_in,
			q->counted ? "counted by the voter's counter"
				   : "a token per byte, no counter",
			q->bytes, q->max_tokens, q->worst, q->estimate,
			q->planned ? "" : " (not in the plan: over budget)");
		if (d->dir) {
			if (write_body(d->dir, d->n, q->voter, q->body, path,
				       sizeof(path), err) < 0)
				return -1;
			fprintf(out, "  body: %s\n", path);
		} else {
			/* JSON on one line: exact, with C1 and bidi escaped. */
			fput_json(q->body, out);
			fputc('\n', out);
		}
	}
	add_left_out(d, r, out);
	return 0;
}

void dry_run_finish(const struct dry_run *d, FILE *out)
{
	double worst = 0, est = 0;
	size_t i;

	for (i = 0; i < d->nv; i++) {
		fputs("voter ", out);
		fput_clean(d->v[i].name, out);
		fprintf(out, ": %zu request%s, at most $%.4f, about $%.4f",
			d->v[i].n, d->v[i].n == 1 ? "" : "s", d->v[i].worst,
			d->v[i].estimate);
		if (d->v[i].left_out)
			fprintf(out, "; %zu not sent (see above)",
				d->v[i].left_out);
		fputc('\n', out);
		worst += d->v[i].worst;
		est += d->v[i].estimate;
	}
	fprintf(out,
		"total: %zu request%s, at most $%.4f, about $%.4f; "
		"nothing was sent\n",
		d->n, d->n == 1 ? "" : "s", worst, est);
	if (d->nleft_out)
		fprintf(out,
			"%zu more request%s would not be sent: a real run "
			"reviews without %s\n",
			d->nleft_out, d->nleft_out == 1 ? "" : "s",
			d->nleft_out == 1 ? "it" : "them");
}

void dry_run_release(struct dry_run *d)
{
	size_t i;

	for (i = 0; i < d->nv; i++)
		free(d->v[i].name);
	free(d->v);
	memset(d, 0, sizeof(*d));
}
