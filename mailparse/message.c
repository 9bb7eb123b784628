// SPDX-License-Identifier: GPL-2.0-or-later
/* STUB: replaced by the mailparse message work. */
#include <stdlib.h>
#include "mailparse.h"

int mp_patch_parse(struct mp_patch **out, const char *raw, size_t len,
		   const struct mp_limits *lim, struct errmsg *err)
{
	*out = NULL;
	return errmsg_set(err, MP_ERR_NOT_PATCH, "not implemented");
}

void mp_patch_free(struct mp_patch *p)
{
	free(p);
}

void mp_subject_parse(struct mp_subject *s, const char *subject)
{
}

void mp_subject_release(struct mp_subject *s)
{
}

size_t mp_trailers_parse(const char *message, struct mp_trailer **arr,
			 size_t *n)
{
	return 0;
}

const char *mp_trailer_get(const struct mp_trailer *arr, size_t n,
			   const char *key)
{
	return NULL;
}
