// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: user contexts and the mmap of shared rings.
 *
 * Process context only (uverbs).  No locks of its own: the ucontext's
 * mmap_xa (ib_core) finds the ring a mapping asks for, and the mmap entry's
 * reference keeps the ring buffer alive while it is being mapped.
 */
#include <linux/vmalloc.h>
#include <linux/mm.h>

#include "eroce.h"

int eroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct eroce_alloc_ucontext_resp resp = {
		.abi_version = EROCE_ABI_VERSION,
		.max_inline_data = EROCE_MAX_INLINE_DATA,
	};

	if (udata->outlen)
		return ib_copy_to_udata(udata, &resp,
					min(sizeof(resp), udata->outlen));
	return 0;
}

void eroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

int eroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct eroce_mmap_entry *entry;
	int err;

	/* checks MAP_SHARED and that the length is the ring's */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;

	entry = container_of(rdma_entry, struct eroce_mmap_entry, rdma_entry);
	err = remap_vmalloc_range(vma, entry->vaddr, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void eroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	eroce_mmap_entry_free(rdma_entry);
}

/*
 * The device is going away while a process still has it open.  The rings
 * are ordinary pages the process keeps through its mappings' page
 * references, so there is nothing to zap.
 */
void eroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
