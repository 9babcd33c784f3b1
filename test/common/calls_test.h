/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_CALLS_TEST_H
#define RPCR_CALLS_TEST_H

/*
 * Clients of the test program (RPCR_TESTPROG) kept calling, for tests and benchmarks that poll
 * their pollers themselves: each client keeps up to its depth of NULL calls outstanding, their
 * completions counted in a tally several clients share. Single-threaded, as the pollers are.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mempool.h>

#include <rpcr_chunk.h>
#include <rpcr_xprt.h>

/* Calls of a set of clients. */
struct rpcr_test_tally {
	uint64_t done;    /* answered */
	uint64_t failed;  /* completed with an error */
	uint64_t started; /* issued */
	uint64_t most;    /* to issue at most (UINT64_MAX: no limit) */
};

/* A client and its calls. */
struct rpcr_test_caller {
	struct rpcr_clnt *c;
	struct rpcr_call *calls; /* @depth of them */
	bool *busy;              /* [i]: calls[i] outstanding */
	uint32_t depth;
	uint32_t out;  /* calls outstanding */
	uint64_t done; /* its calls answered */
	bool gone;     /* its client destroyed: no more calls */
	struct rpcr_test_tally *tally;
};

static inline void
rpcr_test_call_done(struct rpcr_call *call)
{
	struct rpcr_test_caller *k = call->user;

	k->busy[call - k->calls] = false;
	k->out--;
	if (call->status != 0)
		k->tally->failed++;
	else
		k->tally->done++, k->done++;
}

/*
 * Keep @k's depth of NULL calls out (fewer if its client takes no more now, or the tally's most
 * are issued). (Its loop over the calls outstanding is all a benchmark's caller costs.)
 */
static inline void
rpcr_test_issue(struct rpcr_test_caller *k)
{
	struct rpcr_test_tally *t = k->tally;
	uint32_t i;

	if (k->gone || k->out >= k->depth) /* (all out: its busy flags are not read) */
		return;
	for (i = 0; i < k->depth; i++) {
		struct rpcr_call *call = &k->calls[i];

		if (k->busy[i])
			continue;
		if (t->started >= t->most)
			break;
		memset(call, 0, sizeof(*call));
		call->proc = RPCR_TESTPROG_NULL;
		call->done = rpcr_test_call_done;
		call->user = k;
		k->busy[i] = true;
		if (rpcr_clnt_call(k->c, call) != 0) {
			k->busy[i] = false;
			break;
		}
		k->out++;
		t->started++;
	}
}

/* A client of the test program on @p to the server at @addr, asking @credits. */
static inline struct rpcr_clnt *
rpcr_test_clnt(struct rpcr_xprt_poller *p, const char *addr, uint32_t credits)
{
	return rpcr_clnt_create(p, &(struct rpcr_clnt_conf){.addr = addr,
							    .prog = RPCR_TESTPROG,
							    .vers = RPCR_TESTPROG_VERS,
							    .credits = credits});
}

/* Buffers of @p's message pool in use now. */
static inline uint32_t
rpcr_test_bufs_in_use(const struct rpcr_xprt_poller *p)
{
	struct rte_mempool *mp = rpcr_chunk_pool_mempool(rpcr_xprt_poller_pool(p));

	return mp->size - rte_mempool_avail_count(mp);
}

#endif /* RPCR_CALLS_TEST_H */
