/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Soak: the engine under injected faults. An rpcr server (test/xprt/xprt_common.c) and two rpcr
 * clients in two processes over shm; the clients' devices, and the server's, inject faults (the
 * shm driver's fault_* devargs, doc/rdev.md): connections broken at random work requests,
 * registrations failing, receives withheld (the peer hits RNR), completions delayed.
 *
 * The clients issue a random mix of the test program's NULL, ECHO, WRITE and READ, 0 B to 4 MiB,
 * and CALLBACK (1 to 4 calls back from the server over the client's own connection, RFC 8167,
 * each echo checked by the server: a CALLBACK answered must say all were verified),
 * several outstanding, each call's shape drawn so that every combination the engine has comes
 * up: arguments inline, in read chunks (one or three segments, at unaligned addresses), or the
 * whole call in a position-zero read chunk (long calls); results inline, in write chunks, in
 * reply chunks, or (2005 draft) in read chunks of the reply. Client "a" has the defaults
 * (inline 4096, the draft on, memory windows bound by work request); client "b" talks RFC 8166
 * only with 1024-byte inline messages, as to Linux, and registers its chunks per call (each on
 * its own poller and device, both polled by this thread).
 *
 * Every call is numbered; each completion is recorded against its number (a bitmap: completed
 * once; again is "duplicated") and its status. Status 0: the results are checked byte for byte
 * (ECHO's data is a pattern of the call's number, so stale data from another call is caught;
 * READ's is the test program's sequence; WRITE's count). -ENOMEM is what the engine answers when
 * a registration fails (an injected one): counted and the same operation issued again as a new
 * call. Anything else is an error. At the end every call issued must have completed exactly once:
 * "lost" counts those that never did.
 *
 * Recovery: the driver records the TSC of each injected disconnect; the time from it to the
 * first call of that client completed on the next connection is one sample (and, for every
 * connection loss a client sees, whatever broke it, the time from when it saw it). Goal: at most
 * 1 s on shm.
 *
 * usage: test_soak [--seconds N] [--seed N] [--faults LIST] [--server-faults LIST]
 *                  [--dev DEVARGS] [--cdev DEVARGS] [--addr ADDR] [--max-size BYTES]
 *                  [--external-faults] [--recovery-max-ms N] [--timeout-ms N]
 * --seconds defaults to $RPCR_SOAK_SECONDS, else 20; --seed to $RPCR_SOAK_SEED, else 1. LIST is
 * fault devargs without the seed ("fault_disconnect=0.001,fault_reg=0.002"), "" for none.
 * --external-faults: faults come from outside (rxe: the link taken down, see doc/testing.md):
 * connection losses seen by the clients, not driver counters, must be more than zero.
 * XT_DEBUG=1 in the environment: the engine's and the drivers' debug logs, both processes.
 * A recovery over 100 ms is reported with where its time went (reconnecting, then the first
 * call, and how far apart this thread polled the client: a loaded machine shows there).
 */

#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>

#include "rpcr_test.h"
#include "xprt_test.h"

#define SOAK_DEFAULT_SECONDS 20u
#define SOAK_MAX_SIZE        (4u << 20)
#define SOAK_SLACK           8192u  /* room in each buffer for offsets and write-chunk slack */
#define SOAK_CALLS           4096u  /* call structures, reused round robin */
#define SOAK_TIMEOUT_MS      10000u /* call timeout (--timeout-ms) */
#define SOAK_PROBE_S         5u     /* after the run: NULL calls until every fault is recovered */
#define SOAK_MAX_SAMPLES     (1u << 20)

/* Default faults: several a second of each kind. */
#define SOAK_CLIENT_FAULTS \
	"fault_disconnect=0.001,fault_reg=0.002,fault_recv=0.0005,fault_delay_us=20"
#define SOAK_SERVER_FAULTS "fault_disconnect=0.0005"

static struct player P;
static struct rpcr_test_rng rng;

/* ---- data patterns ---- */

/* ECHO's data: word w of call @seed's stream. */
static inline uint64_t
pat_word(uint64_t seed, uint64_t w)
{
	uint64_t z = (seed * 0x9e3779b97f4a7c15ull) ^ (w * 0xd1b54a32d192ed03ull);

	return z ^ (z >> 31);
}

/* @n bytes of call @seed's stream from byte @o. */
static void
pat_gen(uint64_t seed, uint64_t o, uint8_t *dst, uint32_t n)
{
	uint64_t w = o >> 3;
	uint32_t sh = (uint32_t)(o & 7);

	while (n != 0) {
		uint64_t v = pat_word(seed, w++);
		uint32_t take = RTE_MIN(8u - sh, n);

		memcpy(dst, (const uint8_t *)&v + sh, take);
		dst += take;
		n -= take;
		sh = 0;
	}
}

/* READ's data: the test program's sequence, which repeats every 256 bytes. */
static uint8_t read_tab[256 + 4096];

static void
read_gen(uint64_t o, uint8_t *dst, uint32_t n)
{
	while (n != 0) {
		uint32_t take = RTE_MIN(n, 4096u);

		memcpy(dst, read_tab + (o & 255), take);
		dst += take;
		o += take;
		n -= take;
	}
}

/* Walk @len bytes of chain @m from byte @off: @fn(pointer, stream offset, bytes) per piece. */
static bool
chain_walk(const struct rte_mbuf *m, uint32_t off, uint32_t len,
	   bool (*fn)(uint8_t *p, uint64_t o, uint32_t n, void *ctx), void *ctx)
{
	uint64_t o = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (len != 0) {
		uint32_t n;

		if (m == NULL)
			return false;
		n = RTE_MIN(len, (uint32_t)m->data_len - off);
		if (!fn(rte_pktmbuf_mtod_offset(m, uint8_t *, off), o, n, ctx))
			return false;
		o += n;
		len -= n;
		m = m->next;
		off = 0;
	}
	return true;
}

struct pat_ctx {
	bool read; /* the READ sequence, else ECHO's of @seed */
	uint64_t seed;
	uint64_t bad_at; /* first differing byte */
};

static bool
fill_fn(uint8_t *p, uint64_t o, uint32_t n, void *ctx)
{
	const struct pat_ctx *c = ctx;

	pat_gen(c->seed, o, p, n);
	return true;
}

static bool
check_fn(uint8_t *p, uint64_t o, uint32_t n, void *ctx)
{
	static uint8_t want[16384];
	struct pat_ctx *c = ctx;

	while (n != 0) {
		uint32_t take = RTE_MIN(n, (uint32_t)sizeof(want)), i;

		if (c->read)
			read_gen(o, want, take);
		else
			pat_gen(c->seed, o, want, take);
		if (memcmp(p, want, take) != 0) {
			for (i = 0; i < take && p[i] == want[i]; i++)
				;
			c->bad_at = o + i;
			return false;
		}
		p += take;
		o += take;
		n -= take;
	}
	return true;
}

/* ---- clients, lanes, calls ---- */

/* A fault or loss waiting for recovery: when, and the poller's reconnects then. */
struct pending {
	uint64_t tsc;
	uint64_t reconnects;
};

/* One outstanding call's buffers: arguments and results, contiguous and in three pieces. */
struct lane {
	struct tbuf arg[2], res[2];
	bool busy;
};

struct client {
	const char *name;
	bool rfc_only; /* no 2005 draft, 1024-byte inline messages */
	char devargs[512];
	struct rpcr_rdev *dev;
	struct rpcr_xprt_poller *p;
	struct rpcr_mem_cache *mc;
	struct rpcr_clnt *cl;
	struct lane *lanes;
	uint32_t nlanes;
	/* Recovery: injected disconnects, and connection losses seen, not yet followed by a call
	 * completed on a later connection (one the poller's reconnects counted after them). */
	uint64_t faults_seen;
	struct pending inj[64], lost[64];
	uint32_t ninj, nlost;
	bool was_connected;
	uint64_t up_tsc;   /* when it was last seen connected again */
	uint64_t poll_tsc; /* its last poll */
	uint64_t max_gap;  /* longest between two polls since a fault or loss (TSC) */
	uint64_t losses;   /* connection losses seen */
};

/* What a call is, drawn before it is issued (and kept for a retry). */
#define SOAK_CB_MAX 200 /* CALLBACK data at most (inline at 1024 bytes both ways) */

struct op {
	uint8_t proc;
	uint8_t arg_pieces; /* index into lane->arg (0: contiguous, 1: three pieces) */
	uint8_t res_pieces;
	bool wchunk;      /* offer a write chunk for the result */
	bool rchunk;      /* offer a reply chunk */
	uint8_t cb_count; /* CALLBACK: calls back asked for */
	uint32_t len;
	uint32_t arg_off;
	uint32_t res_off;
	uint32_t res_cap;
};

struct scall {
	struct rpcr_call call; /* first */
	struct client *c;
	struct lane *lane;
	uint64_t serial;
	bool inflight;
	struct op op;
	struct rpcr_bulk ab, rb, view;
	int view_rc;
	uint32_t count;                   /* WRITE's result, CALLBACK's */
	struct rpcr_testprog_cb_args cba; /* CALLBACK's arguments */
	uint8_t cb_data[SOAK_CB_MAX];
	uint32_t rdlen; /* READ's argument */
};

/* The run's figures. */
static struct {
	uint64_t issued, completed_ok, bytes_verified, duplicated, corrupted, errors;
	uint64_t reg_fail_calls;  /* completed with -ENOMEM (registration failures), retried */
	uint64_t sreg_fail_calls; /* SYSTEM_ERR: the server could not register a result */
	uint64_t by_proc[5];
	uint64_t shapes[8];
	int status_val[16];
	uint64_t status_cnt[16];
	uint32_t nstatus;
	/* Completion bitmap, by call number. */
	uint64_t *done_bits;
	uint64_t done_words;
	/* Recovery samples (ns): from injected disconnects, and from losses seen. */
	uint64_t *inj_ns, *loss_ns;
	uint32_t ninj_ns, nloss_ns;
	uint32_t printed;
} S;

enum {
	SHAPE_ARG_INLINE,
	SHAPE_ARG_READ_CHUNK,
	SHAPE_LONG_CALL,
	SHAPE_RES_INLINE,
	SHAPE_RES_WRITE_CHUNK,
	SHAPE_RES_REPLY_CHUNK,
	SHAPE_RES_READ_CHUNK,
	SHAPE_MULTI_SEG,
};

static const char *const shape_names[] = {
	"inline args",  "read chunks",  "long calls",        "inline results",
	"write chunks", "reply chunks", "reply read chunks", "3-segment chunks",
};
static const char *const proc_names[] = {"NULL", "ECHO", "WRITE", "READ", "CALLBACK"};

static struct scall *calls;
static uint32_t call_cursor;
static uint64_t tsc_hz;
static uint32_t max_size = SOAK_MAX_SIZE;
static uint64_t timeout_ms = SOAK_TIMEOUT_MS;
static bool server_reg_faults; /* the server's registrations fail too: SYSTEM_ERR is retried */

static bool
bit_test_set(uint64_t n)
{
	uint64_t w = n >> 6, bit = 1ull << (n & 63);
	bool was;

	if (w >= S.done_words) {
		uint64_t nw = RTE_MAX(S.done_words * 2, w + 1024);
		uint64_t *b = realloc(S.done_bits, nw * sizeof(*b));

		if (b == NULL)
			abort();
		memset(b + S.done_words, 0, (nw - S.done_words) * sizeof(*b));
		S.done_bits = b;
		S.done_words = nw;
	}
	was = (S.done_bits[w] & bit) != 0;
	S.done_bits[w] |= bit;
	return was;
}

static bool
bit_test(uint64_t n)
{
	return (n >> 6) < S.done_words && (S.done_bits[n >> 6] & (1ull << (n & 63))) != 0;
}

static void
count_status(int st)
{
	uint32_t i;

	for (i = 0; i < S.nstatus; i++) {
		if (S.status_val[i] == st) {
			S.status_cnt[i]++;
			return;
		}
	}
	if (S.nstatus < RTE_DIM(S.status_val)) {
		S.status_val[S.nstatus] = st;
		S.status_cnt[S.nstatus++] = 1;
	}
}

static int
dec_view(struct rpcr_msg *m, void *res)
{
	struct scall *sc = res;

	sc->view_rc = rpcr_msg_get_bulk(m, UINT32_MAX, &sc->view);
	return sc->view_rc;
}

static int
dec_u32(struct rpcr_msg *m, void *res)
{
	return rpcr_xdr_dec_u32(rpcr_msg_dec(m), res);
}

static uint64_t
tsc_ms(uint64_t a, uint64_t b)
{
	return b > a ? (b - a) * 1000 / tsc_hz : 0;
}

/* Take the samples of the pending faults or losses that a completion on the poller's
 * @reconnects-th connection ends; say where the time went when one took long. */
static void
recover(struct client *c, const char *what, struct pending *v, uint32_t *n, uint64_t reconnects,
	uint64_t *arr, uint32_t *narr)
{
	uint64_t now = rte_rdtsc();
	uint32_t i, k = 0;

	for (i = 0; i < *n; i++) {
		if (reconnects <= v[i].reconnects) {
			v[k++] = v[i];
			continue;
		}
		if (*narr < SOAK_MAX_SAMPLES && now > v[i].tsc)
			arr[(*narr)++] = (now - v[i].tsc) * 1000000000ull / tsc_hz;
		if (tsc_ms(v[i].tsc, now) >= 100)
			printf("soak: slow recovery, client %s, %s: %" PRIu64
			       " ms to connect again "
			       "(%" PRIu64 " connections later), %" PRIu64 " ms more to a call; "
			       "this thread polled it at most %" PRIu64 " ms apart meanwhile\n",
			       c->name, what, tsc_ms(v[i].tsc, c->up_tsc),
			       reconnects - v[i].reconnects, tsc_ms(c->up_tsc, now),
			       tsc_ms(0, c->max_gap));
	}
	*n = k;
}

/* A call of client @c completed: faults and losses seen before its connection are over. */
static void
recovered(struct client *c)
{
	struct rpcr_xprt_stats st;

	if (c->ninj == 0 && c->nlost == 0)
		return;
	rpcr_xprt_stats_get(c->p, &st);
	recover(c, "injected disconnect", c->inj, &c->ninj, st.reconnects, S.inj_ns, &S.ninj_ns);
	recover(c, "connection loss", c->lost, &c->nlost, st.reconnects, S.loss_ns, &S.nloss_ns);
}

static bool
verify(struct scall *sc)
{
	const struct op *op = &sc->op;
	struct pat_ctx pc = {.read = op->proc == RPCR_TESTPROG_READ, .seed = sc->serial};

	switch (op->proc) {
	case RPCR_TESTPROG_NULL:
		return true;
	case RPCR_TESTPROG_CALLBACK:
		/* An answer comes on a live connection, where every call back gets through. */
		if (sc->count != op->cb_count) {
			fprintf(stderr,
				"soak: call %" PRIu64 " CALLBACK %u of %u bytes: the server "
				"verified %u\n",
				sc->serial, op->cb_count, op->len, sc->count);
			return false;
		}
		return true;
	case RPCR_TESTPROG_WRITE:
		if (sc->count != op->len) {
			fprintf(stderr, "soak: call %" PRIu64 " WRITE %u: server counted %u\n",
				sc->serial, op->len, sc->count);
			return false;
		}
		return true;
	default:
		break;
	}
	if (sc->view_rc != 0 || sc->view.len != op->len) {
		fprintf(stderr, "soak: call %" PRIu64 " %s %u: result of %u bytes (rc %d)\n",
			sc->serial, proc_names[op->proc], op->len, sc->view.len, sc->view_rc);
		return false;
	}
	if (!chain_walk(sc->view.m, sc->view.off, sc->view.len, check_fn, &pc)) {
		fprintf(stderr,
			"soak: call %" PRIu64
			" %s %u (client %s, wchunk %d rchunk %d): data differs "
			"at byte %" PRIu64 "\n",
			sc->serial, proc_names[op->proc], op->len, sc->c->name, op->wchunk,
			op->rchunk, pc.bad_at);
		return false;
	}
	S.bytes_verified += op->len;
	return true;
}

static void issue(struct client *c, struct lane *l, const struct op *op);

static void
soak_done(struct rpcr_call *call)
{
	struct scall *sc = (struct scall *)call;
	int st = call->status;

	if (bit_test_set(sc->serial)) {
		S.duplicated++;
		if (S.printed++ < 20)
			fprintf(stderr, "soak: call %" PRIu64 " completed again (status %d)\n",
				sc->serial, st);
		return;
	}
	if (!sc->inflight) {
		/* (Cannot be: the bit was clear.) */
		S.duplicated++;
		return;
	}
	sc->inflight = false;
	count_status(st);
	if (st == 0 && call->accept_stat == RPCR_ONCRPC_SUCCESS) {
		if (verify(sc)) {
			S.completed_ok++;
			S.by_proc[sc->op.proc]++;
		} else {
			S.corrupted++;
		}
		recovered(sc->c);
		sc->lane->busy = false;
		return;
	}
	if (st == -ENOMEM) {
		/* A registration failed (injected): the engine says so; the same again. */
		S.reg_fail_calls++;
		issue(sc->c, sc->lane, &sc->op);
		return;
	}
	if (st == -EREMOTEIO && call->accept_stat == RPCR_ONCRPC_SYSTEM_ERR && server_reg_faults) {
		/* The server could not register a result for us to read (doc/xprt.md). */
		S.sreg_fail_calls++;
		issue(sc->c, sc->lane, &sc->op);
		return;
	}
	S.errors++;
	if (S.printed++ < 20)
		fprintf(stderr, "soak: call %" PRIu64 " %s %u (client %s): status %d (%s)\n",
			sc->serial, proc_names[sc->op.proc], sc->op.len, sc->c->name, st,
			strerror(-st));
	sc->lane->busy = false;
}

/* A size: 0, small (inline), medium (chunks), large (up to the maximum, log-uniform). */
static uint32_t
draw_len(uint32_t max)
{
	uint32_t k = rpcr_test_below(&rng, 100), lo, hi;

	if (k < 4 || max == 0)
		return 0;
	if (k < 40 || max <= 1024)
		return 1 + rpcr_test_below(&rng, RTE_MIN(max, 1023u));
	if (k < 75) {
		lo = 1024;
		hi = RTE_MIN(65536u, max);
	} else {
		lo = RTE_MIN(65536u, max);
		hi = max;
	}
	if (hi <= lo)
		return lo;
	/* Log-uniform in [lo, hi). */
	{
		uint32_t bits_lo = 31 - (uint32_t)__builtin_clz(lo);
		uint32_t bits_hi = 31 - (uint32_t)__builtin_clz(hi);
		uint32_t b = bits_lo + rpcr_test_below(&rng, bits_hi - bits_lo + 1);
		uint64_t v = (1ull << b) + rpcr_test_below(&rng, 1u << b);

		return (uint32_t)RTE_MIN(RTE_MAX(v, (uint64_t)lo), (uint64_t)hi);
	}
}

/* Draw a call for client @c that the engine must carry (no shape it refuses by design). */
static void
draw_op(const struct client *c, struct op *op, uint32_t max)
{
	uint32_t k = rpcr_test_below(&rng, 100);

	memset(op, 0, sizeof(*op));
	op->proc = k < 5    ? RPCR_TESTPROG_CALLBACK
		   : k < 12 ? RPCR_TESTPROG_NULL
		   : k < 45 ? RPCR_TESTPROG_ECHO
		   : k < 65 ? RPCR_TESTPROG_WRITE
			    : RPCR_TESTPROG_READ;
	if (op->proc == RPCR_TESTPROG_NULL)
		return;
	if (op->proc == RPCR_TESTPROG_CALLBACK) {
		op->len = rpcr_test_below(&rng, SOAK_CB_MAX + 1);
		op->cb_count = (uint8_t)(1 + rpcr_test_below(&rng, 4));
		return;
	}
	op->len = draw_len(max);
	op->arg_pieces = (uint8_t)rpcr_test_below(&rng, 2);
	op->res_pieces = (uint8_t)rpcr_test_below(&rng, 2);
	/* Unaligned addresses; with three pieces, a range across the first boundary. */
	op->arg_off = rpcr_test_below(&rng, 64);
	op->res_off = rpcr_test_below(&rng, 64);
	if (op->proc == RPCR_TESTPROG_WRITE)
		return;
	/* Results: a write chunk (its room a little more than needed), a reply chunk, or
	 * neither: inline when small, a read chunk of the reply (draft) when large. */
	k = rpcr_test_below(&rng, 3);
	op->wchunk = k == 0;
	op->rchunk = k == 1 && op->len + 256 <= 60000;
	op->res_cap = op->len + rpcr_test_below(&rng, 4096);
	/* A read chunk of the reply is one the server builds: 16 segments at most (doc/xprt.md),
	 * and READ's data is 32 KiB pieces of one buffer, ECHO's the 60 KiB bulk buffers it
	 * pulled: more than 512 KiB goes in a write chunk. */
	if (!c->rfc_only && !op->wchunk && !op->rchunk && op->len > 16 * 32768)
		op->wchunk = true;
	if (c->rfc_only && !op->wchunk && !op->rchunk) {
		/* RFC 8166 has no read chunks in replies: a large result needs a chunk. */
		if (op->len + 256 <= 60000)
			op->rchunk = true;
		else
			op->wchunk = true;
	}
	/* A reply chunk also when the reply might not fit the 1024-byte inline size (a write chunk
	 * is offered only from 1024 bytes of room). */
	if (c->rfc_only && op->len < 1024)
		op->rchunk = true;
}

/* Count the shape the engine gives a call (its rules, doc/xprt.md): what the mix covered. */
static void
count_shapes(const struct client *c, const struct op *op)
{
	uint32_t inl = c->rfc_only ? 1024 : 4096, padded = (uint32_t)rpcr_xdr_roundup(op->len);
	bool multi = false;

	if (op->proc == RPCR_TESTPROG_ECHO || op->proc == RPCR_TESTPROG_WRITE) {
		if (op->len >= 1024) {
			S.shapes[SHAPE_ARG_READ_CHUNK]++;
			multi |= op->arg_pieces != 0;
		} else if (28 + 40 + 4 + padded > inl) {
			S.shapes[SHAPE_LONG_CALL]++;
		} else {
			S.shapes[SHAPE_ARG_INLINE]++;
		}
	}
	if (op->proc == RPCR_TESTPROG_ECHO || op->proc == RPCR_TESTPROG_READ) {
		if (op->wchunk && op->res_cap >= 1024) {
			S.shapes[SHAPE_RES_WRITE_CHUNK]++;
			multi |= op->res_pieces != 0 && op->len >= 1024;
		} else if (op->rchunk && 28 + padded + 64 > inl) {
			S.shapes[SHAPE_RES_REPLY_CHUNK]++;
		} else if (op->len >= 1024) {
			S.shapes[SHAPE_RES_READ_CHUNK]++;
		} else {
			S.shapes[SHAPE_RES_INLINE]++;
		}
	}
	if (multi)
		S.shapes[SHAPE_MULTI_SEG]++;
}

/* Where @len bytes start in a lane buffer: @off in, or across the first piece's end. */
static uint32_t
place(const struct tbuf *t, uint32_t len, uint32_t off)
{
	if (t->pieces > 1) {
		uint32_t per = (t->len + t->pieces - 1) / t->pieces;

		if (len / 2 + off < per && per - len / 2 - off + len <= t->len)
			return per - len / 2 - off;
	}
	return len + off <= t->len ? off : 0;
}

static void
issue(struct client *c, struct lane *l, const struct op *op)
{
	struct scall *sc = NULL;
	struct rpcr_call *call;
	uint32_t i;
	int rc;

	for (i = 0; i < SOAK_CALLS; i++) {
		struct scall *x = &calls[(call_cursor + i) % SOAK_CALLS];

		if (!x->inflight) {
			sc = x;
			call_cursor = (call_cursor + i + 1) % SOAK_CALLS;
			break;
		}
	}
	if (sc == NULL)
		abort(); /* (never more in flight than lanes) */
	memset(sc, 0, sizeof(*sc));
	sc->c = c;
	sc->lane = l;
	sc->op = *op;
	sc->serial = S.issued++;
	sc->inflight = true;
	l->busy = true;
	call = &sc->call;
	call->proc = op->proc;
	call->done = soak_done;
	call->user = sc;
	switch (op->proc) {
	case RPCR_TESTPROG_ECHO:
	case RPCR_TESTPROG_WRITE: {
		struct tbuf *a = &l->arg[op->arg_pieces];
		uint32_t off = place(a, op->len, op->arg_off);
		struct pat_ctx pc = {.seed = sc->serial};

		sc->ab = (struct rpcr_bulk){a->m, off, op->len};
		chain_walk(a->m, off, op->len, fill_fn, &pc);
		call->encode = rpcr_testprog_enc_data;
		call->args = &sc->ab;
		break;
	}
	case RPCR_TESTPROG_READ:
		sc->rdlen = op->len;
		call->encode = rpcr_testprog_enc_len;
		call->args = &sc->rdlen;
		break;
	case RPCR_TESTPROG_CALLBACK: {
		uint32_t k;

		for (k = 0; k < op->len; k++)
			sc->cb_data[k] = (uint8_t)(sc->serial * 7 + k);
		sc->cba = (struct rpcr_testprog_cb_args){
			.count = op->cb_count, .data = sc->cb_data, .len = op->len};
		call->encode = rpcr_testprog_enc_callback;
		call->args = &sc->cba;
		break;
	}
	default:
		break;
	}
	if (op->proc == RPCR_TESTPROG_WRITE || op->proc == RPCR_TESTPROG_CALLBACK) {
		call->decode = dec_u32;
		call->res = &sc->count;
	} else if (op->proc != RPCR_TESTPROG_NULL) {
		call->decode = dec_view;
		call->res = sc;
		if (op->wchunk) {
			struct tbuf *r = &l->res[op->res_pieces];
			uint32_t cap = RTE_MIN(op->res_cap, r->len);
			uint32_t off = place(r, cap, op->res_off);

			sc->rb = (struct rpcr_bulk){r->m, off, cap};
			call->res_bulk = &sc->rb;
			call->nres_bulk = 1;
		}
		if (op->rchunk)
			call->reply_max = (uint32_t)rpcr_xdr_roundup(op->len) + 64;
	}
	count_shapes(c, op);
	rc = rpcr_clnt_call(c->cl, call);
	if (rc != 0) {
		/* (From the poller's own thread a call is always queued.) */
		fprintf(stderr, "soak: rpcr_clnt_call: %s\n", strerror(-rc));
		sc->inflight = false;
		l->busy = false;
		S.errors++;
		bit_test_set(sc->serial);
	}
}

/* After a poll of client @c: faults injected on its device, connection losses it saw. */
static void
watch(struct client *c)
{
	struct rpcr_rdev_stats ds;
	struct rpcr_xprt_stats st;
	bool conn = rpcr_clnt_connected(c->cl);

	rpcr_rdev_stats_get(c->dev, &ds);
	if (ds.fault_disconnects != c->faults_seen || (c->was_connected && !conn)) {
		rpcr_xprt_stats_get(c->p, &st);
		if (c->ninj + c->nlost == 0)
			c->max_gap = 0;
	}
	if (ds.fault_disconnects != c->faults_seen) {
		/* (One at most per poll: a connection's QP is in error after the first.) */
		c->faults_seen = ds.fault_disconnects;
		if (c->ninj < RTE_DIM(c->inj))
			c->inj[c->ninj++] = (struct pending){ds.fault_last_tsc, st.reconnects};
	}
	if (c->was_connected && !conn) {
		c->losses++;
		if (c->nlost < RTE_DIM(c->lost))
			c->lost[c->nlost++] = (struct pending){rte_rdtsc(), st.reconnects};
	}
	if (!c->was_connected && conn)
		c->up_tsc = rte_rdtsc();
	c->was_connected = conn;
}

/* Open file descriptors and memory mappings of this process (a leak per connection shows). */
static void
proc_usage(uint64_t *fds, uint64_t *maps)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	FILE *f = fopen("/proc/self/maps", "r");
	int ch;

	*fds = 0;
	*maps = 0;
	while (dir != NULL && (d = readdir(dir)) != NULL)
		*fds += d->d_name[0] != '.';
	if (dir != NULL)
		closedir(dir);
	while (f != NULL && (ch = fgetc(f)) != EOF)
		*maps += ch == '\n';
	if (f != NULL)
		fclose(f);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
print_recovery(const char *what, uint64_t *v, uint32_t n, uint64_t max_ns)
{
	if (n == 0) {
		printf("recovery: %s: no samples\n", what);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("recovery: %u %s: min %.3f ms, median %.3f ms, max %.3f ms (goal <= %.0f ms)\n", n,
	       what, v[0] / 1e6, v[n / 2] / 1e6, v[n - 1] / 1e6, max_ns / 1e6);
}

/* ---- set-up ---- */

static int
client_setup(struct client *c, const char *addr, uint32_t nlanes)
{
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_clnt_conf cc;
	uint64_t deadline = now_ns() + 5000000000ull;
	uint32_t i, k;

	c->dev = rpcr_rdev_open(c->devargs);
	if (c->dev == NULL) {
		fprintf(stderr, "soak: open %s: %s\n", c->devargs, rte_strerror(rte_errno));
		return -1;
	}
	memset(&pc, 0, sizeof(pc));
	pc.name = c->name;
	pc.dev = c->dev;
	pc.arena = P.arena;
	/* Room for several 4 MiB replies pulled from read chunks at once; message buffers for the
	 * lanes' chains too (an attached mbuf holds 64 KiB at most: 64 for each 4 MiB buffer). */
	pc.bulk_bufs = c->rfc_only ? 256 : 1024;
	pc.bufs = 2048 + nlanes * 4 * (max_size / 65536 + 6);
	/* (b: the other strategy, and the one registration faults reach.) */
	pc.reg_per_call = c->rfc_only;
	c->p = rpcr_xprt_poller_create(&pc);
	c->mc = c->p != NULL ? rpcr_mem_cache_create(rpcr_xprt_poller_pd(c->p), NULL) : NULL;
	if (c->mc == NULL) {
		fprintf(stderr, "soak: client %s: %s\n", c->name, rte_strerror(rte_errno));
		return -1;
	}
	c->nlanes = nlanes;
	c->lanes = calloc(nlanes, sizeof(*c->lanes));
	for (i = 0; i < nlanes; i++) {
		for (k = 0; k < 4; k++) {
			struct tbuf *t = k < 2 ? &c->lanes[i].arg[k] : &c->lanes[i].res[k - 2];
			int rc = tbuf_make(c->p, P.arena, c->mc, t, max_size + SOAK_SLACK,
					   k % 2 == 0 ? 1 : 3);

			if (rc != 0) {
				fprintf(stderr, "soak: client %s: buffers: %s\n", c->name,
					strerror(-rc));
				return -1;
			}
		}
	}
	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = RPCR_TESTPROG;
	cc.vers = RPCR_TESTPROG_VERS;
	cc.credits = c->rfc_only ? 8 : 32;
	cc.inline_send = c->rfc_only ? 1024 : 0;
	cc.inline_recv = c->rfc_only ? 1024 : 0;
	cc.remote_inv = true;
	cc.no_draft = c->rfc_only;
	cc.ulb = rpcr_testprog_ulb;
	cc.nulb = RTE_DIM(rpcr_testprog_ulb);
	cc.timeout_us = timeout_ms * 1000;
	cc.bc_credits = 4; /* it serves the callback program (CALLBACK) */
	c->cl = rpcr_clnt_create(c->p, &cc);
	if (c->cl == NULL || rpcr_testprog_cb_register(c->cl) != 0) {
		fprintf(stderr, "soak: client %s: %s\n", c->name, rte_strerror(rte_errno));
		return -1;
	}
	while (!rpcr_clnt_connected(c->cl) && now_ns() < deadline)
		rpcr_xprt_poll(c->p);
	if (!rpcr_clnt_connected(c->cl)) {
		fprintf(stderr, "soak: client %s: not connected to %s\n", c->name, addr);
		return -1;
	}
	c->was_connected = true;
	return 0;
}

static int
client_teardown(struct client *c)
{
	int bad = 0;
	uint32_t i, k;

	if (c->cl != NULL)
		rpcr_clnt_destroy(c->cl);
	for (i = 0; c->lanes != NULL && i < c->nlanes; i++) {
		for (k = 0; k < 2; k++) {
			if (c->lanes[i].arg[k].m != NULL)
				tbuf_free(c->mc, &c->lanes[i].arg[k]);
			if (c->lanes[i].res[k].m != NULL)
				tbuf_free(c->mc, &c->lanes[i].res[k]);
		}
	}
	free(c->lanes);
	if (c->mc != NULL && rpcr_mem_cache_free(c->mc) != 0)
		bad++;
	if (c->p != NULL && rpcr_xprt_poller_destroy(c->p) != 0) {
		/* Buffers the engine never gave back. */
		fprintf(stderr, "soak: client %s: poller busy at exit (buffers leaked)\n", c->name);
		bad++;
	}
	if (c->dev != NULL && rpcr_rdev_close(c->dev) != 0) {
		fprintf(stderr, "soak: client %s: device busy at exit\n", c->name);
		bad++;
	}
	return bad;
}

static void
devargs_make(char *out, size_t n, const char *base, uint64_t seed, const char *faults)
{
	if (faults == NULL || faults[0] == '\0')
		snprintf(out, n, "%s", base);
	else
		snprintf(out, n, "%s%sfault_seed=%" PRIu64 ",%s", base,
			 strchr(base, ':') != NULL ? "," : ":", seed, faults);
}

/* Whether fault list @faults asks for @key with a value other than 0. */
static bool
has(const char *faults, const char *key)
{
	size_t kl = strlen(key);
	const char *p = faults;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=')
			return strtod(p + kl + 1, NULL) != 0.0;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return false;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"faults", required_argument, NULL, 'f'},
		{"server-faults", required_argument, NULL, 'F'},
		{"dev", required_argument, NULL, 'd'},
		{"cdev", required_argument, NULL, 'c'},
		{"addr", required_argument, NULL, 'a'},
		{"max-size", required_argument, NULL, 'm'},
		{"external-faults", no_argument, NULL, 'x'},
		{"recovery-max-ms", required_argument, NULL, 'r'},
		{"timeout-ms", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	struct harness_conf hc = {
		.devargs = "shm",
		.arena_bytes = 0, /* below, from the largest size */
		.cq_depth = 1024,
		.server_lcore = 1,
		.client_lcore = 0,
		.quiet = true,
		.no_huge = true,
	};
	const char *faults = SOAK_CLIENT_FAULTS, *sfaults = SOAK_SERVER_FAULTS;
	const char *cbase = NULL, *env;
	static char sdevargs[512];
	char sreg[64] = "";
	uint64_t seconds = SOAK_DEFAULT_SECONDS, seed = 1, max_rec_ms = 1000;
	bool external = false;
	struct client cli[2];
	char saddr[128];
	uint64_t t_end, t_probe_end, t_drain_end, t0;
	uint64_t sv[8], dv[8], n, fds0, fds1, maps0, maps1;
	struct rpcr_rdev_stats ds[2];
	struct rpcr_xprt_stats xs[2];
	struct ctl_msg m;
	uint64_t lost = 0, d_inj, r_inj, w_inj, del_inj, losses;
	int c, status, fail = 0;
	uint32_t i, j;

	env = getenv("RPCR_SOAK_SECONDS");
	if (env != NULL && env[0] != '\0')
		seconds = strtoull(env, NULL, 0);
	env = getenv("RPCR_SOAK_SEED");
	if (env != NULL && env[0] != '\0')
		seed = strtoull(env, NULL, 0);
	while ((c = getopt_long(argc, argv, "s:S:f:F:d:c:a:m:xr:t:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			faults = optarg;
			break;
		case 'F':
			sfaults = optarg;
			break;
		case 'd':
			hc.devargs = optarg;
			break;
		case 'c':
			cbase = optarg;
			break;
		case 'a':
			hc.addr = optarg;
			break;
		case 'm':
			max_size = (uint32_t)RTE_MIN(strtoull(optarg, NULL, 0), SOAK_MAX_SIZE);
			break;
		case 'x':
			external = true;
			break;
		case 'r':
			max_rec_ms = strtoull(optarg, NULL, 0);
			break;
		case 't':
			timeout_ms = RTE_MAX(strtoull(optarg, NULL, 0), 1ull);
			break;
		default:
			fprintf(stderr,
				"usage: see the comment at the top of test/xprt/test_soak.c\n");
			return 2;
		}
	}
	hc.cdevargs = cbase;
	server_reg_faults = has(sfaults, "fault_reg");
	if (cbase == NULL)
		cbase = hc.devargs;
	devargs_make(sdevargs, sizeof(sdevargs), hc.devargs, seed + 2, sfaults);
	/* Pools and buffers of both clients, lanes of four buffers each (the server needs less). */
	hc.arena_bytes = (192u << 20) + 32 * ((size_t)max_size + (64u << 10));
	alarm((unsigned int)RTE_MIN(seconds + SOAK_PROBE_S + 2 * timeout_ms / 1000 + 120,
				    (uint64_t)UINT32_MAX));
	if (harness_start(&hc, &P) != 0)
		return P.server ? 3 : 1;
	if (P.server) {
		/* The engine server on the faulty device (the harness's own stays plain). */
		P.devargs = sdevargs;
		status = xt_server_main(&P);
		harness_finish(&P);
		return status;
	}
	tsc_hz = rte_get_tsc_hz();
	if (getenv("XT_DEBUG") != NULL) {
		rte_log_set_global_level(RTE_LOG_DEBUG);
		rte_log_set_level_regexp("rpcr", RTE_LOG_DEBUG);
	}
	for (i = 0; i < sizeof(read_tab); i++)
		read_tab[i] = rpcr_testprog_byte(i);
	rng.s = seed;
	S.inj_ns = calloc(SOAK_MAX_SAMPLES, sizeof(uint64_t));
	S.loss_ns = calloc(SOAK_MAX_SAMPLES, sizeof(uint64_t));
	calls = rte_zmalloc("soak", sizeof(*calls) * SOAK_CALLS, 0);
	xt_server_addr(P.addr, saddr, sizeof(saddr));
	ctl_recv(&P, CMD_ACK, &m);
	/* The server: credits 64, inline 4096 both ways, R, the draft, threshold 1024. */
	{
		uint64_t cfg[8] = {64, 4096, 4096, 1, 0, 0, 1024, 0};

		ctl_send(&P, CMD_START, 8, cfg);
		ctl_recv(&P, CMD_ACK, &m);
	}
	memset(cli, 0, sizeof(cli));
	cli[0].name = "a";
	cli[1].name = "b";
	cli[1].rfc_only = true;
	devargs_make(cli[0].devargs, sizeof(cli[0].devargs), cbase, seed, faults);
	devargs_make(cli[1].devargs, sizeof(cli[1].devargs), cbase, seed + 1, faults);
	if (client_setup(&cli[0], saddr, 6) != 0 || client_setup(&cli[1], saddr, 2) != 0) {
		fail = 1;
		goto out;
	}
	printf("soak: %" PRIu64 " s, seed %" PRIu64 ", sizes 0 to %u bytes; clients %s, %s; "
	       "server %s\n",
	       seconds, seed, max_size, cli[0].devargs, cli[1].devargs, sdevargs);
	fflush(stdout);

	/* The run: keep every lane busy. */
	proc_usage(&fds0, &maps0);
	t0 = now_ns();
	t_end = t0 + seconds * 1000000000ull;
	t_probe_end = t_end + SOAK_PROBE_S * 1000000000ull;
	for (;;) {
		uint64_t now = now_ns();
		bool busy = false, pending = false;

		for (i = 0; i < 2; i++) {
			struct client *x = &cli[i];

			for (j = 0; j < x->nlanes; j++) {
				struct lane *l = &x->lanes[j];
				struct op op;

				if (!l->busy && now < t_end) {
					draw_op(x, &op, max_size);
					issue(x, l, &op);
				} else if (!l->busy && (x->ninj != 0 || x->nlost != 0) && j == 0 &&
					   now < t_probe_end) {
					/* After the run: NULL calls until the last fault is
					 * recovered, so that it is timed too. */
					memset(&op, 0, sizeof(op));
					issue(x, l, &op);
				}
				busy |= l->busy;
			}
			pending |= x->ninj != 0 || x->nlost != 0;
		}
		if (now >= t_end && !busy && (!pending || now >= t_probe_end))
			break;
		if (now >= t_probe_end + timeout_ms * 1000000 + 5000000000ull)
			break; /* calls that never complete: lost */
		for (i = 0; i < 2; i++) {
			uint64_t t = rte_rdtsc();

			/* (A recovery that took long: was it the engine or this loop?) */
			if (cli[i].poll_tsc != 0 && t - cli[i].poll_tsc > cli[i].max_gap)
				cli[i].max_gap = t - cli[i].poll_tsc;
			cli[i].poll_tsc = t;
			rpcr_xprt_poll(cli[i].p);
			watch(&cli[i]);
		}
	}
	/* A while longer: a call completed twice would show now. */
	t_drain_end = now_ns() + 200000000ull;
	while (now_ns() < t_drain_end)
		for (i = 0; i < 2; i++)
			rpcr_xprt_poll(cli[i].p);
	for (n = 0; n < S.issued; n++) {
		if (!bit_test(n)) {
			lost++;
			if (lost <= 10)
				fprintf(stderr, "soak: call %" PRIu64 " never completed\n", n);
		}
	}

	/* The figures. */
	proc_usage(&fds1, &maps1);
	for (i = 0; i < 2; i++) {
		rpcr_rdev_stats_get(cli[i].dev, &ds[i]);
		rpcr_xprt_stats_get(cli[i].p, &xs[i]);
	}
	ctl_send(&P, CMD_STATS, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	memcpy(sv, m.v, sizeof(sv));
	ctl_send(&P, CMD_DEV_STATS, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	memcpy(dv, m.v, sizeof(dv));
	d_inj = ds[0].fault_disconnects + ds[1].fault_disconnects + dv[1];
	r_inj = ds[0].fault_reg + ds[1].fault_reg + dv[2];
	w_inj = ds[0].fault_recv + ds[1].fault_recv + dv[3];
	del_inj = ds[0].fault_delayed + ds[1].fault_delayed + dv[4];
	losses = cli[0].losses + cli[1].losses;
	if (server_reg_faults)
		snprintf(sreg, sizeof(sreg), ", %" PRIu64 " after SYSTEM_ERR", S.sreg_fail_calls);
	printf("mix: NULL %" PRIu64 ", ECHO %" PRIu64 ", WRITE %" PRIu64 ", READ %" PRIu64
	       ", CALLBACK %" PRIu64,
	       S.by_proc[0], S.by_proc[1], S.by_proc[2], S.by_proc[3], S.by_proc[4]);
	for (i = 0; i < RTE_DIM(shape_names); i++)
		printf("; %s %" PRIu64, shape_names[i], S.shapes[i]);
	printf("\nstatus:");
	for (i = 0; i < S.nstatus; i++)
		printf(" %d x %" PRIu64, S.status_val[i], S.status_cnt[i]);
	printf("\nengine: a: %" PRIu64 " calls sent, %" PRIu64 " retransmits, %" PRIu64
	       " reconnects, %" PRIu64 " reply reads, %" PRIu64 " RDMA_DONE; b: %" PRIu64
	       " calls sent, %" PRIu64 " retransmits, %" PRIu64 " reconnects; server: %" PRIu64
	       " calls, %" PRIu64 " replies; connection losses seen by the clients %" PRIu64
	       "; client fds %" PRIu64 " -> %" PRIu64 ", mappings %" PRIu64 " -> %" PRIu64 "\n",
	       xs[0].calls_sent, xs[0].retransmits, xs[0].reconnects, xs[0].reply_reads,
	       xs[0].dones_sent, xs[1].calls_sent, xs[1].retransmits, xs[1].reconnects, sv[0],
	       sv[1], losses, fds0, fds1, maps0, maps1);
	printf("memory: a: %" PRIu64 " windows bound, invalidated %" PRIu64 " locally, %" PRIu64
	       " remotely, %" PRIu64 " registrations per call; b: %" PRIu64
	       " registrations per call, %" PRIu64 " remotely invalidated\n",
	       xs[0].mw_binds, xs[0].local_invalidations, xs[0].remote_invalidations, xs[0].reg_mrs,
	       xs[1].reg_mrs, xs[1].remote_invalidations);
	printf("soak: %" PRIu64 " RPCs completed, %" PRIu64 " bytes verified, lost %" PRIu64
	       ", duplicated %" PRIu64 ", corrupted %" PRIu64 ", %" PRIu64
	       " injected disconnects (%" PRIu64 " client, %" PRIu64 " server; %" PRIu64
	       " registration failures, %" PRIu64 " calls retried after -ENOMEM%s; %" PRIu64
	       " receives withheld; %" PRIu64 " completions delayed), errors %" PRIu64 "\n",
	       S.completed_ok, S.bytes_verified, lost, S.duplicated, S.corrupted, d_inj,
	       ds[0].fault_disconnects + ds[1].fault_disconnects, dv[1], r_inj, S.reg_fail_calls,
	       sreg, w_inj, del_inj, S.errors);
	print_recovery("injected disconnects (client side, from the injection)", S.inj_ns,
		       S.ninj_ns, max_rec_ms * 1000000ull);
	print_recovery("connection losses (seen by a client, from when seen)", S.loss_ns,
		       S.nloss_ns, max_rec_ms * 1000000ull);
	fflush(stdout);

	if (lost != 0 || S.duplicated != 0 || S.corrupted != 0 || S.errors != 0) {
		printf("FAIL: calls lost, duplicated, corrupted or failed\n");
		fail = 1;
	}
	if (fds1 > fds0 + 16 || maps1 > maps0 + 64) {
		/* Two connections then and now: what else stayed is a leak per reconnect. */
		printf("FAIL: file descriptors or mappings leaked\n");
		fail = 1;
	}
	if (S.completed_ok == 0) {
		printf("FAIL: nothing completed\n");
		fail = 1;
	}
	if (external) {
		if (losses == 0) {
			printf("FAIL: no connection was lost\n");
			fail = 1;
		}
	} else {
		/* Every fault asked for must have struck at least once. */
		if ((has(faults, "fault_disconnect") || has(sfaults, "fault_disconnect")) &&
		    d_inj == 0) {
			printf("FAIL: no disconnect was injected\n");
			fail = 1;
		}
		if ((has(faults, "fault_reg") || has(sfaults, "fault_reg")) && r_inj == 0) {
			printf("FAIL: no registration failure was injected\n");
			fail = 1;
		}
		if ((has(faults, "fault_recv") || has(sfaults, "fault_recv")) && w_inj == 0) {
			printf("FAIL: no receive was withheld\n");
			fail = 1;
		}
		if ((has(faults, "fault_delay_us") || has(sfaults, "fault_delay_us")) &&
		    del_inj == 0) {
			printf("FAIL: no completion was delayed\n");
			fail = 1;
		}
	}
	if ((S.ninj_ns != 0 && S.inj_ns[S.ninj_ns - 1] > max_rec_ms * 1000000ull) ||
	    (S.nloss_ns != 0 && S.loss_ns[S.nloss_ns - 1] > max_rec_ms * 1000000ull)) {
		printf("FAIL: recovery took longer than %" PRIu64 " ms\n", max_rec_ms);
		fail = 1;
	}
	if (cli[0].ninj + cli[1].ninj + cli[0].nlost + cli[1].nlost != 0) {
		printf("FAIL: %u injected disconnects, %u connection losses never recovered from\n",
		       cli[0].ninj + cli[1].ninj, cli[0].nlost + cli[1].nlost);
		fail = 1;
	}

out:
	for (i = 0; i < 2; i++)
		fail |= client_teardown(&cli[i]) != 0;
	/* (The server exits with 1 when its poller did not get every buffer back.) */
	ctl_send(&P, CMD_STOP, 0, NULL);
	ctl_recv(&P, CMD_ACK, &m);
	rte_free(calls);
	free(S.inj_ns);
	free(S.loss_ns);
	free(S.done_bits);
	status = harness_finish(&P);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("FAIL: server exited badly (status 0x%x)\n", status);
		fail = 1;
	}
	printf("%s\n", fail ? "soak FAILED" : "soak passed");
	return fail;
}
