// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: address handles and the address vector (struct eroce_av) that AHs
 * and connected QPs share.
 *
 * create_ah/destroy_ah run in process context or, for kernel AHs created
 * without RDMA_CREATE_AH_SLEEPABLE, in atomic context; eroce_ah_get/put run
 * in any context.  Locks: the xa_lock of eroce_res.ah_xa (interrupts off)
 * around numbering, removal and lookup.
 */
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "eroce.h"

/*
 * Build an address vector from a RoCEv2 ah_attr.  On success the vector
 * holds a reference on the source GID attribute: eroce_av_release() drops
 * it.  Does not sleep.
 */
int eroce_av_from_attr(struct eroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	enum rdma_network_type net_type;
	bool v4mapped;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(attr) != 1 ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_sl(attr) > 15)
		return -EINVAL;

	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	net_type = rdma_gid_attr_network_type(sgid_attr);
	v4mapped = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	if (net_type == RDMA_NETWORK_IPV4 ? !v4mapped :
	    net_type != RDMA_NETWORK_IPV6 || v4mapped)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	rdma_hold_gid_attr(sgid_attr);
	av->sgid_attr = sgid_attr;
	av->dgid = grh->dgid;
	ether_addr_copy(av->dmac, attr->roce.dmac);
	av->sgid_index = grh->sgid_index;
	av->sl = rdma_ah_get_sl(attr);
	av->traffic_class = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	/*
	 * The flow label is 20 bits; the bits above are ignored, as by
	 * other RoCE devices: UCX, for one, passes ~0 to ask for a UDP
	 * source port of the flow label's choosing.
	 */
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->static_rate = rdma_ah_get_static_rate(attr);
	av->network_type = net_type;
	return 0;
}

/* fill @attr from @av; the caller (ib_core) supplies sgid_attr */
void eroce_av_to_attr(const struct eroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_static_rate(attr, av->static_rate);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	ether_addr_copy(attr->roce.dmac, av->dmac);
}

void eroce_av_release(struct eroce_av *av)
{
	if (av->sgid_attr)
		rdma_put_gid_attr(av->sgid_attr);
	av->sgid_attr = NULL;
}

static void eroce_ah_unpublish(struct eroce_res *res, struct eroce_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&res->ah_xa, flags);
	__xa_erase(&res->ah_xa, ah->num);
	xa_unlock_irqrestore(&res->ah_xa, flags);
}

int eroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibah->device)->res;
	bool sleepable = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE;
	struct eroce_ah *ah = to_eroce_ah(ibah);
	struct eroce_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	err = eroce_res_count_get(&res->num_ah, EROCE_MAX_AH);
	if (err)
		return err;

	err = eroce_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		goto err_uncount;

	eroce_obj_init(&ah->obj);
	xa_lock_irqsave(&res->ah_xa, flags);
	err = __xa_alloc_cyclic(&res->ah_xa, &ah->num, ah,
				XA_LIMIT(1, EROCE_AH_NUM_MAX), &res->next_ah,
				sleepable ? GFP_KERNEL : GFP_ATOMIC);
	xa_unlock_irqrestore(&res->ah_xa, flags);
	if (err < 0)
		goto err_release_av;

	if (udata && udata->outlen) {
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_unpublish;
	}
	return 0;

err_unpublish:
	eroce_ah_unpublish(res, ah);
	eroce_obj_drain(&ah->obj, sleepable);
err_release_av:
	eroce_av_release(&ah->av);
err_uncount:
	atomic_dec(&res->num_ah);
	return err;
}

int eroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	eroce_av_to_attr(&to_eroce_ah(ibah)->av, attr);
	return 0;
}

int eroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct eroce_res *res = &to_eroce_dev(ibah->device)->res;
	struct eroce_ah *ah = to_eroce_ah(ibah);

	eroce_ah_unpublish(res, ah);
	eroce_obj_drain(&ah->obj, flags & RDMA_DESTROY_AH_SLEEPABLE);
	eroce_av_release(&ah->av);
	atomic_dec(&res->num_ah);
	return 0;
}

/*
 * Find AH @num with a reference, or NULL.  The number comes from a WQE, so
 * the caller must check that the AH's PD is its QP's PD.  Any context.
 */
struct eroce_ah *eroce_ah_get(struct eroce_res *res, u32 num)
{
	struct eroce_ah *ah;
	unsigned long flags;

	xa_lock_irqsave(&res->ah_xa, flags);
	ah = xa_load(&res->ah_xa, num);
	if (ah && !eroce_obj_get(&ah->obj))
		ah = NULL;
	xa_unlock_irqrestore(&res->ah_xa, flags);
	return ah;
}

void eroce_ah_put(struct eroce_ah *ah)
{
	eroce_obj_put(&ah->obj);
}
