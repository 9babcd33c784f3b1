/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_EAL_TEST_H
#define RPCR_EAL_TEST_H

/* EAL set-up for single-process tests: no EAL hugepages (arenas bring their own), no PCI, no
 * shared config, quiet. */

#include <stdio.h>

#include <rte_common.h>
#include <rte_eal.h>

static inline int
rpcr_test_eal_init(void)
{
	static char a0[] = "rpcr-test", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l",
		    a4[] = "0", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return -1;
	}
	return 0;
}

#endif /* RPCR_EAL_TEST_H */
