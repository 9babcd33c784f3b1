/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * MOUNT version 3 (RFC 1813 Appendix I) over TCP with libtirpc, in a thread of its own: MNT
 * answers the export's root handle to allowed clients (--allow) and ACCES to others, UMNT and
 * UMNTALL are accepted, EXPORT lists the export, DUMP an empty list (no mount table is kept).
 * Nothing is registered with rpcbind: clients are told the port (mountport=).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "nfsd.h"

#define MNT3_OK    0
#define MNT3_NOENT 2
#define MNT3_ACCES 13
#define MNTPATHLEN 1024

static const struct nfsd_export *mnt_x;
static uint8_t mnt_fh[NFSD_FH_LEN];
static char mnt_path[256];

/* void: nothing on the wire (libtirpc's xdr_void takes no arguments at all). */
static bool_t
xdr_nothing(XDR *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return TRUE;
}

bool
nfsd_export_allows(const struct nfsd_export *x, uint32_t addr)
{
	uint32_t i;

	if (x->nallow == 0)
		return true;
	for (i = 0; i < x->nallow; i++)
		if ((addr & x->allow[i].mask) == x->allow[i].net)
			return true;
	return false;
}

struct mnt_res {
	uint32_t status;
};

static bool_t
xdr_mnt_res(XDR *xdrs, struct mnt_res *r)
{
	char *fh = (char *)mnt_fh;
	u_int fhlen = NFSD_FH_LEN, nflav = 1;
	int flav[1] = {AUTH_SYS};
	int *fp = flav;

	if (!xdr_u_int(xdrs, &r->status))
		return FALSE;
	if (r->status != MNT3_OK)
		return TRUE;
	return xdr_bytes(xdrs, &fh, &fhlen, NFSD_FH_LEN) &&
	       xdr_array(xdrs, (char **)&fp, &nflav, 1, sizeof(int), (xdrproc_t)xdr_int);
}

/* exports: one entry, its groups the --allow list (empty: everyone). */
static bool_t
xdr_exports(XDR *xdrs, void *unused)
{
	char *path = mnt_path;
	bool_t more = TRUE, none = FALSE;
	uint32_t i;

	(void)unused;
	if (!xdr_bool(xdrs, &more) || !xdr_string(xdrs, &path, MNTPATHLEN))
		return FALSE;
	for (i = 0; i < mnt_x->nallow; i++) {
		char buf[64], *p = buf;
		struct in_addr a = {htonl(mnt_x->allow[i].net)};
		int bits = __builtin_popcount(mnt_x->allow[i].mask);

		snprintf(buf, sizeof(buf), "%s/%d", inet_ntoa(a), bits);
		if (!xdr_bool(xdrs, &more) || !xdr_string(xdrs, &p, MNTPATHLEN))
			return FALSE;
	}
	return xdr_bool(xdrs, &none) && xdr_bool(xdrs, &none);
}

static bool_t
xdr_empty_list(XDR *xdrs, void *unused)
{
	bool_t none = FALSE;

	(void)unused;
	return xdr_bool(xdrs, &none);
}

static uint32_t
caller_addr(SVCXPRT *xprt, bool *ok)
{
	struct netbuf *nb = svc_getrpccaller(xprt);
	const struct sockaddr *sa = nb != NULL ? nb->buf : NULL;

	*ok = false;
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET) {
		*ok = true;
		return ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			uint32_t a;

			memcpy(&a, &s6->sin6_addr.s6_addr[12], 4);
			*ok = true;
			return ntohl(a);
		}
	}
	return 0;
}

static void
mount_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	char *path = NULL;
	struct mnt_res res;
	uint32_t addr;
	bool v4;

	switch (rq->rq_proc) {
	case 0: /* NULL */
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	case 1: /* MNT */
		if (!svc_getargs(xprt, (xdrproc_t)xdr_wrapstring, (char *)&path)) {
			svcerr_decode(xprt);
			return;
		}
		addr = caller_addr(xprt, &v4);
		if (strcmp(path, mnt_x->path) != 0)
			res.status = MNT3_NOENT;
		else if (mnt_x->nallow != 0 && (!v4 || !nfsd_export_allows(mnt_x, addr)))
			res.status = MNT3_ACCES;
		else
			res.status = MNT3_OK;
		printf("rpcr-nfsd: MNT %s from %u.%u.%u.%u: %s\n", path, addr >> 24,
		       (addr >> 16) & 0xff, (addr >> 8) & 0xff, addr & 0xff,
		       res.status == MNT3_OK      ? "ok"
		       : res.status == MNT3_NOENT ? "no such export"
						  : "refused");
		fflush(stdout);
		svc_freeargs(xprt, (xdrproc_t)xdr_wrapstring, (char *)&path);
		svc_sendreply(xprt, (xdrproc_t)xdr_mnt_res, (char *)&res);
		return;
	case 2: /* DUMP */
		svc_sendreply(xprt, (xdrproc_t)xdr_empty_list, NULL);
		return;
	case 3: /* UMNT */
		if (!svc_getargs(xprt, (xdrproc_t)xdr_wrapstring, (char *)&path)) {
			svcerr_decode(xprt);
			return;
		}
		svc_freeargs(xprt, (xdrproc_t)xdr_wrapstring, (char *)&path);
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	case 4: /* UMNTALL */
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	case 5: /* EXPORT */
		svc_sendreply(xprt, (xdrproc_t)xdr_exports, NULL);
		return;
	default:
		svcerr_noproc(xprt);
		return;
	}
}

static void *
mount_thread(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

int
nfsd_mount_start(const struct nfsd_export *x, uint16_t port)
{
	struct sockaddr_in sin;
	pthread_t t;
	SVCXPRT *xprt;
	int fd, one = 1;

	mnt_x = x;
	memcpy(mnt_fh, x->root_fh, sizeof(mnt_fh));
	snprintf(mnt_path, sizeof(mnt_path), "%s", x->path);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(fd, 16) != 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	xprt = svctcp_create(fd, 0, 0);
	if (xprt == NULL) {
		close(fd);
		return -ENOMEM;
	}
	/* Protocol 0: not registered with rpcbind. */
	if (!svc_register(xprt, NFSD_MNT_PROG, NFSD_MNT_V3, mount_dispatch, 0))
		return -EINVAL;
	if (pthread_create(&t, NULL, mount_thread, NULL) != 0)
		return -EAGAIN;
	pthread_detach(t);
	return 0;
}
