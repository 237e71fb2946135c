// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_crc32.c - the CRC-32 behind the ICRC's bulk (eroce_icrc_update()).
 *
 * Both ends of every packet run CRC-32 over every byte.  The crypto
 * API's "crc32" picks the fastest implementation the CPU has (on x86,
 * crc32-pclmul with PCLMULQDQ, many times the table-driven crc32_le());
 * its state is the plain running CRC, so one update is crc32_le() by
 * another name.  Without a "crc32" transform eroce uses crc32_le().
 * The descriptor on the stack holds that one word, not the largest state
 * of any hash (SHASH_DESC_ON_STACK(): a 384-byte frame on 6.1):
 * eroce_crc32() runs at the bottom of the receive softirq.
 *
 * Context: eroce_crc32() any; init/exit at module load and unload.
 * Locks: none (the transform is read-only while the module is loaded).
 */
#include <crypto/hash.h>
#include <linux/module.h>

#include "eroce_shim.h"
#include "eroce_crc32.h"

static struct crypto_shash *eroce_crc32_tfm;

/* a "crc32" descriptor: its state, the running CRC, after the header */
#define EROCE_CRC32_DESC_BYTES	(sizeof(struct shash_desc) + sizeof(u32))

u32 eroce_crc32(u32 crc, const void *data, size_t len)
{
	struct crypto_shash *tfm = eroce_crc32_tfm;

	if (tfm) {
		u8 buf[EROCE_CRC32_DESC_BYTES]
			__aligned(__alignof__(struct shash_desc));
		struct shash_desc *desc = (struct shash_desc *)buf;

		desc->tfm = tfm;
		*(u32 *)shash_desc_ctx(desc) = crc;
		if (!crypto_shash_update(desc, data, len))
			return *(u32 *)shash_desc_ctx(desc);
	}
	return crc32_le(crc, data, len);
}

void eroce_crc32_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("eroce: no crc32 in the crypto API (%ld), ICRC by crc32_le()\n",
			PTR_ERR(tfm));
		return;
	}
	if (sizeof(struct shash_desc) + crypto_shash_descsize(tfm) >
	    EROCE_CRC32_DESC_BYTES) {
		pr_info("eroce: %s keeps %u bytes of state, ICRC by crc32_le()\n",
			crypto_shash_driver_name(tfm),
			crypto_shash_descsize(tfm));
		crypto_free_shash(tfm);
		return;
	}
	eroce_crc32_tfm = tfm;
	pr_info("eroce: ICRC by %s\n", crypto_shash_driver_name(tfm));
}

void eroce_crc32_exit(void)
{
	if (eroce_crc32_tfm)
		crypto_free_shash(eroce_crc32_tfm);
	eroce_crc32_tfm = NULL;
}
