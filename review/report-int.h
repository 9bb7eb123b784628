/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report-int.h - what the report forms (report-text.c, report-json.c,
 * report-sarif.c) share inside review/; callers use review.h.
 */
#ifndef QUORUM_REPORT_INT_H
#define QUORUM_REPORT_INT_H

#include <cjson/cJSON.h>

#include "review.h"

/* The n of n/m of patch slot k of s: its subject's, else k + 1. */
int rv_report_patch_number(const struct mp_series *s, size_t k);

/* A string item of s made valid UTF-8. */
cJSON *rv_json_str(const char *s);

#endif
