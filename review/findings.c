// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * findings.c - the finding list every voter appends to.
 */
#include <stdlib.h>
#include <string.h>

#include "review.h"

static const char *const severity_names[] = {"low", "medium", "high",
					     "critical"};

const char *rv_severity_name(enum rv_severity s)
{
	if ((unsigned)s >= ARRAY_SIZE(severity_names))
		return "unknown";
	return severity_names[s];
}

int rv_severity_parse(const char *s)
{
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < ARRAY_SIZE(severity_names); i++)
		if (!strcasecmp(s, severity_names[i]))
			return (int)i;
	return -1;
}

void rv_findings_add(struct rv_findings *fs, const struct rv_finding *f)
{
	struct rv_finding *d;
	size_t i;

	ALLOC_GROW(fs->items, fs->n + 1, fs->alloc);
	d = &fs->items[fs->n++];
	*d = *f;
	d->file = xstrdup_or_null(f->file);
	d->function = xstrdup_or_null(f->function);
	d->category = xstrdup_or_null(f->category);
	d->title = xstrdup_or_null(f->title);
	d->explanation = xstrdup_or_null(f->explanation);
	d->quote = xstrdup_or_null(f->quote);
	d->tip_file = xstrdup_or_null(f->tip_file);
	d->voters = NULL;
	if (f->nvoters) {
		d->voters = xcalloc(f->nvoters, sizeof(*d->voters));
		for (i = 0; i < f->nvoters; i++)
			d->voters[i] = xstrdup_or_null(f->voters[i]);
	}
}

void rv_finding_release(struct rv_finding *f)
{
	size_t i;

	free(f->file);
	free(f->tip_file);
	free(f->function);
	free(f->category);
	free(f->title);
	free(f->explanation);
	free(f->quote);
	for (i = 0; i < f->nvoters; i++)
		free(f->voters[i]);
	free(f->voters);
	memset(f, 0, sizeof(*f));
}

void rv_findings_release(struct rv_findings *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		rv_finding_release(&fs->items[i]);
	free(fs->items);
	memset(fs, 0, sizeof(*fs));
}
