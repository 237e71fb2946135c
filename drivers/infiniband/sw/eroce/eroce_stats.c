// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_stats.c - the per-device counters behind `rdma statistic`.
 *
 * Writers bump their CPU's copy with eroce_stat_inc()/eroce_stat_add()
 * from any context; readers sum every CPU's copy.  A reader may see a
 * counter a few increments behind, never a torn 64-bit value (64-bit
 * builds only, which is what eroce supports).  One entry of the list,
 * ooo_bytes_kept, is a level read from eroce_dev.ooo_bytes instead.  No
 * locks.
 */
#include "eroce.h"

static const struct rdma_stat_desc eroce_counter_descs[] = {
#define EROCE_COUNTER(id, str)	{ .name = #str },
#include "eroce_counters.h"
#undef EROCE_COUNTER
};

int eroce_stats_init(struct eroce_dev *edev)
{
	edev->stats = alloc_percpu(struct eroce_stats);
	return edev->stats ? 0 : -ENOMEM;
}

void eroce_stats_fini(struct eroce_dev *edev)
{
	free_percpu(edev->stats);
	edev->stats = NULL;
}

u64 eroce_stats_read(struct eroce_dev *edev, enum eroce_counter cnt)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(edev->stats, cpu)->count[cnt]);
	return sum;
}

struct rdma_hw_stats *eroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num)
{
	BUILD_BUG_ON(ARRAY_SIZE(eroce_counter_descs) != EROCE_NUM_COUNTERS);

	return rdma_alloc_hw_stats_struct(eroce_counter_descs,
					  EROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int eroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct eroce_dev *edev = to_eroce_dev(ibdev);
	int i;

	if (!port || !stats)
		return -EINVAL;

	for (i = 0; i < EROCE_NUM_COUNTERS; i++)
		stats->value[i] = eroce_stats_read(edev, i);
	/* what selective repeat holds now, charged to EROCE_OOO_BUDGET */
	stats->value[EROCE_CNT_SR_OOO_BYTES] = atomic_read(&edev->ooo_bytes);
	return EROCE_NUM_COUNTERS;
}
