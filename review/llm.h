/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm.h - the LLM voter's stage group: what review/llm-*.c share with
 * each other and with the unit tests (the symbol index, the tools a model
 * calls over a series' applied tree). Not for bot/.
 */
#ifndef QUORUM_REVIEW_LLM_GROUP_H
#define QUORUM_REVIEW_LLM_GROUP_H

#include "review.h"

/* ---- llm-symbols.c: the symbol index ------------------------------------ */

/* ---- llm-tools.c: the tools --------------------------------------------- */

#endif
