// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/unit/test_icrc.c as the KUnit case eroce_pure.icrc */
#include "kunit_unit.h"
#include "kunit_cases.h"

int eroce_unit_icrc_main(void);
#define main eroce_unit_icrc_main
#include "../unit/test_icrc.c"
#undef main

EROCE_KUNIT_CASE(icrc)
