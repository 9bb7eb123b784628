// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * series.c - the collector: parsed messages in, patch series out.
 *
 * Messages are grouped by thread first: a patch joins the nearest message
 * it replies to (In-Reply-To, then References newest first) when that is a
 * patch or cover of the same version and total, which covers shallow and
 * deep threading and keeps a v2 posted in reply to v1 apart. Patches whose
 * thread parent is not in the input group by that parent; patches with no
 * threading at all group by sender + version + total within a time window.
 * Replies that are not patches go to `others`, and the trailers in their
 * bodies become follow-ups of the patch or cover they answer.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "mailparse.h"

/* Series totals above this are not believed (a hostile "1/999999999"). */
#define MAX_SERIES_TOTAL 10000
/* Errors listed one by one; the rest are counted. */
#define MAX_ERRORS 1000
/* How far up a reply chain we look for the patch a reply answers. */
#define MAX_REPLY_DEPTH 64
/* Follow-up trailers taken from one reply. */
#define MAX_REPLY_TRAILERS 64
/* Commit messages kept without bodies (the biggest real ones are ~20 KB). */
#define MAX_KEPT_MESSAGE (256 * 1024)
/* Extra patches beyond the total ("3/2") a series takes in. */
#define MAX_EXTRA 3
/* Unthreaded patches of one series must arrive within this many seconds. */
#define LOOSE_WINDOW (12 * 3600)

struct entry {
	struct mp_patch *p;
	size_t parent;	       /* union-find over series members */
	struct mp_trailer *fu; /* trailers written in a reply's body */
	size_t nfu;
	bool member; /* a patch or cover of some series */
	int index, total, version;
	size_t series;	  /* 1 + index into the series list; 0 when none */
	bool taken;	  /* placed into a series (else goes to others) */
	size_t repost_of; /* 1 + the entry of an earlier posting it repeats */
};

struct loose_group {
	size_t rep; /* entry that represents the group */
	int64_t first_ts;
	GHashTable *indexes; /* set of the indexes already in the group */
};

struct mp_collector {
	struct entry *e;
	size_t n, alloc;
	GHashTable *by_id; /* message-id -> entry index + 1 */
	struct mp_error_entry *errors;
	size_t nerrors, aerrors, dropped_errors;
	bool keep_bodies;
};

struct mp_collector *mp_collector_new(void)
{
	struct mp_collector *c = xcalloc(1, sizeof(*c));

	c->by_id = g_hash_table_new(g_str_hash, g_str_equal);
	c->keep_bodies = true;
	return c;
}

void mp_collector_set_keep_bodies(struct mp_collector *c, bool keep)
{
	if (c)
		c->keep_bodies = keep;
}

static void add_error(struct mp_error_entry **arr, size_t *n, size_t *alloc,
		      size_t *dropped, const char *where, const char *message)
{
	if (*n >= MAX_ERRORS) {
		(*dropped)++;
		return;
	}
	ALLOC_GROW(*arr, *n + 1, *alloc);
	(*arr)[*n].where = xstrdup_or_null(where ? where : "input");
	(*arr)[*n].message = xstrdup_or_null(message ? message : "unusable");
	(*n)++;
}

void mp_collector_error(struct mp_collector *c, const char *where,
			const char *message)
{
	if (!c)
		return;
	add_error(&c->errors, &c->nerrors, &c->aerrors, &c->dropped_errors,
		  where, message);
}

static void collector_errorf(struct mp_collector *c, const char *where,
			     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void collector_errorf(struct mp_collector *c, const char *where,
			     const char *fmt, ...)
{
	struct sb msg = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	mp_collector_error(c, where, sb_str(&msg));
	sb_release(&msg);
}

static bool is_member(const struct mp_patch *p)
{
	if (p->subject.reply)
		return false; /* "Re: [PATCH]" with a fixup diff is a reply */
	if (p->kind == MP_KIND_PATCH)
		return true;
	return p->kind == MP_KIND_COVER && p->subject.total > 0;
}

/* Trim spaces at both ends of [s, s+len) into a new string. */
static char *trimmed_dup(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

/*
 * Is [line, line+len) a trailer a reviewer sends: "Key-by: value" (or
 * Fixes:), not quoted? Fills key and value on success.
 */
static bool reply_trailer(const char *line, size_t len, char **key,
			  char **value)
{
	size_t k = 0;
	const char *v;

	while (k < len && (isalnum((unsigned char)line[k]) || line[k] == '-'))
		k++;
	if (k < 2 || k >= len || line[k] != ':' ||
	    !isalpha((unsigned char)line[0]))
		return false;
	if (!(k > 3 && !g_ascii_strncasecmp(line + k - 3, "-by", 3)) &&
	    !(k == 5 && !g_ascii_strncasecmp(line, "Fixes", 5)))
		return false;
	v = line + k + 1;
	if (!memchr(v, '@', len - k - 1) && !(k == 5))
		return false; /* a person trailer names an address */
	*key = xstrndup(line, k);
	*value = trimmed_dup(v, len - k - 1);
	if (!**value) {
		free(*key);
		free(*value);
		return false;
	}
	return true;
}

/* Collect the unquoted trailers of a reply body into e->fu. */
static void scan_reply_trailers(struct entry *e, const char *body)
{
	const char *line = body, *nl;
	size_t alloc = 0;

	if (!body)
		return;
	for (; *line; line = nl ? nl + 1 : line + strlen(line)) {
		size_t len;
		char *key, *value;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		if (len && line[len - 1] == '\r')
			len--;
		if (len >= 3 && !memcmp(line, "-- ", 3) && len == 3)
			break; /* signature */
		if (e->nfu >= MAX_REPLY_TRAILERS)
			break;
		if (!len || line[0] == '>' || line[0] == ' ' || line[0] == '\t')
			continue;
		if (!reply_trailer(line, len, &key, &value))
			continue;
		ALLOC_GROW(e->fu, e->nfu + 1, alloc);
		e->fu[e->nfu].key = key;
		e->fu[e->nfu].value = value;
		e->nfu++;
		if (!nl)
			break;
	}
}

/* A checksum of the diff (8 bytes a step), to tell a resend from a repost. */
static uint64_t diff_checksum(const char *d, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, d + i, 8);
		h = (h ^ w) * 0x87c37b91114253d5ULL;
		h = (h << 31) | (h >> 33);
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)d[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h ? h : 1;
}

/* Drop the bulk; a patch's commit message is small and `parse` shows it. */
static void drop_bodies(struct mp_patch *p, bool member)
{
	if (member && p->diff && !p->diff_hash)
		p->diff_hash = diff_checksum(p->diff, p->diff_len);
	if (!member || (p->commit_message &&
			strlen(p->commit_message) > MAX_KEPT_MESSAGE)) {
		free(p->commit_message);
		p->commit_message = NULL;
	}
	free(p->notes);
	p->notes = NULL;
	free(p->diff);
	p->diff = NULL;
	p->diff_len = 0;
}

void mp_collector_add(struct mp_collector *c, struct mp_patch *p)
{
	struct entry *e;
	int total;

	if (!p)
		return;
	if (!c) {
		mp_patch_free(p);
		return;
	}
	if (!p->message_id || !*p->message_id) {
		/* the parser synthesises ids; never trust that it did */
		char id[64];

		snprintf(id, sizeof(id), "quorum-seq-%zu@local", c->n);
		free(p->message_id);
		p->message_id = xstrdup_or_null(id);
	}
	if (g_hash_table_contains(c->by_id, p->message_id)) {
		mp_collector_error(c, p->message_id,
				   "duplicate message: this message-id was "
				   "read more than once; the first copy is "
				   "used");
		mp_patch_free(p);
		return;
	}
	ALLOC_GROW(c->e, c->n + 1, c->alloc);
	e = &c->e[c->n];
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->parent = c->n;
	e->member = is_member(p);
	total = p->subject.total;
	if (e->member &&
	    (total < 0 || total > MAX_SERIES_TOTAL || p->subject.index < 0)) {
		collector_errorf(c, p->message_id,
				 "\"%s\" claims a series of %d patches; more "
				 "than %d is not believed",
				 p->subject_raw ? p->subject_raw : "", total,
				 MAX_SERIES_TOTAL);
		e->member = false;
	}
	e->index = p->subject.index;
	e->total = e->member ? total : 0;
	e->version = p->subject.version > 0 ? p->subject.version : 1;
	if (!e->member) {
		scan_reply_trailers(e, p->commit_message);
		if (!p->commit_message && p->trailers)
			for (size_t i = 0;
			     i < p->ntrailers && e->nfu < MAX_REPLY_TRAILERS;
			     i++) {
				size_t a = e->nfu;

				e->fu = xrealloc(e->fu,
						 (a + 1) * sizeof(*e->fu));
				e->fu[a].key =
					xstrdup_or_null(p->trailers[i].key);
				e->fu[a].value =
					xstrdup_or_null(p->trailers[i].value);
				e->nfu++;
			}
	}
	if (!c->keep_bodies)
		drop_bodies(p, e->member);
	g_hash_table_insert(c->by_id, p->message_id,
			    GSIZE_TO_POINTER(c->n + 1));
	c->n++;
}

static struct entry *find_entry(struct mp_collector *c, const char *id)
{
	gpointer v;

	if (!id)
		return NULL;
	v = g_hash_table_lookup(c->by_id, id);
	return v ? &c->e[GPOINTER_TO_SIZE(v) - 1] : NULL;
}

static size_t uf_find(struct mp_collector *c, size_t i)
{
	while (c->e[i].parent != i) {
		c->e[i].parent = c->e[c->e[i].parent].parent;
		i = c->e[i].parent;
	}
	return i;
}

static void uf_union(struct mp_collector *c, size_t a, size_t b)
{
	a = uf_find(c, a);
	b = uf_find(c, b);
	if (a == b)
		return;
	if (a < b)
		c->e[b].parent = a;
	else
		c->e[a].parent = b;
}

/* The ancestors of p, nearest first: In-Reply-To, then References. */
static const char *ancestor(const struct mp_patch *p, size_t k)
{
	if (p->in_reply_to) {
		if (k == 0)
			return p->in_reply_to;
		k--;
	}
	if (k >= p->nreferences)
		return NULL;
	return p->references[p->nreferences - 1 - k];
}

static const char *sender_email(const struct mp_patch *p)
{
	const char *lt, *from = p->from;

	if (!from)
		return p->author_email ? p->author_email : "";
	lt = strrchr(from, '<');
	return lt ? lt + 1 : from;
}

/* Did the message come with no Message-Id of its own? */
static bool synthetic_id(const struct mp_patch *p)
{
	return g_str_has_prefix(p->message_id, "quorum-") &&
	       g_str_has_suffix(p->message_id, "@local");
}

static void loose_group_free(gpointer data)
{
	struct loose_group *g = data;

	g_hash_table_destroy(g->indexes);
	g_free(g);
}

/*
 * A cover "[PATCH v3 0/4]" whose patches say "[PATCH 1/4]": the patch
 * has no version of its own (it reads as 1) and answers the cover.
 */
static bool unversioned_under_cover(const struct entry *a,
				    const struct entry *e)
{
	return a->index == 0 && a->total > 0 && a->total == e->total &&
	       a->version > 1 && e->version == 1 && e->index > 0;
}

/*
 * Entry i posts again the series of entry a (a resend in its thread):
 * it starts a new posting, which the other repeated patches of that
 * series join while their numbers are free in it.
 */
static void repost(struct mp_collector *c, GHashTable *reposts, size_t i,
		   size_t a)
{
	gpointer key = GSIZE_TO_POINTER(uf_find(c, a) + 1);
	struct loose_group *g = g_hash_table_lookup(reposts, key);
	gpointer idx = GINT_TO_POINTER(c->e[i].index + 1);

	c->e[i].repost_of = a + 1;
	if (g && !g_hash_table_contains(g->indexes, idx)) {
		uf_union(c, i, g->rep);
		g_hash_table_add(g->indexes, idx);
		return;
	}
	g = g_new0(struct loose_group, 1);
	g->rep = i;
	g->indexes = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_hash_table_add(g->indexes, idx);
	g_hash_table_replace(reposts, key, g);
}

/* Union every member with the series it belongs to. */
static void group_members(struct mp_collector *c)
{
	GHashTable *virt =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	/* loose groups live until the end: vcovers points at them too */
	GPtrArray *groups = g_ptr_array_new_with_free_func(loose_group_free);
	GHashTable *loose =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GHashTable *reposts = g_hash_table_new_full(
		g_direct_hash, g_direct_equal, NULL, loose_group_free);
	/* "TOTAL SENDER" -> the loose group of a cover with a version > 1 */
	GHashTable *vcovers =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	size_t i, k;

	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		const char *id, *root = NULL;
		bool joined = false;

		if (!e->member || e->total == 0)
			continue; /* unnumbered patches stand alone */
		for (k = 0; (id = ancestor(e->p, k)) && k < 4096; k++) {
			struct entry *a = find_entry(c, id);

			root = id; /* the oldest reference ends the walk */
			if (!a || !a->member)
				continue;
			/* the nearest series message decides */
			if (a->version == e->version && a->total == e->total &&
			    (e->index == 0 || e->index == a->index)) {
				/*
				 * a cover answering the series, or a patch
				 * its own twin: the series posted again
				 */
				repost(c, reposts, i, (size_t)(a - c->e));
				joined = true;
			} else if ((a->version == e->version ||
				    unversioned_under_cover(a, e)) &&
				   (a->total == e->total ||
				    (a->index == 0 && a->total > 0))) {
				/* same series (a cover may miscount) */
				uf_union(c, i, (size_t)(a - c->e));
				joined = true;
			} else {
				/*
				 * another version (v2 answering v1): group by
				 * the thread's root, so v2 patches that each
				 * answer their v1 twin stay one series
				 */
				root = e->p->nreferences ? e->p->references[0]
							 : e->p->in_reply_to;
			}
			break;
		}
		if (joined)
			continue;
		if (root) {
			/*
			 * The thread starts at a message we do not have, at
			 * one that is no patch (a bug report), or at another
			 * version of the series (a v2 answering v1's cover):
			 * patches of one version under it are one series.
			 */
			char *key = g_strdup_printf("%d/%d %s", e->version,
						    e->total, root);
			gpointer v = g_hash_table_lookup(virt, key);

			if (v) {
				uf_union(c, i, GPOINTER_TO_SIZE(v) - 1);
				g_free(key);
			} else {
				g_hash_table_insert(virt, key,
						    GSIZE_TO_POINTER(i + 1));
			}
			continue;
		}
		/* no threading at all: sender + version + total + time */
		{
			bool synth = synthetic_id(e->p);
			char *key = g_strdup_printf(
				"%d/%d %s", e->version, e->total,
				synth ? "" : sender_email(e->p));
			struct loose_group *g = g_hash_table_lookup(loose, key);
			int64_t ts = e->p->timestamp;
			bool fits;

			if (e->version == 1 && e->index > 0) {
				/* "[PATCH 1/4]" after "[PATCH v3 0/4]" */
				struct loose_group *v = g_hash_table_lookup(
					vcovers, key + strcspn(key, "/") + 1);

				if (v && ts && v->first_ts &&
				    ts - v->first_ts <= LOOSE_WINDOW &&
				    v->first_ts - ts <= LOOSE_WINDOW)
					g = v;
			}
			fits = g && !g_hash_table_contains(
					    g->indexes,
					    GINT_TO_POINTER(e->index + 1));

			if (fits && !synth && ts && g->first_ts &&
			    (ts - g->first_ts > LOOSE_WINDOW ||
			     g->first_ts - ts > LOOSE_WINDOW))
				fits = false;
			if (fits) {
				uf_union(c, i, g->rep);
				g_hash_table_add(g->indexes,
						 GINT_TO_POINTER(e->index + 1));
				g_free(key);
			} else {
				g = g_new0(struct loose_group, 1);
				g_ptr_array_add(groups, g);
				g->rep = i;
				g->first_ts = ts;
				g->indexes = g_hash_table_new(g_direct_hash,
							      g_direct_equal);
				g_hash_table_add(g->indexes,
						 GINT_TO_POINTER(e->index + 1));
				if (e->index == 0 && e->version > 1)
					g_hash_table_replace(
						vcovers,
						g_strdup(key +
							 strcspn(key, "/") + 1),
						g);
				g_hash_table_replace(loose, key, g);
			}
		}
	}
	g_hash_table_destroy(vcovers);
	g_hash_table_destroy(virt);
	g_hash_table_destroy(loose);
	g_ptr_array_free(groups, TRUE);
	g_hash_table_destroy(reposts);
}

static bool same_trailer(const struct mp_trailer *a, const char *key,
			 const char *value)
{
	return a->key && a->value && !g_ascii_strcasecmp(a->key, key) &&
	       !g_ascii_strcasecmp(a->value, value);
}

static bool has_trailer(const struct mp_trailer *arr, size_t n, const char *key,
			const char *value)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (same_trailer(&arr[i], key, value))
			return true;
	return false;
}

static void add_followup(struct mp_trailer **arr, size_t *n,
			 const struct mp_trailer *also, size_t nalso,
			 const char *key, const char *value)
{
	if (has_trailer(*arr, *n, key, value) ||
	    has_trailer(also, nalso, key, value))
		return;
	*arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
	(*arr)[*n].key = xstrdup_or_null(key);
	(*arr)[*n].value = xstrdup_or_null(value);
	(*n)++;
}

static void free_trailers(struct mp_trailer *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].value);
	}
	free(t);
}

static void series_free(struct mp_series *s)
{
	size_t i;

	if (!s)
		return;
	mp_patch_free(s->cover);
	for (i = 0; i < s->npatches; i++)
		mp_patch_free(s->patches[i]);
	free(s->patches);
	free(s->missing);
	free_trailers(s->followups, s->nfollowups);
	free(s);
}

const struct mp_patch *mp_series_first(const struct mp_series *s)
{
	size_t k;

	if (!s)
		return NULL;
	if (s->cover)
		return s->cover;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k])
			return s->patches[k];
	return NULL;
}

const char *mp_patch_title(const struct mp_patch *p)
{
	if (p && p->subject.title && *p->subject.title)
		return p->subject.title;
	return p ? p->subject_raw : NULL;
}

bool mp_series_has_msgid(const struct mp_series *s, const char *id)
{
	size_t k;

	if (!s || !id)
		return false;
	if (s->cover && s->cover->message_id &&
	    !strcmp(s->cover->message_id, id))
		return true;
	for (k = 0; k < s->npatches; k++)
		if (s->patches[k] && s->patches[k]->message_id &&
		    !strcmp(s->patches[k]->message_id, id))
			return true;
	return false;
}

const char *mp_series_title(const struct mp_series *s)
{
	const char *t = mp_patch_title(mp_series_first(s));
	size_t k;

	/* format-patch's untouched cover letter names nothing: patch 1 does. */
	if (t && s->cover && strstr(t, "*** SUBJECT HERE ***"))
		for (k = 0; k < s->npatches; k++)
			if (s->patches[k] && mp_patch_title(s->patches[k]))
				return mp_patch_title(s->patches[k]);
	return t;
}

void mp_set_free(struct mp_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->nseries; i++)
		series_free(set->series[i]);
	free(set->series);
	for (i = 0; i < set->nothers; i++)
		mp_patch_free(set->others[i]);
	free(set->others);
	for (i = 0; i < set->nerrors; i++) {
		free(set->errors[i].where);
		free(set->errors[i].message);
	}
	free(set->errors);
	free(set);
}

/* Build, for each union-find root, the list of its members. */
struct group {
	size_t *m;
	size_t n, alloc;
	size_t first; /* lowest entry index: arrival order */
};

static const char *patch_title(const struct mp_patch *p)
{
	if (!p)
		return "";
	if (p->subject.title)
		return p->subject.title;
	return p->subject_raw ? p->subject_raw : "";
}

/*
 * A cover letter with no [PATCH 0/N] prefix: the thread root a patch
 * answers, written by the same sender, and not itself a reply.
 */
static struct entry *naked_cover(struct mp_collector *c, struct mp_patch *p)
{
	struct entry *a;

	if (!p || !p->in_reply_to)
		return NULL;
	a = find_entry(c, p->in_reply_to);
	if (!a || a->member || a->taken || a->series)
		return NULL;
	if (a->p->subject.reply || a->p->in_reply_to || a->p->nreferences ||
	    a->p->kind == MP_KIND_PULL)
		return NULL;
	if (g_ascii_strcasecmp(sender_email(a->p), sender_email(p)))
		return NULL;
	return a;
}

static struct mp_series *build_series(struct mp_collector *c,
				      struct mp_set *set, struct group *g,
				      size_t serial)
{
	struct mp_series *s = xcalloc(1, sizeof(*s));
	struct entry *first = &c->e[g->m[0]];
	size_t i;
	int total = 0;
	struct entry *cov;

	/* the patches' own count wins over a cover letter that miscounts */
	for (i = 0; i < g->n; i++)
		if (c->e[g->m[i]].index > 0 && c->e[g->m[i]].total > total)
			total = c->e[g->m[i]].total;
	if (!total)
		total = first->total;
	/* an extra "3/2" sent into the thread makes the series longer */
	for (i = 0; total > 0 && i < g->n; i++) {
		int idx = c->e[g->m[i]].index;

		if (idx > total && idx <= total + MAX_EXTRA)
			total = idx;
	}

	s->version = first->version;
	s->total = total > 0 ? total : 1;
	s->npatches = (size_t)s->total;
	s->patches = xcalloc(s->npatches, sizeof(*s->patches));
	for (i = 0; i < g->n; i++) {
		struct entry *e = &c->e[g->m[i]];
		int idx = total > 0 ? e->index : 1;

		if (total > 0 && idx == 0) {
			if (s->cover) {
				collector_errorf(
					c, e->p->message_id,
					"a second cover letter for the same "
					"series (v%d, %d patches); the first "
					"one is used",
					s->version, s->total);
				continue;
			}
			s->cover = e->p;
			e->taken = true;
			e->series = serial;
			continue;
		}
		if (idx < 1 || idx > s->total) {
			collector_errorf(c, e->p->message_id,
					 "patch %d/%d has an index beyond the "
					 "series total; it is left out",
					 idx, s->total);
			continue;
		}
		if (s->patches[idx - 1]) {
			collector_errorf(c, e->p->message_id,
					 "patch %d/%d of v%d was sent twice; "
					 "the first copy (%s) is used",
					 idx, s->total, s->version,
					 s->patches[idx - 1]->message_id);
			continue;
		}
		s->patches[idx - 1] = e->p;
		e->taken = true;
		e->series = serial;
	}
	/* patches that did not repeat their cover's version */
	if (s->cover && s->cover->subject.version > s->version)
		s->version = s->cover->subject.version;
	if (!s->cover) {
		struct mp_patch *p1 = NULL;

		for (i = 0; i < s->npatches && !p1; i++)
			p1 = s->patches[i];
		cov = naked_cover(c, p1);
		if (cov) {
			s->cover = cov->p;
			cov->taken = true;
			cov->series = serial;
		}
	}
	/* git format-patch --base writes base-commit: in the cover only */
	for (i = 0; s->cover && s->cover->base_commit && i < s->npatches; i++)
		if (s->patches[i] && !s->patches[i]->base_commit)
			s->patches[i]->base_commit =
				xstrdup_or_null(s->cover->base_commit);
	for (i = 0; i < s->npatches; i++)
		if (!s->patches[i]) {
			s->missing = xrealloc(s->missing,
					      (s->nmissing + 1) * sizeof(int));
			s->missing[s->nmissing++] = (int)i + 1;
		}
	s->complete = s->nmissing == 0;
	(void)set;
	return s;
}

static int cmp_groups(const void *a, const void *b, void *ctx)
{
	const struct group *x = a, *y = b;
	struct mp_collector *c = ctx;
	int64_t tx = c->e[x->first].p->timestamp;
	int64_t ty = c->e[y->first].p->timestamp;

	if (tx && ty && tx != ty)
		return tx < ty ? -1 : 1;
	if (c->e[x->first].version != c->e[y->first].version)
		return c->e[x->first].version < c->e[y->first].version ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Mark series that a newer version in the same set replaces. */
static void mark_superseded(struct mp_collector *c, struct mp_set *set)
{
	GHashTable *newest =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	char **keys = xcalloc(set->nseries ? set->nseries : 1, sizeof(char *));
	size_t i, j;

	/* (1) a newer version that replies into an older one's thread */
	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		struct mp_series *s;
		const char *id;
		size_t k;

		if (!e->series)
			continue;
		s = set->series[e->series - 1];
		for (k = 0; (id = ancestor(e->p, k)) && k < 4096; k++) {
			struct entry *a = find_entry(c, id);
			struct mp_series *o;

			if (!a || !a->series || a->series == e->series)
				continue;
			o = set->series[a->series - 1];
			if (o->version < s->version)
				o->superseded = true;
		}
	}
	/* (2) the same sender and title at a higher version */
	for (i = 0; i < set->nseries; i++) {
		struct mp_series *s = set->series[i];
		struct mp_patch *p = s->cover;
		gpointer v;

		for (j = 0; !p && j < s->npatches; j++)
			p = s->patches[j];
		if (!p)
			continue;
		keys[i] = g_strdup_printf("%s\n%s", sender_email(p),
					  patch_title(p));
		v = g_hash_table_lookup(newest, keys[i]);
		if (!v || GPOINTER_TO_INT(v) < s->version)
			g_hash_table_replace(newest, g_strdup(keys[i]),
					     GINT_TO_POINTER(s->version));
	}
	for (i = 0; i < set->nseries; i++) {
		if (keys[i] &&
		    GPOINTER_TO_INT(g_hash_table_lookup(newest, keys[i])) >
			    set->series[i]->version)
			set->series[i]->superseded = true;
		g_free(keys[i]);
	}
	free(keys);
	g_hash_table_destroy(newest);
}

static size_t present(const struct mp_series *s)
{
	size_t k, n = 0;

	for (k = 0; k < s->npatches; k++)
		n += s->patches[k] != NULL;
	return n;
}

static bool same_strings(char **a, size_t na, char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++)
		if (strcmp(a[k] ? a[k] : "", b[k] ? b[k] : ""))
			return false;
	return true;
}

/* Does every patch of l have its twin in e: same title, files, diff? */
static bool same_patches(const struct mp_series *l, const struct mp_series *e)
{
	size_t k;

	if (l->npatches != e->npatches)
		return false;
	for (k = 0; k < l->npatches; k++) {
		const struct mp_patch *x = l->patches[k], *y = e->patches[k];

		if (!x)
			continue;
		if (!y)
			continue; /* the earlier posting lost it */
		if (strcmp(patch_title(x), patch_title(y)) ||
		    !same_strings(x->files, x->nfiles, y->files, y->nfiles))
			return false;
		if (x->diff && y->diff &&
		    (x->diff_len != y->diff_len ||
		     memcmp(x->diff, y->diff, x->diff_len)))
			return false;
		if (x->diff_hash && y->diff_hash &&
		    x->diff_hash != y->diff_hash)
			return false;
	}
	return true;
}

/*
 * A series posted again in its own thread with the same version: show
 * both postings, and let one of them be reviewed: the earlier, unless
 * the later one has more of the patches (or changed them: then it
 * replaces the earlier one, like a new version would).
 */
static void mark_reposts(struct mp_collector *c, struct mp_set *set)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i], *a;
		struct mp_series *l, *o;

		if (!e->repost_of || !e->series)
			continue;
		a = &c->e[e->repost_of - 1];
		if (!a->series || a->series == e->series)
			continue;
		l = set->series[e->series - 1];
		o = set->series[a->series - 1];
		if (l->repost_of || o->repost_of == e->series)
			continue; /* decided already */
		l->repost_of = a->series;
		l->resend = same_patches(l, o);
		if (present(l) > present(o) ||
		    (!l->resend && present(l) >= present(o)))
			o->superseded = true;
		else if (l->resend)
			l->superseded = true;
	}
}

/* Give each reply's trailers to the patch or cover it answers. */
static void attach_followups(struct mp_collector *c, struct mp_set *set)
{
	size_t i, k, depth;

	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i], *t = NULL;
		struct mp_patch *cur = e->p;
		struct mp_series *s;
		size_t budget = 4096; /* lookups: hostile References are long */

		if (e->taken || !e->nfu)
			continue;
		for (depth = 0; cur && depth < MAX_REPLY_DEPTH; depth++) {
			const char *id;
			struct entry *a = NULL;

			for (k = 0; budget && (id = ancestor(cur, k)); k++) {
				budget--;
				a = find_entry(c, id);
				if (a)
					break;
			}
			if (!a)
				break;
			if (a->taken) {
				t = a;
				break;
			}
			cur = a->p;
		}
		if (!t)
			continue;
		s = set->series[t->series - 1];
		for (k = 0; k < e->nfu; k++) {
			const char *key = e->fu[k].key, *val = e->fu[k].value;

			if (t->p == s->cover)
				add_followup(&s->followups, &s->nfollowups,
					     s->cover->trailers,
					     s->cover->ntrailers, key, val);
			else
				add_followup(&t->p->followups,
					     &t->p->nfollowups, t->p->trailers,
					     t->p->ntrailers, key, val);
		}
	}
}

struct mp_set *mp_collector_finish(struct mp_collector *c)
{
	struct mp_set *set = xcalloc(1, sizeof(*set));
	struct group *groups = NULL;
	size_t ngroups = 0, agroups = 0, i, aothers = 0, aseries = 0;
	GHashTable *root_group;

	if (!c)
		return set;
	group_members(c);

	/* members by union-find root, in arrival order */
	root_group = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		size_t r;
		gpointer v;
		struct group *g;

		if (!e->member)
			continue;
		r = uf_find(c, i);
		v = g_hash_table_lookup(root_group, GSIZE_TO_POINTER(r + 1));
		if (!v) {
			ALLOC_GROW(groups, ngroups + 1, agroups);
			g = &groups[ngroups++];
			memset(g, 0, sizeof(*g));
			g->first = i;
			g_hash_table_insert(root_group, GSIZE_TO_POINTER(r + 1),
					    GSIZE_TO_POINTER(ngroups));
		} else {
			g = &groups[GPOINTER_TO_SIZE(v) - 1];
		}
		ALLOC_GROW(g->m, g->n + 1, g->alloc);
		g->m[g->n++] = i;
	}
	g_hash_table_destroy(root_group);
	if (ngroups)
		qsort_r(groups, ngroups, sizeof(*groups), cmp_groups, c);

	for (i = 0; i < ngroups; i++) {
		struct group *g = &groups[i];
		size_t j;
		bool any_patch = false;

		for (j = 0; j < g->n; j++)
			if (c->e[g->m[j]].index > 0 || c->e[g->m[j]].total == 0)
				any_patch = true;
		if (any_patch) {
			/* a lone cover with no patch is not a series */
			ALLOC_GROW(set->series, set->nseries + 1, aseries);
			set->series[set->nseries] =
				build_series(c, set, g, set->nseries + 1);
			set->nseries++;
		}
		free(g->m);
	}
	free(groups);
	set->series = xrealloc(set->series, (set->nseries ? set->nseries : 1) *
						    sizeof(*set->series));

	mark_superseded(c, set);
	mark_reposts(c, set);
	attach_followups(c, set);

	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];

		if (!e->taken) {
			ALLOC_GROW(set->others, set->nothers + 1, aothers);
			set->others[set->nothers++] = e->p;
		}
		free_trailers(e->fu, e->nfu);
	}
	if (c->dropped_errors) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "%zu more problems were found and not listed",
			 c->dropped_errors);
		c->dropped_errors = 0;
		c->nerrors--; /* make room for the summary in the cap */
		free(c->errors[c->nerrors].where);
		free(c->errors[c->nerrors].message);
		mp_collector_error(c, "input", msg);
	}
	set->errors = c->errors;
	set->nerrors = c->nerrors;
	g_hash_table_destroy(c->by_id);
	free(c->e);
	free(c);
	return set;
}
