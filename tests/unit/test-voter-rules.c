// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for review/voter-rules.c: the offline C heuristics voter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "review/review.h"

/*
 * Build a one-hunk git diff of path from lines that carry their origin
 * (' ', '+', '-') and run the rules voter over it.
 */
static void run_rules_at(const char *path, const char *section,
			 const char *const *lines, int patch_index,
			 struct rv_findings *fs)
{
	struct sb text = SB_INIT;
	struct rv_diff *d = NULL;
	struct rv_context ctx;
	struct errmsg err = {""};
	int old_n = 0, new_n = 0, ret;
	size_t i;

	for (i = 0; lines[i]; i++) {
		if (lines[i][0] != '+')
			old_n++;
		if (lines[i][0] != '-')
			new_n++;
	}
	sb_addf(&text, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path,
		path, path);
	sb_addf(&text, "@@ -100,%d +100,%d @@%s%s\n", old_n, new_n,
		section ? " " : "", section ? section : "");
	for (i = 0; lines[i]; i++)
		sb_addf(&text, "%s\n", lines[i]);
	ret = rv_diff_parse(&d, text.buf, text.len, &err);
	if (ret)
		fail_msg("diff did not parse: %s", err.msg);
	memset(&ctx, 0, sizeof(ctx));
	ctx.patch_index = patch_index;
	ctx.diff = d;
	ctx.pre_tree = "";
	ctx.post_tree = "";
	memset(fs, 0, sizeof(*fs));
	ret = rv_voter_rules.review(&rv_voter_rules, &ctx, fs, &err);
	assert_int_equal(ret, 0);
	rv_diff_free(d);
	sb_release(&text);
}

static void run_rules(const char *const *lines, struct rv_findings *fs)
{
	run_rules_at("drivers/net/foo.c", NULL, lines, 0, fs);
}

static size_t count_cat(const struct rv_findings *fs, const char *cat)
{
	size_t i, n = 0;

	for (i = 0; i < fs->n; i++)
		if (!strcmp(fs->items[i].category, cat))
			n++;
	return n;
}

static const struct rv_finding *first_cat(const struct rv_findings *fs,
					  const char *cat)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (!strcmp(fs->items[i].category, cat))
			return &fs->items[i];
	fail_msg("no %s finding", cat);
	return NULL;
}

/* The snippet must raise exactly `want` findings of category cat. */
#define EXPECT(cat, want, ...)                                                 \
	do {                                                                   \
		static const char *const lines_[] = {__VA_ARGS__, NULL};       \
		struct rv_findings fs_;                                        \
		run_rules(lines_, &fs_);                                       \
		if (count_cat(&fs_, cat) != (want))                            \
			fail_msg("line %d: %zu %s findings, want %d "          \
				 "(of %zu in all)",                            \
				 __LINE__, count_cat(&fs_, cat), cat,          \
				 (int)(want), fs_.n);                          \
		rv_findings_release(&fs_);                                     \
	} while (0)

/* ---- null-deref ----------------------------------------------------- */

static void test_alloc_unchecked_fires(void **state)
{
	static const char *const lines[] = {
		" static int foo_probe(struct platform_device *pdev)",
		" {",
		" \tstruct foo_priv *priv;",
		" ",
		"+\tpriv = kzalloc(sizeof(*priv), GFP_KERNEL);",
		"+\tpriv->dev = &pdev->dev;",
		" \tplatform_set_drvdata(pdev, priv);",
		" \treturn 0;",
		" }",
		NULL,
	};
	struct rv_findings fs;
	const struct rv_finding *f;

	run_rules_at("drivers/net/foo.c", NULL, lines, 2, &fs);
	assert_int_equal(fs.n, 1);
	f = &fs.items[0];
	assert_string_equal(f->category, "null-deref");
	assert_int_equal(f->patch, 2);
	assert_string_equal(f->file, "drivers/net/foo.c");
	assert_int_equal(f->line_start, 104);
	assert_int_equal(f->line_end, 105);
	assert_string_equal(f->function, "foo_probe");
	assert_int_equal(f->severity, RV_SEV_MEDIUM);
	assert_string_equal(f->quote,
			    "\tpriv = kzalloc(sizeof(*priv), GFP_KERNEL);\n"
			    "\tpriv->dev = &pdev->dev;");
	assert_non_null(strstr(f->title, "kzalloc"));
	assert_non_null(strstr(f->title, "`priv`"));
	assert_non_null(strstr(f->explanation, "line 105"));
	assert_int_equal(f->nvoters, 1);
	assert_string_equal(f->voters[0], "rules");
	rv_findings_release(&fs);
}

static void test_alloc_unchecked_variants_fire(void **state)
{
	/* userspace: the destination of memcpy */
	EXPECT("null-deref", 1, "+\tchar *buf = malloc(len + 1);",
	       "+\tmemcpy(buf, src, len);", "+\tbuf[len] = '\\0';");
	/* the call spans lines; declaration with a cast */
	EXPECT("null-deref", 1, "+\tstruct foo *f = (struct foo *)calloc(1,",
	       "+\t\t\t\t\t\tsizeof(*f));", "+\tf->refs = 1;");
	/* unary * and array index */
	EXPECT("null-deref", 1,
	       "+\tint *v = kmalloc_array(n, sizeof(int), GFP_KERNEL);",
	       "+\t*v = 0;");
	EXPECT("null-deref", 1, "+\tname = kstrdup(src, GFP_KERNEL);",
	       "+\tname[0] = toupper(name[0]);");
	/* a member as the lvalue, used through the chain */
	EXPECT("null-deref", 1,
	       "+\tdev->stats = devm_kzalloc(&pdev->dev, sizeof(*dev->stats), "
	       "GFP_KERNEL);",
	       "+\tdev->stats->rx = 0;");
	/* the patch adds a use between an existing allocation and its check */
	EXPECT("null-deref", 1, " \tp = kmalloc(sizeof(*p), GFP_KERNEL);",
	       "+\tp->flags = 0;", " \tif (!p)", " \t\treturn -ENOMEM;");
	/* testing a member is a dereference, not a check of p */
	EXPECT("null-deref", 1, "+\tp = kzalloc(sizeof(*p), GFP_KERNEL);",
	       "+\tif (!p->ops)", "+\t\treturn -EINVAL;");
	/* the context line after the added allocation dereferences it */
	EXPECT("null-deref", 1, "+\tp = vmalloc(size);", " \tp->len = size;");
	/* returning a member of it dereferences it too */
	EXPECT("null-deref", 1, "+\tp = realloc(p, n);", "+\treturn p->len;");
}

static void test_alloc_checked_silent(void **state)
{
	EXPECT("null-deref", 0, "+\tpriv = kzalloc(sizeof(*priv), GFP_KERNEL);",
	       "+\tif (!priv)", "+\t\treturn -ENOMEM;",
	       "+\tpriv->dev = &pdev->dev;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tif (p == NULL)",
	       "+\t\treturn -1;", "+\tp[0] = 0;");
	EXPECT("null-deref", 0, "+\tp = kmalloc(n, GFP_KERNEL);",
	       "+\tif (unlikely(!p))", "+\t\tgoto err;", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = kzalloc(n, GFP_KERNEL);",
	       "+\tif (IS_ERR_OR_NULL(p))", "+\t\treturn -ENOMEM;",
	       "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = kzalloc(n, GFP_KERNEL);",
	       "+\tBUG_ON(!p);", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = kzalloc(n, GFP_KERNEL);",
	       "+\tif (WARN_ON(!p))", "+\t\treturn;", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tassert(p);",
	       "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tx = p ? p->a : 0;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tif (p)",
	       "+\t\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tif (!(p))",
	       "+\t\treturn;", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tif (NULL == p)",
	       "+\t\treturn;", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);",
	       "+\tif (p != NULL && p->a)", "+\t\tp->b = 1;");
}

static void test_alloc_near_misses_silent(void **state)
{
	/* cannot fail */
	EXPECT("null-deref", 0,
	       "+\tp = kmalloc(sizeof(*p), GFP_KERNEL | __GFP_NOFAIL);",
	       "+\tp->a = 1;");
	/* the result is returned directly */
	EXPECT("null-deref", 0,
	       "+\treturn kzalloc(sizeof(struct foo), GFP_KERNEL);");
	EXPECT("null-deref", 0, "+\tp = kzalloc(sizeof(*p), GFP_KERNEL);",
	       "+\treturn p;");
	/* assignment inside the check */
	EXPECT("null-deref", 0, "+\tif (!(p = kmalloc(n, GFP_KERNEL)))",
	       "+\t\treturn -ENOMEM;", "+\tp->a = 1;");
	/* identifier boundaries: xmalloc aborts, my_malloc_foo is not malloc */
	EXPECT("null-deref", 0, "+\tp = xmalloc(n);", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = my_malloc_foo(n);", "+\tp->a = 1;");
	EXPECT("null-deref", 0, "+\tp = g_malloc(n);", "+\tp->a = 1;");
	/* sizeof does not evaluate its operand */
	EXPECT("null-deref", 0, "+\tp = kmalloc(sizeof(*p), GFP_KERNEL);",
	       "+\tmemset(q, 0, sizeof(*p));", "+\tlen = sizeof(p->a);");
	/* comments and strings are not code */
	EXPECT("null-deref", 0, "+\tp = malloc(n); /* p->a is set later */",
	       "+\tputs(\"p->a = 1;\");", "+\t// p->a = 1;");
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\t/*", "+\t * p->a = 1;",
	       "+\t */", "+\tif (!p)", "+\t\treturn;");
	/* the allocation is removed, not added */
	EXPECT("null-deref", 0, "-\tp = malloc(n);", " \tp->a = 1;");
	/* a bug the patch did not write: all context */
	EXPECT("null-deref", 0, " \tp = malloc(n);", " \tp->a = 1;",
	       "+\tp->b = 2;");
	/* reassigned before use */
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tp = other;",
	       "+\tp->a = 1;");
	/* used on another path, after the block that allocated it */
	EXPECT("null-deref", 0, "+\tif (x) {", "+\t\tp = malloc(n);", "+\t}",
	       "+\tp->a = 1;");
	/* an array element: too complex to track, stay silent */
	EXPECT("null-deref", 0, "+\tv[i] = malloc(n);", "+\tv[i]->a = 1;");
	/* a preprocessor line is not code we judge */
	EXPECT("null-deref", 0, "+#define ALLOC(p) p = malloc(1); p->a = 1");
	/* its address escapes to a helper that may fail it */
	EXPECT("null-deref", 0, "+\tp = malloc(n);", "+\tcheck_ptr(&p);",
	       "+\tp->a = 1;");
}

/* ---- lock-leak ------------------------------------------------------ */

static void test_lock_leak_fires(void **state)
{
	static const char *const lines[] = {
		" static int foo_set(struct foo *foo, int v)",
		" {",
		"+\tspin_lock(&foo->lock);",
		"+\tif (v < 0)",
		"+\t\treturn -EINVAL;",
		" \tfoo->v = v;",
		"+\tspin_unlock(&foo->lock);",
		" \treturn 0;",
		" }",
		NULL,
	};
	struct rv_findings fs;
	const struct rv_finding *f;

	run_rules(lines, &fs);
	assert_int_equal(fs.n, 1);
	f = first_cat(&fs, "lock-leak");
	assert_int_equal(f->line_start, 102);
	assert_int_equal(f->line_end, 104);
	assert_string_equal(f->function, "foo_set");
	assert_int_equal(f->severity, RV_SEV_HIGH);
	assert_string_equal(f->quote,
			    "\tspin_lock(&foo->lock);\n\t\treturn -EINVAL;");
	assert_non_null(strstr(f->title, "foo->lock"));
	assert_non_null(strstr(f->title, "line 104"));
	rv_findings_release(&fs);
}

static void test_lock_leak_variants_fire(void **state)
{
	/* braced early return; only the return is added */
	EXPECT("lock-leak", 1, " \tmutex_lock(&dev->mutex);",
	       " \tret = foo_hw_read(dev);", "+\tif (ret) {",
	       "+\t\tdev_err(dev->dev, \"read failed\\n\");",
	       "+\t\treturn ret;", "+\t}", " \tmutex_unlock(&dev->mutex);");
	/* irqsave pairs with irqrestore */
	EXPECT("lock-leak", 1, "+\tspin_lock_irqsave(&priv->lock, flags);",
	       "+\tif (!priv->running)", "+\t\treturn;",
	       "+\tspin_unlock_irqrestore(&priv->lock, flags);");
	/* goto to a label that returns without unlocking */
	EXPECT("lock-leak", 1, "+\tpthread_mutex_lock(&q->mu);",
	       "+\tif (q->closed)", "+\t\tgoto out;", "+\tq->n++;",
	       "+\tpthread_mutex_unlock(&q->mu);", "+out:", "+\treturn ret;");
	/* rcu read-side section */
	EXPECT("lock-leak", 1, "+\trcu_read_lock();",
	       "+\tdev = rcu_dereference(priv->dev);", "+\tif (!dev)",
	       "+\t\treturn -ENODEV;", "+\tfoo(dev);", "+\trcu_read_unlock();");
	/* unlocking a different lock does not release this one */
	EXPECT("lock-leak", 1, "+\tspin_lock(&a->lock);", "+\tif (x) {",
	       "+\t\tspin_unlock(&b->lock);", "+\t\treturn -EBUSY;", "+\t}",
	       "+\tspin_unlock(&a->lock);");
	/* the lock object is a pointer, not &x */
	EXPECT("lock-leak", 1, "+\tmutex_lock(lock);", "+\tif (err)",
	       "+\t\treturn err;", "+\tmutex_unlock(lock);");
	/* the else branch still holds it */
	EXPECT("lock-leak", 1, "+\twrite_lock(&tbl->rw);", "+\tif (a) {",
	       "+\t\twrite_unlock(&tbl->rw);", "+\t\treturn 0;", "+\t} else {",
	       "+\t\treturn -1;", "+\t}", "+\twrite_unlock(&tbl->rw);");
}

static void test_lock_leak_silent(void **state)
{
	/* unlocked before the early return */
	EXPECT("lock-leak", 0, "+\tspin_lock(&foo->lock);", "+\tif (v < 0) {",
	       "+\t\tspin_unlock(&foo->lock);", "+\t\treturn -EINVAL;", "+\t}",
	       "+\tfoo->v = v;", "+\tspin_unlock(&foo->lock);", "+\treturn 0;");
	/* the error path jumps to an unlock label */
	EXPECT("lock-leak", 0, "+\tspin_lock_irqsave(&p->lock, flags);",
	       "+\tif (err)", "+\t\tgoto out_unlock;", "+\tp->x = 1;",
	       "+out_unlock:", "+\tspin_unlock_irqrestore(&p->lock, flags);",
	       "+\treturn err;");
	/* a label that does unlock before returning */
	EXPECT("lock-leak", 0, "+\tmutex_lock(&m);", "+\tif (err)",
	       "+\t\tgoto out;", "+\tx = 1;", "+out:", "+\tmutex_unlock(&m);",
	       "+\treturn err;");
	/* a trylock whose failure returns */
	EXPECT("lock-leak", 0, "+\tif (!spin_trylock(&p->lock))",
	       "+\t\treturn -EBUSY;", "+\tp->x = 1;",
	       "+\tspin_unlock(&p->lock);");
	EXPECT("lock-leak", 0, "+\tif (mutex_lock_interruptible(&p->m))",
	       "+\t\treturn -EINTR;", "+\tp->x = 1;",
	       "+\tmutex_unlock(&p->m);");
	/* a helper that returns with the lock held, on purpose */
	EXPECT("lock-leak", 0, "+\tspin_lock(&p->lock);", "+\treturn p;");
	/* the early return exists but nothing shows the function unlocks */
	EXPECT("lock-leak", 0, "+\tspin_lock(&p->lock);", "+\tif (x)",
	       "+\t\treturn 1;", "+\tp->x = 1;");
	/* neither the lock nor the return is added by the patch */
	EXPECT("lock-leak", 0, " \tspin_lock(&p->lock);", " \tif (x)",
	       " \t\treturn 1;", "+\tp->y = 2;", " \tspin_unlock(&p->lock);");
	/* the lock call is only in a comment */
	EXPECT("lock-leak", 0, "+\t/* spin_lock(&p->lock); */", "+\tif (x)",
	       "+\t\treturn 1;", "+\tspin_unlock(&p->lock);");
	/* conditional lock */
	EXPECT("lock-leak", 0, "+\tif (need)", "+\t\tspin_lock(&p->lock);",
	       "+\tif (x)", "+\t\treturn 1;", "+\tspin_unlock(&p->lock);");
}

/* ---- unsafe-string -------------------------------------------------- */

static void test_unsafe_string_fires(void **state)
{
	static const char *const lines[] = {
		" static void foo_name(struct foo *f, const char *src)",
		" {",
		"+\tchar name[16];",
		"+",
		"+\tstrcpy(name, src);",
		" \tfoo_set_name(f, name);",
		" }",
		NULL,
	};
	struct rv_findings fs;
	const struct rv_finding *f;

	run_rules(lines, &fs);
	assert_int_equal(fs.n, 1);
	f = first_cat(&fs, "unsafe-string");
	assert_int_equal(f->line_start, 104);
	assert_int_equal(f->line_end, 104);
	assert_int_equal(f->severity, RV_SEV_MEDIUM);
	assert_string_equal(f->quote, "\tstrcpy(name, src);");
	assert_non_null(strstr(f->title, "name[16]"));
	assert_string_equal(f->function, "foo_name");
	rv_findings_release(&fs);

	EXPECT("unsafe-string", 1, "+\tchar buf[IFNAMSIZ];",
	       "+\tsprintf(buf, \"%s-%d\", dev->name, id);");
	EXPECT("unsafe-string", 1, " \tchar path[64];",
	       "+\tstrcat(path, name);");
	EXPECT("unsafe-string", 1, "+\tchar line[128];",
	       "+\tvsprintf(line, fmt, ap);");
	EXPECT("unsafe-string", 1, "+\tchar b[8];",
	       "+\tsprintf(b, \"%-6s\", s);");
	EXPECT("unsafe-string", 1, "+\tchar b[8];", "+\tif (x)",
	       "+\t\tb[0] = 0;", "+\telse strcpy(b, s);");
}

static void test_gets_always(void **state)
{
	static const char *const lines[] = {"+\tgets(p);", NULL};
	struct rv_findings fs;

	run_rules(lines, &fs);
	assert_int_equal(count_cat(&fs, "unsafe-string"), 1);
	assert_int_equal(fs.items[0].severity, RV_SEV_HIGH);
	rv_findings_release(&fs);
	EXPECT("unsafe-string", 0, "+\tfgets(buf, sizeof(buf), stdin);");
	EXPECT("unsafe-string", 0, "+\tx = s->gets(s);");
}

static void test_unsafe_string_silent(void **state)
{
	/* bounded by the literal */
	EXPECT("unsafe-string", 0, "+\tchar name[16];",
	       "+\tstrcpy(name, \"eth0\");");
	/* bounded calls */
	EXPECT("unsafe-string", 0, "+\tchar name[16];",
	       "+\tstrscpy(name, src, sizeof(name));",
	       "+\tsnprintf(name, sizeof(name), \"%s\", src);");
	/* only numbers, or a precision on %s */
	EXPECT("unsafe-string", 0, "+\tchar b[32];",
	       "+\tsprintf(b, \"%d:%u\", a, c);", "+\tsprintf(b, \"%.8s\", s);",
	       "+\tsprintf(b, \"100%%s\");");
	/* the destination is not a visible fixed array */
	EXPECT("unsafe-string", 0, "+\tstrcpy(dst, src);");
	EXPECT("unsafe-string", 0, "+\tchar *name = buf;",
	       "+\tstrcpy(name, src);");
	/* not the libc functions */
	EXPECT("unsafe-string", 0, "+\tchar name[16];",
	       "+\tmy_strcpy(name, src);", "+\tstrcpy_safe(name, src);");
	/* a prototype is not a call */
	EXPECT("unsafe-string", 0, "+char *strcpy(char *d, const char *s);",
	       "+\tchar name[4];");
}

/* ---- alloc-overflow ------------------------------------------------- */

static void test_alloc_overflow_fires(void **state)
{
	static const char *const lines[] = {
		"+\tp = kmalloc(count * sizeof(*p), GFP_KERNEL);",
		"+\tif (!p)",
		"+\t\treturn -ENOMEM;",
		NULL,
	};
	struct rv_findings fs;
	const struct rv_finding *f;

	run_rules(lines, &fs);
	assert_int_equal(fs.n, 1);
	f = first_cat(&fs, "alloc-overflow");
	assert_int_equal(f->line_start, 100);
	assert_non_null(strstr(f->explanation, "kmalloc_array"));
	assert_non_null(strstr(f->title, "count*sizeof(*p)"));
	rv_findings_release(&fs);

	EXPECT("alloc-overflow", 1, "+\tbuf = malloc(w * h);", "+\tif (!buf)",
	       "+\t\treturn NULL;");
	EXPECT("alloc-overflow", 1,
	       "+\te = devm_kzalloc(dev, n * sizeof(struct entry), "
	       "GFP_KERNEL);",
	       "+\tif (!e)", "+\t\treturn -ENOMEM;");
	EXPECT("alloc-overflow", 1,
	       "+\th = kzalloc(sizeof(*h) + n * sizeof(h->e[0]), GFP_KERNEL);",
	       "+\tif (!h)", "+\t\treturn -ENOMEM;");
}

static void test_alloc_overflow_silent(void **state)
{
	EXPECT("alloc-overflow", 0,
	       "+\tp = kmalloc(sizeof(*p) * 16, GFP_KERNEL);");
	EXPECT("alloc-overflow", 0,
	       "+\tp = kmalloc(MAX_ENTRIES * sizeof(*p), GFP_KERNEL);");
	EXPECT("alloc-overflow", 0,
	       "+\tp = kmalloc_array(n, sizeof(*p), GFP_KERNEL);",
	       "+\tq = kcalloc(n, sizeof(*q), GFP_KERNEL);",
	       "+\tr = calloc(n, sizeof(*r));");
	EXPECT("alloc-overflow", 0, "+\tp = malloc(len + 1);",
	       "+\tq = malloc(n * 2);", "+\tr = malloc(*lenp);");
	EXPECT("alloc-overflow", 0,
	       "+\tif (check_mul_overflow(n, sizeof(*p), &bytes))",
	       "+\t\treturn -EOVERFLOW;",
	       "+\tp = kmalloc(n * sizeof(*p), GFP_KERNEL);");
	EXPECT("alloc-overflow", 0, "+\tif (n > SIZE_MAX / sizeof(*p))",
	       "+\t\treturn NULL;", "+\tp = malloc(n * sizeof(*p));");
	EXPECT("alloc-overflow", 0,
	       "+\tp = kmalloc(struct_size(p, items, n), GFP_KERNEL);");
	/* only context, not added */
	EXPECT("alloc-overflow", 0, " \tp = malloc(w * h);", "+\tx = 1;");
}

/* ---- use-after-free ------------------------------------------------- */

static void test_use_after_free_fires(void **state)
{
	static const char *const lines[] = {
		" static void foo_release(struct foo *foo)",
		" {",
		"+\tkfree(foo);",
		"+\tpr_debug(\"released %d\\n\", foo->id);",
		" }",
		NULL,
	};
	struct rv_findings fs;
	const struct rv_finding *f;

	run_rules(lines, &fs);
	assert_int_equal(fs.n, 1);
	f = first_cat(&fs, "use-after-free");
	assert_int_equal(f->line_start, 102);
	assert_int_equal(f->line_end, 103);
	assert_int_equal(f->severity, RV_SEV_HIGH);
	assert_string_equal(f->function, "foo_release");
	assert_string_equal(f->quote,
			    "\tkfree(foo);\n"
			    "\tpr_debug(\"released %d\\n\", foo->id);");
	rv_findings_release(&fs);

	EXPECT("use-after-free", 1, "+\tfree(buf);", "+\tbuf[0] = 0;");
	EXPECT("use-after-free", 1, "+\tkfree(p);", "+\treturn p->ret;");
	EXPECT("use-after-free", 1, "+\tkfree(p);", "+\tkfree(p->name);");
	EXPECT("use-after-free", 1, "+\tvfree(ctx->buf);", "+\t*ctx->buf = 0;");
	/* the right side of the reassignment still reads freed memory */
	EXPECT("use-after-free", 1, "+\tfree(node);", "+\tnode = node->next;");
	EXPECT("use-after-free", 1, "+\tdevm_kfree(dev, priv);",
	       "+\tpriv->state = 0;");
	/* an existing free, and the patch adds a use after it */
	EXPECT("use-after-free", 1, " \tkfree(req);", "+\treq->done = true;");
	EXPECT("use-after-free", 1, "+\tkfree_skb(skb);",
	       "+\tstats->bytes += skb->len;");
	/* and freeing again is a double free */
	EXPECT("double-free", 1, "+\tkfree(p);", "+\tx = 1;", "+\tkfree(p);");
}

static void test_use_after_free_silent(void **state)
{
	EXPECT("use-after-free", 0, "+\tkfree(p);", "+\tp = NULL;", "+\tif (p)",
	       "+\t\tp->a = 1;");
	/* freed on an error path that leaves */
	EXPECT("use-after-free", 0, "+\tif (err) {", "+\t\tkfree(p);",
	       "+\t\treturn err;", "+\t}", "+\tp->a = 1;");
	/* freeing a member, then using another member */
	EXPECT("use-after-free", 0, "+\tkfree(p->name);", "+\tp->name = NULL;",
	       "+\tp->len = 0;");
	EXPECT("use-after-free", 0, "+\tkfree(p->name);", "+\tp->len = 0;");
	/* the loop frees each entry; the iterator moves on */
	EXPECT("use-after-free", 0,
	       "+\tlist_for_each_entry_safe(pos, tmp, &head, list) {",
	       "+\t\tlist_del(&pos->list);", "+\t\tkfree(pos);", "+\t}");
	/* sizeof and comments are not uses */
	EXPECT("use-after-free", 0, "+\tkfree(p);",
	       "+\tlen = sizeof(*p); /* p->x */");
	/* conditional free without braces: unsure, silent */
	EXPECT("use-after-free", 0, "+\tif (x)", "+\t\tkfree(p);",
	       "+\tp->a = 1;");
	/* not the libc free */
	EXPECT("use-after-free", 0, "+\tmy_free(p);", "+\tp->a = 1;");
	EXPECT("use-after-free", 0, "+\tkfree(p);", "+\tq->p->a = 1;");
	/* the free is in a removed line */
	EXPECT("use-after-free", 0, "-\tkfree(p);", "+\tp->a = 1;");
	/* a bug the patch did not write: all context */
	EXPECT("use-after-free", 0, " \tkfree(p);", " \tp->a = 1;",
	       "+\tp->b = 2;");
	/* address taken: a helper may reset it */
	EXPECT("use-after-free", 0, "+\tfree(p);", "+\treset(&p);",
	       "+\tp->a = 1;");
}

/*
 * With the post-image at hand, the unlock past the end of the hunk is
 * evidence enough; without it the voter stays silent.
 */
static void test_lock_leak_lookahead_in_repo(void **state)
{
	static const char file[] =
		"int foo_set(struct foo *foo, int v)\n" /* 1 */
		"{\n"
		"\tspin_lock(&foo->lock);\n"
		"\tif (v < 0)\n"
		"\t\treturn -EINVAL;\n" /* 5 */
		"\tfoo->v = v;\n"
		"\tfoo->w = v;\n"
		"\tspin_unlock(&foo->lock);\n"
		"\treturn 0;\n"
		"}\n" /* 10 */
		"\n"
		"int foo_get(struct foo *foo)\n"
		"{\n"
		"\tmutex_lock(&foo->m);\n"
		"\tif (!foo->ready)\n" /* 15 */
		"\t\treturn -EAGAIN;\n"
		"\treturn foo->v;\n"
		"}\n"
		"void other(struct foo *foo)\n"
		"{\n" /* 20 */
		"\tmutex_unlock(&foo->m);\n"
		"}\n"
		"int foo_put(struct foo *foo)\n" /* 23 */
		"{\n"
		"\tmutex_lock(&foo->m);\n" /* 25 */
		"\tif (foo->dead)\n"
		"\t\tgoto out;\n" /* 27 */
		"\tfoo->v = 0;\n"
		"\tmutex_unlock(&foo->m);\n"
		"out:\n" /* 30 */
		"\treturn 0;\n"
		"}\n"
		"int foo_put2(struct foo *foo)\n"
		"{\n"
		"\tmutex_lock(&foo->m);\n" /* 35 */
		"\tif (foo->dead)\n"
		"\t\tgoto out_free;\n"
		"\tfoo->v = 0;\n"
		"out_free:\n"
		"\tmutex_unlock(&foo->m);\n" /* 40 */
		"\treturn 0;\n"
		"}\n";
	static const char diff[] =
		"--- a/foo.c\n+++ b/foo.c\n"
		"@@ -1,5 +1,5 @@\n"
		" int foo_set(struct foo *foo, int v)\n"
		" {\n"
		"-\tspin_lock_bh(&foo->lock);\n"
		"+\tspin_lock(&foo->lock);\n"
		" \tif (v < 0)\n"
		" \t\treturn -EINVAL;\n"
		"@@ -13,4 +13,4 @@ int foo_get(struct foo *foo)\n"
		" {\n"
		"-\tmutex_lock(&foo->mm);\n"
		"+\tmutex_lock(&foo->m);\n"
		" \tif (!foo->ready)\n"
		" \t\treturn -EAGAIN;\n"
		"@@ -25,1 +25,3 @@\n" /* no section: the repo names it */
		" \tmutex_lock(&foo->m);\n"
		"+\tif (foo->dead)\n"
		"+\t\tgoto out;\n"
		"@@ -33,1 +35,3 @@ int foo_put2(struct foo *foo)\n"
		" \tmutex_lock(&foo->m);\n"
		"+\tif (foo->dead)\n"
		"+\t\tgoto out_free;\n";
	char dir[] = "/tmp/quorum-test-rules.XXXXXX";
	char cmd[512], id[RV_OID_HEXSZ + 1];
	struct rv_repo *repo = NULL;
	struct rv_diff *d = NULL;
	struct rv_context ctx;
	struct rv_findings fs = {NULL, 0, 0};
	struct errmsg err = {""};
	FILE *fp;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/foo.c", dir);
	fp = fopen(cmd, "w");
	assert_non_null(fp);
	fputs(file, fp);
	fclose(fp);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && git init -q . && git add foo.c && "
		 "git -c user.name=T -c user.email=t@example.org "
		 "commit -q -m init",
		 dir);
	if (system(cmd) != 0)
		skip();
	if (rv_repo_open(&repo, dir, &err) ||
	    rv_repo_resolve(repo, "HEAD", id, &err))
		fail_msg("repo: %s", err.msg);
	assert_int_equal(rv_diff_parse(&d, diff, strlen(diff), &err), 0);

	memset(&ctx, 0, sizeof(ctx));
	ctx.diff = d;
	ctx.pre_tree = "";
	ctx.post_tree = "";
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	assert_int_equal(fs.n, 0); /* no evidence in the hunk alone */

	ctx.repo = repo;
	ctx.post_tree = id;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	/* foo_set unlocks past its hunk; foo_get never does (the unlock
	 * further down the file belongs to another function); foo_put's
	 * `out:` label past the hunk returns without unlocking, foo_put2's
	 * label unlocks */
	assert_int_equal(fs.n, 2);
	assert_string_equal(fs.items[0].category, "lock-leak");
	assert_int_equal(fs.items[0].line_start, 3);
	assert_int_equal(fs.items[0].line_end, 5);
	assert_string_equal(fs.items[0].function, "foo_set");
	assert_string_equal(fs.items[1].category, "lock-leak");
	assert_int_equal(fs.items[1].line_start, 25);
	assert_int_equal(fs.items[1].line_end, 27);
	assert_string_equal(fs.items[1].function, "foo_put");
	assert_non_null(strstr(fs.items[1].title, "`goto`"));
	rv_findings_release(&fs);

	/* a post-image the repo does not have is "not available" */
	ctx.post_tree = "0123456789012345678901234567890123456789";
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	assert_int_equal(fs.n, 0);

	rv_diff_free(d);
	rv_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- the voter as a whole ------------------------------------------- */

static void test_non_c_files_skipped(void **state)
{
	static const char *const lines[] = {
		"+\tp = kzalloc(sizeof(*p), GFP_KERNEL);",
		"+\tp->a = 1;",
		"+\tgets(buf);",
		NULL,
	};
	static const char *const paths[] = {"Documentation/foo.rst",
					    "tools/foo.py", "foo.c.orig",
					    "Makefile"};
	struct rv_findings fs;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		run_rules_at(paths[i], NULL, lines, 0, &fs);
		assert_int_equal(fs.n, 0);
		rv_findings_release(&fs);
	}
	run_rules_at("include/linux/foo.h", NULL, lines, 0, &fs);
	assert_int_equal(fs.n, 2);
	rv_findings_release(&fs);
	run_rules_at("src/foo.cpp", NULL, lines, 0, &fs);
	assert_int_equal(fs.n, 2);
	rv_findings_release(&fs);
}

static void test_function_from_section(void **state)
{
	static const char *const lines[] = {
		" \tint ret;",
		"+\tkfree(ctx);",
		"+\tret = ctx->ret;",
		NULL,
	};
	struct rv_findings fs;

	run_rules_at("a.c", "static int bar_close(struct bar_ctx *ctx)", lines,
		     0, &fs);
	assert_int_equal(fs.n, 1);
	assert_string_equal(fs.items[0].function, "bar_close");
	rv_findings_release(&fs);
	run_rules_at("a.c", "struct bar_ops {", lines, 0, &fs);
	assert_int_equal(fs.n, 1);
	assert_null(fs.items[0].function);
	rv_findings_release(&fs);
}

static void test_diff_from_patch(void **state)
{
	static const char diff[] = "--- a/x.c\n+++ b/x.c\n@@ -1,1 +1,2 @@\n"
				   " \tchar b[4];\n+\tgets(b);\n";
	static const char bad[] = "--- a/x.c\n+++ b/x.c\n@@ -1,5 +1,5 @@\n"
				  "+\tgets(b);\n";
	struct mp_patch p;
	struct rv_context ctx;
	struct rv_findings fs = {NULL, 0, 0};
	struct errmsg err = {""};

	memset(&p, 0, sizeof(p));
	memset(&ctx, 0, sizeof(ctx));
	p.diff = (char *)diff;
	p.diff_len = strlen(diff);
	ctx.patch = &p;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	assert_int_equal(fs.n, 1);
	rv_findings_release(&fs);
	/* no diff at all: nothing to say */
	ctx.patch = NULL;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	assert_int_equal(fs.n, 0);
	/* a broken diff is the parser's error, passed on */
	p.diff = (char *)bad;
	p.diff_len = strlen(bad);
	ctx.patch = &p;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err),
		RV_ERR_INPUT);
	assert_int_equal(fs.n, 0);
}

/* A hunk full of defects yields a bounded number of findings. */
static void test_findings_capped(void **state)
{
	struct sb big = SB_INIT;
	struct rv_diff *d = NULL;
	struct rv_context ctx;
	struct rv_findings fs = {NULL, 0, 0};
	struct errmsg err;
	int i, f;

	for (f = 0; f < 20; f++) {
		sb_addf(&big, "--- a/f%d.c\n+++ b/f%d.c\n@@ -0,0 +1,1000 @@\n",
			f, f);
		for (i = 0; i < 1000; i++)
			sb_adds(&big, "+\tgets(p);\n");
	}
	assert_int_equal(rv_diff_parse(&d, big.buf, big.len, &err), 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.diff = d;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	assert_true(fs.n >= 16 && fs.n <= 128);
	assert_string_equal(fs.items[16].file, "f1.c");
	rv_findings_release(&fs);
	rv_diff_free(d);
	sb_release(&big);
}

/* Hostile text in added lines: no crash, no leak, bounded time. */
static void test_hostile_lines(void **state)
{
	static const char *const lines[] = {
		"+\"unterminated string p->a",
		"+'",
		"+/* unterminated comment",
		"+*/ p = malloc(n); p->a = 1;",
		"+))))((((;;;}}}}{{{{",
		"+kfree(",
		"+spin_lock(",
		"+p = kmalloc(",
		"+strcpy(",
		"+\tgoto",
		"+\treturn",
		"+=",
		"+->",
		"+*",
		"+\x01\x02\xff\xfe",
		NULL,
	};
	struct rv_findings fs;
	struct sb big = SB_INIT;
	struct rv_diff *d = NULL;
	struct rv_context ctx;
	struct errmsg err;
	int i, n = 30000;

	run_rules(lines, &fs);
	rv_findings_release(&fs);

	/* many candidates in one hunk stay bounded */
	sb_addf(&big, "--- a/x.c\n+++ b/x.c\n@@ -0,0 +1,%d @@\n", n);
	for (i = 0; i < n; i++)
		sb_adds(&big, i % 3 == 0   ? "+\tspin_lock(&l);\n"
			      : i % 3 == 1 ? "+\tp = kmalloc(n * m, 0);\n"
					   : "+\tif (x) return;\n");
	assert_int_equal(rv_diff_parse(&d, big.buf, big.len, &err), 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.diff = d;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	rv_findings_release(&fs);
	rv_diff_free(d);
	sb_reset(&big);

	/* adversarial shapes: endless chains, calls that never close,
	 * gotos to labels that never come */
	sb_addf(&big, "--- a/x.c\n+++ b/x.c\n@@ -0,0 +1,%d @@\n", n);
	for (i = 0; i < n; i++)
		sb_adds(&big, i % 5 == 0   ? "+\tspin_lock(&l); kfree(a"
					     "->b->c->d->e->f->g->h);\n"
			      : i % 5 == 1 ? "+\ta->b->c->d->e->f = "
					     "malloc(1); goto nowhere;\n"
			      : i % 5 == 2 ? "+\tif (x) return; spin_unlock("
					     "(((\n"
			      : i % 5 == 3 ? "+\tchar b[4]; strcpy(b, s\n"
					   : "+\ta->b->c->d->e->f->g->h->i "
					     "= 1;\n");
	assert_int_equal(rv_diff_parse(&d, big.buf, big.len, &err), 0);
	ctx.diff = d;
	assert_int_equal(
		rv_voter_rules.review(&rv_voter_rules, &ctx, &fs, &err), 0);
	rv_findings_release(&fs);
	rv_diff_free(d);
	sb_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_unchecked_fires),
		cmocka_unit_test(test_alloc_unchecked_variants_fire),
		cmocka_unit_test(test_alloc_checked_silent),
		cmocka_unit_test(test_alloc_near_misses_silent),
		cmocka_unit_test(test_lock_leak_fires),
		cmocka_unit_test(test_lock_leak_variants_fire),
		cmocka_unit_test(test_lock_leak_silent),
		cmocka_unit_test(test_unsafe_string_fires),
		cmocka_unit_test(test_gets_always),
		cmocka_unit_test(test_unsafe_string_silent),
		cmocka_unit_test(test_alloc_overflow_fires),
		cmocka_unit_test(test_alloc_overflow_silent),
		cmocka_unit_test(test_use_after_free_fires),
		cmocka_unit_test(test_use_after_free_silent),
		cmocka_unit_test(test_lock_leak_lookahead_in_repo),
		cmocka_unit_test(test_non_c_files_skipped),
		cmocka_unit_test(test_function_from_section),
		cmocka_unit_test(test_diff_from_patch),
		cmocka_unit_test(test_findings_capped),
		cmocka_unit_test(test_hostile_lines),
	};

	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
