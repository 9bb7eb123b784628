// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the mailparse mbox/series work. */
#include <stdlib.h>
#include "mailparse.h"

int mp_mbox_open(struct mp_mbox **out, const char *path,
		 const struct mp_limits *lim, struct errmsg *err)
{
	return errmsg_set(err, MP_ERR_IO, "not implemented");
}

int mp_mbox_open_fp(struct mp_mbox **out, FILE *fp, const char *name,
		    const struct mp_limits *lim, struct errmsg *err)
{
	return errmsg_set(err, MP_ERR_IO, "not implemented");
}

int mp_mbox_next(struct mp_mbox *mb, struct sb *msg, const char **where)
{
	return 0;
}

void mp_mbox_free(struct mp_mbox *mb)
{
}
