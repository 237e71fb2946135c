/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the few kernel facilities the pure-logic files (wire headers,
 * opcode table, PSN arithmetic, ICRC) use.  In the kernel this only
 * includes the real headers; in userspace (tests/unit, fuzzers) it maps
 * the same names onto libc so that one source builds in both places.
 * crc32_le() is provided by the test build in userspace.
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
#define __packed		__attribute__((__packed__))
#define __always_inline		inline __attribute__((__always_inline__))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define BIT(n)			(1UL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)		_Static_assert(!(c), "BUILD_BUG_ON: " #c)

#define cpu_to_be16(x)		((__force __be16)htobe16(x))
#define cpu_to_be32(x)		((__force __be32)htobe32(x))
#define cpu_to_be64(x)		((__force __be64)htobe64(x))
#define cpu_to_le32(x)		((__force __le32)htole32(x))
#define be16_to_cpu(x)		be16toh((__force __u16)(x))
#define be32_to_cpu(x)		be32toh((__force __u32)(x))
#define be64_to_cpu(x)		be64toh((__force __u64)(x))
#define le32_to_cpu(x)		le32toh((__force __u32)(x))

/* the kernel's lib/crc32.c contract: no pre- or post-inversion */
u32 crc32_le(u32 crc, const unsigned char *p, size_t len);

/*
 * <linux/bitfield.h> typed helpers: @field is a contiguous constant mask;
 * values wider than the field are truncated (the kernel refuses constant
 * ones at build time).
 */
#define EROCE_SHIM_BITOPS(type, base, to, from)				\
static inline __##type type##_encode_bits(base v, base field)		\
{									\
	return to((base)((v & (field / (field & -field))) *		\
			 (field & -field)));				\
}									\
static inline __##type type##_replace_bits(__##type old, base v,	\
					   base field)			\
{									\
	return (old & ~to(field)) | type##_encode_bits(v, field);	\
}									\
static inline base type##_get_bits(__##type v, base field)		\
{									\
	return (base)((from(v) & field) / (field & -field));		\
}

#define EROCE_SHIM_ID(x)	(x)
EROCE_SHIM_BITOPS(u8, u8, EROCE_SHIM_ID, EROCE_SHIM_ID)
EROCE_SHIM_BITOPS(be16, u16, cpu_to_be16, be16_to_cpu)
EROCE_SHIM_BITOPS(be32, u32, cpu_to_be32, be32_to_cpu)
#undef EROCE_SHIM_BITOPS

#endif /* __KERNEL__ */

#endif /* EROCE_SHIM_H */
