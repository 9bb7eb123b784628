// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * llm-symbols.c - the symbol index: where a tree's C defines and uses its
 * names, for the model's definition and callers tools.
 *
 * Files are parsed with tree-sitter's C grammar (tree-sitter-c 0.21.4,
 * fetched by `make deps`), from blobs in memory, one walk of the syntax
 * tree each. The index (<git dir>/quorum/symbols.db) is keyed by blob:
 * a new HEAD re-parses only the blobs it has not seen, and a series' tree
 * is an overlay of the few files its diff touches over the stored rows.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <git2.h>
#include <sqlite3.h>
#include <tree_sitter/api.h>

#include "apply-int.h"
#include "history-int.h"
#include "llm.h"

#define SYM_SCHEMA_VERSION "1"
/*
 * A hostile file cannot hold the parser longer than this (wall clock);
 * 2 MiB of real C takes ~0.4 s, more under ASan or a loaded machine.
 */
#define SYM_PARSE_MICROS ((uint64_t)5 * 1000 * 1000)
#define SYM_MAX_NAME 255
#define SYM_MAX_PATH 4096
/* Blobs parsed per child and transaction: a killed run keeps them. */
#define SYM_TX_BLOBS 256
#define SYM_BATCH_BYTES ((size_t)32 << 20)

const TSLanguage *tree_sitter_c(void);

/* ---- the grammar's symbols and fields, looked up once ----------------- */

static struct {
	const TSLanguage *lang;
	bool ok;
	TSSymbol identifier, type_identifier, field_identifier,
		function_definition, function_declarator, struct_specifier,
		union_specifier, enum_specifier, type_definition, preproc_def,
		preproc_function_def, enumerator, declaration, init_declarator,
		parameter_declaration, call_expression, initializer_pair,
		initializer_list, assignment_expression, argument_list,
		parenthesized_expression, pointer_expression, cast_expression,
		conditional_expression, storage_class_specifier, comment,
		string_literal;
	TSFieldId f_declarator, f_body, f_name, f_value, f_function, f_right,
		f_argument, f_operator, f_parameters, f_consequence,
		f_alternative;
} G;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static TSSymbol sym(const char *name)
{
	return ts_language_symbol_for_name(G.lang, name, strlen(name), true);
}

static TSFieldId fld(const char *name)
{
	return ts_language_field_id_for_name(G.lang, name, strlen(name));
}

static void grammar_init(void)
{
	uint32_t v;

	G.lang = tree_sitter_c();
	v = ts_language_version(G.lang);
	if (v < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION ||
	    v > TREE_SITTER_LANGUAGE_VERSION)
		return;
	G.identifier = sym("identifier");
	G.type_identifier = sym("type_identifier");
	G.field_identifier = sym("field_identifier");
	G.function_definition = sym("function_definition");
	G.function_declarator = sym("function_declarator");
	G.struct_specifier = sym("struct_specifier");
	G.union_specifier = sym("union_specifier");
	G.enum_specifier = sym("enum_specifier");
	G.type_definition = sym("type_definition");
	G.preproc_def = sym("preproc_def");
	G.preproc_function_def = sym("preproc_function_def");
	G.enumerator = sym("enumerator");
	G.declaration = sym("declaration");
	G.init_declarator = sym("init_declarator");
	G.parameter_declaration = sym("parameter_declaration");
	G.call_expression = sym("call_expression");
	G.initializer_pair = sym("initializer_pair");
	G.initializer_list = sym("initializer_list");
	G.assignment_expression = sym("assignment_expression");
	G.argument_list = sym("argument_list");
	G.parenthesized_expression = sym("parenthesized_expression");
	G.pointer_expression = sym("pointer_expression");
	G.cast_expression = sym("cast_expression");
	G.conditional_expression = sym("conditional_expression");
	G.storage_class_specifier = sym("storage_class_specifier");
	G.comment = sym("comment");
	G.string_literal = sym("string_literal");
	G.f_declarator = fld("declarator");
	G.f_body = fld("body");
	G.f_name = fld("name");
	G.f_value = fld("value");
	G.f_function = fld("function");
	G.f_right = fld("right");
	G.f_argument = fld("argument");
	G.f_operator = fld("operator");
	G.f_parameters = fld("parameters");
	G.f_consequence = fld("consequence");
	G.f_alternative = fld("alternative");
	G.ok = G.identifier && G.function_definition && G.call_expression &&
	       G.f_declarator && G.f_name;
}

static TSParser *parser_new(struct errmsg *err)
{
	TSParser *p;

	pthread_once(&g_once, grammar_init);
	if (!G.ok) {
		errmsg_set(err, RV_ERR_INTERNAL,
			   "the C grammar (ABI %u) is not one libtree-sitter "
			   "(ABI %d to %d) can load",
			   ts_language_version(tree_sitter_c()),
			   TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
			   TREE_SITTER_LANGUAGE_VERSION);
		return NULL;
	}
	p = ts_parser_new();
	if (!p || !ts_parser_set_language(p, G.lang)) {
		ts_parser_delete(p);
		errmsg_set(err, RV_ERR_INTERNAL,
			   "libtree-sitter refused the C grammar");
		return NULL;
	}
	ts_parser_set_timeout_micros(p, SYM_PARSE_MICROS);
	return p;
}

/* ---- one file: what it defines and uses, as slices of its text -------- */

struct xdef {
	uint32_t off, len;
	uint8_t kind;
	int line, end_line;
};

struct xref {
	uint32_t off, len;   /* the name */
	uint32_t soff, slen; /* the scope's name; slen 0: none */
	uint8_t kind;
	int line;
};

struct xfile {
	struct xdef *defs;
	size_t ndefs, adefs;
	struct xref *refs;
	size_t nrefs, arefs;
};

static void xfile_release(struct xfile *f)
{
	free(f->defs);
	free(f->refs);
	memset(f, 0, sizeof(*f));
}

struct scope {
	uint32_t end; /* byte where it ends */
	uint32_t off, len;
	bool function;
};

/* Names a function declares (parameters, locals): never its callees. */
#define LOCALS_SIZE 1024 /* a power of two; half of it is used at most */

struct walk {
	const char *src;
	uint32_t len;
	struct xfile *out;
	struct scope *scopes;
	size_t nscopes, ascopes;
	int functions; /* function scopes open */
	uint64_t locals[LOCALS_SIZE];
	uint32_t locals_gen[LOCALS_SIZE];
	uint32_t gen;
	size_t nlocals;
};

static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h | 1;
}

static void locals_reset(struct walk *w)
{
	w->gen++;
	w->nlocals = 0;
}

static void locals_add(struct walk *w, uint32_t off, uint32_t len)
{
	uint64_t h = name_hash(w->src + off, len);
	size_t i = (size_t)h & (LOCALS_SIZE - 1);

	if (w->nlocals >= LOCALS_SIZE / 2)
		return;
	while (w->locals_gen[i] == w->gen) {
		if (w->locals[i] == h)
			return;
		i = (i + 1) & (LOCALS_SIZE - 1);
	}
	w->locals[i] = h;
	w->locals_gen[i] = w->gen;
	w->nlocals++;
}

static bool locals_has(const struct walk *w, uint32_t off, uint32_t len)
{
	uint64_t h = name_hash(w->src + off, len);
	size_t i = (size_t)h & (LOCALS_SIZE - 1);

	while (w->locals_gen[i] == w->gen) {
		if (w->locals[i] == h)
			return true;
		i = (i + 1) & (LOCALS_SIZE - 1);
	}
	return false;
}

static int line_of(TSNode n)
{
	return (int)ts_node_start_point(n).row + 1;
}

/* The last line a node covers (a #define's node ends after its newline). */
static int end_line_of(TSNode n)
{
	TSPoint e = ts_node_end_point(n), s = ts_node_start_point(n);

	if (e.column == 0 && e.row > s.row)
		return (int)e.row;
	return (int)e.row + 1;
}

static bool name_ok(uint32_t len)
{
	return len > 0 && len <= SYM_MAX_NAME;
}

static void add_def(struct walk *w, TSNode name, enum rv_sym_kind kind,
		    TSNode span)
{
	uint32_t off = ts_node_start_byte(name);
	uint32_t len = ts_node_end_byte(name) - off;
	struct xfile *f = w->out;

	if (!name_ok(len))
		return;
	ALLOC_GROW(f->defs, f->ndefs + 1, f->adefs);
	f->defs[f->ndefs++] = (struct xdef){off, len, (uint8_t)kind,
					    line_of(span), end_line_of(span)};
}

static void add_ref_at(struct walk *w, uint32_t off, uint32_t len,
		       enum rv_ref_kind kind, int line)
{
	struct xfile *f = w->out;
	struct xref r = {off, len, 0, 0, (uint8_t)kind, line};

	if (!name_ok(len))
		return;
	if (w->nscopes) {
		r.soff = w->scopes[w->nscopes - 1].off;
		r.slen = w->scopes[w->nscopes - 1].len;
	}
	ALLOC_GROW(f->refs, f->nrefs + 1, f->arefs);
	f->refs[f->nrefs++] = r;
}

static void push_scope(struct walk *w, TSNode name, uint32_t end, bool function)
{
	uint32_t off = ts_node_start_byte(name);

	ALLOC_GROW(w->scopes, w->nscopes + 1, w->ascopes);
	w->scopes[w->nscopes++] = (struct scope){
		end, off, ts_node_end_byte(name) - off, function};
	if (function) {
		w->functions++;
		locals_reset(w);
	}
}

/*
 * The name a declarator declares: its innermost identifier. *direct is
 * set when a function declarator wraps the name itself (a prototype, not
 * a pointer to a function).
 */
static TSNode declarator_name(TSNode d, bool *direct)
{
	TSSymbol prev = 0;
	int i;

	if (direct)
		*direct = false;
	for (i = 0; i < 64 && !ts_node_is_null(d); i++) {
		TSSymbol s = ts_node_symbol(d);
		TSNode next;

		if (s == G.identifier || s == G.type_identifier ||
		    s == G.field_identifier) {
			if (direct)
				*direct = prev == G.function_declarator;
			return d;
		}
		next = ts_node_child_by_field_id(d, G.f_declarator);
		if (ts_node_is_null(next))
			next = ts_node_named_child(d, 0);
		prev = s;
		d = next;
	}
	return (TSNode){0};
}

/* The children of n in field f, at most max. */
static size_t field_children(TSNode n, TSFieldId f, TSNode *out, size_t max)
{
	TSTreeCursor c = ts_tree_cursor_new(n);
	size_t k = 0;

	if (ts_tree_cursor_goto_first_child(&c)) {
		do {
			if (ts_tree_cursor_current_field_id(&c) == f)
				out[k++] = ts_tree_cursor_current_node(&c);
		} while (k < max && ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
	return k;
}

static bool has_lower(const char *s, uint32_t n)
{
	while (n--)
		if (islower((unsigned char)*s++))
			return true;
	return false;
}

/*
 * e is in a place that takes a value: an identifier there (maybe as &e,
 * (e) or a cast) that is not a local is a function's address, or a
 * global's; the callers query asks for one name, so the globals cost
 * only rows.
 */
static void value_ref(struct walk *w, TSNode e, int depth)
{
	uint32_t off, len;

	for (; depth < 8 && !ts_node_is_null(e); depth++) {
		TSSymbol s = ts_node_symbol(e);

		if (s == G.parenthesized_expression)
			e = ts_node_named_child(e, 0);
		else if (s == G.conditional_expression) {
			/* c ? f : g: both may be taken */
			value_ref(w,
				  ts_node_child_by_field_id(e, G.f_consequence),
				  depth + 1);
			e = ts_node_child_by_field_id(e, G.f_alternative);
		} else if (s == G.cast_expression)
			e = ts_node_child_by_field_id(e, G.f_value);
		else if (s == G.pointer_expression) {
			TSNode op = ts_node_child_by_field_id(e, G.f_operator);

			if (ts_node_is_null(op) ||
			    w->src[ts_node_start_byte(op)] != '&')
				return;
			e = ts_node_child_by_field_id(e, G.f_argument);
		} else
			break;
	}
	if (ts_node_is_null(e) || ts_node_symbol(e) != G.identifier)
		return;
	off = ts_node_start_byte(e);
	len = ts_node_end_byte(e) - off;
	/* NULL, EINVAL, MAX_FOO: constants, not functions */
	if (!has_lower(w->src + off, len))
		return;
	if (w->functions && locals_has(w, off, len))
		return;
	add_ref_at(w, off, len, RV_REF_ADDRESS, line_of(e));
}

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

static bool macro_keyword(const char *s, size_t n)
{
	static const char *const kw[] = {
		"if",
		"while",
		"for",
		"switch",
		"return",
		"sizeof",
		"typeof",
		"__typeof__",
		"__typeof",
		"_Alignof",
		"alignof",
		"__alignof__",
		"defined",
		"__attribute__",
		"__attribute",
		"_Static_assert",
		"static_assert",
		"_Generic",
		"__asm__",
		"asm",
		"__asm",
		"__extension__",
		"do",
		"else",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kw); i++)
		if (strlen(kw[i]) == n && !memcmp(kw[i], s, n))
			return true;
	return false;
}

/*
 * The calls in a #define's body, which the grammar leaves as text: a
 * name followed by '(' that is not a keyword, a member (.x( ->x(), a
 * stringified or pasted token, or one of the macro's own parameters.
 */
static void macro_calls(struct walk *w, TSNode def, TSNode body)
{
	TSNode params[32];
	size_t np = 0, k;
	uint32_t i = ts_node_start_byte(body), end = ts_node_end_byte(body);
	const char *s = w->src;
	int line = line_of(body);
	char prev = ' ';

	if (ts_node_symbol(def) == G.preproc_function_def) {
		TSNode pl = ts_node_child_by_field_id(def, G.f_parameters);
		uint32_t j, n = ts_node_is_null(pl)
					? 0
					: ts_node_named_child_count(pl);

		for (j = 0; j < n && np < ARRAY_SIZE(params); j++)
			params[np++] = ts_node_named_child(pl, j);
	}
	while (i < end) {
		char c = s[i];

		if (c == '\n') {
			line++;
			i++;
		} else if (c == '"' || c == '\'') {
			for (i++; i < end && s[i] != c; i++) {
				if (s[i] == '\\' && i + 1 < end)
					i++;
				if (s[i] == '\n')
					line++;
			}
			i++;
			prev = c;
		} else if (c == '/' && i + 1 < end && s[i + 1] == '*') {
			for (i += 2;
			     i + 1 < end && !(s[i] == '*' && s[i + 1] == '/');
			     i++)
				if (s[i] == '\n')
					line++;
			i += 2;
		} else if (c == '/' && i + 1 < end && s[i + 1] == '/') {
			while (i < end && s[i] != '\n')
				i++;
		} else if (isdigit((unsigned char)c)) {
			while (i < end && is_ident((unsigned char)s[i]))
				i++;
			prev = '0';
		} else if (is_ident_start((unsigned char)c)) {
			uint32_t b = i, j;
			bool skip = prev == '.' || prev == '>' || prev == '#';

			while (i < end && is_ident((unsigned char)s[i]))
				i++;
			for (j = i; j < end && (s[j] == ' ' || s[j] == '\t');
			     j++)
				;
			for (k = 0; k < np && !skip; k++)
				skip = ts_node_end_byte(params[k]) -
						       ts_node_start_byte(
							       params[k]) ==
					       i - b &&
				       !memcmp(s + ts_node_start_byte(
							   params[k]),
					       s + b, i - b);
			if (!skip && j < end && s[j] == '(' &&
			    !macro_keyword(s + b, i - b))
				add_ref_at(w, b, i - b, RV_REF_MACRO, line);
			prev = 'a';
		} else {
			if (c != ' ' && c != '\t' && c != '\\' && c != '\r')
				prev = c;
			i++;
		}
	}
}

static void visit_declaration(struct walk *w, TSNode n)
{
	TSNode decl[64];
	size_t nd = field_children(n, G.f_declarator, decl, ARRAY_SIZE(decl));
	bool is_extern = false;
	uint32_t i, nc;
	size_t k;

	if (w->functions) {
		for (k = 0; k < nd; k++) {
			TSNode id = declarator_name(decl[k], NULL);

			if (!ts_node_is_null(id))
				locals_add(w, ts_node_start_byte(id),
					   ts_node_end_byte(id) -
						   ts_node_start_byte(id));
		}
		return;
	}
	nc = ts_node_child_count(n);
	for (i = 0; i < nc; i++) {
		TSNode c = ts_node_child(n, i);

		if (ts_node_symbol(c) == G.storage_class_specifier &&
		    !strncmp(w->src + ts_node_start_byte(c), "extern", 6))
			is_extern = true;
	}
	if (is_extern)
		return;
	for (k = 0; k < nd; k++) {
		bool direct;
		TSNode id = declarator_name(decl[k], &direct);

		if (!ts_node_is_null(id) && !direct &&
		    ts_node_symbol(id) == G.identifier)
			add_def(w, id, RV_SYM_VARIABLE, n);
	}
}

static void visit(struct walk *w, TSNode n)
{
	uint32_t start = ts_node_start_byte(n);
	TSSymbol s = ts_node_symbol(n);
	TSNode a, b;

	while (w->nscopes && w->scopes[w->nscopes - 1].end <= start) {
		if (w->scopes[--w->nscopes].function)
			w->functions--;
	}
	if (s == G.call_expression) {
		a = ts_node_child_by_field_id(n, G.f_function);
		while (!ts_node_is_null(a) &&
		       ts_node_symbol(a) == G.parenthesized_expression)
			a = ts_node_named_child(a, 0);
		if (!ts_node_is_null(a) && ts_node_symbol(a) == G.identifier)
			add_ref_at(w, ts_node_start_byte(a),
				   ts_node_end_byte(a) - ts_node_start_byte(a),
				   RV_REF_CALL, line_of(a));
	} else if (s == G.argument_list || s == G.initializer_list) {
		uint32_t i, nc = ts_node_named_child_count(n);

		for (i = 0; i < nc; i++)
			value_ref(w, ts_node_named_child(n, i), 0);
	} else if (s == G.initializer_pair) {
		value_ref(w, ts_node_child_by_field_id(n, G.f_value), 0);
	} else if (s == G.assignment_expression) {
		value_ref(w, ts_node_child_by_field_id(n, G.f_right), 0);
	} else if (s == G.init_declarator) {
		a = ts_node_child_by_field_id(n, G.f_value);
		if (ts_node_is_null(a))
			return;
		/* a global's initialiser: its calls and values are its own */
		b = declarator_name(n, NULL);
		if (!w->functions && !ts_node_is_null(b))
			push_scope(w, b, ts_node_end_byte(n), false);
		value_ref(w, a, 0);
	} else if (s == G.function_definition) {
		a = declarator_name(
			ts_node_child_by_field_id(n, G.f_declarator), NULL);
		if (ts_node_is_null(a) || ts_node_symbol(a) != G.identifier)
			return;
		add_def(w, a, RV_SYM_FUNCTION, n);
		push_scope(w, a, ts_node_end_byte(n), true);
	} else if (s == G.parameter_declaration) {
		if (!w->functions)
			return;
		a = declarator_name(
			ts_node_child_by_field_id(n, G.f_declarator), NULL);
		if (!ts_node_is_null(a))
			locals_add(w, ts_node_start_byte(a),
				   ts_node_end_byte(a) - ts_node_start_byte(a));
	} else if (s == G.declaration) {
		visit_declaration(w, n);
	} else if (s == G.struct_specifier || s == G.union_specifier ||
		   s == G.enum_specifier) {
		a = ts_node_child_by_field_id(n, G.f_name);
		if (ts_node_is_null(a) ||
		    ts_node_is_null(ts_node_child_by_field_id(n, G.f_body)))
			return;
		add_def(w, a,
			s == G.struct_specifier	 ? RV_SYM_STRUCT
			: s == G.union_specifier ? RV_SYM_UNION
						 : RV_SYM_ENUM,
			n);
	} else if (s == G.type_definition) {
		TSNode decl[64];
		size_t k, nd = field_children(n, G.f_declarator, decl,
					      ARRAY_SIZE(decl));

		for (k = 0; k < nd; k++) {
			a = declarator_name(decl[k], NULL);
			if (!ts_node_is_null(a))
				add_def(w, a, RV_SYM_TYPEDEF, n);
		}
	} else if (s == G.enumerator) {
		a = ts_node_child_by_field_id(n, G.f_name);
		if (!ts_node_is_null(a))
			add_def(w, a, RV_SYM_ENUMERATOR, n);
	} else if (s == G.preproc_def || s == G.preproc_function_def) {
		a = ts_node_child_by_field_id(n, G.f_name);
		if (ts_node_is_null(a))
			return;
		add_def(w, a,
			s == G.preproc_def ? RV_SYM_MACRO : RV_SYM_FUNC_MACRO,
			n);
		b = ts_node_child_by_field_id(n, G.f_value);
		if (!ts_node_is_null(b)) {
			push_scope(w, a, ts_node_end_byte(n), false);
			macro_calls(w, n, b);
		}
	}
}

enum parse_result { PARSED = 0, TOO_BIG = 1, FAILED = 2 };

/* Parse src[0..len) with p into out (emptied first). */
static enum parse_result parse_text(TSParser *p, const char *src, size_t len,
				    struct xfile *out)
{
	struct walk *w;
	TSTree *tree;
	TSTreeCursor c;

	out->ndefs = out->nrefs = 0;
	if (len > RV_SYMBOLS_MAX_FILE)
		return TOO_BIG;
	tree = ts_parser_parse_string(p, NULL, src, (uint32_t)len);
	if (!tree) {
		/* timed out: the next parse must start afresh */
		ts_parser_reset(p);
		return FAILED;
	}
	w = xcalloc(1, sizeof(*w));
	w->src = src;
	w->len = (uint32_t)len;
	w->out = out;
	c = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		TSSymbol s = ts_node_symbol(n);

		visit(w, n);
		/* nothing to find inside these */
		if (s != G.comment && s != G.string_literal &&
		    ts_tree_cursor_goto_first_child(&c))
			continue;
		while (!ts_tree_cursor_goto_next_sibling(&c))
			if (!ts_tree_cursor_goto_parent(&c))
				goto done;
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_delete(tree);
	free(w->scopes);
	free(w);
	return PARSED;
}

/*
 * libtree-sitter 0.20.7, Debian 12's, frees a bad pointer when error
 * recovery gives one node 65,536 children (100,000 '(' do it; fixed
 * upstream in 0.20.8): a hostile file in a series could take quorum down
 * with it. So files are parsed in a child process, which streams back
 * what they hold; a child that dies costs the file it was on, and the
 * next child goes on after it. A fork per batch, not per file: on
 * rdma-core the whole index pays ~0.1 s for it.
 */
struct parse_job {
	const char *src;
	size_t len;
	enum parse_result res;
	struct xfile x;
};

struct rec_head {
	uint32_t index, res, ndefs, nrefs;
};

/* Wall-clock seconds a child may spend on one file, parse and walk. */
#define SYM_CHILD_SECONDS 20

static bool write_full(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

static bool read_full(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t k = read(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

static void __attribute__((noreturn))
child_parse(TSParser *p, struct parse_job *jobs, size_t from, size_t n, int fd)
{
	struct rlimit no_core = {0, 0};
	struct xfile x = {0};
	int devnull = open("/dev/null", O_WRONLY);
	size_t i;

	/* a crash here is expected of hostile input: no core, no noise */
	setrlimit(RLIMIT_CORE, &no_core);
	setenv("LIBC_FATAL_STDERR_", "1", 1);
	if (devnull >= 0)
		dup2(devnull, STDERR_FILENO);
	signal(SIGPIPE, SIG_DFL);
	for (i = from; i < n; i++) {
		struct rec_head h = {(uint32_t)i, 0, 0, 0};

		alarm(SYM_CHILD_SECONDS);
		h.res = parse_text(p, jobs[i].src, jobs[i].len, &x);
		if (h.res == PARSED) {
			h.ndefs = (uint32_t)x.ndefs;
			h.nrefs = (uint32_t)x.nrefs;
		}
		if (!write_full(fd, &h, sizeof(h)) ||
		    !write_full(fd, x.defs, h.ndefs * sizeof(*x.defs)) ||
		    !write_full(fd, x.refs, h.nrefs * sizeof(*x.refs)))
			_exit(1);
	}
	_exit(0);
}

/* One record of the child into job; false when it is not sound. */
static bool read_record(int fd, size_t index, struct parse_job *job)
{
	struct rec_head h;
	size_t i;

	if (!read_full(fd, &h, sizeof(h)) || h.index != index ||
	    h.res > FAILED || h.ndefs > job->len + 1 || h.nrefs > job->len + 1)
		return false;
	job->res = (enum parse_result)h.res;
	job->x.ndefs = job->x.adefs = h.ndefs;
	job->x.nrefs = job->x.arefs = h.nrefs;
	job->x.defs = h.ndefs ? xmalloc(h.ndefs * sizeof(*job->x.defs)) : NULL;
	job->x.refs = h.nrefs ? xmalloc(h.nrefs * sizeof(*job->x.refs)) : NULL;
	if (!read_full(fd, job->x.defs, h.ndefs * sizeof(*job->x.defs)) ||
	    !read_full(fd, job->x.refs, h.nrefs * sizeof(*job->x.refs)))
		goto bad;
	/* every name a slice of the file: nothing else is trusted */
	for (i = 0; i < h.ndefs; i++)
		if ((size_t)job->x.defs[i].off + job->x.defs[i].len > job->len)
			goto bad;
	for (i = 0; i < h.nrefs; i++)
		if ((size_t)job->x.refs[i].off + job->x.refs[i].len >
			    job->len ||
		    (size_t)job->x.refs[i].soff + job->x.refs[i].slen >
			    job->len)
			goto bad;
	return true;
bad:
	xfile_release(&job->x);
	return false;
}

/* Parse jobs[0..n) in child processes: each gets res, and x if PARSED. */
static void parse_isolated(TSParser *p, struct parse_job *jobs, size_t n)
{
	size_t next = 0;

	while (next < n) {
		int fds[2], status;
		pid_t pid;

		if (pipe(fds) < 0)
			goto fail_rest;
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			close(fds[0]);
			close(fds[1]);
			goto fail_rest;
		}
		if (pid == 0) {
			close(fds[0]);
			child_parse(p, jobs, next, n, fds[1]);
		}
		close(fds[1]);
		while (next < n && read_record(fds[0], next, &jobs[next]))
			next++;
		close(fds[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (next < n) {
			/* the file the child died on (or mangled) */
			jobs[next].res = FAILED;
			next++;
		}
	}
	return;
fail_rest:
	for (; next < n; next++)
		jobs[next].res = FAILED;
}

/* ---- public: the kinds, results, and one file's parse ----------------- */

static const char *const kind_names[RV_SYM_KIND_N] = {
	[RV_SYM_ANY] = "any",
	[RV_SYM_FUNCTION] = "function",
	[RV_SYM_STRUCT] = "struct",
	[RV_SYM_UNION] = "union",
	[RV_SYM_ENUM] = "enum",
	[RV_SYM_TYPEDEF] = "typedef",
	[RV_SYM_MACRO] = "macro",
	[RV_SYM_FUNC_MACRO] = "function-like macro",
	[RV_SYM_ENUMERATOR] = "enumerator",
	[RV_SYM_VARIABLE] = "variable",
};

const char *rv_sym_kind_name(enum rv_sym_kind kind)
{
	return (unsigned)kind < RV_SYM_KIND_N ? kind_names[kind] : "?";
}

int rv_sym_kind_parse(const char *s)
{
	int i;

	for (i = 0; s && i < RV_SYM_KIND_N; i++)
		if (!strcmp(s, kind_names[i]))
			return i;
	return -1;
}

const char *rv_ref_kind_name(enum rv_ref_kind kind)
{
	return kind == RV_REF_CALL	? "call"
	       : kind == RV_REF_ADDRESS ? "address"
	       : kind == RV_REF_MACRO	? "macro"
					: "?";
}

void rv_sym_defs_release(struct rv_sym_defs *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->items[i].name);
		free(d->items[i].path);
	}
	free(d->items);
	memset(d, 0, sizeof(*d));
}

void rv_sym_refs_release(struct rv_sym_refs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->items[i].name);
		free(r->items[i].path);
		free(r->items[i].scope);
	}
	free(r->items);
	memset(r, 0, sizeof(*r));
}

static void push_def(struct rv_sym_defs *d, const char *name, size_t nlen,
		     const char *path, int kind, int line, int end_line)
{
	ALLOC_GROW(d->items, d->n + 1, d->alloc);
	d->items[d->n++] =
		(struct rv_sym_def){xstrndup(name, nlen), xstrdup_or_null(path),
				    (enum rv_sym_kind)kind, line, end_line};
}

static void push_ref(struct rv_sym_refs *r, const char *name, size_t nlen,
		     const char *path, const char *scope, size_t slen, int kind,
		     int line)
{
	ALLOC_GROW(r->items, r->n + 1, r->alloc);
	r->items[r->n++] = (struct rv_sym_ref){
		xstrndup(name, nlen), xstrdup_or_null(path),
		xstrndup(scope ? scope : "", scope ? slen : 0),
		(enum rv_ref_kind)kind, line};
}

int rv_symbols_parse(const char *path, const char *src, size_t len,
		     struct rv_sym_defs *defs, struct rv_sym_refs *refs,
		     struct errmsg *err)
{
	struct parse_job job = {0};
	struct xfile f;
	enum parse_result pr;
	TSParser *p;
	size_t i;

	if (len > RV_SYMBOLS_MAX_FILE)
		return errmsg_set(err, RV_ERR_INPUT,
				  "%s is over %zu bytes: not parsed", path,
				  RV_SYMBOLS_MAX_FILE);
	if (!(p = parser_new(err)))
		return RV_ERR_INTERNAL;
	job.src = src ? src : "";
	job.len = src ? len : 0;
	parse_isolated(p, &job, 1);
	ts_parser_delete(p);
	pr = job.res;
	f = job.x;
	if (pr != PARSED) {
		xfile_release(&f);
		return errmsg_set(err, RV_ERR_INPUT,
				  "the C parser gave up on %s", path);
	}
	for (i = 0; defs && i < f.ndefs; i++, defs->total++)
		push_def(defs, src + f.defs[i].off, f.defs[i].len, path,
			 f.defs[i].kind, f.defs[i].line, f.defs[i].end_line);
	for (i = 0; refs && i < f.nrefs; i++, refs->total++)
		push_ref(refs, src + f.refs[i].off, f.refs[i].len, path,
			 src + f.refs[i].soff, f.refs[i].slen, f.refs[i].kind,
			 f.refs[i].line);
	xfile_release(&f);
	return 0;
}

/* ---- the db ----------------------------------------------------------- */

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);"
	/* state: 0 parsed, 1 too big, 2 the parser gave up */
	"CREATE TABLE IF NOT EXISTS blobs(id INTEGER PRIMARY KEY,"
	" oid TEXT NOT NULL UNIQUE, state INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY,"
	" blob INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS files_blob ON files(blob);"
	"CREATE TABLE IF NOT EXISTS defs(name TEXT NOT NULL,"
	" blob INTEGER NOT NULL, kind INTEGER NOT NULL,"
	" line INTEGER NOT NULL, end_line INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS defs_name ON defs(name);"
	"CREATE INDEX IF NOT EXISTS defs_blob ON defs(blob);"
	"CREATE TABLE IF NOT EXISTS refs(name TEXT NOT NULL,"
	" blob INTEGER NOT NULL, kind INTEGER NOT NULL,"
	" line INTEGER NOT NULL, scope TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS refs_name ON refs(name);"
	"CREATE INDEX IF NOT EXISTS refs_blob ON refs(blob);";

static char *sym_db_path(git_repository *repo)
{
	const char *gd = git_repository_path(repo);
	struct sb p = SB_INIT;

	if (!gd)
		return NULL;
	sb_addf(&p, "%s%squorum/symbols.db", gd,
		gd[0] && gd[strlen(gd) - 1] == '/' ? "" : "/");
	return sb_detach(&p, NULL);
}

static int db_error(sqlite3 *db, struct errmsg *err)
{
	return errmsg_set(err, RV_ERR_INTERNAL, "symbol index: %s",
			  sqlite3_errmsg(db));
}

/* Is db of our schema? Fills why when not. */
static bool db_valid(sqlite3 *db, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	const char *v;
	bool ok = false;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema'",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, len, "it is unreadable (%s)", sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		snprintf(why, len, "it has no schema version");
		goto out;
	}
	v = (const char *)sqlite3_column_text(st, 0);
	if (!v || strcmp(v, SYM_SCHEMA_VERSION)) {
		snprintf(why, len, "it has schema version %s, not %s",
			 v ? v : "(none)", SYM_SCHEMA_VERSION);
		goto out;
	}
	ok = true;
out:
	sqlite3_finalize(st);
	return ok;
}

static int db_open_raw(sqlite3 **db, const char *path, int flags)
{
	int rc = sqlite3_open_v2(path, db, flags, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_extended_result_codes(*db, 1);
	return SQLITE_OK;
}

/*
 * Open the db at path. For writing (create), an unusable or old one is
 * removed and made anew (reason says why); for reading, *out is NULL
 * when there is none.
 */
static int sym_db_open(sqlite3 **out, const char *path, bool create,
		       bool rebuild, char *reason, size_t reason_len,
		       struct errmsg *err)
{
	sqlite3 *db = NULL;
	char why[200] = "";
	int ret;

	*out = NULL;
	if (rebuild)
		hist_db_remove(path);
	if (access(path, F_OK) == 0) {
		if (db_open_raw(&db, path, SQLITE_OPEN_READWRITE) ==
			    SQLITE_OK &&
		    db_valid(db, why, sizeof(why)))
			goto ready;
		if (!why[0])
			snprintf(why, sizeof(why), "it cannot be opened (%s)",
				 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		db = NULL;
		if (!create)
			return errmsg_set(
				err, RV_ERR_INTERNAL,
				"the symbol index %s is unusable: "
				"%s; run `quorum index` to rebuild it",
				path, why);
		if (reason)
			snprintf(reason, reason_len,
				 "the symbol index %s was unusable (%s) and "
				 "was rebuilt",
				 path, why);
		hist_db_remove(path);
	} else if (!create) {
		return 0;
	}
	if (mkdir_parents(path, false) < 0 ||
	    db_open_raw(&db, path,
			SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) !=
		    SQLITE_OK) {
		ret = errmsg_set(err, RV_ERR_INTERNAL,
				 "cannot create the symbol index %s: %s", path,
				 db ? sqlite3_errmsg(db) : "no directory");
		sqlite3_close(db);
		return ret;
	}
	if ((ret = hist_exec(db, "PRAGMA journal_mode=WAL;", err)) ||
	    (ret = hist_exec(db, schema_sql, err)) ||
	    (ret = hist_exec(db,
			     "INSERT OR REPLACE INTO meta(key, value) VALUES"
			     " ('schema', '" SYM_SCHEMA_VERSION "');",
			     err))) {
		sqlite3_close(db);
		return ret;
	}
ready:
	hist_exec(db, "PRAGMA synchronous=NORMAL;", NULL);
	*out = db;
	return 0;
}

/* ---- building the index ----------------------------------------------- */

static bool is_c_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 2 && path[n - 2] == '.' &&
	       (path[n - 1] == 'c' || path[n - 1] == 'h');
}

struct tree_file {
	char *path;
	git_oid oid;
	int64_t blob; /* its row in blobs */
};

/* The blobs the db holds: oid -> row, an open-addressing table. */
struct oidmap {
	git_oid *oid;
	int64_t *id;
	size_t n, cap;
};

static size_t oidmap_slot(const struct oidmap *m, const git_oid *o)
{
	size_t i;

	memcpy(&i, o->id, sizeof(i));
	i &= m->cap - 1;
	while (m->id[i] && git_oid_cmp(&m->oid[i], o))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void oidmap_put(struct oidmap *m, const git_oid *o, int64_t id)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct oidmap nm = {0};

		nm.cap = m->cap ? m->cap * 2 : 1024;
		nm.oid = xcalloc(nm.cap, sizeof(*nm.oid));
		nm.id = xcalloc(nm.cap, sizeof(*nm.id));
		for (i = 0; i < m->cap; i++)
			if (m->id[i])
				oidmap_put(&nm, &m->oid[i], m->id[i]);
		free(m->oid);
		free(m->id);
		*m = nm;
	}
	i = oidmap_slot(m, o);
	if (!m->id[i])
		m->n++;
	m->oid[i] = *o;
	m->id[i] = id;
}

static int64_t oidmap_get(const struct oidmap *m, const git_oid *o)
{
	return m->cap ? m->id[oidmap_slot(m, o)] : 0;
}

struct builder {
	git_repository *repo;
	sqlite3 *db;
	TSParser *parser;
	struct tree_file *files;
	size_t nfiles, afiles;
	struct oidmap blobs;
	sqlite3_stmt *ins_blob, *ins_def, *ins_ref, *ins_file;
	struct rv_symbols_stats *st;
	const struct rv_index_opts *opts;
	struct errmsg *err;
};

static int collect_file(const char *root, const git_tree_entry *e,
			void *payload)
{
	struct builder *b = payload;
	git_filemode_t mode = git_tree_entry_filemode(e);
	const char *name = git_tree_entry_name(e);
	struct tree_file *f;

	if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		return 0;
	if (!is_c_path(name) || strlen(root) + strlen(name) > SYM_MAX_PATH)
		return 0;
	ALLOC_GROW(b->files, b->nfiles + 1, b->afiles);
	f = &b->files[b->nfiles++];
	f->path = xmalloc(strlen(root) + strlen(name) + 1);
	strcpy(stpcpy(f->path, root), name);
	f->oid = *git_tree_entry_id(e);
	f->blob = 0;
	return 0;
}

static int step_done(struct builder *b, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_error(b->db, b->err);
}

/* Store what a blob holds; f->blob is its row. */
static int index_parsed(struct builder *b, struct tree_file *f,
			const struct parse_job *j)
{
	char hex[GIT_OID_HEXSZ + 1];
	const struct xfile *x = &j->x;
	size_t i;
	int ret;

	if (j->res == TOO_BIG)
		b->st->too_big++;
	else if (j->res == FAILED)
		b->st->failed++;
	else
		b->st->parsed++;
	git_oid_tostr(hex, sizeof(hex), &f->oid);
	sqlite3_bind_text(b->ins_blob, 1, hex, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(b->ins_blob, 2, (int)j->res);
	if ((ret = step_done(b, b->ins_blob)))
		return ret;
	f->blob = sqlite3_last_insert_rowid(b->db);
	oidmap_put(&b->blobs, &f->oid, f->blob);
	for (i = 0; j->res == PARSED && i < x->ndefs && !ret; i++) {
		const struct xdef *d = &x->defs[i];

		sqlite3_bind_text(b->ins_def, 1, j->src + d->off, (int)d->len,
				  SQLITE_STATIC);
		sqlite3_bind_int64(b->ins_def, 2, f->blob);
		sqlite3_bind_int(b->ins_def, 3, d->kind);
		sqlite3_bind_int(b->ins_def, 4, d->line);
		sqlite3_bind_int(b->ins_def, 5, d->end_line);
		ret = step_done(b, b->ins_def);
	}
	for (i = 0; j->res == PARSED && i < x->nrefs && !ret; i++) {
		const struct xref *r = &x->refs[i];

		sqlite3_bind_text(b->ins_ref, 1, j->src + r->off, (int)r->len,
				  SQLITE_STATIC);
		sqlite3_bind_int64(b->ins_ref, 2, f->blob);
		sqlite3_bind_int(b->ins_ref, 3, r->kind);
		sqlite3_bind_int(b->ins_ref, 4, r->line);
		sqlite3_bind_text(b->ins_ref, 5, j->src + r->soff, (int)r->slen,
				  SQLITE_STATIC);
		ret = step_done(b, b->ins_ref);
	}
	return ret;
}

/*
 * Parse and store the blobs of files[from..) the index lacks, a batch
 * of at most SYM_TX_BLOBS (or SYM_BATCH_BYTES) in one transaction;
 * returns 0 or an error, and *next the file to go on from.
 */
static int index_batch(struct builder *b, size_t from, size_t *next)
{
	struct tree_file *batch[SYM_TX_BLOBS];
	git_blob *blobs[SYM_TX_BLOBS];
	struct parse_job jobs[SYM_TX_BLOBS];
	size_t i, k, n = 0, bytes = 0;
	int ret = 0;

	memset(jobs, 0, sizeof(jobs));
	for (i = from;
	     i < b->nfiles && n < SYM_TX_BLOBS && bytes < SYM_BATCH_BYTES;
	     i++) {
		struct tree_file *f = &b->files[i];
		size_t size;

		if (oidmap_get(&b->blobs, &f->oid))
			continue;
		/* the same blob at two paths is parsed once */
		for (k = 0; k < n && git_oid_cmp(&batch[k]->oid, &f->oid); k++)
			;
		if (k < n)
			continue;
		if (git_blob_lookup(&blobs[n], b->repo, &f->oid) < 0) {
			ret = rv__git_error(b->err, RV_ERR_REPO, f->path);
			goto out;
		}
		size = (size_t)git_blob_rawsize(blobs[n]);
		jobs[n].src = git_blob_rawcontent(blobs[n]);
		jobs[n].len = size;
		if (size <= RV_SYMBOLS_MAX_FILE)
			bytes += size;
		batch[n++] = f;
	}
	*next = i;
	parse_isolated(b->parser, jobs, n);
	if ((ret = hist_exec(b->db, "BEGIN;", b->err)))
		goto out;
	for (k = 0; k < n && !ret; k++)
		ret = index_parsed(b, batch[k], &jobs[k]);
	ret = ret ? ret : hist_exec(b->db, "COMMIT;", b->err);
	if (ret)
		hist_exec(b->db, "ROLLBACK;", NULL);
out:
	for (k = 0; k < n; k++) {
		git_blob_free(blobs[k]);
		xfile_release(&jobs[k].x);
	}
	return ret;
}

static int load_blobs(struct builder *b)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(b->db, "SELECT id, oid FROM blobs", -1, &st,
			       NULL) != SQLITE_OK)
		return db_error(b->db, b->err);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *hex = (const char *)sqlite3_column_text(st, 1);
		git_oid o;

		if (hex && git_oid_fromstrn(&o, hex, strlen(hex)) == 0 &&
		    strlen(hex) == GIT_OID_HEXSZ)
			oidmap_put(&b->blobs, &o, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	return 0;
}

static int64_t count_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t n = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static const char *const stat_keys[] = {"files", "too_big", "failed", "defs",
					"refs"};

static void stats_save(sqlite3 *db, const struct rv_symbols_stats *st)
{
	const size_t v[] = {st->files, st->too_big, st->failed, st->defs,
			    st->refs};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		hist_meta_set_int(db, stat_keys[i], (int64_t)v[i]);
}

static void stats_load(sqlite3 *db, struct rv_symbols_stats *st)
{
	size_t *v[] = {&st->files, &st->too_big, &st->failed, &st->defs,
		       &st->refs};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		*v[i] = (size_t)hist_meta_int(db, stat_keys[i], 0);
}

/* Store the tree's files, drop the blobs no file has any more. */
static int finish_index(struct builder *b, const char *tree_hex)
{
	size_t i;
	int ret;

	if ((ret = hist_exec(b->db, "DELETE FROM files;", b->err)))
		return ret;
	for (i = 0; i < b->nfiles && !ret; i++) {
		sqlite3_bind_text(b->ins_file, 1, b->files[i].path, -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(b->ins_file, 2, b->files[i].blob);
		ret = step_done(b, b->ins_file);
	}
	if (ret ||
	    (ret = hist_exec(b->db,
			     "CREATE TEMP TABLE gone AS SELECT id FROM blobs"
			     " WHERE id NOT IN (SELECT blob FROM files);"
			     "DELETE FROM defs WHERE blob IN gone;"
			     "DELETE FROM refs WHERE blob IN gone;"
			     "DELETE FROM blobs WHERE id IN gone;"
			     "DROP TABLE gone;",
			     b->err)))
		return ret;
	b->st->defs = (size_t)count_rows(
		b->db, "SELECT count(*) FROM defs d JOIN files f"
		       " ON f.blob = d.blob");
	b->st->refs = (size_t)count_rows(
		b->db, "SELECT count(*) FROM refs r JOIN files f"
		       " ON f.blob = r.blob");
	stats_save(b->db, b->st);
	if (hist_meta_set_text(b->db, "tree", tree_hex))
		return db_error(b->db, b->err);
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int prepare_builder(struct builder *b)
{
	static const struct {
		size_t off;
		const char *sql;
	} stmts[] = {
		{offsetof(struct builder, ins_blob),
		 "INSERT OR REPLACE INTO blobs(oid, state) VALUES (?, ?)"},
		{offsetof(struct builder, ins_def),
		 "INSERT INTO defs VALUES (?, ?, ?, ?, ?)"},
		{offsetof(struct builder, ins_ref),
		 "INSERT INTO refs VALUES (?, ?, ?, ?, ?)"},
		{offsetof(struct builder, ins_file),
		 "INSERT OR REPLACE INTO files VALUES (?, ?)"},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stmts); i++)
		if (sqlite3_prepare_v2(
			    b->db, stmts[i].sql, -1,
			    (sqlite3_stmt **)((char *)b + stmts[i].off),
			    NULL) != SQLITE_OK)
			return db_error(b->db, b->err);
	return 0;
}

static void progress(struct builder *b, size_t done, size_t todo)
{
	char line[120];

	if (!b->opts || !b->opts->progress)
		return;
	snprintf(line, sizeof(line), "symbols: parsed %zu of %zu files", done,
		 todo);
	b->opts->progress(b->opts->progress_arg, line);
}

int rv_symbols_index(const char *repo_path, const struct rv_index_opts *opts,
		     struct rv_symbols_stats *st, struct errmsg *err)
{
	struct builder b = {0};
	git_object *head = NULL;
	git_tree *tree = NULL;
	char tree_hex[GIT_OID_HEXSZ + 1];
	struct sb old = SB_INIT;
	char *path = NULL;
	double t0 = now_seconds();
	size_t i, todo = 0;
	bool tx = false;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	b.st = st;
	b.opts = opts;
	b.err = err;
	git_libgit2_init();
	if (git_repository_open_ext(&b.repo, repo_path ? repo_path : ".", 0,
				    NULL) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is not in a git repository",
				 repo_path ? repo_path : ".");
		goto out;
	}
	if (git_revparse_single(&head, b.repo, "HEAD^{tree}") < 0) {
		ret = rv__git_error(err, RV_ERR_REPO, "no tree at HEAD");
		goto out;
	}
	tree = (git_tree *)head;
	head = NULL;
	git_oid_tostr(tree_hex, sizeof(tree_hex), git_tree_id(tree));
	if (!(path = sym_db_path(b.repo))) {
		ret = errmsg_set(err, RV_ERR_REPO, "a bare repository path");
		goto out;
	}
	if ((ret = sym_db_open(&b.db, path, true, opts && opts->rebuild,
			       st->rebuilt_reason, sizeof(st->rebuilt_reason),
			       err)))
		goto out;
	st->rebuilt = st->rebuilt_reason[0] != '\0';
	if (hist_meta_text(b.db, "tree", &old) &&
	    !strcmp(sb_str(&old), tree_hex)) {
		stats_load(b.db, st);
		st->up_to_date = true;
		goto out;
	}
	if (!(b.parser = parser_new(err))) {
		ret = RV_ERR_INTERNAL;
		goto out;
	}
	if ((ret = prepare_builder(&b)) || (ret = load_blobs(&b)))
		goto out;
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, collect_file, &b) < 0) {
		ret = rv__git_error(err, RV_ERR_REPO,
				    "cannot read HEAD's tree");
		goto out;
	}
	st->files = b.nfiles;
	for (i = 0; i < b.nfiles; i++) {
		b.files[i].blob = oidmap_get(&b.blobs, &b.files[i].oid);
		if (b.files[i].blob)
			st->reused++;
		else
			todo++;
	}
	/* a killed run keeps the batches it stored: the next one reuses them */
	for (i = 0; i < b.nfiles && todo;) {
		if ((ret = index_batch(&b, i, &i)))
			goto out;
		progress(&b, st->parsed + st->too_big + st->failed, todo);
	}
	for (i = 0; i < b.nfiles; i++)
		b.files[i].blob = oidmap_get(&b.blobs, &b.files[i].oid);
	if ((ret = hist_exec(b.db, "BEGIN;", err)))
		goto out;
	tx = true;
	if ((ret = finish_index(&b, tree_hex)) ||
	    (ret = hist_exec(b.db, "COMMIT;", err)))
		goto out;
	tx = false;
out:
	if (tx)
		hist_exec(b.db, "ROLLBACK;", NULL);
	st->seconds = now_seconds() - t0;
	sqlite3_finalize(b.ins_blob);
	sqlite3_finalize(b.ins_def);
	sqlite3_finalize(b.ins_ref);
	sqlite3_finalize(b.ins_file);
	sqlite3_close(b.db);
	if (b.parser)
		ts_parser_delete(b.parser);
	for (i = 0; i < b.nfiles; i++)
		free(b.files[i].path);
	free(b.files);
	free(b.blobs.oid);
	free(b.blobs.id);
	sb_release(&old);
	free(path);
	git_tree_free(tree);
	git_object_free(head);
	git_repository_free(b.repo);
	git_libgit2_shutdown();
	return ret;
}

/* ---- reading: the index and an overlay --------------------------------- */

/* A file of the overlay: its text and what it holds. */
struct ov_file {
	char *path;
	git_oid oid;
	char *src;
	size_t len;
	bool pending; /* read, not parsed yet */
	struct xfile x;
};

struct rv_symbols {
	sqlite3 *db;
	sqlite3_stmt *q_defs, *q_refs;
	char indexed[GIT_OID_HEXSZ + 1]; /* the tree the db holds */
	char tree[GIT_OID_HEXSZ + 1];	 /* the tree answered for */
	size_t unindexed;		 /* of the indexed tree */
	char **masked; /* sorted paths the db must not answer */
	size_t nmasked;
	struct ov_file *ov;
	size_t nov;
	size_t ov_unparsed; /* changed files the overlay did not parse */
	TSParser *parser;
};

int rv_symbols_open(struct rv_symbols **out, const char *repo_path,
		    struct errmsg *err)
{
	git_repository *repo = NULL;
	struct rv_symbols *s = NULL;
	struct sb tree = SB_INIT;
	sqlite3 *db = NULL;
	char *path = NULL;
	int ret = 0;

	*out = NULL;
	git_libgit2_init();
	if (git_repository_open_ext(&repo, repo_path ? repo_path : ".", 0,
				    NULL) < 0) {
		ret = errmsg_set(err, RV_ERR_REPO,
				 "%s is not in a git repository",
				 repo_path ? repo_path : ".");
		goto out;
	}
	path = sym_db_path(repo);
	if (!path ||
	    (ret = sym_db_open(&db, path, false, false, NULL, 0, err)) || !db)
		goto out;
	if (!hist_meta_text(db, "tree", &tree) || tree.len != GIT_OID_HEXSZ) {
		ret = errmsg_set(err, RV_ERR_INTERNAL,
				 "the symbol index %s is unfinished; run "
				 "`quorum index`",
				 path);
		goto out;
	}
	s = xcalloc(1, sizeof(*s));
	s->db = db;
	db = NULL;
	memcpy(s->indexed, tree.buf, GIT_OID_HEXSZ + 1);
	memcpy(s->tree, tree.buf, GIT_OID_HEXSZ + 1);
	s->unindexed = (size_t)(hist_meta_int(s->db, "too_big", 0) +
				hist_meta_int(s->db, "failed", 0));
	if (sqlite3_prepare_v2(s->db,
			       "SELECT f.path, d.kind, d.line, d.end_line"
			       " FROM defs d JOIN files f ON f.blob = d.blob"
			       " WHERE d.name = ?1 AND (?2 = 0 OR d.kind = ?2)"
			       " ORDER BY f.path, d.line",
			       -1, &s->q_defs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "SELECT f.path, r.kind, r.line, r.scope"
			       " FROM refs r JOIN files f ON f.blob = r.blob"
			       " WHERE r.name = ?1 ORDER BY f.path, r.line",
			       -1, &s->q_refs, NULL) != SQLITE_OK) {
		ret = db_error(s->db, err);
		goto out;
	}
	*out = s;
	s = NULL;
out:
	rv_symbols_free(s);
	sqlite3_close(db);
	sb_release(&tree);
	free(path);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return ret;
}

static void overlay_clear(struct ov_file *ov, size_t n, char **masked,
			  size_t nmasked)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ov[i].path);
		free(ov[i].src);
		xfile_release(&ov[i].x);
	}
	free(ov);
	for (i = 0; i < nmasked; i++)
		free(masked[i]);
	free(masked);
}

void rv_symbols_free(struct rv_symbols *s)
{
	if (!s)
		return;
	overlay_clear(s->ov, s->nov, s->masked, s->nmasked);
	sqlite3_finalize(s->q_defs);
	sqlite3_finalize(s->q_refs);
	sqlite3_close(s->db);
	if (s->parser)
		ts_parser_delete(s->parser);
	free(s);
}

const char *rv_symbols_tree(const struct rv_symbols *s)
{
	return s->tree;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_masked(const struct rv_symbols *s, const char *path)
{
	return s->nmasked && bsearch(&path, s->masked, s->nmasked,
				     sizeof(*s->masked), cmp_str);
}

static int peel_tree(git_tree **out, git_repository *repo, const char *hex,
		     struct errmsg *err)
{
	git_object *obj = NULL;
	git_oid oid;
	int rc;

	*out = NULL;
	if (!hex || strlen(hex) != GIT_OID_HEXSZ ||
	    git_oid_fromstr(&oid, hex) < 0)
		return errmsg_set(err, RV_ERR_REPO, "%s is not an object id",
				  hex ? hex : "(null)");
	if (git_object_lookup(&obj, repo, &oid, GIT_OBJECT_ANY) < 0)
		return errmsg_set(err, RV_ERR_REPO,
				  "%s is not in the repository", hex);
	rc = git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	if (rc < 0)
		return errmsg_set(err, RV_ERR_REPO,
				  "%s is not a tree or a commit", hex);
	return 0;
}

struct ov_build {
	struct ov_file *ov;
	size_t nov, aov;
	char **masked;
	size_t nmasked, amasked;
	size_t unparsed, bytes;
};

static void mask(struct ov_build *o, const char *path)
{
	ALLOC_GROW(o->masked, o->nmasked + 1, o->amasked);
	o->masked[o->nmasked++] = xstrdup_or_null(path);
}

/* Parse the new blob of a changed path into o, or count it unparsed. */
static void overlay_file(struct rv_symbols *s, struct ov_build *o,
			 git_repository *repo, const git_diff_file *nf)
{
	struct ov_file f = {0};
	git_blob *blob = NULL;
	size_t i, size;

	for (i = 0; i < s->nov; i++)
		if (s->ov[i].src && !git_oid_cmp(&s->ov[i].oid, &nf->id) &&
		    !strcmp(s->ov[i].path, nf->path)) {
			/* parsed by the overlay before: moved, not parsed */
			ALLOC_GROW(o->ov, o->nov + 1, o->aov);
			o->ov[o->nov++] = s->ov[i];
			memset(&s->ov[i], 0, sizeof(s->ov[i]));
			return;
		}
	if (o->nov >= RV_SYMBOLS_OVERLAY_MAX_FILES ||
	    git_blob_lookup(&blob, repo, &nf->id) < 0) {
		o->unparsed++;
		return;
	}
	size = (size_t)git_blob_rawsize(blob);
	if (size > RV_SYMBOLS_MAX_FILE ||
	    o->bytes + size > RV_SYMBOLS_OVERLAY_MAX_BYTES) {
		o->unparsed++;
		git_blob_free(blob);
		return;
	}
	f.src = xmalloc(size + 1);
	memcpy(f.src, git_blob_rawcontent(blob), size);
	f.src[size] = '\0';
	f.len = size;
	f.pending = true;
	git_blob_free(blob);
	o->bytes += size;
	f.path = xstrdup_or_null(nf->path);
	f.oid = nf->id;
	ALLOC_GROW(o->ov, o->nov + 1, o->aov);
	o->ov[o->nov++] = f;
}

/* Parse the pending files of o; those the parser gave up on leave. */
static void overlay_parse(struct rv_symbols *s, struct ov_build *o)
{
	struct parse_job *jobs = xcalloc(o->nov + 1, sizeof(*jobs));
	size_t i, k = 0, n = 0;

	for (i = 0; i < o->nov; i++)
		if (o->ov[i].pending) {
			jobs[n].src = o->ov[i].src;
			jobs[n++].len = o->ov[i].len;
		}
	parse_isolated(s->parser, jobs, n);
	for (i = 0, n = 0; i < o->nov; i++) {
		struct ov_file *f = &o->ov[i];

		if (f->pending) {
			f->pending = false;
			if (jobs[n].res != PARSED) {
				o->unparsed++;
				free(f->path);
				free(f->src);
				xfile_release(&jobs[n++].x);
				continue;
			}
			f->x = jobs[n++].x;
		}
		o->ov[k++] = *f;
	}
	o->nov = k;
	free(jobs);
}

int rv_symbols_overlay(struct rv_symbols *s, struct rv_repo *repo,
		       const char *tree_id, struct errmsg *err)
{
	git_tree *base = NULL, *target = NULL;
	git_diff_options dopts;
	struct ov_build o = {0};
	git_diff *diff = NULL;
	size_t i, n;
	int ret;

	if ((ret = peel_tree(&target, repo->git, tree_id, err)))
		return ret;
	if ((ret = peel_tree(&base, repo->git, s->indexed, err))) {
		errmsg_set(err, RV_ERR_REPO,
			   "the indexed tree %s is not in the repository; run "
			   "`quorum index`",
			   s->indexed);
		goto out;
	}
	if (!s->parser && !(s->parser = parser_new(err))) {
		ret = RV_ERR_INTERNAL;
		goto out;
	}
	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.flags |= GIT_DIFF_SKIP_BINARY_CHECK;
	if (git_diff_tree_to_tree(&diff, repo->git, base, target, &dopts) < 0) {
		ret = rv__git_error(err, RV_ERR_INTERNAL,
				    "cannot diff the indexed tree");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (is_c_path(d->old_file.path))
			mask(&o, d->old_file.path);
		if (is_c_path(d->new_file.path) &&
		    strcmp(d->new_file.path, d->old_file.path))
			mask(&o, d->new_file.path);
		if (d->status == GIT_DELTA_DELETED ||
		    !is_c_path(d->new_file.path) ||
		    (d->new_file.mode != GIT_FILEMODE_BLOB &&
		     d->new_file.mode != GIT_FILEMODE_BLOB_EXECUTABLE))
			continue;
		overlay_file(s, &o, repo->git, &d->new_file);
	}
	overlay_parse(s, &o);
	if (o.nmasked)
		qsort(o.masked, o.nmasked, sizeof(*o.masked), cmp_str);
	overlay_clear(s->ov, s->nov, s->masked, s->nmasked);
	s->ov = o.ov;
	s->nov = o.nov;
	s->masked = o.masked;
	s->nmasked = o.nmasked;
	s->ov_unparsed = o.unparsed;
	git_oid_tostr(s->tree, sizeof(s->tree), git_tree_id(target));
	memset(&o, 0, sizeof(o));
out:
	overlay_clear(o.ov, o.nov, o.masked, o.nmasked);
	git_diff_free(diff);
	git_tree_free(base);
	git_tree_free(target);
	return ret;
}

static int check_name(const char *name, struct errmsg *err)
{
	size_t i, n = name ? strlen(name) : 0;

	if (!n || n > SYM_MAX_NAME || !is_ident_start((unsigned char)name[0]))
		goto bad;
	for (i = 1; i < n; i++)
		if (!is_ident((unsigned char)name[i]))
			goto bad;
	return 0;
bad:
	return errmsg_set(err, RV_ERR_INPUT,
			  "not a C identifier of at most %d bytes",
			  SYM_MAX_NAME);
}

static bool slice_is(const char *src, uint32_t off, uint32_t len,
		     const char *name, size_t nlen)
{
	return len == nlen && !memcmp(src + off, name, nlen);
}

int rv_symbols_definitions(struct rv_symbols *s, const char *name,
			   enum rv_sym_kind kind, size_t max,
			   struct rv_sym_defs *out, struct errmsg *err)
{
	size_t i, j, nlen;
	int rc, ret = 0;

	if ((ret = check_name(name, err)))
		return ret;
	nlen = strlen(name);
	out->unindexed = s->unindexed + s->ov_unparsed;
	for (i = 0; i < s->nov; i++) {
		const struct ov_file *f = &s->ov[i];

		for (j = 0; j < f->x.ndefs; j++) {
			const struct xdef *d = &f->x.defs[j];

			if (!slice_is(f->src, d->off, d->len, name, nlen) ||
			    (kind && d->kind != kind))
				continue;
			if (out->n < max)
				push_def(out, name, nlen, f->path, d->kind,
					 d->line, d->end_line);
			out->total++;
		}
	}
	sqlite3_bind_text(s->q_defs, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s->q_defs, 2, (int)kind);
	while ((rc = sqlite3_step(s->q_defs)) == SQLITE_ROW) {
		const char *path =
			(const char *)sqlite3_column_text(s->q_defs, 0);

		if (!path || is_masked(s, path))
			continue;
		if (out->n < max)
			push_def(out, name, nlen, path,
				 sqlite3_column_int(s->q_defs, 1),
				 sqlite3_column_int(s->q_defs, 2),
				 sqlite3_column_int(s->q_defs, 3));
		out->total++;
	}
	if (rc != SQLITE_DONE)
		ret = db_error(s->db, err);
	sqlite3_reset(s->q_defs);
	return ret;
}

int rv_symbols_callers(struct rv_symbols *s, const char *name, size_t max,
		       struct rv_sym_refs *out, struct errmsg *err)
{
	size_t i, j, nlen;
	int rc, ret = 0;

	if ((ret = check_name(name, err)))
		return ret;
	nlen = strlen(name);
	out->unindexed = s->unindexed + s->ov_unparsed;
	for (i = 0; i < s->nov; i++) {
		const struct ov_file *f = &s->ov[i];

		for (j = 0; j < f->x.nrefs; j++) {
			const struct xref *r = &f->x.refs[j];

			if (!slice_is(f->src, r->off, r->len, name, nlen))
				continue;
			if (out->n < max)
				push_ref(out, name, nlen, f->path,
					 f->src + r->soff, r->slen, r->kind,
					 r->line);
			out->total++;
		}
	}
	sqlite3_bind_text(s->q_refs, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s->q_refs)) == SQLITE_ROW) {
		const char *path =
			(const char *)sqlite3_column_text(s->q_refs, 0);
		const char *scope =
			(const char *)sqlite3_column_text(s->q_refs, 3);

		if (!path || is_masked(s, path))
			continue;
		if (out->n < max)
			push_ref(out, name, nlen, path, scope,
				 scope ? strlen(scope) : 0,
				 sqlite3_column_int(s->q_refs, 1),
				 sqlite3_column_int(s->q_refs, 2));
		out->total++;
	}
	if (rc != SQLITE_DONE)
		ret = db_error(s->db, err);
	sqlite3_reset(s->q_refs);
	return ret;
}
