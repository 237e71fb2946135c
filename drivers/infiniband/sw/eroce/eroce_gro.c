// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_gro.c - RoCEv2 packets from a NIC received in batches (UDP GRO).
 *
 * It owns the gro_receive and gro_complete hooks of the namespace's
 * UDP/4791 sockets, installed by eroce_gro_sock_setup() when eroce_net.c
 * opens them, as a UDP tunnel installs its own, with eroce_recv.c's
 * encap_rcv, which gets what GRO made.  A netdev with generic GRO on
 * (and no XDP program) calls eroce_gro_receive() for each RoCEv2 packet
 * of a NAPI poll, once udp4_gro_receive() or udp6_gro_receive() has
 * checked its UDP checksum (or found it zero), and udp_gro_receive() has
 * kept as the same flow only the held packets with the same addresses
 * and UDP ports.
 *
 * Among those, a packet joins the held one of its destination QP (BTH
 * DestQP): chained to its frag_list, with skb->data left at its own IP
 * header, so that every packet keeps the IP and UDP headers its sender
 * sent and its ICRC is checked against exactly those, whatever IPv4 IDs
 * the sender used (rdma_rxe and RoCE NICs do not number them one after the
 * other, which the IP layer's own UDP GRO would need).  A batch holds at
 * most the device's gro_batch packets, under 64 KiB.  What is not a plain
 * RoCEv2 packet to this host is not held: anything the IP layer flags
 * (padding, fragments, IPv4 options, a GSO or frag_list skb), IPv6
 * extension headers, a BTH that is not all there, multicast, an address
 * that is not this host's (a forwarded batch could not be cut back into
 * its packets), a NIC without an eroce device on it, its master or the
 * VLAN device of its tag; it goes up at once, after the held packets of
 * its QP, which keeps a QP's packets in order.  udp_gro_receive() keeps
 * packets with and without a UDP checksum in separate flows: a sender that
 * mixes them in one QP's stream (eroce sends a checksum in every packet,
 * rdma_rxe and RoCE NICs in none) may see its packets of one poll
 * reordered, which the transport recovers from as from reordering on the
 * wire.  At the end of the poll eroce_gro_complete() marks a batch
 * SKB_GSO_FRAGLIST | SKB_GSO_UDP_L4, as the IP layer's fraglist GRO does,
 * beside the tunnel flag udp_gro_complete() set: the sockets accept both
 * (udp_allow_gso()), and the UDP stack cuts only GSO skbs without a
 * tunnel flag before an encap_rcv, so it hands the batch whole to
 * eroce_recv_encap(), and eroce_recv.c walks it (eroce_recv_flist()).
 *
 * Context: softirq, in the NAPI poll, under rcu_read_lock(); process
 * context for eroce_gro_sock_setup().  No locks of its own: the device is
 * looked up with a reference for its gro_batch.
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ipv6.h>
#include <linux/sizes.h>
#include <net/gro.h>
#include <net/ipv6_stubs.h>
#include <net/udp_tunnel.h>

#include "eroce.h"

#define EROCE_MCAST_QPN		0xffffffU

/*
 * The gro_batch of the eroce device @skb came for; 0: none.  GRO runs on
 * the NIC: the device may be on it, on the bond or bridge it is a port
 * of, or on the VLAN device of a tag the NIC took off.
 */
static u32 eroce_gro_batch(const struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev, *upper;
	struct eroce_dev *edev;
	u32 batch;

	edev = eroce_dev_get_by_netdev(ndev);
	if (!edev) {
		upper = netdev_master_upper_dev_get_rcu(ndev);
		if (upper)
			edev = eroce_dev_get_by_netdev(upper);
	}
	if (!edev && skb_vlan_tag_present(skb)) {
		upper = __vlan_find_dev_deep_rcu(ndev, skb->vlan_proto,
						 skb_vlan_tag_get_id(skb));
		if (upper)
			edev = eroce_dev_get_by_netdev(upper);
	}
	if (!edev)
		return 0;
	batch = READ_ONCE(edev->tuning.gro_batch);
	ib_device_put(&edev->ibdev);
	return batch;
}

/* is @skb's destination an address of this host (not multicast)? */
static bool eroce_gro_to_host(struct sk_buff *skb)
{
	const void *nh = skb_gro_network_header(skb);
	struct net *net = dev_net(skb->dev);
	struct net_device *dev;

	if (!NAPI_GRO_CB(skb)->is_ipv6)
		return __ip_dev_find(net, ((const struct iphdr *)nh)->daddr,
				     false);
	dev = ipv6_stub->ipv6_dev_find(net, &((const struct ipv6hdr *)nh)->daddr,
				       NULL);
	return !IS_ERR_OR_NULL(dev);
}

/*
 * May @skb be held or chained?  The IP layer has set flush for padding,
 * fragments, options and GSO or frag_list skbs; IPv6 extension headers
 * and multicast QPs are left out here.
 */
static bool eroce_gro_plain(struct sk_buff *skb, u32 qpn)
{
	const struct ipv6hdr *ip6 = skb_gro_network_header(skb);

	if (NAPI_GRO_CB(skb)->flush || qpn == EROCE_MCAST_QPN ||
	    skb_gro_len(skb) < EROCE_BTH_BYTES + EROCE_ICRC_BYTES)
		return false;
	return !NAPI_GRO_CB(skb)->is_ipv6 || ip6->nexthdr == IPPROTO_UDP;
}

/*
 * The held packet of the same flow and destination QP as @skb, if any.
 * Same flow means the same header lengths: its BTH is at @skb's offset.
 * encap_mark says that it went through a tunnel hook, this one.
 */
static struct sk_buff *eroce_gro_find(struct list_head *head,
				      struct sk_buff *skb, u32 qpn)
{
	unsigned int off = skb_gro_offset(skb);
	const struct eroce_bth *bth;
	struct eroce_bth buf;
	struct sk_buff *p;

	list_for_each_entry(p, head, list) {
		if (!NAPI_GRO_CB(p)->same_flow || !NAPI_GRO_CB(p)->encap_mark)
			continue;
		bth = skb_header_pointer(p, off, sizeof(buf), &buf);
		if (bth && eroce_bth_qpn(bth) == qpn)
			return p;
	}
	return NULL;
}

/*
 * Chain @skb to the batch @p as skb_gro_receive_list() does (6.1 does not
 * export it), but without pulling @skb's headers: it keeps them, and
 * eroce_recv.c finds them at its network and transport headers, made
 * linear here (a napi_gro_frags() driver leaves them in a page).
 */
static int eroce_gro_chain(struct sk_buff *p, struct sk_buff *skb)
{
	/* the batch's IP length, set by inet_gro_complete(), fits 16 bits */
	if (p->len + skb->len >= SZ_64K)
		return -E2BIG;
	if (!pskb_may_pull(skb, skb_gro_offset(skb) + EROCE_BTH_BYTES))
		return -ENOMEM;

	if (NAPI_GRO_CB(p)->last == p)
		skb_shinfo(p)->frag_list = skb;
	else
		NAPI_GRO_CB(p)->last->next = skb;
	NAPI_GRO_CB(p)->last = skb;
	NAPI_GRO_CB(p)->count++;
	p->data_len += skb->len;
	p->len += skb->len;
	p->truesize += skb->truesize;
	skb_shinfo(p)->flags |= skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG;

	/* socket ownership, if any, goes to the batch */
	skb->destructor = NULL;
	skb->sk = NULL;
	/* udp4/6_gro_receive() checked its UDP checksum, or it is zero */
	skb->csum_valid = 1;
	NAPI_GRO_CB(skb)->same_flow = 1;
	return 0;
}

/*
 * The gro_receive hook: @skb at its BTH (udp_gro_receive() pulled the UDP
 * header).  Returns the held packet to complete now, or NULL.
 */
static struct sk_buff *eroce_gro_receive(struct sock *sk,
					 struct list_head *head,
					 struct sk_buff *skb)
{
	unsigned int off = skb_gro_offset(skb);
	const struct eroce_bth *bth;
	struct sk_buff *p;
	u32 qpn, batch = 0;
	int err;

	bth = skb_gro_header(skb, off + EROCE_BTH_BYTES, off);
	if (!bth) {
		NAPI_GRO_CB(skb)->flush = 1;
		return NULL;
	}
	qpn = eroce_bth_qpn(bth);
	p = eroce_gro_find(head, skb, qpn);

	/* a held packet passed eroce_gro_to_host(): the same addresses */
	if (eroce_gro_plain(skb, qpn) && (p || eroce_gro_to_host(skb)))
		batch = eroce_gro_batch(skb);
	if (batch < 2) {
		/* up at once, after the QP's held packets */
		NAPI_GRO_CB(skb)->flush = 1;
		return p;
	}
	if (!p)
		return NULL;		/* held: the first of a batch */
	if (NAPI_GRO_CB(p)->count >= batch)
		return p;		/* full: this one starts the next */
	err = eroce_gro_chain(p, skb);
	if (err == -ENOMEM)
		NAPI_GRO_CB(skb)->flush = 1;
	return err ? p : NULL;
}

/*
 * The gro_complete hook, for a batch of two packets or more: @nhoff is
 * the head's BTH.  inet_gro_complete() (ipv6_gro_complete()) and
 * udp4_gro_complete() (udp6_) have rewritten the head's IP and UDP
 * lengths to cover the whole batch, and its UDP checksum, if non-zero,
 * to that length's pseudo-header sum; eroce_recv.c works out the head's
 * own length from what its chained packets leave.  udp_gro_complete()
 * made it a tunnel's (SKB_GSO_UDP_TUNNEL, _CSUM with a checksum), which
 * keeps the UDP stack from cutting it before eroce_recv_encap(); it has
 * no inner headers, though.  Every packet's UDP checksum has been
 * checked, so the UDP stack must not check the batch as one datagram.
 */
static int eroce_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff)
{
	struct sk_buff *seg;
	unsigned int own = skb->len;

	skb_walk_frags(skb, seg)
		own -= seg->len;
	skb->encapsulation = 0;
	skb_shinfo(skb)->gso_type |= SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_size = own - nhoff;
	skb_shinfo(skb)->gso_segs = NAPI_GRO_CB(skb)->count;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
	return 0;
}

/**
 * eroce_gro_sock_setup() - install the receive hooks on a RoCEv2 socket
 * @sock: a UDP/4791 socket of eroce_net.c, not yet receiving
 *
 * setup_udp_tunnel_sock() sets the GRO hooks and eroce_recv.c's
 * encap_rcv, and enables the UDP stack's socket lookup in GRO and its
 * encap_rcv calls (udp_encap_needed_key, udpv6_encap_needed_key).  It
 * also does two things a RoCEv2 socket does not want, undone here: IPv4
 * multicast loopback off (eroce delivers a group's packets to the
 * sending host's own QPs, see eroce_net.c), and the conversion of
 * CHECKSUM_UNNECESSARY into CHECKSUM_COMPLETE for the encap_rcv, which
 * checks an ICRC and no checksum of the UDP payload.  IPv6 multicast
 * loopback is the IPv6 socket's own flag, which it leaves alone.
 *
 * Context: process context.
 */
void eroce_gro_sock_setup(struct socket *sock)
{
	struct udp_tunnel_sock_cfg cfg = {
		.encap_type = 1,
		.encap_rcv = eroce_recv_encap,
		.gro_receive = eroce_gro_receive,
		.gro_complete = eroce_gro_complete,
	};
	struct sock *sk = sock->sk;

	setup_udp_tunnel_sock(sock_net(sk), sock, &cfg);
	inet_sk(sk)->mc_loop = 1;
	inet_dec_convert_csum(sk);
}
