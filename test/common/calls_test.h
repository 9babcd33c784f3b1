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

struct rpcr_test_caller;

/* Calls of a set of clients. */
struct rpcr_test_tally {
	uint64_t done;    /* answered */
	uint64_t failed;  /* completed with an error */
	uint64_t started; /* issued */
	uint64_t most;    /* to issue at most (UINT64_MAX: no limit) */
	/* Optional (NULL: none): the callers with room for a call, each once, so that a loop over
	 * thousands of clients issues only for those a completion freed (rpcr_test_issue_ready())
	 * instead of looking at every one of them each turn. Room for all the callers. */
	struct rpcr_test_caller **ready;
	uint32_t nready;
};

/* A client and its calls. */
struct rpcr_test_caller {
	struct rpcr_clnt *c;
	struct rpcr_call *calls; /* @depth of them */
	bool *busy;              /* [i]: calls[i] outstanding */
	uint32_t depth;
	uint32_t out;  /* calls outstanding */
	uint64_t done; /* its calls answered */
	uint32_t next; /* the call slot after the one issued last (the oldest outstanding) */
	bool gone;     /* its client destroyed: no more calls */
	bool queued;   /* on its tally's ready list */
	struct rpcr_test_tally *tally;
};

/* Put @k on its tally's ready list, if the tally keeps one and @k is not on it yet. */
static inline void
rpcr_test_ready(struct rpcr_test_caller *k)
{
	struct rpcr_test_tally *t = k->tally;

	if (t->ready != NULL && !k->queued) {
		k->queued = true;
		t->ready[t->nready++] = k;
	}
}

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
	rpcr_test_ready(k);
}

/*
 * Keep @k's depth of NULL calls out (fewer if its client takes no more now, or the tally's most
 * are issued). The slots are looked at from the one after the call issued last, which is the
 * oldest outstanding, so that calls answered in order free the slots looked at first: at a
 * depth of 250, looking from slot 0 each time cost more than the call (bench_scale).
 */
static inline void
rpcr_test_issue(struct rpcr_test_caller *k)
{
	struct rpcr_test_tally *t = k->tally;
	uint32_t s = k->next, j, i;

	if (k->gone || k->out >= k->depth) /* (all out: its busy flags are not read) */
		return;
	for (j = 0; j < k->depth && k->out < k->depth; j++) {
		struct rpcr_call *call;

		i = s + j < k->depth ? s + j : s + j - k->depth;
		if (k->busy[i])
			continue;
		call = &k->calls[i];
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
		k->next = i + 1 < k->depth ? i + 1 : 0;
	}
}

/*
 * rpcr_test_issue() for each caller on @t's ready list, which it empties: a caller left with
 * room (its client took fewer calls than it has room for, or the tally's most were issued) is
 * put back, to be tried at the next turn.
 */
static inline void
rpcr_test_issue_ready(struct rpcr_test_tally *t)
{
	uint32_t i, n = t->nready;

	t->nready = 0;
	for (i = 0; i < n; i++) {
		struct rpcr_test_caller *k = t->ready[i];

		k->queued = false;
		rpcr_test_issue(k);
		if (!k->gone && k->out < k->depth)
			rpcr_test_ready(k);
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
