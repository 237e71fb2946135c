// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Userspace stand-in for the kernel's crc32_le() (lib/crc32.c): CRC-32
 * with the reflected IEEE 802.3 polynomial, one byte per step, no pre- or
 * post-inversion (callers seed with ~0 and complement the result).
 */
#include "eroce_shim.h"

#define CRC32_POLY_LE	0xedb88320U

static u32 crc32_table[256];

static void crc32_init(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? CRC32_POLY_LE : 0);
		crc32_table[i] = c;
	}
}

u32 crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	if (!crc32_table[1])
		crc32_init();
	while (len--)
		crc = (crc >> 8) ^ crc32_table[(crc ^ *p++) & 0xff];
	return crc;
}
