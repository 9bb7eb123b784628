// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * classify-model.c - an L2-regularised logistic regression fitted by
 * Newton's method on standardised features (a dozen columns, tens of
 * thousands of rows: milliseconds), its threshold, the AUC, and the
 * subject words the features read.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify-int.h"
#include "linsolve.h"

#define L2 1.0
#define NEWTON_ITERS 25

const char *const cl_feature_names[CF_N] = {
	"fixes",    "shipped",	 "unshipped", "subject-fix", "subject-feature",
	"cleanup",  "revert",	 "docs",      "files",	     "bytes",
	"dir-rate", "file-rate", "words",
};

static double sigmoid(double z)
{
	if (z > 35)
		return 1;
	if (z < -35)
		return 0;
	return 1 / (1 + exp(-z));
}

double cl_model_prob(const struct cl_model *m, const double x[CF_N])
{
	double z = m->w[CF_N];
	size_t j;

	if (!m->ok)
		return -1;
	for (j = 0; j < CF_N; j++)
		z += m->w[j] * (x[j] - m->mean[j]) / m->sd[j];
	return sigmoid(z);
}

void cl_model_terms(const struct cl_model *m, const double x[CF_N],
		    double t[CF_N])
{
	size_t j;

	for (j = 0; j < CF_N; j++)
		t[j] = m->ok ? m->w[j] * (x[j] - m->mean[j]) / m->sd[j] : 0;
}

double cl_calibrate(double p, double thr)
{
	if (p < 0)
		return 0;
	if (thr <= 0 || thr >= 1)
		return p;
	if (p < thr)
		return 0.5 * p / thr;
	return 0.5 + 0.5 * (p - thr) / (1 - thr);
}

void cl_model_fit(struct cl_model *m, const double *X, const int *y, size_t n)
{
	enum { D = CF_N + 1 };
	double H[D * D], g[D], *p;
	size_t i, j, k, it, pos = 0;
	double best_f1 = -1, lo = 0.5, hi = 0.5;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++)
		pos += y[i] != 0;
	m->rows = n;
	if (n < 20 || pos < 3 || pos == n)
		return;
	m->base = (double)pos / (double)n;
	for (j = 0; j < CF_N; j++) {
		double s = 0, ss = 0;

		for (i = 0; i < n; i++)
			s += X[i * CF_N + j];
		m->mean[j] = s / (double)n;
		for (i = 0; i < n; i++) {
			double d = X[i * CF_N + j] - m->mean[j];

			ss += d * d;
		}
		m->sd[j] = sqrt(ss / (double)n);
		if (!(m->sd[j] > 1e-9))
			m->sd[j] = 1; /* a constant column: weight stays ~0 */
	}
	m->w[CF_N] = log(m->base / (1 - m->base));
	m->ok = true;
	p = xcalloc(n, sizeof(*p));
	for (it = 0; it < NEWTON_ITERS; it++) {
		double step = 0;

		memset(H, 0, sizeof(H));
		memset(g, 0, sizeof(g));
		for (i = 0; i < n; i++) {
			double z[D], pi, wi;

			for (j = 0; j < CF_N; j++)
				z[j] = (X[i * CF_N + j] - m->mean[j]) /
				       m->sd[j];
			z[CF_N] = 1;
			pi = cl_model_prob(m, X + i * CF_N);
			wi = pi * (1 - pi);
			for (j = 0; j < D; j++) {
				g[j] += (y[i] - pi) * z[j];
				for (k = 0; k <= j; k++)
					H[j * D + k] += wi * z[j] * z[k];
			}
		}
		for (j = 0; j < D; j++)
			for (k = 0; k < j; k++)
				H[k * D + j] = H[j * D + k];
		for (j = 0; j < CF_N; j++) {
			H[j * D + j] += L2;
			g[j] -= L2 * m->w[j];
		}
		H[CF_N * D + CF_N] += 1e-6;
		if (rv_linsolve(H, g, D) < 0)
			break;
		for (j = 0; j < D; j++) {
			m->w[j] += g[j];
			step += fabs(g[j]);
		}
		if (step < 1e-6)
			break;
	}
	/* The threshold with the best F1 on the training rows. */
	for (i = 0; i < n; i++)
		p[i] = cl_model_prob(m, X + i * CF_N);
	for (k = 1; k < 100; k++) {
		double thr = k / 100.0, tp = 0, fp = 0, f1;

		for (i = 0; i < n; i++)
			if (p[i] >= thr) {
				tp += y[i] != 0;
				fp += y[i] == 0;
			}
		f1 = tp > 0 ? 2 * tp / (2 * tp + fp + ((double)pos - tp)) : 0;
		if (f1 > best_f1 + 1e-12) {
			best_f1 = f1;
			lo = hi = thr;
		} else if (f1 > best_f1 - 1e-12) {
			hi = thr;
		}
	}
	/* The middle of the best range: separable rows leave a wide one. */
	m->threshold = (lo + hi) / 2;
	free(p);
}

char *cl_model_save(const struct cl_model *m)
{
	struct sb s = SB_INIT;
	size_t j;

	sb_addf(&s, "%d %.17g %.17g %zu", m->ok ? 1 : 0, m->threshold, m->base,
		m->rows);
	for (j = 0; j < CF_N; j++)
		sb_addf(&s, " %.17g %.17g", m->mean[j], m->sd[j]);
	for (j = 0; j <= CF_N; j++)
		sb_addf(&s, " %.17g", m->w[j]);
	return sb_detach(&s, NULL);
}

int cl_model_load(struct cl_model *m, const char *s)
{
	char *end;
	size_t j;
	int ok;

	memset(m, 0, sizeof(*m));
	ok = (int)strtol(s, &end, 10);
	m->threshold = strtod(end, &end);
	m->base = strtod(end, &end);
	m->rows = (size_t)strtoul(end, &end, 10);
	for (j = 0; j < CF_N; j++) {
		m->mean[j] = strtod(end, &end);
		m->sd[j] = strtod(end, &end);
		if (!(m->sd[j] > 0))
			goto bad;
	}
	for (j = 0; j <= CF_N; j++)
		m->w[j] = strtod(end, &end);
	m->ok = ok == 1;
	return 0;
bad:
	memset(m, 0, sizeof(*m));
	return -1;
}

/* ---- subjects ---- */

static const char *const stop[] = {
	"the",	"and",	"for",	"with", "from", "into", "when",	 "that",
	"this", "not",	"are",	"was",	"use",	"all",	"its",	 "via",
	"of",	"only", "also", "but",	"out",	"can",	"after", "before",
};

size_t cl_subject_words(const char *subject, char out[][32], size_t max)
{
	const unsigned char *p =
		(const unsigned char *)(subject ? subject : "");
	size_t n = 0, i;

	while (*p && n < max) {
		size_t len = 0;
		char w[32];
		bool dup = false;

		while (*p && !isalnum(*p))
			p++;
		while (isalnum(*p) || *p == '_') {
			if (len < sizeof(w) - 1)
				w[len++] = (char)tolower(*p);
			p++;
		}
		w[len] = '\0';
		if (len < 3)
			continue;
		for (i = 0; i < ARRAY_SIZE(stop); i++)
			if (!strcmp(stop[i], w))
				break;
		if (i < ARRAY_SIZE(stop))
			continue;
		for (i = 0; i < n && !dup; i++)
			dup = !strcmp(out[i], w);
		if (!dup)
			memcpy(out[n++], w, len + 1);
	}
	return n;
}

static bool has_word(const char *subject, const char *const *words,
		     size_t nwords)
{
	char w[CL_MAX_WORDS][32];
	size_t n = cl_subject_words(subject, w, CL_MAX_WORDS), i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < nwords; j++)
			if (!strncmp(w[i], words[j], strlen(words[j])))
				return true;
	return false;
}

bool cl_subject_fix(const char *subject)
{
	static const char *const w[] = {
		"fix",	 "bug",	      "crash",	 "leak",     "overflow",
		"oops",	 "panic",     "race",	 "deadlock", "corrupt",
		"uaf",	 "null",      "prevent", "avoid",    "correct",
		"wrong", "incorrect", "missing", "broken",   "regression",
		"hang",	 "fail",
	};

	return has_word(subject, w, ARRAY_SIZE(w));
}

bool cl_subject_feat(const char *subject)
{
	static const char *const w[] = {
		"add",	     "support", "new",	  "introduce",
		"implement", "enable",	"expose",
	};

	return has_word(subject, w, ARRAY_SIZE(w));
}

bool cl_subject_clean(const char *subject)
{
	static const char *const w[] = {
		"cleanup", "clean",    "refactor", "typo",
		"doc",	   "comment",  "rename",   "style",
		"bump",	   "update",   "remove",   "unused",
		"move",	   "simplify", "spelling", "man",
	};

	return has_word(subject, w, ARRAY_SIZE(w));
}
