/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * A libibverbs.so.1 that exports nothing rpcr needs: RPCR_RDMA_CORE_DIR pointed at its directory,
 * a dlopen build's ibverbs driver must name the first symbol it lacks and give up gracefully
 * (test/rdev/ibverbs-link.sh).
 */

int rpcr_glue_stub(void);

int
rpcr_glue_stub(void)
{
	return 0;
}
