// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: memory regions (DMA MRs for kernel consumers, pinned user MRs,
 * fast-registration MRs whose pages kernel consumers register and
 * invalidate through the send queue), and the count of memory windows
 * bound to a user MR.
 *
 * Registration, re-registration, deregistration, alloc_mr and map_mr_sg
 * run in process
 * context; eroce_mr_get/put run in any context; eroce_mr_fast_reg() and
 * eroce_mr_invalidate() in the engines (requester work item, receive
 * softirq) under the QP's engine lock.  Locks: the xa_lock of
 * eroce_res.mr_xa for numbering and removal; lookups run under RCU, which
 * is why MRs are kfree_rcu()'d; a fast-registration MR's fast.lock (irq
 * safe, innermost) for its state, key, rights and page list; an MR's
 * mw_lock (irq safe, innermost) for its count of windows.
 *
 * A key dies at once: deregistration removes it from mr_xa, so the next
 * packet or SGE that names it fails its lookup (the responder NAKs it).
 * The engines look an MR up for each packet and hold it only for that
 * copy, never from one packet of a message to the next: dereg waits for
 * a copy in progress at most, whatever the peer does.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "eroce.h"
#include "eroce_fault.h"

#define EROCE_MR_ACCESS_SUPPORTED					\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_MW_BIND)

static int eroce_mr_check_access(int access)
{
	/* the optional range may be ignored by definition */
	access &= ~IB_ACCESS_OPTIONAL;

	if (access & ~EROCE_MR_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;

	/* IBA 10.6.3.1: remote write and atomic need local write */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;

	return 0;
}

/*
 * An MR of @pd: the PD is set before eroce_mr_publish() makes the MR
 * findable by key (ib_core sets it again, to the same value, only after
 * the verb returns)
 */
static struct eroce_mr *eroce_mr_alloc(struct eroce_res *res,
				       struct ib_pd *pd, int access)
{
	struct eroce_mr *mr;
	int err;

	err = eroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);

	err = eroce_res_count_get(&res->num_mr, EROCE_MAX_MR);
	if (err)
		return ERR_PTR(err);

	mr = eroce_should_fail(EROCE_FAULT_MR_ALLOC) ? NULL :
	     kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&res->num_mr);
		return ERR_PTR(-ENOMEM);
	}

	mr->ibmr.pd = pd;
	mr->access = access;
	spin_lock_init(&mr->mw_lock);
	eroce_obj_init(&mr->obj);
	return mr;
}

/* number the MR and make it visible to eroce_mr_get() */
static int eroce_mr_publish(struct eroce_res *res, struct eroce_mr *mr)
{
	u32 key;
	int err;

	/* reserve the index first: the keys must be set before lookups */
	err = eroce_res_alloc_index(&res->mr_xa, &mr->index, 1,
				    EROCE_MR_INDEX_MAX, false);
	if (err)
		return err;

	key = (mr->index << 8) | get_random_u8();
	mr->key = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	err = xa_err(xa_store(&res->mr_xa, mr->index, mr, GFP_KERNEL));
	if (err)
		xa_erase(&res->mr_xa, mr->index);
	return err;
}

/* the MR is unreachable and unused: free it */
static void eroce_mr_free(struct eroce_res *res, struct eroce_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr->fast.live.addr);
	kfree(mr->fast.staged.addr);
	atomic_dec(&res->num_mr);
	kfree_rcu(mr, rcu);
}

struct ib_mr *eroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;
	struct eroce_mr *mr;
	int err;

	mr = eroce_mr_alloc(res, ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->type = EROCE_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;
	/* ib_alloc_pd(IB_PD_UNSAFE_GLOBAL_RKEY): no IOMMU stands behind it */
	if (access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
		      IB_ACCESS_REMOTE_ATOMIC))
		dev_warn_once(&ibpd->device->dev,
			      "a DMA MR with remote rights: its peers may read and write all of this host's memory\n");

	err = eroce_mr_publish(res, mr);
	if (err) {
		eroce_mr_free(res, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* the pinned pages as an array, so the engines can index them by iova */
static int eroce_mr_map_pages(struct eroce_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter piter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;

	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (WARN_ON(i != mr->npages))
		return -EFAULT;

	mr->page_offset = ib_umem_offset(umem);
	return 0;
}

struct ib_mr *eroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;
	struct eroce_mr *mr;
	int err;

	if (!length || length > EROCE_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = eroce_mr_alloc(res, ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->type = EROCE_MR_USER;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free_mr;
	}

	err = eroce_mr_map_pages(mr);
	if (err)
		goto err_free_mr;

	err = eroce_mr_publish(res, mr);
	if (err)
		goto err_free_mr;

	return &mr->ibmr;

err_free_mr:
	eroce_mr_free(res, mr);
	return ERR_PTR(err);
}

/*
 * Deregistration, or re-registration, of @mr begins: no window is bound to
 * it, and none will be.  Return: 0, or -EBUSY while windows are bound.
 */
static int eroce_mr_stop_binding(struct eroce_mr *mr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mr->mw_lock, flags);
	if (mr->num_mw)
		err = -EBUSY;
	else
		mr->unbindable = true;
	spin_unlock_irqrestore(&mr->mw_lock, flags);
	return err;
}

/* a re-registration failed: @mr stays, windows may be bound again */
static void eroce_mr_allow_binding(struct eroce_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->mw_lock, flags);
	mr->unbindable = false;
	spin_unlock_irqrestore(&mr->mw_lock, flags);
}

/**
 * eroce_mr_window_get() - count a window bound to @mr
 * @mr: a user MR, with a reference
 *
 * From now until eroce_mr_window_put(), @mr cannot be deregistered.
 * Context: any; the window's lock held.
 * Return: false when deregistration has begun.
 */
bool eroce_mr_window_get(struct eroce_mr *mr)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mr->mw_lock, flags);
	ok = !mr->unbindable;
	if (ok)
		mr->num_mw++;
	spin_unlock_irqrestore(&mr->mw_lock, flags);
	return ok;
}

/* a window bound to @mr is unbound; any context */
void eroce_mr_window_put(struct eroce_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->mw_lock, flags);
	WARN_ON(!mr->num_mw);
	mr->num_mw--;
	spin_unlock_irqrestore(&mr->mw_lock, flags);
}

/**
 * eroce_rereg_user_mr() - register a user MR anew
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: with IB_MR_REREG_TRANS, the new user address ...
 * @length: ... and length
 * @iova: ... and I/O virtual address
 * @access: with IB_MR_REREG_ACCESS, the new rights
 * @ibpd: the PD (uverbs passes the MR's own without IB_MR_REREG_PD)
 * @udata: the command's udata
 *
 * A change of rights alone is made in place, under the same keys, so the
 * rkey a peer holds takes the new rights at once (as on hardware that
 * re-registers in place), unless the new rights write into memory that
 * was pinned read-only.  Otherwise registers a new MR with what @flags
 * changes and the old MR's values for the rest, and returns it: uverbs
 * puts it in the old one's place and deregisters the old one, whose keys
 * die at once.  The lkey and rkey change, as the verbs allow; a packet
 * that names the old rkey fails as after ibv_dereg_mr.  On failure the
 * old MR is unchanged; an MR with memory windows bound to it cannot be
 * registered anew (-EBUSY), as it cannot be deregistered.
 * Context: process context.
 * Return: the new MR, NULL when @ibmr was changed in place, or an ERR_PTR.
 */
struct ib_mr *eroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct eroce_mr *mr = to_eroce_mr(ibmr);
	struct ib_mr *new_mr;
	int err;

	if (mr->type != EROCE_MR_USER || !ibpd)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;

	/*
	 * No window is bound while the rights change.  Registered anew,
	 * uverbs deregisters the old MR, which must not fail: no window may
	 * be bound to it from here on.  (Should uverbs fail before, the old
	 * MR stays, and windows can no longer be bound to it.)
	 */
	err = eroce_mr_stop_binding(mr);
	if (err)
		return ERR_PTR(err);
	if (flags == IB_MR_REREG_ACCESS &&
	    (mr->umem->writable || !ib_access_writable(access))) {
		err = eroce_mr_check_access(access);
		if (!err)
			WRITE_ONCE(mr->access, access);
		eroce_mr_allow_binding(mr);
		return err ? ERR_PTR(err) : NULL;
	}
	new_mr = eroce_reg_user_mr(ibpd, start, length, iova, access, udata);
	if (IS_ERR(new_mr))
		eroce_mr_allow_binding(mr);
	return new_mr;
}

int eroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibmr->device)->res;
	struct eroce_mr *mr = to_eroce_mr(ibmr);
	int err;

	/* the verbs: an MR with windows bound to it stays registered */
	err = eroce_mr_stop_binding(mr);
	if (err)
		return err;
	xa_erase(&res->mr_xa, mr->index);
	eroce_obj_drain(&mr->obj, true);
	eroce_mr_free(res, mr);
	return 0;
}

/* the MR numbered @index, with a reference, or NULL; any context */
static struct eroce_mr *eroce_mr_get_index(struct eroce_res *res, u32 index)
{
	struct eroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&res->mr_xa, index);
	if (mr && !eroce_obj_get(&mr->obj))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * Find the MR whose lkey/rkey is @key, with a reference, or NULL.  The
 * caller checks the PD, the access flags and the range, and for a
 * fast-registration MR the key again under its lock (eroce_mem.c).  Any
 * context.
 */
struct eroce_mr *eroce_mr_get(struct eroce_res *res, u32 key)
{
	struct eroce_mr *mr = eroce_mr_get_index(res, key >> 8);

	if (mr && READ_ONCE(mr->key) != key) {
		eroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

void eroce_mr_put(struct eroce_mr *mr)
{
	eroce_obj_put(&mr->obj);
}

/* ---- fast registration ------------------------------------------------- */

struct ib_mr *eroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;
	struct eroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > EROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = eroce_mr_alloc(res, ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->type = EROCE_MR_FAST;
	spin_lock_init(&mr->fast.lock);
	mr->fast.max_pages = max_num_sg;
	mr->fast.live.addr = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	mr->fast.staged.addr = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->fast.live.addr || !mr->fast.staged.addr) {
		err = -ENOMEM;
		goto err_free_mr;
	}

	err = eroce_mr_publish(res, mr);
	if (err)
		goto err_free_mr;
	return &mr->ibmr;

err_free_mr:
	eroce_mr_free(res, mr);
	return ERR_PTR(err);
}

/* ib_sg_to_pages() callback: one more block of the staged page list */
static int eroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct eroce_mr *mr = to_eroce_mr(ibmr);
	struct eroce_mr_pages *staged = &mr->fast.staged;

	if (staged->num == mr->fast.max_pages)
		return -ENOMEM;
	staged->addr[staged->num++] = addr;
	return 0;
}

/*
 * Stage the page list of the next REG_MR.  eroce uses virtual DMA: the
 * DMA addresses of @sg are kernel addresses.  Returns the number of @sg
 * entries mapped, fewer when they need more than max_num_sg blocks.
 */
int eroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct eroce_mr *mr = to_eroce_mr(ibmr);
	struct eroce_mr_pages *staged = &mr->fast.staged;
	int n;

	if (mr->type != EROCE_MR_FAST)
		return -EINVAL;
	if (!is_power_of_2(ibmr->page_size) || ibmr->page_size < SZ_512)
		return -EINVAL;

	staged->num = 0;
	staged->shift = ilog2(ibmr->page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, eroce_mr_set_page);
	staged->first_offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/**
 * eroce_mr_fast_reg() - execute a REG_MR work request
 * @res: the device's objects
 * @pd: the PD of the QP it was posted on
 * @wqe: the work request; wr.reg has the key, rights, iova and length
 *
 * The MR whose index the key names, allocated by eroce_alloc_mr() in
 * @pd and FREE, becomes VALID under the key with the staged page list.
 * Context: engine lock held.
 *
 * Return: 0; -EACCES for a key of another PD or of an MR that is not a
 * fast-registration one; -EINVAL for a VALID MR, bad rights, or a range
 * the staged pages do not cover.
 */
int eroce_mr_fast_reg(struct eroce_res *res, struct ib_pd *pd,
		      const struct eroce_send_wqe *wqe)
{
	u32 key = wqe->wr.reg.key;
	int access = wqe->wr.reg.access;
	u64 iova = wqe->wr.reg.iova, length = wqe->wr.reg.length;
	struct eroce_mr_pages *live, *staged;
	struct eroce_mr *mr;
	unsigned long flags;
	int err = 0;

	mr = eroce_mr_get_index(res, key >> 8);
	if (!mr)
		return -EACCES;
	if (mr->type != EROCE_MR_FAST || mr->ibmr.pd != pd) {
		err = -EACCES;
		goto out_put;
	}
	if (eroce_mr_check_access(access) || iova + length < iova) {
		err = -EINVAL;
		goto out_put;
	}

	live = &mr->fast.live;
	staged = &mr->fast.staged;
	spin_lock_irqsave(&mr->fast.lock, flags);
	if (mr->fast.valid || !staged->num ||
	    staged->first_offset + length > (u64)staged->num << staged->shift) {
		err = -EINVAL;
	} else {
		memcpy(live->addr, staged->addr,
		       staged->num * sizeof(*staged->addr));
		live->num = staged->num;
		live->shift = staged->shift;
		live->first_offset = staged->first_offset;
		WRITE_ONCE(mr->key, key);
		mr->access = access;
		mr->iova = iova;
		mr->length = length;
		mr->fast.valid = true;
	}
	spin_unlock_irqrestore(&mr->fast.lock, flags);
out_put:
	eroce_mr_put(mr);
	return err;
}

/**
 * eroce_mr_invalidate() - LOCAL_INV, or a SEND with Invalidate received
 * @res: the device's objects
 * @pd: the PD of the QP that asks
 * @key: the key to invalidate
 *
 * A fast-registration MR of @pd registered under @key becomes FREE: when
 * this returns, no packet reads or writes its pages any more.
 * Invalidating a FREE MR under its last key again is allowed.
 * Context: engine lock held.
 *
 * Return: 0; -EINVAL when no MR has @key; -EACCES for an MR of another
 * PD or one that is not a fast-registration MR.
 */
int eroce_mr_invalidate(struct eroce_res *res, struct ib_pd *pd, u32 key)
{
	struct eroce_mr *mr = eroce_mr_get(res, key);
	unsigned long flags;
	int err = 0;

	if (!mr)
		return -EINVAL;
	if (mr->type != EROCE_MR_FAST || mr->ibmr.pd != pd) {
		err = -EACCES;
		goto out_put;
	}
	spin_lock_irqsave(&mr->fast.lock, flags);
	if (mr->key == key)
		mr->fast.valid = false;
	else
		err = -EINVAL;	/* registered again under a new key */
	spin_unlock_irqrestore(&mr->fast.lock, flags);
out_put:
	eroce_mr_put(mr);
	return err;
}
