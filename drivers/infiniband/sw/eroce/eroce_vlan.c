// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_vlan.c - the last hop of a packet routed out of a VLAN device:
 * its 802.1p priority (PCP) is the path's SL, as on RoCE NICs.
 *
 * A VLAN device takes the PCP of what it sends from its egress-qos-map,
 * which is empty (PCP 0) unless the administrator fills it, and rdma_cm
 * has already derived the SL from the TOS through that same map: sent
 * through the VLAN device, an SL would be mapped a second time.  So,
 * unless the device's `vlan_egress_map` tunable asks for Linux's way, a
 * packet whose route leaves through a VLAN device goes through the IP
 * stack's output as any other (netfilter's LOCAL_OUT and POST_ROUTING,
 * the VLAN device's neighbour), and is then handed to the VLAN's real
 * device with the 802.1Q tag written here: the VLAN ID, and as PCP the
 * packet's priority, which eroce_xmit.c set to the SL.  What it skips is
 * the VLAN device's own transmit: its queueing discipline (noqueue unless
 * one was added), its tc hooks and its counters.
 *
 * The VLAN device's own path is kept where this one cannot follow it: a
 * neighbour not yet resolved (the packet waits in the neighbour's queue
 * and leaves through the VLAN device), multicast and broadcast, a VLAN on
 * a VLAN, a device enslaved to a VRF, IPsec, lightweight tunnels, a packet
 * too big for the route (eroce_vlan_pcp_is_sl()).
 *
 * Context: as eroce_xmit.c (any, bottom halves off).  Locks: none of
 * its own; RCU-bh for the neighbour, as the IP stack's output.
 */
#include <linux/if_vlan.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/l3mdev.h>
#include <net/lwtunnel.h>
#include <net/neighbour.h>
#include <net/route.h>

#include "eroce.h"
#include "eroce_xmit.h"

/**
 * eroce_vlan_pcp_is_sl() - does a packet take this path?
 * @edev: the sending device
 * @skb: the packet (or batch), routed, its skb->dev and skb->protocol set
 *
 * Return: true for a unicast packet that fits its route's MTU, routed out
 * of a VLAN device on a real (not VLAN) device, outside a VRF, with no
 * IPsec transform or lightweight tunnel on the route, unless @edev follows
 * the VLAN devices' egress maps.  Multicast and broadcast keep the IP
 * stack's output, which loops them back to this host's listeners; the
 * rest keep it so that what they need is done (or a packet too big is
 * dropped) as for any packet.
 */
bool eroce_vlan_pcp_is_sl(const struct eroce_dev *edev, struct sk_buff *skb)
{
	struct dst_entry *dst = skb_dst(skb);
	struct net_device *egress = skb->dev;
	unsigned int mtu = dst_mtu(dst);

	if (!is_vlan_dev(egress) || READ_ONCE(edev->tuning.vlan_egress_map) ||
	    is_vlan_dev(vlan_dev_real_dev(egress)) ||
	    netif_is_l3_slave(egress) || dst_xfrm(dst) ||
	    lwtunnel_xmit_redirect(dst->lwtstate))
		return false;
	if (skb_is_gso(skb) ? !skb_gso_validate_network_len(skb, mtu) :
			      skb->len > mtu)
		return false;
	if (skb->protocol == htons(ETH_P_IP))
		return !(skb_rtable(skb)->rt_flags &
			 (RTCF_MULTICAST | RTCF_BROADCAST));
	return !ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/*
 * The frame leaves through the VLAN's real device with PCP = priority;
 * a neighbour that cannot be used yet, or one of a VLAN device that is
 * down (which drops it), goes the VLAN device's way.
 */
static int eroce_vlan_neigh_xmit(struct neighbour *neigh, struct sk_buff *skb,
				 bool skip_cache)
{
	struct net_device *vlan = neigh->dev, *real;
	char ha[MAX_ADDR_LEN];
	u16 tci;

	if (!is_vlan_dev(vlan) || !netif_running(vlan) ||
	    !(READ_ONCE(neigh->nud_state) & NUD_VALID) ||
	    neigh_event_send(neigh, NULL))
		return neigh_output(neigh, skb, skip_cache);

	real = vlan_dev_real_dev(vlan);
	if (is_vlan_dev(real))
		return neigh_output(neigh, skb, skip_cache);
	if (skb_cow_head(skb, LL_RESERVED_SPACE(real))) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	neigh_ha_snapshot(ha, neigh, real);
	if (dev_hard_header(skb, real, ntohs(skb->protocol), ha,
			    vlan->dev_addr, skb->len) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	tci = vlan_dev_vlan_id(vlan) |
	      (skb->priority & 7) << VLAN_PRIO_SHIFT;
	__vlan_hwaccel_put_tag(skb, vlan_dev_vlan_proto(vlan), tci);
	skb->dev = real;
	return dev_queue_xmit(skb);
}

/* as ip_finish_output2(), for a packet that fits the route's MTU */
static int eroce_vlan_finish4(struct net *net, struct sock *sk,
			      struct sk_buff *skb)
{
	struct rtable *rt = skb_rtable(skb);
	struct neighbour *neigh;
	bool is_v6gw = false;
	int err;

	rcu_read_lock_bh();
	neigh = ip_neigh_for_gw(rt, skb, &is_v6gw);
	if (IS_ERR(neigh)) {
		rcu_read_unlock_bh();
		kfree_skb(skb);
		return -EINVAL;
	}
	err = eroce_vlan_neigh_xmit(neigh, skb, is_v6gw);
	rcu_read_unlock_bh();
	return err;
}

/* as ip_output() */
static int eroce_vlan_output4(struct net *net, struct sock *sk,
			      struct sk_buff *skb)
{
	struct net_device *dev = skb_dst(skb)->dev;

	IP_UPD_PO_STATS(net, IPSTATS_MIB_OUT, skb->len);
	skb->dev = dev;
	skb->protocol = htons(ETH_P_IP);
	return NF_HOOK(NFPROTO_IPV4, NF_INET_POST_ROUTING, net, sk, skb, NULL,
		       dev, eroce_vlan_finish4);
}

/**
 * eroce_vlan_local_out4() - send an IPv4 packet (or batch) out of a VLAN
 * @net: the namespace of the route
 * @sk: eroce's socket there
 * @skb: the packet, its IP header complete but for the total length,
 *	 routed out of a VLAN device (eroce_vlan_pcp_is_sl())
 *
 * As ip_local_out(), with the last hop of eroce_vlan_neigh_xmit().
 * Return: as ip_local_out(); @skb is consumed.
 */
int eroce_vlan_local_out4(struct net *net, struct sock *sk,
			  struct sk_buff *skb)
{
	struct iphdr *iph = ip_hdr(skb);
	int err;

	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	err = nf_hook(NFPROTO_IPV4, NF_INET_LOCAL_OUT, net, sk, skb, NULL,
		      skb_dst(skb)->dev, eroce_vlan_output4);
	if (likely(err == 1))
		err = eroce_vlan_output4(net, sk, skb);
	return err;
}

/* as ip6_finish_output2(), for a packet that fits the route's MTU */
static int eroce_vlan_finish6(struct net *net, struct sock *sk,
			      struct sk_buff *skb)
{
	struct dst_entry *dst = skb_dst(skb);
	const struct in6_addr *nexthop;
	struct neighbour *neigh;
	int err;

	IP6_UPD_PO_STATS(net, ip6_dst_idev(dst), IPSTATS_MIB_OUT, skb->len);
	rcu_read_lock_bh();
	nexthop = rt6_nexthop(container_of(dst, struct rt6_info, dst),
			      &ipv6_hdr(skb)->daddr);
	neigh = ip_neigh_gw6(dst->dev, nexthop);
	if (IS_ERR(neigh)) {
		rcu_read_unlock_bh();
		kfree_skb(skb);
		return -EINVAL;
	}
	err = eroce_vlan_neigh_xmit(neigh, skb, false);
	rcu_read_unlock_bh();
	return err;
}

/* as ip6_output() */
static int eroce_vlan_output6(struct net *net, struct sock *sk,
			      struct sk_buff *skb)
{
	struct net_device *dev = skb_dst(skb)->dev;

	skb->protocol = htons(ETH_P_IPV6);
	skb->dev = dev;
	return NF_HOOK(NFPROTO_IPV6, NF_INET_POST_ROUTING, net, sk, skb, NULL,
		       dev, eroce_vlan_finish6);
}

/**
 * eroce_vlan_local_out6() - send an IPv6 packet (or batch) out of a VLAN
 * @net: the namespace of the route
 * @sk: eroce's IPv6 socket there
 * @skb: the packet, its IPv6 header complete but for the payload length,
 *	 routed out of a VLAN device (eroce_vlan_pcp_is_sl())
 *
 * As ip6_local_out(), with the last hop of eroce_vlan_neigh_xmit().
 * Return: as ip6_local_out(); @skb is consumed.
 */
int eroce_vlan_local_out6(struct net *net, struct sock *sk,
			  struct sk_buff *skb)
{
	int err;

	ipv6_hdr(skb)->payload_len = htons(skb->len - sizeof(struct ipv6hdr));
	IP6CB(skb)->nhoff = offsetof(struct ipv6hdr, nexthdr);
	skb->protocol = htons(ETH_P_IPV6);
	err = nf_hook(NFPROTO_IPV6, NF_INET_LOCAL_OUT, net, sk, skb, NULL,
		      skb_dst(skb)->dev, eroce_vlan_output6);
	if (likely(err == 1))
		err = eroce_vlan_output6(net, sk, skb);
	return err;
}
