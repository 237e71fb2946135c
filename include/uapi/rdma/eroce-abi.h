/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * eroce kernel <-> userspace provider ABI.
 *
 * Versioning: EROCE_ABI_VERSION is the ib_device uverbs_abi_ver.  The
 * provider accepts exactly the versions it was built for.  Every structure
 * here has fixed-width members, explicit padding and a size that is a
 * multiple of 8; reserved members are written as zero and ignored on read.
 *
 * Shared rings
 * ------------
 * The send queue (SQ), receive queue (RQ), shared receive queue (SRQ) and
 * completion queue (CQ) of a userspace object are rings in kernel memory
 * mapped into the process with mmap() on the uverbs command fd, at the
 * offset and length the create response gives (struct eroce_ring_info).
 * A mapping starts with struct eroce_ring_ctrl; slot i of the ring starts
 * at EROCE_RING_DATA_OFFSET + (i & (num_slots - 1)) * slot_size.
 *
 * Indices are free-running 32-bit counters; they are never masked when
 * stored.  The ring is empty when producer == consumer and full when
 * producer - consumer == num_slots.  num_slots and slot_size are powers of
 * two.
 *
 * Ownership:
 *   SQ, RQ, SRQ: userspace produces, the kernel consumes.
 *   CQ:          the kernel produces, userspace consumes.
 * Each side writes only the index it owns.  A producer fills a slot, then
 * publishes it with a store-release of the new producer index; a consumer
 * reads the producer index with a load-acquire before it reads any slot,
 * and gives slots back with a store-release of the consumer index.
 *
 * The kernel never trusts a shared index or slot: it reads the userspace
 * index once, rejects a ring whose producer - consumer exceeds num_slots
 * (the QP moves to the error state), and copies a WQE out of the ring into
 * kernel memory before it validates and uses it.  Userspace must not
 * change a slot after publishing it; if it does, only its own QP suffers.
 *
 * Doorbells: after publishing SQ entries the provider issues a full memory
 * barrier and reads the SQ's ctrl.flags; only if EROCE_RING_NEED_DOORBELL
 * is set does it enter the kernel (a POST_SEND command with no work
 * requests).  The kernel sets the flag, issues a full barrier and re-reads
 * the producer index before it stops looking at an SQ, so no work is lost;
 * it leaves the flag clear while it will look again by itself (an RC QP
 * waiting for an acknowledgment reads the SQ when it arrives).
 * RQ and SRQ need no doorbell: the kernel reads them when a packet needs a
 * receive WQE.
 *
 * CQ arming: the provider sets EROCE_CQ_ARM_NEXT or EROCE_CQ_ARM_SOLICITED
 * in the CQ's ctrl.flags with an atomic OR followed by a full barrier; the
 * kernel, after publishing a CQE and issuing a full barrier, atomically
 * clears the arm bits it consumes and raises one completion event.  As
 * the verbs require, a consumer that arms the CQ polls it once more before
 * it waits for an event.  ibv_req_notify_cq through the kernel sets the
 * same bits.
 */
#ifndef EROCE_ABI_USER_H
#define EROCE_ABI_USER_H

#include <linux/types.h>

#define EROCE_ABI_VERSION	1

/*
 * ib_device driver_id (enum rdma_driver_id is not extended upstream for
 * out-of-tree drivers): "EROC", far from the upstream range (0..21), so
 * neither librxe nor the in-tree rdma_rxe can mistake an eroce device for
 * theirs.
 */
#define EROCE_DRIVER_ID		0x45524f43

/* ring control block at the start of every mapping, one cache line each */
struct eroce_ring_ctrl {
	__u32 producer;
	__u32 reserved_producer[15];
	__u32 consumer;
	__u32 reserved_consumer[15];
	__u32 flags;
	__u32 reserved_flags[15];
	__u32 reserved[16];
};

#define EROCE_RING_DATA_OFFSET	256

/* ctrl.flags of an SQ: written by the kernel, read by userspace */
#define EROCE_RING_NEED_DOORBELL	(1U << 0)

/* ctrl.flags of a CQ: set by userspace, cleared by the kernel */
#define EROCE_CQ_ARM_NEXT		(1U << 0)
#define EROCE_CQ_ARM_SOLICITED		(1U << 1)
/* ctrl.flags of a CQ: set by the kernel when a CQE had to be dropped */
#define EROCE_CQ_OVERFLOW		(1U << 8)
/*
 * ctrl.flags of every ring: set by the kernel when it has let the ring go
 * (the object was destroyed, by its owner or because its device went away,
 * and its ring stays mapped): the kernel produces and consumes nothing
 * more.  The provider still returns the CQEs published before the flag;
 * after them, polls and posts fail.
 */
#define EROCE_RING_DEAD			(1U << 31)

/* where a ring is in the uverbs fd's mmap space, and its geometry */
struct eroce_ring_info {
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 num_slots;
	__u32 slot_size;
	__u32 reserved;
};

/* scatter/gather element inside a WQE */
struct eroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* eroce_send_wqe.send_flags; same values as enum ibv_send_flags */
#define EROCE_SEND_FENCE	(1U << 0)
#define EROCE_SEND_SIGNALED	(1U << 1)
#define EROCE_SEND_SOLICITED	(1U << 2)
#define EROCE_SEND_INLINE	(1U << 3)

/*
 * SQ slot: a 64-byte header followed by num_sge struct eroce_sge, or, with
 * EROCE_SEND_INLINE, by inline_len bytes of payload.  opcode is an
 * enum ib_uverbs_wr_opcode value.
 */
struct eroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 send_flags;
	__u8 opcode;
	__u8 num_sge;
	__u16 inline_len;
	__u32 ex;		/* immediate data (big endian) or rkey */
	__u32 reserved0;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		/*
		 * ATOMIC_WRITE (IBV_WR_ATOMIC_WRITE, RC): remote_addr and
		 * rkey where rdma has them; value is the 8 bytes to store,
		 * as they are in memory (num_sge 0, no EROCE_SEND_INLINE)
		 */
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 value[8];
		} atomic_write;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		/* fast registration (REG_MR): kernel QPs only */
		struct {
			__aligned_u64 iova;
			__aligned_u64 length;
			__u32 key;
			__u32 access;
		} reg;
		/*
		 * BIND_MW, userspace QPs only: ex is the window's new rkey,
		 * whose index names the window.  A type 1 window bound with
		 * length 0 and mr_lkey 0 is unbound.
		 */
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;	/* IBV_ACCESS_REMOTE_*, ZERO_BASED */
			__u32 mw_type;	/* IBV_MW_TYPE_1 (ibv_bind_mw) or 2 */
			__u32 reserved;
		} bind;
	} wr;
	__aligned_u64 reserved1;
};

/* RQ/SRQ slot: a 16-byte header followed by num_sge struct eroce_sge */
struct eroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/*
 * eroce_cqe.wc_flags; the same values as enum ibv_wc_flags, except
 * EROCE_WC_WITH_VLAN: the packet came in through a VLAN device whose
 * VLAN ID is in slid (RoCE has no LIDs); the provider clears both; and
 * EROCE_WC_IPV4: with EROCE_WC_GRH, the packet came over IPv4 (else
 * IPv6).  The provider turns it into the RoCE packet type that ConnectX
 * reports in a UD completion's sl (bit 3: UDP, i.e. RoCEv2; bits 2:0:
 * 2 IPv4, 1 IPv6), which UCX's ud_verbs reads to find the destination
 * address in the GRH, and clears it.
 */
#define EROCE_WC_GRH		(1U << 0)
#define EROCE_WC_WITH_IMM	(1U << 1)
#define EROCE_WC_WITH_INV	(1U << 3)
#define EROCE_WC_IPV4		(1U << 6)
#define EROCE_WC_WITH_VLAN	(1U << 7)

/* the sl of a UD receive completion in userspace (see EROCE_WC_IPV4) */
#define EROCE_WC_SL_ROCE_V2	(1U << 3)
#define EROCE_WC_SL_IPV6	1
#define EROCE_WC_SL_IPV4	2

/*
 * CQ slot.  status has enum ibv_wc_status values, opcode has
 * enum ibv_wc_opcode values (the same as the kernel's enum ib_wc_opcode).
 */
struct eroce_cqe {
	__aligned_u64 wr_id;
	__u32 byte_len;
	__u32 ex;		/* immediate data (big endian) or rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u8 status;
	__u8 opcode;
	__u8 wc_flags;
	__u8 sl;
	__u16 pkey_index;
	__u16 slid;
};

/* ---- uverbs driver data (UHW), appended to the core command/response */

struct eroce_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 max_inline_data;
};

struct eroce_create_cq_resp {
	struct eroce_ring_info cq;
};

/*
 * ibv_resize_cq: the CQ's new ring.  The kernel moved the CQEs userspace
 * had not consumed to its start (the new consumer index is 0); the old
 * ring gets no CQE any more and may be unmapped.
 */
struct eroce_resize_cq_resp {
	struct eroce_ring_info cq;
};

struct eroce_create_qp_resp {
	struct eroce_ring_info sq;
	struct eroce_ring_info rq;	/* all zero when the QP uses an SRQ */
};

struct eroce_create_srq_resp {
	struct eroce_ring_info srq;
};

/* follows the 4-byte ib_uverbs_create_ah_resp: 4-byte alignment only */
struct eroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

#endif /* EROCE_ABI_USER_H */
