// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * linsolve.c - the linear solve of the Newton steps of the two logistic
 * models (the risk model, history-risk.c; classify's, classify-model.c).
 */
#include <math.h>
#include <stddef.h>

#include "linsolve.h"

int rv_linsolve(double *A, double *b, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		size_t piv = i;

		for (j = i + 1; j < n; j++)
			if (fabs(A[j * n + i]) > fabs(A[piv * n + i]))
				piv = j;
		if (fabs(A[piv * n + i]) < 1e-12)
			return -1;
		if (piv != i) {
			for (k = 0; k < n; k++) {
				double t = A[i * n + k];

				A[i * n + k] = A[piv * n + k];
				A[piv * n + k] = t;
			}
			double t = b[i];

			b[i] = b[piv];
			b[piv] = t;
		}
		for (j = i + 1; j < n; j++) {
			double f = A[j * n + i] / A[i * n + i];

			for (k = i; k < n; k++)
				A[j * n + k] -= f * A[i * n + k];
			b[j] -= f * b[i];
		}
	}
	for (i = n; i-- > 0;) {
		for (k = i + 1; k < n; k++)
			b[i] -= A[i * n + k] * b[k];
		b[i] /= A[i * n + i];
	}
	return 0;
}
