// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: the per-device object bookkeeping (struct eroce_res: the lookup
 * tables and the object counts against the device limits) and the
 * reference count every looked-up object carries (struct eroce_obj).
 * The verbs objects' files below the ops table use it; it calls no other
 * eroce file.
 *
 * Contexts: eroce_res_init/fini run in process context at device setup and
 * teardown; eroce_obj_get/put run in any context; eroce_obj_drain sleeps
 * unless told it may not.  No locks of its own: the xarrays lock
 * themselves, the object counters are atomics.
 */
#include <linux/random.h>

#include "eroce.h"

/*
 * xa_init_flags() is an inline with one spin_lock_init() in it, so every
 * xarray set up from this file would share one lockdep class.  The tables
 * are locked in different contexts (ah_xa and mw_xa with interrupts off
 * under an engine's lock, qp_xa and mr_xa only from process context with
 * softirqs on), and one class would make lockdep see an inversion between
 * them that no two real locks have.
 */
static struct lock_class_key eroce_qp_xa_key;
static struct lock_class_key eroce_mr_xa_key;
static struct lock_class_key eroce_ah_xa_key;
static struct lock_class_key eroce_mw_xa_key;

void eroce_res_init(struct eroce_res *res)
{
	atomic_set(&res->num_pd, 0);
	atomic_set(&res->num_ah, 0);
	atomic_set(&res->num_cq, 0);
	atomic_set(&res->num_srq, 0);
	atomic_set(&res->num_qp, 0);
	atomic_set(&res->num_mr, 0);
	atomic_set(&res->num_mw, 0);

	xa_init_flags(&res->qp_xa, XA_FLAGS_ALLOC);
	lockdep_set_class(&res->qp_xa.xa_lock, &eroce_qp_xa_key);
	res->next_qpn = EROCE_FIRST_QPN;
	xa_init_flags(&res->mr_xa, XA_FLAGS_ALLOC1);
	lockdep_set_class(&res->mr_xa.xa_lock, &eroce_mr_xa_key);
	xa_init_flags(&res->mw_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&res->mw_xa.xa_lock, &eroce_mw_xa_key);
	xa_init_flags(&res->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&res->ah_xa.xa_lock, &eroce_ah_xa_key);
	res->next_ah = 1;
}

/* every object is gone: ib_core destroyed them before dealloc_driver */
void eroce_res_fini(struct eroce_res *res)
{
	WARN_ON(!xa_empty(&res->qp_xa));
	WARN_ON(!xa_empty(&res->mr_xa));
	WARN_ON(!xa_empty(&res->mw_xa));
	WARN_ON(!xa_empty(&res->ah_xa));
	WARN_ON(atomic_read(&res->num_pd) || atomic_read(&res->num_ah) ||
		atomic_read(&res->num_cq) || atomic_read(&res->num_srq) ||
		atomic_read(&res->num_qp) || atomic_read(&res->num_mr) ||
		atomic_read(&res->num_mw));

	xa_destroy(&res->qp_xa);
	xa_destroy(&res->mr_xa);
	xa_destroy(&res->mw_xa);
	xa_destroy(&res->ah_xa);
}

/**
 * eroce_res_alloc_index() - reserve a random free index for a memory key
 * @xa: the MR or MW table
 * @index: the index reserved
 * @min: the lowest index of @xa's objects
 * @max: the highest
 * @irq: @xa takes its lock with interrupts off (XA_FLAGS_LOCK_IRQ)
 *
 * Reserves (a NULL entry: the caller stores the object once its key is
 * set) the first free index at or after a random one in [min, max],
 * wrapping around.  A key is index << 8 | a random byte, so a host that
 * has seen some keys cannot guess the others, nor the next one, from
 * them.
 * Context: process context.
 * Return: 0; -EBUSY when [min, max] is full; -ENOMEM.
 */
int eroce_res_alloc_index(struct xarray *xa, u32 *index, u32 min, u32 max,
			  bool irq)
{
	u32 start = get_random_u32_inclusive(min, max);
	struct xa_limit above = XA_LIMIT(start, max);
	int err;

	err = irq ? xa_alloc_irq(xa, index, NULL, above, GFP_KERNEL) :
		    xa_alloc(xa, index, NULL, above, GFP_KERNEL);
	if (err != -EBUSY || start == min)
		return err;

	above = XA_LIMIT(min, start - 1);
	return irq ? xa_alloc_irq(xa, index, NULL, above, GFP_KERNEL) :
		     xa_alloc(xa, index, NULL, above, GFP_KERNEL);
}

/* count one more object against a device limit */
int eroce_res_count_get(atomic_t *count, int max)
{
	return atomic_add_unless(count, 1, max) ? 0 : -ENOMEM;
}

void eroce_obj_init(struct eroce_obj *obj)
{
	kref_init(&obj->ref);
	init_completion(&obj->released);
}

/* take a reference on an object found by a lookup; false if it is dying */
bool eroce_obj_get(struct eroce_obj *obj)
{
	return kref_get_unless_zero(&obj->ref);
}

static void eroce_obj_release(struct kref *ref)
{
	struct eroce_obj *obj = container_of(ref, struct eroce_obj, ref);

	complete(&obj->released);
}

void eroce_obj_put(struct eroce_obj *obj)
{
	kref_put(&obj->ref, eroce_obj_release);
}

/*
 * Drop the initial reference and wait until every user has dropped its
 * own.  The object must already be unreachable by lookups.  Without
 * @sleepable (AHs destroyed in atomic context) the wait spins: engines hold
 * their references only while they copy what they need.
 */
void eroce_obj_drain(struct eroce_obj *obj, bool sleepable)
{
	eroce_obj_put(obj);

	if (sleepable) {
		wait_for_completion(&obj->released);
		return;
	}

	while (!completion_done(&obj->released))
		cpu_relax();
}
