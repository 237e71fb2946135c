/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the few kernel facilities the pure-logic files (wire headers,
 * opcode table, PSN arithmetic, ICRC) use.  In the kernel this only
 * includes the real headers; in userspace (tests/unit, fuzzers) it maps
 * the same names onto libc so that one source builds in both places.
 * crc32_le() is provided by the test build (tests/unit/crc32.c);
 * eroce_crc32() is the kernel's crypto API crc32 (eroce_crc32.c) or, in
 * userspace, crc32_le().
 */
#ifndef EROCE_SHIM_H
#define EROCE_SHIM_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/bitfield.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/byteorder.h>

u32 eroce_crc32(u32 crc, const void *data, size_t len);

#else /* userspace */

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;

#define __force
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define BIT(n)			(1UL << (n))
#define BIT_ULL(n)		(1ULL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)		static_assert(!(c), #c)

#define cpu_to_be16(x)		((__force __be16)htobe16(x))
#define cpu_to_be32(x)		((__force __be32)htobe32(x))
#define cpu_to_le32(x)		((__force __le32)htole32(x))
#define be16_to_cpu(x)		be16toh((__force __u16)(x))
#define be32_to_cpu(x)		be32toh((__force __u32)(x))
#define le32_to_cpu(x)		le32toh((__force __u32)(x))

/* the kernel's lib/crc32.c contract: no pre- or post-inversion */
u32 crc32_le(u32 crc, const unsigned char *p, size_t len);

static inline u32 eroce_crc32(u32 crc, const void *data, size_t len)
{
	return crc32_le(crc, data, len);
}

/*
 * The <linux/bitfield.h> helpers eroce uses.  @field is a contiguous
 * mask; a value wider than its field is truncated (the kernel refuses
 * constant ones at build time).
 */
static inline u32 eroce_shim_field_lsb(u32 field)
{
	return field & -field;
}

static inline u8 u8_encode_bits(u8 v, u8 field)
{
	return (v * eroce_shim_field_lsb(field)) & field;
}

static inline u8 u8_replace_bits(u8 old, u8 v, u8 field)
{
	return (old & ~field) | u8_encode_bits(v, field);
}

static inline u8 u8_get_bits(u8 v, u8 field)
{
	return (v & field) / eroce_shim_field_lsb(field);
}

static inline __be32 be32_encode_bits(u32 v, u32 field)
{
	return cpu_to_be32((v * eroce_shim_field_lsb(field)) & field);
}

static inline __be32 be32_replace_bits(__be32 old, u32 v, u32 field)
{
	return (old & ~cpu_to_be32(field)) | be32_encode_bits(v, field);
}

static inline u32 be32_get_bits(__be32 v, u32 field)
{
	return (be32_to_cpu(v) & field) / eroce_shim_field_lsb(field);
}

#endif /* __KERNEL__ */

#endif /* EROCE_SHIM_H */
