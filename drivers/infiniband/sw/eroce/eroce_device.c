// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_device.c - one RDMA device on one Ethernet netdev.
 *
 * Owns the ib_device life cycle (allocation, registration, dealloc_driver),
 * the device-level verbs (query_device, query_port, port immutables, link
 * layer, P_Key table) and the port state and active MTU that follow the
 * netdev.  The GID table is filled by ib_core's roce_gid_mgmt from the
 * netdev given to ib_device_set_netdev() and the VLAN devices on top of it.
 *
 * Context: process context (rdma netlink, netdev notifier under RTNL,
 * ib_core callbacks).  Locks: edev->port_lock (spinlock) guards port_state
 * and active_mtu.
 */
#include <linux/netdevice.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "eroce.h"
#include "eroce_xmit.h"

/*
 * The largest RoCEv2 header stack around a path-MTU payload: IPv6 (40),
 * UDP (8), BTH (12), RETH (16), ImmDt (4), ICRC (4).
 */
#define EROCE_MAX_HDR_OVERHEAD	84

enum ib_mtu eroce_mtu_from_netdev_mtu(unsigned int mtu)
{
	unsigned int payload = mtu > EROCE_MAX_HDR_OVERHEAD ?
			       mtu - EROCE_MAX_HDR_OVERHEAD : 0;

	if (payload >= 4096)
		return IB_MTU_4096;
	if (payload >= 2048)
		return IB_MTU_2048;
	if (payload >= 1024)
		return IB_MTU_1024;
	if (payload >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

static enum ib_port_state eroce_netdev_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static int eroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = EROCE_FW_VER;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = EROCE_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = EROCE_VENDOR_ID;
	attr->vendor_part_id = EROCE_VENDOR_PART_ID;
	attr->hw_ver = EROCE_HW_VER;
	attr->max_qp = EROCE_MAX_QP;
	attr->max_qp_wr = EROCE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
				 IB_DEVICE_BAD_QKEY_CNTR |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = EROCE_MAX_SGE;
	attr->max_recv_sge = EROCE_MAX_SGE;
	attr->max_sge_rd = EROCE_MAX_SGE;
	attr->max_cq = EROCE_MAX_CQ;
	attr->max_cqe = EROCE_MAX_CQE;
	attr->max_mr = EROCE_MAX_MR;
	attr->max_mw = EROCE_MAX_MW;
	attr->max_fast_reg_page_list_len = EROCE_MAX_FAST_REG_PAGES;
	attr->max_pd = EROCE_MAX_PD;
	attr->max_qp_rd_atom = EROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = EROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = EROCE_MAX_RD_ATOMIC * EROCE_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = EROCE_MAX_AH;
	attr->max_srq = EROCE_MAX_SRQ;
	attr->max_srq_wr = EROCE_MAX_SRQ_WR;
	attr->max_srq_sge = EROCE_MAX_SRQ_SGE;
	attr->max_pkeys = EROCE_MAX_PKEYS;
	attr->max_mcast_grp = EROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = EROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = EROCE_MAX_TOTAL_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int eroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct eroce_dev *edev = to_eroce_dev(ibdev);
	struct net_device *ndev;
	unsigned long flags;
	int err;

	/* ib_core zeroes *attr before calling */
	spin_lock_irqsave(&edev->port_lock, flags);
	attr->state = edev->port_state;
	attr->active_mtu = edev->active_mtu;
	spin_unlock_irqrestore(&edev->port_lock, flags);

	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = EROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = EROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = EROCE_MAX_PKEYS;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	err = ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			       &attr->active_width);

	if (attr->state == IB_PORT_ACTIVE) {
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
		return err;
	}
	ndev = eroce_get_netdev(ibdev, port_num);
	if (ndev && (dev_get_flags(ndev) & IFF_UP))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	dev_put(ndev);
	return err;
}

static int eroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	err = ib_query_port(ibdev, port_num, &attr);
	if (err)
		return err;

	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer eroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int eroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	if (index >= EROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = EROCE_DEFAULT_PKEY;
	return 0;
}

static int eroce_modify_port(struct ib_device *ibdev, u32 port_num,
			     int mask, struct ib_port_modify *props)
{
	/* no port capability can be changed on a soft RoCE port */
	if (mask & ~IB_PORT_SHUTDOWN)
		return -EOPNOTSUPP;
	return 0;
}

static void eroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u64 fw = EROCE_FW_VER;

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%llu.%llu.%llu", fw >> 32,
		 (fw >> 16) & 0xffff, fw & 0xffff);
}

/* ib_core calls this once the last reference to the device is gone */
static void eroce_dealloc_driver(struct ib_device *ibdev)
{
	struct eroce_dev *edev = to_eroce_dev(ibdev);

	eroce_tuning_sysfs_del(edev);
	cancel_work_sync(&edev->lo_work);
	eroce_xmit_loopback_purge(edev);
	eroce_mcast_fini(&edev->mcast);
	eroce_res_fini(&edev->res);
	eroce_stats_fini(edev);
	if (edev->net)
		eroce_net_put(edev->net);
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct ib_device *ibdev = rdma_device_to_ibdev(device);
	struct net_device *ndev = eroce_get_netdev(ibdev, 1);
	ssize_t len;

	if (!ndev)
		return -ENODEV;
	len = sysfs_emit(buf, "%s\n", netdev_name(ndev));
	dev_put(ndev);
	return len;
}
static DEVICE_ATTR_RO(parent);

static struct attribute *eroce_dev_attrs[] = {
	&dev_attr_parent.attr,
	NULL,
};

static const struct attribute_group eroce_dev_attr_group = {
	.attrs = eroce_dev_attrs,
};

static const struct ib_device_ops eroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = (enum rdma_driver_id)EROCE_DRIVER_ID,
	.uverbs_abi_ver = EROCE_ABI_VERSION,

	.alloc_hw_port_stats = eroce_alloc_hw_port_stats,
	.dealloc_driver = eroce_dealloc_driver,
	.device_group = &eroce_dev_attr_group,
	.get_dev_fw_str = eroce_get_dev_fw_str,
	.get_hw_stats = eroce_get_hw_stats,
	.get_link_layer = eroce_get_link_layer,
	.get_netdev = eroce_get_netdev,
	.get_port_immutable = eroce_get_port_immutable,
	.modify_port = eroce_modify_port,
	.query_device = eroce_query_device,
	.query_pkey = eroce_query_pkey,
	.query_port = eroce_query_port,
};

static void eroce_dev_dispatch_port_event(struct eroce_dev *edev,
					  enum ib_event_type type)
{
	struct ib_event event = {
		.device = &edev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&event);
}

/**
 * eroce_dev_port_event() - follow the netdev's operational state
 * @edev: the device
 *
 * Context: netdev notifier (RTNL held); takes edev->port_lock.
 */
void eroce_dev_port_event(struct eroce_dev *edev)
{
	enum ib_port_state state = eroce_netdev_port_state(edev->ndev);
	enum ib_port_state old;
	unsigned long flags;

	spin_lock_irqsave(&edev->port_lock, flags);
	old = edev->port_state;
	edev->port_state = state;
	spin_unlock_irqrestore(&edev->port_lock, flags);

	if (old == state)
		return;
	dev_info(&edev->ibdev.dev, "port %s\n",
		 state == IB_PORT_ACTIVE ? "active" : "down");
	eroce_dev_dispatch_port_event(edev, state == IB_PORT_ACTIVE ?
				      IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
}

/**
 * eroce_dev_mtu_changed() - recompute the active MTU from the netdev MTU
 * @edev: the device
 *
 * Existing QPs keep their path MTU; new ones see the new active MTU.
 * Context: netdev notifier (RTNL held); takes edev->port_lock.
 */
void eroce_dev_mtu_changed(struct eroce_dev *edev)
{
	enum ib_mtu mtu = eroce_mtu_from_netdev_mtu(READ_ONCE(edev->ndev->mtu));
	unsigned long flags;

	spin_lock_irqsave(&edev->port_lock, flags);
	edev->active_mtu = mtu;
	spin_unlock_irqrestore(&edev->port_lock, flags);
}

static void eroce_dev_init_attrs(struct eroce_dev *edev,
				 struct net_device *ndev)
{
	struct ib_device *ibdev = &edev->ibdev;

	edev->ndev = ndev;
	spin_lock_init(&edev->port_lock);
	spin_lock_init(&edev->pace_lock);
	edev->port_state = eroce_netdev_port_state(ndev);
	edev->active_mtu = eroce_mtu_from_netdev_mtu(ndev->mtu);

	strscpy(ibdev->node_desc, "eroce", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	if (ndev->addr_len == ETH_ALEN)
		addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);

	/*
	 * Userspace posts receives and polls completions in the shared
	 * rings; it enters the kernel only for the send doorbell and for
	 * arming a CQ the slow way.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
}

static bool eroce_netdev_supported(struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER || ndev->type == ARPHRD_LOOPBACK;
}

/**
 * eroce_dev_add() - create and register an eroce device on a netdev
 * @name: the RDMA device name (from `rdma link add NAME`)
 * @ndev: the parent netdev; the caller holds a reference for the call
 *
 * Context: process context, called with eroce_link_lock held.
 * Return: 0 or a negative errno; nothing is left behind on error.
 */
int eroce_dev_add(const char *name, struct net_device *ndev)
{
	struct eroce_dev *edev;
	int err;

	if (!eroce_netdev_supported(ndev)) {
		pr_err("eroce: %s is not an Ethernet device\n",
		       netdev_name(ndev));
		return -EINVAL;
	}

	edev = ib_alloc_device(eroce_dev, ibdev);
	if (!edev)
		return -ENOMEM;

	eroce_dev_init_attrs(edev, ndev);
	ib_set_device_ops(&edev->ibdev, &eroce_dev_ops);
	ib_set_device_ops(&edev->ibdev, &eroce_verbs_ops);
	eroce_res_init(&edev->res);
	eroce_mcast_init(&edev->mcast);
	eroce_tuning_init(&edev->tuning);
	skb_queue_head_init(&edev->lo_queue);
	INIT_WORK(&edev->lo_work, eroce_xmit_loopback_work);

	err = eroce_stats_init(edev);
	if (err)
		goto err_dealloc_device;

	edev->net = eroce_net_get(dev_net(ndev));
	if (IS_ERR(edev->net)) {
		err = PTR_ERR(edev->net);
		edev->net = NULL;
		goto err_dealloc_device;
	}

	err = ib_device_set_netdev(&edev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc_device;

	err = ib_register_device(&edev->ibdev, name, NULL);
	if (err) {
		pr_err("eroce: cannot register %s on %s: %d\n", name,
		       netdev_name(ndev), err);
		goto err_dealloc_device;
	}

	err = eroce_tuning_sysfs_add(edev);
	if (err)
		dev_warn(&edev->ibdev.dev, "no tuning/ directory: %d\n", err);

	dev_info(&edev->ibdev.dev, "RoCEv2 device on %s, port %s\n",
		 netdev_name(ndev),
		 edev->port_state == IB_PORT_ACTIVE ? "active" : "down");
	return 0;

err_dealloc_device:
	/* runs eroce_dealloc_driver(), which undoes the steps above */
	ib_dealloc_device(&edev->ibdev);
	return err;
}
