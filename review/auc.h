/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auc.h - the AUC of a score, its bootstrap intervals, and the Wilson
 * interval of a proportion (review/auc.c).
 */
#ifndef QUORUM_AUC_H
#define QUORUM_AUC_H

#include <stdbool.h>
#include <stddef.h>

/* AUC of scores against labels (ties count half); -1 when undefined. */
double rv_auc(const double *score, const int *label, size_t n);

/* Draws of the bootstrap intervals. */
#define RV_AUC_BOOT 1000

/*
 * 95% intervals from RV_AUC_BOOT bootstrap draws of the rows (a fixed
 * seed: the same on every run; the same draws for both scores): [0] of
 * s1's AUC, [1] of s2's (when s2 is not NULL), [2] of their difference.
 */
struct rv_auc_ci {
	bool ok; /* false: too few rows, or one class only */
	double lo[3], hi[3];
};
void rv_auc_boot(const double *s1, const double *s2, const int *y, size_t n,
		 struct rv_auc_ci *ci);

/* The 95% Wilson interval of k successes in n into ci; -1s when n is 0. */
void rv_wilson(size_t k, size_t n, double ci[2]);

#endif
