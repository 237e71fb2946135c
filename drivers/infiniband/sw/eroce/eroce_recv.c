// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_recv.c - RoCEv2 packets in: validation, then up to the transport.
 *
 * Everything here distrusts the network.  The UDP stack hands the
 * UDP/4791 sockets' packets to their encap_rcv hook, eroce_recv_encap(),
 * in the softirq of the CPU that received them, once it has checked the
 * UDP checksum; nothing is queued, so a QP's packets are taken in the
 * order they arrived.  Each is checked in this order, and each failure
 * is a drop with its own counter and a rate-limited debug line: an eroce
 * device on the receiving netdev or on the VLAN device's real device
 * (none: counted in the namespace's UDP InErrors), a linear buffer (a
 * batch that GRO chained, eroce_gro.c, is instead checked packet by
 * packet from here on, each with its own IP and UDP headers, which must
 * be where its skb says and agree with it, and its own UDP checksum),
 * transport headers that fit the packet and an opcode eroce knows
 * (eroce_hdr_check()), the ICRC, a destination GID of this device on this
 * netdev (or a multicast group).  A packet that passes goes up through
 * the one function registered at module init (eroce_dispatch.c), which
 * checks what depends on the QP: the multicast group's QPs, the
 * destination QP, its transport, the P_Key, the QP state and the peer's
 * address (eroce_deliver.c).  This file calls no file above the network
 * layer.
 *
 * Context: softirq, in the sockets' encap_rcv hook; or the loopback work
 * item of eroce_xmit.c, bottom halves off (eroce_recv_looped()).  No
 * locks of its own: the device is looked up with a reference, the
 * destination GID in ib_core's GID table.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip6_checksum.h>
#include <net/udp.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "eroce.h"
#include "eroce_fault.h"
#include "eroce_icrc.h"
#include "eroce_opcode.h"

/*
 * Where a packet that passed the checks goes up: eroce_dispatch.c's
 * eroce_dispatch(), registered at module init before any socket exists,
 * so that the network layer calls no file above it.
 */
static void (*eroce_recv_up)(struct eroce_dev *edev, struct eroce_rx *pkt,
			     const union ib_gid *sgid,
			     const union ib_gid *dgid,
			     bool mcast) __ro_after_init;

void __init eroce_recv_register(void (*up)(struct eroce_dev *edev,
					   struct eroce_rx *pkt,
					   const union ib_gid *sgid,
					   const union ib_gid *dgid,
					   bool mcast))
{
	eroce_recv_up = up;
}

/* what the packets of one skb (a packet or a batch) have in common */
struct eroce_recv_ctx {
	struct eroce_dev *edev;
	struct net_device *ndev;	/* the receiving netdev */
	union ib_gid sgid;
	union ib_gid dgid;
	bool ipv4;
	bool mcast;			/* dgid is a multicast group */
	u8 iph_len;
	int vlan_id;			/* ndev's, or -1 */
	bool shared;			/* an skb holds several packets */
	unsigned int passed;		/* packets that passed the checks */
	enum {
		EROCE_DGID_UNKNOWN,
		EROCE_DGID_OURS,
		EROCE_DGID_NOT_OURS,
	} dgid_state;
};

static struct eroce_dev *eroce_recv_dev(struct net_device *ndev)
{
	struct eroce_dev *edev = eroce_dev_get_by_netdev(ndev);

	if (!edev && is_vlan_dev(ndev))
		edev = eroce_dev_get_by_netdev(vlan_dev_real_dev(ndev));
	return edev;
}

/* the packet's source and destination addresses as GIDs */
static void eroce_recv_gids(const void *iph, union ib_gid *sgid,
			    union ib_gid *dgid)
{
	const struct iphdr *ip4 = iph;
	const struct ipv6hdr *ip6 = iph;

	if (ip4->version == 4) {
		ipv6_addr_set_v4mapped(ip4->saddr, (struct in6_addr *)sgid);
		ipv6_addr_set_v4mapped(ip4->daddr, (struct in6_addr *)dgid);
	} else {
		memcpy(sgid, &ip6->saddr, sizeof(*sgid));
		memcpy(dgid, &ip6->daddr, sizeof(*dgid));
	}
}

/* @len bytes from the BTH through the ICRC, at least BTH + ICRC */
static bool eroce_recv_icrc_ok(const struct eroce_recv_ctx *rx,
			       const void *iph, const struct udphdr *udph,
			       const u8 *bth, u32 len)
{
	u32 body = len - EROCE_BTH_BYTES - EROCE_ICRC_BYTES;
	__le32 icrc;
	u32 crc;

	crc = eroce_icrc_begin(iph, rx->iph_len, udph, bth);
	crc = eroce_icrc_update(crc, bth + EROCE_BTH_BYTES, body);
	icrc = eroce_icrc_final(crc);
	return !memcmp(&icrc, bth + len - EROCE_ICRC_BYTES, EROCE_ICRC_BYTES);
}

/* is the destination address ours? Looked up once per skb */
static bool eroce_recv_dgid_ok(struct eroce_recv_ctx *rx)
{
	const struct ib_gid_attr *gattr;

	if (rx->dgid_state == EROCE_DGID_UNKNOWN) {
		gattr = rdma_find_gid_by_port(&rx->edev->ibdev, &rx->dgid,
					      IB_GID_TYPE_ROCE_UDP_ENCAP, 1,
					      rx->ndev);
		rx->dgid_state = IS_ERR(gattr) ? EROCE_DGID_NOT_OURS :
						 EROCE_DGID_OURS;
		if (!IS_ERR(gattr))
			rdma_put_gid_attr(gattr);
	}
	return rx->dgid_state == EROCE_DGID_OURS;
}

/*
 * One RoCEv2 packet: @len bytes from the BTH at @bth through the ICRC,
 * held by @skb, with @iph and @udph the IP and UDP headers it was sent
 * with (a batch's packets each get their own: see eroce_recv_batch()).
 */
static void eroce_recv_pkt(struct eroce_recv_ctx *rx, struct sk_buff *skb,
			   const void *iph, const struct udphdr *udph,
			   u8 *bth, u32 len)
{
	struct eroce_dev *edev = rx->edev;
	struct eroce_hdr_info hi;
	struct eroce_rx pkt;
	int err;

	err = eroce_hdr_check(bth, len, &hi);
	if (err == -EOPNOTSUPP) {
		eroce_rx_drop(edev, DROP_BAD_OPCODE, "opcode %#x",
			      len ? bth[0] : 0);
		return;
	}
	if (err && len < EROCE_BTH_BYTES + EROCE_ICRC_BYTES) {
		eroce_rx_drop(edev, DROP_SHORT, "%u bytes", len);
		return;
	}
	if (err) {
		eroce_rx_drop(edev, DROP_BAD_HEADER, "malformed headers (%d)",
			      err);
		return;
	}

	if (!eroce_recv_icrc_ok(rx, iph, udph, bth, len)) {
		eroce_rx_drop(edev, DROP_ICRC, "bad ICRC");
		return;
	}

	if (!rx->mcast && !eroce_recv_dgid_ok(rx)) {
		eroce_rx_drop(edev, DROP_BAD_DGID,
			      "destination %pI6 is not ours", &rx->dgid);
		return;
	}

	rx->passed++;
	eroce_stat_inc(edev, EROCE_CNT_RX_PACKETS);
	eroce_stat_add(edev, EROCE_CNT_RX_BYTES, len);

	pkt.edev = edev;
	pkt.skb = skb;
	pkt.skb_shared = rx->shared;
	pkt.iph = iph;
	pkt.info = hi.op;
	pkt.bth = (struct eroce_bth *)bth;
	pkt.opcode = pkt.bth->opcode;
	pkt.psn = eroce_bth_psn(pkt.bth);
	pkt.payload = bth + hi.op->hdr_len;
	pkt.paylen = hi.paylen;
	pkt.vlan_id = rx->vlan_id;

	eroce_recv_up(edev, &pkt, &rx->sgid, &rx->dgid, rx->mcast);
}

/* an skb that holds one packet, skb->data at its BTH */
static void eroce_recv_one(struct eroce_recv_ctx *rx, struct sk_buff *skb)
{
	if (skb_linearize(skb)) {
		eroce_rx_drop(rx->edev, DROP_NOMEM, "cannot linearize");
		return;
	}
	eroce_recv_pkt(rx, skb, skb_network_header(skb), udp_hdr(skb),
		       skb->data, skb->len);
}

/*
 * The first packet of a GRO batch, @len bytes from its BTH at @skb->data:
 * its own IP and UDP headers, with the lengths GRO rewrote to cover the
 * batch set back to its own, which its ICRC covers.
 */
static void eroce_recv_head_pkt(struct eroce_recv_ctx *rx,
				struct sk_buff *skb, u32 len)
{
	u8 iph[EROCE_IPV4_HDR_MAX];
	struct udphdr udph = *udp_hdr(skb);
	u16 udp_len = sizeof(udph) + len;

	memcpy(iph, skb_network_header(skb), rx->iph_len);
	if (rx->ipv4)
		((struct iphdr *)iph)->tot_len = htons(rx->iph_len + udp_len);
	else
		((struct ipv6hdr *)iph)->payload_len = htons(udp_len);
	udph.len = htons(udp_len);
	eroce_recv_pkt(rx, skb, iph, &udph, skb->data, len);
}

/*
 * Take @head's frag_list off it, so that each packet pins its own skb
 * and not the whole batch (a packet selective repeat keeps, for one):
 * what is left of @head is its own packet.
 */
static struct sk_buff *eroce_recv_detach(struct sk_buff *head)
{
	struct sk_buff *list = skb_shinfo(head)->frag_list, *seg;

	skb_shinfo(head)->frag_list = NULL;
	for (seg = list; seg; seg = seg->next) {
		head->len -= seg->len;
		head->data_len -= seg->len;
		head->truesize -= seg->truesize;
	}
	return list;
}

/*
 * Its own IP and UDP headers, which a packet chained by GRO kept: where
 * its network and transport headers say, in @skb's linear part (@skb
 * linear from its network header to its end), lengths that are those of
 * @skb and the batch's addresses and ports.  Return: its BTH, or NULL.
 */
static u8 *eroce_recv_chained_hdrs(const struct eroce_recv_ctx *rx,
				   const struct sk_buff *skb,
				   const struct udphdr *head_udph)
{
	const u8 *nh = skb_network_header(skb);
	const struct udphdr *udph;
	union ib_gid sgid, dgid;
	u32 len, ip_len;

	if (nh < skb->head || nh > skb->data + skb->len)
		return NULL;
	len = skb->data + skb->len - nh;
	if (len < rx->iph_len + sizeof(*udph) + EROCE_BTH_BYTES +
		  EROCE_ICRC_BYTES ||
	    skb_transport_header(skb) != nh + rx->iph_len)
		return NULL;

	if (rx->ipv4) {
		const struct iphdr *ip4 = (const struct iphdr *)nh;

		if (ip4->version != 4 || ip4->ihl * 4 != rx->iph_len ||
		    ip4->protocol != IPPROTO_UDP || ip_is_fragment(ip4))
			return NULL;
		ip_len = ntohs(ip4->tot_len);
	} else {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)nh;

		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return NULL;
		ip_len = sizeof(*ip6) + ntohs(ip6->payload_len);
	}
	udph = (const struct udphdr *)(nh + rx->iph_len);
	if (ip_len != len || ntohs(udph->len) != len - rx->iph_len ||
	    udph->source != head_udph->source || udph->dest != head_udph->dest)
		return NULL;

	eroce_recv_gids(nh, &sgid, &dgid);
	if (memcmp(&sgid, &rx->sgid, sizeof(sgid)) ||
	    memcmp(&dgid, &rx->dgid, sizeof(dgid)))
		return NULL;
	return (u8 *)udph + sizeof(*udph);
}

/* a non-zero UDP checksum that GRO has not checked, over its own bytes */
static bool eroce_recv_chained_csum_ok(const struct eroce_recv_ctx *rx,
				       struct sk_buff *skb,
				       const struct udphdr *udph)
{
	u32 len = ntohs(udph->len);
	__wsum csum;

	if (!udph->check || skb_csum_unnecessary(skb))
		return true;
	csum = csum_partial(udph, len, 0);
	if (rx->ipv4)
		return !csum_tcpudp_magic(ip_hdr(skb)->saddr, ip_hdr(skb)->daddr,
					  len, IPPROTO_UDP, csum);
	return !csum_ipv6_magic(&ipv6_hdr(skb)->saddr, &ipv6_hdr(skb)->daddr,
				len, IPPROTO_UDP, csum);
}

/*
 * A packet chained by GRO, @seg, with its own headers: received as if it
 * had come alone.  @seg is ours alone (detached from its batch), or is
 * still part of a shared batch: then a non-linear one is copied.
 * Return: @seg or the copy, which the caller frees.
 */
static struct sk_buff *eroce_recv_chained(struct eroce_recv_ctx *rx,
					  struct sk_buff *seg,
					  const struct udphdr *head_udph)
{
	struct sk_buff *skb = seg;
	u8 *bth;

	if (skb_is_nonlinear(seg)) {
		if (rx->shared)
			skb = skb_copy(seg, GFP_ATOMIC);
		if (!skb || (skb == seg && skb_linearize(skb))) {
			eroce_rx_drop(rx->edev, DROP_NOMEM,
				      "cannot linearize a GRO packet");
			return skb ?: seg;
		}
	}
	bth = eroce_recv_chained_hdrs(rx, skb, head_udph);
	if (!bth) {
		eroce_rx_drop(rx->edev, DROP_BAD_GRO,
			      "GRO packet with headers not its own");
		return skb;
	}
	if (!eroce_recv_chained_csum_ok(rx, skb, udp_hdr(skb))) {
		eroce_rx_drop(rx->edev, DROP_UDP_CSUM,
			      "bad UDP checksum in a GRO batch");
		return skb;
	}
	eroce_recv_pkt(rx, skb, skb_network_header(skb), udp_hdr(skb), bth,
		       skb->data + skb->len - bth);
	return skb;
}

/*
 * The first packet of a GRO batch, @own bytes from head->data (its BTH):
 * GRO rewrote its IP and UDP lengths to cover the batch, so it gets
 * headers with its own lengths.  In place when it is linear, else from a
 * linear copy.
 */
static void eroce_recv_flist_head(struct eroce_recv_ctx *rx,
				  struct sk_buff *head, u32 own)
{
	struct sk_buff *skb = head;

	if (skb_headlen(head) < own) {
		if (rx->shared)
			skb = skb_copy(head, GFP_ATOMIC);
		if (!skb || (skb == head && skb_linearize(skb))) {
			eroce_rx_drop(rx->edev, DROP_NOMEM,
				      "cannot linearize a GRO packet");
			return;
		}
	}
	eroce_recv_head_pkt(rx, skb, own);
	if (skb != head)
		consume_skb(skb);
}

/*
 * A GRO batch of eroce_gro.c (the IP layer's fraglist GRO skbs carry no
 * tunnel flag: the UDP stack cuts them into their packets first).  Its
 * first packet is in the head; each further one is a frag_list skb with
 * the IP and UDP headers it was sent with at its network and transport
 * headers, skb->data at them.  Walked in one pass, each packet validated
 * as if it had come alone; unless a packet tap shares the batch, each is
 * detached first, so that a packet kept for selective repeat pins its
 * own skb only.  One without a frag_list was not made there: dropped.
 */
static void eroce_recv_flist(struct eroce_recv_ctx *rx, struct sk_buff *head)
{
	bool detach = !skb_cloned(head) && !skb_shared(head);
	struct udphdr head_udph = *udp_hdr(head);
	struct sk_buff *list, *seg, *next, *skb;
	unsigned int passed, count = 1;
	u32 own = head->len;

	if (!skb_has_frag_list(head)) {
		eroce_rx_drop(rx->edev, DROP_BAD_GRO, "GRO batch without its packets");
		return;
	}
	skb_walk_frags(head, seg) {
		if (seg->len > own) {
			eroce_rx_drop(rx->edev, DROP_BAD_GRO,
				      "GRO batch of %u bytes", head->len);
			return;
		}
		own -= seg->len;
		count++;
	}
	eroce_stat_inc(rx->edev, EROCE_CNT_RX_GRO_BATCHES);
	eroce_stat_add(rx->edev, EROCE_CNT_RX_GRO_PACKETS, count);
	if (detach) {
		list = eroce_recv_detach(head);
	} else {
		list = skb_shinfo(head)->frag_list;
		rx->shared = true;
	}

	eroce_recv_flist_head(rx, head, own);
	skb_list_walk_safe(list, seg, next) {
		if (detach)
			skb_mark_not_on_list(seg);
		passed = rx->passed;
		skb = eroce_recv_chained(rx, seg, &head_udph);
		if (skb != seg || detach) {
			if (rx->passed != passed)
				consume_skb(skb);
			else
				kfree_skb(skb);
		}
	}
}

/* a datagram the namespace's UDP statistics count as an error */
static void eroce_recv_udp_error(struct sock *sk)
{
	if (sk->sk_family == AF_INET)
		__UDP_INC_STATS(sock_net(sk), UDP_MIB_INERRORS, 0);
	else
		__UDP6_INC_STATS(sock_net(sk), UDP_MIB_INERRORS, 0);
}

/*
 * eroce_recv_skb() - receive a packet or a GRO batch of packets
 * @sk: the namespace's UDP/4791 socket it came through, or NULL (looped
 *	back by eroce_xmit.c: never a batch)
 * @skb: skb->data at the first BTH, skb->dev the receiving netdev;
 *	consumed
 */
static void eroce_recv_skb(struct sock *sk, struct sk_buff *skb)
{
	struct eroce_recv_ctx rx = {};

	rx.ndev = skb->dev;
	rx.edev = eroce_recv_dev(rx.ndev);
	if (eroce_should_fail(EROCE_FAULT_RX_NETDEV) && rx.edev) {
		ib_device_put(&rx.edev->ibdev);
		rx.edev = NULL;
	}
	/*
	 * None: a netdev without eroce, or one whose device is going away
	 * (unregistering unlists it before the packets in flight are gone)
	 */
	if (!rx.edev) {
		if (sk)
			eroce_recv_udp_error(sk);
		net_dbg_ratelimited("eroce: drop: no device on %s\n",
				    netdev_name(rx.ndev));
		goto out_free;
	}

	rx.ipv4 = ip_hdr(skb)->version == 4;
	rx.iph_len = rx.ipv4 ? ip_hdrlen(skb) : sizeof(struct ipv6hdr);
	eroce_recv_gids(skb_network_header(skb), &rx.sgid, &rx.dgid);
	rx.mcast = rdma_is_multicast_addr((struct in6_addr *)rx.dgid.raw);
	rx.vlan_id = is_vlan_dev(rx.ndev) ? vlan_dev_vlan_id(rx.ndev) : -1;

	if (!skb_is_gso(skb))
		eroce_recv_one(&rx, skb);
	else if (skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST)
		eroce_recv_flist(&rx, skb);
	else
		/* only a tunnel's GSO skb reaches here uncut: not RoCEv2 */
		eroce_rx_drop(rx.edev, DROP_BAD_GSO, "GSO skb of type %#x",
			      skb_shinfo(skb)->gso_type);

	ib_device_put(&rx.edev->ibdev);
out_free:
	/* what passed the checks was delivered: no drop for drop monitors */
	if (rx.passed)
		consume_skb(skb);
	else
		kfree_skb(skb);
}

/**
 * eroce_recv_encap() - the encap_rcv hook of the RoCEv2 sockets
 * @sk: the namespace's UDP/4791 socket
 * @skb: a packet, or a batch that eroce_gro.c made, skb->data at its UDP
 *	header; consumed
 *
 * Called by the UDP stack in the softirq of the CPU that received @skb,
 * once it has checked the UDP checksum (or found it zero) and cut every
 * GSO skb that is not a tunnel's into its packets: nothing is queued, so
 * each CPU takes only what it received itself, in the order it did, and
 * a QP's packets, which one flow carries, reach it in arrival order.
 *
 * Return: 0, the skb consumed, as the UDP stack counts it received.
 */
int eroce_recv_encap(struct sock *sk, struct sk_buff *skb)
{
	/* linear: __udp4_lib_rcv() and __udp6_lib_rcv() pulled it in */
	__skb_pull(skb, sizeof(struct udphdr));
	eroce_recv_skb(sk, skb);
	return 0;
}

/**
 * eroce_recv_looped() - receive a packet eroce_xmit.c looped back
 * @skb: skb->data at the BTH, skb->dev the netdev (the caller holds it);
 *	consumed
 *
 * Context: bottom halves off.
 */
void eroce_recv_looped(struct sk_buff *skb)
{
	eroce_recv_skb(NULL, skb);
}
