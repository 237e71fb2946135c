// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce rdma-core provider: registration, device matching, the user
 * context, and the verbs that are plain kernel commands (device and port
 * queries, PD, MR, MW, AH, multicast), plus mapping of the shared rings.
 *
 * Locking: nothing here keeps mutable shared state.  Device and context
 * objects are immutable after creation; PD/MR/MW/AH are owned by the caller,
 * and libibverbs serialises their destruction against their use.  The
 * fast-path verbs live in eroce_cq.c, eroce_qp.c and eroce_srq.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "eroce.h"

static const struct verbs_match_ent eroce_match_table[] = {
	VERBS_DRIVER_ID(EROCE_DRIVER_ID),
	VERBS_NAME_MATCH("eroce", NULL),
	{},
};

/*
 * Map a ring described by a create response.  The geometry comes from the
 * kernel; check it before trusting it, so a bad response fails the create
 * instead of letting us write outside the mapping.
 */
/* check the kernel's description of a ring and map it: 0 or an errno */
static int eroce_mmap_ring(struct ibv_context *ibctx,
			   const struct eroce_ring_info *info,
			   size_t min_slot_size, void **map)
{
	uint64_t need;

	if (!info->num_slots || (info->num_slots & (info->num_slots - 1)) ||
	    !info->slot_size || (info->slot_size & (info->slot_size - 1)) ||
	    info->slot_size < min_slot_size)
		return EINVAL;
	need = EROCE_RING_DATA_OFFSET +
	       (uint64_t)info->num_slots * info->slot_size;
	if (need > info->mmap_size)
		return EINVAL;

	*map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ibctx->cmd_fd, info->mmap_offset);
	return *map == MAP_FAILED ? errno : 0;
}

/* point @r at @map, the ring @info describes; the lock is not touched */
static void eroce_ring_set_map(struct eroce_ring *r, void *map,
			       const struct eroce_ring_info *info,
			       bool consumer)
{
	r->map = map;
	r->ctrl = map;
	r->map_size = info->mmap_size;
	r->num_slots = info->num_slots;
	r->slot_size = info->slot_size;
	/*
	 * Our end's index is ours alone; the kernel may have started it
	 * anywhere, so pick it up once.
	 */
	r->head = atomic_load_explicit(consumer ?
				       ring_word(&r->ctrl->consumer) :
				       ring_word(&r->ctrl->producer),
				       memory_order_relaxed);
}

int eroce_map_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		   const struct eroce_ring_info *info, size_t min_slot_size,
		   bool consumer)
{
	void *map;
	int ret;

	ret = eroce_mmap_ring(ibctx, info, min_slot_size, &map);
	if (ret)
		return ret;
	eroce_ring_set_map(r, map, info, consumer);
	pthread_spin_init(&r->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

/*
 * The kernel replaced @r's buffer (CQ resize): map the new one, unmap the
 * old.  The caller holds r->lock.  On error @r still maps the old buffer.
 */
int eroce_remap_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		     const struct eroce_ring_info *info, size_t min_slot_size,
		     bool consumer)
{
	void *old = r->map, *map;
	size_t old_size = r->map_size;
	int ret;

	ret = eroce_mmap_ring(ibctx, info, min_slot_size, &map);
	if (ret)
		return ret;
	eroce_ring_set_map(r, map, info, consumer);
	munmap(old, old_size);
	return 0;
}

void eroce_unmap_ring(struct eroce_ring *r)
{
	if (!r->map)
		return;
	munmap(r->map, r->map_size);
	pthread_spin_destroy(&r->lock);
	r->map = NULL;
	r->ctrl = NULL;
}

static int eroce_query_device(struct ibv_context *ibctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr,
			      size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int eroce_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *eroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct eroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

static int eroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;
	free(container_of(ibpd, struct eroce_pd, ibv_pd));
	return 0;
}

static struct ibv_mr *eroce_reg_mr(struct ibv_pd *ibpd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	if (!length) {
		errno = EINVAL;
		return NULL;
	}

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel registers the MR anew and swaps it in: new lkey and rkey,
 * which ibv_cmd_rereg_mr() stores in @vmr.  An error leaves the MR as it
 * was; errno says why (ibv_rereg_mr() returns IBV_REREG_MR_ERR_CMD).
 */
static int eroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

static int eroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

static struct ibv_mw *eroce_alloc_mw(struct ibv_pd *ibpd,
				     enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int eroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

static struct ibv_ah *eroce_create_ah(struct ibv_pd *ibpd,
				      struct ibv_ah_attr *attr)
{
	struct eroce_create_ah_resp_full resp = {};
	struct eroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

static int eroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;
	free(to_eah(ibah));
	return 0;
}

static void eroce_free_context(struct ibv_context *ibctx)
{
	struct eroce_context *ctx = to_ectx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops eroce_ctx_ops = {
	.alloc_mw = eroce_alloc_mw,
	.alloc_pd = eroce_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = eroce_bind_mw,
	.create_ah = eroce_create_ah,
	.create_cq = eroce_create_cq,
	.create_cq_ex = eroce_create_cq_ex,
	.create_qp = eroce_create_qp,
	.create_qp_ex = eroce_create_qp_ex,
	.create_srq = eroce_create_srq,
	.create_srq_ex = eroce_create_srq_ex,
	.dealloc_mw = eroce_dealloc_mw,
	.dealloc_pd = eroce_dealloc_pd,
	.dereg_mr = eroce_dereg_mr,
	.destroy_ah = eroce_destroy_ah,
	.destroy_cq = eroce_destroy_cq,
	.destroy_qp = eroce_destroy_qp,
	.destroy_srq = eroce_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = eroce_free_context,
	.modify_cq = eroce_modify_cq,
	.modify_qp = eroce_modify_qp,
	.modify_qp_rate_limit = eroce_modify_qp_rate_limit,
	.rereg_mr = eroce_rereg_mr,
	.resize_cq = eroce_resize_cq,
	.modify_srq = eroce_modify_srq,
	.poll_cq = eroce_poll_cq,
	.post_recv = eroce_post_recv,
	.post_send = eroce_post_send,
	.post_srq_recv = eroce_post_srq_recv,
	.query_device_ex = eroce_query_device,
	.query_port = eroce_query_port,
	.query_qp = eroce_query_qp,
	.query_srq = eroce_query_srq,
	.reg_mr = eroce_reg_mr,
	.req_notify_cq = eroce_req_notify_cq,
};

static struct verbs_context *eroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct eroce_get_context_resp resp = {};
	struct ibv_get_context cmd;
	struct eroce_context *ctx;
	int ret;

	(void)private_data;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   EROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err;
	}
	if (resp.drv.abi_version != EROCE_ABI_VERSION) {
		verbs_err(&ctx->ibv_ctx,
			  "kernel speaks eroce ABI %u, provider %u\n",
			  resp.drv.abi_version, EROCE_ABI_VERSION);
		errno = EPROTO;
		goto err;
	}
	ctx->max_inline_data = resp.drv.max_inline_data;

	verbs_set_ops(&ctx->ibv_ctx, &eroce_ctx_ops);
	return &ctx->ibv_ctx;

err:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static struct verbs_device *eroce_alloc_device(struct verbs_sysfs_dev *sdev)
{
	struct eroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->abi_version = sdev->abi_ver;
	return &dev->ibv_dev;
}

static void eroce_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct eroce_device, ibv_dev));
}

static const struct verbs_device_ops eroce_dev_ops = {
	.name = "eroce",
	.match_min_abi_version = EROCE_ABI_VERSION,
	.match_max_abi_version = EROCE_ABI_VERSION,
	.match_table = eroce_match_table,
	.alloc_device = eroce_alloc_device,
	.uninit_device = eroce_uninit_device,
	.alloc_context = eroce_alloc_context,
};
PROVIDER_DRIVER(eroce, eroce_dev_ops);
