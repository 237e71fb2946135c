// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_recv.c - RoCEv2 packets in: validation and dispatch.
 *
 * Everything here distrusts the network.  A packet reaching the UDP/4791
 * socket is checked in this order, and each failure is a drop with its
 * own counter and a rate-limited debug line: an eroce device on the
 * receiving netdev (or the VLAN device's real device), a linear buffer,
 * transport headers that fit the packet and an opcode eroce knows
 * (eroce_hdr_check()), the ICRC, a destination GID of this device on this
 * netdev (or a multicast group with QPs attached: eroce_mcast.c hands the
 * packet to each of them), the destination QP, the QP's transport, the
 * P_Key, the QP state and, for a connected QP, the source address of its
 * peer.  Only then do the responder (requests) or the completer
 * (responses) see it; a CNP (checked the same way) goes to the named QP's
 * rate control, and a packet marked ECN CE makes its QP send one
 * (eroce_rate.c).
 *
 * Context: softirq (UDP encap_rcv).  Locks: the QP's engine lock around
 * the QP state and source checks, the responder and the completer.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "eroce.h"
#include "eroce_icrc.h"
#include "eroce_opcode.h"

#define eroce_rx_drop(edev, cnt, fmt, ...)				\
	do {								\
		struct eroce_dev *__edev = (edev);			\
									\
		eroce_stat_inc(__edev, EROCE_CNT_##cnt);		\
		net_dbg_ratelimited("eroce: %s: drop: " fmt "\n",	\
				    dev_name(&__edev->ibdev.dev),	\
				    ##__VA_ARGS__);			\
	} while (0)

static struct eroce_dev *eroce_recv_dev(struct net_device *ndev)
{
	struct eroce_dev *edev = eroce_dev_get_by_netdev(ndev);

	if (!edev && is_vlan_dev(ndev))
		edev = eroce_dev_get_by_netdev(vlan_dev_real_dev(ndev));
	return edev;
}

/* the packet's source and destination addresses as GIDs */
static void eroce_recv_gids(struct sk_buff *skb, union ib_gid *sgid,
			    union ib_gid *dgid)
{
	if (ip_hdr(skb)->version == 4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr,
				       (struct in6_addr *)sgid);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid);
	} else {
		memcpy(sgid, &ipv6_hdr(skb)->saddr, sizeof(*sgid));
		memcpy(dgid, &ipv6_hdr(skb)->daddr, sizeof(*dgid));
	}
}

static bool eroce_recv_icrc_ok(struct sk_buff *skb)
{
	u8 *nh = skb_network_header(skb);
	u32 len = skb_tail_pointer(skb) - nh;
	__le32 icrc;

	if (len < EROCE_ICRC_BYTES ||
	    eroce_icrc_linear(nh, len - EROCE_ICRC_BYTES, &icrc))
		return false;
	return !memcmp(&icrc, skb_tail_pointer(skb) - EROCE_ICRC_BYTES,
		       EROCE_ICRC_BYTES);
}

static bool eroce_recv_qp_state_ok(struct eroce_qp *qp, u32 flags)
{
	enum ib_qp_state state = eroce_qp_state(qp);

	if (flags & EROCE_OPF_RESP)
		return state == IB_QPS_RTS || state == IB_QPS_SQD;
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

/* did a switch on the way mark the packet Congestion Experienced? */
static bool eroce_recv_ecn_ce(struct sk_buff *skb)
{
	u8 tos = ip_hdr(skb)->version == 4 ? ip_hdr(skb)->tos :
		 ipv6_get_dsfield(ipv6_hdr(skb));

	return INET_ECN_is_ce(tos);
}

/* a CNP: the peer saw congestion on the packets of the QP it names */
static void eroce_recv_cnp(struct eroce_dev *edev, struct eroce_rx *pkt,
			   const union ib_gid *sgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);
	struct eroce_qp *qp;

	eroce_stat_inc(edev, EROCE_CNT_CNP_RCVD);
	qp = eroce_qp_get(&edev->res, qpn);
	if (!qp) {
		eroce_rx_drop(edev, DROP_NO_QP, "CNP for no QP %u", qpn);
		return;
	}
	/* the state and the AV change only under the engine lock */
	spin_lock_bh(&qp->eng.lock);
	if (!eroce_qp_connected(qp) ||
	    !eroce_recv_qp_state_ok(qp, EROCE_OPF_RESP)) {
		eroce_rx_drop(edev, DROP_QP_STATE, "CNP for QP %u, not an RC or UC QP sending",
			      qpn);
	} else if (memcmp(sgid, &qp->attrs.av.dgid, sizeof(*sgid))) {
		eroce_rx_drop(edev, DROP_BAD_SRC, "CNP for QP %u: not from its peer",
			      qpn);
	} else {
		eroce_rate_cnp_rcvd(qp);
	}
	spin_unlock_bh(&qp->eng.lock);
	eroce_qp_put(qp);
}

/**
 * eroce_recv_deliver() - hand a validated packet to one QP
 * @edev: the receiving device
 * @pkt: the packet
 * @sgid: its source address
 * @qp: the QP it names, or one attached to its multicast group; the
 *	caller holds a reference
 *
 * Checks what depends on the QP (its type, the P_Key, its state and, for a
 * connected QP, the peer), then gives the packet to the responder or the
 * completer.  Context: softirq; takes the QP's engine lock.
 */
void eroce_recv_deliver(struct eroce_dev *edev, struct eroce_rx *pkt,
			const union ib_gid *sgid, struct eroce_qp *qp)
{
	u32 qpn = qp->ibqp.qp_num;
	u32 flags = pkt->info->flags;

	if (!(flags & eroce_qp_type_opf(qp->ibqp.qp_type))) {
		eroce_rx_drop(edev, DROP_QP_TYPE, "%s for QP %u",
			      eroce_opcode_name(pkt->opcode), qpn);
		return;
	}
	/* one P_Key (0xffff): compare the 15 key bits */
	if ((eroce_bth_pkey(pkt->bth) & 0x7fff) !=
	    (EROCE_DEFAULT_PKEY & 0x7fff)) {
		eroce_rx_drop(edev, DROP_BAD_PKEY, "P_Key %#x for QP %u",
			      eroce_bth_pkey(pkt->bth), qpn);
		return;
	}

	/*
	 * The state and the AV change only under the engine lock
	 * (eroce_qp_engine_modify()): checked under it, they hold for the
	 * whole packet.
	 */
	spin_lock_bh(&qp->eng.lock);
	if (!eroce_recv_qp_state_ok(qp, flags)) {
		eroce_rx_drop(edev, DROP_QP_STATE, "QP %u in state %d", qpn,
			      eroce_qp_state(qp));
		goto out_unlock;
	}
	if (eroce_qp_connected(qp) &&
	    memcmp(sgid, &qp->attrs.av.dgid, sizeof(*sgid))) {
		eroce_rx_drop(edev, DROP_BAD_SRC, "QP %u: not from its peer",
			      qpn);
		goto out_unlock;
	}
	if (eroce_recv_ecn_ce(pkt->skb)) {
		eroce_stat_inc(edev, EROCE_CNT_ECN_CE_RCVD);
		eroce_rate_ecn_ce(qp);
	}
	eroce_qp_rcvd(qp);
	if (flags & EROCE_OPF_RESP)
		eroce_comp_rcv(qp, pkt);
	else
		eroce_resp_rcv(qp, pkt);
out_unlock:
	spin_unlock_bh(&qp->eng.lock);
}

static void eroce_recv_qp(struct eroce_dev *edev, struct eroce_rx *pkt,
			  const union ib_gid *sgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);
	struct eroce_qp *qp;

	qp = eroce_qp_get(&edev->res, qpn);
	if (!qp) {
		eroce_rx_drop(edev, DROP_NO_QP, "no QP %u", qpn);
		return;
	}
	eroce_recv_deliver(edev, pkt, sgid, qp);
	eroce_qp_put(qp);
}

/* a packet for a multicast group: a copy for each QP attached to it */
static void eroce_recv_mcast(struct eroce_dev *edev, struct eroce_rx *pkt,
			     const union ib_gid *sgid,
			     const union ib_gid *mgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);

	if (qpn != IB_MULTICAST_QPN) {
		eroce_rx_drop(edev, DROP_MCAST_QPN, "QP %u for group %pI6",
			      qpn, mgid);
		return;
	}
	if (!eroce_mcast_rcv(edev, pkt, sgid, mgid))
		eroce_rx_drop(edev, DROP_MCAST_NO_GROUP,
			      "no QP attached to group %pI6", mgid);
}

/**
 * eroce_recv() - the UDP tunnel receive hook of the RoCEv2 sockets
 * @sk: the namespace's UDP/4791 socket
 * @skb: the packet, skb->data at the UDP header
 *
 * Return: 0, the packet is always consumed.
 */
int eroce_recv(struct sock *sk, struct sk_buff *skb)
{
	struct eroce_hdr_info hi;
	union ib_gid sgid, dgid;
	const struct ib_gid_attr *gattr;
	struct eroce_dev *edev;
	struct eroce_rx pkt;
	bool mcast;
	int err;

	edev = eroce_recv_dev(skb->dev);
	if (!edev) {
		net_dbg_ratelimited("eroce: drop: no device on %s\n",
				    skb->dev ? netdev_name(skb->dev) : "?");
		goto out_free;
	}

	if (skb_linearize(skb)) {
		eroce_rx_drop(edev, DROP_NOMEM, "cannot linearize");
		goto out_put_dev;
	}
	__skb_pull(skb, sizeof(struct udphdr));

	err = eroce_hdr_check(skb->data, skb->len, &hi);
	if (err == -EOPNOTSUPP) {
		eroce_rx_drop(edev, DROP_BAD_OPCODE, "opcode %#x",
			      skb->len ? skb->data[0] : 0);
		goto out_put_dev;
	}
	if (err && skb->len < EROCE_BTH_BYTES + EROCE_ICRC_BYTES) {
		eroce_rx_drop(edev, DROP_SHORT, "%u bytes", skb->len);
		goto out_put_dev;
	}
	if (err) {
		eroce_rx_drop(edev, DROP_BAD_HEADER, "malformed headers (%d)",
			      err);
		goto out_put_dev;
	}

	if (!eroce_recv_icrc_ok(skb)) {
		eroce_rx_drop(edev, DROP_ICRC, "bad ICRC");
		goto out_put_dev;
	}

	eroce_recv_gids(skb, &sgid, &dgid);
	mcast = rdma_is_multicast_addr((struct in6_addr *)dgid.raw);
	if (!mcast) {
		gattr = rdma_find_gid_by_port(&edev->ibdev, &dgid,
					      IB_GID_TYPE_ROCE_UDP_ENCAP, 1,
					      skb->dev);
		if (IS_ERR(gattr)) {
			eroce_rx_drop(edev, DROP_BAD_DGID,
				      "destination %pI6 is not ours", &dgid);
			goto out_put_dev;
		}
		rdma_put_gid_attr(gattr);
	}

	eroce_stat_inc(edev, EROCE_CNT_RX_PACKETS);
	eroce_stat_add(edev, EROCE_CNT_RX_BYTES, skb->len);

	pkt.edev = edev;
	pkt.skb = skb;
	pkt.info = hi.op;
	pkt.bth = (struct eroce_bth *)skb->data;
	pkt.opcode = pkt.bth->opcode;
	pkt.psn = eroce_bth_psn(pkt.bth);
	pkt.payload = skb->data + hi.op->hdr_len;
	pkt.paylen = hi.paylen;
	pkt.vlan_id = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) : -1;

	if (mcast)
		eroce_recv_mcast(edev, &pkt, &sgid, &dgid);
	else if (hi.op->flags & EROCE_OPF_CNP)
		eroce_recv_cnp(edev, &pkt, &sgid);
	else
		eroce_recv_qp(edev, &pkt, &sgid);

out_put_dev:
	ib_device_put(&edev->ibdev);
out_free:
	kfree_skb(skb);
	return 0;
}
