/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - a review report in one of the output formats
 * (bot/report-json.c). Reviews are added one by one and the document is
 * written at the end (SARIF lists its rules before the results).
 */
#ifndef QUORUM_REPORT_H
#define QUORUM_REPORT_H

#include <stdio.h>

#include "review/review.h"

enum report_format { FMT_TEXT, FMT_JSON, FMT_SARIF, FMT_EMAIL };

/* "text", "json", "sarif" or "email"; -1 when unknown. */
int report_format_parse(const char *s);

/*
 * One line of mail text for a terminal, by sb_add_visible() (tab kept):
 * a newline, an escape, a C1 or bidi control is shown as \n, \e,
 * <U+009B>, <U+202E>, never acted on. text_clean returns buf's text (buf
 * is reset first); fput_clean writes it to f.
 */
const char *text_clean(struct sb *buf, const char *s);
void fput_clean(const char *s, FILE *f);
/*
 * A JSON document (cJSON's output) to f, by sb_add_json_visible(): the
 * exact values, with what a terminal would act on as \u escapes.
 */
void fput_json(const char *doc, FILE *f);

/*
 * A stream (line-buffered) that writes what it is given to under with
 * sb_add_visible() (newlines and tabs kept), a UTF-8 character split
 * across writes kept whole: for a log whose every line may carry mail
 * text. fclose() it to flush; under stays open. NULL when it cannot be
 * made.
 */
FILE *visible_stream_open(FILE *under);

struct report;
/* NULL when memory ran out. Caller frees with report_free(). */
struct report *report_new(enum report_format fmt);
void report_add(struct report *rp, const struct rv_review *r);
/*
 * The same for a review of commits ids[0..n) (`ci`: a run of commits
 * reviewed as one series, oldest first, patch k being ids[k]): the
 * reports say which.
 */
void report_add_commits(struct report *rp, const struct rv_review *r,
			const char (*ids)[RV_OID_HEXSZ + 1], size_t n);
/* A commit `ci` left out of the review (risk < 0: unknown). */
void report_skip(struct report *rp, const char *commit, const char *title,
		 double risk);
/*
 * FMT_EMAIL: the From: and Message-ID domain of the replies (borrowed;
 * NULL: quorum@quorum.invalid), as `quorum watch` has them.
 */
void report_set_email(struct report *rp, const char *from, const char *domain);
/*
 * Write to path (NULL or "-": stdout). 0, -1 with err when it cannot be
 * written, or REPORT_ERR_INPUT with err when the input gave no document
 * (FMT_EMAIL: a series whose Message-ID no reply can name); then nothing
 * is written.
 */
#define REPORT_ERR_INPUT (-2)
int report_write(struct report *rp, const char *path, struct errmsg *err);
void report_free(struct report *rp);

#endif
