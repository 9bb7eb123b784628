#!/bin/sh
# make demo: build a small demo repository and a 3-patch series with
# git format-patch, then review the series with the offline voters.
# Everything is made here at run time, in build/demo/ (removed and
# remade on every run); nothing outside it is touched.
set -eu

QUORUM=${1:-./quorum}
# An absolute path: the script changes directory below.
case $QUORUM in /*) ;; *) QUORUM=$(cd "$(dirname "$QUORUM")" && pwd)/$(basename "$QUORUM") ;; esac
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DEMO=${QUORUM_DEMO_DIR:-$TOP/build/demo}
REPO=$DEMO/kvstore

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Dana Developer" GIT_AUTHOR_EMAIL="dana@example.org"
export GIT_COMMITTER_NAME="Dana Developer" GIT_COMMITTER_EMAIL="dana@example.org"
export GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"

rm -rf "$DEMO"
mkdir -p "$REPO"
cd "$REPO"
git init -q -b main .

cat >kv.h <<'EOC'
#ifndef KV_H
#define KV_H
#include <pthread.h>
#include <stddef.h>

struct kv_entry {
	char *key;
	char *value;
	struct kv_entry *next;
};

struct kv_table {
	pthread_mutex_t lock;
	struct kv_entry *buckets[64];
	size_t count;
};

int kv_put(struct kv_table *t, const char *key, const char *value);
const char *kv_get(struct kv_table *t, const char *key);
#endif
EOC
cat >kv.c <<'EOC'
#include <stdlib.h>
#include <string.h>

#include "kv.h"

static unsigned int kv_hash(const char *key)
{
	unsigned int h = 5381;

	while (*key)
		h = h * 33 + (unsigned char)*key++;
	return h % 64;
}

int kv_put(struct kv_table *t, const char *key, const char *value)
{
	struct kv_entry *e = calloc(1, sizeof(*e));
	unsigned int b = kv_hash(key);

	if (!e)
		return -1;
	e->key = strdup(key);
	e->value = strdup(value);
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		free(e);
		return -1;
	}
	pthread_mutex_lock(&t->lock);
	e->next = t->buckets[b];
	t->buckets[b] = e;
	t->count++;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

const char *kv_get(struct kv_table *t, const char *key)
{
	struct kv_entry *e;

	for (e = t->buckets[kv_hash(key)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e->value;
	return NULL;
}
EOC
git add kv.h kv.c
git commit -q -m "kv: a small hash table"
git tag demo-base

# Patch 1: fine.
cat >>kv.c <<'EOC'

size_t kv_count(struct kv_table *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
EOC
sed -i 's/^const char \*kv_get.*;$/&\nsize_t kv_count(struct kv_table *t);/' kv.h
git commit -q -a -m "kv: add kv_count()

Callers want the number of entries without walking the buckets.

Signed-off-by: Dana Developer <dana@example.org>"

# Patch 2: a snapshot of the keys, whose allocation is never checked.
cat >>kv.c <<'EOC'

char **kv_keys(struct kv_table *t, size_t *n)
{
	char **keys;
	struct kv_entry *e;
	size_t i, k = 0;

	pthread_mutex_lock(&t->lock);
	keys = malloc(t->count * sizeof(*keys));
	for (i = 0; i < 64; i++)
		for (e = t->buckets[i]; e; e = e->next)
			keys[k++] = e->key;
	pthread_mutex_unlock(&t->lock);
	*n = k;
	return keys;
}
EOC
sed -i 's/^size_t kv_count.*;$/&\nchar **kv_keys(struct kv_table *t, size_t *n);/' kv.h
git commit -q -a -m "kv: add kv_keys() to list the keys

Returns a snapshot array of the keys; the caller frees the array.

Signed-off-by: Dana Developer <dana@example.org>"

# Patch 3: kv_get() takes the lock, and one return path forgets it.
python3 - <<'EOP'
import re
src = open("kv.c").read()
old = """const char *kv_get(struct kv_table *t, const char *key)
{
	struct kv_entry *e;

	for (e = t->buckets[kv_hash(key)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e->value;
	return NULL;
}"""
new = """const char *kv_get(struct kv_table *t, const char *key)
{
	struct kv_entry *e;
	const char *v = NULL;

	pthread_mutex_lock(&t->lock);
	for (e = t->buckets[kv_hash(key)]; e; e = e->next) {
		if (!strcmp(e->key, key)) {
			v = e->value;
			break;
		}
	}
	if (!v)
		return NULL;
	pthread_mutex_unlock(&t->lock);
	return v;
}"""
open("kv.c", "w").write(src.replace(old, new))
EOP
git commit -q -a -m "kv: take the table lock in kv_get()

kv_put() can run concurrently with lookups; walk the bucket under the
lock so a lookup never sees a half-linked entry.

Signed-off-by: Dana Developer <dana@example.org>"

git format-patch -q --cover-letter --base=demo-base -o "$DEMO/series" demo-base
# Give the cover letter a real subject and blurb, as a person would.
cover=$(ls "$DEMO"/series/0000-*.patch)
sed -i -e 's/\*\*\* SUBJECT HERE \*\*\*/kv: counting, listing and locked lookups/' \
	-e 's/\*\*\* BLURB HERE \*\*\*/Three small additions to the hash table./' "$cover"
cat "$DEMO"/series/*.patch >"$DEMO/series.mbox"
# The reviewer's tree is at the base, as when a series arrives on the list.
git checkout -q demo-base

echo "demo: repository $REPO"
echo "demo: series     $DEMO/series.mbox (3 patches from git format-patch)"
echo "demo: running    quorum review -C $REPO $DEMO/series.mbox"
echo
rc=0
"$QUORUM" review -C "$REPO" "$DEMO/series.mbox" || rc=$?
echo
case $rc in
0) echo "demo: quorum found nothing (exit 0)" ;;
1) echo "demo: quorum found issues at quorum (exit 1), as expected" ;;
*) echo "demo: quorum failed (exit $rc)"; exit "$rc" ;;
esac
