/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: per-device tunables, /sys/class/infiniband/<dev>/tuning/.
 *
 * Every field is read by the engines with READ_ONCE() and written under
 * eroce_tuning.lock by the sysfs store handlers, each value validated
 * first: a bad value returns -EINVAL and changes nothing.
 */
#ifndef EROCE_TUNING_H
#define EROCE_TUNING_H

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct eroce_dev;

/* the most packets GRO chains into one batch (eroce_gro.c) */
#define EROCE_GRO_BATCH_MAX	64

enum eroce_loss_recovery {
	EROCE_LOSS_GBN,			/* go-back-N, the spec's */
	EROCE_LOSS_TLP,			/* go-back-N with a tail-loss probe */
	EROCE_LOSS_SR,			/* tlp, and selective repeat with eroce */
};

enum eroce_cc {
	EROCE_CC_NONE,			/* CNPs counted, rate untouched */
	EROCE_CC_DCQCN,			/* DCQCN reaction and notification */
};

enum eroce_profile {
	EROCE_PROFILE_DEFAULT,		/* IBTA behaviour, any peer */
	EROCE_PROFILE_LOSSY_EDGE,	/* switches without PFC, some loss */
	EROCE_PROFILE_LOSSLESS,		/* PFC networks */
	EROCE_PROFILE_CUSTOM,		/* a knob was changed by hand */
};

struct eroce_tuning {
	struct mutex lock;		/* serialises the stores */
	struct kobject *kobj;		/* the tuning/ directory */
	struct kobject *dcqcn_kobj;	/* tuning/dcqcn/ */

	u32 min_rto_us;			/* floor of the retransmit timeout */
	u32 max_rto_us;			/* ceiling, 0: none */
	u32 rto_backoff;		/* 1: constant, 2: doubling */
	u32 adaptive_rto;		/* RTO from the measured RTT */
	u32 loss_recovery;		/* enum eroce_loss_recovery */
	u32 max_inflight_pkts;		/* unacknowledged packets per QP */
	u32 default_tclass;		/* traffic class when the AV has 0 */
	u32 priority_tag;		/* untagged: VLAN 0 tag with PCP = SL */
	u32 vlan_egress_map;		/* VLAN PCP by the device's map, not SL */
	u32 max_rate_mbps;		/* device-wide pacing, 0: none */
	u32 cc;				/* enum eroce_cc */
	u32 cnp_interval_us;		/* at most one CNP per QP this often */
	u32 ecn;			/* mark packets ECN capable, ECT(0) */
	u32 tx_batch;			/* several packets per UDP GSO skb */
	u32 gro_batch;			/* packets GRO chains per QP, <2: none */
	/* DCQCN reaction point, dcqcn/ */
	u32 dcqcn_g_shift;		/* alpha gain g = 2^-g_shift */
	u32 dcqcn_alpha_update_us;	/* K: alpha decay period */
	u32 dcqcn_rate_increase_us;	/* T: increase timer */
	u32 dcqcn_byte_counter_kb;	/* B: increase every B sent */
	u32 dcqcn_fast_recovery_steps;	/* F */
	u32 dcqcn_rate_ai_mbps;		/* additive increase step */
	u32 dcqcn_rate_hai_mbps;	/* hyper increase step */
	u32 dcqcn_min_rate_mbps;	/* never cut below */
	enum eroce_profile profile;
};

void eroce_tuning_init(struct eroce_tuning *t);
int eroce_tuning_sysfs_add(struct eroce_dev *edev);
void eroce_tuning_sysfs_del(struct eroce_dev *edev);

#endif /* EROCE_TUNING_H */
