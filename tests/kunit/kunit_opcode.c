// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/unit/test_opcode.c as the KUnit case eroce_pure.opcode */
#include "kunit_unit.h"
#include "kunit_cases.h"

int eroce_unit_opcode_main(void);
#define main eroce_unit_opcode_main
#include "../unit/test_opcode.c"
#undef main

EROCE_KUNIT_CASE(opcode)
