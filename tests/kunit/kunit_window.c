// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/unit/test_window.c as the KUnit case eroce_pure.window */
#include "kunit_unit.h"
#include "kunit_cases.h"

int eroce_unit_window_main(void);
#define main eroce_unit_window_main
#include "../unit/test_window.c"
#undef main

EROCE_KUNIT_CASE(window)
