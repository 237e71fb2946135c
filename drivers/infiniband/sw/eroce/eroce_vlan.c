// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_vlan.c - eroce's entries in the egress-qos-maps of the VLAN
 * devices its packets leave through, so that their 802.1p priority (PCP)
 * is the path's SL, as on RoCE NICs, while every packet takes the IP
 * stack's output and the VLAN device's own transmit (its qdisc, tc hooks
 * and counters).
 *
 * A VLAN device takes the PCP of what it sends from its egress-qos-map,
 * keyed by skb->priority, empty (PCP 0) unless the administrator fills
 * it; rdma_cm has already derived the SL from the TOS through that same
 * map (iboe_tos_to_sl()), so an SL sent as skb->priority would be mapped
 * a second time.  Out of a VLAN device eroce_xmit.c therefore sends with
 * a private priority, EROCE_VLAN_PRIO(sl) = EROCE_VLAN_PRIO_BASE | sl,
 * and this file puts the entries EROCE_VLAN_PRIO(sl) -> sl (sl 1 to 7;
 * SL 0 needs none: a priority without an entry gets PCP 0) into the maps
 * of the VLAN devices that may carry eroce's packets.  The map's lookup,
 * vlan_dev_get_egress_qos_mask(), picks a bucket by (priority & 0xF) and
 * compares the whole 32-bit priority, so these entries leave the
 * administrator's entries for ordinary priorities alone.
 *
 * Which devices: the eroce netdev and the VLAN devices below it, if it is
 * one (a VLAN on a VLAN tags twice, each from its own map), and every
 * VLAN device above it (netdev_walk_all_upper_dev_rcu(): ib_core's GIDs
 * come from these, and a QP's packets leave through the netdev of its
 * GID).  When: as the device registers (eroce_vlan_map_dev_add()), and
 * when a VLAN device is linked above a device that needs them
 * (eroce_vlan_map_upper_linked(), from the netdev notifier's
 * NETDEV_CHANGEUPPER); the entries live in the VLAN device and follow it
 * into another namespace.  When the eroce device goes
 * (eroce_vlan_map_dev_del()) they are set to PCP 0, which is what a
 * missing entry gives and which `ip -d link show` does not show, on the
 * devices no other eroce device still needs.  How: the VLAN device's
 * rtnl_link_ops->changelink() with an IFLA_VLAN_EGRESS_QOS attribute built
 * here, which is what `ip link set DEV type vlan egress-qos-map` does:
 * the 8021q module exports no function that sets one entry.  A device
 * that refuses is logged; eroce_xmit.c, finding no entry for an SL, sends
 * with the SL as priority through the administrator's map and counts it.
 *
 * Context: process context.  Locks: RTNL, held by the caller (the
 * netdev notifier, device registration and release); none of its own.
 */
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/rtnetlink.h>

#include "eroce.h"
#include "eroce_xmit.h"

/* PCPs 1 to 7: the entries eroce puts in a map */
#define EROCE_VLAN_MAP_ENTRIES	7

/* an IFLA_VLAN_EGRESS_QOS attribute as `ip link` sends it */
struct eroce_vlan_qos_attr {
	struct nlattr nest;
	struct {
		struct nlattr nla;
		struct ifla_vlan_qos_mapping map;
	} entry[EROCE_VLAN_MAP_ENTRIES];
};

/*
 * Set eroce's entries of @vlan to PCP = SL (@on) or to PCP 0.  Return: 0
 * or the error of the VLAN device's changelink.
 */
static int eroce_vlan_map_write(struct net_device *vlan, bool on)
{
	const struct rtnl_link_ops *ops = vlan->rtnl_link_ops;
	struct nlattr *data[IFLA_VLAN_MAX + 1] = {};
	struct eroce_vlan_qos_attr *attr;
	struct nlattr **tb;
	int i, err;

	ASSERT_RTNL();
	if (!ops || !ops->changelink || strcmp(ops->kind, "vlan") ||
	    ops->maxtype < IFLA_VLAN_EGRESS_QOS)
		return -EOPNOTSUPP;

	attr = kzalloc(sizeof(*attr), GFP_KERNEL);
	tb = kcalloc(IFLA_MAX + 1, sizeof(*tb), GFP_KERNEL);
	if (!attr || !tb) {
		err = -ENOMEM;
		goto out;
	}
	attr->nest.nla_type = IFLA_VLAN_EGRESS_QOS;
	attr->nest.nla_len = sizeof(*attr);
	for (i = 0; i < EROCE_VLAN_MAP_ENTRIES; i++) {
		u32 sl = i + 1;

		attr->entry[i].nla.nla_type = IFLA_VLAN_QOS_MAPPING;
		attr->entry[i].nla.nla_len = sizeof(attr->entry[i]);
		attr->entry[i].map.from = EROCE_VLAN_PRIO(sl);
		attr->entry[i].map.to = on ? sl : 0;
	}
	data[IFLA_VLAN_EGRESS_QOS] = &attr->nest;
	/*
	 * no RTM_NEWLINK follows (rtmsg_ifinfo() is not exported, and
	 * netdev_state_change() would also send NETDEV_CHANGE): `ip monitor`
	 * does not see the change, `ip -d link show` does
	 */
	err = ops->changelink(vlan, tb, data, NULL);
out:
	kfree(tb);
	kfree(attr);
	return err;
}

/* a device needs eroce's entries: log one it could not have */
static int eroce_vlan_map_set(struct net_device *vlan)
{
	int err;

	if (!is_vlan_dev(vlan) || vlan->reg_state != NETREG_REGISTERED)
		return 0;
	err = eroce_vlan_map_write(vlan, true);
	if (err)
		netdev_warn(vlan, "eroce: no egress-qos-map entries for PCP = SL (%d): the map gives the PCP of each SL\n",
			    err);
	return 0;
}

/* an eroce device other than @except on @ndev */
static bool eroce_vlan_has_other_dev(struct net_device *ndev,
				     const struct eroce_dev *except)
{
	struct eroce_dev *edev = eroce_dev_get_by_netdev(ndev);
	bool other;

	if (!edev)
		return false;
	other = edev != except;
	ib_device_put(&edev->ibdev);
	return other;
}

static int eroce_vlan_has_other_dev_walk(struct net_device *ndev,
					 struct netdev_nested_priv *priv)
{
	return eroce_vlan_has_other_dev(ndev, priv->data);
}

/*
 * Does an eroce device other than @except send through @vlan: one on
 * @vlan, below it or above it?
 */
static bool eroce_vlan_map_needed(struct net_device *vlan,
				  const struct eroce_dev *except)
{
	struct netdev_nested_priv priv = { .data = (void *)except };

	ASSERT_RTNL();
	return eroce_vlan_has_other_dev(vlan, except) ||
	       netdev_walk_all_lower_dev(vlan, eroce_vlan_has_other_dev_walk,
					 &priv) ||
	       netdev_walk_all_upper_dev_rcu(vlan,
					     eroce_vlan_has_other_dev_walk,
					     &priv);
}

/* eroce's entries of a device that @priv->data no longer needs go */
static int eroce_vlan_map_clear(struct net_device *vlan,
				struct netdev_nested_priv *priv)
{
	if (!is_vlan_dev(vlan) || vlan->reg_state != NETREG_REGISTERED ||
	    eroce_vlan_map_needed(vlan, priv->data))
		return 0;
	eroce_vlan_map_write(vlan, false);
	return 0;
}

static int eroce_vlan_map_set_walk(struct net_device *vlan,
				   struct netdev_nested_priv *priv)
{
	return eroce_vlan_map_set(vlan);
}

/*
 * @fn on each VLAN device the packets of an eroce device on @ndev may
 * cross: @ndev and the VLAN devices below it, the VLAN devices above it.
 * RTNL keeps the devices and their links; netdev_walk_all_upper_dev_rcu()
 * is the walk that the core's own netdev_has_upper_dev() does under RTNL.
 */
static void eroce_vlan_map_walk(struct net_device *ndev,
				int (*fn)(struct net_device *vlan,
					  struct netdev_nested_priv *priv),
				struct netdev_nested_priv *priv)
{
	struct net_device *dev;

	ASSERT_RTNL();
	for (dev = ndev; is_vlan_dev(dev); dev = vlan_dev_priv(dev)->real_dev)
		fn(dev, priv);
	netdev_walk_all_upper_dev_rcu(ndev, fn, priv);
}

/**
 * eroce_vlan_map_dev_add() - give the VLAN devices of a new device their
 * entries
 * @edev: the device, registered on edev->ndev
 *
 * Context: process context, RTNL held.
 */
void eroce_vlan_map_dev_add(struct eroce_dev *edev)
{
	struct netdev_nested_priv priv = { .data = edev };

	ASSERT_RTNL();
	eroce_vlan_map_walk(edev->ndev, eroce_vlan_map_set_walk, &priv);
}

/**
 * eroce_vlan_map_dev_del() - the device goes: clear the entries that no
 * other eroce device needs
 * @edev: the device, unregistered; edev->ndev still held (it may be
 *	  unregistered too, and the VLAN devices on it gone)
 *
 * Context: process context, RTNL held.
 */
void eroce_vlan_map_dev_del(struct eroce_dev *edev)
{
	struct netdev_nested_priv priv = { .data = edev };

	ASSERT_RTNL();
	eroce_vlan_map_walk(edev->ndev, eroce_vlan_map_clear, &priv);
}

/**
 * eroce_vlan_map_upper_linked() - a device was linked under another
 * @upper: the upper device of a NETDEV_CHANGEUPPER that linked
 *
 * A VLAN device made on an eroce device's netdev, or on a VLAN device
 * above or below one, gets eroce's entries.
 * Context: the netdev notifier, RTNL held.
 */
void eroce_vlan_map_upper_linked(struct net_device *upper)
{
	ASSERT_RTNL();
	if (is_vlan_dev(upper) && eroce_vlan_map_needed(upper, NULL))
		eroce_vlan_map_set(upper);
}
