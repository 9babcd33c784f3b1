/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr's client against the Linux kernel's NFS server over RDMA (knfsd, svcrdma): the root file
 * handle from MOUNT v3 over TCP (libtirpc), then NFSv3 calls over RPC-over-RDMA with rpcr. First
 * increment of the interop tool: NULL and GETATTR of the export's root; more procedures follow.
 *
 * usage: nfs3_probe --dev DEVARGS --server IP [--port 20049] [--export /export] [--no-pdata]
 * Exit status 0 when every call got the expected answer. One line a call on stdout.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <rpcr_xprt.h>

#define NFS_PROG       100003u
#define NFS_V3         3u
#define MOUNT_PROG     100005u
#define MOUNT_V3       3u
#define MOUNTPROC3_MNT 1u
#define NFS3_FHSIZE    64u
#define NF3DIR         2u

enum { NFSPROC3_NULL = 0, NFSPROC3_GETATTR = 1 };

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
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"server", required_argument, NULL, 's'},
					     {"port", required_argument, NULL, 'p'},
					     {"export", required_argument, NULL, 'e'},
					     {NULL, 0, NULL, 0}};
	const char *devargs = NULL, *server = NULL, *export = "/export";
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
	uint64_t deadline;
	int c, rc, bad = 0;
	ssize_t clen;

	while ((c = getopt_long(argc, argv, "d:s:p:e:", opts, NULL)) != -1) {
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
	cc.timeout_us = 5000000;
	cc.cred = (struct rpcr_oncrpc_auth){RPCR_ONCRPC_AUTH_SYS, (uint32_t)clen, cred};
	cl = clen > 0 ? rpcr_clnt_create(p, &cc) : NULL;
	deadline = rte_rdtsc() + 10 * rte_get_tsc_hz();
	while (cl != NULL && !rpcr_clnt_connected(cl) && rte_rdtsc() < deadline)
		rpcr_xprt_poll(p);
	if (cl == NULL || !rpcr_clnt_connected(cl)) {
		fprintf(stderr, "nfs3_probe: not connected to %s\n", addr);
		return 1;
	}
	rpcr_clnt_info_get(cl, &info);
	printf("connected to %s: inline %u/%u, remote invalidation %s, 2005 draft %s, credits %u\n",
	       addr, info.inline_send, info.inline_recv, info.remote_inv ? "on" : "off",
	       info.draft ? "on" : "off", info.credits);

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

	rpcr_clnt_destroy(cl);
	for (c = 0; c < 1000; c++)
		rpcr_xprt_poll(p);
	return bad != 0 ? 1 : 0;
}
