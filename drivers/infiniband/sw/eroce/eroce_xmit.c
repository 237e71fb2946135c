// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_xmit.c - RoCEv2 packets out: allocation, IP/UDP encapsulation,
 * ICRC, route lookup and transmit.
 *
 * The engines allocate a packet with eroce_pkt_alloc() (the skb holds the
 * BTH, the extension headers, the payload, the pad and room for the ICRC,
 * with headroom for UDP, IP and the link layer), fill it, and hand it to
 * eroce_pkt_xmit(), which prepends UDP and IPv4 or IPv6 headers for the
 * path in the address vector, computes the ICRC over the finished headers
 * and sends it through the IP stack of the egress netdev's namespace, so
 * the namespace's routes, neighbours, netfilter and qdiscs apply.  A
 * connected QP keeps its route in a per-CPU dst_cache (eroce_qp_xmit()),
 * which the routing layer invalidates when routes change; a new address
 * vector drops it (eroce_qp_route_forget()).  A
 * packet for an address of this host on the sending netdev (QPs of one
 * device talking to each other) loops back through a work item.  The
 * egress netdev is the one of the source GID (a VLAN device for a VLAN
 * GID).  UDP checksums are zero, as RoCEv2 allows; the ICRC protects the
 * payload.
 *
 * Context: process context or softirq, bottom halves off.  Locks: none
 * for eroce_pkt_xmit(); eroce_qp_xmit() and eroce_qp_route_forget() run
 * under the QP's engine lock, which guards its route cache.  RCU for the
 * GID attribute's netdev; the loopback queue's own lock.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>
#include <rdma/ib_cache.h>

#include "eroce.h"
#include "eroce_icrc.h"
#include "eroce_opcode.h"
#include "eroce_xmit.h"

#define EROCE_TX_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr))

/**
 * eroce_pkt_alloc() - allocate a packet for one opcode
 * @opcode: a valid RoCEv2 opcode
 * @paylen: payload bytes the caller will copy to eroce_pkt_payload()
 *
 * The BTH is initialised (opcode, pad count, default P_Key), the
 * extension headers and the pad are zeroed; the caller sets QPN, PSN and
 * flags.  Context: any, atomic allocation.
 * Return: the packet, skb->data at the BTH, or NULL.
 */
struct sk_buff *eroce_pkt_alloc(u8 opcode, u32 paylen)
{
	const struct eroce_opcode_info *info = eroce_opcode_info(opcode);
	u32 pad = (4 - (paylen & 3)) & 3;
	struct sk_buff *skb;
	u8 *data;

	if (WARN_ON_ONCE(!info))
		return NULL;

	skb = alloc_skb(EROCE_TX_HEADROOM + info->hdr_len + paylen + pad +
			EROCE_ICRC_BYTES, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, EROCE_TX_HEADROOM);
	data = skb_put(skb, info->hdr_len + paylen + pad + EROCE_ICRC_BYTES);
	memset(data, 0, info->hdr_len);
	memset(data + info->hdr_len + paylen, 0, pad + EROCE_ICRC_BYTES);
	eroce_bth_init((struct eroce_bth *)data, opcode, EROCE_DEFAULT_PKEY,
		       0, 0);
	eroce_bth_set_pad((struct eroce_bth *)data, pad);
	return skb;
}

/* the payload area of a packet from eroce_pkt_alloc() */
void *eroce_pkt_payload(struct sk_buff *skb)
{
	const struct eroce_bth *bth = eroce_pkt_bth(skb);

	return skb->data + eroce_opcode_info(bth->opcode)->hdr_len;
}

static void eroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(EROCE_ROCEV2_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/* ICRC over the finished IP packet, into its last four bytes */
static int eroce_pkt_seal(struct sk_buff *skb)
{
	__le32 icrc;
	int err;

	err = eroce_icrc_linear(skb_network_header(skb),
				skb->len - EROCE_ICRC_BYTES, &icrc);
	if (err)
		return err;
	memcpy(skb_tail_pointer(skb) - EROCE_ICRC_BYTES, &icrc,
	       EROCE_ICRC_BYTES);
	return 0;
}

/*
 * The IP traffic class: the AV's, or the device default when the AV has
 * none; with `ecn` on, ECN capable (ECT(0)) unless the class sets ECN
 * bits itself.
 */
static u8 eroce_xmit_tclass(struct eroce_dev *edev, const struct eroce_av *av)
{
	u8 tclass = av->traffic_class ?:
		    READ_ONCE(edev->tuning.default_tclass);

	if (READ_ONCE(edev->tuning.ecn) && !(tclass & INET_ECN_MASK))
		tclass |= INET_ECN_ECT_0;
	return tclass;
}

/*
 * 802.1p: the SL is the packet's priority.  Through a VLAN device it
 * becomes the PCP by the device's egress-qos-map (identity when set up
 * as Documentation/admin-guide.rst shows); on an untagged netdev with
 * `priority_tag` on, the frame carries a priority tag (VLAN ID 0,
 * PCP = SL).  tc and mqprio see the same priority.
 */
static void eroce_xmit_priority(struct eroce_dev *edev,
				const struct eroce_av *av,
				struct net_device *egress, struct sk_buff *skb)
{
	u8 pcp = av->sl & 7;

	skb->priority = pcp;
	if (!is_vlan_dev(egress) && READ_ONCE(edev->tuning.priority_tag))
		__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
				       pcp << VLAN_PRIO_SHIFT);
}

/*
 * A packet for an address of this host, sent from another netdev than
 * the loopback device: the IP stack would deliver it through `lo`, where
 * no eroce device listens.  Hand it to our own receive path instead, from
 * a work item, never from inside the sender's engine lock.
 */
static bool eroce_xmit_is_loopback(struct net_device *ndev,
				   struct dst_entry *dst)
{
	return (dst->dev->flags & IFF_LOOPBACK) &&
	       !(ndev->flags & IFF_LOOPBACK);
}

static int eroce_xmit_loopback(struct eroce_dev *edev,
			       struct net_device *ndev, struct sk_buff *skb)
{
	if (skb_queue_len(&edev->lo_queue) >= EROCE_LOOPBACK_QLEN) {
		kfree_skb(skb);
		return -ENOBUFS;
	}
	skb_dst_drop(skb);
	/* held until the work item received it: ndev may go meanwhile */
	dev_hold(ndev);
	skb->dev = ndev;
	skb->pkt_type = PACKET_HOST;
	/* as the UDP tunnel hands packets over: data at the UDP header */
	__skb_pull(skb, skb_transport_offset(skb));
	skb_queue_tail(&edev->lo_queue, skb);
	schedule_work(&edev->lo_work);
	return 0;
}

/* work item: receive the looped-back packets, bottom halves off */
void eroce_xmit_loopback_work(struct work_struct *work)
{
	struct eroce_dev *edev = container_of(work, struct eroce_dev, lo_work);
	struct sk_buff *skb;

	local_bh_disable();
	while ((skb = skb_dequeue(&edev->lo_queue))) {
		struct net_device *ndev = skb->dev;

		eroce_recv(NULL, skb);
		dev_put(ndev);		/* held by eroce_xmit_loopback() */
	}
	local_bh_enable();
}

/* drop the looped-back packets not received yet (device teardown) */
void eroce_xmit_loopback_purge(struct eroce_dev *edev)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&edev->lo_queue))) {
		dev_put(skb->dev);
		kfree_skb(skb);
	}
}

/* the IPv4 route of @av: from @route when it holds a valid one */
static struct rtable *eroce_route4(struct net *net, struct net_device *ndev,
				   const struct eroce_av *av, u8 tclass,
				   struct dst_cache *route, struct flowi4 *fl4)
{
	struct rtable *rt;

	memcpy(&fl4->saddr, &av->sgid_attr->gid.raw[12], sizeof(fl4->saddr));
	memcpy(&fl4->daddr, &av->dgid.raw[12], sizeof(fl4->daddr));
	if (route) {
		rt = dst_cache_get_ip4(route, &fl4->saddr);
		if (rt)
			return rt;
	}
	fl4->flowi4_oif = ndev->ifindex;
	fl4->flowi4_tos = RT_TOS(tclass);
	fl4->flowi4_proto = IPPROTO_UDP;
	rt = ip_route_output_key(net, fl4);
	if (!IS_ERR(rt) && route)
		dst_cache_set_ip4(route, &rt->dst, fl4->saddr);
	return rt;
}

static int eroce_xmit4(struct eroce_dev *edev, struct net_device *ndev,
		       const struct eroce_av *av, struct dst_cache *route,
		       u16 sport, struct sk_buff *skb)
{
	u8 tclass = eroce_xmit_tclass(edev, av);
	struct net *net = dev_net(ndev);
	struct flowi4 fl4 = {};
	struct rtable *rt;
	struct iphdr *iph;
	int err;

	rt = eroce_route4(net, ndev, av, tclass, route, &fl4);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}

	eroce_push_udp(skb, sport);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	skb_dst_set(skb, &rt->dst);
	ip_select_ident(net, skb, NULL);
	ip_send_check(iph);

	err = eroce_pkt_seal(skb);
	if (err) {
		kfree_skb(skb);
		return err;
	}

	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb->protocol = htons(ETH_P_IP);
	if (eroce_xmit_is_loopback(ndev, &rt->dst))
		return eroce_xmit_loopback(edev, ndev, skb);
	skb->dev = rt->dst.dev;
	eroce_xmit_priority(edev, av, skb->dev, skb);
	return ip_local_out(net, eroce_net_sk(edev->net, false), skb);
}

/* the IPv6 route of @av: from @route when it holds a valid one */
static struct dst_entry *eroce_route6(struct net *net, struct sock *sk,
				      struct net_device *ndev,
				      const struct eroce_av *av,
				      struct dst_cache *route,
				      struct flowi6 *fl6)
{
	struct dst_entry *dst;

	memcpy(&fl6->saddr, av->sgid_attr->gid.raw, sizeof(fl6->saddr));
	memcpy(&fl6->daddr, av->dgid.raw, sizeof(fl6->daddr));
	if (route) {
		dst = dst_cache_get_ip6(route, &fl6->saddr);
		if (dst)
			return dst;
	}
	fl6->flowi6_oif = ndev->ifindex;
	fl6->flowi6_proto = IPPROTO_UDP;
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, fl6, NULL);
	if (!IS_ERR(dst) && route)
		dst_cache_set_ip6(route, dst, &fl6->saddr);
	return dst;
}

static int eroce_xmit6(struct eroce_dev *edev, struct net_device *ndev,
		       const struct eroce_av *av, struct dst_cache *route,
		       u16 sport, struct sk_buff *skb)
{
	struct sock *sk = eroce_net_sk(edev->net, true);
	struct net *net = dev_net(ndev);
	struct flowi6 fl6 = {};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;

	if (!sk) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}

	dst = eroce_route6(net, sk, ndev, av, route, &fl6);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}

	eroce_push_udp(skb, sport);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, eroce_xmit_tclass(edev, av),
		     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ip6_dst_hoplimit(dst);
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	skb_dst_set(skb, dst);

	if (eroce_pkt_seal(skb)) {
		kfree_skb(skb);
		return -EINVAL;
	}

	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb->protocol = htons(ETH_P_IPV6);
	if (eroce_xmit_is_loopback(ndev, dst))
		return eroce_xmit_loopback(edev, ndev, skb);
	skb->dev = dst->dev;
	eroce_xmit_priority(edev, av, skb->dev, skb);
	return ip6_local_out(net, sk, skb);
}

/**
 * eroce_pkt_xmit() - encapsulate and send a packet
 * @edev: the sending device
 * @av: where to: source GID attribute, destination GID, traffic class
 * @route: the route cache for @av, or NULL to look the route up
 * @sport: UDP source port (rdma_get_udp_sport() of the flow)
 * @skb: a packet from eroce_pkt_alloc(), consumed in every case
 *
 * Context: any, bottom halves off.
 * Return: 0; -ENOBUFS when a full queue on the way out dropped the packet
 * (local congestion: worth sending again soon); another negative errno
 * when the packet has no way out (its GID, route, neighbour or netdev is
 * gone, netfilter dropped it), which the reliable transport treats as a
 * loss on the wire, so that retry_cnt bounds it.  Either is counted as a
 * TX error.
 */
int eroce_pkt_xmit(struct eroce_dev *edev, const struct eroce_av *av,
		   struct dst_cache *route, u16 sport, struct sk_buff *skb)
{
	struct net_device *ndev;
	unsigned int len = skb->len;
	int err;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(av->sgid_attr);
	if (IS_ERR(ndev)) {
		err = PTR_ERR(ndev);
		goto err_free;
	}
	if (av->network_type == RDMA_NETWORK_IPV4)
		err = eroce_xmit4(edev, ndev, av, route, sport, skb);
	else
		err = eroce_xmit6(edev, ndev, av, route, sport, skb);
	rcu_read_unlock();

	/*
	 * The skb is consumed.  net_xmit_eval() hides congestion
	 * notification; what is left positive is a qdisc's drop.
	 */
	err = net_xmit_eval(err);
	if (err > 0)
		err = -ENOBUFS;
	if (err) {
		eroce_stat_inc(edev, EROCE_CNT_TX_ERRORS);
		return err;
	}
	eroce_stat_inc(edev, EROCE_CNT_TX_PACKETS);
	eroce_stat_add(edev, EROCE_CNT_TX_BYTES, len);
	return 0;

err_free:
	rcu_read_unlock();
	kfree_skb(skb);
	eroce_stat_inc(edev, EROCE_CNT_TX_ERRORS);
	return err;
}

/**
 * eroce_qp_xmit() - send a packet on a connected QP's path
 * @qp: an RC QP with its address vector set
 * @skb: a packet from eroce_pkt_alloc(), consumed in every case
 *
 * As eroce_pkt_xmit(), through the QP's route cache, from the UDP source
 * port of the QP's flow (both directions of a connection use the same
 * hash of the two QPNs and the flow label).
 * Context: the QP's engine lock held.
 */
int eroce_qp_xmit(struct eroce_qp *qp, struct sk_buff *skb)
{
	u16 sport = rdma_get_udp_sport(qp->attrs.av.flow_label,
				       qp->ibqp.qp_num,
				       READ_ONCE(qp->attrs.dest_qp_num));

	lockdep_assert_held(&qp->eng.lock);
	return eroce_pkt_xmit(to_eroce_dev(qp->ibqp.device), &qp->attrs.av,
			      &qp->eng.route, sport, skb);
}

/**
 * eroce_qp_route_forget() - the QP's address vector changed
 * @qp: the QP
 *
 * Drops the cached routes on every CPU; nobody else uses the cache while
 * the engine lock is held.  Context: the QP's engine lock held.
 */
void eroce_qp_route_forget(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	dst_cache_reset_now(&qp->eng.route);
}
