/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* the KUnit cases of eroce_kunit.ko, one per tests/unit/test_*.c */
#ifndef EROCE_KUNIT_CASES_H
#define EROCE_KUNIT_CASES_H

struct kunit;

void eroce_kunit_psn(struct kunit *test);
void eroce_kunit_wire(struct kunit *test);
void eroce_kunit_opcode(struct kunit *test);
void eroce_kunit_icrc(struct kunit *test);
void eroce_kunit_window(struct kunit *test);

#endif /* EROCE_KUNIT_CASES_H */
