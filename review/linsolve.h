/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linsolve.h - small dense linear algebra shared inside review/.
 */
#ifndef QUORUM_LINSOLVE_H
#define QUORUM_LINSOLVE_H

#include <stddef.h>

/*
 * Solve A x = b for an n x n system by Gaussian elimination with partial
 * pivoting; A is destroyed and x is left in b. 0, or -1 when A is
 * singular (a pivot under 1e-12).
 */
int rv_linsolve(double *A, double *b, size_t n);

#endif
