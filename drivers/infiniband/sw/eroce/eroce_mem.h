/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* eroce: payload copies to and from registered memory (eroce_mem.c) */
#ifndef EROCE_MEM_H
#define EROCE_MEM_H

#include <rdma/eroce-abi.h>

struct eroce_qp;
struct eroce_res;
struct ib_pd;

/* a position in a scatter/gather list */
struct eroce_sge_iter {
	const struct eroce_sge *sge;
	u32 num_sge;
	u32 idx;
	u32 off;
};

static inline void eroce_sge_iter_init(struct eroce_sge_iter *it,
				       const struct eroce_sge *sge,
				       u32 num_sge)
{
	it->sge = sge;
	it->num_sge = num_sge;
	it->idx = 0;
	it->off = 0;
}

int eroce_rkey_access(struct eroce_res *res, const struct eroce_qp *qp,
		      u32 rkey, int access, u64 va, void *buf, u64 len);
/* a remote 64-bit atomic (eroce_rkey_atomic()) */
struct eroce_atomic {
	enum {
		EROCE_ATOMIC_CMP_SWAP,	/* operand if == compare */
		EROCE_ATOMIC_FETCH_ADD,	/* + operand */
		EROCE_ATOMIC_WRITE,	/* operand, stored whole */
	} kind;
	u64 compare;
	u64 operand;
	u64 orig;			/* the value before */
};

int eroce_rkey_atomic(struct eroce_res *res, const struct eroce_qp *qp,
		      u32 rkey, u64 va, struct eroce_atomic *op);
int eroce_sge_skip(struct eroce_sge_iter *it, u32 len);
int eroce_sge_copy(struct eroce_res *res, struct ib_pd *pd,
		   struct eroce_sge_iter *it, void *buf, u32 len, bool to_mem);

#endif /* EROCE_MEM_H */
