// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/unit/test_wire.c as the KUnit case eroce_pure.wire */
#include "kunit_unit.h"
#include "kunit_cases.h"

int eroce_unit_wire_main(void);
#define main eroce_unit_wire_main
#include "../unit/test_wire.c"
#undef main

EROCE_KUNIT_CASE(wire)
