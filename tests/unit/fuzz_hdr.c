// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: eroce_hdr_check(), the header accessors and the role
 * kinds on arbitrary UDP payloads, and eroce_icrc_linear() on arbitrary
 * packets.
 * Any out-of-bounds read (ASan) or inconsistent result (abort) is a bug.
 * Build and run: make -C tests/unit fuzz [FUZZ_TIME=seconds]
 */
#include <stdlib.h>

#include "eroce_opcode.h"
#include "eroce_icrc.h"

static const size_t hdr_bytes[EROCE_HDR_NUM] = {
	[EROCE_HDR_RETH] = EROCE_RETH_BYTES,
	[EROCE_HDR_AETH] = EROCE_AETH_BYTES,
	[EROCE_HDR_ATMETH] = EROCE_ATMETH_BYTES,
	[EROCE_HDR_DETH] = EROCE_DETH_BYTES,
	[EROCE_HDR_IMMDT] = EROCE_IMMDT_BYTES,
	[EROCE_HDR_IETH] = EROCE_IETH_BYTES,
	[EROCE_HDR_ATMACK] = EROCE_ATMACK_BYTES,
	[EROCE_HDR_CNPRSVD] = EROCE_CNP_RSVD_BYTES,
};

/* reads land here so that the compiler keeps them */
u64 eroce_fuzz_sink;

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	u8 *buf = malloc(size ? size : 1);
	struct eroce_hdr_info hi;
	__le32 icrc;
	int t;

	memcpy(buf, data, size);
	if (!eroce_hdr_check(buf, size, &hi)) {
		struct eroce_bth *bth = (struct eroce_bth *)buf;

		if ((size_t)hi.op->hdr_len + hi.paylen + hi.pad +
		    EROCE_ICRC_BYTES != size)
			abort();
		/* the role files index their tables of handlers with these */
		if (hi.op->resp >= EROCE_RESP_KINDS ||
		    hi.op->match >= EROCE_MATCH_KINDS)
			abort();
		eroce_fuzz_sink += eroce_bth_qpn(bth) + eroce_bth_psn(bth);
		for (t = 0; t < EROCE_HDR_NUM; t++) {
			u8 *h = eroce_hdr(hi.op, bth, t);

			if (!h)
				continue;
			if (h + hdr_bytes[t] > buf + hi.op->hdr_len)
				abort();
			for (size_t i = 0; i < hdr_bytes[t]; i++)
				eroce_fuzz_sink += h[i];
		}
	}
	if (!eroce_icrc_linear(buf, size, &icrc))
		eroce_fuzz_sink += icrc;
	free(buf);
	return 0;
}
