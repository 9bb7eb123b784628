// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-fingerprint.c - a finding mailed in full once is named in one
 * line in the replies to later versions of the series: findings are
 * known across versions by a fingerprint of what they are about.
 */
#include <ctype.h>
#include <string.h>

#include <git2.h>

#include "watch.h"

/*
 * What a finding is across versions of a series: the list, the
 * author, the file, the function, the category and the quoted code with
 * whitespace runs collapsed (the title when nothing is quoted); not the
 * line numbers or the patch, which move when other hunks change.
 */
static void finding_fingerprint(const char *list, const char *author,
				const struct rv_finding *f,
				char out[RV_OID_HEXSZ + 1])
{
	const char *code = f->quote && *f->quote ? f->quote : f->title;
	struct sb in = SB_INIT;
	git_oid oid;
	bool blank = false;

	sb_addf(&in, "%s\n", list);
	for (; author && *author; author++)
		sb_addch(&in, (char)tolower((unsigned char)*author));
	sb_addf(&in, "\n%s\n%s\n%s\n", f->file ? f->file : "",
		f->function ? f->function : "", f->category ? f->category : "");
	for (; code && *code; code++) {
		if (isspace((unsigned char)*code)) {
			blank = true;
			continue;
		}
		if (blank && in.len && in.buf[in.len - 1] != '\n')
			sb_addch(&in, ' ');
		blank = false;
		sb_addch(&in, *code);
	}
	git_odb_hash(&oid, in.buf, in.len, GIT_OBJECT_BLOB);
	git_oid_tostr(out, RV_OID_HEXSZ + 1, &oid);
	sb_release(&in);
}

int mailed_findings_get(struct thread_ctx *t, const char *key,
			const struct mp_series *s, const struct rv_review *r,
			struct mailed_findings *mf)
{
	const struct mp_patch *parent = mp_series_first(s);
	size_t i;

	memset(mf, 0, sizeof(*mf));
	mf->version = s->version > 0 ? s->version : 1;
	mf->title = mp_series_title(s);
	if (!r || !r->findings.n)
		return 0;
	mf->n = r->findings.n;
	mf->fp = xcalloc(mf->n, sizeof(*mf->fp));
	mf->rows = xcalloc(mf->n, sizeof(*mf->rows));
	mf->earlier = xcalloc(mf->n, sizeof(*mf->earlier));
	for (i = 0; i < mf->n; i++) {
		int rc;

		finding_fingerprint(t->l->name, parent->author_email,
				    &r->findings.items[i], mf->fp[i]);
		rc = state_fingerprint_get(
			t->w->st, mf->fp[i], key,
			t->w->now - FINDINGS_KEPT_DAYS * 86400LL, &mf->rows[i]);
		if (rc < 0)
			return -1;
		if (!rc || !mp_msgid_valid(mf->rows[i].reply_msgid))
			continue;
		mf->earlier[i].msgid = mf->rows[i].reply_msgid;
		mf->earlier[i].version = mf->rows[i].version;
		mf->earlier[i].title = mf->rows[i].title;
		mf->repeated++;
	}
	return 0;
}

void mailed_findings_release(struct mailed_findings *mf)
{
	free(mf->fp);
	free(mf->rows);
	free(mf->earlier);
}

int mailed_findings_add(struct thread_ctx *t, const char *key,
			const char *msgid, const struct mailed_findings *mf)
{
	struct watch *w = t->w;
	size_t i;

	for (i = 0; i < mf->n; i++)
		if (!mf->earlier[i].msgid &&
		    state_fingerprint_add(w->st, mf->fp[i], t->l->name, key,
					  msgid, mf->version, mf->title, w->now,
					  w->now - FINDINGS_KEPT_DAYS *
							   86400LL) < 0)
			return -1;
	if (!mf->n)
		return 0;
	return state_fingerprints_prune(w->st, t->l->name,
					w->now - FINDINGS_KEPT_DAYS * 86400LL,
					FINDINGS_KEPT_MAX);
}
