// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: protection domains.
 *
 * Process context.  No locks: a PD only counts against the device limit;
 * the engines compare PD pointers (QP vs. MR, QP vs. AH).
 */
#include "eroce.h"

int eroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;

	return eroce_res_count_get(&res->num_pd, EROCE_MAX_PD);
}

int eroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;

	atomic_dec(&res->num_pd);
	return 0;
}
