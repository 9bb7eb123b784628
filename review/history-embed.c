// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * history-embed.c - optional embedding vectors for past hunks, from an
 * OpenAI-compatible /v1/embeddings endpoint, stored as float32 blobs and
 * combined with BM25 by similar. Lexical retrieval needs none of this;
 * when the endpoint is down, everything falls back to it.
 *
 * The endpoint's answer is outside input: the response is capped, every
 * vector is checked for length and finite values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "history-int.h"

#define EMBED_MAX_RESPONSE ((size_t)64 << 20)

static size_t write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct sb *out = arg;

	/* Past the cap, stop the transfer: curl reports a write error. */
	return sb_add(out, p, size * n) < 0 ? 0 : size * n;
}

static int parse_vectors(const char *body, size_t n, float **out, size_t *dim,
			 struct errmsg *err)
{
	cJSON *root = cJSON_Parse(body), *data, *item;
	float *v = NULL;
	size_t got = 0, d = 0;
	int ret = RV_ERR_INTERNAL;

	if (!root || !(data = cJSON_GetObjectItem(root, "data")) ||
	    !cJSON_IsArray(data)) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "the embeddings endpoint did not answer with a "
			   "\"data\" array");
		goto out;
	}
	cJSON_ArrayForEach(item, data)
	{
		cJSON *emb = cJSON_GetObjectItem(item, "embedding"), *x;
		cJSON *idx = cJSON_GetObjectItem(item, "index");
		size_t i = got, k = 0;
		double norm = 0;

		if (cJSON_IsNumber(idx) && idx->valuedouble >= 0 &&
		    idx->valuedouble < (double)n)
			i = (size_t)idx->valuedouble;
		if (!cJSON_IsArray(emb) || i >= n || got >= n) {
			errmsg_set(err, RV_ERR_INTERNAL,
				   "the embeddings endpoint sent a malformed "
				   "or extra vector");
			goto out;
		}
		if (!d) {
			d = (size_t)cJSON_GetArraySize(emb);
			if (!d || d > HIST_EMBED_MAX_DIM) {
				errmsg_set(err, RV_ERR_INTERNAL,
					   "the embeddings endpoint sent "
					   "vectors of %zu dimensions (1..%d "
					   "expected)",
					   d, HIST_EMBED_MAX_DIM);
				goto out;
			}
			v = xcalloc(n * d, sizeof(*v));
		}
		if ((size_t)cJSON_GetArraySize(emb) != d) {
			errmsg_set(err, RV_ERR_INTERNAL,
				   "the embeddings endpoint sent vectors of "
				   "different lengths");
			goto out;
		}
		cJSON_ArrayForEach(x, emb)
		{
			if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
				errmsg_set(err, RV_ERR_INTERNAL,
					   "the embeddings endpoint sent a "
					   "value that is not a number");
				goto out;
			}
			v[i * d + k++] = (float)x->valuedouble;
			norm += x->valuedouble * x->valuedouble;
		}
		norm = sqrt(norm);
		for (k = 0; k < d && norm > 0; k++)
			v[i * d + k] = (float)(v[i * d + k] / norm);
		got++;
	}
	if (got != n) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "the embeddings endpoint sent %zu vectors for %zu "
			   "texts",
			   got, n);
		goto out;
	}
	*out = v;
	*dim = d;
	v = NULL;
	ret = 0;
out:
	free(v);
	cJSON_Delete(root);
	return ret;
}

int hist_embed(const struct rv_embed_opts *o, const char *const *texts,
	       size_t n, float **out, size_t *dim, struct errmsg *err)
{
	struct curl_slist *hdr = NULL;
	struct sb body = SB_INIT, auth = SB_INIT, shown = SB_INIT;
	cJSON *req = cJSON_CreateObject(), *input;
	char *json = NULL, errbuf[CURL_ERROR_SIZE] = "";
	CURL *c = NULL;
	long status = 0;
	size_t i;
	int ret = RV_ERR_INTERNAL;

	*out = NULL;
	*dim = 0;
	sb_init(&body, EMBED_MAX_RESPONSE);
	cJSON_AddStringToObject(req, "model", o->model ? o->model : "");
	input = cJSON_AddArrayToObject(req, "input");
	for (i = 0; i < n; i++) {
		char *t = xstrndup(texts[i],
				   strnlen(texts[i], HIST_EMBED_MAX_TEXT));

		cJSON_AddItemToArray(input, cJSON_CreateString(t));
		free(t);
	}
	json = cJSON_PrintUnformatted(req);
	c = curl_easy_init();
	if (!json || !c) {
		errmsg_set(err, RV_ERR_NOMEM, "out of memory for embeddings");
		goto out;
	}
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	if (o->key && *o->key) {
		sb_addf(&auth, "Authorization: Bearer %s", o->key);
		hdr = curl_slist_append(hdr, sb_str(&auth));
	}
	curl_easy_setopt(c, CURLOPT_URL, o->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)HIST_EMBED_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* The URL as a message may show it: no user:password@. */
	sb_add_url_shown(&shown, o->url);
	if (curl_easy_perform(c) != CURLE_OK) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "the embeddings endpoint %s did not answer: %s",
			   sb_str(&shown),
			   errbuf[0] ? errbuf : "transfer failed");
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "the embeddings endpoint %s answered HTTP %ld",
			   sb_str(&shown), status);
		goto out;
	}
	ret = parse_vectors(sb_str(&body), n, out, dim, err);
out:
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	free(json);
	cJSON_Delete(req);
	sb_release(&body);
	sb_release(&auth);
	sb_release(&shown);
	return ret;
}

int hist_embed_hunks(sqlite3 *db, const struct rv_embed_opts *o, size_t *nvec,
		     struct errmsg *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL, *meta = NULL;
	int64_t ids[HIST_EMBED_BATCH];
	char *texts[HIST_EMBED_BATCH];
	const char *stored = NULL;
	size_t n, i, dim;
	float *v = NULL;
	int ret = 0;

	*nvec = 0;
	/* Vectors of another model do not compare: start over. */
	if (sqlite3_prepare_v2(db,
			       "SELECT value FROM meta WHERE key='embed_model'",
			       -1, &meta, NULL) == SQLITE_OK &&
	    sqlite3_step(meta) == SQLITE_ROW)
		stored = (const char *)sqlite3_column_text(meta, 0);
	if (!stored || strcmp(stored, o->model ? o->model : "")) {
		sqlite3_finalize(meta);
		meta = NULL;
		if (hist_exec(db, "DELETE FROM vectors", err) ||
		    sqlite3_prepare_v2(db,
				       "INSERT OR REPLACE INTO meta VALUES "
				       "('embed_model', ?)",
				       -1, &meta, NULL) != SQLITE_OK)
			return RV_ERR_INTERNAL;
		sqlite3_bind_text(meta, 1, o->model ? o->model : "", -1,
				  SQLITE_STATIC);
		sqlite3_step(meta);
	}
	sqlite3_finalize(meta);
	if (sqlite3_prepare_v2(db,
			       "SELECT h.id, h.lines FROM hunks h"
			       " LEFT JOIN vectors v ON v.hunk_id = h.id"
			       " WHERE v.hunk_id IS NULL ORDER BY h.id LIMIT ?",
			       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO vectors VALUES (?, ?)", -1,
			       &ins, NULL) != SQLITE_OK) {
		ret = errmsg_set(err, RV_ERR_INTERNAL, "history index: %s",
				 sqlite3_errmsg(db));
		goto out;
	}
	for (;;) {
		sqlite3_reset(sel);
		sqlite3_bind_int(sel, 1, HIST_EMBED_BATCH);
		for (n = 0;
		     n < HIST_EMBED_BATCH && sqlite3_step(sel) == SQLITE_ROW;
		     n++) {
			const char *t =
				(const char *)sqlite3_column_text(sel, 1);

			ids[n] = sqlite3_column_int64(sel, 0);
			texts[n] = xstrdup_or_null(t ? t : "");
		}
		if (!n)
			break;
		ret = hist_embed(o, (const char *const *)texts, n, &v, &dim,
				 err);
		for (i = 0; i < n; i++)
			free(texts[i]);
		if (ret)
			break;
		for (i = 0; i < n && !ret; i++) {
			sqlite3_bind_int64(ins, 1, ids[i]);
			sqlite3_bind_blob(ins, 2, &v[i * dim],
					  (int)(dim * sizeof(*v)),
					  SQLITE_STATIC);
			if (sqlite3_step(ins) != SQLITE_DONE)
				ret = errmsg_set(err, RV_ERR_INTERNAL,
						 "history index: %s",
						 sqlite3_errmsg(db));
			sqlite3_reset(ins);
		}
		free(v);
		v = NULL;
		*nvec += n;
	}
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return ret;
}

static void top_insert(int64_t *ids, double *cos, size_t *n, size_t max,
		       int64_t id, double c)
{
	size_t i;

	if (*n == max && c <= cos[max - 1])
		return;
	i = *n < max ? (*n)++ : max - 1;
	while (i > 0 && cos[i - 1] < c) {
		ids[i] = ids[i - 1];
		cos[i] = cos[i - 1];
		i--;
	}
	ids[i] = id;
	cos[i] = c;
}

int hist_embed_search(struct rv_history *h, const char *query, size_t max,
		      int64_t *ids, double *cos)
{
	struct rv_embed_opts o = {h->embed_url, h->embed_model, h->embed_key};
	struct errmsg err = {""};
	sqlite3_stmt *st = NULL;
	const char *q[1] = {query};
	size_t dim, n = 0, k;
	float *qv = NULL;

	h->embed_error[0] = '\0';
	if (!max || hist_embed(&o, q, 1, &qv, &dim, &err) < 0) {
		snprintf(h->embed_error, sizeof(h->embed_error), "%s", err.msg);
		return RV_ERR_INTERNAL;
	}
	if (sqlite3_prepare_v2(h->db,
			       "SELECT v.hunk_id, v.v FROM vectors v"
			       " JOIN hunks h ON h.id = v.hunk_id"
			       " JOIN pairs p ON p.id = h.pair_id"
			       " WHERE p.fix_seq < ?",
			       -1, &st, NULL) != SQLITE_OK) {
		free(qv);
		return RV_ERR_INTERNAL;
	}
	sqlite3_bind_int64(st, 1, h->horizon);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_blob(st, 1);
		size_t bytes = (size_t)sqlite3_column_bytes(st, 1);
		double dot = 0;

		/* A vector of another length (another model) is skipped. */
		if (!v || bytes != dim * sizeof(float))
			continue;
		for (k = 0; k < dim; k++) {
			float x; /* the blob need not be aligned for floats */

			memcpy(&x, v + k * sizeof(x), sizeof(x));
			dot += (double)x * (double)qv[k];
		}
		top_insert(ids, cos, &n, max, sqlite3_column_int64(st, 0), dot);
	}
	sqlite3_finalize(st);
	free(qv);
	return (int)n;
}
