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
 * connected QP's engines collect their packets in a struct eroce_tx_batch
 * and send equal-sized ones together with eroce_qp_xmit_batch() (through
 * eroce_sched.c, which calls it on the QP's CPU): one UDP GSO skb that
 * segmentation cuts back into the packets the ICRCs were computed for.
 * A connected QP keeps its route in a per-CPU dst_cache, which the
 * routing layer invalidates when routes change; a new address vector
 * drops it (eroce_qp_route_forget()).  The egress netdev is the one of
 * the source GID (a VLAN device for a VLAN GID).
 *
 * A packet routed through the loopback device from another netdev (to an
 * address of the sending netdev: QPs of one device talking to each other)
 * does not enter the IP stack: it waits on the device's loopback queue
 * until a work item hands it to eroce_recv_looped(), as if it had come in
 * on the sending netdev.
 *
 * UDP checksums: every packet that leaves the host carries a full one
 * (RoCEv2 allows zero too; the ICRC masks it).  A batch is
 * CHECKSUM_PARTIAL with the pseudo-header sum in its UDP header, so
 * segmentation (the stack's or a NIC's) puts a checksum in each of its
 * packets, and __udp_gso_segment() insists on it; a packet sent on its
 * own gets one the same way (udp_set_csum(), the NIC's checksum offload
 * or the stack's software fallback).  The receiver's UDP GRO takes a
 * packet into the same flow as the ones held only if their checksums are
 * both zero or both not (udp_gro_receive()): a QP whose single packets
 * carried none would split into two flows there, whose batches complete
 * out of order.  A batch that stays on the host (a veth into another
 * namespace) arrives still CHECKSUM_PARTIAL, which the receiver takes as
 * verified.  Packets looped back by eroce_recv_looped() carry none.
 *
 * Context: process context or softirq, bottom halves off.  Locks: none
 * for eroce_pkt_xmit(); eroce_qp_xmit_batch() and eroce_qp_route_forget() run
 * under the QP's engine lock, which guards its route cache.  RCU for the
 * GID attribute's netdev; the loopback queue's own lock.
 */
#include <linux/error-injection.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>
#include <rdma/ib_cache.h>

#include "eroce.h"
#include "eroce_fault.h"
#include "eroce_icrc.h"
#include "eroce_opcode.h"
#include "eroce_xmit.h"

#define EROCE_TX_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr))

/**
 * eroce_pkt_alloc() - allocate a packet for one opcode
 * @edev: the sending device, whose tx_nomem counts a failure
 * @opcode: a valid RoCEv2 opcode
 * @paylen: payload bytes the caller will copy to eroce_pkt_payload()
 *
 * The BTH is initialised (opcode, pad count, default P_Key), the
 * extension headers and the pad are zeroed; the caller sets QPN, PSN and
 * flags.  Context: any, atomic allocation.
 * Return: the packet, skb->data at the BTH, or NULL.
 */
struct sk_buff *eroce_pkt_alloc(struct eroce_dev *edev, u8 opcode,
				u32 paylen)
{
	const struct eroce_opcode_info *info = eroce_opcode_info(opcode);
	u32 pad = (4 - (paylen & 3)) & 3;
	struct sk_buff *skb;
	u8 *data;

	if (WARN_ON_ONCE(!info))
		return NULL;

	skb = eroce_should_fail(EROCE_FAULT_PKT_ALLOC) ? NULL :
	      alloc_skb(EROCE_TX_HEADROOM + info->hdr_len + paylen + pad +
			EROCE_ICRC_BYTES, GFP_ATOMIC);
	if (!skb) {
		eroce_stat_inc(edev, EROCE_CNT_TX_NOMEM);
		return NULL;
	}
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
 * 802.1p: the packet's priority carries the SL.  Out of a VLAN device it
 * is EROCE_VLAN_PRIO(sl), which eroce's entries in the device's
 * egress-qos-map turn into PCP = SL (eroce_vlan.c); with `vlan_egress_map`
 * on, or where the map lacks eroce's entry for the SL (counted), it is
 * the SL, which the administrator's map turns into the PCP.  On an
 * untagged netdev with `priority_tag` on, the frame carries a priority
 * tag (VLAN ID 0, PCP = SL).  Its low four bits are the SL either way,
 * which is what prio, mqprio and pfifo_fast classify on.
 */
static void eroce_xmit_priority(struct eroce_dev *edev,
				const struct eroce_av *av,
				struct net_device *egress, struct sk_buff *skb)
{
	u8 pcp = av->sl & 7;

	skb->priority = pcp;
	if (is_vlan_dev(egress)) {
		/*
		 * The map is read only while the device runs: its
		 * vlan_dev_uninit() frees it a grace period after
		 * dev_close(), and the caller's RCU read-side section
		 * covers the read.  A device that is down drops the packet.
		 */
		if (READ_ONCE(edev->tuning.vlan_egress_map) ||
		    !netif_running(egress))
			return;
		if (pcp && !vlan_dev_get_egress_qos_mask(egress,
							 EROCE_VLAN_PRIO(pcp))) {
			eroce_stat_add(edev, EROCE_CNT_TX_VLAN_NO_ENTRY,
				       max_t(u16, skb_shinfo(skb)->gso_segs, 1));
			return;
		}
		skb->priority = EROCE_VLAN_PRIO(pcp);
	} else if (READ_ONCE(edev->tuning.priority_tag)) {
		__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
				       pcp << VLAN_PRIO_SHIFT);
	}
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
	/* as eroce_recv_looped() takes them: data at the BTH */
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	skb_queue_tail(&edev->lo_queue, skb);
	schedule_work(&edev->lo_work);
	return 0;
}

/*
 * Work item: receive the looped-back packets, bottom halves off for a
 * batch at a time.  What they answer refills the queue, so one run takes
 * at most EROCE_LOOPBACK_BUDGET packets and requeues itself for the rest:
 * the CPU gets its softirqs, its RCU grace periods and its other work
 * between two runs.
 */
void eroce_xmit_loopback_work(struct work_struct *work)
{
	struct eroce_dev *edev = container_of(work, struct eroce_dev, lo_work);
	struct sk_buff *skb;
	int n = 0;

	local_bh_disable();
	while ((skb = skb_dequeue(&edev->lo_queue))) {
		struct net_device *ndev = skb->dev;

		eroce_recv_looped(skb);
		dev_put(ndev);		/* held by eroce_xmit_loopback() */
		if (++n == EROCE_LOOPBACK_BUDGET)
			break;
		if (!(n % EROCE_LOOPBACK_BATCH)) {
			local_bh_enable();
			local_bh_disable();
		}
	}
	local_bh_enable();
	if (n == EROCE_LOOPBACK_BUDGET &&
	    !skb_queue_empty_lockless(&edev->lo_queue))
		schedule_work(&edev->lo_work);
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

/*
 * The IPv4 route of @av: from @route when it holds a valid one.  Not
 * inlined: fail_function fails it (ERR_PTR(retval)).
 */
static noinline struct rtable *eroce_route4(struct net *net,
					    struct net_device *ndev,
					    const struct eroce_av *av,
					    u8 tclass, struct dst_cache *route,
					    struct flowi4 *fl4)
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

ALLOW_ERROR_INJECTION(eroce_route4, ERRNO);

/*
 * Send a batch of two or more packets as one UDP GSO skb: the others
 * become the first one's frag_list, and the first one's IP and UDP
 * headers now describe them all.  Software segmentation (or a NIC's)
 * gives segment i the first one's headers with the IPv4 ID incremented
 * i times and its own lengths, which is what the ICRCs were computed for
 * (see Documentation/design.rst, "Batched transmit").
 */
static struct sk_buff *eroce_xmit_gso(struct sk_buff_head *pkts, u32 seg_len)
{
	struct sk_buff *head = __skb_dequeue(pkts);
	struct sk_buff **next = &skb_shinfo(head)->frag_list;
	unsigned int segs = 1;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(pkts))) {
		/*
		 * Segmentation clones the packet and puts the first one's
		 * headers back in front; with the header released, a sole
		 * clone writes them into this headroom instead of copying
		 * the packet (see "DOC: dataref and headerless skbs").
		 */
		__skb_pull(skb, skb_transport_offset(skb) +
			   sizeof(struct udphdr));
		__skb_header_release(skb);
		*next = skb;
		next = &skb->next;
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
		segs++;
	}
	udp_hdr(head)->len = htons(head->len - skb_transport_offset(head));
	head->ip_summed = CHECKSUM_PARTIAL;
	head->csum_start = skb_transport_header(head) - head->head;
	head->csum_offset = offsetof(struct udphdr, check);
	skb_shinfo(head)->gso_size = seg_len;
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(head)->gso_segs = segs;
	return head;
}

/* the packets go to the receive path of this host, one by one */
static int eroce_xmit_loopback_all(struct eroce_dev *edev,
				   struct net_device *ndev,
				   struct sk_buff_head *pkts)
{
	struct sk_buff *skb;
	int err = 0;

	while ((skb = __skb_dequeue(pkts)))
		err = eroce_xmit_loopback(edev, ndev, skb) ?: err;
	return err;
}

static int eroce_xmit4(struct eroce_dev *edev, struct net_device *ndev,
		       const struct eroce_av *av, struct dst_cache *route,
		       u16 sport, struct sk_buff_head *pkts, u32 seg_len)
{
	u8 tclass = eroce_xmit_tclass(edev, av);
	struct sk_buff *head = skb_peek(pkts);
	struct net *net = dev_net(ndev);
	struct flowi4 fl4 = {};
	struct sk_buff *skb;
	struct rtable *rt;
	u16 id = 0;
	int err;

	rt = eroce_route4(net, ndev, av, tclass, route, &fl4);
	if (IS_ERR(rt)) {
		__skb_queue_purge(pkts);
		return PTR_ERR(rt);
	}
	skb_dst_set(head, &rt->dst);

	skb_queue_walk(pkts, skb) {
		struct iphdr *iph;

		eroce_push_udp(skb, sport);
		iph = skb_push(skb, sizeof(*iph));
		skb_reset_network_header(skb);
		iph->version = 4;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = tclass;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		/*
		 * the AV's hop limit, as RoCE NICs send it; one left 0
		 * gets the route's (a host must not send a TTL of 0)
		 */
		iph->ttl = av->hop_limit ?: ip4_dst_hoplimit(&rt->dst);
		iph->protocol = IPPROTO_UDP;
		iph->saddr = fl4.saddr;
		iph->daddr = fl4.daddr;
		if (skb == head) {
			ip_select_ident_segs(net, skb, NULL,
					     skb_queue_len(pkts));
			id = ntohs(iph->id);
		} else {
			/* as segmentation numbers the batch's packets */
			iph->id = htons(++id);
		}
		ip_send_check(iph);

		err = eroce_pkt_seal(skb);
		if (err) {
			__skb_queue_purge(pkts);
			return err;
		}
	}

	if (eroce_xmit_is_loopback(ndev, &rt->dst))
		return eroce_xmit_loopback_all(edev, ndev, pkts);
	if (skb_queue_len(pkts) > 1)
		head = eroce_xmit_gso(pkts, seg_len);
	else
		__skb_unlink(head, pkts);
	/* the pseudo-header sum, for segmentation or the checksum offload */
	udp_set_csum(false, head, fl4.saddr, fl4.daddr,
		     head->len - skb_transport_offset(head));

	memset(IPCB(head), 0, sizeof(*IPCB(head)));
	head->protocol = htons(ETH_P_IP);
	head->dev = rt->dst.dev;
	eroce_xmit_priority(edev, av, head->dev, head);
	/* __ip_local_out() sets the batch's IP total length */
	return ip_local_out(net, eroce_net_sk(edev->net, false), head);
}

/* the IPv6 route of @av, likewise */
static noinline struct dst_entry *eroce_route6(struct net *net,
					       struct sock *sk,
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

ALLOW_ERROR_INJECTION(eroce_route6, ERRNO);

static int eroce_xmit6(struct eroce_dev *edev, struct net_device *ndev,
		       const struct eroce_av *av, struct dst_cache *route,
		       u16 sport, struct sk_buff_head *pkts, u32 seg_len)
{
	struct sock *sk = eroce_net_sk(edev->net, true);
	struct sk_buff *head = skb_peek(pkts);
	struct net *net = dev_net(ndev);
	struct flowi6 fl6 = {};
	struct dst_entry *dst;
	struct sk_buff *skb;

	if (!sk) {
		__skb_queue_purge(pkts);
		return -EAFNOSUPPORT;
	}

	dst = eroce_route6(net, sk, ndev, av, route, &fl6);
	if (IS_ERR(dst)) {
		__skb_queue_purge(pkts);
		return PTR_ERR(dst);
	}
	skb_dst_set(head, dst);

	skb_queue_walk(pkts, skb) {
		struct ipv6hdr *ip6h;

		eroce_push_udp(skb, sport);
		ip6h = skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6_flow_hdr(ip6h, eroce_xmit_tclass(edev, av),
			     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = av->hop_limit ?: ip6_dst_hoplimit(dst);
		ip6h->saddr = fl6.saddr;
		ip6h->daddr = fl6.daddr;

		if (eroce_pkt_seal(skb)) {
			__skb_queue_purge(pkts);
			return -EINVAL;
		}
	}

	if (eroce_xmit_is_loopback(ndev, dst))
		return eroce_xmit_loopback_all(edev, ndev, pkts);
	if (skb_queue_len(pkts) > 1)
		head = eroce_xmit_gso(pkts, seg_len);
	else
		__skb_unlink(head, pkts);
	/* the pseudo-header sum, for segmentation or the checksum offload */
	udp6_set_csum(false, head, &fl6.saddr, &fl6.daddr,
		      head->len - skb_transport_offset(head));

	memset(IP6CB(head), 0, sizeof(*IP6CB(head)));
	head->protocol = htons(ETH_P_IPV6);
	head->dev = dst->dev;
	eroce_xmit_priority(edev, av, head->dev, head);
	/* ip6_local_out() sets the batch's payload length */
	return ip6_local_out(net, sk, head);
}

/*
 * Encapsulate and send @pkts (one packet, or a batch of equal-sized ones
 * but for a shorter last one, each @seg_len long), consumed in every case.
 * Return as eroce_pkt_xmit(); a batch is sent or dropped as a whole.
 */
static int eroce_pkts_xmit(struct eroce_dev *edev, const struct eroce_av *av,
			   struct dst_cache *route, u16 sport,
			   struct sk_buff_head *pkts, u32 seg_len)
{
	u32 npkts = skb_queue_len(pkts);
	struct net_device *ndev;
	struct sk_buff *skb;
	u64 len = 0;
	int err;

	skb_queue_walk(pkts, skb)
		len += skb->len;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(av->sgid_attr);
	if (IS_ERR(ndev)) {
		err = PTR_ERR(ndev);
		__skb_queue_purge(pkts);
	} else if (av->network_type == RDMA_NETWORK_IPV4) {
		err = eroce_xmit4(edev, ndev, av, route, sport, pkts, seg_len);
	} else {
		err = eroce_xmit6(edev, ndev, av, route, sport, pkts, seg_len);
	}
	rcu_read_unlock();

	/*
	 * The packets are consumed.  net_xmit_eval() hides congestion
	 * notification; what is left positive is a qdisc's drop.
	 */
	err = net_xmit_eval(err);
	if (err > 0)
		err = -ENOBUFS;
	if (err) {
		eroce_stat_add(edev, EROCE_CNT_TX_ERRORS, npkts);
		return err;
	}
	eroce_stat_add(edev, EROCE_CNT_TX_PACKETS, npkts);
	eroce_stat_add(edev, EROCE_CNT_TX_BYTES, len);
	if (npkts > 1)
		eroce_stat_inc(edev, EROCE_CNT_TX_BATCHES);
	return 0;
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
	struct sk_buff_head one;

	__skb_queue_head_init(&one);
	__skb_queue_tail(&one, skb);
	return eroce_pkts_xmit(edev, av, route, sport, &one, skb->len);
}

/* the UDP source port of a connected QP's flow */
static u16 eroce_qp_sport(struct eroce_qp *qp)
{
	/* both directions of a connection use the same hash of the QPNs */
	return rdma_get_udp_sport(qp->attrs.av.flow_label, qp->ibqp.qp_num,
				  READ_ONCE(qp->attrs.dest_qp_num));
}

/**
 * eroce_tx_batch_fits() - may a packet join a batch?
 * @qp: the QP whose packets the batch holds
 * @b: the batch
 * @len: the packet's length (skb->len of a packet from eroce_pkt_alloc())
 *
 * An empty batch takes any packet.  A packet joins a batch when the
 * device's `tx_batch` tunable is on, it is no longer than the packets
 * before it, none of those was shorter, and the batch stays within one
 * IP packet's length and its max_pkts.
 */
bool eroce_tx_batch_fits(struct eroce_qp *qp, const struct eroce_tx_batch *b,
			 u32 len)
{
	struct sk_buff *last = skb_peek_tail(&b->pkts);
	u32 room = IP_MAX_MTU - sizeof(struct ipv6hdr) - sizeof(struct udphdr);

	if (!last)
		return true;
	if (!READ_ONCE(to_eroce_dev(qp->ibqp.device)->tuning.tx_batch))
		return false;
	return last->len == b->seg_len && len <= b->seg_len &&
	       b->len + len <= room && eroce_tx_batch_count(b) < b->max_pkts;
}

/* add a packet that eroce_tx_batch_fits() */
void eroce_tx_batch_add(struct eroce_tx_batch *b, struct sk_buff *skb)
{
	if (skb_queue_empty(&b->pkts))
		b->seg_len = skb->len;
	b->len += skb->len;
	__skb_queue_tail(&b->pkts, skb);
}

/*
 * Out through the netdev queue of the QP's CPU, whichever CPU sends: XPS
 * picks a queue by the sending CPU (skb->sender_cpu, which the stack sets
 * only where it is 0), and the packets of one QP on two queues could
 * overtake one another on the way out (a user doorbell sends from the
 * poster's CPU).  A netdev without XPS picks by the flow's hash: one
 * queue too.
 */
static void eroce_xmit_pin_queue(struct eroce_qp *qp, struct sk_buff_head *pkts)
{
#ifdef CONFIG_XPS
	struct sk_buff *skb;

	skb_queue_walk(pkts, skb)
		skb->sender_cpu = qp->eng.cpu + 1;
#endif
}

/**
 * eroce_qp_xmit_batch() - send a batch on a connected QP's path
 * @qp: an RC or UC QP with its address vector set
 * @b: the batch, empty afterwards
 *
 * As eroce_pkt_xmit(), through the QP's route cache, from the UDP source
 * port of the QP's flow, through the netdev queue of the QP's CPU.  The
 * engines send through eroce_qp_send_batch(), which calls this in the
 * QP's transmit context.
 * Context: the QP's engine lock held.
 * Return: as eroce_pkt_xmit(), for all of the batch's packets.
 */
int eroce_qp_xmit_batch(struct eroce_qp *qp, struct eroce_tx_batch *b)
{
	u32 seg_len = b->seg_len;

	lockdep_assert_held(&qp->eng.lock);
	if (skb_queue_empty(&b->pkts))
		return 0;
	eroce_xmit_pin_queue(qp, &b->pkts);
	b->seg_len = 0;
	b->len = 0;
	return eroce_pkts_xmit(to_eroce_dev(qp->ibqp.device), &qp->attrs.av,
			       &qp->eng.route, eroce_qp_sport(qp), &b->pkts,
			       seg_len);
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
