/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr's NFSv4.1 client against the Linux kernel's NFS server over RDMA (knfsd, svcrdma), with
 * the back channel on rpcr's own connection (RFC 8167, RFC 8881 section 2.10.3.1). In order:
 *
 *   1. NULL; EXCHANGE_ID (SP4_NONE); CREATE_SESSION with CONN_BACK_CHAN, back-channel attributes
 *      and a callback program that this client serves (rpcr_clnt_register(): CB_NULL and
 *      CB_COMPOUND with CB_SEQUENCE, CB_RECALL, CB_RECALL_ANY; NFS4ERR_NOTSUPP for the other
 *      callback operations, NFS4ERR_OP_ILLEGAL for what is none). (A server may call CB_NULL
 *      first; knfsd 6.1 marks a v4.1 session's back channel up without calling.)
 *   2. RECLAIM_COMPLETE; PUTROOTFH, GETFH, GETATTR (the export is the pseudo-root: fsid=0).
 *   3. For each size of 0 B..1 MiB: OPEN (create), WRITE (FILE_SYNC4; the data by a read chunk
 *      from 1 KiB, the per-call binding rpcr_call::ulb), READ back (into a write chunk), compared
 *      byte for byte, and with the file as the kernel wrote it (--local DIR); CLOSE.
 *   4. --bench N: N WRITEs and N READs of 1 MiB, MB/s.
 *   5. --recalls N: N files, each opened for reading with a read delegation asked for; a thread
 *      of this process then opens the file for writing through the local file system (--local
 *      DIR: the export on this host), which makes knfsd recall the delegation (CB_RECALL over the
 *      back channel); the probe answers, sends DELEGRETURN, and checks that the writer's open
 *      completed in under 5 s and that /proc/fs/nfsd/clients/ * /states shows no delegation.
 *   6. --rebind: rpcr_clnt_disconnect(), the next connection bound to the session for both
 *      directions (BIND_CONN_TO_SESSION), and one recall more over it.
 *   7. DELEGRETURN of anything still held, DESTROY_SESSION, DESTROY_CLIENTID.
 *
 * Every COMPOUND but EXCHANGE_ID, CREATE_SESSION, BIND_CONN_TO_SESSION, DESTROY_SESSION and
 * DESTROY_CLIENTID starts with SEQUENCE (slot 0). knfsd refuses OPEN with NFS4ERR_GRACE for its
 * grace period after it starts, and gives no delegation then: the probe waits it out (--grace S).
 *
 * usage: nfs41_probe --dev DEVARGS --server IP [--port 20049] [--local DIR] [--recalls N]
 *                    [--rebind] [--bench N] [--grace S]
 *        nfs41_probe --selftest   (the callback service against crafted CB_COMPOUNDs, no device:
 *                                  each RFC 8881 error it must answer, and every cut message)
 * One line an operation on stdout; "OPS name ok N fail N" lines, and exit status 0 when every
 * operation got the expected answer.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>
#include <rpcr_mem.h>
#include <rpcr_xprt.h>

#define NFS4_PROG         100003u
#define NFS4_VERS         4u
#define NFSPROC4_NULL     0u
#define NFSPROC4_COMPOUND 1u
#define CB_PROG           0x40000000u /* (the client chooses; NFS4_CALLBACK, as Linux's) */
#define CB_VERS           1u
#define CB_SLOTS          4u /* back-channel slots, and the reverse credits (bc_credits) */
#define INLINE            4096u
#define DATA_MAX          (1u << 20)
#define FH4_MAX           128u
#define COMP_MAX          2048u /* a COMPOUND's arguments apart from the WRITE data */

/* RFC 8881 section 18: operations. */
enum {
	OP_CLOSE = 4,
	OP_DELEGRETURN = 8,
	OP_GETATTR = 9,
	OP_GETFH = 10,
	OP_OPEN = 18,
	OP_PUTFH = 22,
	OP_PUTROOTFH = 24,
	OP_READ = 25,
	OP_WRITE = 38,
	OP_BIND_CONN_TO_SESSION = 41,
	OP_EXCHANGE_ID = 42,
	OP_CREATE_SESSION = 43,
	OP_DESTROY_SESSION = 44,
	OP_SEQUENCE = 53,
	OP_DESTROY_CLIENTID = 57,
	OP_RECLAIM_COMPLETE = 58,
	OP_MAX = 59,
};

/* RFC 8881 section 20: callback operations. */
enum {
	OP_CB_GETATTR = 3,
	OP_CB_RECALL = 4,
	OP_CB_RECALL_ANY = 8,
	OP_CB_SEQUENCE = 11,
	OP_CB_OFFLOAD = 15, /* the last one (RFC 7862) */
	OP_CB_ILLEGAL = 10044,
};

/* nfsstat4 values used here. */
enum {
	NFS4_OK = 0,
	NFS4ERR_NOTSUPP = 10004,
	NFS4ERR_DELAY = 10008,
	NFS4ERR_GRACE = 10013,
	NFS4ERR_BAD_STATEID = 10025,
	NFS4ERR_BADXDR = 10036,
	NFS4ERR_OP_ILLEGAL = 10044,
	NFS4ERR_BADSESSION = 10052,
	NFS4ERR_BADSLOT = 10053,
	NFS4ERR_SEQ_MISORDERED = 10063,
	NFS4ERR_SEQUENCE_POS = 10064,
	NFS4ERR_RETRY_UNCACHED_REP = 10068,
	NFS4ERR_OP_NOT_IN_SESSION = 10071,
	NFS4ERR_MINOR_VERS_MISMATCH = 10021,
};

#define CREATE_SESSION4_FLAG_CONN_BACK_CHAN 0x2u
#define OPEN4_SHARE_ACCESS_READ             1u
#define OPEN4_SHARE_ACCESS_BOTH             3u
#define OPEN4_SHARE_ACCESS_WANT_READ_DELEG  0x100u
#define OPEN4_NOCREATE                      0u
#define OPEN4_CREATE                        1u
#define UNCHECKED4                          0u
#define CLAIM_NULL                          0u
#define OPEN_DELEGATE_NONE                  0u
#define OPEN_DELEGATE_READ                  1u
#define OPEN_DELEGATE_WRITE                 2u
#define OPEN_DELEGATE_NONE_EXT              3u
#define FILE_SYNC4                          2u
#define CDFC4_FORE_OR_BOTH                  3u
#define CDFS4_BOTH                          3u
#define NF4REG                              1u
#define NF4DIR                              2u
#define FATTR4_TYPE                         1u
#define FATTR4_SIZE                         4u

static const char *const op_names[OP_MAX] = {
	[OP_CLOSE] = "CLOSE",
	[OP_DELEGRETURN] = "DELEGRETURN",
	[OP_GETATTR] = "GETATTR",
	[OP_GETFH] = "GETFH",
	[OP_OPEN] = "OPEN",
	[OP_PUTFH] = "PUTFH",
	[OP_PUTROOTFH] = "PUTROOTFH",
	[OP_READ] = "READ",
	[OP_WRITE] = "WRITE",
	[OP_BIND_CONN_TO_SESSION] = "BIND_CONN_TO_SESSION",
	[OP_EXCHANGE_ID] = "EXCHANGE_ID",
	[OP_CREATE_SESSION] = "CREATE_SESSION",
	[OP_DESTROY_SESSION] = "DESTROY_SESSION",
	[OP_SEQUENCE] = "SEQUENCE",
	[OP_DESTROY_CLIENTID] = "DESTROY_CLIENTID",
	[OP_RECLAIM_COMPLETE] = "RECLAIM_COMPLETE",
};

/* Byte @i of what a file of @salt is written with. */
static inline uint8_t
data_byte(uint32_t i, uint32_t salt)
{
	return (uint8_t)(i * 13 + 7 + (i >> 10) + salt);
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct fh4 {
	uint32_t len;
	uint8_t data[FH4_MAX];
};

struct stateid4 {
	uint32_t seqid;
	uint8_t other[12];
};

/* ---- the session, and what the back channel saw ---- */

struct sess {
	struct rpcr_xprt_poller *p;
	struct rpcr_clnt *cl;
	uint64_t clientid;
	uint32_t exid_seq;
	uint8_t sid[16];
	bool have_sid;
	uint32_t slot_seq; /* fore channel, slot 0: the last sequenceid sent */
	uint32_t fore_maxreq, fore_maxresp, back_maxreq, back_maxresp;
	uint32_t io_max;    /* the largest READ or WRITE the session's messages hold */
	uint32_t seq_flags; /* sr_status_flags of the last SEQUENCE */
	/* Back channel (handlers run on the poller, which is this thread). */
	uint32_t cb_seq[CB_SLOTS];
	uint32_t cb_null, cb_compound, cb_recall, cb_recall_any, cb_refused;
	uint32_t cb_ops[OP_CB_OFFLOAD + 1];
	/* The delegation held (one at a time) and whether it was recalled. */
	bool deleg_held;
	struct stateid4 deleg;
	struct fh4 deleg_fh;
	bool recalled;
	uint64_t recall_us;
	bool recall_any;
};

/* Per-operation tally, for the summary (every operation exercised, with its results). */
static uint32_t op_ok[OP_MAX], op_fail[OP_MAX];

/* ---- COMPOUND arguments: bytes, with one DDP-eligible item (WRITE's data) at a position ---- */

struct comp {
	uint8_t b[COMP_MAX];
	uint32_t n;
	uint32_t nops_at, nops;
	uint32_t ops[16];
	uint32_t bulk_at; /* where the WRITE data goes (b[bulk_at..] follows it) */
	struct rpcr_bulk bulk;
	bool has_bulk, overflow;
};

static void
put32(struct comp *c, uint32_t v)
{
	if (c->n + 4 > sizeof(c->b)) {
		c->overflow = true;
		return;
	}
	rpcr_xdr_store32(c->b + c->n, v);
	c->n += 4;
}

static void
put64(struct comp *c, uint64_t v)
{
	put32(c, (uint32_t)(v >> 32));
	put32(c, (uint32_t)v);
}

static void
putfixed(struct comp *c, const void *p, uint32_t len)
{
	uint32_t pad = (uint32_t)rpcr_xdr_roundup(len) - len;

	if (c->n + len + pad > sizeof(c->b)) {
		c->overflow = true;
		return;
	}
	memcpy(c->b + c->n, p, len);
	memset(c->b + c->n + len, 0, pad);
	c->n += len + pad;
}

static void
putopaque(struct comp *c, const void *p, uint32_t len)
{
	put32(c, len);
	putfixed(c, p, len);
}

static void
putstr(struct comp *c, const char *s)
{
	putopaque(c, s, (uint32_t)strlen(s));
}

static void
put_stateid(struct comp *c, const struct stateid4 *s)
{
	put32(c, s->seqid);
	putfixed(c, s->other, 12);
}

static void
comp_start(struct comp *c, const char *tag)
{
	memset(c, 0, sizeof(*c));
	putstr(c, tag);
	put32(c, 1); /* minorversion */
	c->nops_at = c->n;
	put32(c, 0);
}

static void
comp_op(struct comp *c, uint32_t op)
{
	if (c->nops < RTE_DIM(c->ops))
		c->ops[c->nops] = op;
	c->nops++;
	put32(c, op);
}

static void
comp_sequence(struct comp *c, struct sess *s)
{
	comp_op(c, OP_SEQUENCE);
	putfixed(c, s->sid, 16);
	put32(c, ++s->slot_seq);
	put32(c, 0); /* slot */
	put32(c, 0); /* highest slot */
	put32(c, 0); /* cachethis */
}

static void
comp_putfh(struct comp *c, const struct fh4 *fh)
{
	comp_op(c, OP_PUTFH);
	putopaque(c, fh->data, fh->len);
}

static int
enc_comp(struct rpcr_msg *m, const void *args)
{
	const struct comp *c = args;
	struct rpcr_xdr_enc *e = rpcr_msg_enc(m);
	uint8_t nops[4];
	int rc;

	rpcr_xdr_store32(nops, c->nops);
	rc = rpcr_xdr_enc_fixed(e, c->b, c->nops_at);
	rc = rc != 0 ? rc : rpcr_xdr_enc_fixed(e, nops, 4);
	if (!c->has_bulk)
		return rc != 0 ? rc
			       : rpcr_xdr_enc_fixed(e, c->b + c->nops_at + 4,
						    c->n - c->nops_at - 4);
	rc = rc != 0 ? rc
		     : rpcr_xdr_enc_fixed(e, c->b + c->nops_at + 4, c->bulk_at - c->nops_at - 4);
	rc = rc != 0 ? rc : rpcr_msg_put_bulk(m, &c->bulk);
	return rc != 0 ? rc : rpcr_xdr_enc_fixed(e, c->b + c->bulk_at, c->n - c->bulk_at);
}

/* ---- COMPOUND results ---- */

struct cres {
	uint32_t status;
	uint32_t nres;
	uint32_t op[16], st[16];
	bool bad_xdr;
	/* What the operations returned. */
	uint64_t clientid;
	uint32_t exid_seq, exid_flags;
	uint8_t sid[16];
	uint32_t cs_seq, cs_flags;
	uint32_t fore[6], back[6]; /* channel_attrs4 */
	uint32_t seq_flags;
	struct fh4 fh;
	uint32_t type;
	uint64_t size;
	struct stateid4 open_sid;
	uint32_t deleg_type, deleg_why;
	struct stateid4 deleg_sid;
	uint32_t wcount, wcommitted;
	bool eof;
	uint32_t got, bad;    /* READ: data length, bytes unlike what was written */
	uint32_t rsalt, roff; /* READ: the pattern expected */
	uint32_t bcts_dir;
	bool bcts_rdma;
};

static int
dec_attrs(struct rpcr_xdr_dec *d, struct cres *r)
{
	uint32_t nmask, mask[4] = {0}, len, i;
	const void *v;
	struct rpcr_xdr_dec a;
	int rc = rpcr_xdr_dec_u32(d, &nmask);

	for (i = 0; rc == 0 && i < nmask; i++) {
		uint32_t w;

		rc = rpcr_xdr_dec_u32(d, &w);
		if (i < RTE_DIM(mask))
			mask[i] = w;
	}
	rc = rc != 0 ? rc : rpcr_xdr_dec_opaque(d, 65536, &v, &len);
	if (rc != 0)
		return rc;
	rpcr_xdr_dec_init(&a, v, len);
	/* Only what GETATTR asks for here, in bit order: type (1), size (4). */
	if (mask[0] & (1u << FATTR4_TYPE))
		rc = rpcr_xdr_dec_u32(&a, &r->type);
	if (rc == 0 && (mask[0] & (1u << FATTR4_SIZE)))
		rc = rpcr_xdr_dec_u64(&a, &r->size);
	return rc;
}

static int
dec_channel_attrs(struct rpcr_xdr_dec *d, uint32_t *ca)
{
	uint32_t i, n, ird;
	int rc = 0;

	for (i = 0; rc == 0 && i < 6; i++)
		rc = rpcr_xdr_dec_u32(d, &ca[i]);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &n);
	for (i = 0; rc == 0 && i < n; i++)
		rc = rpcr_xdr_dec_u32(d, &ird);
	return rc;
}

static int
dec_stateid(struct rpcr_xdr_dec *d, struct stateid4 *s)
{
	const void *p;
	int rc = rpcr_xdr_dec_u32(d, &s->seqid);

	rc = rc != 0 ? rc : rpcr_xdr_dec_fixed(d, 12, &p);
	if (rc == 0)
		memcpy(s->other, p, 12);
	return rc;
}

static int
dec_nfsace(struct rpcr_xdr_dec *d)
{
	uint32_t t[3], len;
	const void *p;
	int rc = rpcr_xdr_dec_u32(d, &t[0]);

	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &t[1]);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &t[2]);
	return rc != 0 ? rc : rpcr_xdr_dec_opaque(d, 1024, &p, &len);
}

/* OPEN4resok (RFC 8881 section 18.16.2). */
static int
dec_open(struct rpcr_xdr_dec *d, struct cres *r)
{
	uint32_t rflags, n, i, w, limitby;
	uint64_t before, after;
	bool atomic, recall;
	int rc = dec_stateid(d, &r->open_sid);

	rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &atomic);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u64(d, &before);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u64(d, &after);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &rflags);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &n);
	for (i = 0; rc == 0 && i < n; i++)
		rc = rpcr_xdr_dec_u32(d, &w);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->deleg_type);
	if (rc != 0)
		return rc;
	switch (r->deleg_type) {
	case OPEN_DELEGATE_NONE:
		return 0;
	case OPEN_DELEGATE_READ:
		rc = dec_stateid(d, &r->deleg_sid);
		rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &recall);
		return rc != 0 ? rc : dec_nfsace(d);
	case OPEN_DELEGATE_WRITE:
		rc = dec_stateid(d, &r->deleg_sid);
		rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &recall);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &limitby);
		if (rc == 0 && limitby == 1)
			rc = rpcr_xdr_dec_u64(d, &before);
		else if (rc == 0)
			rc = rpcr_xdr_dec_u64(d, &before); /* (num_blocks, bytes_per_block) */
		return rc != 0 ? rc : dec_nfsace(d);
	case OPEN_DELEGATE_NONE_EXT:
		rc = rpcr_xdr_dec_u32(d, &r->deleg_why);
		if (rc == 0 && (r->deleg_why == 1 || r->deleg_why == 2))
			rc = rpcr_xdr_dec_bool(d, &recall);
		return rc;
	default:
		return -EBADMSG;
	}
}

/* READ4resok: the data compared with the pattern, wherever it landed (a write chunk). */
static int
dec_read_data(struct rpcr_msg *m, struct rpcr_xdr_dec *d, struct cres *r)
{
	const struct rte_mbuf *seg;
	struct rpcr_bulk b;
	uint32_t i = 0, off;
	int rc = rpcr_xdr_dec_bool(d, &r->eof);

	rc = rc != 0 ? rc : rpcr_msg_get_bulk(m, DATA_MAX, &b);
	if (rc != 0)
		return rc;
	r->got = b.len;
	seg = b.m;
	off = b.off;
	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	for (; seg != NULL && i < b.len; seg = seg->next, off = 0) {
		const uint8_t *p = rte_pktmbuf_mtod_offset(seg, const uint8_t *, off);
		uint32_t k;

		for (k = 0; k < (uint32_t)seg->data_len - off && i < b.len; k++, i++)
			r->bad += p[k] != data_byte(r->roff + i, r->rsalt);
	}
	r->bad += b.len - i;
	return 0;
}

static int
dec_one(struct rpcr_msg *m, struct rpcr_xdr_dec *d, uint32_t op, struct cres *r)
{
	const void *p;
	uint32_t len, u;
	int rc = 0;

	switch (op) {
	case OP_SEQUENCE: /* sessionid, sequenceid, slotid, highest, target, status flags */
		rc = rpcr_xdr_dec_fixed(d, 16, &p);
		rc = rc != 0 ? rc : rpcr_xdr_dec_skip(d, 16);
		return rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->seq_flags);
	case OP_EXCHANGE_ID:
		rc = rpcr_xdr_dec_u64(d, &r->clientid);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->exid_seq);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->exid_flags);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &u); /* spr_how: SP4_NONE asked */
		if (rc == 0 && u != 0)
			return -EBADMSG;
		/* server_owner4, server_scope, server_impl_id<1>: not needed. */
		return 0;
	case OP_CREATE_SESSION:
		rc = rpcr_xdr_dec_fixed(d, 16, &p);
		if (rc == 0)
			memcpy(r->sid, p, 16);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->cs_seq);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->cs_flags);
		rc = rc != 0 ? rc : dec_channel_attrs(d, r->fore);
		return rc != 0 ? rc : dec_channel_attrs(d, r->back);
	case OP_BIND_CONN_TO_SESSION:
		rc = rpcr_xdr_dec_fixed(d, 16, &p);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->bcts_dir);
		return rc != 0 ? rc : rpcr_xdr_dec_bool(d, &r->bcts_rdma);
	case OP_GETFH:
		rc = rpcr_xdr_dec_opaque(d, FH4_MAX, &p, &len);
		if (rc == 0) {
			r->fh.len = len;
			memcpy(r->fh.data, p, len);
		}
		return rc;
	case OP_GETATTR:
		return dec_attrs(d, r);
	case OP_OPEN:
		return dec_open(d, r);
	case OP_CLOSE:
		return dec_stateid(d, &r->open_sid);
	case OP_WRITE: /* count, committed, verifier */
		rc = rpcr_xdr_dec_u32(d, &r->wcount);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->wcommitted);
		return rc != 0 ? rc : rpcr_xdr_dec_skip(d, 8);
	case OP_READ:
		return dec_read_data(m, d, r);
	default: /* status only */
		return 0;
	}
}

static int
dec_comp(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct cres *r = res;
	const void *tag;
	uint32_t taglen, n, i;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	rc = rc != 0 ? rc : rpcr_xdr_dec_opaque(d, 1024, &tag, &taglen);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &n);
	for (i = 0; rc == 0 && i < n && i < RTE_DIM(r->op); i++) {
		rc = rpcr_xdr_dec_u32(d, &r->op[i]);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->st[i]);
		if (rc != 0)
			break;
		r->nres = i + 1;
		if (r->st[i] != NFS4_OK)
			break; /* (the last result: the COMPOUND stopped here) */
		rc = dec_one(m, d, r->op[i], r);
	}
	r->bad_xdr = rc != 0;
	return rc;
}

/* ---- making COMPOUND calls ---- */

static const char *
call_str(const struct rpcr_call *call, int rc)
{
	if (rc == -EREMOTEIO)
		return call->accept_stat == 0 ? "RPC error" : "RPC refused the call";
	return rc == 0 ? "ok" : strerror(-rc);
}

/* Send COMPOUND @c (its read-chunk binding when it carries WRITE data, a write chunk for READ
 * data into @dst); one line and the tally for each operation. @return the COMPOUND's status, or
 * -1 when the call failed. */
static int64_t
compound(struct sess *s, struct comp *c, struct cres *r, struct rpcr_bulk *dst, const char *what)
{
	struct rpcr_ulb ulb = {.args_bulk = c->has_bulk ? 1 : 0,
			       .res_bulk = dst != NULL ? 1 : 0,
			       .threshold = 1024};
	struct rpcr_call call;
	uint32_t i;
	int rc;

	if (c->overflow) {
		printf("%s: arguments too long\n", what);
		return -1;
	}
	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC4_COMPOUND;
	call.encode = enc_comp;
	call.args = c;
	call.decode = dec_comp;
	call.res = r;
	call.ulb = &ulb;
	call.res_bulk = dst;
	call.nres_bulk = dst != NULL ? 1 : 0;
	/* A reply chunk for replies that may outgrow a Send, but not beside a write chunk: the
	 * rest of a READ reply is small (as Linux's client marshals READ: write list, inline
	 * reply). */
	call.reply_max = dst == NULL ? 16384 : 0;
	rc = rpcr_clnt_call_sync(s->cl, &call);
	/* No reply: the server may never have seen the SEQUENCE (an RDMA_ERROR says so); the
	 * slot's next request reuses its sequenceid (a server that did see it answers that one
	 * as a retry, which shows). */
	if (rc != 0 && c->nops != 0 && c->ops[0] == OP_SEQUENCE)
		s->slot_seq--;
	if (rc != 0 || r->bad_xdr) {
		printf("%s: %s%s\n", what, call_str(&call, rc),
		       r->bad_xdr ? " (results undecodable)" : "");
		for (i = 0; i < c->nops && i < RTE_DIM(c->ops); i++)
			if (c->ops[i] < OP_MAX)
				op_fail[c->ops[i]]++;
		return -1;
	}
	for (i = 0; i < r->nres; i++) {
		if (r->op[i] >= OP_MAX)
			continue;
		if (r->st[i] == NFS4_OK)
			op_ok[r->op[i]]++;
		else if (r->st[i] != NFS4ERR_GRACE && r->st[i] != NFS4ERR_DELAY)
			op_fail[r->op[i]]++;
		if (r->op[i] == OP_SEQUENCE && r->st[i] == NFS4_OK)
			s->seq_flags = r->seq_flags;
	}
	if (r->status != NFS4_OK)
		printf("%s: status %u at %s\n", what, r->status,
		       r->nres > 0 && r->op[r->nres - 1] < OP_MAX && op_names[r->op[r->nres - 1]]
			       ? op_names[r->op[r->nres - 1]]
			       : "?");
	return r->status;
}

/* ---- the callback service (RFC 8881 section 20), on this client's connection ---- */

static enum rpcr_svc_verdict
cb_null(struct rpcr_svc_req *r)
{
	struct sess *s = rpcr_svc_req_ctx(r);

	s->cb_null++;
	return RPCR_SVC_REPLY;
}

/* CB_SEQUENCE4args checked against the session and slot; @seq and @slot for its result. */
static uint32_t
cb_sequence(struct sess *s, struct rpcr_xdr_dec *d, uint32_t *seq, uint32_t *slot)
{
	const void *sid;
	uint32_t highest, nlists, i, j, nref;
	bool cachethis;
	int rc = rpcr_xdr_dec_fixed(d, 16, &sid);

	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, seq);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, slot);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &highest);
	rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &cachethis);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &nlists);
	for (i = 0; rc == 0 && i < nlists; i++) {
		rc = rpcr_xdr_dec_skip(d, 16);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &nref);
		for (j = 0; rc == 0 && j < nref; j++)
			rc = rpcr_xdr_dec_skip(d, 8);
	}
	if (rc != 0)
		return NFS4ERR_BADXDR;
	if (!s->have_sid || memcmp(sid, s->sid, 16) != 0)
		return NFS4ERR_BADSESSION;
	if (*slot >= CB_SLOTS)
		return NFS4ERR_BADSLOT;
	/* A retry of the last one: nothing is cached here (RFC 8881 section 2.10.6.1.3). */
	if (*seq == s->cb_seq[*slot])
		return NFS4ERR_RETRY_UNCACHED_REP;
	if (*seq != s->cb_seq[*slot] + 1)
		return NFS4ERR_SEQ_MISORDERED;
	s->cb_seq[*slot] = *seq;
	return NFS4_OK;
}

static uint32_t
cb_recall(struct sess *s, struct rpcr_xdr_dec *d)
{
	struct stateid4 sid;
	const void *fh;
	uint32_t fhlen;
	bool truncate;
	int rc = dec_stateid(d, &sid);

	rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &truncate);
	rc = rc != 0 ? rc : rpcr_xdr_dec_opaque(d, FH4_MAX, &fh, &fhlen);
	if (rc != 0)
		return NFS4ERR_BADXDR;
	s->cb_recall++;
	if (!s->deleg_held || memcmp(sid.other, s->deleg.other, 12) != 0)
		return NFS4ERR_BAD_STATEID;
	if (!s->recalled) {
		s->recalled = true;
		s->recall_us = now_us();
	}
	return NFS4_OK; /* (DELEGRETURN goes on the fore channel, from the main loop) */
}

static uint32_t
cb_recall_any(struct sess *s, struct rpcr_xdr_dec *d)
{
	uint32_t keep, n, i, w;
	int rc = rpcr_xdr_dec_u32(d, &keep);

	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &n);
	for (i = 0; rc == 0 && i < n; i++)
		rc = rpcr_xdr_dec_u32(d, &w);
	if (rc != 0)
		return NFS4ERR_BADXDR;
	s->cb_recall_any++;
	if (s->deleg_held && keep == 0)
		s->recall_any = true; /* (returned from the main loop) */
	return NFS4_OK;
}

/*
 * CB_COMPOUND: CB_SEQUENCE first (NFS4ERR_OP_NOT_IN_SESSION otherwise), then the operations in
 * order until one fails. Results go to a scratch encoder first: the status leads the reply.
 */
static int
cb_compound_xdr(struct sess *s, struct rpcr_xdr_dec *d, struct rpcr_xdr_enc *out)
{
	uint8_t scratch[1024];
	struct rpcr_xdr_enc e;
	const void *tag;
	uint32_t taglen, minor, ident, nops, i, op, st = NFS4_OK, nres = 0;
	int rc;

	s->cb_compound++;
	rc = rpcr_xdr_dec_opaque(d, 1024, &tag, &taglen);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &minor);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &ident);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &nops);
	if (rc != 0)
		return -EBADMSG;
	rpcr_xdr_enc_init(&e, scratch, sizeof(scratch));
	if (minor != 1)
		st = NFS4ERR_MINOR_VERS_MISMATCH; /* (and no results) */
	for (i = 0; st == NFS4_OK && i < nops; i++) {
		uint32_t resop, seq = 0, slot = 0;
		bool seq_ok = false;

		if (rpcr_xdr_dec_u32(d, &op) != 0)
			return -EBADMSG;
		resop = op;
		if (op <= OP_CB_OFFLOAD)
			s->cb_ops[op]++;
		if (op == OP_CB_SEQUENCE && i != 0) {
			st = NFS4ERR_SEQUENCE_POS;
		} else if (op == OP_CB_SEQUENCE) {
			st = cb_sequence(s, d, &seq, &slot);
			seq_ok = st == NFS4_OK;
		} else if (i == 0 && op >= OP_CB_GETATTR && op <= OP_CB_OFFLOAD) {
			st = NFS4ERR_OP_NOT_IN_SESSION;
		} else if (op == OP_CB_RECALL) {
			st = cb_recall(s, d);
		} else if (op == OP_CB_RECALL_ANY) {
			st = cb_recall_any(s, d);
		} else if (op >= OP_CB_GETATTR && op <= OP_CB_OFFLOAD) {
			st = NFS4ERR_NOTSUPP; /* a callback operation not implemented here */
		} else {
			resop = OP_CB_ILLEGAL; /* none at all (RFC 8881 section 20.13) */
			st = NFS4ERR_OP_ILLEGAL;
		}
		rc = rpcr_xdr_enc_u32(&e, resop);
		rc = rc != 0 ? rc : rpcr_xdr_enc_u32(&e, st);
		if (seq_ok) { /* CB_SEQUENCE4resok */
			rc = rc != 0 ? rc : rpcr_xdr_enc_fixed(&e, s->sid, 16);
			rc = rc != 0 ? rc : rpcr_xdr_enc_u32(&e, seq);
			rc = rc != 0 ? rc : rpcr_xdr_enc_u32(&e, slot);
			rc = rc != 0 ? rc : rpcr_xdr_enc_u32(&e, CB_SLOTS - 1);
			rc = rc != 0 ? rc : rpcr_xdr_enc_u32(&e, CB_SLOTS - 1);
		}
		if (rc != 0)
			return -ENOSPC;
		nres++;
	}
	if (st != NFS4_OK)
		s->cb_refused++;
	rc = rpcr_xdr_enc_u32(out, st);
	rc = rc != 0 ? rc : rpcr_xdr_enc_opaque(out, tag, taglen);
	rc = rc != 0 ? rc : rpcr_xdr_enc_u32(out, nres);
	rc = rc != 0 ? rc : rpcr_xdr_enc_fixed(out, scratch, (uint32_t)rpcr_xdr_enc_pos(&e));
	return rc != 0 ? -ENOSPC : 0;
}

/* The CB_COMPOUND procedure: undecodable arguments get GARBAGE_ARGS (RFC 5531). */
static enum rpcr_svc_verdict
cb_compound(struct rpcr_svc_req *r)
{
	struct sess *s = rpcr_svc_req_ctx(r);
	int rc = cb_compound_xdr(s, rpcr_msg_dec(rpcr_svc_req_args(r)),
				 rpcr_msg_enc(rpcr_svc_req_results(r)));

	if (rc == 0)
		return RPCR_SVC_REPLY;
	rpcr_svc_req_error(r, rc == -EBADMSG ? RPCR_ONCRPC_GARBAGE_ARGS : RPCR_ONCRPC_SYSTEM_ERR);
	return RPCR_SVC_ERROR;
}

/* ---- session set-up and teardown ---- */

static int
exchange_id(struct sess *s, const char *owner)
{
	struct comp c;
	struct cres r = {0};
	uint8_t verf[8];
	uint64_t t = now_us();

	memcpy(verf, &t, sizeof(verf));
	comp_start(&c, "exchange_id");
	comp_op(&c, OP_EXCHANGE_ID);
	putfixed(&c, verf, 8);
	putstr(&c, owner);
	put32(&c, 0); /* flags */
	put32(&c, 0); /* SP4_NONE */
	put32(&c, 0); /* no implementation id */
	if (compound(s, &c, &r, NULL, "EXCHANGE_ID") != NFS4_OK)
		return -1;
	s->clientid = r.clientid;
	s->exid_seq = r.exid_seq;
	printf("EXCHANGE_ID: ok, clientid 0x%016" PRIx64 ", sequenceid %u, flags 0x%x\n",
	       r.clientid, r.exid_seq, r.exid_flags);
	return 0;
}

static void
put_channel_attrs(struct comp *c, uint32_t maxreq, uint32_t maxresp, uint32_t cached,
		  uint32_t maxops, uint32_t maxreqs)
{
	put32(c, 0); /* header padding */
	put32(c, maxreq);
	put32(c, maxresp);
	put32(c, cached);
	put32(c, maxops);
	put32(c, maxreqs);
	put32(c, 0); /* no rdma_ird */
}

/* CREATE_SESSION with the back channel on this connection (RFC 8881 section 18.36), the
 * callback program this client serves, AUTH_NONE for the server's calls. */
static int
create_session(struct sess *s)
{
	struct comp c;
	struct cres r = {0};
	/* Reverse-direction messages are inline (RFC 8167 section 4): a Send less the transport
	 * header's 28 bytes. */
	const uint32_t bc_max = INLINE - 28;

	comp_start(&c, "create_session");
	comp_op(&c, OP_CREATE_SESSION);
	put64(&c, s->clientid);
	put32(&c, s->exid_seq);
	put32(&c, CREATE_SESSION4_FLAG_CONN_BACK_CHAN);
	put_channel_attrs(&c, DATA_MAX + 8192, DATA_MAX + 8192, 8192, 16, 8);
	put_channel_attrs(&c, bc_max, bc_max, 0, 8, CB_SLOTS);
	put32(&c, CB_PROG);
	put32(&c, 1); /* one callback_sec_parms4: */
	put32(&c, RPCR_ONCRPC_AUTH_NONE);
	if (compound(s, &c, &r, NULL, "CREATE_SESSION") != NFS4_OK)
		return -1;
	memcpy(s->sid, r.sid, 16);
	s->have_sid = true;
	s->slot_seq = 0;
	s->fore_maxreq = r.fore[1];
	s->fore_maxresp = r.fore[2];
	s->back_maxreq = r.back[1];
	s->back_maxresp = r.back[2];
	s->io_max = RTE_MIN(r.fore[1], r.fore[2]);
	s->io_max = s->io_max > 8192 ? RTE_MIN((s->io_max - 4096) & ~4095u, DATA_MAX) : 0;
	printf("CREATE_SESSION: ok, flags 0x%x (back channel on this connection: %s), fore "
	       "channel %u/%u bytes %u slots, back channel %u/%u bytes %u slots\n",
	       r.cs_flags, r.cs_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN ? "yes" : "NO",
	       r.fore[1], r.fore[2], r.fore[5], r.back[1], r.back[2], r.back[5]);
	return (r.cs_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) && s->io_max != 0 ? 0 : -1;
}

static int
simple_op(struct sess *s, uint32_t op, const char *what)
{
	struct comp c;
	struct cres r = {0};
	int64_t st;

	comp_start(&c, what);
	if (op == OP_RECLAIM_COMPLETE) {
		comp_sequence(&c, s);
		comp_op(&c, op);
		put32(&c, 0); /* rca_one_fs: FALSE */
	} else if (op == OP_DESTROY_SESSION) {
		comp_op(&c, op);
		putfixed(&c, s->sid, 16);
	} else if (op == OP_DESTROY_CLIENTID) {
		comp_op(&c, op);
		put64(&c, s->clientid);
	} else if (op == OP_BIND_CONN_TO_SESSION) {
		comp_op(&c, op);
		putfixed(&c, s->sid, 16);
		put32(&c, CDFC4_FORE_OR_BOTH);
		put32(&c, 0); /* not RDMA mode: the connection already is RDMA */
	}
	st = compound(s, &c, &r, NULL, what);
	if (op == OP_BIND_CONN_TO_SESSION && st == NFS4_OK) {
		printf("%s: ok, directions %s\n", what,
		       r.bcts_dir == CDFS4_BOTH ? "both"
		       : r.bcts_dir == 1        ? "fore only"
						: "back only");
		return r.bcts_dir == CDFS4_BOTH ? 0 : -1;
	}
	printf("%s: %s\n", what, st == NFS4_OK ? "ok" : "failed");
	return st == NFS4_OK ? 0 : -1;
}

/* PUTROOTFH, GETFH, GETATTR (type, size). */
static int
root_fh(struct sess *s, struct fh4 *root)
{
	struct comp c;
	struct cres r = {0};

	comp_start(&c, "root");
	comp_sequence(&c, s);
	comp_op(&c, OP_PUTROOTFH);
	comp_op(&c, OP_GETFH);
	comp_op(&c, OP_GETATTR);
	put32(&c, 1);
	put32(&c, (1u << FATTR4_TYPE) | (1u << FATTR4_SIZE));
	if (compound(s, &c, &r, NULL, "PUTROOTFH GETFH GETATTR") != NFS4_OK)
		return -1;
	*root = r.fh;
	printf("PUTROOTFH GETFH GETATTR: ok, root file handle of %u bytes, type %u (%s)\n",
	       r.fh.len, r.type, r.type == NF4DIR ? "directory" : "not a directory");
	return r.type == NF4DIR ? 0 : -1;
}

/* ---- files ---- */

struct ofile {
	struct fh4 fh;
	struct stateid4 sid;
	uint32_t deleg_type, deleg_why;
	struct stateid4 deleg;
};

/* OPEN @name in @dir (created when @create), GETFH. Waits out knfsd's grace period. */
static int64_t
open_file(struct sess *s, const struct fh4 *dir, const char *name, bool create, uint32_t access,
	  struct ofile *f, uint64_t grace_us)
{
	uint64_t end = now_us() + grace_us;
	uint8_t owner[12];
	int64_t st;

	memcpy(owner, "rpcr", 4);
	memcpy(owner + 4, &s->clientid, 8);
	for (;;) {
		struct comp c;
		struct cres r = {0};

		comp_start(&c, "open");
		comp_sequence(&c, s);
		comp_putfh(&c, dir);
		comp_op(&c, OP_OPEN);
		put32(&c, 0); /* seqid (none in 4.1) */
		put32(&c, access);
		put32(&c, 0); /* deny none */
		put64(&c, s->clientid);
		putopaque(&c, owner, sizeof(owner));
		put32(&c, create ? OPEN4_CREATE : OPEN4_NOCREATE);
		if (create) {
			put32(&c, UNCHECKED4);
			put32(&c, 0); /* no attributes: an empty bitmap, */
			put32(&c, 0); /* no values */
		}
		put32(&c, CLAIM_NULL);
		putstr(&c, name);
		comp_op(&c, OP_GETFH);
		st = compound(s, &c, &r, NULL, "OPEN");
		if (st == NFS4ERR_GRACE && now_us() < end) {
			/* (Each try used a slot sequence number; knfsd answered it.) */
			usleep(1000000);
			continue;
		}
		if (st != NFS4_OK)
			return st;
		f->fh = r.fh;
		f->sid = r.open_sid;
		f->deleg_type = r.deleg_type;
		f->deleg_why = r.deleg_why;
		f->deleg = r.deleg_sid;
		return st;
	}
}

static int64_t
close_file(struct sess *s, struct ofile *f)
{
	struct comp c;
	struct cres r = {0};

	comp_start(&c, "close");
	comp_sequence(&c, s);
	comp_putfh(&c, &f->fh);
	comp_op(&c, OP_CLOSE);
	put32(&c, 0);
	put_stateid(&c, &f->sid);
	return compound(s, &c, &r, NULL, "CLOSE");
}

static int64_t
delegreturn(struct sess *s, const struct fh4 *fh, const struct stateid4 *sid)
{
	struct comp c;
	struct cres r = {0};

	comp_start(&c, "delegreturn");
	comp_sequence(&c, s);
	comp_putfh(&c, fh);
	comp_op(&c, OP_DELEGRETURN);
	put_stateid(&c, sid);
	return compound(s, &c, &r, NULL, "DELEGRETURN");
}

/* WRITE @len bytes of registered @m from @moff at @off (FILE_SYNC4): the data a DDP-eligible
 * item. */
static int64_t
write_file(struct sess *s, struct ofile *f, uint64_t off, struct rte_mbuf *m, uint32_t moff,
	   uint32_t len, uint32_t *count)
{
	struct comp c;
	struct cres r = {0};
	int64_t st;

	comp_start(&c, "write");
	comp_sequence(&c, s);
	comp_putfh(&c, &f->fh);
	comp_op(&c, OP_WRITE);
	put_stateid(&c, &f->sid);
	put64(&c, off);
	put32(&c, FILE_SYNC4);
	c.bulk_at = c.n;
	c.bulk = (struct rpcr_bulk){m, moff, len};
	c.has_bulk = true;
	st = compound(s, &c, &r, NULL, "WRITE");
	*count = r.wcount;
	return st;
}

/* READ @len bytes at @off into registered @dm, compared with the pattern of @salt. */
static int64_t
read_file(struct sess *s, struct ofile *f, uint64_t off, struct rte_mbuf *dm, uint32_t len,
	  uint32_t salt, uint32_t *got, uint32_t *bad, bool *eof)
{
	struct rpcr_bulk dst = {dm, 0, len};
	struct comp c;
	struct cres r = {0};
	int64_t st;

	r.rsalt = salt;
	r.roff = (uint32_t)off;
	comp_start(&c, "read");
	comp_sequence(&c, s);
	comp_putfh(&c, &f->fh);
	comp_op(&c, OP_READ);
	put_stateid(&c, &f->sid);
	put64(&c, off);
	put32(&c, len);
	st = compound(s, &c, &r, &dst, "READ");
	*got = r.got;
	*bad = r.bad;
	*eof = r.eof;
	return st;
}

static void
noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

struct rbuf {
	uint8_t *mem;
	struct rpcr_mem_reg *reg;
	struct rte_mbuf *m;
};

static int
rbuf_make(struct sess *s, struct rpcr_mem_arena *a, struct rpcr_mem_cache *mc, uint32_t len,
	  struct rbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->mem = rpcr_mem_arena_alloc(a, len, 4096);
	b->reg = b->mem != NULL ? rpcr_mem_reg(mc, b->mem, len, rpcr_xprt_poller_mem_access(s->p))
				: NULL;
	b->m = b->reg != NULL ? rpcr_chunk_attach(rpcr_xprt_poller_pool(s->p), b->reg, b->mem, len,
						  noop_free, NULL)
			      : NULL;
	return b->m != NULL ? 0 : -1;
}

static void
rbuf_drop(struct rpcr_mem_cache *mc, struct rbuf *b)
{
	rte_pktmbuf_free(b->m);
	if (b->reg != NULL)
		rpcr_mem_unreg(mc, b->reg);
	rte_free(b->mem);
}

/* The file as the kernel wrote it: @len bytes of the pattern of @salt, and no more. */
static uint32_t
local_diff(const char *local, const char *name, uint32_t len, uint32_t salt)
{
	char path[512];
	uint8_t *back = malloc(len + 1);
	ssize_t n = -1;
	uint32_t i, bad = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", local, name);
	fd = open(path, O_RDONLY);
	if (fd >= 0 && back != NULL)
		n = read(fd, back, len + 1);
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)len) {
		free(back);
		return len + 1;
	}
	for (i = 0; i < len; i++)
		bad += back[i] != data_byte(i, salt);
	free(back);
	return bad;
}

/* WRITE @len bytes of @wb (the pattern of @salt) to @f from offset 0, in calls of at most the
 * session's size; READ them back the same way, compared. */
static int64_t
rw_file(struct sess *s, struct ofile *f, struct rbuf *wb, struct rbuf *rb, uint32_t len,
	uint32_t salt, uint32_t *written, uint32_t *got, uint32_t *diff, bool *eof)
{
	uint32_t off = 0, n, count, g, d;
	int64_t st;

	*written = *got = *diff = 0;
	*eof = false;
	do { /* (at least one call: a WRITE of 0 bytes is one) */
		n = RTE_MIN(s->io_max, len - off);
		st = write_file(s, f, off, wb->m, off, n, &count);
		if (st == NFS4_OK && count != n)
			st = -2; /* (FILE_SYNC4 writes all or fails) */
		*written += st == NFS4_OK ? count : 0;
		off += n;
	} while (st == NFS4_OK && off < len);
	for (off = 0; st == NFS4_OK && !*eof; off += g) {
		/* (One byte more than is there: READ says eof, or a call without data.) */
		n = RTE_MIN(s->io_max, len - off + 1);
		st = read_file(s, f, off, rb->m, n, salt, &g, &d, eof);
		*got += g;
		*diff += d;
		if (st == NFS4_OK && g == 0 && !*eof)
			st = -3; /* (no progress) */
	}
	return st;
}

/* Step 3: files of 0 B..1 MiB written and read back. @return failures. */
static int
rw_sizes(struct sess *s, const struct fh4 *root, struct rbuf *wb, struct rbuf *rb,
	 const char *local, uint64_t grace_us)
{
	static const uint32_t sizes[] = {0,    1,    100,   1023,   1024,
					 1025, 4096, 65539, 262144, DATA_MAX};
	uint32_t i, k;
	int bad = 0;

	for (i = 0; i < RTE_DIM(sizes); i++) {
		uint32_t len = sizes[i], salt = i + 1, written = 0, got = 0, diff = 0;
		struct ofile f;
		char name[64];
		bool eof = false;
		int64_t st;

		snprintf(name, sizeof(name), "rw41-%u", len);
		st = open_file(s, root, name, true, OPEN4_SHARE_ACCESS_BOTH, &f, grace_us);
		if (st != NFS4_OK) {
			bad++;
			continue;
		}
		for (k = 0; k < len; k++)
			wb->mem[k] = data_byte(k, salt);
		st = rw_file(s, &f, wb, rb, len, salt, &written, &got, &diff, &eof);
		if (local != NULL && st == NFS4_OK)
			diff += local_diff(local, name, len, salt);
		printf("rw %7u B: %s, %u written, %u read back (calls of at most %u B), %u "
		       "differ%s, "
		       "eof %s%s\n",
		       len, st == NFS4_OK ? "ok" : "FAILED", written, got, s->io_max, diff,
		       local != NULL ? " (the local file too)" : "", eof ? "yes" : "no",
		       len >= 1024 ? " [data by chunks]" : " [data inline]");
		bad += st != NFS4_OK || written != len || got != len || diff != 0 || !eof;
		bad += close_file(s, &f) != NFS4_OK;
	}
	return bad;
}

/* Step 4: @n WRITEs and @n READs of 1 MiB (in calls of the session's size), MB/s. */
static int
bench(struct sess *s, const struct fh4 *root, struct rbuf *wb, struct rbuf *rb, uint32_t n,
      uint64_t grace_us)
{
	uint32_t i, k, written, got, diff;
	uint64_t t0, tw = 0, tr = 0;
	struct ofile f;
	bool eof;
	int bad = 0;

	if (open_file(s, root, "bench41", true, OPEN4_SHARE_ACCESS_BOTH, &f, grace_us) != NFS4_OK)
		return 1;
	for (k = 0; k < DATA_MAX; k++)
		wb->mem[k] = data_byte(k, 99);
	for (i = 0; i < n && !bad; i++) {
		uint32_t off, c;

		t0 = now_us();
		for (off = 0; off < DATA_MAX && !bad; off += s->io_max)
			bad += write_file(s, &f, off, wb->m, off, s->io_max, &c) != NFS4_OK ||
			       c != s->io_max;
		tw += now_us() - t0;
	}
	for (i = 0; i < n && !bad; i++) {
		uint32_t off;

		t0 = now_us();
		for (off = 0; off < DATA_MAX && !bad; off += s->io_max)
			bad += read_file(s, &f, off, rb->m, s->io_max, 99, &got, &diff, &eof) !=
				       NFS4_OK ||
			       got != s->io_max || diff != 0;
		tr += now_us() - t0;
	}
	written = n * DATA_MAX;
	bad += close_file(s, &f) != NFS4_OK;
	printf("BENCH NFSv4.1 1 MiB x %u (calls of %u B): WRITE %.1f MB/s, READ %.1f MB/s%s\n", n,
	       s->io_max, (double)written / (double)(tw ? tw : 1),
	       (double)written / (double)(tr ? tr : 1), bad ? " (FAILED)" : "");
	return bad;
}

/* ---- recalls ---- */

/* Delegations knfsd lists for all its clients (/proc/fs/nfsd/clients/ * /states), or -1. */
static int
knfsd_delegs(void)
{
	DIR *dir = opendir("/proc/fs/nfsd/clients");
	struct dirent *de;
	int n = 0;

	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		char path[300], line[512];
		FILE *fp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/fs/nfsd/clients/%s/states", de->d_name);
		fp = fopen(path, "r");
		if (fp == NULL)
			continue;
		while (fgets(line, sizeof(line), fp) != NULL)
			n += strstr(line, "type: deleg") != NULL;
		fclose(fp);
	}
	closedir(dir);
	return n;
}

struct writer {
	char path[512];
	uint64_t us; /* how long open(O_WRONLY) took */
	int err;
	volatile int done;
};

/* A local process's conflicting open: knfsd must recall the delegation before it completes. */
static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t t0 = now_us();
	int fd = open(w->path, O_WRONLY);

	w->us = now_us() - t0;
	w->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Poll until @cond or @us have passed. */
#define POLL_FOR(s, cond, us)                         \
	do {                                          \
		uint64_t pf_end_ = now_us() + (us);   \
                                                      \
		while (!(cond) && now_us() < pf_end_) \
			rpcr_xprt_poll((s)->p);       \
	} while (0)

/* One recall: OPEN for reading with a read delegation, a local writer, CB_RECALL, DELEGRETURN.
 * @return 0 when everything held. */
static int
recall_once(struct sess *s, const struct fh4 *root, const char *local, uint32_t i,
	    uint64_t grace_us, uint64_t *lat_us)
{
	struct writer w;
	struct ofile f;
	pthread_t th;
	char name[64];
	uint64_t t0, end;
	int fd, held, gone, bad = 0;
	int64_t st;

	/* A file of its own each time: knfsd gives no delegation on a file recalled in the last
	 * 30-60 s (its bloom filter of recently recalled files). */
	snprintf(name, sizeof(name), "deleg41-%u", i);
	snprintf(w.path, sizeof(w.path), "%s/%s", local, name);
	fd = open(w.path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "rpcr", 4) != 4) {
		printf("recall %u: cannot create %s: %s\n", i, w.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	st = NFS4ERR_DELAY;
	end = now_us() + grace_us;
	/* No delegation is given in the grace period either: ask again until one comes. */
	for (;;) {
		st = open_file(s, root, name, false,
			       OPEN4_SHARE_ACCESS_READ | OPEN4_SHARE_ACCESS_WANT_READ_DELEG, &f,
			       grace_us);
		if (st != NFS4_OK || f.deleg_type == OPEN_DELEGATE_READ || now_us() >= end)
			break;
		close_file(s, &f);
		usleep(1000000);
	}
	if (st != NFS4_OK || f.deleg_type != OPEN_DELEGATE_READ) {
		printf("recall %u: OPEN %s, delegation type %u (why %u): no read delegation\n", i,
		       st == NFS4_OK ? "ok" : "failed", st == NFS4_OK ? f.deleg_type : 0,
		       st == NFS4_OK ? f.deleg_why : 0);
		if (st == NFS4_OK)
			close_file(s, &f);
		return 1;
	}
	s->deleg_held = true;
	s->deleg = f.deleg;
	s->deleg_fh = f.fh;
	s->recalled = false;
	s->recall_any = false;
	held = knfsd_delegs();
	w.done = 0;
	t0 = now_us();
	if (pthread_create(&th, NULL, writer_main, &w) != 0) {
		printf("recall %u: no writer thread\n", i);
		return 1;
	}
	/* knfsd recalls; the callback service answers inside the polls. */
	POLL_FOR(s, s->recalled || s->recall_any || __atomic_load_n(&w.done, __ATOMIC_ACQUIRE),
		 60000000u);
	if (s->recalled || s->recall_any) { /* (CB_RECALL_ANY keeping none: returned too) */
		*lat_us = s->recall_us - t0;
		st = delegreturn(s, &f.fh, &f.deleg);
		bad += st != NFS4_OK;
		s->deleg_held = false;
	}
	POLL_FOR(s, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 60000000u);
	pthread_join(th, NULL);
	gone = knfsd_delegs();
	printf("recall %2u: read delegation held (knfsd lists %d), CB_RECALL %s after %.1f ms, "
	       "DELEGRETURN %s, the writer's open %s in %.1f ms, knfsd lists %d delegation(s) "
	       "after\n",
	       i, held, s->recalled ? "came" : "did NOT come", (double)*lat_us / 1000.0,
	       st == NFS4_OK && s->recalled ? "ok" : "failed", w.err == 0 ? "completed" : "FAILED",
	       (double)w.us / 1000.0, gone);
	bad += !s->recalled || w.err != 0 || w.us >= 5000000u || held < 1 || gone != 0;
	bad += close_file(s, &f) != NFS4_OK;
	if (s->deleg_held) { /* (not recalled: give it back anyway) */
		delegreturn(s, &f.fh, &f.deleg);
		s->deleg_held = false;
	}
	return bad != 0;
}

static int
recalls(struct sess *s, const struct fh4 *root, const char *local, uint32_t n, uint32_t first,
	uint64_t grace_us)
{
	uint64_t lat[64], sum = 0;
	uint32_t i, ok = 0;
	int bad = 0;

	for (i = 0; i < n; i++) {
		uint64_t l = 0;
		int b = recall_once(s, root, local, first + i, grace_us, &l);

		bad += b;
		if (!b && ok < RTE_DIM(lat)) {
			lat[ok++] = l;
			sum += l;
		}
	}
	if (ok != 0) {
		uint64_t t;
		uint32_t j, k;

		for (j = 1; j < ok; j++) /* (insertion sort: a median) */
			for (k = j; k > 0 && lat[k - 1] > lat[k]; k--) {
				t = lat[k];
				lat[k] = lat[k - 1];
				lat[k - 1] = t;
			}
		printf("RECALLS %u of %u: writer's open -> CB_RECALL answered: median %.2f ms, "
		       "mean "
		       "%.2f ms, max %.2f ms\n",
		       ok, n, (double)lat[ok / 2] / 1000.0, (double)sum / ok / 1000.0,
		       (double)lat[ok - 1] / 1000.0);
	}
	return bad;
}

/* Step 6: a new connection, bound to the session for both directions, and a recall over it. */
static int
rebind(struct sess *s, const struct fh4 *root, const char *local, uint64_t grace_us)
{
	struct rpcr_clnt_info info;
	uint32_t before;
	int bad = 0, rc;

	rpcr_clnt_info_get(s->cl, &info);
	before = info.connections;
	rc = rpcr_clnt_disconnect(s->cl);
	POLL_FOR(s, (rpcr_clnt_info_get(s->cl, &info), info.connections > before && info.connected),
		 30000000u);
	printf("disconnect: %s, connection %u %s\n", rc == 0 ? "ok" : strerror(-rc),
	       info.connections, info.connected ? "up" : "NOT up");
	if (rc != 0 || !info.connected)
		return 1;
	bad += simple_op(s, OP_BIND_CONN_TO_SESSION, "BIND_CONN_TO_SESSION") != 0;
	bad += recalls(s, root, local, 1, 1000, grace_us);
	return bad;
}

/* ---- --selftest: the callback service against crafted CB_COMPOUNDs (no device) ---- */

static void
cbt_start(struct comp *c, uint32_t minor)
{
	memset(c, 0, sizeof(*c));
	putstr(c, "cbt");
	put32(c, minor);
	put32(c, 7); /* callback_ident */
	c->nops_at = c->n;
	put32(c, 0);
}

static void
cbt_op(struct comp *c, uint32_t op)
{
	c->nops++;
	rpcr_xdr_store32(c->b + c->nops_at, c->nops);
	put32(c, op);
}

static void
cbt_sequence(struct comp *c, const uint8_t *sid, uint32_t seq, uint32_t slot)
{
	cbt_op(c, OP_CB_SEQUENCE);
	putfixed(c, sid, 16);
	put32(c, seq);
	put32(c, slot);
	put32(c, 0); /* highest slot */
	put32(c, 0); /* cachethis */
	put32(c, 1); /* one referring-call list, */
	putfixed(c, sid, 16);
	put32(c, 1); /* of one call */
	put32(c, 9);
	put32(c, 0);
}

static void
cbt_recall(struct comp *c, const struct stateid4 *sid)
{
	cbt_op(c, OP_CB_RECALL);
	put_stateid(c, sid);
	put32(c, 0); /* truncate */
	putopaque(c, "fh-of-the-file", 14);
}

struct cbt_res {
	uint32_t status, nres, op[8], st[8], seq, slot;
	uint8_t sid[16];
};

/* @c through the callback service, its reply decoded. @return cb_compound_xdr()'s, or -EPROTO
 * (a reply that does not decode). */
static int
cbt_run(struct sess *s, const struct comp *c, uint32_t len, struct cbt_res *r)
{
	uint8_t out[2048];
	struct rpcr_xdr_dec d;
	struct rpcr_xdr_enc e;
	const void *p;
	uint32_t i, n;
	int rc;

	memset(r, 0, sizeof(*r));
	rpcr_xdr_dec_init(&d, c->b, len);
	rpcr_xdr_enc_init(&e, out, sizeof(out));
	rc = cb_compound_xdr(s, &d, &e);
	if (rc != 0)
		return rc;
	rpcr_xdr_dec_init(&d, out, rpcr_xdr_enc_pos(&e));
	rc = rpcr_xdr_dec_u32(&d, &r->status);
	rc = rc != 0 ? rc : rpcr_xdr_dec_opaque(&d, 64, &p, &n);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(&d, &r->nres);
	for (i = 0; rc == 0 && i < r->nres && i < RTE_DIM(r->op); i++) {
		rc = rpcr_xdr_dec_u32(&d, &r->op[i]);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u32(&d, &r->st[i]);
		if (rc == 0 && r->op[i] == OP_CB_SEQUENCE && r->st[i] == NFS4_OK) {
			rc = rpcr_xdr_dec_fixed(&d, 16, &p);
			if (rc == 0)
				memcpy(r->sid, p, 16);
			rc = rc != 0 ? rc : rpcr_xdr_dec_u32(&d, &r->seq);
			rc = rc != 0 ? rc : rpcr_xdr_dec_u32(&d, &r->slot);
			rc = rc != 0 ? rc : rpcr_xdr_dec_skip(&d, 8);
		}
	}
	return rc != 0 || rpcr_xdr_dec_left(&d) != 0 ? -EPROTO : 0;
}

static int selftest_bad;

#define ST_CHECK(what, cond)                                       \
	do {                                                       \
		bool st_ok_ = (cond);                              \
                                                                   \
		printf("%s %s\n", st_ok_ ? "ok  " : "FAIL", what); \
		selftest_bad += !st_ok_;                           \
	} while (0)

/* What the callback service answers (RFC 8881 sections 2.10.6, 20): every case a status of its
 * own, and no input it cannot decode crashes it. @return failures. */
static int
selftest(void)
{
	static const uint8_t other[16] = "another-session";
	struct stateid4 d = {1, "delegation!"}, x = {1, "no-such-one"};
	struct cbt_res r;
	struct comp c;
	struct sess s;
	uint32_t cut, n;
	int rc;

	memset(&s, 0, sizeof(s));
	memcpy(s.sid, "rpcr-session-id!", 16);
	s.have_sid = true;
	s.deleg_held = true;
	s.deleg = d;

	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 1, 0);
	cbt_recall(&c, &d);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("CB_SEQUENCE + CB_RECALL of the delegation held: NFS4_OK, both results, recalled",
		 rc == 0 && r.status == NFS4_OK && r.nres == 2 && r.op[0] == OP_CB_SEQUENCE &&
			 r.op[1] == OP_CB_RECALL && r.st[1] == NFS4_OK && s.recalled &&
			 memcmp(r.sid, s.sid, 16) == 0 && r.seq == 1 && r.slot == 0);
	/* Every shorter cut of it: GARBAGE_ARGS (-EBADMSG) or an NFS4ERR_BADXDR result. */
	for (cut = 0, n = 0; cut < c.n; cut += 4) {
		struct sess t = s;

		t.cb_seq[0] = 0;
		rc = cbt_run(&t, &c, cut, &r);
		n += rc == -EBADMSG || (rc == 0 && r.status == NFS4ERR_BADXDR);
	}
	ST_CHECK("every cut of it at a 4-byte boundary: GARBAGE_ARGS or NFS4ERR_BADXDR",
		 n == c.n / 4);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("the same sequenceid again: NFS4ERR_RETRY_UNCACHED_REP (nothing cached)",
		 rc == 0 && r.status == NFS4ERR_RETRY_UNCACHED_REP && r.nres == 1);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 3, 0);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("a sequenceid ahead: NFS4ERR_SEQ_MISORDERED",
		 rc == 0 && r.status == NFS4ERR_SEQ_MISORDERED && r.nres == 1);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 1, CB_SLOTS);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("a slot past the back channel's: NFS4ERR_BADSLOT",
		 rc == 0 && r.status == NFS4ERR_BADSLOT);
	cbt_start(&c, 1);
	cbt_sequence(&c, other, 2, 0);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("another session: NFS4ERR_BADSESSION", rc == 0 && r.status == NFS4ERR_BADSESSION);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 2, 0);
	cbt_op(&c, OP_CB_GETATTR);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("CB_GETATTR (not implemented): NFS4ERR_NOTSUPP as its result",
		 rc == 0 && r.status == NFS4ERR_NOTSUPP && r.nres == 2 &&
			 r.op[1] == OP_CB_GETATTR && r.st[1] == NFS4ERR_NOTSUPP);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 3, 0);
	cbt_op(&c, 99);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("operation 99 (none): OP_CB_ILLEGAL, NFS4ERR_OP_ILLEGAL",
		 rc == 0 && r.status == NFS4ERR_OP_ILLEGAL && r.nres == 2 &&
			 r.op[1] == OP_CB_ILLEGAL && r.st[1] == NFS4ERR_OP_ILLEGAL);
	cbt_start(&c, 1);
	cbt_recall(&c, &d);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("CB_RECALL without CB_SEQUENCE first: NFS4ERR_OP_NOT_IN_SESSION",
		 rc == 0 && r.status == NFS4ERR_OP_NOT_IN_SESSION && r.nres == 1);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 4, 0);
	cbt_sequence(&c, s.sid, 5, 0);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("a second CB_SEQUENCE: NFS4ERR_SEQUENCE_POS",
		 rc == 0 && r.status == NFS4ERR_SEQUENCE_POS && r.nres == 2);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 5, 0);
	cbt_recall(&c, &x);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("CB_RECALL of a stateid not held: NFS4ERR_BAD_STATEID",
		 rc == 0 && r.status == NFS4ERR_BAD_STATEID && r.nres == 2);
	cbt_start(&c, 1);
	cbt_sequence(&c, s.sid, 6, 0);
	cbt_op(&c, OP_CB_RECALL_ANY);
	put32(&c, 0); /* keep none */
	put32(&c, 1);
	put32(&c, 1); /* RCA4_TYPE_MASK_RDATA_DLG */
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("CB_RECALL_ANY keeping none: NFS4_OK, the delegation to go back",
		 rc == 0 && r.status == NFS4_OK && r.nres == 2 && s.recall_any);
	cbt_start(&c, 2);
	cbt_sequence(&c, s.sid, 7, 0);
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("minor version 2: NFS4ERR_MINOR_VERS_MISMATCH, no results",
		 rc == 0 && r.status == NFS4ERR_MINOR_VERS_MISMATCH && r.nres == 0);
	cbt_start(&c, 1);
	for (n = 0; n < 64; n++)
		cbt_op(&c, 99);
	rpcr_xdr_store32(c.b + c.nops_at, 0xffffffffu); /* (and a count past what is there) */
	rc = cbt_run(&s, &c, c.n, &r);
	ST_CHECK("operation 99 first, with a count past the end: OP_CB_ILLEGAL, nothing read on",
		 rc == 0 && r.status == NFS4ERR_OP_ILLEGAL && r.nres == 1);
	printf("selftest: %s\n", selftest_bad == 0 ? "every answer as expected" : "FAILED");
	return selftest_bad;
}

static int
eal_init(const char *prog)
{
	static char a0[64], a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "-l", a4[] = "0";
	static char a5[] = "--no-shconf", a6[] = "--no-telemetry", a7[] = "--iova-mode=va";
	static char a8[] = "--log-level=error";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};

	snprintf(a0, sizeof(a0), "%s", prog);
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 ? -rte_errno : 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},     {"server", required_argument, NULL, 's'},
		{"port", required_argument, NULL, 'p'},    {"local", required_argument, NULL, 'L'},
		{"recalls", required_argument, NULL, 'R'}, {"rebind", no_argument, NULL, 'B'},
		{"bench", required_argument, NULL, 'b'},   {"grace", required_argument, NULL, 'g'},
		{"selftest", no_argument, NULL, 'S'},      {NULL, 0, NULL, 0}};
	static const struct rpcr_svc_proc cb_procs[] = {{.proc = 0, .handler = cb_null},
							{.proc = 1, .handler = cb_compound}};
	const char *devargs = NULL, *server = NULL, *local = NULL;
	unsigned int port = 20049;
	uint32_t nrecalls = 0, nbench = 0, i;
	uint64_t grace_us = 120000000u;
	bool do_rebind = false;
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_mem_cache_conf mcc = {0};
	struct rpcr_mem_cache *mc = NULL;
	struct rpcr_clnt_info info;
	struct rpcr_clnt_conf cc;
	struct rpcr_svc_prog cbp;
	struct rpcr_mem_arena *a;
	struct rpcr_call call;
	struct rpcr_rdev *dev;
	struct rbuf wb = {0}, rb = {0};
	struct fh4 root;
	struct sess s;
	uint8_t cred[128];
	struct rpcr_oncrpc_authsys as = {.stamp = 41, .machine_len = 5, .machine = "rpcr4"};
	char addr[128], owner[96];
	uint64_t deadline;
	int c, rc, bad = 0;
	ssize_t clen;

	while ((c = getopt_long(argc, argv, "d:s:p:L:R:Bb:g:S", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			devargs = optarg;
			break;
		case 's':
			server = optarg;
			break;
		case 'p':
			port = (unsigned int)atoi(optarg);
			break;
		case 'L':
			local = optarg;
			break;
		case 'R':
			nrecalls = (uint32_t)atoi(optarg);
			break;
		case 'B':
			do_rebind = true;
			break;
		case 'b':
			nbench = (uint32_t)atoi(optarg);
			break;
		case 'g':
			grace_us = (uint64_t)atoi(optarg) * 1000000u;
			break;
		case 'S':
			return selftest() != 0 ? 1 : 0;
		default:
			return 2;
		}
	}
	if (devargs == NULL || server == NULL || ((nrecalls != 0 || do_rebind) && local == NULL)) {
		fprintf(stderr,
			"usage: nfs41_probe --dev DEVARGS --server IP [--port P] [--local DIR]\n"
			"       [--recalls N] [--rebind] [--bench N] [--grace S]\n"
			"(--recalls and --rebind need --local: the export on this host)\n");
		return 2;
	}
	if (eal_init(argv[0]) != 0) {
		fprintf(stderr, "nfs41_probe: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	memset(&s, 0, sizeof(s));
	dev = rpcr_rdev_open(devargs);
	a = dev != NULL ? rpcr_mem_arena_create("nfs41", 16u << 20, 0) : NULL;
	memset(&pc, 0, sizeof(pc));
	pc.name = "nfs41";
	pc.dev = dev;
	pc.arena = a;
	pc.bufs = 512;
	pc.bulk_bufs = 64;
	s.p = a != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	if (s.p == NULL) {
		fprintf(stderr, "nfs41_probe: %s: %s\n", devargs, rte_strerror(rte_errno));
		return 1;
	}
	clen = rpcr_oncrpc_authsys_encode(&as, cred, sizeof(cred));
	snprintf(addr, sizeof(addr), "%s:%u", server, port);
	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = NFS4_PROG;
	cc.vers = NFS4_VERS;
	cc.credits = 32;
	cc.inline_send = INLINE;
	cc.inline_recv = INLINE;
	cc.remote_inv = true;
	cc.timeout_us = 10000000;
	cc.bc_credits = CB_SLOTS;
	cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_SYS, (uint32_t)clen, cred};
	s.cl = clen > 0 ? rpcr_clnt_create(s.p, &cc) : NULL;
	memset(&cbp, 0, sizeof(cbp));
	cbp.prog = CB_PROG;
	cbp.vers = CB_VERS;
	cbp.procs = cb_procs;
	cbp.nprocs = RTE_DIM(cb_procs);
	cbp.ctx = &s;
	if (s.cl == NULL || rpcr_clnt_register(s.cl, &cbp) != 0) {
		fprintf(stderr, "nfs41_probe: no client: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (!rpcr_clnt_connected(s.cl) && rte_rdtsc() < deadline)
		rpcr_xprt_poll(s.p);
	if (!rpcr_clnt_connected(s.cl)) {
		fprintf(stderr, "nfs41_probe: not connected to %s\n", addr);
		bad++;
		goto out;
	}
	rpcr_clnt_info_get(s.cl, &info);
	printf("connected to %s: inline %u/%u, remote invalidation %s, credits %u, back channel "
	       "credits %u\n",
	       addr, info.inline_send, info.inline_recv, info.remote_inv ? "on" : "off",
	       info.credits, CB_SLOTS);
	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC4_NULL;
	rc = rpcr_clnt_call_sync(s.cl, &call);
	printf("NULL: %s\n", call_str(&call, rc));
	bad += rc != 0;

	snprintf(owner, sizeof(owner), "rpcr-nfs41-probe-%d-%" PRIu64, (int)getpid(), now_us());
	if (exchange_id(&s, owner) != 0 || create_session(&s) != 0) {
		bad++;
		goto out;
	}
	/* (A server may probe the back channel with CB_NULL; knfsd 6.1 marks a v4.1 session's back
	 * channel up without one. Reported, not required.) */
	POLL_FOR(&s, s.cb_null != 0, 1000000u);
	printf("CB_NULL from the server: %s\n", s.cb_null != 0 ? "answered" : "none came");
	bad += simple_op(&s, OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE") != 0;
	if (root_fh(&s, &root) != 0) {
		bad++;
		goto end;
	}
	mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(s.p), &mcc);
	if (mc == NULL || rbuf_make(&s, a, mc, DATA_MAX, &wb) != 0 ||
	    rbuf_make(&s, a, mc, DATA_MAX, &rb) != 0) {
		printf("no registered buffers\n");
		bad++;
		goto end;
	}
	bad += rw_sizes(&s, &root, &wb, &rb, local, grace_us);
	if (nbench != 0)
		bad += bench(&s, &root, &wb, &rb, nbench, grace_us);
	if (nrecalls != 0)
		bad += recalls(&s, &root, local, nrecalls, 0, grace_us);
	if (do_rebind)
		bad += rebind(&s, &root, local, grace_us);
	printf("back channel: CB_NULL %u, CB_COMPOUND %u (CB_SEQUENCE %u, CB_RECALL %u, "
	       "CB_RECALL_ANY %u), refused %u\n",
	       s.cb_null, s.cb_compound, s.cb_ops[OP_CB_SEQUENCE], s.cb_ops[OP_CB_RECALL],
	       s.cb_ops[OP_CB_RECALL_ANY], s.cb_refused);
end:
	if (s.deleg_held)
		delegreturn(&s, &s.deleg_fh, &s.deleg);
	bad += simple_op(&s, OP_DESTROY_SESSION, "DESTROY_SESSION") != 0;
	bad += simple_op(&s, OP_DESTROY_CLIENTID, "DESTROY_CLIENTID") != 0;
	for (i = 0; i < OP_MAX; i++)
		if (op_names[i] != NULL && op_ok[i] + op_fail[i] != 0)
			printf("OPS %-20s ok %u fail %u\n", op_names[i], op_ok[i], op_fail[i]);
out:
	printf("nfs41_probe: %s\n",
	       bad == 0 ? "every operation got the expected answer" : "FAILED");
	if (mc != NULL) {
		rbuf_drop(mc, &wb);
		rbuf_drop(mc, &rb);
		rpcr_mem_cache_free(mc);
	}
	rpcr_clnt_destroy(s.cl);
	for (c = 0; c < 1000; c++)
		rpcr_xprt_poll(s.p);
	for (c = 0; c < 100000 && rpcr_xprt_poller_destroy(s.p) == -EBUSY; c++)
		rpcr_xprt_poll(s.p);
	if (c < 100000) {
		rpcr_rdev_close(dev);
		rpcr_mem_arena_free(a);
		rte_eal_cleanup();
	}
	return bad != 0 ? 1 : 0;
}
