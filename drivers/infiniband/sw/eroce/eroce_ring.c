// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: ring buffers shared with userspace, and their mmap entries.
 *
 * Owns the ring memory and its rdma_user_mmap_entry, and the publishing of
 * a user ring (its mmap entry; for a CQ or SRQ also the create response
 * that describes it).  init/publish/free run in process context; the
 * produce/consume helpers run in any context and need the ring's
 * producer_lock or consumer_lock (taken by the caller, so that a batch of
 * slots is handled under one lock).  The flag helpers are lockless atomic
 * read-modify-writes on ctrl->flags.
 *
 * Memory ordering is the ABI's: a slot is written before the producer index
 * is store-released, and read only after the producer index is
 * load-acquired; a consumer index is store-released after the slot has been
 * copied out.
 */
#include <linux/error-injection.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/lockdep.h>

#include "eroce.h"

int eroce_ring_init(struct eroce_ring *ring, u32 num_slots, u32 slot_size,
		    bool user)
{
	size_t size;

	if (!is_power_of_2(num_slots) || !is_power_of_2(slot_size))
		return -EINVAL;

	size = PAGE_ALIGN(EROCE_RING_DATA_OFFSET +
			  (size_t)num_slots * slot_size);
	ring->ctrl = user ? vmalloc_user(size) : vzalloc(size);
	if (!ring->ctrl)
		return -ENOMEM;

	ring->data = (void *)ring->ctrl + EROCE_RING_DATA_OFFSET;
	ring->num_slots = num_slots;
	ring->slot_size = slot_size;
	ring->size = size;
	ring->user = user;
	ring->mentry = NULL;
	spin_lock_init(&ring->producer_lock);
	ring->producer = 0;
	spin_lock_init(&ring->consumer_lock);
	ring->consumer = 0;
	return 0;
}

ALLOW_ERROR_INJECTION(eroce_ring_init, ERRNO);

/*
 * Make a user ring mappable: after this, the mmap entry owns the buffer and
 * frees it in mmap_free once the entry is removed and no mmap() is using it.
 */
int eroce_ring_publish(struct eroce_ring *ring, struct ib_ucontext *uctx,
		       struct eroce_ring_info *info)
{
	struct eroce_mmap_entry *entry;
	int err;

	if (WARN_ON(!ring->user))
		return -EINVAL;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;

	entry->vaddr = ring->ctrl;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry, ring->size);
	if (err) {
		kfree(entry);
		return err;
	}
	ring->mentry = entry;

	memset(info, 0, sizeof(*info));
	info->mmap_offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	info->mmap_size = ring->size;
	info->num_slots = ring->num_slots;
	info->slot_size = ring->slot_size;
	return 0;
}

ALLOW_ERROR_INJECTION(eroce_ring_publish, ERRNO);

/**
 * eroce_ring_publish_resp() - publish the one ring of a new user object
 * @ring: the ring of a user CQ or SRQ
 * @udata: the create verb's udata
 * @info: the response's description of @ring, filled in here
 * @resp: the create response, which holds @info
 * @len: the size of @resp
 *
 * Makes @ring mappable, then copies @resp (as much of it as userspace has
 * room for) out to userspace.
 * Context: process context (the create verb).
 * Return: 0 or -errno; on error the caller frees @ring.
 */
int eroce_ring_publish_resp(struct eroce_ring *ring, struct ib_udata *udata,
			    struct eroce_ring_info *info, void *resp,
			    size_t len)
{
	struct eroce_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct eroce_ucontext, ibuc);
	int err;

	err = eroce_ring_publish(ring, &uctx->ibuc, info);
	if (err)
		return err;
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/*
 * The caller has stopped using the ring.  A published buffer goes away with
 * its mmap entry; pages a process still maps stay alive through the page
 * references remap_vmalloc_range() took.  Such a process may still be
 * polling the ring when the object was destroyed under it (its device went
 * away): EROCE_RING_DEAD tells it that nothing more will come.
 */
void eroce_ring_free(struct eroce_ring *ring)
{
	if (!ring->ctrl)
		return;

	if (ring->mentry) {
		eroce_ring_flags_set(ring, EROCE_RING_DEAD);
		rdma_user_mmap_entry_remove(&ring->mentry->rdma_entry);
	} else {
		vfree(ring->ctrl);
	}

	ring->mentry = NULL;
	ring->ctrl = NULL;
	ring->data = NULL;
}

/**
 * eroce_ring_replace() - move a ring's entries to a new buffer
 * @ring: the ring in use (a CQ's: the kernel produces)
 * @with: a new, empty ring of the same slot size
 *
 * The entries produced and not consumed move, in order, to the start of
 * @with; then @ring takes @with's buffer (with its mmap entry) and @with
 * holds the old one, for the caller to free.  The ctrl flags carry over.
 * The locks stay where they are.
 * Context: @ring's producer_lock held, and its consumer_lock for a kernel
 * ring (the kernel consumes).
 * Return: 0, or -EINVAL when @with has fewer slots than there are entries
 * (or userspace's consumer index is impossible); nothing changed then.
 */
int eroce_ring_replace(struct eroce_ring *ring, struct eroce_ring *with)
{
	u32 cons, n, i;

	lockdep_assert_held(&ring->producer_lock);
	if (!ring->user)
		lockdep_assert_held(&ring->consumer_lock);

	/* pairs with the consumer's release: its slot reads are done */
	cons = ring->user ? smp_load_acquire(&ring->ctrl->consumer) :
			    ring->consumer;
	n = ring->producer - cons;
	if (n > ring->num_slots || n > with->num_slots ||
	    with->slot_size != ring->slot_size)
		return -EINVAL;

	for (i = 0; i < n; i++)
		memcpy(eroce_ring_slot(with, i), eroce_ring_slot(ring, cons + i),
		       ring->slot_size);
	with->ctrl->flags = READ_ONCE(ring->ctrl->flags);
	with->producer = n;
	with->consumer = 0;
	with->ctrl->consumer = 0;
	/* the moved entries before the index that publishes them */
	smp_store_release(&with->ctrl->producer, n);

	swap(ring->ctrl, with->ctrl);
	swap(ring->data, with->data);
	swap(ring->num_slots, with->num_slots);
	swap(ring->size, with->size);
	swap(ring->mentry, with->mentry);
	swap(ring->producer, with->producer);
	swap(ring->consumer, with->consumer);
	return 0;
}

void eroce_mmap_entry_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct eroce_mmap_entry *entry =
		container_of(rdma_entry, struct eroce_mmap_entry, rdma_entry);

	vfree(entry->vaddr);
	kfree(entry);
}

/*
 * The next free slot, or NULL when the ring is full.  A consumer index the
 * other side moved past the producer makes the ring look full: the kernel
 * never overwrites a slot it cannot prove was consumed.
 */
void *eroce_ring_produce_slot(struct eroce_ring *ring)
{
	u32 cons;

	lockdep_assert_held(&ring->producer_lock);

	/* pairs with the consumer's release: its slot reads are done */
	cons = smp_load_acquire(&ring->ctrl->consumer);
	if (ring->producer - cons >= ring->num_slots)
		return NULL;

	return eroce_ring_slot(ring, ring->producer);
}

/* publish the slot eroce_ring_produce_slot() returned */
void eroce_ring_produce_commit(struct eroce_ring *ring)
{
	lockdep_assert_held(&ring->producer_lock);

	ring->producer++;
	/* the slot's contents before the index that publishes it */
	smp_store_release(&ring->ctrl->producer, ring->producer);
}

/*
 * Copy the oldest entry (at most @len bytes) into @dst.  Returns 0, -ENOENT
 * when the ring is empty, or -EPROTO when the producer index is impossible
 * (more than num_slots entries).  The slot stays owned by the kernel until
 * eroce_ring_consume_commit().
 */
int eroce_ring_consume_copy(struct eroce_ring *ring, void *dst, size_t len)
{
	u32 prod, n;

	lockdep_assert_held(&ring->consumer_lock);

	/* pairs with the producer's release: slot reads come after */
	prod = smp_load_acquire(&ring->ctrl->producer);
	n = prod - ring->consumer;
	if (!n)
		return -ENOENT;
	if (n > ring->num_slots)
		return -EPROTO;

	memcpy(dst, eroce_ring_slot(ring, ring->consumer),
	       min_t(size_t, len, ring->slot_size));
	return 0;
}

void eroce_ring_consume_commit(struct eroce_ring *ring)
{
	lockdep_assert_held(&ring->consumer_lock);

	ring->consumer++;
	/* the slot is copied out before it is handed back */
	smp_store_release(&ring->ctrl->consumer, ring->consumer);
}

/* drop every entry the producer has published (QP reset) */
void eroce_ring_consume_discard(struct eroce_ring *ring)
{
	lockdep_assert_held(&ring->consumer_lock);

	/* nothing is read from the dropped slots: plain index moves */
	ring->consumer = smp_load_acquire(&ring->ctrl->producer);
	/* hand the slots back */
	smp_store_release(&ring->ctrl->consumer, ring->consumer);
}

/*
 * Entries published and not yet consumed, as seen from the ctrl block; a
 * snapshot, capped at num_slots for rings the other side corrupted.
 */
u32 eroce_ring_pending(struct eroce_ring *ring)
{
	u32 prod, cons;

	/* both indices as their owners published them */
	prod = smp_load_acquire(&ring->ctrl->producer);
	/* as above */
	cons = smp_load_acquire(&ring->ctrl->consumer);

	return min(prod - cons, ring->num_slots);
}

/**
 * eroce_ring_flags_update() - set and clear bits of a word userspace shares
 * @flags: a flags word of a user-mapped ring
 * @set: the bits to set
 * @clear: the bits to clear
 *
 * Userspace may rewrite the word at any time, so a compare-and-exchange
 * loop on it (x86's atomic_fetch_or() is one too) could spin for as long
 * as a thread of the process wants.  The loop is bounded: after
 * %EROCE_RING_FLAGS_TRIES failed exchanges the kernel's update is
 * exchanged in over what userspace wrote last.  Only a provider that
 * breaks the ring contract can lose that race, and only its own queue
 * suffers.  Returns the flags the update replaced.  Any context; a full
 * barrier.
 */
u32 eroce_ring_flags_update(u32 *flags, u32 set, u32 clear)
{
	u32 old = READ_ONCE(*flags);
	int i;

	for (i = 0; i < EROCE_RING_FLAGS_TRIES; i++)
		if (try_cmpxchg(flags, &old, (old | set) & ~clear))
			return old;
	return xchg(flags, (old | set) & ~clear);
}

/* atomically OR @bits into ctrl->flags; returns the old flags */
u32 eroce_ring_flags_set(struct eroce_ring *ring, u32 bits)
{
	return eroce_ring_flags_update(&ring->ctrl->flags, bits, 0);
}

/* atomically clear @bits in ctrl->flags; returns the old flags */
u32 eroce_ring_flags_clear(struct eroce_ring *ring, u32 bits)
{
	return eroce_ring_flags_update(&ring->ctrl->flags, 0, bits);
}
