/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: device counters shown by `rdma statistic`.
 *
 * eroce_counters.h is the one list: it generates the enum and the names,
 * so the two cannot drift.  Documentation/admin-guide.rst explains each.
 * Counters are per-CPU and summed when read.
 */
#ifndef EROCE_STATS_H
#define EROCE_STATS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

enum eroce_counter {
#define EROCE_COUNTER(id, str)	EROCE_CNT_##id,
#include "eroce_counters.h"
#undef EROCE_COUNTER
	EROCE_NUM_COUNTERS
};

struct eroce_stats {
	u64 count[EROCE_NUM_COUNTERS];
};

struct eroce_dev;

int eroce_stats_init(struct eroce_dev *edev);
void eroce_stats_fini(struct eroce_dev *edev);
struct rdma_hw_stats *eroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num);
int eroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
u64 eroce_stats_read(struct eroce_dev *edev, enum eroce_counter cnt);

#endif /* EROCE_STATS_H */
