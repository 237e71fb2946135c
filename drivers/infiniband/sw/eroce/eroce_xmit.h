/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* eroce: RoCEv2 packets out (eroce_xmit.c) */
#ifndef EROCE_XMIT_H
#define EROCE_XMIT_H

#include <linux/skbuff.h>

#include "eroce_wire.h"

struct dst_cache;
struct net_device;
struct eroce_dev;
struct eroce_av;
struct eroce_qp;

static inline struct eroce_bth *eroce_pkt_bth(struct sk_buff *skb)
{
	return (struct eroce_bth *)skb->data;
}

/**
 * struct eroce_tx_batch - packets of one QP's flow that leave as one skb
 * @pkts: the packets, in PSN order, each from eroce_pkt_alloc()
 * @seg_len: the length of every packet but the last
 * @len: the sum of their lengths
 * @max_pkts: at most this many packets, 1 to EROCE_TX_BATCH_PKTS
 *
 * Several packets go through the IP stack as one UDP GSO skb, which the
 * stack or the NIC cuts back into standard RoCEv2 packets.  They must be
 * equally long but for a shorter last one.  The engine that fills a batch
 * owns it (on its stack, under its engine lock).
 */
struct eroce_tx_batch {
	struct sk_buff_head pkts;
	u32 seg_len;
	u32 len;
	u32 max_pkts;
};

/* at most this many packets in a batch (the IP total length bounds it too) */
#define EROCE_TX_BATCH_PKTS	64

/*
 * An engine sizes its batches to a quarter of what it may have in
 * flight: a batch lost whole (a qdisc drops it as one packet) leaves
 * packets behind it whose arrival shows the receiver the hole, instead
 * of a silence only the retransmit timer ends.
 */
static inline void eroce_tx_batch_init(struct eroce_tx_batch *b, u32 inflight)
{
	__skb_queue_head_init(&b->pkts);
	b->seg_len = 0;
	b->len = 0;
	b->max_pkts = clamp_t(u32, inflight / 4, 1, EROCE_TX_BATCH_PKTS);
}

static inline u32 eroce_tx_batch_count(const struct eroce_tx_batch *b)
{
	return skb_queue_len(&b->pkts);
}

struct sk_buff *eroce_pkt_alloc(struct eroce_dev *edev, u8 opcode,
				u32 paylen);
void *eroce_pkt_payload(struct sk_buff *skb);
int eroce_pkt_xmit(struct eroce_dev *edev, const struct eroce_av *av,
		   struct dst_cache *route, u16 sport, struct sk_buff *skb);
bool eroce_tx_batch_fits(struct eroce_qp *qp, const struct eroce_tx_batch *b,
			 u32 len);
void eroce_tx_batch_add(struct eroce_tx_batch *b, struct sk_buff *skb);
int eroce_qp_xmit_batch(struct eroce_qp *qp, struct eroce_tx_batch *b);
void eroce_qp_route_forget(struct eroce_qp *qp);
void eroce_xmit_loopback_work(struct work_struct *work);
void eroce_xmit_loopback_purge(struct eroce_dev *edev);

/*
 * The skb->priority of a packet out of a VLAN device, which eroce's
 * entries in the device's egress-qos-map (eroce_vlan.c) turn into PCP =
 * SL: bits 4 to 15 set it apart from the ordinary priorities the
 * administrator maps, the low four bits are the SL (what prio, mqprio and
 * pfifo_fast on the real device classify on: priority & 15), the high 16
 * bits are 0 (no classful qdisc takes it for a class).  47920 + SL in
 * `ip -d link show`.
 */
#define EROCE_VLAN_PRIO_BASE	0xbb30
#define EROCE_VLAN_PRIO(sl)	(EROCE_VLAN_PRIO_BASE | (sl))

/* eroce_vlan.c: the VLAN devices' entries, RTNL held */
void eroce_vlan_map_dev_add(struct eroce_dev *edev);
void eroce_vlan_map_dev_del(struct eroce_dev *edev);
void eroce_vlan_map_upper_linked(struct net_device *upper);

/* looped-back packets waiting for the receive path, per device */
#define EROCE_LOOPBACK_QLEN	4096
/* looped-back packets per run of the work item, per bottom-half section */
#define EROCE_LOOPBACK_BUDGET	256
#define EROCE_LOOPBACK_BATCH	32

#endif /* EROCE_XMIT_H */
