// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mcast.c - UD multicast: the groups UD QPs are attached to, the
 * netdev's IGMP/MLD membership of each group, and the walk that gives a
 * received multicast packet to every QP attached to its group.
 *
 * A group (struct eroce_mcg) exists while at least one QP is attached to
 * it.  Its first attachment joins the group's IP multicast address on the
 * device's netdev and on each VLAN device on it (ip_mc_inc_group() or
 * ipv6_dev_mc_inc()), as a RoCE NIC takes a group's packets in any of the
 * port's VLANs: that programs the multicast MAC filter, sends the IGMP or
 * MLD report a snooping switch needs, and lets the IP layer of a VLAN
 * device pass the group's packets up.  Its last detachment leaves the
 * netdevs it joined (struct eroce_mcg_dev).  rdma_cm joins IPv4 groups on
 * its own as well: the memberships are counted, so both may.
 *
 * Contexts: attach, detach and eroce_mcast_detach_qp() run in process
 * context and sleep; eroce_mcast_rcv() runs in softirq.  Locks:
 * eroce_mcast.lock (a mutex) around every change of the groups, with RTNL
 * taken inside it to join and leave (so a VLAN device made after a
 * group's first attachment is not joined: the netdev notifier, under
 * RTNL, cannot take eroce_mcast.lock); the receive walk reads the lists
 * under RCU, and groups and attachments are freed after a grace period.
 * An attachment holds no reference on its QP, but its handle (struct
 * eroce_qp_handle): destroy_qp detaches the QP and frees the handle a
 * grace period later, so a walk that still sees the attachment finds the
 * handle and takes a reference only while the QP exists.
 */
#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "eroce.h"

/* a multicast group with at least one QP attached */
struct eroce_mcg {
	struct list_head node;		/* in eroce_mcast.groups */
	union ib_gid mgid;
	struct list_head qps;		/* of struct eroce_mca */
	unsigned int num_qps;		/* under eroce_mcast.lock */
	struct list_head devs;		/* of struct eroce_mcg_dev, likewise */
	struct rcu_head rcu;
};

/* a netdev a group was joined on: the device's own or a VLAN device on it */
struct eroce_mcg_dev {
	struct list_head node;		/* in eroce_mcg.devs */
	int ifindex;
};

/* one QP attached to one group */
struct eroce_mca {
	struct list_head node;		/* in eroce_mcg.qps */
	struct eroce_qp *qp;		/* under eroce_mcast.lock */
	struct eroce_qp_handle *handle;	/* for the walk, under RCU */
	struct rcu_head rcu;
};

void eroce_mcast_init(struct eroce_mcast *mc)
{
	mutex_init(&mc->lock);
	INIT_LIST_HEAD(&mc->groups);
	mc->num_groups = 0;
	mc->num_attached = 0;
}

/* every QP is destroyed before the device, and detached on the way */
void eroce_mcast_fini(struct eroce_mcast *mc)
{
	WARN_ON(!list_empty(&mc->groups));
	mutex_destroy(&mc->lock);
}

static struct eroce_mcg *eroce_mcg_find(struct eroce_mcast *mc,
					const union ib_gid *mgid)
{
	struct eroce_mcg *grp;

	lockdep_assert_held(&mc->lock);
	list_for_each_entry(grp, &mc->groups, node)
		if (!memcmp(&grp->mgid, mgid, sizeof(*mgid)))
			return grp;
	return NULL;
}

static struct eroce_mca *eroce_mca_find(struct eroce_mcg *grp,
					struct eroce_qp *qp)
{
	struct eroce_mca *mca;

	list_for_each_entry(mca, &grp->qps, node)
		if (mca->qp == qp)
			return mca;
	return NULL;
}

/* join (@join) or leave IP multicast address @addr on @ndev */
static int eroce_mcast_ip_membership(struct net_device *ndev,
				     const struct in6_addr *addr, bool join)
{
	struct in_device *in_dev;

	ASSERT_RTNL();
	if (ipv6_addr_v4mapped(addr)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			return -ENODEV;
		/* 6.1's ip_mc_inc_group() reports no error of its own */
		if (join)
			ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
		return 0;
	}
	if (!IS_ENABLED(CONFIG_IPV6))
		return -EAFNOSUPPORT;
	return join ? ipv6_dev_mc_inc(ndev, addr) :
		      ipv6_dev_mc_dec(ndev, addr);
}

/* join @grp's address on @ndev and remember that it did */
static int eroce_mcg_join_dev(struct net_device *ndev, struct eroce_mcg *grp)
{
	struct eroce_mcg_dev *md;
	int err;

	md = kzalloc(sizeof(*md), GFP_KERNEL);
	if (!md)
		return -ENOMEM;
	err = eroce_mcast_ip_membership(ndev,
					(const struct in6_addr *)grp->mgid.raw,
					true);
	if (err) {
		kfree(md);
		return err;
	}
	md->ifindex = ndev->ifindex;
	list_add_tail(&md->node, &grp->devs);
	return 0;
}

/* vlan_for_each() callback: a VLAN device without IPv4 or IPv6 is skipped */
static int eroce_mcg_join_vlan(struct net_device *vlan_dev, int vid, void *grp)
{
	int err = eroce_mcg_join_dev(vlan_dev, grp);

	return err == -ENOMEM ? err : 0;
}

/* leave @grp on the netdevs it was joined on that still exist */
static void eroce_mcg_leave(struct eroce_dev *edev, struct eroce_mcg *grp)
{
	const struct in6_addr *addr = (const struct in6_addr *)grp->mgid.raw;
	struct net_device *ndev = eroce_get_netdev(&edev->ibdev, 1);
	struct eroce_mcg_dev *md, *next;
	struct net_device *dev;

	rtnl_lock();
	list_for_each_entry_safe(md, next, &grp->devs, node) {
		/* gone with the netdev, or a new netdev of the same index? */
		dev = ndev ? __dev_get_by_index(dev_net(ndev), md->ifindex) :
			     NULL;
		if (dev && (dev == ndev || (is_vlan_dev(dev) &&
					    vlan_dev_real_dev(dev) == ndev)))
			eroce_mcast_ip_membership(dev, addr, false);
		list_del(&md->node);
		kfree(md);
	}
	rtnl_unlock();
	dev_put(ndev);
}

/*
 * join @grp on the device's netdev and on the VLAN devices on it;
 * -ENODEV once the netdev is gone
 */
static int eroce_mcg_join(struct eroce_dev *edev, struct eroce_mcg *grp)
{
	struct net_device *ndev = eroce_get_netdev(&edev->ibdev, 1);
	int err;

	if (!ndev)
		return -ENODEV;
	rtnl_lock();
	err = eroce_mcg_join_dev(ndev, grp);
	if (!err)
		err = vlan_for_each(ndev, eroce_mcg_join_vlan, grp);
	rtnl_unlock();
	dev_put(ndev);
	if (err)
		eroce_mcg_leave(edev, grp);
	return err;
}

static void eroce_mcg_put_member(struct eroce_dev *edev, struct eroce_mcg *grp,
				 struct eroce_mca *mca)
{
	struct eroce_mcast *mc = &edev->mcast;

	lockdep_assert_held(&mc->lock);
	list_del_rcu(&mca->node);
	kfree_rcu(mca, rcu);
	mc->num_attached--;
	if (--grp->num_qps)
		return;

	list_del_rcu(&grp->node);
	mc->num_groups--;
	eroce_mcg_leave(edev, grp);
	kfree_rcu(grp, rcu);
}

/**
 * eroce_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP; ib_core has checked that it is UD and @gid multicast
 * @gid: the group's GID, an IPv4-mapped or IPv6 multicast address
 * @lid: unused on RoCE
 *
 * Attaching a QP twice to one group is no error and attaches it once.
 * Return: 0, -EINVAL for an address of the other IP family than the
 * device can reach (an IPv4-mapped GID of a non-multicast IPv4 address),
 * -ENOMEM when a limit of the device is reached or memory is short, or
 * the error of joining the group on the netdev.
 */
int eroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct eroce_dev *edev = to_eroce_dev(ibqp->device);
	const struct in6_addr *addr = (const struct in6_addr *)gid->raw;
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	struct eroce_mcast *mc = &edev->mcast;
	struct eroce_mcg *grp, *new_grp = NULL;
	struct eroce_mca *mca;
	int err;

	/* ib_core checks rdma_is_multicast_addr(); stay safe without it */
	if (ibqp->qp_type != IB_QPT_UD ||
	    (ipv6_addr_v4mapped(addr) ? !ipv4_is_multicast(addr->s6_addr32[3]) :
					!ipv6_addr_is_multicast(addr)))
		return -EINVAL;

	mca = kzalloc(sizeof(*mca), GFP_KERNEL);
	if (!mca)
		return -ENOMEM;
	mca->qp = qp;
	mca->handle = qp->handle;

	mutex_lock(&mc->lock);
	grp = eroce_mcg_find(mc, gid);
	if (grp && eroce_mca_find(grp, qp)) {
		err = 0;
		goto out_free_mca;
	}
	if (mc->num_attached >= EROCE_MAX_TOTAL_MCAST_QP_ATTACH ||
	    (grp && grp->num_qps >= EROCE_MAX_MCAST_QP_ATTACH) ||
	    (!grp && mc->num_groups >= EROCE_MAX_MCAST_GRP)) {
		err = -ENOMEM;
		goto out_free_mca;
	}

	if (!grp) {
		new_grp = kzalloc(sizeof(*new_grp), GFP_KERNEL);
		if (!new_grp) {
			err = -ENOMEM;
			goto out_free_mca;
		}
		new_grp->mgid = *gid;
		INIT_LIST_HEAD(&new_grp->qps);
		INIT_LIST_HEAD(&new_grp->devs);
		err = eroce_mcg_join(edev, new_grp);
		if (err)
			goto out_free_grp;
		grp = new_grp;
		list_add_tail_rcu(&grp->node, &mc->groups);
		mc->num_groups++;
	}
	list_add_tail_rcu(&mca->node, &grp->qps);
	grp->num_qps++;
	mc->num_attached++;
	mutex_unlock(&mc->lock);
	return 0;

out_free_grp:
	kfree(new_grp);
out_free_mca:
	mutex_unlock(&mc->lock);
	kfree(mca);
	return err;
}

/**
 * eroce_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group's GID
 * @lid: unused on RoCE
 *
 * Return: 0, or -EINVAL when the QP is not attached to the group.
 */
int eroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct eroce_dev *edev = to_eroce_dev(ibqp->device);
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	struct eroce_mcast *mc = &edev->mcast;
	struct eroce_mcg *grp;
	struct eroce_mca *mca = NULL;

	mutex_lock(&mc->lock);
	grp = eroce_mcg_find(mc, gid);
	if (grp)
		mca = eroce_mca_find(grp, qp);
	if (mca)
		eroce_mcg_put_member(edev, grp, mca);
	mutex_unlock(&mc->lock);
	return mca ? 0 : -EINVAL;
}

/**
 * eroce_mcast_detach_qp() - detach a QP that is being destroyed from all
 * its groups
 * @qp: the QP
 *
 * uverbs detaches a user QP itself; a kernel consumer may not have.
 */
void eroce_mcast_detach_qp(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_mcast *mc = &edev->mcast;
	struct eroce_mcg *grp, *next;
	struct eroce_mca *mca;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&mc->lock);
	list_for_each_entry_safe(grp, next, &mc->groups, node) {
		mca = eroce_mca_find(grp, qp);
		if (mca)
			eroce_mcg_put_member(edev, grp, mca);
	}
	mutex_unlock(&mc->lock);
}

/**
 * eroce_mcast_rcv() - give a multicast packet to the QPs of its group
 * @edev: the receiving device
 * @pkt: the validated packet (its BTH names the multicast QPN)
 * @sgid: the packet's source address
 * @mgid: the packet's destination, a multicast GID
 *
 * Each attached QP takes the packet through eroce_recv_deliver(), with
 * that QP's own checks (state, P_Key, Q_Key, a receive WQE).
 * Context: softirq.
 * Return: false when no QP of this device is attached to @mgid.
 */
bool eroce_mcast_rcv(struct eroce_dev *edev, struct eroce_rx *pkt,
		     const union ib_gid *sgid, const union ib_gid *mgid)
{
	struct eroce_mcg *grp, *found = NULL;
	struct eroce_mca *mca;

	rcu_read_lock();
	list_for_each_entry_rcu(grp, &edev->mcast.groups, node) {
		if (!memcmp(&grp->mgid, mgid, sizeof(*mgid))) {
			found = grp;
			break;
		}
	}
	if (found) {
		eroce_stat_inc(edev, EROCE_CNT_MCAST_RCVD);
		list_for_each_entry_rcu(mca, &found->qps, node) {
			struct eroce_qp *qp = eroce_qp_handle_get(mca->handle);

			if (!qp)
				continue;
			eroce_recv_deliver(edev, pkt, sgid, qp);
			eroce_qp_put(qp);
		}
	}
	rcu_read_unlock();
	return found;
}
