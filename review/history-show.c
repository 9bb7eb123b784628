// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-show.c - similar past bug/fix pairs as text: what `quorum
 * similar` prints and what the similar tool answers a model, one text
 * so the two never drift apart.
 */
#include <string.h>

#include "review.h"

/* s cleaned for a terminal (mail and history are hostile). */
static void add_clean(struct sb *out, const char *s)
{
	sb_add_clean(out, s, false);
}

void rv_similar_format(const struct rv_similar_list *l, struct sb *out)
{
	size_t i, j;

	if (!l->n) {
		sb_adds(out, "  nothing similar in the history index\n");
		return;
	}
	for (i = 0; i < l->n; i++) {
		const struct rv_similar *s = &l->items[i];
		bool revert = !strcmp(s->kind, "revert");

		sb_addf(out, "%zu. score %.2f  %s  (names %.2f, shape %.2f)\n",
			i + 1, s->score, revert ? "reverted" : "fixed",
			s->lexical, s->shape);
		sb_addf(out, "   bug  %.12s ", s->bug_id);
		add_clean(out, s->bug_subject);
		sb_addf(out, "\n   %s  %.12s ", revert ? "rev" : "fix",
			s->fix_id);
		add_clean(out, s->fix_subject);
		sb_adds(out, "\n   in ");
		add_clean(out, s->file ? s->file : "?");
		if (s->function) {
			sb_adds(out, ", ");
			add_clean(out, s->function);
			sb_adds(out, "()");
		}
		sb_adds(out, s->same_function ? " (same function)"
			     : s->same_file   ? " (same file)"
					      : "");
		sb_addch(out, '\n');
		/* The renaming that maps the patch's code onto the past. */
		if (s->renaming) {
			sb_adds(out, "   renaming ");
			add_clean(out, s->renaming);
			sb_addch(out, '\n');
		}
		if (s->has_fix)
			sb_adds(out,
				"   the patch also has what the fix added\n");
		for (j = 0; j < s->nmatches; j++) {
			const struct rv_similar_match *m = &s->matches[j];

			sb_adds(out, "   + ");
			add_clean(out, m->file ? m->file : "?");
			sb_addf(out, ":%d: ", m->new_no);
			add_clean(out, m->patch_line);
			sb_addf(out, "\n   ~ %s%s: ",
				m->fix_removed ? "removed by the fix"
				: m->fix_site  ? "where the fix added code"
				: m->by_shape  ? "past code"
					       : "added by the bug",
				m->by_shape ? " (same shape)" : "");
			add_clean(out, m->past_line);
			sb_addch(out, '\n');
		}
	}
}
