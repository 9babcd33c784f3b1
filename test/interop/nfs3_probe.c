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
 *                   [--mount-port P] [--no-mount] [--cred-flavor N] [--churn N]
 * --mount-port: MOUNT straight to TCP port P instead of asking rpcbind (rpcr-nfsd).
 * --populate N (with --dir NAME): MKDIR NAME and CREATE N files in it first (rpcr-nfsd's store is
 * empty). --all-procs: then SETATTR, ACCESS, MKDIR, SYMLINK, READLINK, LINK, RENAME, READDIR,
 * FSSTAT, PATHCONF, COMMIT, MKNOD (NOTSUPP), REMOVE, RMDIR, error cases, malformed arguments
 * (GARBAGE_ARGS) and a program not served (PROG_UNAVAIL). --garbage: only malformed arguments,
 * every procedure's cut at every 4-byte boundary and random words, each to be answered.
 * --no-pdata: connect without RFC 8797 private data, as an older client (1024-byte inline
 * messages both ways). --no-mount: no MNT (an all-zero handle; for connection checks).
 * --cred-flavor N: calls carry flavour N (0: AUTH_NONE; 1, the default: AUTH_SYS); any other
 * flavour must get NULL and GETATTR denied with AUTH_BADCRED, and nothing else is called.
 * --churn N: only N CREATE (GUARDED) + REMOVE pairs in a new directory, each to succeed.
 * --perm-test: only the server's permission checks, as root and as uid 1000 (perm_test()).
 * --bench N: then N WRITEs and N READs of the 1 MiB file, MB/s (beside nfs41_probe's).
 * --no-write: the 1 MiB file is not written, only read back and compared (another run wrote it:
 * rpcr-nfsd with several pollers, the data in another poller's buffers).
 * --rpcrdma-version 2: a client of RPC-over-RDMA versions 1 and 2 (version 2 asked with the first
 * call, version 2's §4.2.3); the version spoken, the connections made and the transport errors
 * received are printed after the first call and at the end ("rpcrdma: ..." lines).
 * Exit status 0 when every call got the expected answer. One line a call on stdout.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
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

static uint32_t bench_n; /* --bench N */
static bool no_write;    /* --no-write */

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

/* MOUNT through rpcbind, or, with @mport, straight to that TCP port (rpcr-nfsd has no rpcbind). */
static int
mount_root(const char *server, unsigned int mport, const char *export, struct fh3 *fh)
{
	struct timeval tv = {10, 0};
	struct mnt_res res;
	enum clnt_stat st;
	CLIENT *c;

	if (mport != 0) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(mport)};
		int sock = RPC_ANYSOCK;

		if (inet_pton(AF_INET, server, &sin.sin_addr) != 1) {
			fprintf(stderr, "nfs3_probe: --mount-port needs an IPv4 --server\n");
			return -1;
		}
		c = clnttcp_create(&sin, MOUNT_PROG, MOUNT_V3, &sock, 0, 0);
	} else {
		c = clnt_create(server, MOUNT_PROG, MOUNT_V3, "tcp");
	}
	if (c == NULL) {
		fprintf(stderr, "nfs3_probe: MOUNT client: %s\n", clnt_spcreateerror(server));
		return -1;
	}
	auth_destroy(c->cl_auth);
	c->cl_auth = authunix_create_default();
	memset(&res, 0, sizeof(res));
	st = clnt_call(c, MOUNTPROC3_MNT, (xdrproc_t)xdr_wrapstring, (char *)&export,
		       (xdrproc_t)xdr_mnt_res, (char *)&res, tv);
	auth_destroy(c->cl_auth);
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
	uint32_t rtmax, rtpref, wtmax, wtpref;
};

static int
dec_fsinfo(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct fsinfo_res *r = res;
	uint32_t mult;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0 || r->status != 0)
		return rc;
	rc = skip_post_op_attr(d);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->rtmax);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->rtpref);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &mult);
	rc = rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->wtmax);
	return rc != 0 ? rc : rpcr_xdr_dec_u32(d, &r->wtpref);
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

/* ---- the other procedures (--all-procs, --populate: for rpcr-nfsd), with raw XDR ---- */

struct raw {
	uint8_t b[1024];
	uint32_t n;
};

static void
raw_u32(struct raw *r, uint32_t v)
{
	if (r->n + 4 <= sizeof(r->b)) {
		rpcr_xdr_store32(r->b + r->n, v);
		r->n += 4;
	}
}

static void
raw_u64(struct raw *r, uint64_t v)
{
	raw_u32(r, (uint32_t)(v >> 32));
	raw_u32(r, (uint32_t)v);
}

static void
raw_opaque(struct raw *r, const void *p, uint32_t len)
{
	uint32_t pad = (uint32_t)rpcr_xdr_roundup(len);

	raw_u32(r, len);
	if (r->n + pad <= sizeof(r->b)) {
		memcpy(r->b + r->n, p, len);
		memset(r->b + r->n + len, 0, pad - len);
		r->n += pad;
	}
}

static void
raw_fh(struct raw *r, const struct fh3 *fh)
{
	raw_opaque(r, fh->data, fh->len);
}

static void
raw_str(struct raw *r, const char *s)
{
	raw_opaque(r, s, (uint32_t)strlen(s));
}

/* sattr3: mode (or none), size (or none), nothing else. */
static void
raw_sattr(struct raw *r, int64_t mode, int64_t size)
{
	raw_u32(r, mode >= 0);
	if (mode >= 0)
		raw_u32(r, (uint32_t)mode);
	raw_u32(r, 0); /* uid */
	raw_u32(r, 0); /* gid */
	raw_u32(r, size >= 0);
	if (size >= 0)
		raw_u64(r, (uint64_t)size);
	raw_u32(r, 0); /* atime */
	raw_u32(r, 0); /* mtime */
}

static int
enc_raw(struct rpcr_msg *m, const void *args)
{
	const struct raw *r = args;

	return r->n == 0 ? 0 : rpcr_xdr_enc_fixed(rpcr_msg_enc(m), r->b, r->n);
}

struct rres {
	uint32_t status;
	uint8_t b[8192];
	uint32_t n;
};

static int
dec_raw(struct rpcr_msg *m, void *res)
{
	struct rpcr_xdr_dec *d = rpcr_msg_dec(m);
	struct rres *r = res;
	const void *p;
	int rc = rpcr_xdr_dec_u32(d, &r->status);

	if (rc != 0)
		return rc;
	r->n = (uint32_t)RTE_MIN(rpcr_xdr_dec_left(d), sizeof(r->b));
	rc = rpcr_xdr_dec_fixed(d, r->n, &p);
	if (rc == 0)
		memcpy(r->b, p, r->n);
	return rc;
}

/* One call with raw arguments; its status (-1 when the call itself failed). */
static int64_t
call_raw(struct rpcr_clnt *cl, uint32_t proc, const struct raw *a, struct rres *res,
	 uint32_t *accept)
{
	struct rpcr_call call;
	int rc;

	memset(&call, 0, sizeof(call));
	memset(res, 0, sizeof(*res));
	call.proc = proc;
	call.encode = enc_raw;
	call.args = a;
	call.decode = dec_raw;
	call.res = res;
	call.reply_max = 8192;
	rc = rpcr_clnt_call_sync(cl, &call);
	if (accept != NULL)
		*accept = call.accept_stat;
	return rc != 0 ? -1 : (int64_t)res->status;
}

/* MKDIR @name (mode 0755) in @dir. */
static int64_t
call_mkdir(struct rpcr_clnt *cl, const struct fh3 *dir, const char *name, struct rres *res)
{
	struct raw a = {.n = 0};

	raw_fh(&a, dir);
	raw_str(&a, name);
	raw_sattr(&a, 0755, -1);
	return call_raw(cl, 9, &a, res, NULL);
}

/* CREATE GUARDED @name (mode 0644) in @dir. */
static int64_t
call_create_guarded(struct rpcr_clnt *cl, const struct fh3 *dir, const char *name, struct rres *res)
{
	struct raw a = {.n = 0};

	raw_fh(&a, dir);
	raw_str(&a, name);
	raw_u32(&a, 1); /* GUARDED */
	raw_sattr(&a, 0644, -1);
	return call_raw(cl, 8, &a, res, NULL);
}

/* A directory operation (LOOKUP, REMOVE, RMDIR, ...): handle @dir, name @name. */
static int64_t
call_dirop(struct rpcr_clnt *cl, uint32_t proc, const struct fh3 *dir, const char *name,
	   struct rres *res)
{
	struct raw a = {.n = 0};

	raw_fh(&a, dir);
	raw_str(&a, name);
	return call_raw(cl, proc, &a, res, NULL);
}

/* The handle at the start of @res (LOOKUP) or after post_op_fh3's bool (@post: CREATE...). */
static int
res_fh(const struct rres *res, bool post, struct fh3 *fh)
{
	struct rpcr_xdr_dec d;
	bool follows = true;

	rpcr_xdr_dec_init(&d, res->b, res->n);
	if (post && rpcr_xdr_dec_bool(&d, &follows) != 0)
		return -1;
	return follows ? dec_fh(&d, fh) : -1;
}

/* GETATTR: mode, nlink and size. */
static int64_t
getattr3(struct rpcr_clnt *cl, const struct fh3 *fh, uint32_t *mode, uint32_t *nlink,
	 uint64_t *size)
{
	struct raw a = {.n = 0};
	struct rres res;
	struct rpcr_xdr_dec d;
	uint32_t type, uid;
	int64_t st;

	raw_fh(&a, fh);
	st = call_raw(cl, 1, &a, &res, NULL);
	if (st != 0)
		return st;
	rpcr_xdr_dec_init(&d, res.b, res.n);
	if (rpcr_xdr_dec_u32(&d, &type) != 0 || rpcr_xdr_dec_u32(&d, mode) != 0 ||
	    rpcr_xdr_dec_u32(&d, nlink) != 0 || rpcr_xdr_dec_u32(&d, &uid) != 0 ||
	    rpcr_xdr_dec_u32(&d, &uid) != 0 || rpcr_xdr_dec_u64(&d, size) != 0)
		return -1;
	return 0;
}

#define CHECK(what, cond)                                        \
	do {                                                     \
		bool ok_ = (cond);                               \
		printf("%s: %s\n", what, ok_ ? "ok" : "FAILED"); \
		bad += !ok_;                                     \
	} while (0)

static struct rte_mbuf *buf_make(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a,
				 struct rpcr_mem_cache *mc, uint32_t len, uint8_t **mem,
				 struct rpcr_mem_reg **reg);
static void buf_drop(struct rpcr_mem_cache *mc, struct rte_mbuf *m, struct rpcr_mem_reg *reg,
		     uint8_t *mem);

/* READ @len bytes at @off of @fh into @dst (registered, @dm its chain); how many arrived. */
static uint32_t
read_into(struct rpcr_clnt *cl, const struct fh3 *fh, uint64_t off, uint32_t len,
	  struct rte_mbuf *dm, const uint8_t *dst, uint8_t *out)
{
	struct io_args ra = {fh, off, len, {NULL, 0, 0}};
	struct rpcr_bulk b = {dm, 0, len};
	struct io_res rr = {0};
	struct rpcr_call call;
	int rc;

	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_READ;
	call.encode = enc_read;
	call.args = &ra;
	call.decode = dec_read;
	call.res = &rr;
	call.res_bulk = &b;
	call.nres_bulk = 1;
	rc = rpcr_clnt_call_sync(cl, &call);
	if (rc != 0 || rr.status != 0)
		return 0;
	memcpy(out, dst, rr.got);
	return rr.got;
}

static int
write_from(struct rpcr_clnt *cl, const struct fh3 *fh, uint64_t off, struct rte_mbuf *m,
	   uint32_t moff, uint32_t len)
{
	struct io_args wa = {fh, off, len, {m, moff, len}};
	struct io_res wr = {0};
	struct rpcr_call call;
	int rc;

	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_WRITE;
	call.encode = enc_write;
	call.args = &wa;
	call.decode = dec_write;
	call.res = &wr;
	rc = rpcr_clnt_call_sync(cl, &call);
	return rc != 0 || wr.status != 0 || wr.count != len ? -1 : 0;
}

/*
 * Overwrites on top of the 1 MiB file: a chunked write inside it, a small inline one (copied by
 * the server), one across its end; then a hole past the end (SETATTR size); all read back
 * and compared with a model of what the file should hold.
 */
static int
overwrites(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_clnt *cl,
	   const struct fh3 *fh)
{
	const uint32_t size = DATA_LEN + 50000, total = DATA_LEN * 2;
	struct rpcr_mem_cache_conf mcc = {0};
	struct rpcr_mem_cache *mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(p), &mcc);
	uint8_t *model = calloc(1, total), *back = calloc(1, total), *wmem, *rmem;
	struct rpcr_mem_reg *wreg, *rreg;
	struct rte_mbuf *wm, *rm;
	struct raw ra = {.n = 0};
	struct rres res;
	uint32_t i, got, off, diff = 0;
	int bad = 0;

	if (mc == NULL || model == NULL || back == NULL)
		return 1;
	wm = buf_make(p, a, mc, DATA_LEN, &wmem, &wreg);
	rm = buf_make(p, a, mc, DATA_LEN, &rmem, &rreg);
	if (wm == NULL || rm == NULL)
		return 1;
	for (i = 0; i < DATA_LEN; i++) {
		model[i] = data_byte(i);
		wmem[i] = (uint8_t)(i * 7 + 1);
	}
	bad += write_from(cl, fh, 500000, wm, 0, 70000) != 0;
	memcpy(model + 500000, wmem, 70000);
	bad += write_from(cl, fh, 2000, wm, 100, 500) != 0; /* inline */
	memcpy(model + 2000, wmem + 100, 500);
	bad += write_from(cl, fh, DATA_LEN - 50000, wm, 3, 100000) != 0;
	memcpy(model + DATA_LEN - 50000, wmem + 3, 100000);
	CHECK("WRITE inside, inline, across the end", bad == 0);
	for (off = 0; off < size; off += got) {
		got = read_into(cl, fh, off, RTE_MIN(DATA_LEN, size - off), rm, rmem, back + off);
		if (got == 0)
			break;
	}
	for (i = 0; i < size; i++)
		diff += back[i] != model[i];
	CHECK("READ back after the overwrites, as the model says", off == size && diff == 0);
	/* SETATTR size 2 MiB: the rest reads as zeros. */
	raw_fh(&ra, fh);
	raw_sattr(&ra, -1, total);
	raw_u32(&ra, 0);
	bad += call_raw(cl, 2, &ra, &res, NULL) != 0;
	got = read_into(cl, fh, DATA_LEN + 40000, 20000, rm, rmem, back);
	for (i = 0, diff = 0; i < 20000; i++)
		diff += back[i] != (DATA_LEN + 40000 + i < size ? model[DATA_LEN + 40000 + i] : 0);
	CHECK("READ across the end of the data into the hole", got == 20000 && diff == 0);
	buf_drop(mc, wm, wreg, wmem);
	buf_drop(mc, rm, rreg, rmem);
	rpcr_mem_cache_free(mc);
	free(model);
	free(back);
	return bad;
}

/*
 * Malformed arguments (--garbage): every procedure, with a plausible argument list cut at
 * every 4-byte boundary, and with random words (lengths of 0xffffffff and the like). Each call
 * must be answered (GARBAGE_ARGS or an NFS status), never dropped: the server must survive.
 */
static int
garbage(struct rpcr_clnt *cl, const struct fh3 *root)
{
	static const uint32_t odd[] = {0, 1, 2, 3, 7, 64, 255, 256, 4096, 0x7fffffff, 0xffffffff};
	uint32_t proc, cut, k, accept, answered = 0, garbage_args = 0, statuses = 0, lost = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct raw full, a;
	struct rres res;
	int bad = 0;

	for (proc = 1; proc <= 21; proc++) {
		full.n = 0;
		raw_fh(&full, root);
		raw_str(&full, "g");
		for (k = 0; k < 24; k++)
			raw_u32(&full, k % 3 == 0 ? 1 : k);
		for (cut = 0; cut <= full.n; cut += 4) {
			int64_t st;

			memcpy(a.b, full.b, cut);
			a.n = cut;
			st = call_raw(cl, proc, &a, &res, &accept);
			answered += st >= 0 || accept == 4;
			garbage_args += st < 0 && accept == 4;
			statuses += st >= 0;
			lost += st < 0 && accept != 4;
		}
		for (k = 0; k < 100; k++) {
			uint32_t w, nw;
			int64_t st;

			a.n = 0;
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if (seed >> 63)
				raw_fh(&a, root);
			nw = (uint32_t)(seed >> 40) % 40;
			for (w = 0; w < nw; w++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				raw_u32(&a, (seed >> 62) == 0 ? (uint32_t)(seed >> 20)
							      : odd[(seed >> 33) % RTE_DIM(odd)]);
			}
			st = call_raw(cl, proc, &a, &res, &accept);
			answered += st >= 0 || accept == 4;
			garbage_args += st < 0 && accept == 4;
			statuses += st >= 0;
			lost += st < 0 && accept != 4;
		}
	}
	printf("malformed arguments: %u calls answered (%u GARBAGE_ARGS, %u NFS statuses), %u "
	       "not\n",
	       answered, garbage_args, statuses, lost);
	bad += lost != 0 || garbage_args == 0;
	a.n = 0;
	raw_fh(&a, root);
	CHECK("GETATTR after the malformed calls", call_raw(cl, 1, &a, &res, NULL) == 0);
	return bad;
}

/* MKDIR @dirname and CREATE @n files in it (names as knfsd-nfs3.sh makes them). */
static int
populate(struct rpcr_clnt *cl, const struct fh3 *root, const char *dirname, uint32_t n)
{
	struct rres res;
	struct fh3 dir;
	uint32_t i, made = 0;
	int bad = 0;

	CHECK("MKDIR for --populate",
	      call_mkdir(cl, root, dirname, &res) == 0 && res_fh(&res, true, &dir) == 0);
	if (bad != 0)
		return bad;
	for (i = 1; i <= n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "entry-with-a-longish-name-%04u", i);
		made += call_create_guarded(cl, &dir, name, &res) == 0;
	}
	printf("CREATE %u files in %s: %u made\n", n, dirname, made);
	return made != n;
}

/*
 * --churn N: MKDIR churn-PID, then N times CREATE (GUARDED) a file in it and REMOVE it, then
 * RMDIR: every one must succeed. Against a server whose replies get lost (shm's
 * fault_disconnect), the engine sends the calls of a lost connection again with their xids,
 * and only a duplicate request cache keeps a second CREATE from EXIST and a second REMOVE
 * from NOENT.
 */
static int
churn(struct rpcr_clnt *cl, const struct fh3 *root, uint32_t n)
{
	struct rres res;
	struct fh3 dir;
	uint32_t i, failed = 0;
	char dname[64];
	int64_t st;
	int bad = 0;

	snprintf(dname, sizeof(dname), "churn-%d", (int)getpid());
	CHECK("MKDIR for --churn",
	      call_mkdir(cl, root, dname, &res) == 0 && res_fh(&res, true, &dir) == 0);
	if (bad != 0)
		return bad;
	for (i = 1; i <= n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "churn-%05u", i);
		st = call_create_guarded(cl, &dir, name, &res);
		if (st != 0) {
			if (failed++ < 5)
				printf("CREATE %s: %s %" PRId64 "\n", name,
				       st < 0 ? "call failed" : "status", st);
			continue;
		}
		st = call_dirop(cl, 12, &dir, name, &res);
		if (st != 0 && failed++ < 5)
			printf("REMOVE %s: %s %" PRId64 "\n", name,
			       st < 0 ? "call failed" : "status", st);
	}
	printf("CHURN: %u CREATEs and REMOVEs, %u failed\n", n, failed);
	bad += failed != 0;
	CHECK("RMDIR after --churn", call_dirop(cl, 13, root, dname, &res) == 0);
	return bad;
}

/* SETATTR of @fh: mode @mode (or -1), size @size (or -1), no guard. */
static int64_t
call_setattr(struct rpcr_clnt *cl, const struct fh3 *fh, int64_t mode, int64_t size)
{
	struct raw a = {.n = 0};
	struct rres res;

	raw_fh(&a, fh);
	raw_sattr(&a, mode, size);
	raw_u32(&a, 0); /* no guard */
	return call_raw(cl, 2, &a, &res, NULL);
}

/*
 * --perm-test: the server's permission checks. As root (the main client): MKDIR perm-PID 0755
 * and a file in it, 0644. As uid 1000 gid 1000 (@user, a second client): LOOKUP and READ are
 * allowed; WRITE, CREATE, MKDIR, REMOVE, RENAME, truncating SETATTR get ACCES (13), chmod of
 * root's file PERM (1). After root makes the directory 0777: the user's CREATE, chmod of its
 * own file, WRITE to it with mode 0400 (the owner may) and REMOVE succeed. Root cleans up.
 */
static int
perm_test(struct rpcr_clnt *cl, struct rpcr_clnt *user, const struct fh3 *root)
{
	struct rres res;
	struct fh3 dir, f, g;
	struct raw a = {.n = 0};
	char dname[64];
	int bad = 0;

	snprintf(dname, sizeof(dname), "perm-%d", (int)getpid());
	CHECK("root: MKDIR 0755",
	      call_mkdir(cl, root, dname, &res) == 0 && res_fh(&res, true, &dir) == 0);
	CHECK("root: CREATE f 0644",
	      call_create_guarded(cl, &dir, "f", &res) == 0 && res_fh(&res, true, &f) == 0);
	if (bad != 0)
		return bad;
	CHECK("uid 1000: LOOKUP f: ok", call_dirop(user, 3, &dir, "f", &res) == 0);
	raw_fh(&a, &f);
	raw_u64(&a, 0);
	raw_u32(&a, 16);
	CHECK("uid 1000: READ f (0644): ok", call_raw(user, 6, &a, &res, NULL) == 0);
	a.n = 0;
	raw_fh(&a, &f);
	raw_u64(&a, 0);
	raw_u32(&a, 4);
	raw_u32(&a, 2); /* FILE_SYNC */
	raw_opaque(&a, "data", 4);
	CHECK("uid 1000: WRITE f (0644, root's): ACCES", call_raw(user, 7, &a, &res, NULL) == 13);
	CHECK("uid 1000: CREATE g in a 0755 directory: ACCES",
	      call_create_guarded(user, &dir, "g", &res) == 13);
	CHECK("uid 1000: MKDIR in a 0755 directory: ACCES",
	      call_mkdir(user, &dir, "d", &res) == 13);
	CHECK("uid 1000: REMOVE f: ACCES", call_dirop(user, 12, &dir, "f", &res) == 13);
	a.n = 0;
	raw_fh(&a, &dir);
	raw_str(&a, "f");
	raw_fh(&a, &dir);
	raw_str(&a, "h");
	CHECK("uid 1000: RENAME f h: ACCES", call_raw(user, 14, &a, &res, NULL) == 13);
	CHECK("uid 1000: SETATTR f mode 0666 (root's file): PERM",
	      call_setattr(user, &f, 0666, -1) == 1);
	CHECK("uid 1000: SETATTR f size 0 (root's 0644 file): ACCES",
	      call_setattr(user, &f, -1, 0) == 13);
	CHECK("root: SETATTR the directory 0777", call_setattr(cl, &dir, 0777, -1) == 0);
	CHECK("uid 1000: CREATE g in a 0777 directory: ok",
	      call_create_guarded(user, &dir, "g", &res) == 0 && res_fh(&res, true, &g) == 0);
	if (bad == 0) {
		CHECK("uid 1000: SETATTR g mode 0400 (its own): ok",
		      call_setattr(user, &g, 0400, -1) == 0);
		a.n = 0;
		raw_fh(&a, &g);
		raw_u64(&a, 0);
		raw_u32(&a, 4);
		raw_u32(&a, 2);
		raw_opaque(&a, "data", 4);
		CHECK("uid 1000: WRITE g (0400, its own: the owner may): ok",
		      call_raw(user, 7, &a, &res, NULL) == 0);
		CHECK("uid 1000: REMOVE g: ok", call_dirop(user, 12, &dir, "g", &res) == 0);
	}
	CHECK("root: REMOVE f", call_dirop(cl, 12, &dir, "f", &res) == 0);
	CHECK("root: RMDIR", call_dirop(cl, 13, root, dname, &res) == 0);
	return bad;
}

/* The procedures more_procs() does not call, on rpcr-nfsd's store. @file: a file of 1 MiB. */
static int
all_procs(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *ar, struct rpcr_clnt *cl,
	  const struct fh3 *root, const char *fname, const char *addr)
{
	struct raw a = {.n = 0};
	struct rres res;
	struct fh3 file, sub, sl;
	uint32_t mode = 0, nlink = 0, acc = 0;
	uint64_t size = 0;
	int bad = 0;
	int64_t st;

	CHECK("LOOKUP the 1 MiB file",
	      call_dirop(cl, 3, root, fname, &res) == 0 && res_fh(&res, false, &file) == 0);
	if (bad != 0)
		return bad;
	bad += overwrites(p, ar, cl, &file);
	/* SETATTR: size 1000 (truncate), mode 0600; GETATTR sees both. */
	raw_fh(&a, &file);
	raw_sattr(&a, 0600, 1000);
	raw_u32(&a, 0); /* no guard */
	st = call_raw(cl, 2, &a, &res, NULL);
	CHECK("SETATTR size 1000 mode 0600",
	      st == 0 && getattr3(cl, &file, &mode, &nlink, &size) == 0 && size == 1000 &&
		      (mode & 07777) == 0600);
	/* ACCESS of the root: READ | LOOKUP | MODIFY asked. */
	a.n = 0;
	raw_fh(&a, root);
	raw_u32(&a, 0x7);
	st = call_raw(cl, 4, &a, &res, NULL);
	if (st == 0 && res.n >= 4)
		acc = rpcr_xdr_load32(res.b + res.n - 4);
	CHECK("ACCESS root (READ|LOOKUP|MODIFY granted)", st == 0 && acc == 0x7);
	/* MKDIR, SYMLINK + READLINK, LINK, RENAME. */
	a.n = 0;
	raw_fh(&a, root);
	raw_str(&a, "sub");
	raw_sattr(&a, 0755, -1);
	CHECK("MKDIR sub", call_raw(cl, 9, &a, &res, NULL) == 0 && res_fh(&res, true, &sub) == 0);
	a.n = 0;
	raw_fh(&a, root);
	raw_str(&a, "sl");
	raw_sattr(&a, -1, -1);
	raw_str(&a, fname);
	CHECK("SYMLINK sl", call_raw(cl, 10, &a, &res, NULL) == 0 && res_fh(&res, true, &sl) == 0);
	a.n = 0;
	raw_fh(&a, &sl);
	st = call_raw(cl, 5, &a, &res, NULL);
	{
		struct rpcr_xdr_dec d;
		const char *t = NULL;
		uint32_t tlen = 0;
		bool follows = false;

		rpcr_xdr_dec_init(&d, res.b, res.n);
		if (st == 0 && rpcr_xdr_dec_bool(&d, &follows) == 0 &&
		    (!follows || rpcr_xdr_dec_skip(&d, FATTR3_LEN) == 0))
			rpcr_xdr_dec_string(&d, 4096, &t, &tlen);
		CHECK("READLINK sl",
		      st == 0 && t != NULL && tlen == strlen(fname) && memcmp(t, fname, tlen) == 0);
	}
	a.n = 0;
	raw_fh(&a, &file);
	raw_fh(&a, &sub);
	raw_str(&a, "hard");
	st = call_raw(cl, 15, &a, &res, NULL);
	CHECK("LINK sub/hard, nlink 2",
	      st == 0 && getattr3(cl, &file, &mode, &nlink, &size) == 0 && nlink == 2);
	a.n = 0;
	raw_fh(&a, &sub);
	raw_str(&a, "hard");
	raw_fh(&a, root);
	raw_str(&a, "hard2");
	st = call_raw(cl, 14, &a, &res, NULL);
	CHECK("RENAME sub/hard to hard2", st == 0 && call_dirop(cl, 3, &sub, "hard", &res) == 2 &&
						  call_dirop(cl, 3, root, "hard2", &res) == 0);
	/* READDIR of the root, FSSTAT, PATHCONF, COMMIT. */
	a.n = 0;
	raw_fh(&a, root);
	raw_u64(&a, 0);
	raw_u64(&a, 0);
	raw_u32(&a, 4096);
	CHECK("READDIR root", call_raw(cl, 16, &a, &res, NULL) == 0);
	a.n = 0;
	raw_fh(&a, root);
	CHECK("FSSTAT", call_raw(cl, 18, &a, &res, NULL) == 0);
	CHECK("PATHCONF", call_raw(cl, 20, &a, &res, NULL) == 0);
	a.n = 0;
	raw_fh(&a, &file);
	raw_u64(&a, 0);
	raw_u32(&a, 0);
	CHECK("COMMIT", call_raw(cl, 21, &a, &res, NULL) == 0);
	/* MKNOD is not served: NOTSUPP. */
	a.n = 0;
	raw_fh(&a, root);
	raw_str(&a, "fifo");
	raw_u32(&a, 7); /* NF3FIFO */
	raw_sattr(&a, 0644, -1);
	CHECK("MKNOD answers NFS3ERR_NOTSUPP", call_raw(cl, 11, &a, &res, NULL) == 10004);
	/* CREATE EXCLUSIVE: the same verifier again finds the file (a retransmission), another
	 * verifier gets EXIST, and after SETATTR the verifier no longer counts. */
	{
		struct fh3 ex1, ex2;
		int64_t s1, s2, s3, s4;

		a.n = 0;
		raw_fh(&a, root);
		raw_str(&a, "excl");
		raw_u32(&a, 2);
		raw_u64(&a, 0x1122334455667788ull);
		s1 = call_raw(cl, 8, &a, &res, NULL);
		s1 = s1 == 0 && res_fh(&res, true, &ex1) == 0 ? 0 : -1;
		s2 = call_raw(cl, 8, &a, &res, NULL);
		s2 = s2 == 0 && res_fh(&res, true, &ex2) == 0 && ex1.len == ex2.len &&
				     memcmp(ex1.data, ex2.data, ex1.len) == 0
			     ? 0
			     : -1;
		a.n -= 8;
		raw_u64(&a, 0x99);
		s3 = call_raw(cl, 8, &a, &res, NULL);
		{
			struct raw sa = {.n = 0};

			raw_fh(&sa, &ex1);
			raw_sattr(&sa, 0640, -1);
			raw_u32(&sa, 0);
			call_raw(cl, 2, &sa, &res, NULL);
		}
		a.n -= 8;
		raw_u64(&a, 0x1122334455667788ull);
		s4 = call_raw(cl, 8, &a, &res, NULL);
		CHECK("CREATE EXCLUSIVE: again ok, other verifier EXIST, after SETATTR EXIST",
		      s1 == 0 && s2 == 0 && s3 == 17 && s4 == 17 &&
			      call_dirop(cl, 12, root, "excl", &res) == 0);
	}
	/* Errors: RMDIR of a non-empty directory, REMOVE of a directory, a stale handle. */
	CHECK("RMDIR of a file: NOTDIR", call_dirop(cl, 13, root, fname, &res) == 20);
	CHECK("REMOVE of a directory: ISDIR", call_dirop(cl, 12, root, "sub", &res) == 21);
	CHECK("REMOVE hard2, sl, the file", call_dirop(cl, 12, root, "hard2", &res) == 0 &&
						    call_dirop(cl, 12, root, "sl", &res) == 0 &&
						    call_dirop(cl, 12, root, fname, &res) == 0);
	CHECK("GETATTR of the removed file: STALE",
	      getattr3(cl, &file, &mode, &nlink, &size) == 70);
	CHECK("RMDIR sub", call_dirop(cl, 13, root, "sub", &res) == 0);
	/* Malformed arguments: GARBAGE_ARGS, and the server still answers. */
	{
		uint32_t accept = 0;

		a.n = 0;
		raw_u32(&a, 1000); /* a handle of 1000 bytes, none following */
		st = call_raw(cl, 1, &a, &res, &accept);
		CHECK("GETATTR with a truncated handle: GARBAGE_ARGS", st == -1 && accept == 4);
		a.n = 0;
		raw_fh(&a, root);
		raw_u64(&a, 0);
		raw_u32(&a, 10);
		raw_u32(&a, 7); /* stable_how out of range, no data */
		st = call_raw(cl, 7, &a, &res, &accept);
		CHECK("WRITE with a bad stable_how: GARBAGE_ARGS", st == -1 && accept == 4);
		a.n = 0;
		raw_fh(&a, root);
		CHECK("GETATTR after the malformed calls", call_raw(cl, 1, &a, &res, NULL) == 0);
	}
	/* A program the server does not serve: PROG_UNAVAIL (the client mounts with nolock). */
	{
		struct rpcr_clnt_conf cc = {.addr = addr, .prog = 100021, .vers = 4};
		struct rpcr_clnt *nlm = rpcr_clnt_create(p, &cc);
		struct rpcr_call call;
		uint64_t deadline = rte_rdtsc() + 5 * rte_get_tsc_hz();
		int rc = -1;

		while (nlm != NULL && !rpcr_clnt_connected(nlm) && rte_rdtsc() < deadline)
			rpcr_xprt_poll(p);
		memset(&call, 0, sizeof(call));
		if (nlm != NULL)
			rc = rpcr_clnt_call_sync(nlm, &call);
		CHECK("NLM NULL: PROG_UNAVAIL", rc == -EREMOTEIO && call.accept_stat == 1);
		if (nlm != NULL)
			rpcr_clnt_destroy(nlm);
	}
	return bad;
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
	 uint32_t len, uint8_t **mem, struct rpcr_mem_reg **reg)
{
	*reg = NULL;
	*mem = rpcr_mem_arena_alloc(a, len, 4096);
	if (*mem == NULL)
		return NULL;
	*reg = rpcr_mem_reg(mc, *mem, len, rpcr_xprt_poller_mem_access(p));
	return *reg != NULL ? rpcr_chunk_attach(rpcr_xprt_poller_pool(p), *reg, *mem, len,
						noop_free, NULL)
			    : NULL;
}

/* Give back what buf_make() took (the chain first: it refers to the registration). */
static void
buf_drop(struct rpcr_mem_cache *mc, struct rte_mbuf *m, struct rpcr_mem_reg *reg, uint8_t *mem)
{
	rte_pktmbuf_free(m);
	if (reg != NULL)
		rpcr_mem_unreg(mc, reg);
	rte_free(mem);
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

/* --bench N: N WRITEs and N READs of the 1 MiB file (calls of the server's sizes), MB/s, to
 * set beside nfs41_probe's in the same boot. @return failures. */
static int
bench3(struct rpcr_clnt *cl, const struct fh3 *fh, struct rte_mbuf *wm, struct rte_mbuf *rm,
       uint32_t wtmax, uint32_t rtmax, uint32_t n)
{
	uint64_t t0, tw, tr;
	uint32_t i, off;
	int bad = 0;

	t0 = rte_rdtsc();
	for (i = 0; i < n && bad == 0; i++)
		for (off = 0; off < DATA_LEN && bad == 0; off += wtmax)
			bad += write_from(cl, fh, off, wm, off, RTE_MIN(wtmax, DATA_LEN - off)) !=
			       0;
	tw = rte_rdtsc() - t0;
	t0 = rte_rdtsc();
	for (i = 0; i < n && bad == 0; i++) {
		for (off = 0; off < DATA_LEN && bad == 0; off += rtmax) {
			uint32_t len = RTE_MIN(rtmax, DATA_LEN - off);
			struct io_args ra = {fh, off, len, {NULL, 0, 0}};
			struct rpcr_bulk dst = {rm, off, len};
			struct io_res rr = {0};
			struct rpcr_call call;

			memset(&call, 0, sizeof(call));
			rr.off = off;
			call.proc = NFSPROC3_READ;
			call.encode = enc_read;
			call.args = &ra;
			call.decode = dec_read;
			call.res = &rr;
			call.res_bulk = &dst;
			call.nres_bulk = 1;
			bad += rpcr_clnt_call_sync(cl, &call) != 0 || rr.status != 0 ||
			       rr.got != len || rr.bad != 0;
		}
	}
	tr = rte_rdtsc() - t0;
	printf("BENCH NFSv3 1 MiB x %u (calls of %u/%u B): WRITE %.1f MB/s, READ %.1f MB/s%s\n", n,
	       wtmax, rtmax, (double)n * DATA_LEN * rte_get_tsc_hz() / 1e6 / (double)(tw ? tw : 1),
	       (double)n * DATA_LEN * rte_get_tsc_hz() / 1e6 / (double)(tr ? tr : 1),
	       bad ? " (FAILED)" : "");
	return bad;
}

/* CREATE, LOOKUP, WRITE, READ, READDIRPLUS. @return how many failed. */
static int
more_procs(struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a, struct rpcr_clnt *cl,
	   const struct fh3 *root, const char *local, const char *dirname, uint32_t want)
{
	static const char fname[] = "rpcr-interop";
	struct rpcr_mem_cache_conf mcc = {0};
	struct rpcr_mem_cache *mc;
	struct dirop dop = {root, fname};
	struct fh_res cr = {0}, lk = {0};
	struct io_args wa, ra;
	struct io_res wr = {0}, rr = {0};
	struct rpcr_bulk dst;
	struct rpcr_call call;
	struct rte_mbuf *wm, *rm;
	struct rpcr_mem_reg *wreg, *rreg;
	uint8_t *wmem, *rmem;
	uint32_t i, off, calls, bytes, diff, rtmax = 65536, wtmax = 65536;
	int rc, bad = 0;

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
		printf("FSINFO: %s, status %u, rtmax %u, rtpref %u, wtmax %u, wtpref %u\n",
		       call_str(&call, rc), fi.status, fi.rtmax, fi.rtpref, fi.wtmax, fi.wtpref);
		bad += rc != 0 || fi.status != 0 || fi.rtmax == 0 || fi.wtmax == 0;
		rtmax = RTE_MIN(fi.rtmax != 0 ? fi.rtmax : 65536u, DATA_LEN);
		wtmax = RTE_MIN(fi.wtmax != 0 ? fi.wtmax : 65536u, DATA_LEN);
	}

	/* WRITE 1 MiB: each call's data in a read chunk the server pulls. */
	mc = rpcr_mem_cache_create(rpcr_xprt_poller_pd(p), &mcc);
	if (mc == NULL)
		return bad + 3;
	wm = buf_make(p, a, mc, DATA_LEN, &wmem, &wreg);
	rm = buf_make(p, a, mc, DATA_LEN, &rmem, &rreg);
	if (wm == NULL || rm == NULL)
		return bad + 3;
	for (i = 0; i < DATA_LEN; i++)
		wmem[i] = data_byte(i);
	for (off = no_write ? DATA_LEN : 0, calls = 0, rc = 0;
	     off < DATA_LEN && rc == 0 && wr.status == 0; off += wr.count, calls++) {
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
	if (bench_n != 0)
		bad += bench3(cl, &lk.fh, wm, rm, wtmax, rtmax, bench_n);

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
	buf_drop(mc, wm, wreg, wmem);
	buf_drop(mc, rm, rreg, rmem);
	rpcr_mem_cache_free(mc);
	return bad;
}

/* The RPC-over-RDMA version @cl speaks, its connections and the transport errors received. */
static void
rdma_vers_report(struct rpcr_xprt_poller *p, struct rpcr_clnt *cl, unsigned int asked,
		 const char *when)
{
	struct rpcr_xprt_stats st;
	struct rpcr_clnt_info info;

	if (rpcr_clnt_info_get(cl, &info) != 0)
		return;
	rpcr_xprt_stats_get(p, &st);
	printf("rpcrdma: %s: asked version %u, speaking version %u, %u connection(s), %" PRIu64
	       " transport error(s) received\n",
	       when, asked, info.rdma_vers, info.connections, st.rdma_errors_recv);
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
					     {"mount-port", required_argument, NULL, 'M'},
					     {"all-procs", no_argument, NULL, 'X'},
					     {"populate", required_argument, NULL, 'N'},
					     {"garbage", no_argument, NULL, 'G'},
					     {"no-mount", no_argument, NULL, 'm'},
					     {"cred-flavor", required_argument, NULL, 'C'},
					     {"churn", required_argument, NULL, 'K'},
					     {"perm-test", no_argument, NULL, 'T'},
					     {"bench", required_argument, NULL, 'b'},
					     {"no-write", no_argument, NULL, 'W'},
					     {"rpcrdma-version", required_argument, NULL, 'V'},
					     {NULL, 0, NULL, 0}};
	const char *devargs = NULL, *server = NULL, *export = "/export", *local = NULL;
	const char *dirname = NULL;
	uint32_t want_entries = 0;
	bool no_pdata = false;
	unsigned int rdma_vers = 1;
	unsigned int port = 20049, mport = 0, npop = 0;
	bool allp = false, garb = false, no_mount = false, perm = false;
	uint32_t flavor = RPCR_ONCRPC_AUTH_SYS, nchurn = 0;
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

	while ((c = getopt_long(argc, argv, "d:s:p:e:L:D:n:PM:XN:GmC:K:Tb:V:", opts, NULL)) != -1) {
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
		case 'V':
			rdma_vers = (unsigned int)atoi(optarg);
			break;
		case 'M':
			mport = (unsigned int)atoi(optarg);
			break;
		case 'X':
			allp = true;
			break;
		case 'N':
			npop = (unsigned int)atoi(optarg);
			break;
		case 'G':
			garb = true;
			break;
		case 'm':
			no_mount = true;
			break;
		case 'C':
			flavor = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'K':
			nchurn = (uint32_t)atoi(optarg);
			break;
		case 'T':
			perm = true;
			break;
		case 'b':
			bench_n = (uint32_t)atoi(optarg);
			break;
		case 'W':
			no_write = true;
			break;
		default:
			return 2;
		}
	}
	if (devargs == NULL || server == NULL) {
		fprintf(stderr,
			"usage: nfs3_probe --dev DEVARGS --server IP [--port P] [--export DIR]\n"
			"       [--mount-port P] [--no-mount] [--cred-flavor N] [--no-pdata]\n"
			"       [--dir NAME] [--populate N] [--entries N] [--all-procs]\n"
			"       [--garbage] [--churn N] [--perm-test] [--bench N] [--no-write]\n"
			"       [--rpcrdma-version 1|2]\n");
		return 2;
	}
	if (no_mount) {
		/* (No MNT: only calls that need no handle make sense; for connection checks.) */
		memset(&root, 0, sizeof(root));
		root.len = 16;
	} else if (mount_root(server, mport, export, &root) != 0) {
		return 1;
	} else {
		printf("MOUNT %s: root file handle of %u bytes\n", export, root.len);
	}
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
	if (rdma_vers == 2)
		cc.versions = RPCR_XPRT_V1 | RPCR_XPRT_V2;
	cc.timeout_us = 5000000;
	cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_SYS, (uint32_t)clen, cred};
	if (flavor == RPCR_ONCRPC_AUTH_NONE)
		cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_NONE, 0, NULL};
	else if (flavor != RPCR_ONCRPC_AUTH_SYS) /* a flavour the server does not take */
		cc.cred = (struct rpcr_oncrpc_auth){flavor, 4, (const uint8_t *)"rpcr"};
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
		bad++;
		goto out;
	}
	rpcr_clnt_info_get(cl, &info);
	printf("connected to %s%s: inline %u/%u, remote invalidation %s, 2005 draft %s, credits "
	       "%u\n",
	       addr, no_pdata ? " without private data" : "", info.inline_send, info.inline_recv,
	       info.remote_inv ? "on" : "off", info.draft ? "on" : "off", info.credits);

	memset(&call, 0, sizeof(call));
	call.proc = NFSPROC3_NULL;
	rc = rpcr_clnt_call_sync(cl, &call);
	rdma_vers_report(p, cl, rdma_vers, "after the first call");
	if (flavor != RPCR_ONCRPC_AUTH_SYS && flavor != RPCR_ONCRPC_AUTH_NONE) {
		/* --cred-flavor N: every call is denied, AUTH_BADCRED (RFC 5531 section 9). */
		printf("NULL with credential flavour %u: %s, auth_stat %u\n", flavor,
		       rc == 0 ? "ok" : strerror(-rc), call.auth_stat);
		bad += rc != -EACCES || call.auth_stat != RPCR_ONCRPC_AUTH_BADCRED;
		memset(&call, 0, sizeof(call));
		call.proc = NFSPROC3_GETATTR;
		call.encode = enc_fh;
		call.args = &root;
		rc = rpcr_clnt_call_sync(cl, &call);
		printf("GETATTR with credential flavour %u: %s, auth_stat %u\n", flavor,
		       rc == 0 ? "ok" : strerror(-rc), call.auth_stat);
		bad += rc != -EACCES || call.auth_stat != RPCR_ONCRPC_AUTH_BADCRED;
		goto out;
	}
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

	if (garb) {
		bad += garbage(cl, &root);
		goto out;
	}
	if (nchurn != 0) {
		bad += churn(cl, &root, nchurn);
		goto out;
	}
	if (perm) {
		/* A second client on the same poller, as uid 1000 gid 1000. */
		struct rpcr_oncrpc_authsys us = {
			.stamp = 2, .machine_len = 5, .machine = "rpcr1", .uid = 1000, .gid = 1000};
		static uint8_t ucred[128];
		ssize_t ulen = rpcr_oncrpc_authsys_encode(&us, ucred, sizeof(ucred));
		struct rpcr_clnt *ucl;

		cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_SYS, (uint32_t)ulen, ucred};
		ucl = ulen > 0 ? rpcr_clnt_create(p, &cc) : NULL;
		deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
		while (ucl != NULL && !rpcr_clnt_connected(ucl) && rte_rdtsc() < deadline)
			rpcr_xprt_poll(p);
		if (ucl == NULL || !rpcr_clnt_connected(ucl)) {
			printf("second client (uid 1000): not connected\n");
			bad++;
		} else {
			bad += perm_test(cl, ucl, &root);
		}
		if (ucl != NULL)
			rpcr_clnt_destroy(ucl);
		goto out;
	}
	if (npop != 0 && dirname != NULL)
		bad += populate(cl, &root, dirname, npop);
	bad += more_procs(p, a, cl, &root, local, dirname, want_entries);
	if (allp)
		bad += all_procs(p, a, cl, &root, "rpcr-interop", addr);
out:
	if (cl != NULL)
		rdma_vers_report(p, cl, rdma_vers, "at the end");
	printf("nfs3_probe: %s\n", bad == 0 ? "every call got the expected answer" : "FAILED");

	rpcr_clnt_destroy(cl);
	for (c = 0; c < 1000; c++)
		rpcr_xprt_poll(p);
	for (c = 0; c < 100000 && rpcr_xprt_poller_destroy(p) == -EBUSY; c++)
		rpcr_xprt_poll(p);
	if (c < 100000) {
		rpcr_rdev_close(dev);
		rpcr_mem_arena_free(a);
		rte_eal_cleanup();
	}
	return bad != 0 ? 1 : 0;
}
