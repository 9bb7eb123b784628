// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: raw bytes -> rv_diff_parse() -> the rules voter ->
 * rv_diff_free(), and rv_source_function() over the raw bytes. Also checks the
 * parser's promises: every line of every hunk has the origin and numbering the
 * hunk header declares.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "review/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_hunks(const struct rv_diff *d)
{
	size_t i, j, k;

	for (i = 0; i < d->nfiles; i++) {
		const struct rv_file *f = &d->files[i];

		if (!f->old_path && !f->new_path)
			abort();
		for (j = 0; j < f->nhunks; j++) {
			const struct rv_hunk *h = &f->hunks[j];
			int old_no = h->old_start, new_no = h->new_start;
			int olds = 0, news = 0;

			for (k = 0; k < h->nlines; k++) {
				const struct rv_line *l = &h->lines[k];

				if (l->origin != '+') {
					if (l->old_no != old_no++)
						abort();
					olds++;
				}
				if (l->origin != '-') {
					if (l->new_no != new_no++)
						abort();
					news++;
				}
				if (!l->text)
					abort();
			}
			if (olds != h->old_lines || news != h->new_lines)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rv_diff *d = NULL;
	struct rv_findings fs = {NULL, 0, 0};
	struct rv_context ctx = {0};
	struct errmsg err;
	char fn[64];
	size_t i, j;

	/* the input as a source file, too */
	for (i = 1; i < 64; i += 7)
		rv_source_function((const char *)data, size, (int)i, fn,
				   sizeof(fn));
	if (rv_diff_parse(&d, (const char *)data, size, &err) != 0) {
		if (d)
			abort();
		return 0;
	}
	check_hunks(d);
	for (i = 0; i < d->nfiles; i++)
		for (j = 0; j < d->files[i].nhunks; j++)
			if (d->files[i].hunks[j].nlines)
				rv_hunk_function(&d->files[i].hunks[j],
						 d->files[i].hunks[j].nlines -
							 1,
						 fn, sizeof(fn));
	ctx.diff = d;
	ctx.pre_tree = "";
	ctx.post_tree = "";
	rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err);
	for (i = 0; i < fs.n; i++)
		if (fs.items[i].line_start > fs.items[i].line_end ||
		    !fs.items[i].quote || !fs.items[i].file)
			abort();
	rv_findings_release(&fs);
	rv_diff_free(d);
	return 0;
}
