// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_kfrwr: fast registration the way the kernel's storage consumers
 * use it (nvme-rdma, NFS over RDMA, iSER), and the misuse each must
 * survive.  Two RC QPs, one on each device (the initiator on dev_a, the
 * target on dev_b); the target registers three scattered pages with
 * ib_alloc_mr(), ib_map_mr_sg() and IB_WR_REG_MR, the initiator reads and
 * writes them through the rkey, and the key dies by IB_WR_LOCAL_INV or by
 * the initiator's IB_WR_SEND_WITH_INV.  Data is compared byte for byte;
 * every access through a dead, stale or foreign key must fail with the
 * completion status the verbs give it and leave the memory untouched.
 *
 *   insmod eroce_kfrwr.ko dev_a=eroce1 gid_a=N dev_b=eroce2 gid_b=M
 *
 * Each check prints "eroce_kfrwr: ok NAME" or "eroce_kfrwr: not ok NAME:
 * WHY"; loading fails (-EIO) when one failed, so insmod's exit status is
 * the verdict.  Nothing is left behind: the module can be removed at once.
 *
 * Context: process context (module init).  Locks: none of its own.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_a = "eroce1";
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "the initiator's RDMA device");
static uint gid_a;
module_param(gid_a, uint, 0444);
MODULE_PARM_DESC(gid_a, "the initiator's RoCE v2 GID index");
static char *dev_b = "eroce2";
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "the target's RDMA device");
static uint gid_b;
module_param(gid_b, uint, 0444);
MODULE_PARM_DESC(gid_b, "the target's RoCE v2 GID index");

#define KF_PAGES	3
#define KF_LEN		(KF_PAGES * PAGE_SIZE)
#define KF_PSN		0x1234

static int kf_failures;

static void kf_result(const char *name, bool ok, const char *why, long val)
{
	if (ok) {
		pr_info("eroce_kfrwr: ok %s\n", name);
	} else {
		pr_err("eroce_kfrwr: not ok %s: %s (%ld)\n", name, why, val);
		kf_failures++;
	}
}

/* one end: a device, its PD and CQ, an RC QP, a buffer in its DMA MR */
struct kf_end {
	struct ib_device *dev;
	u32 gid_index;
	union ib_gid gid;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* KF_LEN bytes, lkey pd->local_dma_lkey */
	u64 buf_dma;
};

/*
 * The completion of @wr_id within a few seconds, or a status of -1, at
 * once after insmod was killed (the test's timeout): a transport that
 * stopped ends the run instead of holding module init for minutes.
 */
static struct ib_wc kf_wait(struct kf_end *e, u64 wr_id)
{
	struct ib_wc wc = { .status = -1 };
	int i;

	for (i = 0; i < 1000 && !fatal_signal_pending(current); i++) {
		while (ib_poll_cq(e->cq, 1, &wc) == 1)
			if (wc.wr_id == wr_id)
				return wc;
		msleep(10);
	}
	wc.status = -1;
	return wc;
}

static int kf_qp_create(struct kf_end *e)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
	};

	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp)) {
		int err = PTR_ERR(e->qp);

		e->qp = NULL;
		return err;
	}
	return ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

/* @e's QP to RTS, connected to @peer's */
static int kf_qp_connect(struct kf_end *e, struct kf_end *peer)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = KF_PSN,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
	};
	int err;

	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &peer->gid, 0, e->gid_index, 64, 0);
	err = ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = KF_PSN;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	return ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* a new connected pair of QPs (after a check left one in error) */
static int kf_pair(struct kf_end *a, struct kf_end *b)
{
	struct ib_wc wc;
	int err;

	if (a->qp)
		ib_destroy_qp(a->qp);
	if (b->qp)
		ib_destroy_qp(b->qp);
	a->qp = NULL;
	b->qp = NULL;
	/* the old QPs' flushed work requests must not answer for new ones */
	while (ib_poll_cq(a->cq, 1, &wc) == 1)
		;
	while (ib_poll_cq(b->cq, 1, &wc) == 1)
		;
	err = kf_qp_create(a);
	if (!err)
		err = kf_qp_create(b);
	if (!err)
		err = kf_qp_connect(a, b);
	if (!err)
		err = kf_qp_connect(b, a);
	return err;
}

static int kf_end_init(struct kf_end *e, const char *name, u32 gid_index)
{
	int err;

	e->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!e->dev)
		return -ENODEV;
	e->gid_index = gid_index;
	err = rdma_query_gid(e->dev, 1, gid_index, &e->gid);
	if (err)
		return err;
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd)) {
		err = PTR_ERR(e->pd);
		e->pd = NULL;
		return err;
	}
	e->cq = ib_alloc_cq(e->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		err = PTR_ERR(e->cq);
		e->cq = NULL;
		return err;
	}
	e->buf = kzalloc(KF_LEN, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->buf_dma = ib_dma_map_single(e->dev, e->buf, KF_LEN,
				       DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(e->dev, e->buf_dma)) {
		kfree(e->buf);
		e->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kf_end_fini(struct kf_end *e)
{
	if (e->qp)
		ib_destroy_qp(e->qp);
	if (e->buf) {
		ib_dma_unmap_single(e->dev, e->buf_dma, KF_LEN,
				    DMA_BIDIRECTIONAL);
		kfree(e->buf);
	}
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->dev)
		ib_device_put(e->dev);
}

/* the target's fast-registration MR over KF_PAGES scattered pages */
struct kf_frmr {
	struct ib_mr *mr;
	struct page *pages[KF_PAGES];
	struct sg_table sgt;
	int nents;
};

static int kf_frmr_init(struct kf_frmr *f, struct kf_end *b)
{
	struct scatterlist *sg;
	int i, err;

	f->mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, KF_PAGES);
	if (IS_ERR(f->mr)) {
		err = PTR_ERR(f->mr);
		f->mr = NULL;
		return err;
	}
	err = sg_alloc_table(&f->sgt, KF_PAGES, GFP_KERNEL);
	if (err)
		return err;
	for_each_sg(f->sgt.sgl, sg, KF_PAGES, i) {
		f->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!f->pages[i])
			return -ENOMEM;
		sg_set_page(sg, f->pages[i], PAGE_SIZE, 0);
	}
	f->nents = ib_dma_map_sg(b->dev, f->sgt.sgl, KF_PAGES,
				 DMA_BIDIRECTIONAL);
	return f->nents ? 0 : -ENOMEM;
}

static void kf_frmr_fini(struct kf_frmr *f, struct kf_end *b)
{
	int i;

	if (f->nents)
		ib_dma_unmap_sg(b->dev, f->sgt.sgl, KF_PAGES,
				DMA_BIDIRECTIONAL);
	if (f->sgt.sgl)
		sg_free_table(&f->sgt);
	for (i = 0; i < KF_PAGES; i++)
		if (f->pages[i])
			__free_page(f->pages[i]);
	if (f->mr)
		ib_dereg_mr(f->mr);
}

/* byte @off of the registered memory */
static u8 *kf_frmr_byte(struct kf_frmr *f, size_t off)
{
	return (u8 *)page_address(f->pages[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

static void kf_frmr_fill(struct kf_frmr *f, u8 seed)
{
	size_t i;

	for (i = 0; i < KF_LEN; i++)
		*kf_frmr_byte(f, i) = seed + i * 7;
}

static bool kf_frmr_holds(struct kf_frmr *f, u8 seed, size_t from,
			  size_t len)
{
	size_t i;

	for (i = from; i < from + len; i++)
		if (*kf_frmr_byte(f, i) != (u8)(seed + i * 7))
			return false;
	return true;
}

/* does the registered memory from @off hold @buf's @len bytes? */
static bool kf_frmr_equals(struct kf_frmr *f, size_t off, const u8 *buf,
			   size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != *kf_frmr_byte(f, off + i))
			return false;
	return true;
}

/* post one send WR on @e with @id, signaled; its completion */
static struct ib_wc kf_post(struct kf_end *e, struct ib_send_wr *wr, u64 id)
{
	const struct ib_send_wr *bad;
	struct ib_wc wc = { .status = -1 };
	int err;

	wr->wr_id = id;
	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(e->qp, wr, &bad);
	if (err) {
		wc.status = -2;
		return wc;
	}
	return kf_wait(e, id);
}

/* IB_WR_REG_MR of @f under a new key byte with @access, on @e's QP */
static struct ib_wc kf_reg(struct kf_end *e, struct kf_frmr *f, int access,
			   bool new_key)
{
	struct ib_reg_wr rwr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = f->mr,
		.access = access,
	};
	int n;

	n = ib_map_mr_sg(f->mr, f->sgt.sgl, f->nents, NULL, PAGE_SIZE);
	if (n != f->nents) {
		struct ib_wc wc = { .status = -3 };

		return wc;
	}
	if (new_key)
		ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	rwr.key = f->mr->rkey;
	return kf_post(e, &rwr.wr, 0x7e9);
}

static struct ib_wc kf_local_inv(struct kf_end *e, u32 key)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = key,
	};

	return kf_post(e, &wr, 0x1a7);
}

/* RDMA WRITE or READ of @len bytes between a's buffer and @key's iova */
static struct ib_wc kf_rdma(struct kf_end *a, enum ib_wr_opcode op, u64 iova,
			    u32 key, u32 len)
{
	struct ib_sge sge = {
		.addr = a->buf_dma,
		.length = len,
		.lkey = a->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = iova,
		.rkey = key,
	};

	return kf_post(a, &wr.wr, 0xda7a);
}

static int kf_post_recv(struct kf_end *e)
{
	struct ib_sge sge = {
		.addr = e->buf_dma,
		.length = 64,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 0x4ec, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(e->qp, &wr, &bad);
}

static struct ib_wc kf_send_inv(struct kf_end *a, u32 key)
{
	struct ib_sge sge = {
		.addr = a->buf_dma,
		.length = 16,
		.lkey = a->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_INV,
		.sg_list = &sge,
		.num_sge = 1,
		.ex.invalidate_rkey = key,
	};

	return kf_post(a, &wr, 0x5e1);
}

#define KF_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/* registration, then READ and WRITE through the key, byte for byte */
static void kf_check_data(struct kf_end *a, struct kf_end *b,
			  struct kf_frmr *f)
{
	const size_t off = 100, len = KF_LEN - 300;	/* spans 3 pages */
	struct ib_wc wc;
	size_t i;

	wc = kf_reg(b, f, KF_ACCESS, true);
	kf_result("reg_mr_completes", wc.status == IB_WC_SUCCESS &&
		  wc.opcode == IB_WC_REG_MR, "status/opcode",
		  wc.status * 1000L + wc.opcode);
	kf_result("reg_mr_sets_iova_length", f->mr->length == KF_LEN &&
		  f->mr->iova == sg_dma_address(f->sgt.sgl), "length",
		  f->mr->length);

	kf_frmr_fill(f, 0x31);
	memset(a->buf, 0, KF_LEN);
	wc = kf_rdma(a, IB_WR_RDMA_READ, f->mr->iova + off, f->mr->rkey, len);
	kf_result("read_through_fast_reg_key", wc.status == IB_WC_SUCCESS &&
		  kf_frmr_equals(f, off, a->buf, len), "status", wc.status);

	for (i = 0; i < len; i++)
		a->buf[i] = 0x52 + (off + i) * 7;
	kf_frmr_fill(f, 0x31);
	wc = kf_rdma(a, IB_WR_RDMA_WRITE, f->mr->iova + off, f->mr->rkey,
		     len);
	kf_result("write_through_fast_reg_key", wc.status == IB_WC_SUCCESS &&
		  kf_frmr_holds(f, 0x52, off, len) &&
		  kf_frmr_holds(f, 0x31, 0, off) &&
		  kf_frmr_holds(f, 0x31, off + len, KF_LEN - off - len),
		  "status", wc.status);

	wc = kf_rdma(a, IB_WR_RDMA_WRITE, f->mr->iova + KF_LEN - 8,
		     f->mr->rkey, 16);
	kf_result("write_past_registration_fails",
		  wc.status == IB_WC_REM_ACCESS_ERR, "status", wc.status);
}

/*
 * LOCAL_INV: the key dies at once, the memory is left alone.  A failed
 * work request takes its QP to the error state: each check that may fail
 * one starts on a new pair.
 */
static void kf_check_local_inv(struct kf_end *a, struct kf_end *b,
			       struct kf_frmr *f)
{
	struct ib_wc wc;
	u32 old;

	/* still VALID from kf_check_data() */
	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	wc = kf_reg(b, f, KF_ACCESS, false);
	kf_result("reg_of_valid_mr_fails", wc.status == IB_WC_LOC_QP_OP_ERR,
		  "status", wc.status);

	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	wc = kf_local_inv(b, f->mr->rkey ^ 0x80);
	kf_result("local_inv_wrong_key_fails",
		  wc.status == IB_WC_LOC_QP_OP_ERR, "status", wc.status);

	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	wc = kf_local_inv(b, f->mr->rkey);
	kf_result("local_inv_completes", wc.status == IB_WC_SUCCESS &&
		  wc.opcode == IB_WC_LOCAL_INV, "status/opcode",
		  wc.status * 1000L + wc.opcode);

	kf_frmr_fill(f, 0x31);
	memset(a->buf, 0xee, KF_LEN);
	wc = kf_rdma(a, IB_WR_RDMA_WRITE, f->mr->iova, f->mr->rkey, 512);
	kf_result("write_after_local_inv_fails",
		  wc.status == IB_WC_REM_ACCESS_ERR &&
		  kf_frmr_holds(f, 0x31, 0, KF_LEN), "status", wc.status);

	/* registered again under a new key: the old one stays dead */
	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	old = f->mr->rkey;
	wc = kf_reg(b, f, KF_ACCESS, true);
	kf_result("reg_after_inv_new_key", wc.status == IB_WC_SUCCESS &&
		  f->mr->rkey != old, "status", wc.status);
	wc = kf_rdma(a, IB_WR_RDMA_READ, f->mr->iova, old, 64);
	kf_result("stale_key_fails", wc.status == IB_WC_REM_ACCESS_ERR,
		  "status", wc.status);

	/* read-only registration: a WRITE through it fails */
	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	kf_local_inv(b, f->mr->rkey);
	wc = kf_reg(b, f, IB_ACCESS_REMOTE_READ, true);
	kf_result("reg_read_only", wc.status == IB_WC_SUCCESS, "status",
		  wc.status);
	wc = kf_rdma(a, IB_WR_RDMA_WRITE, f->mr->iova, f->mr->rkey, 64);
	kf_result("write_to_read_only_fails",
		  wc.status == IB_WC_REM_ACCESS_ERR &&
		  kf_frmr_holds(f, 0x31, 0, KF_LEN), "status", wc.status);
	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	kf_local_inv(b, f->mr->rkey);
}

/* SEND with Invalidate: the target's key dies with the message */
static void kf_check_send_inv(struct kf_end *a, struct kf_end *b,
			      struct kf_frmr *f)
{
	struct ib_wc wc, rwc;

	wc = kf_reg(b, f, KF_ACCESS, true);
	kf_result("reg_for_remote_inv", wc.status == IB_WC_SUCCESS, "status",
		  wc.status);
	kf_post_recv(b);
	wc = kf_send_inv(a, f->mr->rkey);
	rwc = kf_wait(b, 0x4ec);
	kf_result("send_with_inv_completes", wc.status == IB_WC_SUCCESS,
		  "status", wc.status);
	kf_result("recv_with_invalidate", rwc.status == IB_WC_SUCCESS &&
		  (rwc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		  rwc.ex.invalidate_rkey == f->mr->rkey, "status/flags",
		  rwc.status * 1000L + rwc.wc_flags);
	wc = kf_rdma(a, IB_WR_RDMA_READ, f->mr->iova, f->mr->rkey, 64);
	kf_result("read_after_remote_inv_fails",
		  wc.status == IB_WC_REM_ACCESS_ERR, "status", wc.status);

	/* an rkey that names nothing: the request fails on both ends */
	if (kf_pair(a, b))
		kf_result("reconnect", false, "kf_pair", 0);
	kf_post_recv(b);
	wc = kf_send_inv(a, f->mr->rkey ^ 0x80);
	rwc = kf_wait(b, 0x4ec);
	kf_result("send_with_inv_bad_key_fails",
		  wc.status == IB_WC_REM_INV_REQ_ERR, "status", wc.status);
	kf_result("recv_of_bad_inv_fails", rwc.status != IB_WC_SUCCESS &&
		  rwc.status != -1, "status", rwc.status);
}

/* the verbs refuse what the MR cannot be */
static void kf_check_verbs(struct kf_end *a, struct kf_end *b,
			   struct kf_frmr *f)
{
	struct ib_device_attr *attr = &b->dev->attrs;
	struct kf_frmr small = {};
	struct ib_pd *other;
	struct ib_mr *mr;
	struct ib_wc wc;
	int n;

	kf_result("caps_mem_mgt_extensions",
		  (attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
		  attr->max_fast_reg_page_list_len >= 256, "page list",
		  attr->max_fast_reg_page_list_len);

	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_SG_GAPS, 4);
	kf_result("alloc_mr_sg_gaps_unsupported",
		  IS_ERR(mr) && PTR_ERR(mr) == -EOPNOTSUPP, "ret",
		  IS_ERR(mr) ? PTR_ERR(mr) : 0);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG,
			 attr->max_fast_reg_page_list_len + 1);
	kf_result("alloc_mr_too_many_pages",
		  IS_ERR(mr) && PTR_ERR(mr) == -EINVAL, "ret",
		  IS_ERR(mr) ? PTR_ERR(mr) : 0);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);

	/* room for 2 pages, 3 to map: only what fits is mapped */
	small.mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(small.mr)) {
		kf_result("map_beyond_page_list", false, "alloc_mr",
			  PTR_ERR(small.mr));
	} else {
		n = ib_map_mr_sg(small.mr, f->sgt.sgl, f->nents, NULL,
				 PAGE_SIZE);
		kf_result("map_beyond_page_list", n == 2, "mapped", n);
		ib_dereg_mr(small.mr);
	}

	/* REG_MR of an MR of another PD */
	other = ib_alloc_pd(b->dev, 0);
	if (IS_ERR(other)) {
		kf_result("reg_other_pd_fails", false, "ib_alloc_pd",
			  PTR_ERR(other));
		return;
	}
	mr = ib_alloc_mr(other, IB_MR_TYPE_MEM_REG, KF_PAGES);
	if (IS_ERR(mr)) {
		kf_result("reg_other_pd_fails", false, "alloc_mr",
			  PTR_ERR(mr));
	} else {
		struct ib_reg_wr rwr = {
			.wr.opcode = IB_WR_REG_MR,
			.mr = mr,
			.key = mr->rkey,
			.access = KF_ACCESS,
		};

		ib_map_mr_sg(mr, f->sgt.sgl, f->nents, NULL, PAGE_SIZE);
		if (kf_pair(a, b))
			kf_result("reconnect", false, "kf_pair", 0);
		wc = kf_post(b, &rwr.wr, 0x07d);
		kf_result("reg_other_pd_fails",
			  wc.status == IB_WC_LOC_PROT_ERR, "status",
			  wc.status);
		ib_destroy_qp(b->qp);
		b->qp = NULL;
		ib_dereg_mr(mr);
	}
	ib_dealloc_pd(other);
}

static int __init eroce_kfrwr_init(void)
{
	struct kf_end a = {}, b = {};
	struct kf_frmr f = {};
	int err;

	err = kf_end_init(&a, dev_a, gid_a);
	if (!err)
		err = kf_end_init(&b, dev_b, gid_b);
	if (!err)
		err = kf_frmr_init(&f, &b);
	if (!err)
		err = kf_pair(&a, &b);
	kf_result("setup", !err, "setup", err);
	if (!err) {
		kf_check_data(&a, &b, &f);
		kf_check_local_inv(&a, &b, &f);
		kf_check_send_inv(&a, &b, &f);
		kf_check_verbs(&a, &b, &f);
	}
	/* QPs first: a REG_MR still queued names the MR */
	if (a.qp)
		ib_destroy_qp(a.qp);
	if (b.qp)
		ib_destroy_qp(b.qp);
	a.qp = NULL;
	b.qp = NULL;
	kf_frmr_fini(&f, &b);
	kf_end_fini(&b);
	kf_end_fini(&a);
	pr_info("eroce_kfrwr: %d failed\n", kf_failures);
	return kf_failures ? -EIO : 0;
}

static void __exit eroce_kfrwr_exit(void)
{
}

module_init(eroce_kfrwr_init);
module_exit(eroce_kfrwr_exit);
MODULE_DESCRIPTION("eroce test: fast registration and invalidation");
MODULE_LICENSE("Dual BSD/GPL");
