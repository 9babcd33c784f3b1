/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr's client against the Linux kernel's NFS server over RDMA (knfsd, svcrdma): the root file
 * handle from MOUNT v3 over TCP (libtirpc), then NFSv3 calls over RPC-over-RDMA with rpcr. First
 * increment of the interop tool: NULL; GETATTR of the root; CREATE of a file; LOOKUP of it; WRITE of
 * 1 MiB (the data in a read chunk) checked byte for byte in the exported directory as the kernel
 * wrote it (--local DIR: the export's path on this host); READ of it back (the data in a write
 * chunk); READDIRPLUS of a directory (--dir NAME, made beforehand) to its end, each reply in a
 * reply chunk, counting the entries (--entries N expected, "." and ".." besides).
 *
 * usage: nfs3_probe --dev DEVARGS --server IP [--port 20049] [--export /export]
 *                   [--local /export] [--dir NAME --entries N] [--no-pdata]
 * --no-pdata: connect without RFC 8797 private data, as an older client (1024-byte inline
 * messages both ways).
 * Exit status 0 when every call got the expected answer. One line a call on stdout.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <rpcr_chunk.h>
#include <rpcr_mem.h>
#include <rpcr_xprt.h>

#define NFS_PROG       100003u
#define NFS_V3         3u
#define MOUNT_PROG     100005u
#define MOUNT_V3       3u
#define MOUNTPROC3_MNT 1u
#define NFS3_FHSIZE    64u
#define NF3DIR         2u

enum {
	NFSPROC3_NULL = 0,
	NFSPROC3_GETATTR = 1,
	NFSPROC3_LOOKUP = 3,
	NFSPROC3_READ = 6,
	NFSPROC3_WRITE = 7,
	NFSPROC3_CREATE = 8,
	NFSPROC3_READDIRPLUS = 17,
	NFSPROC3_FSINFO = 19,
	NFSPROC3_NPROCS = 22,
};

#define DATA_LEN   (1u << 20)
#define RDP_MAX    32768u /* READDIRPLUS maxcount: a reply chunk of the engine's size */
#define FATTR3_LEN 84u

/* Byte @i of what is written: not the test program's pattern, not zeros. */
static inline uint8_t
data_byte(uint32_t i)
{
	return (uint8_t)(i * 17 + 3 + (i >> 11));
}

struct fh3 {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* ---- MOUNT over TCP (libtirpc) ---- */

struct mnt_res {
	uint32_t status;
	struct fh3 fh;
};

static bool_t
xdr_mnt_res(XDR *x, struct mnt_res *r)
{
	char *p = (char *)r->fh.data;
	u_int n = 0;
	u_int nflav = 0;
	int *flav = NULL;
	bool_t ok;

	if (!xdr_u_int(x, &r->status))
		return FALSE;
	if (r->status != 0)
		return TRUE;
	if (!xdr_bytes(x, &p, &n, NFS3_FHSIZE))
		return FALSE;
	r->fh.len = n;
	ok = xdr_array(x, (char **)&flav, &nflav, 64, sizeof(int), (xdrproc_t)xdr_int);
	free(flav);
	return ok;
}

static int
mount_root(const char *server, const char *export, struct fh3 *fh)
{
	struct timeval tv = {10, 0};
	struct mnt_res res;
	enum clnt_stat st;
	CLIENT *c;

	c = clnt_create(server, MOUNT_PROG, MOUNT_V3, "tcp");
	if (c == NULL) {
		fprintf(stderr, "nfs3_probe: MOUNT client: %s\n", clnt_spcreateerror(server));
		return -1;
	}
	auth_destroy(c->cl_auth);
	c->cl_auth = authunix_create_default();
	memset(&res, 0, sizeof(res));
	st = clnt_call(c, MOUNTPROC3_MNT, (xdrproc_t)xdr_wrapstring, (char *)&export,
		       (xdrproc_t)xdr_mnt_res, (char *)&res, tv);
	clnt_destroy(c);
	if (st != RPC_SUCCESS || res.status != 0) {
		fprintf(stderr, "nfs3_probe: MOUNT %s: %s, status %u\n", export, clnt_sperrno(st),
			res.status);
		return -1;
	}
	*fh = res.fh;
	return 0;
}

/* ---- NFSv3 over RDMA (rpcr) ---- */

static int
enc_fh(struct rpcr_msg *m, const void *args)
{
	const struct fh3 *fh = args;

	return rpcr_xdr_enc_opaque(rpcr_msg_enc(m), fh->data, fh->len);
}

struct getattr_res {
	uint32_t status;
	uint32_t type;
	uint64_t size;
};

static int
dec_getattr(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct getattr_res *r = res;
	uint32_t mode, nlink, uid, gid;
	int rc;

	rc = rpcr_xdr_dec_u32(d, &r->status);
	if (rc != 0 || r->status != 0)
		return rc;
	/* fattr3: type, mode, nlink, uid, gid, size, ... (the rest is not needed here). */
	rc = rpcr_xdr_dec_u32(d, &r->type);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &mode);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &nlink);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &uid);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &gid);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u64(d, &r->size);
	return rc;
}

/* ---- more of NFSv3's XDR (RFC 1813) ---- */

static int
skip_post_op_attr(struct rpcr_xdr_dec *d)
{
	bool follows;
	int rc = rpcr_xdr_dec_bool(d, &follows);

	return rc != 0 || !follows ? rc : rpcr_xdr_dec_skip(d, FATTR3_LEN);
}

static int
skip_wcc_data(struct rpcr_xdr_dec *d)
{
	bool follows;
	int rc = rpcr_xdr_dec_bool(d, &follows);

	if (rc == 0 && follows)
		rc = rpcr_xdr_dec_skip(d, 24); /* wcc_attr: size, mtime, ctime */
	return rc != 0 ? rc : skip_post_op_attr(d);
}

static int
dec_fh(struct rpcr_xdr_dec *d, struct fh3 *fh)
{
	const void *p;
	int rc = rpcr_xdr_dec_opaque(d, NFS3_FHSIZE, &p, &fh->len);

	if (rc == 0)
		memcpy(fh->data, p, fh->len);
	return rc;
}

struct dirop {
	const struct fh3 *dir;
	const char *name;
};

static int
enc_dirop(struct rpcr_xdr_enc *e, const struct dirop *o)
{
	int rc = rpcr_xdr_enc_opaque(e, o->dir->data, o->dir->len);

	return rc != 0 ? rc : rpcr_xdr_enc_string(e, o->name, (uint32_t)strlen(o->name));
}

static int
enc_lookup(struct rpcr_msg *m, const void *args)
{
	return enc_dirop(rpcr_msg_enc(m), args);
}

/* CREATE UNCHECKED, mode 0644, nothing else set. */
static int
enc_create(struct rpcr_msg *m, const void *args)
{
	struct rpcr_xdr_enc *e = rpcr_msg_enc(m);
	int rc = enc_dirop(e, args);
	const uint32_t how[] = {0 /* UNCHECKED */, 1, 0644, 0, 0, 0, 0 /* atime */, 0 /* mtime */};
	size_t i;

	for (i = 0; rc == 0 && i < RTE_DIM(how); i++)
		rc = rpcr_xdr_enc_u32(e, how[i]);
	return rc;
}

struct fh_res {
	uint32_t status;
	struct fh3 fh;
	bool have_fh;
};

static int
dec_lookup(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct fh_res *r = res;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = dec_fh(d, &r->fh);
	r->have_fh = rc == 0;
	return rc != 0 ? rc : skip_post_op_attr(d);
}

static int
dec_create(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct fh_res *r = res;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = rpcr_xdr_dec_bool(d, &r->have_fh); /* post_op_fh3 */
	if (rc == 0 && r->have_fh)
		rc = dec_fh(d, &r->fh);
	rc = rc != 0 ? rc : skip_post_op_attr(d);
	return rc != 0 ? rc : skip_wcc_data(d);
}

struct io_args {
	const struct fh3 *fh;
	uint64_t off;
	uint32_t count;
	struct rpcr_bulk data; /* WRITE */
};

/* WRITE3args: the data DDP-eligible (the binding puts it in a read chunk). */
static int
enc_write(struct rpcr_msg *m, const void *args)
{
	const struct io_args *a = args;
	struct rpcr_xdr_enc *e = rpcr_msg_enc(m);
	int rc = rpcr_xdr_enc_opaque(e, a->fh->data, a->fh->len);

	rc = rc != 0 ? rc : rpcr_xdr_enc_u64(e, a->off);
	rc = rc != 0 ? rc : rpcr_xdr_enc_u32(e, a->count);
	rc = rc != 0 ? rc : rpcr_xdr_enc_u32(e, 2 /* FILE_SYNC */);
	return rc != 0 ? rc : rpcr_msg_put_bulk(m, &a->data);
}

static int
enc_read(struct rpcr_msg *m, const void *args)
{
	const struct io_args *a = args;
	struct rpcr_xdr_enc *e = rpcr_msg_enc(m);
	int rc = rpcr_xdr_enc_opaque(e, a->fh->data, a->fh->len);

	rc = rc != 0 ? rc : rpcr_xdr_enc_u64(e, a->off);
	return rc != 0 ? rc : rpcr_xdr_enc_u32(e, a->count);
}

struct io_res {
	uint32_t status;
	uint32_t count;
	bool eof;
	uint32_t off; /* READ: file offset of the data (for the comparison) */
	uint32_t bad; /* READ: bytes that differ from what was written */
	uint32_t got; /* READ: data length */
};

static int
dec_write(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct io_res *r = res;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = skip_wcc_data(d);
	return rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->count);
}

/* READ3resok: the data compared with what was written, where it landed (write chunk). */
static int
dec_read(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct io_res *r = res;
	struct rpcr_bulk b;
	const struct rte_mbuf *seg;
	uint32_t i = 0, off;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = skip_post_op_attr(d);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->count);
	rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &r->eof);
	rc = rc != 0 ? rc : rpcr_msg_get_bulk(m, DATA_LEN, &b);
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
		const uint8_t *p;
		uint32_t n;

		p = rte_pktmbuf_mtod_offset(seg, const uint8_t *, off);
		for (n = 0; n < (uint32_t)seg->data_len - off && i < b.len; n++, i++)
			r->bad += p[n] != data_byte(r->off + i);
	}
	r->bad += b.len - i;
	return 0;
}

struct fsinfo_res {
	uint32_t status;
	uint32_t rtmax, wtmax;
};

static int
dec_fsinfo(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct fsinfo_res *r = res;
	uint32_t pref, mult;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = skip_post_op_attr(d);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->rtmax);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &pref);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &mult);
	return rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->wtmax);
}

struct rdp_args {
	const struct fh3 *dir;
	uint64_t cookie;
	uint8_t verf[8];
};

static int
enc_readdirplus(struct rpcr_msg *m, const void *args)
{
	const struct rdp_args *a = args;
	struct rpcr_xdr_enc *e = rpcr_msg_enc(m);
	int rc = rpcr_xdr_enc_opaque(e, a->dir->data, a->dir->len);

	rc = rc != 0 ? rc : rpcr_xdr_enc_u64(e, a->cookie);
	rc = rc != 0 ? rc : rpcr_xdr_enc_fixed(e, a->verf, 8);
	rc = rc != 0 ? rc : rpcr_xdr_enc_u32(e, RDP_MAX / 4); /* dircount */
	return rc != 0 ? rc : rpcr_xdr_enc_u32(e, RDP_MAX);   /* maxcount */
}

struct rdp_res {
	uint32_t status;
	uint32_t entries;
	uint64_t last_cookie;
	uint8_t verf[8];
	bool eof;
};

static int
dec_readdirplus(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct rdp_res *r = res;
	const void *v;
	bool more, follows;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = skip_post_op_attr(d);
	rc = rc != 0 ? rc : rpcr_xdr_dec_fixed(d, 8, &v);
	if (rc != 0)
		return rc;
	memcpy(r->verf, v, 8);
	for (;;) {
		const char *name;
		uint32_t len;
		uint64_t fileid;
		struct fh3 fh;

		rc = rpcr_xdr_dec_bool(d, &more);
		if (rc != 0 || !more)
			break;
		rc = rpcr_xdr_dec_u64(d, &fileid);
		rc = rc != 0 ? rc : rpcr_xdr_dec_string(d, 255, &name, &len);
		rc = rc != 0 ? rc : rpcr_xdr_dec_u64(d, &r->last_cookie);
		rc = rc != 0 ? rc : skip_post_op_attr(d);
		rc = rc != 0 ? rc : rpcr_xdr_dec_bool(d, &follows);
		if (rc == 0 && follows)
			rc = dec_fh(d, &fh);
		if (rc != 0)
			return rc;
		r->entries++;
	}
	return rc != 0 ? rc : rpcr_xdr_dec_bool(d, &r->eof);
}

/* A registered buffer of @len bytes as a chain (as the engine's own tests make them). */
static void
noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

static struct rte_mbuf *
buf_make(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_mem_cache *mc,
	 uint32_t len, uint8_t **mem)
{
	struct rpcr_mem_reg *reg;

	*mem = rpcr_mem_arena_alloc(a, len, 4096);
	if (*mem == NULL)
		return NULL;
	reg = rpcr_mem_reg(mc, *mem, len, RPCR_RDEV_ACCESS_LOCAL_WRITE);
	return reg != NULL ? rpcr_chunk_attach(rpcr_xprt_poller_pool(p), reg, *mem, len, noop_free,
					       NULL)
			   : NULL;
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

static const char *
call_str(const struct rpcr_call *call, int rc)
{
	if (rc == -EREMOTEIO)
		return call->accept_stat == 0 ? "RPC error" : "RPC refused the call";
	return rc == 0 ? "ok" : strerror(-rc);
}

/* CREATE, LOOKUP, WRITE, READ, READDIRPLUS. @return how many failed. */
static int
more_procs(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_clnt *cl,
	   const struct fh3 *root, const char *local, const char *dirname, uint32_t want)
{
	static const char fname[] = "rpcr-interop";
	struct rpcr_mem_cache_conf mcc = {0};
	struct rpcr_mem_cache *mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(p), &mcc);
	struct dirop dop = {root, fname};
	struct fh_res cr = {0}, lk = {0};
	struct io_args wa, ra;
	struct io_res wr = {0}, rr = {0};
	struct rpcr_bulk dst;
	struct rpcr_call call;
	struct rte_mbuf *wm, *rm;
	uint8_t *wmem, *rmem;
	uint32_t i, off, calls, bytes, diff, rtmax = 65536, wtmax = 65536;
	int rc, bad = 0;

	if (mc == NULL)
		return 1;
	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_CREATE;
	call.encode = enc_create;
	call.args = &dop;
	call.decode = dec_create;
	call.res = &cr;
	rc = rpcr_clnt_call_sync(cl, &call);
	printf("CREATE %s: %s, status %u, file handle %s\n", fname, call_str(&call, rc), cr.status,
	       cr.have_fh ? "returned" : "not returned");
	bad += rc != 0 || cr.status != 0;

	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_LOOKUP;
	call.encode = enc_lookup;
	call.args = &dop;
	call.decode = dec_lookup;
	call.res = &lk;
	rc = rpcr_clnt_call_sync(cl, &call);
	printf("LOOKUP %s: %s, status %u, %s CREATE's handle\n", fname, call_str(&call, rc),
	       lk.status,
	       cr.have_fh && lk.fh.len == cr.fh.len &&
			       memcmp(lk.fh.data, cr.fh.data, lk.fh.len) == 0
		       ? "the same as"
		       : "not");
	bad += rc != 0 || lk.status != 0 || !lk.have_fh;
	if (!lk.have_fh)
		return bad + 3;

	/* The server's largest READ and WRITE: 1 MiB goes in as many calls as they allow. */
	{
		struct fsinfo_res fi = {0};

		memset(&call, 0, sizeof(call));
		call.proc = NFSPROC3_FSINFO;
		call.encode = enc_fh;
		call.args = root;
		call.decode = dec_fsinfo;
		call.res = &fi;
		rc = rpcr_clnt_call_sync(cl, &call);
		printf("FSINFO: %s, status %u, rtmax %u, wtmax %u\n", call_str(&call, rc),
		       fi.status, fi.rtmax, fi.wtmax);
		bad += rc != 0 || fi.status != 0 || fi.rtmax == 0 || fi.wtmax == 0;
		rtmax = RTE_MIN(fi.rtmax != 0 ? fi.rtmax : 65536u, DATA_LEN);
		wtmax = RTE_MIN(fi.wtmax != 0 ? fi.wtmax : 65536u, DATA_LEN);
	}

	/* WRITE 1 MiB: each call's data in a read chunk the server pulls. */
	wm = buf_make(p, a, mc, DATA_LEN, &wmem);
	rm = buf_make(p, a, mc, DATA_LEN, &rmem);
	if (wm == NULL || rm == NULL)
		return bad + 3;
	for (i = 0; i < DATA_LEN; i++)
		wmem[i] = data_byte(i);
	for (off = 0, calls = 0, rc = 0; off < DATA_LEN && rc == 0 && wr.status == 0;
	     off += wr.count, calls++) {
		uint32_t n = RTE_MIN(wtmax, DATA_LEN - off);

		wa = (struct io_args){&lk.fh, off, n, {wm, off, n}};
		memset(&call, 0, sizeof(call));
		memset(&wr, 0, sizeof(wr));
		call.proc = NFSPROC3_WRITE;
		call.encode = enc_write;
		call.args = &wa;
		call.decode = dec_write;
		call.res = &wr;
		rc = rpcr_clnt_call_sync(cl, &call);
		if (rc == 0 && wr.status == 0 && wr.count == 0)
			rc = -EIO; /* (no progress) */
	}
	printf("WRITE 1 MiB (read chunks, %u calls): %s, status %u, %u bytes written\n", calls,
	       call_str(&call, rc), wr.status, off);
	bad += rc != 0 || wr.status != 0 || off != DATA_LEN;
	if (local != NULL) {
		/* What the kernel wrote, read from the exported directory itself. */
		char path[512];
		uint8_t *back = malloc(DATA_LEN);
		ssize_t n = -1;
		uint32_t ndiff = 0;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", local, fname);
		fd = open(path, O_RDONLY);
		if (fd >= 0 && back != NULL)
			n = read(fd, back, DATA_LEN);
		if (fd >= 0)
			close(fd);
		for (i = 0; n == (ssize_t)DATA_LEN && i < DATA_LEN; i++)
			ndiff += back[i] != data_byte(i);
		printf("  %s on the server: %zd bytes, %u differ\n", path, n, ndiff);
		bad += n != (ssize_t)DATA_LEN || ndiff != 0;
		free(back);
	}

	/* READ 1 MiB back: the server writes each call's data into our write chunk. */
	memset(rmem, 0, DATA_LEN);
	for (off = 0, calls = 0, rc = 0, bytes = 0, diff = 0; off < DATA_LEN && rc == 0; calls++) {
		uint32_t n = RTE_MIN(rtmax, DATA_LEN - off);

		ra = (struct io_args){&lk.fh, off, n, {NULL, 0, 0}};
		dst = (struct rpcr_bulk){rm, off, n};
		memset(&call, 0, sizeof(call));
		memset(&rr, 0, sizeof(rr));
		rr.off = off;
		call.proc = NFSPROC3_READ;
		call.encode = enc_read;
		call.args = &ra;
		call.decode = dec_read;
		call.res = &rr;
		call.res_bulk = &dst;
		call.nres_bulk = 1;
		rc = rpcr_clnt_call_sync(cl, &call);
		if (rc != 0 || rr.status != 0 || rr.got == 0)
			break;
		off += rr.got;
		bytes += rr.got;
		diff += rr.bad;
	}
	printf("READ 1 MiB (write chunks, %u calls): %s, status %u, %u bytes, %u differ\n", calls,
	       call_str(&call, rc), rr.status, bytes, diff);
	bad += rc != 0 || rr.status != 0 || bytes != DATA_LEN || diff != 0;

	/* READDIRPLUS to the end of a directory, each reply in a reply chunk. */
	if (dirname != NULL) {
		struct dirop dd = {root, dirname};
		struct fh_res dl = {0};
		struct rdp_args rda = {0};
		struct rdp_res rdr = {0};
		uint32_t ncalls = 0, total = 0;

		memset(&call, 0, sizeof(call));
		call.proc = NFSPROC3_LOOKUP;
		call.encode = enc_lookup;
		call.args = &dd;
		call.decode = dec_lookup;
		call.res = &dl;
		rc = rpcr_clnt_call_sync(cl, &call);
		bad += rc != 0 || dl.status != 0 || !dl.have_fh;
		rda.dir = &dl.fh;
		while (rc == 0 && dl.have_fh && ncalls < 1000) {
			memset(&rdr, 0, sizeof(rdr));
			memset(&call, 0, sizeof(call));
			call.proc = NFSPROC3_READDIRPLUS;
			call.encode = enc_readdirplus;
			call.args = &rda;
			call.decode = dec_readdirplus;
			call.res = &rdr;
			call.reply_max = RDP_MAX + 512;
			rc = rpcr_clnt_call_sync(cl, &call);
			ncalls++;
			if (rc != 0 || rdr.status != 0)
				break;
			total += rdr.entries;
			rda.cookie = rdr.last_cookie;
			memcpy(rda.verf, rdr.verf, 8);
			if (rdr.eof || rdr.entries == 0)
				break;
		}
		printf("READDIRPLUS %s (reply chunks): %s, status %u, %u calls, %u entries, eof "
		       "%d\n",
		       dirname, call_str(&call, rc), rdr.status, ncalls, total, rdr.eof);
		bad += rc != 0 || rdr.status != 0 || !rdr.eof || (want != 0 && total != want + 2);
	}
	rte_pktmbuf_free(wm);
	rte_pktmbuf_free(rm);
	return bad;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"server", required_argument, NULL, 's'},
					     {"port", required_argument, NULL, 'p'},
					     {"export", required_argument, NULL, 'e'},
					     {"local", required_argument, NULL, 'L'},
					     {"dir", required_argument, NULL, 'D'},
					     {"entries", required_argument, NULL, 'n'},
					     {"no-pdata", no_argument, NULL, 'P'},
					     {NULL, 0, NULL, 0}};
	const char *devargs = NULL, *server = NULL, *export = "/export", *local = NULL;
	const char *dirname = NULL;
	uint32_t want_entries = 0;
	bool no_pdata = false;
	unsigned int port = 20049;
	struct rpcr_xprt_poller_conf pc;
	struct rpcr_clnt_info info;
	struct rpcr_clnt_conf cc;
	struct rpcr_xprt_poller *p;
	struct rpcr_mem_arena *a;
	struct getattr_res ga;
	struct rpcr_call call;
	struct rpcr_rdev *dev;
	struct rpcr_clnt *cl;
	uint8_t cred[128];
	struct rpcr_oncrpc_authsys as = {.stamp = 1, .machine_len = 5, .machine = "rpcr0"};
	char addr[128];
	struct fh3 root;
	static struct rpcr_ulb ulb[NFSPROC3_NPROCS];
	uint64_t deadline;
	int c, rc, bad = 0;
	ssize_t clen;

	while ((c = getopt_long(argc, argv, "d:s:p:e:L:D:n:P", opts, NULL)) != -1) {
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
		case 'e':
			export = optarg;
			break;
		case 'L':
			local = optarg;
			break;
		case 'D':
			dirname = optarg;
			break;
		case 'n':
			want_entries = (uint32_t)atoi(optarg);
			break;
		case 'P':
			no_pdata = true;
			break;
		default:
			return 2;
		}
	}
	if (devargs == NULL || server == NULL) {
		fprintf(stderr,
			"usage: nfs3_probe --dev DEVARGS --server IP [--port P] [--export DIR]\n");
		return 2;
	}
	if (mount_root(server, export, &root) != 0)
		return 1;
	printf("MOUNT %s: root file handle of %u bytes\n", export, root.len);
	if (eal_init(argv[0]) != 0) {
		fprintf(stderr, "nfs3_probe: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	dev = rpcr_rdev_open(devargs);
	a = dev != NULL ? rpcr_mem_arena_create("nfs3", 64u << 20, 0) : NULL;
	memset(&pc, 0, sizeof(pc));
	pc.name = "nfs3";
	pc.dev = dev;
	pc.arena = a;
	pc.bufs = 512;
	pc.bulk_bufs = 64;
	p = a != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	if (p == NULL) {
		fprintf(stderr, "nfs3_probe: %s: %s\n", devargs, rte_strerror(rte_errno));
		return 1;
	}
	clen = rpcr_oncrpc_authsys_encode(&as, cred, sizeof(cred));
	snprintf(addr, sizeof(addr), "%s:%u", server, port);
	memset(&cc, 0, sizeof(cc));
	cc.addr = addr;
	cc.prog = NFS_PROG;
	cc.vers = NFS_V3;
	cc.credits = 32;
	cc.inline_send = 4096;
	cc.inline_recv = 4096;
	cc.remote_inv = true; /* (only offered where the device can) */
	cc.no_pdata = no_pdata;
	cc.timeout_us = 5000000;
	cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_SYS, (uint32_t)clen, cred};
	/* NFSv3's upper-layer binding (RFC 8267): WRITE's data and READ's data are DDP-eligible. */
	ulb[NFSPROC3_WRITE] = (struct rpcr_ulb){.args_bulk = 1, .threshold = 1024};
	ulb[NFSPROC3_READ] = (struct rpcr_ulb){.res_bulk = 1, .threshold = 1024};
	cc.ulb = ulb;
	cc.nulb = NFSPROC3_NPROCS;
	cl = clen > 0 ? rpcr_clnt_create(p, &cc) : NULL;
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (cl != NULL && !rpcr_clnt_connected(cl) && rte_rdtsc() < deadline)
		rpcr_xprt_poll(p);
	if (cl == NULL || !rpcr_clnt_connected(cl)) {
		fprintf(stderr, "nfs3_probe: not connected to %s\n", addr);
		return 1;
	}
	rpcr_clnt_info_get(cl, &info);
	printf("connected to %s%s: inline %u/%u, remote invalidation %s, 2005 draft %s, credits "
	       "%u\n",
	       addr, no_pdata ? " without private data" : "", info.inline_send, info.inline_recv,
	       info.remote_inv ? "on" : "off", info.draft ? "on" : "off", info.credits);

	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_NULL;
	rc = rpcr_clnt_call_sync(cl, &call);
	printf("NULL: %s\n", rc == 0 ? "ok" : strerror(-rc));
	bad += rc != 0;

	memset(&call, 0, sizeof(call));
	memset(&ga, 0, sizeof(ga));
	call.proc = NFSPROC3_GETATTR;
	call.encode = enc_fh;
	call.args = &root;
	call.decode = dec_getattr;
	call.res = &ga;
	rc = rpcr_clnt_call_sync(cl, &call);
	printf("GETATTR %s: %s, status %u, type %u (%s)\n", export, rc == 0 ? "ok" : strerror(-rc),
	       ga.status, ga.type, ga.type == NF3DIR ? "directory" : "not a directory");
	bad += rc != 0 || ga.status != 0 || ga.type != NF3DIR;

	bad += more_procs(p, a, cl, &root, local, dirname, want_entries);

	rpcr_clnt_destroy(cl);
	for (c = 0; c < 1000; c++)
		rpcr_xprt_poll(p);
	return bad != 0 ? 1 : 0;
}
