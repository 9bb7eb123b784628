// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the mailparse mbox/series work. */
#include <stdlib.h>
#include "mailparse.h"

struct mp_collector *mp_collector_new(void)
{
	return NULL;
}

void mp_collector_add(struct mp_collector *c, struct mp_patch *p)
{
	mp_patch_free(p);
}

void mp_collector_error(struct mp_collector *c, const char *where,
			const char *message)
{
}

struct mp_set *mp_collector_finish(struct mp_collector *c)
{
	return xcalloc(1, sizeof(struct mp_set));
}

void mp_set_free(struct mp_set *set)
{
	free(set);
}

int mp_read_path(struct mp_set **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err)
{
	*out = NULL;
	return errmsg_set(err, MP_ERR_IO, "not implemented");
}

int mp_collect_path(struct mp_collector *c, const char *path,
		    const struct mp_limits *lim, struct errmsg *err)
{
	return errmsg_set(err, MP_ERR_IO, "not implemented");
}
