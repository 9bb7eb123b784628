/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h - quorum's config: git-config syntax, read with libgit2 from
 * $QUORUM_CONFIG, else $XDG_CONFIG_HOME/quorum/config (or
 * ~/.config/quorum/config), then the repo's .git/quorum.conf (which
 * wins); and the file helpers the config's paths need.
 */
#ifndef QUORUM_CONFIG_H
#define QUORUM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "mailparse/sb.h"

struct qconfig;

/* repo may be NULL. 0, or -1 with a one-line reason in err. */
int qconfig_load(struct qconfig **out, const char *repo, struct errmsg *err);
void qconfig_free(struct qconfig *cfg);
/* Value of "section.name" or "section.sub.name", or NULL. Owned by cfg. */
const char *qconfig_get(struct qconfig *cfg, const char *key);
/* Integer value, or def when absent; -1 with err when malformed. */
int qconfig_get_int(struct qconfig *cfg, const char *key, int def, int *out,
		    struct errmsg *err);
/*
 * Call fn(arg, NAME) once for each [section "NAME"] in the config, in
 * the order first seen; stops at and returns fn's first nonzero result.
 */
int qconfig_subsections(struct qconfig *cfg, const char *section,
			int (*fn)(void *arg, const char *name), void *arg);
/*
 * Call fn(arg, KEY, VALUE) for every entry whose name starts with prefix
 * (e.g. "classify.stable."), KEY being the rest, in file order (a key
 * set twice comes twice); stops at and returns fn's first nonzero result.
 */
int qconfig_foreach(struct qconfig *cfg, const char *prefix,
		    int (*fn)(void *arg, const char *key, const char *value),
		    void *arg);
/*
 * Where section.sub.name (sub may be NULL; name NULL: the section's
 * header) is set: "FILE:LINE" of the last file that sets it, else the
 * list of files read. Appended to out.
 */
void qconfig_where(struct qconfig *cfg, const char *section, const char *sub,
		   const char *name, struct sb *out);
/* Whether some file read has a [section "sub"] header. */
bool qconfig_has_section(struct qconfig *cfg, const char *section,
			 const char *sub);
/*
 * Is there a user config file to read ($QUORUM_CONFIG set, or the
 * XDG one exists)? Commands that read no repository check it only then.
 */
bool qconfig_user_file_present(void);
/* The files that were read, for messages. */
const char *qconfig_sources(struct qconfig *cfg);

/* A config path with a leading ~/ expanded from $HOME. Caller frees. */
char *expand_home(const char *p);

/* Read all of path ("-" for stdin) with a size cap. 0 or -1 with err. */
int read_file_capped(const char *path, size_t cap, struct sb *out,
		     struct errmsg *err);

#endif
