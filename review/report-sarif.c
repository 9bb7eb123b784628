// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report-sarif.c - reviews as one SARIF 2.1.0 log, for code-scanning
 * UIs (`quorum review --format sarif`, `quorum ci --format sarif`).
 *
 * The log is printed at the end, since SARIF wants every rule listed
 * before the results refer to them.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report-int.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

struct rv_sarif_report {
	cJSON *root;	/* the whole log */
	cJSON *rules;	/* runs[0].tool.driver.rules */
	cJSON *results; /* runs[0].results */
};

int rv_sarif_report_new(struct rv_sarif_report **out, const char *version)
{
	struct rv_sarif_report *sr = calloc(1, sizeof(*sr));
	cJSON *run, *tool, *driver, *runs;

	*out = NULL;
	if (!sr)
		return RV_ERR_NOMEM;
	sr->root = cJSON_CreateObject();
	cJSON_AddStringToObject(sr->root, "$schema", SARIF_SCHEMA);
	cJSON_AddStringToObject(sr->root, "version", "2.1.0");
	runs = cJSON_AddArrayToObject(sr->root, "runs");
	run = cJSON_CreateObject();
	tool = cJSON_AddObjectToObject(run, "tool");
	driver = cJSON_AddObjectToObject(tool, "driver");
	cJSON_AddStringToObject(driver, "name", "quorum");
	cJSON_AddStringToObject(driver, "version", version);
	cJSON_AddStringToObject(driver, "informationUri",
				"https://example.org/quorum");
	sr->rules = cJSON_AddArrayToObject(driver, "rules");
	sr->results = cJSON_AddArrayToObject(run, "results");
	cJSON_AddItemToArray(runs, run);
	if (!sr->root || !sr->results) {
		rv_sarif_report_free(sr);
		return RV_ERR_NOMEM;
	}
	*out = sr;
	return 0;
}

static const char *sarif_level(enum rv_severity s)
{
	switch (s) {
	case RV_SEV_CRITICAL:
	case RV_SEV_HIGH:
		return "error";
	case RV_SEV_MEDIUM:
		return "warning";
	default:
		return "note";
	}
}

/* The index of rule id in rules, adding it when new. */
static int sarif_rule(cJSON *rules, const char *id)
{
	cJSON *it, *d;
	int n = 0;

	cJSON_ArrayForEach(it, rules)
	{
		if (!strcmp(cJSON_GetObjectItem(it, "id")->valuestring, id))
			return n;
		n++;
	}
	it = cJSON_CreateObject();
	cJSON_AddItemToObject(it, "id", rv_json_str(id));
	d = cJSON_CreateObject();
	cJSON_AddItemToObject(d, "text", rv_json_str(rv_category_text(id)));
	cJSON_AddItemToObject(it, "shortDescription", d);
	cJSON_AddItemToArray(rules, it);
	return n;
}

/*
 * A path as a relative URI reference (RFC 3986, as SARIF's
 * artifactLocation.uri wants it): every byte but the unreserved ones and
 * the '/' between segments percent-encoded, so a space, '%', '#', '?',
 * ':', UTF-8 or a control byte in a file name stays part of the path.
 */
static char *path_uri(const char *path)
{
	struct sb out = SB_INIT;
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			sb_addch(&out, (char)*p);
		else
			sb_addf(&out, "%%%02X", *p);
	}
	return sb_detach(&out, NULL);
}

/*
 * SARIF results are placed in the tree a code-scanning UI shows: the
 * series tip (for `ci`, the newest commit of the run), so a finding on
 * an earlier patch is moved to where its lines are at the tip.
 */
void rv_sarif_report_add(struct rv_sarif_report *sr, const struct rv_review *r,
			 const char (*ids)[RV_OID_HEXSZ + 1], size_t n)
{
	size_t i;

	for (i = 0; i < r->findings.n; i++) {
		const struct rv_finding *f = &r->findings.items[i];
		/* The rule id is ours; the voter's words are message text. */
		const char *cat = rv_category_id(f->category);
		cJSON *res = cJSON_CreateObject(), *msg = cJSON_CreateObject();
		cJSON *locs = cJSON_CreateArray(), *loc, *phys, *art, *reg;
		cJSON *props;
		struct sb text = SB_INIT;
		const char *file = f->tip_file ? f->tip_file : f->file;
		int start = f->tip_file ? f->tip_line_start : f->line_start;
		int end = f->tip_file ? f->tip_line_end : f->line_end;

		if (start < 1)
			start = 1;
		if (end < start)
			end = start;

		cJSON_AddItemToObject(res, "ruleId", rv_json_str(cat));
		cJSON_AddNumberToObject(res, "ruleIndex",
					sarif_rule(sr->rules, cat));
		cJSON_AddStringToObject(res, "level", sarif_level(f->severity));
		sb_adds(&text, f->title ? f->title : cat);
		if (f->explanation && *f->explanation)
			sb_addf(&text, "\n\n%s", f->explanation);
		if (f->category && strcmp(f->category, cat))
			sb_addf(&text, "\n\nCategory as the voter gave it: %s",
				f->category);
		cJSON_AddItemToObject(msg, "text", rv_json_str(sb_str(&text)));
		sb_release(&text);
		cJSON_AddItemToObject(res, "message", msg);
		if (file) {
			char *uri = path_uri(file);

			loc = cJSON_CreateObject();
			phys = cJSON_CreateObject();
			art = cJSON_CreateObject();
			reg = cJSON_CreateObject();
			cJSON_AddItemToObject(art, "uri", rv_json_str(uri));
			free(uri);
			cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
			cJSON_AddItemToObject(phys, "artifactLocation", art);
			cJSON_AddNumberToObject(reg, "startLine", start);
			cJSON_AddNumberToObject(reg, "endLine", end);
			cJSON_AddItemToObject(phys, "region", reg);
			cJSON_AddItemToObject(loc, "physicalLocation", phys);
			cJSON_AddItemToArray(locs, loc);
		}
		cJSON_AddItemToObject(res, "locations", locs);
		props = cJSON_CreateObject();
		cJSON_AddStringToObject(props, "severity",
					rv_severity_name(f->severity));
		cJSON_AddNumberToObject(props, "votes", f->votes);
		cJSON_AddNumberToObject(
			props, "patch",
			f->patch >= 0 ? rv_report_patch_number(r->series,
							       (size_t)f->patch)
				      : 0);
		rv_json_put_str(props, "series", mp_series_title(r->series));
		if (f->patch >= 0 && (size_t)f->patch < n)
			cJSON_AddStringToObject(props, "commit", ids[f->patch]);
		cJSON_AddItemToObject(res, "properties", props);
		cJSON_AddItemToArray(sr->results, res);
	}
}

char *rv_sarif_report_print(const struct rv_sarif_report *sr)
{
	return cJSON_Print(sr->root);
}

void rv_sarif_report_free(struct rv_sarif_report *sr)
{
	if (!sr)
		return;
	cJSON_Delete(sr->root);
	free(sr);
}
