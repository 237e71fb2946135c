// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mem.c - payload copies between packets and registered memory.
 *
 * Every byte the engines move goes through here: into or out of an MR or
 * a memory window at an address the network named (bounds checked against
 * the MR or window before anything is touched), along a WQE's
 * scatter/gather list (each SGE's lkey looked up, its PD and access rights
 * checked), and the 64-bit atomics.
 *
 * The check and the copy are one step: a fast-registration MR is checked
 * and copied under its fast.lock, a window under its lock, so an
 * invalidation or a bind is either before or after a packet's copy, never
 * during.
 *
 * The 64-bit atomics are the CPU's own atomic instructions on the word,
 * so they are indivisible against every other eroce atomic and against
 * the CPUs' atomics on the same memory, and take no lock shared by all
 * QPs.  A word that is not 8-byte aligned in the kernel's mapping (a
 * fast-reg MR whose page list is not) is read and written under
 * eroce_atomic_unaligned_lock instead: every mapping of a byte has the
 * same alignment, so such a word is never reached by the instructions.
 *
 * Context: any (softirq for the responder and the sender's matching of
 * responses, process context for the requester).  Locks: a
 * fast-registration MR's fast.lock or a window's lock (irq safe); inside
 * either, for an unaligned word only, eroce_atomic_unaligned_lock.
 */
#include <linux/highmem.h>

#include "eroce.h"
#include "eroce_mem.h"

static DEFINE_SPINLOCK(eroce_atomic_unaligned_lock);

/*
 * Is [iova, iova + len) inside @mr?  A DMA MR spans the kernel's memory:
 * its addresses are kernel virtual ones (virtual DMA), and a peer's
 * through an unsafe global rkey must at least be mapped memory of the
 * direct map, or the copy would fault in softirq.  Fast-reg MR: fast.lock
 * held.
 */
static bool eroce_mr_range_ok(const struct eroce_mr *mr, u64 iova, u64 len)
{
	if (mr->type == EROCE_MR_DMA)
		return iova + len >= iova &&
		       (!len ||
			(virt_addr_valid((void *)(uintptr_t)iova) &&
			 virt_addr_valid((void *)(uintptr_t)(iova + len - 1))));
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/*
 * May @pd reach [iova, iova + len) of @mr through @key with @access (0 for
 * a local read)?  Return: 0; -EACCES for the key, the PD, the state or
 * the rights; -EFAULT for a range outside the MR.  Fast-reg MR: fast.lock
 * held.
 */
static int eroce_mr_allowed(const struct eroce_mr *mr, u32 key,
			    const struct ib_pd *pd, int access, u64 iova,
			    u64 len)
{
	if (mr->type == EROCE_MR_FAST) {
		lockdep_assert_held(&mr->fast.lock);
		if (!mr->fast.valid)
			return -EACCES;
	}
	/* a user MR's rights change in place (eroce_rereg_user_mr()) */
	if (mr->key != key || mr->ibmr.pd != pd ||
	    (READ_ONCE(mr->access) & access) != access)
		return -EACCES;
	if (!eroce_mr_range_ok(mr, iova, len))
		return -EFAULT;
	return 0;
}

/* blocks of a fast-reg MR's live page list; fast.lock held */
static int eroce_mr_fast_copy(struct eroce_mr *mr, u64 iova, void *buf,
			      u32 len, bool to_mr)
{
	const struct eroce_mr_pages *pl = &mr->fast.live;
	u64 bsize = BIT_ULL(pl->shift);
	u64 off = iova - mr->iova + pl->first_offset;

	lockdep_assert_held(&mr->fast.lock);
	while (len) {
		u64 idx = off >> pl->shift;
		u64 boff = off & (bsize - 1);
		u32 n = min_t(u64, len, bsize - boff);
		void *va;

		if (idx >= pl->num)
			return -EFAULT;
		va = (void *)(uintptr_t)(pl->addr[idx] + boff);
		if (to_mr)
			memcpy(va, buf, n);
		else
			memcpy(buf, va, n);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* copy between @buf and a range eroce_mr_allowed() accepted */
static int eroce_mr_copy(struct eroce_mr *mr, u64 iova, void *buf, u32 len,
			 bool to_mr)
{
	u64 off;

	if (mr->type == EROCE_MR_DMA) {
		/* virtual DMA: kernel consumers pass kernel addresses */
		void *va = (void *)(uintptr_t)iova;

		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return 0;
	}
	if (mr->type == EROCE_MR_FAST)
		return eroce_mr_fast_copy(mr, iova, buf, len, to_mr);

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

static int eroce_mr_check_copy(struct eroce_mr *mr, u32 key,
			       const struct ib_pd *pd, int access, u64 iova,
			       void *buf, u64 len, bool to_mr)
{
	int err = eroce_mr_allowed(mr, key, pd, access, iova, len);

	if (err || !buf)
		return err;
	return eroce_mr_copy(mr, iova, buf, len, to_mr);
}

/*
 * eroce_mr_access() - check an access to an MR, and copy
 * @mr: the MR, looked up by @key (eroce_mr_get())
 * @key: the lkey or rkey the access names
 * @pd: the PD of the QP that accesses
 * @access: the IB_ACCESS_* right it needs; 0 for a local read
 * @iova: where in @mr
 * @buf: kernel buffer, or NULL to check [iova, iova + len) only
 * @len: bytes (at most U32_MAX with @buf)
 * @to_mr: copy @buf into @mr (else out of it)
 *
 * The check and the copy are one step: a fast-registration MR is
 * invalidated or registered again either before or after it, never
 * during.
 *
 * Return: 0; -EACCES for the key, the PD, the MR's state or its rights;
 * -EFAULT for a range outside the MR.
 */
static int eroce_mr_access(struct eroce_mr *mr, u32 key,
			   const struct ib_pd *pd, int access, u64 iova,
			   void *buf, u64 len, bool to_mr)
{
	unsigned long flags;
	int err;

	if (buf && len > U32_MAX)
		return -EFAULT;
	if (mr->type != EROCE_MR_FAST)
		return eroce_mr_check_copy(mr, key, pd, access, iova, buf, len,
					   to_mr);

	spin_lock_irqsave(&mr->fast.lock, flags);
	err = eroce_mr_check_copy(mr, key, pd, access, iova, buf, len, to_mr);
	spin_unlock_irqrestore(&mr->fast.lock, flags);
	return err;
}

/*
 * The kernel address of the 64-bit word at @iova of @mr, a range
 * eroce_mr_allowed() accepted; a user MR's page is mapped, and *@map is
 * then what to kunmap_local(), else NULL.  An ERR_PTR for a word outside
 * the MR's pages.  Fast-reg MR: fast.lock held.
 */
static u64 *eroce_mr_word_map(struct eroce_mr *mr, u64 iova, void **map)
{
	*map = NULL;
	if (mr->type == EROCE_MR_DMA)
		return (u64 *)(uintptr_t)iova;
	if (mr->type == EROCE_MR_FAST) {
		const struct eroce_mr_pages *pl = &mr->fast.live;
		u64 off = iova - mr->iova + pl->first_offset;
		u64 idx = off >> pl->shift;

		lockdep_assert_held(&mr->fast.lock);
		if (idx >= pl->num)
			return ERR_PTR(-EFAULT);
		return (u64 *)(uintptr_t)(pl->addr[idx] +
					  (off & (BIT_ULL(pl->shift) - 1)));
	} else {
		u64 off = iova - mr->iova + mr->page_offset;
		unsigned long idx = off >> PAGE_SHIFT;

		if (idx >= mr->npages)
			return ERR_PTR(-EFAULT);
		*map = kmap_local_page(mr->pages[idx]);
		return *map + (off & ~PAGE_MASK);
	}
}

/*
 * @op on an aligned word: the CPU's atomic instructions.  ATOMIC WRITE is
 * one store of the whole word, so a reader sees it before or after,
 * never half of it (IBA's single-copy atomicity); release ordering keeps
 * it behind the data of the RDMA WRITEs before it, which it may flag.
 */
static void eroce_atomic_aligned(u64 *word, struct eroce_atomic *op)
{
	atomic64_t *v = (atomic64_t *)word;

	switch (op->kind) {
	case EROCE_ATOMIC_CMP_SWAP:
		op->orig = atomic64_cmpxchg(v, op->compare, op->operand);
		break;
	case EROCE_ATOMIC_FETCH_ADD:
		op->orig = atomic64_fetch_add(op->operand, v);
		break;
	case EROCE_ATOMIC_WRITE:
		atomic64_set_release(v, op->operand);
		break;
	}
}

/* @op on a word not aligned in the kernel's mapping */
static void eroce_atomic_unaligned(u64 *word, struct eroce_atomic *op)
{
	unsigned long flags;
	u64 val = op->operand;

	spin_lock_irqsave(&eroce_atomic_unaligned_lock, flags);
	if (op->kind != EROCE_ATOMIC_WRITE)
		memcpy(&op->orig, word, sizeof(op->orig));
	if (op->kind == EROCE_ATOMIC_FETCH_ADD)
		val = op->orig + op->operand;
	if (op->kind != EROCE_ATOMIC_CMP_SWAP || op->orig == op->compare)
		memcpy(word, &val, sizeof(val));
	spin_unlock_irqrestore(&eroce_atomic_unaligned_lock, flags);
}

/*
 * The read-modify-write of @op at a checked, 8-byte aligned address of
 * @mr (IB_ATOMIC_HCA and more: the CPUs' atomics on the word are
 * serialized with it too).  Fast-reg MR: fast.lock held.
 */
static int eroce_mem_atomic_rmw(struct eroce_mr *mr, u64 iova,
				struct eroce_atomic *op)
{
	void *map;
	u64 *word;

	word = eroce_mr_word_map(mr, iova, &map);
	if (IS_ERR(word))
		return PTR_ERR(word);
	if (IS_ALIGNED((uintptr_t)word, sizeof(u64)))
		eroce_atomic_aligned(word, op);
	else
		eroce_atomic_unaligned(word, op);
	if (map)
		kunmap_local(map);
	return 0;
}

/* the right @op needs: an ATOMIC WRITE is a WRITE */
static int eroce_atomic_access(const struct eroce_atomic *op)
{
	return op->kind == EROCE_ATOMIC_WRITE ? IB_ACCESS_REMOTE_WRITE :
						IB_ACCESS_REMOTE_ATOMIC;
}

/* an atomic in an MR; fast-reg MR: fast.lock held */
static int eroce_mr_atomic_rmw(struct eroce_mr *mr, u32 key,
			       const struct ib_pd *pd, u64 iova,
			       struct eroce_atomic *op)
{
	int err;

	err = eroce_mr_allowed(mr, key, pd, eroce_atomic_access(op), iova,
			       sizeof(u64));
	if (err)
		return err;
	return eroce_mem_atomic_rmw(mr, iova, op);
}

/*
 * eroce_mr_atomic() - execute a remote 64-bit atomic in an MR
 * @mr: the memory region, looked up by @key
 * @key: the rkey of the request
 * @pd: the PD of the responder's QP
 * @iova: 8-byte aligned address inside @mr
 * @op: what to do; op->orig is set to the value before
 *
 * Return: 0; -EACCES or -EFAULT as eroce_mr_access().
 */
static int eroce_mr_atomic(struct eroce_mr *mr, u32 key,
			   const struct ib_pd *pd, u64 iova,
			   struct eroce_atomic *op)
{
	unsigned long flags;
	int err;

	if (mr->type != EROCE_MR_FAST)
		return eroce_mr_atomic_rmw(mr, key, pd, iova, op);

	spin_lock_irqsave(&mr->fast.lock, flags);
	err = eroce_mr_atomic_rmw(mr, key, pd, iova, op);
	spin_unlock_irqrestore(&mr->fast.lock, flags);
	return err;
}

/*
 * May @qp reach [va, va + len) through the window @mw under @key with
 * @access?  A type 1 window serves every QP of its PD, a type 2 window
 * the QP that bound it.  *iova is set to where @va is in the bound MR.
 * Return: as eroce_mr_allowed().  mw->lock held.
 */
static int eroce_mw_allowed(const struct eroce_mw *mw, u32 key,
			    const struct eroce_qp *qp, int access, u64 va,
			    u64 len, u64 *iova)
{
	lockdep_assert_held(&mw->lock);
	if (!mw->valid || mw->key != key || mw->ibmw.pd != qp->ibqp.pd ||
	    (mw->access & access) != access)
		return -EACCES;
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->qpn != qp->ibqp.qp_num)
		return -EACCES;
	if (va < mw->addr || len > mw->length ||
	    va - mw->addr > mw->length - len)
		return -EFAULT;
	*iova = mw->mr_iova + (va - mw->addr);
	return 0;
}

/* eroce_rkey_access() through the window @key names */
static int eroce_mw_access(struct eroce_res *res, u32 key,
			   const struct eroce_qp *qp, int access, u64 va,
			   void *buf, u64 len, bool to_mem)
{
	struct eroce_mw *mw = eroce_mw_get(res, key);
	unsigned long flags;
	u64 iova;
	int err;

	if (!mw)
		return -EACCES;
	spin_lock_irqsave(&mw->lock, flags);
	err = eroce_mw_allowed(mw, key, qp, access, va, len, &iova);
	if (!err && buf)
		err = eroce_mr_copy(mw->mr, iova, buf, len, to_mem);
	spin_unlock_irqrestore(&mw->lock, flags);
	eroce_mw_put(mw);
	return err;
}

/* eroce_rkey_atomic() through the window @key names */
static int eroce_mw_atomic(struct eroce_res *res, u32 key,
			   const struct eroce_qp *qp, u64 va,
			   struct eroce_atomic *op)
{
	struct eroce_mw *mw = eroce_mw_get(res, key);
	unsigned long flags;
	u64 iova;
	int err;

	if (!mw)
		return -EACCES;
	spin_lock_irqsave(&mw->lock, flags);
	err = eroce_mw_allowed(mw, key, qp, eroce_atomic_access(op), va,
			       sizeof(u64), &iova);
	if (!err)
		err = eroce_mem_atomic_rmw(mw->mr, iova, op);
	spin_unlock_irqrestore(&mw->lock, flags);
	eroce_mw_put(mw);
	return err;
}

/**
 * eroce_rkey_access() - check a remote READ or WRITE, and copy
 * @res: the device's objects
 * @qp: the responder's QP
 * @rkey: the rkey of the request, an MR's or a memory window's
 * @access: IB_ACCESS_REMOTE_WRITE (copy @buf into the memory) or
 *	    IB_ACCESS_REMOTE_READ (copy out of it)
 * @va: the address the request names
 * @buf: kernel buffer, or NULL to check [va, va + len) only
 * @len: bytes (at most U32_MAX with @buf)
 *
 * The key is looked up for this access alone: the reference lasts as long
 * as the copy, so deregistration never waits on a message the peer is
 * slow to finish.
 *
 * Return: 0; -EACCES for the key, the PD, the QP, the state or the
 * rights; -EFAULT for a range outside the MR or window.
 */
int eroce_rkey_access(struct eroce_res *res, const struct eroce_qp *qp,
		      u32 rkey, int access, u64 va, void *buf, u64 len)
{
	bool to_mem = access == IB_ACCESS_REMOTE_WRITE;
	struct eroce_mr *mr;
	int err;

	if (buf && len > U32_MAX)
		return -EFAULT;
	if (eroce_key_is_mw(rkey))
		return eroce_mw_access(res, rkey, qp, access, va, buf, len,
				       to_mem);

	mr = eroce_mr_get(res, rkey);
	if (!mr)
		return -EACCES;
	err = eroce_mr_access(mr, rkey, qp->ibqp.pd, access, va, buf, len,
			      to_mem);
	eroce_mr_put(mr);
	return err;
}

/**
 * eroce_rkey_atomic() - execute a remote 64-bit atomic or ATOMIC WRITE
 * @res: the device's objects
 * @qp: the responder's QP
 * @rkey: the rkey of the request, an MR's or a memory window's
 * @va: 8-byte aligned address
 * @op: what to do; op->orig is set to the value before (not for
 *	EROCE_ATOMIC_WRITE)
 *
 * Return: 0; -EINVAL for a misaligned address; -EACCES or -EFAULT as
 * eroce_rkey_access() (the right checked is IB_ACCESS_REMOTE_ATOMIC, or
 * IB_ACCESS_REMOTE_WRITE for an ATOMIC WRITE).
 */
int eroce_rkey_atomic(struct eroce_res *res, const struct eroce_qp *qp,
		      u32 rkey, u64 va, struct eroce_atomic *op)
{
	struct eroce_mr *mr;
	int err;

	if (va & 7)
		return -EINVAL;
	if (eroce_key_is_mw(rkey))
		return eroce_mw_atomic(res, rkey, qp, va, op);

	mr = eroce_mr_get(res, rkey);
	if (!mr)
		return -EACCES;
	err = eroce_mr_atomic(mr, rkey, qp->ibqp.pd, va, op);
	eroce_mr_put(mr);
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
			err = eroce_mr_access(mr, sge->lkey, pd,
					      to_mem ? IB_ACCESS_LOCAL_WRITE : 0,
					      sge->addr + it->off, buf, n,
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
