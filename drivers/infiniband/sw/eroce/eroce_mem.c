// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mem.c - payload copies between packets and registered memory.
 *
 * Every byte the engines move goes through here: into or out of an MR at
 * an address the network or a WQE named (bounds checked against the MR
 * before anything is touched), along a WQE's scatter/gather list (each
 * SGE's lkey looked up, its PD and access rights checked), and the 64-bit
 * atomics.
 *
 * Context: any (softirq for the responder and completer, process context
 * for the requester).  Locks: eroce_atomic_lock makes the read-modify-write
 * of an atomic indivisible against every other eroce atomic on this host.
 */
#include <linux/highmem.h>

#include "eroce.h"
#include "eroce_mem.h"

static DEFINE_SPINLOCK(eroce_atomic_lock);

/* is [iova, iova + len) inside @mr? */
bool eroce_mr_range_ok(const struct eroce_mr *mr, u64 iova, u64 len)
{
	if (mr->type == EROCE_MR_DMA)
		return iova + len >= iova;
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/**
 * eroce_mr_copy() - copy between a buffer and an MR
 * @mr: the memory region
 * @iova: where in @mr; the range must have passed eroce_mr_range_ok()
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: copy @buf into @mr (else out of it)
 *
 * Return: 0, or -EFAULT if the range is outside the MR.
 */
int eroce_mr_copy(struct eroce_mr *mr, u64 iova, void *buf, u32 len,
		  bool to_mr)
{
	u64 off;

	if (!eroce_mr_range_ok(mr, iova, len))
		return -EFAULT;

	if (mr->type == EROCE_MR_DMA) {
		/* virtual DMA: kernel consumers pass kernel addresses */
		void *va = (void *)(uintptr_t)iova;

		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return 0;
	}

	off = iova - mr->iova + mr->page_offset;
	while (len) {
		unsigned long idx = off >> PAGE_SHIFT;
		u32 poff = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		void *va;

		if (idx >= mr->npages)
			return -EFAULT;
		va = kmap_local_page(mr->pages[idx]);
		if (to_mr)
			memcpy(va + poff, buf, n);
		else
			memcpy(buf, va + poff, n);
		kunmap_local(va);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * eroce_mr_atomic() - execute a 64-bit atomic in an MR
 * @mr: the memory region
 * @iova: 8-byte aligned address inside @mr
 * @cmp_swap: compare-and-swap (else fetch-and-add)
 * @compare: compare value (CMP_SWAP)
 * @swap_add: swap value (CMP_SWAP) or addend (FETCH_ADD)
 * @orig: the value before the operation
 *
 * Return: 0, -EINVAL for a misaligned address, -EFAULT outside the MR.
 */
int eroce_mr_atomic(struct eroce_mr *mr, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add, u64 *orig)
{
	unsigned long flags;
	u64 val;
	int err;

	if (iova & 7)
		return -EINVAL;

	spin_lock_irqsave(&eroce_atomic_lock, flags);
	err = eroce_mr_copy(mr, iova, &val, sizeof(val), false);
	if (!err) {
		*orig = val;
		if (cmp_swap) {
			if (val == compare)
				val = swap_add;
		} else {
			val += swap_add;
		}
		err = eroce_mr_copy(mr, iova, &val, sizeof(val), true);
	}
	spin_unlock_irqrestore(&eroce_atomic_lock, flags);
	return err;
}

/* advance @it by @len bytes without copying; -ENOSPC past the end */
int eroce_sge_skip(struct eroce_sge_iter *it, u32 len)
{
	while (len) {
		u32 n;

		if (it->idx >= it->num_sge)
			return -ENOSPC;
		n = min(len, it->sge[it->idx].length - it->off);
		it->off += n;
		len -= n;
		if (it->off == it->sge[it->idx].length) {
			it->idx++;
			it->off = 0;
		}
	}
	return 0;
}

/**
 * eroce_sge_copy() - copy along a scatter/gather list
 * @res: the device's objects (for lkey lookups)
 * @pd: the PD every MR must belong to
 * @it: position in the list, advanced by the bytes copied
 * @buf: kernel buffer
 * @len: bytes
 * @to_mem: copy @buf into the list's memory (needs IB_ACCESS_LOCAL_WRITE)
 *
 * Return: 0, -ENOSPC when the list is shorter than @len, -EACCES for a bad
 * lkey, PD or access right, -EFAULT for an SGE outside its MR.
 */
int eroce_sge_copy(struct eroce_res *res, struct ib_pd *pd,
		   struct eroce_sge_iter *it, void *buf, u32 len, bool to_mem)
{
	while (len) {
		const struct eroce_sge *sge;
		struct eroce_mr *mr;
		u32 n;
		int err;

		if (it->idx >= it->num_sge)
			return -ENOSPC;
		sge = &it->sge[it->idx];
		n = min(len, sge->length - it->off);
		if (n) {
			mr = eroce_mr_get(res, sge->lkey);
			if (!mr)
				return -EACCES;
			if (mr->ibmr.pd != pd ||
			    (to_mem && !(mr->access & IB_ACCESS_LOCAL_WRITE))) {
				eroce_mr_put(mr);
				return -EACCES;
			}
			err = eroce_mr_copy(mr, sge->addr + it->off, buf, n,
					    to_mem);
			eroce_mr_put(mr);
			if (err)
				return err;
		}
		buf += n;
		len -= n;
		it->off += n;
		if (it->off == sge->length) {
			it->idx++;
			it->off = 0;
		}
	}
	return 0;
}
