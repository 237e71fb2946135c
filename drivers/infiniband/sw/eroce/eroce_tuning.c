// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_tuning.c - the tunables under /sys/class/infiniband/<dev>/tuning/.
 *
 * One file per knob, readable and writable at runtime; `profile` sets
 * several at once.  Values take effect for every QP at its next use of
 * them (the next timer start, the next packet), which is safe for all of
 * these knobs.  Documentation/admin-guide.rst describes each one.
 *
 * Context: process context (sysfs).  Locks: eroce_tuning.lock serialises
 * the stores; readers in the data path use READ_ONCE() and need no lock.
 */
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "eroce.h"

#define EROCE_RTO_US_MAX	BIT(30)		/* ~18 minutes */
#define EROCE_INFLIGHT_MAX	65536

struct eroce_tuning_kobj {
	struct kobject kobj;
	struct eroce_dev *edev;
};

static const char * const eroce_loss_recovery_names[] = {
	[EROCE_LOSS_GBN] = "gbn",
	[EROCE_LOSS_TLP] = "tlp",
	[EROCE_LOSS_SR] = "sr",
};

static const char * const eroce_cc_names[] = {
	[EROCE_CC_NONE] = "none",
	[EROCE_CC_DCQCN] = "dcqcn",
};

static const char * const eroce_profile_names[] = {
	[EROCE_PROFILE_DEFAULT] = "default",
	[EROCE_PROFILE_LOSSY_EDGE] = "lossy-edge",
	[EROCE_PROFILE_LOSSLESS] = "lossless",
	[EROCE_PROFILE_CUSTOM] = "custom",
};

/* the knobs of a profile; `custom` is never applied, only reported */
static void eroce_tuning_profile(struct eroce_tuning *t,
				 enum eroce_profile profile)
{
	switch (profile) {
	case EROCE_PROFILE_LOSSY_EDGE:
		/*
		 * RTT-driven timer with a 1 ms floor, doubling backoff
		 * bounded at 1 s, tail-loss probes, ECN on
		 */
		t->min_rto_us = 1000;
		t->max_rto_us = 1000000;
		t->rto_backoff = 2;
		t->adaptive_rto = 1;
		t->loss_recovery = EROCE_LOSS_TLP;
		t->max_inflight_pkts = 32;
		t->ecn = 1;
		t->cc = EROCE_CC_DCQCN;
		break;
	case EROCE_PROFILE_LOSSLESS:
		t->min_rto_us = 0;
		t->max_rto_us = 0;
		t->rto_backoff = 1;
		t->adaptive_rto = 0;
		t->loss_recovery = EROCE_LOSS_GBN;
		t->max_inflight_pkts = 256;
		t->ecn = 1;
		t->cc = EROCE_CC_DCQCN;
		break;
	default:
		t->min_rto_us = 0;
		t->max_rto_us = 0;
		t->rto_backoff = 1;
		t->adaptive_rto = 0;
		t->loss_recovery = EROCE_LOSS_GBN;
		/* a LAN's bandwidth-delay product, go-back-N's cost per loss */
		t->max_inflight_pkts = 64;
		t->ecn = 0;
		t->cc = EROCE_CC_NONE;
		break;
	}
	t->profile = profile;
}

void eroce_tuning_init(struct eroce_tuning *t)
{
	mutex_init(&t->lock);
	t->default_tclass = 0;
	t->cnp_interval_us = 50;
	t->tx_batch = 1;
	t->gro_batch = EROCE_GRO_BATCH_MAX;
	/* DCQCN: the values the DCQCN paper evaluates */
	t->dcqcn_g_shift = 8;
	t->dcqcn_alpha_update_us = 55;
	t->dcqcn_rate_increase_us = 55;
	t->dcqcn_byte_counter_kb = 10240;
	t->dcqcn_fast_recovery_steps = 5;
	t->dcqcn_rate_ai_mbps = 40;
	t->dcqcn_rate_hai_mbps = 400;
	t->dcqcn_min_rate_mbps = 10;
	eroce_tuning_profile(t, EROCE_PROFILE_DEFAULT);
}

static struct eroce_tuning *eroce_kobj_tuning(struct kobject *kobj)
{
	return &container_of(kobj, struct eroce_tuning_kobj, kobj)->edev->tuning;
}

/*
 * A u32 knob within [min, max]; a choice knob (names set) reads and
 * writes names[value] instead of the number, min is 0 and max the last
 * name.
 */
struct eroce_tuning_attr {
	struct kobj_attribute attr;
	size_t offset;
	u32 min;
	u32 max;
	const char * const *names;
};

static ssize_t eroce_u32_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	struct eroce_tuning_attr *ta =
		container_of(a, struct eroce_tuning_attr, attr);
	struct eroce_tuning *t = eroce_kobj_tuning(kobj);
	u32 val = READ_ONCE(*(u32 *)((u8 *)t + ta->offset));

	if (ta->names)
		return sysfs_emit(buf, "%s\n", ta->names[val]);
	return sysfs_emit(buf, "%u\n", val);
}

/* the value written: a number within bounds, or one of the names */
static int eroce_u32_parse(const struct eroce_tuning_attr *ta,
			   const char *buf, u32 *val)
{
	int err;

	if (ta->names) {
		err = __sysfs_match_string(ta->names, ta->max + 1, buf);
		if (err < 0)
			return -EINVAL;
		*val = err;
		return 0;
	}
	err = kstrtou32(buf, 0, val);
	if (err)
		return err;
	return *val < ta->min || *val > ta->max ? -EINVAL : 0;
}

/* cross-field rules, checked with the new value in place */
static bool eroce_tuning_consistent(const struct eroce_tuning *t)
{
	if (t->max_rto_us && t->min_rto_us > t->max_rto_us)
		return false;
	return t->rto_backoff == 1 || t->rto_backoff == 2;
}

/*
 * The files are root's (0644), and a write also needs CAP_NET_ADMIN, as
 * creating the link does (RDMA netlink's admin commands): a process that
 * dropped the capability cannot retune the device.
 */
static int eroce_tuning_may_write(void)
{
	return capable(CAP_NET_ADMIN) ? 0 : -EPERM;
}

static ssize_t eroce_u32_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t count)
{
	struct eroce_tuning_attr *ta =
		container_of(a, struct eroce_tuning_attr, attr);
	struct eroce_tuning *t = eroce_kobj_tuning(kobj);
	struct eroce_tuning next;
	u32 val;
	int err;

	err = eroce_tuning_may_write();
	if (err)
		return err;
	err = eroce_u32_parse(ta, buf, &val);
	if (err)
		return err;

	mutex_lock(&t->lock);
	next = *t;
	*(u32 *)((u8 *)&next + ta->offset) = val;
	if (!eroce_tuning_consistent(&next)) {
		mutex_unlock(&t->lock);
		return -EINVAL;
	}
	WRITE_ONCE(*(u32 *)((u8 *)t + ta->offset), val);
	t->profile = EROCE_PROFILE_CUSTOM;
	mutex_unlock(&t->lock);
	return count;
}

#define EROCE_TUNING_U32(_name, _field, _min, _max)			\
	static struct eroce_tuning_attr eroce_attr_##_name = {		\
		.attr = __ATTR(_name, 0644, eroce_u32_show,		\
			       eroce_u32_store),			\
		.offset = offsetof(struct eroce_tuning, _field),	\
		.min = _min,						\
		.max = _max,						\
	}

/* a choice knob whose names are eroce_<name>_names[] */
#define EROCE_TUNING_CHOICE(_name, _field)				\
	static struct eroce_tuning_attr eroce_attr_##_name = {		\
		.attr = __ATTR(_name, 0644, eroce_u32_show,		\
			       eroce_u32_store),			\
		.offset = offsetof(struct eroce_tuning, _field),	\
		.max = ARRAY_SIZE(eroce_##_name##_names) - 1,		\
		.names = eroce_##_name##_names,				\
	}

EROCE_TUNING_U32(max_rate_mbps, max_rate_mbps, 0, 400000);
EROCE_TUNING_U32(cnp_interval_us, cnp_interval_us, 0, 1000000);
EROCE_TUNING_U32(g_shift, dcqcn_g_shift, 1, 16);
EROCE_TUNING_U32(alpha_update_us, dcqcn_alpha_update_us, 1, 1000000);
EROCE_TUNING_U32(rate_increase_us, dcqcn_rate_increase_us, 1, 1000000);
EROCE_TUNING_U32(byte_counter_kb, dcqcn_byte_counter_kb, 1, 1048576);
EROCE_TUNING_U32(fast_recovery_steps, dcqcn_fast_recovery_steps, 1, 64);
EROCE_TUNING_U32(rate_ai_mbps, dcqcn_rate_ai_mbps, 1, 400000);
EROCE_TUNING_U32(rate_hai_mbps, dcqcn_rate_hai_mbps, 1, 400000);
EROCE_TUNING_U32(min_rate_mbps, dcqcn_min_rate_mbps, 1, 400000);

EROCE_TUNING_U32(min_rto_us, min_rto_us, 0, EROCE_RTO_US_MAX);
EROCE_TUNING_U32(max_rto_us, max_rto_us, 0, EROCE_RTO_US_MAX);
EROCE_TUNING_U32(rto_backoff, rto_backoff, 1, 2);
EROCE_TUNING_U32(adaptive_rto, adaptive_rto, 0, 1);
EROCE_TUNING_CHOICE(loss_recovery, loss_recovery);
EROCE_TUNING_U32(max_inflight_pkts, max_inflight_pkts, 1, EROCE_INFLIGHT_MAX);
EROCE_TUNING_U32(default_tclass, default_tclass, 0, 255);
EROCE_TUNING_U32(priority_tag, priority_tag, 0, 1);
EROCE_TUNING_U32(vlan_egress_map, vlan_egress_map, 0, 1);
EROCE_TUNING_CHOICE(cc, cc);
EROCE_TUNING_U32(ecn, ecn, 0, 1);
EROCE_TUNING_U32(tx_batch, tx_batch, 0, 1);
EROCE_TUNING_U32(gro_batch, gro_batch, 0, EROCE_GRO_BATCH_MAX);

static ssize_t profile_show(struct kobject *kobj, struct kobj_attribute *a,
			    char *buf)
{
	struct eroce_tuning *t = eroce_kobj_tuning(kobj);

	return sysfs_emit(buf, "%s\n", eroce_profile_names[READ_ONCE(t->profile)]);
}

static ssize_t profile_store(struct kobject *kobj, struct kobj_attribute *a,
			     const char *buf, size_t count)
{
	struct eroce_tuning *t = eroce_kobj_tuning(kobj);
	int profile, err;

	err = eroce_tuning_may_write();
	if (err)
		return err;
	profile = sysfs_match_string(eroce_profile_names, buf);
	if (profile < 0 || profile == EROCE_PROFILE_CUSTOM)
		return -EINVAL;
	mutex_lock(&t->lock);
	eroce_tuning_profile(t, profile);
	mutex_unlock(&t->lock);
	return count;
}

static struct kobj_attribute eroce_attr_profile = __ATTR_RW(profile);

static struct attribute *eroce_tuning_attrs[] = {
	&eroce_attr_min_rto_us.attr.attr,
	&eroce_attr_max_rto_us.attr.attr,
	&eroce_attr_rto_backoff.attr.attr,
	&eroce_attr_adaptive_rto.attr.attr,
	&eroce_attr_loss_recovery.attr.attr,
	&eroce_attr_max_inflight_pkts.attr.attr,
	&eroce_attr_default_tclass.attr.attr,
	&eroce_attr_priority_tag.attr.attr,
	&eroce_attr_vlan_egress_map.attr.attr,
	&eroce_attr_max_rate_mbps.attr.attr,
	&eroce_attr_cc.attr.attr,
	&eroce_attr_cnp_interval_us.attr.attr,
	&eroce_attr_ecn.attr.attr,
	&eroce_attr_tx_batch.attr.attr,
	&eroce_attr_gro_batch.attr.attr,
	&eroce_attr_profile.attr,
	NULL,
};
ATTRIBUTE_GROUPS(eroce_tuning);

static struct attribute *eroce_dcqcn_attrs[] = {
	&eroce_attr_g_shift.attr.attr,
	&eroce_attr_alpha_update_us.attr.attr,
	&eroce_attr_rate_increase_us.attr.attr,
	&eroce_attr_byte_counter_kb.attr.attr,
	&eroce_attr_fast_recovery_steps.attr.attr,
	&eroce_attr_rate_ai_mbps.attr.attr,
	&eroce_attr_rate_hai_mbps.attr.attr,
	&eroce_attr_min_rate_mbps.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(eroce_dcqcn);

static void eroce_tuning_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct eroce_tuning_kobj, kobj));
}

static const struct kobj_type eroce_tuning_ktype = {
	.release = eroce_tuning_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = eroce_tuning_groups,
};

static const struct kobj_type eroce_dcqcn_ktype = {
	.release = eroce_tuning_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = eroce_dcqcn_groups,
};

static struct kobject *eroce_tuning_kobj_add(struct eroce_dev *edev,
					     const struct kobj_type *ktype,
					     struct kobject *parent,
					     const char *name)
{
	struct eroce_tuning_kobj *tk;

	tk = kzalloc(sizeof(*tk), GFP_KERNEL);
	if (!tk)
		return NULL;
	tk->edev = edev;
	if (kobject_init_and_add(&tk->kobj, ktype, parent, name)) {
		kobject_put(&tk->kobj);
		return NULL;
	}
	return &tk->kobj;
}

static void eroce_tuning_kobj_del(struct kobject **kobj)
{
	if (!*kobj)
		return;
	kobject_del(*kobj);
	kobject_put(*kobj);
	*kobj = NULL;
}

/* create tuning/ and tuning/dcqcn/ under the registered device */
int eroce_tuning_sysfs_add(struct eroce_dev *edev)
{
	struct eroce_tuning *t = &edev->tuning;

	t->kobj = eroce_tuning_kobj_add(edev, &eroce_tuning_ktype,
					&edev->ibdev.dev.kobj, "tuning");
	if (!t->kobj)
		return -ENOMEM;
	t->dcqcn_kobj = eroce_tuning_kobj_add(edev, &eroce_dcqcn_ktype,
					      t->kobj, "dcqcn");
	if (!t->dcqcn_kobj) {
		eroce_tuning_kobj_del(&t->kobj);
		return -ENOMEM;
	}
	return 0;
}

/* remove tuning/; the store handlers have returned when this does */
void eroce_tuning_sysfs_del(struct eroce_dev *edev)
{
	eroce_tuning_kobj_del(&edev->tuning.dcqcn_kobj);
	eroce_tuning_kobj_del(&edev->tuning.kobj);
}
