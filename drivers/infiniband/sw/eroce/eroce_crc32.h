/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* eroce: the crypto API crc32 behind the ICRC (eroce_crc32.c) */
#ifndef EROCE_CRC32_H
#define EROCE_CRC32_H

void eroce_crc32_init(void);
void eroce_crc32_exit(void);

#endif /* EROCE_CRC32_H */
