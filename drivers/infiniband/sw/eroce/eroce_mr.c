// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: memory regions (DMA MRs for kernel consumers, pinned user MRs).
 *
 * Registration and deregistration run in process context; eroce_mr_get/put
 * run in any context.  Locks: the xa_lock of eroce_res.mr_xa for numbering
 * and removal; lookups run under RCU, which is why MRs are kfree_rcu()'d.
 *
 * A key dies at once: deregistration removes it from mr_xa, so the next
 * packet or SGE that names it fails its lookup (the responder NAKs it).
 * The engines look an MR up for each packet and hold it only for that
 * copy, never from one packet of a message to the next: dereg waits for
 * a copy in progress at most, whatever the peer does.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "eroce.h"

#define EROCE_MR_ACCESS_SUPPORTED					\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

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

static struct eroce_mr *eroce_mr_alloc(struct eroce_res *res, int access)
{
	struct eroce_mr *mr;
	int err;

	err = eroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);

	err = eroce_res_count_get(&res->num_mr, EROCE_MAX_MR);
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&res->num_mr);
		return ERR_PTR(-ENOMEM);
	}

	mr->access = access;
	eroce_obj_init(&mr->obj);
	return mr;
}

/* number the MR and make it visible to eroce_mr_get() */
static int eroce_mr_publish(struct eroce_res *res, struct eroce_mr *mr)
{
	u32 key;
	int err;

	/* reserve the index first: the keys must be set before lookups */
	err = xa_alloc_cyclic(&res->mr_xa, &mr->index, NULL,
			      XA_LIMIT(1, EROCE_MR_INDEX_MAX), &res->next_mr,
			      GFP_KERNEL);
	if (err < 0)
		return err;

	key = (mr->index << 8) | get_random_u8();
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
	atomic_dec(&res->num_mr);
	kfree_rcu(mr, rcu);
}

struct ib_mr *eroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct eroce_res *res = &to_eroce_dev(ibpd->device)->res;
	struct eroce_mr *mr;
	int err;

	mr = eroce_mr_alloc(res, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->type = EROCE_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;

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

	mr = eroce_mr_alloc(res, access);
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

int eroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibmr->device)->res;
	struct eroce_mr *mr = to_eroce_mr(ibmr);

	xa_erase(&res->mr_xa, mr->index);
	eroce_obj_drain(&mr->obj, true);
	eroce_mr_free(res, mr);
	return 0;
}

/*
 * Find the MR whose lkey/rkey is @key, with a reference, or NULL.  The
 * caller checks the PD, the access flags and the range.  Any context.
 */
struct eroce_mr *eroce_mr_get(struct eroce_res *res, u32 key)
{
	struct eroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&res->mr_xa, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !eroce_obj_get(&mr->obj)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void eroce_mr_put(struct eroce_mr *mr)
{
	eroce_obj_put(&mr->obj);
}
