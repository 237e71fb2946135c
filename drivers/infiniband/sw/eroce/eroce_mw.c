// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: memory windows (alloc_mw, dealloc_mw, and the BIND_MW work
 * request the requester runs), and the invalidation of a key, whether it
 * names an MR or a window.
 *
 * alloc and dealloc run in process context; eroce_mw_get/put in any
 * context; eroce_mw_bind() and eroce_key_invalidate() in the engines
 * (requester work item, receive softirq) under the QP's engine lock.
 * Locks: the xa_lock of eroce_res.mw_xa (irq safe) for numbering, lookups
 * and removal; a window's lock (irq safe) for its binding; inside it the
 * bound MR's mw_lock, for the MR's count of windows (eroce_mr.c).
 *
 * The remote accesses through a window are in eroce_mem.c, next to those
 * through an MR.
 */
#include <linux/random.h>

#include "eroce.h"

#define EROCE_MW_ACCESS_SUPPORTED					\
	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |		\
	 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)

int eroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibmw->device)->res;
	struct eroce_mw *mw = to_eroce_mw(ibmw);
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = eroce_res_count_get(&res->num_mw, EROCE_MAX_MW);
	if (err)
		return err;

	spin_lock_init(&mw->lock);
	eroce_obj_init(&mw->obj);

	/* reserve the index first: the key must be set before lookups */
	err = eroce_res_alloc_index(&res->mw_xa, &mw->index,
				    EROCE_MW_INDEX_MIN, EROCE_MW_INDEX_MAX,
				    true);
	if (err)
		goto err_uncount;

	mw->key = (mw->index << 8) | get_random_u8();
	ibmw->rkey = mw->key;
	err = xa_err(xa_store_irq(&res->mw_xa, mw->index, mw, GFP_KERNEL));
	if (err)
		goto err_erase_index;
	return 0;

err_erase_index:
	xa_erase_irq(&res->mw_xa, mw->index);
err_uncount:
	atomic_dec(&res->num_mw);
	return err;
}

/* the window no longer grants access; mw->lock held */
static void eroce_mw_unbind_locked(struct eroce_mw *mw)
{
	lockdep_assert_held(&mw->lock);
	mw->valid = false;
	if (mw->mr) {
		eroce_mr_window_put(mw->mr);
		mw->mr = NULL;
	}
}

int eroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct eroce_res *res = &to_eroce_dev(ibmw->device)->res;
	struct eroce_mw *mw = to_eroce_mw(ibmw);
	unsigned long flags;

	xa_erase_irq(&res->mw_xa, mw->index);
	eroce_obj_drain(&mw->obj, true);

	spin_lock_irqsave(&mw->lock, flags);
	eroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	atomic_dec(&res->num_mw);
	return 0;
}

/*
 * The window numbered by @key, with a reference, or NULL.  The caller
 * checks the key itself under the window's lock: a bind changes it.  Any
 * context.
 */
struct eroce_mw *eroce_mw_get(struct eroce_res *res, u32 key)
{
	struct eroce_mw *mw;
	unsigned long flags;

	xa_lock_irqsave(&res->mw_xa, flags);
	mw = xa_load(&res->mw_xa, key >> 8);
	if (mw && !eroce_obj_get(&mw->obj))
		mw = NULL;
	xa_unlock_irqrestore(&res->mw_xa, flags);
	return mw;
}

void eroce_mw_put(struct eroce_mw *mw)
{
	eroce_obj_put(&mw->obj);
}

/*
 * May @qp bind a window with @access to [addr, addr + length) of @mr?
 * The MR must be a user MR of the QP's PD registered with
 * the right to bind windows, and with local write for a window a peer
 * may write into or run atomics on (IBA C10-74: not the window's remote
 * right itself); the range must lie in the MR.
 */
static int eroce_mw_check_mr(const struct eroce_mr *mr,
			     const struct eroce_qp *qp, int access, u64 addr,
			     u64 length)
{
	if (mr->type != EROCE_MR_USER || mr->ibmr.pd != qp->ibqp.pd ||
	    !(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (addr < mr->iova || length > mr->length ||
	    addr - mr->iova > mr->length - length)
		return -EINVAL;
	return 0;
}

/* make @mw the binding @wqe describes, to @mr (NULL: unbound); lock held */
static int eroce_mw_set(struct eroce_mw *mw, struct eroce_mr *mr,
			const struct eroce_qp *qp,
			const struct eroce_send_wqe *wqe)
{
	int access = wqe->wr.bind.access;

	lockdep_assert_held(&mw->lock);
	/* a bound type 2 window must be invalidated first */
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->valid)
		return -EINVAL;
	if (mr && !eroce_mr_window_get(mr))
		return -EACCES;	/* being deregistered */

	eroce_mw_unbind_locked(mw);
	mw->key = wqe->ex;
	if (!mr)
		return 0;
	mw->mr = mr;
	mw->mr_iova = wqe->wr.bind.addr;
	mw->addr = (access & IB_ZERO_BASED) ? 0 : wqe->wr.bind.addr;
	mw->length = wqe->wr.bind.length;
	mw->access = access & ~IB_ZERO_BASED;
	mw->qpn = qp->ibqp.qp_num;
	mw->valid = true;
	return 0;
}

/**
 * eroce_mw_bind() - execute a BIND_MW work request
 * @res: the device's objects
 * @qp: the QP it was posted on
 * @wqe: the work request: ex is the window's new rkey, wr.bind the rest
 *
 * The window of @qp's PD that the new rkey numbers, of the type the work
 * request says, grants wr.bind.access to the range of the MR wr.bind
 * names, under the new rkey: every QP of the PD for type 1, @qp alone
 * for type 2.  The key it had dies.  A type 1 window bound with length 0
 * grants nothing any more and holds no MR, whatever MR the request names.
 * Context: engine lock held.
 *
 * Return: 0; -EACCES for a window or MR of another PD, a window of the
 * other type, an MR that may not be bound or is being deregistered;
 * -EINVAL for bad rights or range, a zero-based type 1 window, a type 2
 * window still bound or bound with length 0.
 */
int eroce_mw_bind(struct eroce_res *res, struct eroce_qp *qp,
		  const struct eroce_send_wqe *wqe)
{
	u64 addr = wqe->wr.bind.addr, length = wqe->wr.bind.length;
	int access = wqe->wr.bind.access;
	u32 lkey = wqe->wr.bind.mr_lkey;
	struct eroce_mr *mr = NULL;
	struct eroce_mw *mw;
	unsigned long flags;
	int err;

	if (!eroce_key_is_mw(wqe->ex) ||
	    (access & ~EROCE_MW_ACCESS_SUPPORTED))
		return -EINVAL;
	mw = eroce_mw_get(res, wqe->ex);
	if (!mw)
		return -EINVAL;
	if (mw->ibmw.pd != qp->ibqp.pd ||
	    mw->ibmw.type != wqe->wr.bind.mw_type) {
		err = -EACCES;
		goto out_put_mw;
	}
	/*
	 * o10-36.2.2: type 1 windows are not zero based; o10-37.2.40: a type
	 * 2 window is invalidated, not bound to nothing
	 */
	if ((mw->ibmw.type == IB_MW_TYPE_1 && (access & IB_ZERO_BASED)) ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && !length)) {
		err = -EINVAL;
		goto out_put_mw;
	}

	/* length 0 unbinds a type 1 window: the MR it names is not held */
	if (length) {
		mr = eroce_mr_get(res, lkey);
		if (!mr) {
			err = -EACCES;
			goto out_put_mw;
		}
		err = eroce_mw_check_mr(mr, qp, access, addr, length);
		if (err)
			goto out_put_mr;
	}

	spin_lock_irqsave(&mw->lock, flags);
	err = eroce_mw_set(mw, mr, qp, wqe);
	spin_unlock_irqrestore(&mw->lock, flags);
out_put_mr:
	if (mr)
		eroce_mr_put(mr);
out_put_mw:
	eroce_mw_put(mw);
	return err;
}

/*
 * LOCAL_INV or a SEND with Invalidate (@remote) of a window: a type 2
 * window of the QP's PD, bound under @key, and for a remote invalidation
 * bound to this QP, grants nothing any more.
 */
static int eroce_mw_invalidate(struct eroce_res *res, struct eroce_qp *qp,
			       u32 key, bool remote)
{
	struct eroce_mw *mw = eroce_mw_get(res, key);
	unsigned long flags;
	int err = 0;

	if (!mw)
		return -EINVAL;
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->ibmw.type != IB_MW_TYPE_2 || mw->ibmw.pd != qp->ibqp.pd ||
	    (remote && mw->qpn != qp->ibqp.qp_num))
		err = -EACCES;
	else if (mw->key != key)
		err = -EINVAL;
	else
		eroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	eroce_mw_put(mw);
	return err;
}

/**
 * eroce_key_invalidate() - LOCAL_INV, or a SEND with Invalidate received
 * @res: the device's objects
 * @qp: the QP that asks
 * @key: the key to invalidate: a fast-registration MR's or a window's
 * @remote: a SEND with Invalidate from the peer (else a LOCAL_INV)
 *
 * When this returns, no packet reads or writes memory through @key.
 * Invalidating under its last key what is invalid already is allowed.
 * Context: engine lock held.
 *
 * Return: 0; -EINVAL when nothing has @key; -EACCES for an MR or window
 * of another PD, one that cannot be invalidated (a user MR, a type 1
 * window), a window bound to another QP (@remote).
 */
int eroce_key_invalidate(struct eroce_res *res, struct eroce_qp *qp,
			 u32 key, bool remote)
{
	lockdep_assert_held(&qp->eng.lock);
	if (eroce_key_is_mw(key))
		return eroce_mw_invalidate(res, qp, key, remote);
	return eroce_mr_invalidate(res, qp->ibqp.pd, key);
}
