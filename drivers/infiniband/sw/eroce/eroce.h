/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: software RoCEv2 RDMA provider - device-wide definitions.
 *
 * struct eroce_dev is one RDMA device bound to one Ethernet netdev.  The
 * verbs objects hang off it through struct eroce_res (eroce_verbs.h); the
 * UDP sockets it sends and receives on belong to its netdev's network
 * namespace (struct eroce_net, eroce_net.c).
 */
#ifndef EROCE_H
#define EROCE_H

#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include <rdma/eroce-abi.h>

#include "eroce_wire.h"
#include "eroce_stats.h"
#include "eroce_tuning.h"
#include "eroce_verbs.h"

#define EROCE_DRV_NAME		"eroce"
#define EROCE_LINK_TYPE		"eroce"
#define EROCE_VENDOR_ID		0xFFFFFF	/* no IEEE OUI: software device */
#define EROCE_VENDOR_PART_ID	0x4e52
#define EROCE_HW_VER		1
#define EROCE_FW_VER		((u64)1 << 32)

/* device limits reported by query_device and enforced by the verbs */
enum eroce_limits {
	EROCE_MAX_QP		= 16384,
	EROCE_MAX_QP_WR		= 16384,
	EROCE_MAX_SGE		= 32,
	EROCE_MAX_INLINE_DATA	= 512,
	EROCE_MAX_CQ		= 16384,
	EROCE_MAX_CQE		= 1 << 20,	/* libfabric's rxm asks ~100k */
	EROCE_MAX_MR		= 65536,
	EROCE_MAX_MW		= 65536,
	EROCE_MAX_PD		= 65536,
	EROCE_MAX_AH		= 65536,
	EROCE_MAX_SRQ		= 4096,
	EROCE_MAX_SRQ_WR	= 16384,
	EROCE_MAX_SRQ_SGE	= 32,
	EROCE_MAX_RD_ATOMIC	= 128,
	EROCE_MAX_PKEYS		= 1,
	EROCE_GID_TABLE_LEN	= 1024,
	EROCE_MAX_MCAST_GRP	= 256,
	EROCE_MAX_MCAST_QP_ATTACH = 64,
	EROCE_MAX_TOTAL_MCAST_QP_ATTACH = 4096,
};

#define EROCE_MAX_MSG_SIZE	BIT(31)
#define EROCE_MAX_RATE_KBPS	(400 * 1000 * 1000)	/* 400 Gb/s */

#define EROCE_MAX_MR_SIZE	((u64)1 << 40)
#define EROCE_DEFAULT_PKEY	0xffff

struct eroce_net;

/* the multicast groups of a device's UD QPs (eroce_mcast.c) */
struct eroce_mcast {
	struct mutex lock;		/* guards the changes below */
	struct list_head groups;	/* of struct eroce_mcg; RCU readers */
	unsigned int num_groups;
	unsigned int num_attached;	/* QP attachments, all groups */
};

struct eroce_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() */
	/*
	 * parent netdev; ib_device_set_netdev() holds a reference until
	 * unregistration drops it: where a device must not see a netdev
	 * that is gone, use eroce_get_netdev().  The device's own reference,
	 * dropped by eroce_dealloc_driver(), keeps the pointer valid for
	 * eroce_vlan_map_dev_del().
	 */
	struct net_device *ndev;
	/* eroce_vlan_map_dev_add() ran (under RTNL, as does its undo) */
	bool vlan_map_added;
	struct eroce_net *net;		/* sockets of ndev's namespace */

	/* guards port_state and active_mtu against the netdev notifier */
	spinlock_t port_lock;
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;

	struct eroce_res res;		/* verbs objects */
	struct eroce_mcast mcast;	/* multicast groups, own lock */
	struct eroce_stats __percpu *stats;
	struct eroce_tuning tuning;	/* tuning/ in sysfs */

	/* truesize of the packets its QPs keep for selective repeat */
	atomic_t ooo_bytes;

	/* device-wide pacer of max_rate_mbps (eroce_rate.c) */
	spinlock_t pace_lock;
	u64 pace_next_ns;		/* read locklessly as a hint */

	/* packets between QPs of this host, see eroce_xmit.c */
	struct sk_buff_head lo_queue;	/* its own lock */
	struct work_struct lo_work;
};

static inline struct eroce_dev *to_eroce_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct eroce_dev, ibdev);
}

static inline void eroce_stat_add(struct eroce_dev *edev,
				  enum eroce_counter cnt, u64 val)
{
	this_cpu_add(edev->stats->count[cnt], val);
}

static inline void eroce_stat_inc(struct eroce_dev *edev,
				  enum eroce_counter cnt)
{
	this_cpu_inc(edev->stats->count[cnt]);
}

/*
 * A received packet dropped, by the network layer's checks (eroce_recv.c)
 * or the transport's (eroce_deliver.c, eroce_dispatch.c): its own counter
 * and a rate-limited debug line.
 */
#define eroce_rx_drop(edev, cnt, fmt, ...)				\
	do {								\
		struct eroce_dev *__edev = (edev);			\
									\
		eroce_stat_inc(__edev, EROCE_CNT_##cnt);		\
		net_dbg_ratelimited("eroce: %s: drop: " fmt "\n",	\
				    dev_name(&__edev->ibdev.dev),	\
				    ##__VA_ARGS__);			\
	} while (0)

/* eroce_device.c */
int eroce_dev_add(const char *name, struct net_device *ndev);
void eroce_dev_port_event(struct eroce_dev *edev);
void eroce_dev_mtu_changed(struct eroce_dev *edev);
enum ib_mtu eroce_mtu_from_netdev_mtu(unsigned int mtu);

/* eroce_lookup.c: what lower files look up */
struct eroce_dev *eroce_dev_get_by_netdev(struct net_device *ndev);
struct net_device *eroce_get_netdev(struct ib_device *ibdev, u32 port_num);
struct eroce_qp *eroce_qp_get(struct eroce_res *res, u32 qpn);
struct eroce_qp *eroce_qp_handle_get(struct eroce_qp_handle *h);
void eroce_qp_put(struct eroce_qp *qp);

/* eroce_mcast.c */
void eroce_mcast_init(struct eroce_mcast *mc);
void eroce_mcast_fini(struct eroce_mcast *mc);
int eroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int eroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void eroce_mcast_detach_qp(struct eroce_qp *qp);
bool eroce_mcast_rcv(struct eroce_dev *edev, struct eroce_rx *pkt,
		     const union ib_gid *sgid, const union ib_gid *mgid);

/* eroce_gro.c: batches received from a NIC */
void eroce_gro_sock_setup(struct socket *sock);

/* eroce_net.c: per-namespace UDP/4791 sockets */
struct eroce_net *eroce_net_get(struct net *net);
void eroce_net_put(struct eroce_net *en);
struct sock *eroce_net_sk(struct eroce_net *en, bool ipv6);
int eroce_net_init(void);
void eroce_net_exit(void);

#endif /* EROCE_H */
