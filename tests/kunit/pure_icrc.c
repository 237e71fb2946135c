// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* the module's eroce_icrc.c, unchanged, in the KUnit module */
#include "../../drivers/infiniband/sw/eroce/eroce_icrc.c"
