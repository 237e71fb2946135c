/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* eroce: RoCEv2 packets out (eroce_xmit.c) */
#ifndef EROCE_XMIT_H
#define EROCE_XMIT_H

#include <linux/skbuff.h>

#include "eroce_wire.h"

struct dst_cache;
struct eroce_dev;
struct eroce_av;
struct eroce_qp;

static inline struct eroce_bth *eroce_pkt_bth(struct sk_buff *skb)
{
	return (struct eroce_bth *)skb->data;
}

struct sk_buff *eroce_pkt_alloc(u8 opcode, u32 paylen);
void *eroce_pkt_payload(struct sk_buff *skb);
int eroce_pkt_xmit(struct eroce_dev *edev, const struct eroce_av *av,
		   struct dst_cache *route, u16 sport, struct sk_buff *skb);
int eroce_qp_xmit(struct eroce_qp *qp, struct sk_buff *skb);
void eroce_qp_route_forget(struct eroce_qp *qp);
void eroce_xmit_loopback_work(struct work_struct *work);
void eroce_xmit_loopback_purge(struct eroce_dev *edev);

/* looped-back packets waiting for the receive path, per device */
#define EROCE_LOOPBACK_QLEN	4096

#endif /* EROCE_XMIT_H */
