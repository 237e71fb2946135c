/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the shared ring (SQ, RQ, SRQ, CQ).
 *
 * The layout and the ownership rules are the ABI (eroce-abi.h): a
 * struct eroce_ring_ctrl followed at EROCE_RING_DATA_OFFSET by num_slots
 * slots of slot_size bytes, free-running 32-bit producer/consumer indices.
 * A user object's ring is vmalloc_user() memory mapped into the process; a
 * kernel object's ring has the same format in vmalloc() memory, so the
 * engines handle both alike.
 *
 * The kernel keeps a private copy of each index it owns (the producer of a
 * CQ, the consumer of an SQ/RQ/SRQ, both for kernel objects), publishes it
 * with a store-release and reads the other side's index with a
 * load-acquire.  The other side's index is never trusted: a consumer that
 * sees more than num_slots entries reports the ring as corrupt.
 */
#ifndef EROCE_RING_H
#define EROCE_RING_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/eroce-abi.h>

struct eroce_mmap_entry;

struct eroce_ring {
	struct eroce_ring_ctrl *ctrl;	/* start of the buffer */
	void *data;			/* slot 0 */
	u32 num_slots;			/* power of two */
	u32 slot_size;			/* power of two */
	size_t size;			/* bytes, page aligned */
	bool user;			/* mapped into a process */
	/* user rings: owns the buffer once published (freed by mmap_free) */
	struct eroce_mmap_entry *mentry;

	/* serialises the kernel producer; guards producer */
	spinlock_t producer_lock;
	u32 producer;			/* private copy when the kernel produces */

	/* serialises the kernel consumer; guards consumer */
	spinlock_t consumer_lock;
	u32 consumer;			/* private copy when the kernel consumes */
};

/* the buffer behind a published user ring, freed by ops.mmap_free */
struct eroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *vaddr;
};

int eroce_ring_init(struct eroce_ring *ring, u32 num_slots, u32 slot_size,
		    bool user);
int eroce_ring_publish(struct eroce_ring *ring, struct ib_ucontext *uctx,
		       struct eroce_ring_info *info);
int eroce_ring_publish_resp(struct eroce_ring *ring, struct ib_udata *udata,
			    struct eroce_ring_info *info, void *resp,
			    size_t len);
void eroce_ring_free(struct eroce_ring *ring);
int eroce_ring_replace(struct eroce_ring *ring, struct eroce_ring *with);

void *eroce_ring_produce_slot(struct eroce_ring *ring);
void eroce_ring_produce_commit(struct eroce_ring *ring);
int eroce_ring_consume_copy(struct eroce_ring *ring, void *dst, size_t len);
void eroce_ring_consume_commit(struct eroce_ring *ring);
u32 eroce_ring_pending(struct eroce_ring *ring);
void eroce_ring_consume_discard(struct eroce_ring *ring);

/* failed exchanges on a shared flags word before the kernel's update wins */
#define EROCE_RING_FLAGS_TRIES	16
u32 eroce_ring_flags_update(u32 *flags, u32 set, u32 clear);
u32 eroce_ring_flags_set(struct eroce_ring *ring, u32 bits);
u32 eroce_ring_flags_clear(struct eroce_ring *ring, u32 bits);

/* slot @index (free running) of @ring */
static inline void *eroce_ring_slot(const struct eroce_ring *ring, u32 index)
{
	return ring->data + (size_t)(index & (ring->num_slots - 1)) *
			    ring->slot_size;
}

void eroce_mmap_entry_free(struct rdma_user_mmap_entry *rdma_entry);

#endif /* EROCE_RING_H */
