// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/unit/test_psn.c as the KUnit case eroce_pure.psn */
#include "kunit_unit.h"
#include "kunit_cases.h"

int eroce_unit_psn_main(void);
#define main eroce_unit_psn_main
#include "../unit/test_psn.c"
#undef main

EROCE_KUNIT_CASE(psn)
