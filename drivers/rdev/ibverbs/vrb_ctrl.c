/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * ibverbs control path: any rdma-core device through libibverbs and librdmacm.
 *
 * The device's verbs context is the one librdmacm opened (rdma_get_devices()), so that cm_ids
 * and our protection domains, CQs and QPs share it. A QP is created unconnected
 * (rpcr_rdev_qp_create()) before any cm_id exists, so the driver never gives rdma_cm the QP
 * (id->qp stays NULL) and moves it through INIT, RTR and RTS itself with the attributes
 * rdma_init_qp_attr() computes: the active side sees CONNECT_RESPONSE and answers with
 * rdma_establish(), the passive side is in RTS before its REP leaves. That also lets the driver
 * choose the retry counts (rnr_retry 0: a Send that finds no receive fails at once, as
 * rpcr_rdev.h requires).
 *
 * Every libibverbs and librdmacm call goes through the glue table (vrb_glue.h), which a dlopen
 * build (-Dibverbs_link=dlopen) fills at the first probe.
 *
 * One control thread per device waits on the rdma_cm event channel, the context's async event
 * fd and a wake eventfd (the fast path's requests to disconnect a failed QP), and turns them into
 * rpcr_rdev events. The thread acknowledges each cm event before it takes the device lock:
 * rdma_destroy_id(), called under that lock by application threads, waits for every event of its
 * id to be acknowledged.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_string_fns.h>
#include <rte_tailq.h>

#include "vrb_internal.h"

const char *const vrb_args[] = {"dev", "ip", "port", "mw", NULL};

/* rxe's vendor id (drivers/infiniband/sw/rxe/rxe_param.h). */
#define RXE_VENDOR_ID 0xffffffu
/* The IB CM's reject reason "consumer defined" (rdma_reject()). */
#define IB_CM_REJ_CONSUMER_DEFINED 28

/* ---- helpers ---- */

/*
 * Parse "IP:PORT", "[IPv6]:PORT", or, with @need_port false, a bare address. An empty host or
 * "*" is the wildcard.
 */
static int
parse_addr(const char *s, struct sockaddr_storage *ss, bool need_port)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
	char host[INET6_ADDRSTRLEN + 8];
	const char *port = NULL, *end;
	struct addrinfo *ai;
	size_t hl;

	if (s == NULL)
		return -EINVAL;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (end == NULL || (end[1] != '\0' && end[1] != ':'))
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		s++;
		port = end[1] == ':' ? end + 2 : NULL;
	} else {
		end = strrchr(s, ':');
		if (end != NULL && strchr(s, ':') == end) {
			hl = (size_t)(end - s);
			port = end + 1;
		} else {
			hl = strlen(s); /* an IPv6 address without brackets, or IPv4 alone */
		}
	}
	if (hl >= sizeof(host) || (need_port && (port == NULL || *port == '\0')))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (getaddrinfo(hl == 0 || strcmp(host, "*") == 0 ? NULL : host, port, &hints, &ai) != 0)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static bool
same_device(const struct vrb_dev *vd, const struct ibv_context *ctx)
{
	return ctx != NULL &&
	       (ctx == vd->ctx || strcmp(vrb_glue->get_device_name(ctx->device), vd->ibname) == 0);
}

static void
push(struct vrb_dev *vd, enum rpcr_rdev_event_type type, struct vrb_qp *qp, int status,
     const uint8_t *pdata, uint8_t len)
{
	struct rpcr_rdev_event ev = {.type = type, .qp = qp != NULL ? &qp->pub : NULL};

	ev.status = status;
	ev.pdata_len = len;
	if (len != 0)
		memcpy(ev.pdata, pdata, len);
	if (rpcr_rdev_event_push(vd->dev, &ev) != 0)
		VRB_LOG(ERR, "%s: event lost (%s)", vd->ibname, rpcr_rdev_event_str(type));
}

/* What a cm event carried, copied before the event is acknowledged. */
struct cm_ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	uint8_t pdata[256];
	uint8_t pdata_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
};

/* The private data of a cm event, as the transport delivered it (see vrb_internal.h). */
static uint8_t
pdata_in(const struct cm_ev *e, uint8_t *out)
{
	uint8_t n = RTE_MIN(e->pdata_len, (uint8_t)RPCR_RDEV_PDATA_MAX);

	memcpy(out, e->pdata, n);
	return n;
}

/* Move @qp to @st with the attributes rdma_cm computed for @id, and the driver's choices. */
static int
qp_to(struct vrb_qp *qp, struct rdma_cm_id *id, enum ibv_qp_state st)
{
	const struct ibv_device_attr *da = &qp->vd->attr;
	struct ibv_qp_attr a;
	int mask = 0, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (vrb_glue->init_qp_attr(id, &a, &mask) != 0)
		return -errno;
	switch (st) {
	case IBV_QPS_INIT:
		a.qp_access_flags =
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		mask |= IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		if (a.max_dest_rd_atomic > da->max_qp_rd_atom)
			a.max_dest_rd_atomic = (uint8_t)da->max_qp_rd_atom;
		break;
	case IBV_QPS_RTS:
		if (a.max_rd_atomic > da->max_qp_init_rd_atom)
			a.max_rd_atomic = (uint8_t)da->max_qp_init_rd_atom;
		/* RC semantics of rpcr_rdev.h: no receive posted fails the Send (rnr_retry 0);
		 * transport retries as usual. */
		a.rnr_retry = 0;
		a.retry_cnt = 7;
		mask |= IBV_QP_RNR_RETRY | IBV_QP_RETRY_CNT;
		break;
	default:
		break;
	}
	rc = vrb_glue->modify_qp(qp->qp, &a, mask);
	return -rc;
}

static void
qp_set_error(struct vrb_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (qp->vd->dp->qp_error != NULL)
		qp->vd->dp->qp_error(qp);
	__atomic_store_n(&qp->in_error, true, __ATOMIC_RELAXED);
	(void)vrb_glue->modify_qp(qp->qp, &a, IBV_QP_STATE);
}

static void
wake(struct vrb_dev *vd)
{
	uint64_t one = 1;

	if (write(vd->wake_fd, &one, sizeof(one)) != sizeof(one))
		VRB_LOG(WARNING, "%s: wake-up lost", vd->ibname);
}

void
vrb_qp_fail(struct vrb_qp *qp)
{
	__atomic_store_n(&qp->need_disc, true, __ATOMIC_RELEASE);
	wake(qp->vd);
}

/* ---- device ---- */

struct probe_args {
	char dev[IBV_SYSFS_NAME_MAX];
	char ip[INET6_ADDRSTRLEN + 8];
	unsigned long port;
	int mw; /* mw=: -1 off, 0 auto, 1 on */
};

static int
kv_get(const char *key, const char *value, void *opaque)
{
	struct probe_args *a = opaque;

	if (strcmp(key, "dev") == 0)
		return rte_strscpy(a->dev, value, sizeof(a->dev)) < 0 ? -1 : 0;
	if (strcmp(key, "ip") == 0)
		return rte_strscpy(a->ip, value, sizeof(a->ip)) < 0 ? -1 : 0;
	if (strcmp(key, "mw") == 0) {
		a->mw = strcmp(value, "on") == 0 ? 1 : strcmp(value, "off") == 0 ? -1 : 0;
		return strcmp(value, "on") == 0 || strcmp(value, "off") == 0 ||
				       strcmp(value, "auto") == 0
			       ? 0
			       : -1;
	}
	if (strcmp(key, "port") == 0) {
		char *end;

		a->port = strtoul(value, &end, 0);
		return *end != '\0' || a->port == 0 || a->port > 255 ? -1 : 0;
	}
	return -1;
}

/* The device that owns @ip, found as rdma_cm finds it: by binding to the address. */
static int
device_of_ip(const struct sockaddr_storage *ss, char *name, size_t len)
{
	struct rdma_cm_id *id;
	int rc = 0;

	if (vrb_glue->create_id(NULL, &id, NULL, RDMA_PS_TCP) != 0)
		return -errno;
	if (vrb_glue->bind_addr(id, (struct sockaddr *)(uintptr_t)ss) != 0)
		rc = -errno;
	else if (id->verbs == NULL)
		rc = -ENODEV;
	else
		rte_strscpy(name, vrb_glue->get_device_name(id->verbs->device), len);
	vrb_glue->destroy_id(id);
	return rc;
}

/*
 * Our own IP address, from the port's GID table (RoCE: IPv4-mapped GIDs, else a global IPv6
 * one): connections go out from it, so that rdma_cm resolves them onto this device.
 */
static void
find_src(struct vrb_dev *vd)
{
	struct ibv_gid_entry ent[256];
	ssize_t n, i;
	int best = -1;

	n = vrb_glue->query_gid_table(vd->ctx, ent, RTE_DIM(ent), 0, sizeof(ent[0]));
	for (i = 0; i < n; i++) {
		const uint8_t *g = ent[i].gid.raw;
		static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		if (ent[i].port_num != vd->port)
			continue;
		if (memcmp(g, v4, sizeof(v4)) == 0) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&vd->src;

			memset(&vd->src, 0, sizeof(vd->src));
			sin->sin_family = AF_INET;
			memcpy(&sin->sin_addr, g + 12, 4);
			vd->have_src = true;
			return;
		}
		if (best < 0 && ent[i].gid_type != IBV_GID_TYPE_IB &&
		    !(g[0] == 0xfe && g[1] == 0x80))
			best = (int)i;
	}
	if (best >= 0) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&vd->src;

		memset(&vd->src, 0, sizeof(vd->src));
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, ent[best].gid.raw, 16);
		vd->have_src = true;
	}
}

/* The largest inline size the device grants, found with a throw-away QP. */
static uint32_t
find_max_inline(struct vrb_dev *vd)
{
	static const uint32_t tries[] = {1024, 512, 256, 128, 64};
	struct ibv_pd *pd = vrb_glue->alloc_pd(vd->ctx);
	struct ibv_cq *cq = pd != NULL ? vrb_glue->create_cq(vd->ctx, 4, NULL, NULL, 0) : NULL;
	uint32_t best = 0;
	size_t i;

	for (i = 0; cq != NULL && i < RTE_DIM(tries); i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = {.max_send_wr = 1,
				.max_recv_wr = 1,
				.max_send_sge = 1,
				.max_recv_sge = 1,
				.max_inline_data = tries[i]},
			.qp_type = IBV_QPT_RC,
		};
		struct ibv_qp *qp = vrb_glue->create_qp(pd, &ia);

		if (qp != NULL) {
			best = ia.cap.max_inline_data;
			vrb_glue->destroy_qp(qp);
			break;
		}
	}
	if (cq != NULL)
		vrb_glue->destroy_cq(cq);
	if (pd != NULL)
		vrb_glue->dealloc_pd(pd);
	return best;
}

static void *vrb_ctrl_thread(void *arg);

int
vrb_probe_dp(struct rpcr_rdev *dev, struct rte_kvargs *args, const struct vrb_dp *dp)
{
	struct probe_args pa = {.port = 1};
	struct vrb_dev *vd;
	int n = 0, i, rc, fl;

	if (args != NULL && rte_kvargs_process(args, NULL, kv_get, &pa) != 0)
		return -EINVAL;
	/* A dlopen build loads rdma-core here, the first time; without it there are no devices
	 * (said once, by vrb_glue_init()). */
	rc = vrb_glue_init();
	if (rc != 0)
		return rc;
	vd = calloc(1, sizeof(*vd));
	if (vd == NULL)
		return -ENOMEM;
	vd->dev = dev;
	vd->dp = dp;
	vd->fp = dp->fp;
	vd->port = (uint8_t)pa.port;
	vd->mw_arg = pa.mw;
	vd->wake_fd = -1;
	pthread_mutex_init(&vd->lock, NULL);
	TAILQ_INIT(&vd->conns);
	TAILQ_INIT(&vd->listeners);

	if (pa.ip[0] != '\0') {
		char name[IBV_SYSFS_NAME_MAX];

		rc = parse_addr(pa.ip, &vd->src, false);
		if (rc == 0)
			rc = device_of_ip(&vd->src, name, sizeof(name));
		if (rc == 0 && pa.dev[0] != '\0' && strcmp(name, pa.dev) != 0)
			rc = -EINVAL;
		if (rc != 0) {
			VRB_LOG(ERR, "no RDMA device has address %s", pa.ip);
			goto out_free;
		}
		rte_strscpy(pa.dev, name, sizeof(pa.dev));
		vd->have_src = true;
	}
	/* No devices: NULL (rdma-core may say ENOSYS or ENODEV). */
	vd->all = vrb_glue->get_devices(&n);
	for (i = 0; vd->all != NULL && i < n; i++) {
		if (pa.dev[0] == '\0' ||
		    strcmp(vrb_glue->get_device_name(vd->all[i]->device), pa.dev) == 0) {
			vd->ctx = vd->all[i];
			break;
		}
	}
	if (vd->ctx == NULL) {
		VRB_LOG(ERR, "no RDMA device %s", pa.dev[0] != '\0' ? pa.dev : "at all");
		rc = -ENODEV;
		goto out_free;
	}
	rte_strscpy(vd->ibname, vrb_glue->get_device_name(vd->ctx->device), sizeof(vd->ibname));
	if (vrb_glue->query_device(vd->ctx, &vd->attr) != 0) {
		rc = -errno;
		goto out_free;
	}
	vd->transport = vd->ctx->device->transport_type;
	vd->rxe = vd->attr.vendor_id == RXE_VENDOR_ID;
	if (!vd->have_src)
		find_src(vd);
	vd->max_inline = find_max_inline(vd);
	if (dp->dev_check != NULL) {
		rc = dp->dev_check(vd);
		if (rc != 0)
			goto out_free;
	}

	vd->ch = vrb_glue->create_event_channel();
	if (vd->ch == NULL) {
		rc = errno != 0 ? -errno : -ENODEV;
		goto out_free;
	}
	fl = fcntl(vd->ch->fd, F_GETFL);
	fcntl(vd->ch->fd, F_SETFL, fl | O_NONBLOCK);
	fl = fcntl(vd->ctx->async_fd, F_GETFL);
	fcntl(vd->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	vd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vd->wake_fd < 0) {
		rc = -errno;
		goto out_free;
	}
	dev->priv = vd;
	rc = pthread_create(&vd->thread, NULL, vrb_ctrl_thread, vd);
	if (rc != 0) {
		rc = -rc;
		goto out_free;
	}
	vd->thread_running = true;
	rpcr_rdev_set_fp_ops(dev, vd->fp);
	VRB_LOG(DEBUG, "%s: port %u, %s, inline %u, data path %s", vd->ibname, vd->port,
		vd->rxe ? "rxe" : "hardware", vd->max_inline, dp->name);
	return 0;

out_free:
	dev->priv = NULL;
	if (dp->dev_fini != NULL)
		dp->dev_fini(vd);
	if (vd->wake_fd >= 0)
		close(vd->wake_fd);
	if (vd->ch != NULL)
		vrb_glue->destroy_event_channel(vd->ch);
	if (vd->all != NULL)
		vrb_glue->free_devices(vd->all);
	pthread_mutex_destroy(&vd->lock);
	free(vd);
	return rc;
}

static int
vrb_remove(struct rpcr_rdev *dev)
{
	struct vrb_dev *vd = vrb_dev(dev);

	if (vd->thread_running) {
		vd->stop = true;
		wake(vd);
		pthread_join(vd->thread, NULL);
	}
	if (vd->dp->dev_fini != NULL)
		vd->dp->dev_fini(vd);
	close(vd->wake_fd);
	vrb_glue->destroy_event_channel(vd->ch);
	vrb_glue->free_devices(vd->all);
	pthread_mutex_destroy(&vd->lock);
	free(vd);
	dev->priv = NULL;
	return 0;
}

/* Type 2B windows (bound to one QP), bound by work request, where the device has them; not on
 * rxe unless mw=on: Debian 12's rxe (6.1) leaks a QP destroyed with a window bound to it, and
 * panicked freeing a bound window (doc/rdev.md). */
bool
vrb_has_mw(const struct vrb_dev *vd)
{
	return (vd->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	       (vd->attr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) &&
	       (vd->mw_arg > 0 || (vd->mw_arg == 0 && !vd->rxe)) && vd->dp->mw;
}

static int
vrb_info_get(struct rpcr_rdev *dev, struct rpcr_rdev_info *info)
{
	struct vrb_dev *vd = vrb_dev(dev);
	const struct ibv_device_attr *a = &vd->attr;
	struct ibv_port_attr pa;

	/* Ordinary registrations cannot be invalidated by a peer (only type-2 memory windows and
	 * fast-registered MRs can), so RPCR_RDEV_CAP_REMOTE_INV is not claimed; see doc/rdev.md.
	 * Sending one (IBV_WR_SEND_WITH_INV, toward a peer that asked for it) needs the memory
	 * management extensions. */
	/* iWARP's MPA frames carry the private data's length; the IB CM's fixed fields do not. */
	info->caps = vd->transport == IBV_TRANSPORT_IWARP ? RPCR_RDEV_CAP_PDATA_EXACT : 0;
	if (a->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS)
		info->caps |= RPCR_RDEV_CAP_SEND_INV;
	if (vrb_has_mw(vd))
		info->caps |= RPCR_RDEV_CAP_MW;
	if (vd->dp->cq_events)
		info->caps |= RPCR_RDEV_CAP_CQ_EVENT;
	if (vd->dp->srq && a->max_srq > 0 && a->max_srq_wr > 0) {
		info->caps |= RPCR_RDEV_CAP_SRQ;
		info->max_srq_wr = (uint32_t)a->max_srq_wr;
	}
	info->max_qp = (uint32_t)a->max_qp;
	info->max_cq = (uint32_t)a->max_cq;
	info->max_mr = (uint32_t)a->max_mr;
	info->max_mr_size = a->max_mr_size;
	info->max_qp_wr = (uint32_t)a->max_qp_wr;
	info->max_cqe = (uint32_t)a->max_cqe;
	info->max_sge =
		(uint32_t)RTE_MIN(a->max_sge, a->max_sge_rd > 0 ? a->max_sge_rd : a->max_sge);
	info->max_inline = vd->max_inline;
	info->max_pdata = RPCR_RDEV_PDATA_MAX;
	/* The exported ibv_query_port() fills the older struct, a prefix of ibv_port_attr that has
	 * max_msg_sz (see vrb_glue.h). */
	memset(&pa, 0, sizeof(pa));
	info->max_msg_size =
		vrb_glue->query_port(vd->ctx, vd->port, (struct _compat_ibv_port_attr *)&pa) == 0
			? pa.max_msg_sz
			: 1u << 30;
	return 0;
}

/* ---- protection domains, registrations ---- */

static struct rpcr_rdev_pd *
vrb_pd_alloc(struct rpcr_rdev *dev)
{
	struct vrb_dev *vd = vrb_dev(dev);
	struct vrb_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->pd = vrb_glue->alloc_pd(vd->ctx);
	if (pd->pd == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		free(pd);
		return NULL;
	}
	pd->pub.dev = dev;
	pd->pub.id = __atomic_fetch_add(&vd->next_pd, 1, __ATOMIC_RELAXED);
	return &pd->pub;
}

static int
vrb_pd_free(struct rpcr_rdev_pd *ppd)
{
	struct vrb_pd *pd = (struct vrb_pd *)ppd;
	int rc = vrb_glue->dealloc_pd(pd->pd);

	if (rc != 0)
		return -rc;
	free(pd);
	return 0;
}

static int
access_flags(uint32_t access)
{
	/* RPCR_RDEV_ACCESS_REMOTE_INV has no verbs flag: see vrb_info_get(). */
	return ((access & RPCR_RDEV_ACCESS_LOCAL_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       ((access & RPCR_RDEV_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       ((access & RPCR_RDEV_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
	       ((access & RPCR_RDEV_ACCESS_MW_BIND) ? IBV_ACCESS_MW_BIND : 0);
}

static struct rpcr_rdev_mr *
vrb_mr_reg(struct rpcr_rdev_pd *ppd, void *addr, size_t len, uint32_t access)
{
	struct vrb_pd *pd = (struct vrb_pd *)ppd;
	struct vrb_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	mr->mr = vrb_glue->reg_mr(pd->pd, addr, len, access_flags(access));
	if (mr->mr == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		free(mr);
		return NULL;
	}
	mr->pub.pd = ppd;
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->pub.lkey = mr->mr->lkey;
	mr->pub.rkey = mr->mr->rkey;
	return &mr->pub;
}

static int
vrb_mr_dereg(struct rpcr_rdev_mr *pmr)
{
	struct vrb_mr *mr = (struct vrb_mr *)pmr;

	if (mr->mr != NULL) {
		int rc = vrb_glue->dereg_mr(mr->mr);

		if (rc != 0)
			return -rc;
	}
	free(mr);
	return 0;
}

/*
 * A local invalidation is a deregistration of the verbs MR (keys die at once, as the kernel
 * completes the deregistration only when the device no longer uses them); the rpcr registration
 * stays until rekeyed or deregistered. Control path: it costs a system call.
 */
static int
vrb_mr_invalidate(struct rpcr_rdev_mr *pmr)
{
	struct vrb_mr *mr = (struct vrb_mr *)pmr;
	int rc;

	if (mr->mr == NULL)
		return 0;
	rc = vrb_glue->dereg_mr(mr->mr);
	if (rc != 0)
		return -rc;
	mr->mr = NULL;
	return 0;
}

/* New keys: register again before the old registration goes, so the keys cannot repeat. */
static int
vrb_mr_rekey(struct rpcr_rdev_mr *pmr)
{
	struct vrb_mr *mr = (struct vrb_mr *)pmr;
	struct vrb_pd *pd = (struct vrb_pd *)pmr->pd;
	struct ibv_mr *nmr;

	nmr = vrb_glue->reg_mr(pd->pd, pmr->addr, pmr->len, access_flags(pmr->access));
	if (nmr == NULL)
		return errno != 0 ? -errno : -ENOMEM;
	if (mr->mr != NULL)
		(void)vrb_glue->dereg_mr(mr->mr);
	mr->mr = nmr;
	pmr->lkey = nmr->lkey;
	pmr->rkey = nmr->rkey;
	return 0;
}

/* ---- memory windows (bound and invalidated by work requests: vrb_rxtx.c) ---- */

static struct rpcr_rdev_mw *
vrb_mw_alloc(struct rpcr_rdev_pd *ppd)
{
	struct vrb_pd *pd = (struct vrb_pd *)ppd;
	struct vrb_mw *mw;

	if (!vrb_has_mw(vrb_dev(ppd->dev))) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	errno = 0;
	mw->mw = ibv_alloc_mw(pd->pd, IBV_MW_TYPE_2); /* (inline: the provider's op) */
	if (mw->mw == NULL) {
		rte_errno = errno == EOPNOTSUPP ? ENOTSUP : errno != 0 ? errno : ENOMEM;
		free(mw);
		return NULL;
	}
	mw->pub.pd = ppd;
	mw->pub.rkey = mw->mw->rkey;
	mw->pub.next_rkey = ibv_inc_rkey(mw->mw->rkey);
	return &mw->pub;
}

static int
vrb_mw_free(struct rpcr_rdev_mw *pmw)
{
	struct vrb_mw *mw = (struct vrb_mw *)pmw;
	int rc = ibv_dealloc_mw(mw->mw);

	if (rc != 0)
		return -rc;
	free(mw);
	return 0;
}

/* ---- completion queues, queue pairs ---- */

static struct rpcr_rdev_cq *
vrb_cq_create(struct rpcr_rdev *dev, uint32_t depth)
{
	struct vrb_dev *vd = vrb_dev(dev);
	struct vrb_cq *cq;

	if (depth > (uint32_t)vd->attr.max_cqe) {
		rte_errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, vd->dp->cq_size);
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->vd = vd;
	/* A completion channel per CQ where the data path can arm through verbs: its fd wakes the
	 * CQ's poller (rpcr_rdev_cq_arm()). */
	if (vd->dp->cq_events) {
		int fl;

		cq->ch = vrb_glue->create_comp_channel(vd->ctx);
		fl = cq->ch != NULL ? fcntl(cq->ch->fd, F_GETFL) : -1;
		if (fl < 0 || fcntl(cq->ch->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
			rte_errno = errno != 0 ? errno : ENOMEM;
			if (cq->ch != NULL)
				vrb_glue->destroy_comp_channel(cq->ch);
			free(cq);
			return NULL;
		}
	}
	cq->cq = vrb_glue->create_cq(vd->ctx, (int)depth, NULL, cq->ch, 0);
	if (cq->cq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		if (cq->ch != NULL)
			vrb_glue->destroy_comp_channel(cq->ch);
		free(cq);
		return NULL;
	}
	if (vd->dp->cq_init != NULL) {
		int rc = vd->dp->cq_init(cq);

		if (rc != 0) {
			if (vd->dp->cq_fini != NULL)
				vd->dp->cq_fini(cq);
			vrb_glue->destroy_cq(cq->cq);
			if (cq->ch != NULL)
				vrb_glue->destroy_comp_channel(cq->ch);
			free(cq);
			rte_errno = -rc;
			return NULL;
		}
	}
	rte_spinlock_init(&cq->grave_lock);
	cq->pub.dev_id = dev->id;
	cq->pub.depth = (uint32_t)cq->cq->cqe;
	return &cq->pub;
}

static int
vrb_cq_destroy(struct rpcr_rdev_cq *pcq)
{
	struct vrb_cq *cq = (struct vrb_cq *)pcq;
	int rc;

	if (__atomic_load_n(&cq->nqps, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	vrb_cq_bury(cq); /* (nothing will be polled from it again) */
	if (cq->vd->dp->cq_fini != NULL)
		cq->vd->dp->cq_fini(cq);
	rc = vrb_glue->destroy_cq(cq->cq);
	if (rc != 0)
		return -rc;
	if (cq->ch != NULL)
		vrb_glue->destroy_comp_channel(cq->ch);
	free(cq);
	return 0;
}

/* Completion events through the CQ's completion channel. */
static int
vrb_cq_event_fd(struct rpcr_rdev_cq *pcq)
{
	struct vrb_cq *cq = (struct vrb_cq *)pcq;

	return cq->ch != NULL ? cq->ch->fd : -ENOTSUP;
}

static int
vrb_cq_arm(struct rpcr_rdev_cq *pcq)
{
	struct vrb_cq *cq = (struct vrb_cq *)pcq;

	if (cq->ch == NULL)
		return -ENOTSUP;
	/* (The next completion raises an event; one already there is found by the poll that the
	 * caller makes after this.) */
	return -ibv_req_notify_cq(cq->cq, 0);
}

static void
vrb_cq_disarm(struct rpcr_rdev_cq *pcq)
{
	struct vrb_cq *cq = (struct vrb_cq *)pcq;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	unsigned int n = 0;

	if (cq->ch == NULL)
		return;
	while (vrb_glue->get_cq_event(cq->ch, &ev_cq, &ev_ctx) == 0)
		n++;
	if (n != 0)
		vrb_glue->ack_cq_events(cq->cq, n);
}

/* ---- shared receive queues (the fast path: vrb_rxtx.c) ---- */

static void
srq_free(struct vrb_srq *srq)
{
	if (srq->vd->dp->srq_fini != NULL)
		srq->vd->dp->srq_fini(srq);
	free(srq->qps);
	free(srq);
}

static struct rpcr_rdev_srq *
vrb_srq_create(struct rpcr_rdev_pd *ppd, const struct rpcr_rdev_srq_attr *attr)
{
	struct vrb_dev *vd = vrb_dev(ppd->dev);
	const struct ibv_device_attr *da = &vd->attr;
	struct ibv_srq_init_attr ia;
	struct vrb_srq *srq;
	int rc;

	if (!vd->dp->srq || da->max_srq == 0) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	if (attr->max_wr > (uint32_t)da->max_srq_wr || attr->max_sge > (uint32_t)da->max_srq_sge) {
		rte_errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, vd->dp->srq_size);
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	srq->vd = vd;
	srq->qps_mask = 15;
	srq->qps = calloc(srq->qps_mask + 1, sizeof(*srq->qps));
	if (srq->qps == NULL) {
		free(srq);
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.srq_context = srq;
	ia.attr.max_wr = attr->max_wr;
	ia.attr.max_sge = attr->max_sge;
	ia.attr.srq_limit = attr->limit;
	srq->srq = vrb_glue->create_srq(((struct vrb_pd *)ppd)->pd, &ia);
	if (srq->srq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		free(srq->qps);
		free(srq);
		return NULL;
	}
	srq->pub.dev_id = ppd->dev->id;
	srq->pub.pd = ppd;
	/* Enforced as asked (the device may hold more), as a QP's queues. */
	srq->pub.max_wr = attr->max_wr;
	srq->pub.max_sge = attr->max_sge;
	rc = vd->dp->srq_init != NULL ? vd->dp->srq_init(srq) : 0;
	if (rc != 0) {
		if (vd->dp->srq_release != NULL)
			vd->dp->srq_release(srq);
		vrb_glue->destroy_srq(srq->srq);
		srq_free(srq);
		rte_errno = -rc;
		return NULL;
	}
	return &srq->pub;
}

static int
vrb_srq_destroy(struct rpcr_rdev_srq *psrq)
{
	struct vrb_srq *srq = (struct vrb_srq *)psrq;
	int rc;

	if (srq->nqps != 0)
		return -EBUSY;
	if (srq->vd->dp->srq_release != NULL)
		srq->vd->dp->srq_release(srq);
	/* (Waits until its async events were acknowledged: drain_async() queues them first.) */
	rc = vrb_glue->destroy_srq(srq->srq);
	if (rc != 0)
		return -rc;
	srq_free(srq);
	return 0;
}

static int
vrb_srq_arm(struct rpcr_rdev_srq *psrq, uint32_t limit)
{
	struct vrb_srq *srq = (struct vrb_srq *)psrq;
	struct ibv_srq_attr a = {.srq_limit = limit};

	return -vrb_glue->modify_srq(srq->srq, &a, IBV_SRQ_LIMIT);
}

/* Enter @qp in its SRQ's table (growing it to keep it at most half full). */
static int
srq_qp_add(struct vrb_srq *srq, struct vrb_qp *qp)
{
	uint32_t i;

	if (2 * (srq->nqps + 1) > srq->qps_mask + 1) {
		uint32_t n = 2 * (srq->qps_mask + 1), k;
		struct vrb_qp **t = calloc(n, sizeof(*t));

		if (t == NULL)
			return -ENOMEM;
		for (k = 0; k <= srq->qps_mask; k++) {
			struct vrb_qp *q = srq->qps[k];

			if (q == NULL)
				continue;
			for (i = (q->pub.qp_num * 0x9e3779b1u) & (n - 1); t[i] != NULL;
			     i = (i + 1) & (n - 1))
				;
			t[i] = q;
		}
		free(srq->qps);
		srq->qps = t;
		srq->qps_mask = n - 1;
	}
	for (i = (qp->pub.qp_num * 0x9e3779b1u) & srq->qps_mask; srq->qps[i] != NULL;
	     i = (i + 1) & srq->qps_mask)
		;
	srq->qps[i] = qp;
	srq->nqps++;
	return 0;
}

/* Take @qp out of its SRQ's table (linear probing: the entries after it move back). */
static void
srq_qp_del(struct vrb_srq *srq, const struct vrb_qp *qp)
{
	uint32_t i, j, h;

	for (i = (qp->pub.qp_num * 0x9e3779b1u) & srq->qps_mask; srq->qps[i] != qp;
	     i = (i + 1) & srq->qps_mask)
		if (srq->qps[i] == NULL)
			return;
	srq->qps[i] = NULL;
	for (j = (i + 1) & srq->qps_mask; srq->qps[j] != NULL; j = (j + 1) & srq->qps_mask) {
		h = (srq->qps[j]->pub.qp_num * 0x9e3779b1u) & srq->qps_mask;
		/* Entry j moves into the hole if its home is not between the hole and j. */
		if (((j - h) & srq->qps_mask) >= ((j - i) & srq->qps_mask)) {
			srq->qps[i] = srq->qps[j];
			srq->qps[j] = NULL;
			i = j;
		}
	}
	srq->nqps--;
}

void
vrb_qp_free(struct vrb_qp *qp)
{
	if (qp->vd->dp->qp_fini != NULL)
		qp->vd->dp->qp_fini(qp);
	free(qp);
}

static struct rpcr_rdev_qp *
vrb_qp_create(struct rpcr_rdev_pd *ppd, const struct rpcr_rdev_qp_attr *attr)
{
	struct vrb_dev *vd = vrb_dev(ppd->dev);
	const struct ibv_device_attr *da = &vd->attr;
	struct vrb_pd *pd = (struct vrb_pd *)ppd;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr ma;
	struct vrb_qp *qp;
	int rc;

	if ((attr->srq != NULL && !vd->dp->srq) || attr->max_send_wr > (uint32_t)da->max_qp_wr ||
	    attr->max_recv_wr > (uint32_t)da->max_qp_wr ||
	    attr->max_send_sge > (uint32_t)da->max_sge ||
	    attr->max_recv_sge > (uint32_t)da->max_sge || attr->max_inline > vd->max_inline) {
		rte_errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, vd->dp->qp_size);
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ((struct vrb_cq *)attr->send_cq)->cq;
	ia.recv_cq = ((struct vrb_cq *)attr->recv_cq)->cq;
	ia.cap.max_send_wr = attr->max_send_wr;
	ia.cap.max_recv_wr = attr->max_recv_wr;
	ia.cap.max_send_sge = attr->max_send_sge;
	ia.cap.max_recv_sge = attr->max_recv_sge;
	ia.cap.max_inline_data = attr->max_inline;
	if (attr->srq != NULL) {
		ia.srq = ((struct vrb_srq *)attr->srq)->srq;
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = attr->sq_sig_all;
	qp->qp = vrb_glue->create_qp(pd->pd, &ia);
	if (qp->qp == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		free(qp);
		return NULL;
	}
	/* INIT at once, as rdma_create_qp() does: receives may be posted before connecting.
	 * rdma_cm's own INIT attributes are applied again (INIT to INIT) once it has a route. */
	memset(&ma, 0, sizeof(ma));
	ma.qp_state = IBV_QPS_INIT;
	ma.pkey_index = 0;
	ma.port_num = vd->port;
	ma.qp_access_flags =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	rc = vrb_glue->modify_qp(
		qp->qp, &ma, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		vrb_glue->destroy_qp(qp->qp);
		free(qp);
		rte_errno = rc;
		return NULL;
	}
	qp->vd = vd;
	qp->scq = (struct vrb_cq *)attr->send_cq;
	qp->rcq = (struct vrb_cq *)attr->recv_cq;
	/* Queue sizes are enforced as asked (the device may grant more), inline as granted. */
	qp->max_inline = attr->max_inline != 0 ? ia.cap.max_inline_data : 0;
	qp->send_inv = (da->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0;
	qp->pub.dev_id = ppd->dev->id;
	qp->pub.qp_num = qp->qp->qp_num;
	qp->pub.pd = ppd;
	qp->pub.attr = *attr;
	qp->pub.attr.max_inline = qp->max_inline;
	if (attr->srq != NULL) {
		qp->pub.attr.max_recv_wr = 0;
		qp->pub.attr.max_recv_sge = 0;
	}
	if (vd->dp->qp_init != NULL) {
		rc = vd->dp->qp_init(qp);
		if (rc != 0) {
			if (vd->dp->qp_release != NULL)
				vd->dp->qp_release(qp);
			vrb_glue->destroy_qp(qp->qp);
			vrb_qp_free(qp);
			rte_errno = -rc;
			return NULL;
		}
	}
	if (attr->srq != NULL) {
		rc = srq_qp_add((struct vrb_srq *)attr->srq, qp);
		if (rc != 0) {
			if (vd->dp->qp_release != NULL)
				vd->dp->qp_release(qp);
			vrb_glue->destroy_qp(qp->qp);
			vrb_qp_free(qp);
			rte_errno = -rc;
			return NULL;
		}
		qp->srq = (struct vrb_srq *)attr->srq;
	}
	__atomic_fetch_add(&qp->scq->nqps, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&qp->rcq->nqps, 1, __ATOMIC_RELAXED);
	return &qp->pub;
}

/* ---- connections ---- */

static struct vrb_conn *
conn_new(struct vrb_dev *vd)
{
	struct vrb_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->req.pub.dev = vd->dev;
	c->req.conn = c;
	return c;
}

/* Destroy a connection (device lock held): its cm_id goes, the peer hears of it. */
static void
conn_free(struct vrb_dev *vd, struct vrb_conn *c)
{
	TAILQ_REMOVE(&vd->conns, c, next);
	if (c->qp != NULL)
		c->qp->conn = NULL;
	if (c->id != NULL)
		vrb_glue->destroy_id(c->id);
	free(c);
}

static struct vrb_conn *
conn_find(struct vrb_dev *vd, const struct rdma_cm_id *id)
{
	struct vrb_conn *c;

	TAILQ_FOREACH (c, &vd->conns, next)
		if (c->id == id)
			return c;
	return NULL;
}

static struct vrb_listener *
listener_find(struct vrb_dev *vd, const struct rdma_cm_id *id)
{
	struct vrb_listener *l;

	TAILQ_FOREACH (l, &vd->listeners, next)
		if (l->id == id)
			return l;
	return NULL;
}

/* A connection attempt failed (device lock held). */
static void
conn_error(struct vrb_dev *vd, struct vrb_conn *c, int status)
{
	c->state = VRB_CONN_CLOSED;
	if (c->qp != NULL)
		push(vd, RPCR_RDEV_EVENT_CONNECT_ERROR, c->qp, status < 0 ? status : -ECONNABORTED,
		     NULL, 0);
}

/*
 * End a connection from this side (device lock held): the QP to the error state (everything
 * outstanding flushes), DREQ to the peer, and, when @report, the event for our application at
 * once (rdma_cm's own DISCONNECTED may wait out a dead peer's DREQ timeout).
 */
static int
conn_disconnect(struct vrb_dev *vd, struct vrb_conn *c, bool report)
{
	enum vrb_conn_state was = c->state;

	if (was == VRB_CONN_CLOSED || was == VRB_CONN_REQUESTED)
		return -ENOTCONN;
	c->state = VRB_CONN_CLOSED;
	if (c->qp != NULL)
		qp_set_error(c->qp);
	if (was == VRB_CONN_ESTABLISHED || was == VRB_CONN_ACCEPTED || was == VRB_CONN_CONNECTING)
		(void)vrb_glue->disconnect(c->id);
	__atomic_fetch_add(&vd->dev->stats.disconnects, 1, __ATOMIC_RELAXED);
	if (report && c->qp != NULL)
		push(vd,
		     was == VRB_CONN_ESTABLISHED ? RPCR_RDEV_EVENT_DISCONNECTED
						 : RPCR_RDEV_EVENT_CONNECT_ERROR,
		     c->qp, was == VRB_CONN_ESTABLISHED ? 0 : -ECONNABORTED, NULL, 0);
	return 0;
}

static int
vrb_qp_destroy(struct rpcr_rdev_qp *pqp)
{
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	struct vrb_dev *vd = qp->vd;
	struct vrb_conn *c;
	int rc;

	pthread_mutex_lock(&vd->lock);
	c = qp->conn;
	if (c != NULL) {
		/* No event: the QP is going, nobody is left to hear about it. */
		(void)conn_disconnect(vd, c, false);
		conn_free(vd, c);
	}
	pthread_mutex_unlock(&vd->lock);
	if (vd->dp->qp_release != NULL)
		vd->dp->qp_release(qp);
	/* Completions of its SRQ's receives still in a CQ are dropped from now on (the slot is
	 * freed all the same). */
	if (qp->srq != NULL)
		srq_qp_del(qp->srq, qp);
	rc = vrb_glue->destroy_qp(qp->qp);
	if (rc != 0)
		VRB_LOG(ERR, "%s: QP %u: destroy: %s", vd->ibname, pqp->qp_num, strerror(rc));
	/* Its completions may still be in its CQs: the bookkeeping they point at stays until each
	 * CQ is found empty (vrb_cq_bury()), and they are dropped meanwhile. */
	__atomic_store_n(&qp->dead, true, __ATOMIC_RELEASE);
	qp->grave_refs = qp->scq == qp->rcq ? 1 : 2;
	rte_spinlock_lock(&qp->scq->grave_lock);
	qp->grave_next[0] = qp->scq->grave;
	__atomic_store_n(&qp->scq->grave, qp, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&qp->scq->grave_lock);
	if (qp->rcq != qp->scq) {
		rte_spinlock_lock(&qp->rcq->grave_lock);
		qp->grave_next[1] = qp->rcq->grave;
		__atomic_store_n(&qp->rcq->grave, qp, __ATOMIC_RELEASE);
		rte_spinlock_unlock(&qp->rcq->grave_lock);
	}
	__atomic_fetch_sub(&qp->scq->nqps, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&qp->rcq->nqps, 1, __ATOMIC_RELAXED);
	return 0;
}

void
vrb_cq_bury(struct vrb_cq *cq)
{
	struct vrb_qp *qp, *next;

	rte_spinlock_lock(&cq->grave_lock);
	qp = cq->grave;
	cq->grave = NULL;
	rte_spinlock_unlock(&cq->grave_lock);
	for (; qp != NULL; qp = next) {
		next = qp->grave_next[qp->scq == cq ? 0 : 1];
		if (__atomic_sub_fetch(&qp->grave_refs, 1, __ATOMIC_ACQ_REL) == 0)
			vrb_qp_free(qp);
	}
}

static struct rpcr_rdev_listener *
vrb_listen(struct rpcr_rdev *dev, const char *addr, int backlog)
{
	struct vrb_dev *vd = vrb_dev(dev);
	struct sockaddr_storage ss;
	struct vrb_listener *l;
	int rc;

	rc = parse_addr(addr, &ss, true);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	l->pub.dev = dev;
	if (vrb_glue->create_id(vd->ch, &l->id, l, RDMA_PS_TCP) != 0) {
		rc = errno;
		goto out_free;
	}
	if (vrb_glue->bind_addr(l->id, (struct sockaddr *)&ss) != 0) {
		rc = errno;
		goto out_id;
	}
	/* Bound to an address of another device: not ours to listen on. A wildcard address
	 * (no device) is ours; requests arriving on other devices are refused. */
	if (l->id->verbs != NULL && !same_device(vd, l->id->verbs)) {
		rc = EADDRNOTAVAIL;
		goto out_id;
	}
	pthread_mutex_lock(&vd->lock);
	if (vrb_glue->listen(l->id, backlog) != 0) {
		rc = errno;
		pthread_mutex_unlock(&vd->lock);
		goto out_id;
	}
	TAILQ_INSERT_TAIL(&vd->listeners, l, next);
	pthread_mutex_unlock(&vd->lock);
	return &l->pub;

out_id:
	vrb_glue->destroy_id(l->id);
out_free:
	free(l);
	rte_errno = rc;
	return NULL;
}

static int
vrb_listener_close(struct rpcr_rdev_listener *pl)
{
	struct vrb_listener *l = (struct vrb_listener *)pl;
	struct vrb_dev *vd = vrb_dev(pl->dev);
	struct vrb_conn *c, *tmp;

	pthread_mutex_lock(&vd->lock);
	TAILQ_REMOVE(&vd->listeners, l, next);
	vrb_glue->destroy_id(l->id);
	RTE_TAILQ_FOREACH_SAFE (c, &vd->conns, next, tmp) {
		if (c->listener != l)
			continue;
		c->listener = NULL;
		/* A request still queued is refused here. One the application already took
		 * stays valid: it may still be accepted or rejected. */
		if (c->req_out && rpcr_rdev_event_purge_req(pl->dev, &c->req.pub) != 0) {
			(void)vrb_glue->reject(c->id, NULL, 0);
			conn_free(vd, c);
		}
	}
	pthread_mutex_unlock(&vd->lock);
	free(l);
	return 0;
}

static int
vrb_connect(struct rpcr_rdev_qp *pqp, const char *addr, const void *pdata, uint8_t len)
{
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	struct vrb_dev *vd = qp->vd;
	struct sockaddr_storage src;
	struct vrb_conn *c;
	int rc;

	if (vd->removed)
		return -ENODEV;
	c = conn_new(vd);
	if (c == NULL)
		return -ENOMEM;
	rc = parse_addr(addr, &c->dst, true);
	if (rc != 0) {
		free(c);
		return rc;
	}
	c->pdata_len = len;
	if (len != 0)
		memcpy(c->pdata, pdata, len);
	c->retries = VRB_RESOLVE_RETRIES;
	c->state = VRB_CONN_RESOLVING;
	src = vd->src;
	pthread_mutex_lock(&vd->lock);
	if (qp->conn != NULL || __atomic_load_n(&qp->in_error, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&vd->lock);
		free(c);
		return -EISCONN;
	}
	if (vrb_glue->create_id(vd->ch, &c->id, c, RDMA_PS_TCP) != 0) {
		rc = -errno;
		pthread_mutex_unlock(&vd->lock);
		free(c);
		return rc;
	}
	TAILQ_INSERT_TAIL(&vd->conns, c, next);
	c->qp = qp;
	qp->conn = c;
	if (vrb_glue->resolve_addr(c->id, vd->have_src ? (struct sockaddr *)&src : NULL,
				   (struct sockaddr *)&c->dst, VRB_RESOLVE_MS) != 0) {
		rc = -errno;
		conn_free(vd, c);
		pthread_mutex_unlock(&vd->lock);
		return rc;
	}
	pthread_mutex_unlock(&vd->lock);
	return 0;
}

/*
 * Take connection request @c of handle @from onto handle @vd, another of the same device (a server
 * that spreads its connections over pollers, each with its own handle): the connection leaves
 * @from's list for @vd's, and its cm_id @from's event channel for @vd's (rdma_migrate_id(): the
 * kernel moves the id's events not yet read with it). Both locks held: rdma_migrate_id() waits
 * until every event of the id read from @from's channel is acknowledged, which @from's control
 * thread does before it takes its lock, and that thread then finds the id in no list of its own.
 * @return 0, or -EXDEV (another device: the request stays @from's).
 */
static int
conn_adopt(struct vrb_dev *vd, struct vrb_dev *from, struct vrb_conn *c)
{
	if (c->id->verbs == NULL || !same_device(vd, c->id->verbs))
		return -EXDEV;
	/* (A request the peer gave up is only freed, below, as on its own handle.) */
	if (c->state == VRB_CONN_REQUESTED && vrb_glue->migrate_id(c->id, vd->ch) != 0) {
		int rc = -errno;

		VRB_LOG(ERR, "%s: accept: rdma_migrate_id: %s", vd->ibname, strerror(-rc));
		c->state = VRB_CONN_CLOSED;
	}
	TAILQ_REMOVE(&from->conns, c, next);
	TAILQ_INSERT_TAIL(&vd->conns, c, next);
	c->listener = NULL;
	return 0;
}

static int
vrb_accept(struct rpcr_rdev_qp *pqp, struct rpcr_rdev_conn_req *preq, const void *pdata,
	   uint8_t len)
{
	struct vrb_conn_req *req = (struct vrb_conn_req *)preq;
	struct vrb_dev *from = vrb_dev(preq->dev);
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	struct vrb_dev *vd = qp->vd;
	struct rdma_conn_param cp;
	struct vrb_conn *c;
	int rc;

	/* A request of another handle: both locks (in address order; nothing else takes two). */
	if (from == vd) {
		pthread_mutex_lock(&vd->lock);
	} else {
		bool lo = (uintptr_t)from < (uintptr_t)vd;

		pthread_mutex_lock(lo ? &from->lock : &vd->lock);
		pthread_mutex_lock(lo ? &vd->lock : &from->lock);
	}
	c = req->conn;
	if (qp->conn != NULL || __atomic_load_n(&qp->in_error, __ATOMIC_RELAXED)) {
		rc = -EISCONN;
		goto unlock_req;
	}
	if (from != vd) {
		rc = conn_adopt(vd, from, c);
		if (rc != 0)
			goto unlock_req;
		pthread_mutex_unlock(&from->lock);
	}
	c->req_out = false;
	if (c->state != VRB_CONN_REQUESTED) {
		/* The peer went away while the request waited. */
		conn_free(vd, c);
		pthread_mutex_unlock(&vd->lock);
		return -ECONNABORTED;
	}
	/* Ready before the REP leaves: the client may Send as soon as it has it. */
	rc = qp_to(qp, c->id, IBV_QPS_INIT);
	if (rc == 0)
		rc = qp_to(qp, c->id, IBV_QPS_RTR);
	if (rc == 0)
		rc = qp_to(qp, c->id, IBV_QPS_RTS);
	if (rc != 0) {
		VRB_LOG(ERR, "%s: accept: QP %u to RTS: %s", vd->ibname, pqp->qp_num,
			strerror(-rc));
		(void)vrb_glue->reject(c->id, NULL, 0);
		conn_free(vd, c);
		qp_set_error(qp);
		pthread_mutex_unlock(&vd->lock);
		return rc;
	}
	memset(&cp, 0, sizeof(cp));
	cp.private_data = len != 0 ? pdata : NULL;
	cp.private_data_len = len;
	/*
	 * The connect request's values are already this side's (the IB CM swaps the REQ's
	 * initiator depth and responder resources into the passive side's view): the RDMA Reads
	 * we may issue are bounded by the event's initiator_depth (the client's responder
	 * resources), the Reads we serve by its responder_resources (the client's initiator
	 * depth). Linux's xprtrdma client offers responder resources and an initiator depth of 0:
	 * taken the other way round, our initiator depth became 0 and every RDMA Read of a
	 * WRITE's read chunk failed with REM_INV_REQ_ERR.
	 */
	cp.responder_resources = (uint8_t)RTE_MIN((int)c->peer_rd, vd->attr.max_qp_rd_atom);
	cp.initiator_depth = (uint8_t)RTE_MIN((int)c->peer_init, vd->attr.max_qp_init_rd_atom);
	cp.rnr_retry_count = 0;
	cp.qp_num = qp->qp->qp_num;
	cp.srq = qp->srq != NULL;
	if (vrb_glue->accept(c->id, &cp) != 0) {
		rc = -errno;
		conn_free(vd, c);
		qp_set_error(qp);
		pthread_mutex_unlock(&vd->lock);
		return rc == -ECONNRESET || rc == -EINVAL ? -ECONNABORTED : rc;
	}
	c->qp = qp;
	qp->conn = c;
	c->listener = NULL;
	c->state = VRB_CONN_ACCEPTED;
	pthread_mutex_unlock(&vd->lock);
	return 0;

unlock_req: /* (the request not consumed) */
	if (from != vd)
		pthread_mutex_unlock(&from->lock);
	pthread_mutex_unlock(&vd->lock);
	return rc;
}

static int
vrb_reject(struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	struct vrb_conn_req *req = (struct vrb_conn_req *)preq;
	struct vrb_dev *vd = vrb_dev(preq->dev);
	struct vrb_conn *c;

	pthread_mutex_lock(&vd->lock);
	c = req->conn;
	c->req_out = false;
	if (c->state == VRB_CONN_REQUESTED)
		(void)vrb_glue->reject(c->id, len != 0 ? pdata : NULL, len);
	__atomic_fetch_add(&vd->dev->stats.conn_rejected, 1, __ATOMIC_RELAXED);
	conn_free(vd, c);
	pthread_mutex_unlock(&vd->lock);
	return 0;
}

static int
vrb_disconnect(struct rpcr_rdev_qp *pqp)
{
	struct vrb_qp *qp = (struct vrb_qp *)pqp;
	int rc = -ENOTCONN;

	pthread_mutex_lock(&qp->vd->lock);
	if (qp->conn != NULL)
		rc = conn_disconnect(qp->vd, qp->conn, true);
	pthread_mutex_unlock(&qp->vd->lock);
	return rc;
}

/* ---- control thread ---- */

/* The device is gone: say so once, and end every connection. */
static void
device_removed(struct vrb_dev *vd)
{
	struct vrb_conn *c;

	if (vd->removed)
		return;
	vd->removed = true;
	VRB_LOG(ERR, "%s: device removed", vd->ibname);
	push(vd, RPCR_RDEV_EVENT_DEVICE_REMOVAL, NULL, -ENODEV, NULL, 0);
	TAILQ_FOREACH (c, &vd->conns, next)
		(void)conn_disconnect(vd, c, true);
}

/* RDMA-CM's destination address of @id (the peer's), as much of it as its family has. */
static void
peer_addr(struct rdma_cm_id *id, struct sockaddr_storage *ss)
{
	const struct sockaddr *sa = rdma_get_peer_addr(id);

	memset(ss, 0, sizeof(*ss));
	if (sa->sa_family == AF_INET)
		memcpy(ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(ss, sa, sizeof(struct sockaddr_in6));
}

static void
on_connect_request(struct vrb_dev *vd, const struct cm_ev *e)
{
	struct rpcr_rdev_event ev = {.type = RPCR_RDEV_EVENT_CONNECT_REQUEST};
	struct vrb_listener *l = listener_find(vd, e->listen_id);
	struct vrb_conn *c;

	if (l == NULL || vd->removed || !same_device(vd, e->id->verbs)) {
		(void)vrb_glue->reject(e->id, NULL, 0);
		vrb_glue->destroy_id(e->id);
		return;
	}
	c = conn_new(vd);
	if (c == NULL) {
		(void)vrb_glue->reject(e->id, NULL, 0);
		vrb_glue->destroy_id(e->id);
		return;
	}
	c->id = e->id;
	c->id->context = c;
	c->state = VRB_CONN_REQUESTED;
	c->listener = l;
	c->peer_rd = e->responder_resources; /* (this side's view: see accept) */
	c->peer_init = e->initiator_depth;
	c->req_out = true;
	TAILQ_INSERT_TAIL(&vd->conns, c, next);
	ev.listener = &l->pub;
	ev.req = &c->req.pub;
	ev.pdata_len = pdata_in(e, ev.pdata);
	peer_addr(e->id, &ev.peer);
	if (rpcr_rdev_event_push(vd->dev, &ev) != 0) {
		(void)vrb_glue->reject(e->id, NULL, 0);
		conn_free(vd, c);
	}
}

/* Client: route known; the QP to INIT and the REQ out. */
static int
send_req(struct vrb_dev *vd, struct vrb_conn *c)
{
	struct rdma_conn_param cp;
	int rc;

	rc = qp_to(c->qp, c->id, IBV_QPS_INIT);
	if (rc != 0)
		return rc;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = c->pdata_len != 0 ? c->pdata : NULL;
	cp.private_data_len = c->pdata_len;
	cp.responder_resources = (uint8_t)RTE_MIN(vd->attr.max_qp_rd_atom, 255);
	cp.initiator_depth = (uint8_t)RTE_MIN(vd->attr.max_qp_init_rd_atom, 255);
	cp.flow_control = 1;
	/* As Linux's xprtrdma: transport retries bounded, no RNR retry (a Send that finds no
	 * receive fails at once, as rpcr_rdev.h requires). */
	cp.retry_count = 6;
	cp.rnr_retry_count = 0;
	cp.qp_num = c->qp->qp->qp_num;
	cp.srq = c->qp->srq != NULL;
	if (vrb_glue->connect(c->id, &cp) != 0)
		return -errno;
	c->state = VRB_CONN_CONNECTING;
	return 0;
}

/* Client: REP received; the QP to RTS, RTU out, ESTABLISHED with the server's private data. */
static void
on_connect_response(struct vrb_dev *vd, struct vrb_conn *c, const struct cm_ev *e)
{
	uint8_t pd[RPCR_RDEV_PDATA_MAX];
	uint8_t n;
	int rc;

	if (c->state != VRB_CONN_CONNECTING || c->qp == NULL)
		return;
	rc = qp_to(c->qp, c->id, IBV_QPS_RTR);
	if (rc == 0)
		rc = qp_to(c->qp, c->id, IBV_QPS_RTS);
	if (rc == 0 && vrb_glue->establish(c->id) != 0)
		rc = -errno;
	if (rc != 0) {
		VRB_LOG(ERR, "%s: QP %u: connect: %s", vd->ibname, c->qp->pub.qp_num,
			strerror(-rc));
		(void)vrb_glue->reject(c->id, NULL, 0);
		qp_set_error(c->qp);
		conn_error(vd, c, rc);
		return;
	}
	c->state = VRB_CONN_ESTABLISHED;
	__atomic_fetch_add(&vd->dev->stats.conn_accepted, 1, __ATOMIC_RELAXED);
	n = pdata_in(e, pd);
	push(vd, RPCR_RDEV_EVENT_ESTABLISHED, c->qp, 0, pd, n);
}

static void
on_cm_event(struct vrb_dev *vd, const struct cm_ev *e)
{
	struct vrb_conn *c;
	int rc;

	if (e->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_connect_request(vd, e);
		return;
	}
	c = conn_find(vd, e->id);
	if (c == NULL) {
		if (e->type == RDMA_CM_EVENT_DEVICE_REMOVAL && listener_find(vd, e->id) != NULL)
			device_removed(vd);
		return;
	}
	switch (e->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (c->state != VRB_CONN_RESOLVING)
			break;
		if (!same_device(vd, c->id->verbs)) {
			VRB_LOG(ERR, "%s: the address resolves onto %s", vd->ibname,
				c->id->verbs != NULL
					? vrb_glue->get_device_name(c->id->verbs->device)
					: "no device");
			conn_error(vd, c, -ENETUNREACH);
			break;
		}
		if (vrb_glue->resolve_route(c->id, VRB_ROUTE_MS) != 0)
			conn_error(vd, c, -errno);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (c->state != VRB_CONN_RESOLVING)
			break;
		/* The first resolution may time out while the neighbour resolves: retry. */
		if (c->retries-- > 0 &&
		    vrb_glue->resolve_addr(c->id, vd->have_src ? (struct sockaddr *)&vd->src : NULL,
					   (struct sockaddr *)&c->dst, VRB_RESOLVE_MS) == 0)
			break;
		conn_error(vd, c, e->status != 0 ? e->status : -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (c->state != VRB_CONN_RESOLVING)
			break;
		rc = send_req(vd, c);
		if (rc != 0)
			conn_error(vd, c, rc);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		if (c->state == VRB_CONN_RESOLVING)
			conn_error(vd, c, e->status != 0 ? e->status : -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		on_connect_response(vd, c, e);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->state == VRB_CONN_ACCEPTED && c->qp != NULL) {
			c->state = VRB_CONN_ESTABLISHED;
			__atomic_fetch_add(&vd->dev->stats.conn_accepted, 1, __ATOMIC_RELAXED);
			push(vd, RPCR_RDEV_EVENT_ESTABLISHED, c->qp, 0, NULL, 0);
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (c->state != VRB_CONN_CONNECTING && c->state != VRB_CONN_RESOLVING)
			break;
		c->state = VRB_CONN_CLOSED;
		if (c->qp == NULL)
			break;
		if (e->status == IB_CM_REJ_CONSUMER_DEFINED) {
			uint8_t pd[RPCR_RDEV_PDATA_MAX];
			uint8_t n = pdata_in(e, pd);

			push(vd, RPCR_RDEV_EVENT_REJECTED, c->qp, -ECONNREFUSED, pd, n);
		} else {
			/* Nobody listens there (or the CM refused): not an answer from a peer. */
			push(vd, RPCR_RDEV_EVENT_CONNECT_ERROR, c->qp, -ECONNREFUSED, NULL, 0);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (c->state == VRB_CONN_REQUESTED) {
			c->state = VRB_CONN_CLOSED; /* accept will say ECONNABORTED */
		} else if (c->state != VRB_CONN_CLOSED) {
			if (c->qp != NULL)
				qp_set_error(c->qp);
			conn_error(vd, c,
				   e->type == RDMA_CM_EVENT_UNREACHABLE ? -ETIMEDOUT
									: -ECONNABORTED);
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->state == VRB_CONN_REQUESTED) {
			c->state = VRB_CONN_CLOSED;
			break;
		}
		if (c->state == VRB_CONN_CLOSED)
			break; /* we ended it, and said so then */
		(void)conn_disconnect(vd, c, true);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		device_removed(vd);
		break;
	default:
		break;
	}
}

static void
drain_cm(struct vrb_dev *vd)
{
	struct rdma_cm_event *ev;

	while (vrb_glue->get_cm_event(vd->ch, &ev) == 0) {
		struct cm_ev e = {
			.type = ev->event,
			.status = ev->status,
			.id = ev->id,
			.listen_id = ev->listen_id,
		};
		const struct rdma_conn_param *p = &ev->param.conn;

		/* UD events use param.ud; this driver makes no UD ids. */
		if (p->private_data != NULL) {
			e.pdata_len =
				(uint8_t)RTE_MIN((size_t)p->private_data_len, sizeof(e.pdata));
			memcpy(e.pdata, p->private_data, e.pdata_len);
		}
		e.responder_resources = p->responder_resources;
		e.initiator_depth = p->initiator_depth;
		/* Acknowledged before the lock: rdma_destroy_id() under it waits for this. */
		vrb_glue->ack_cm_event(ev);
		VRB_LOG(DEBUG, "%s: cm event %s (%d)", vd->ibname, vrb_glue->event_str(e.type),
			e.status);
		pthread_mutex_lock(&vd->lock);
		on_cm_event(vd, &e);
		pthread_mutex_unlock(&vd->lock);
	}
}

static void
drain_async(struct vrb_dev *vd)
{
	struct ibv_async_event ae;

	while (vrb_glue->get_async_event(vd->ctx, &ae) == 0) {
		enum ibv_event_type t = ae.event_type;

		if (t == IBV_EVENT_SRQ_LIMIT_REACHED && ae.element.srq != NULL) {
			/* Queued before the acknowledgement, which the SRQ's destruction waits
			 * for: the event never names a freed SRQ (rpcr_rdev_srq_destroy() purges
			 * it). */
			struct rpcr_rdev_event ev = {
				.type = RPCR_RDEV_EVENT_SRQ_LIMIT,
				.srq = &((struct vrb_srq *)ae.element.srq->srq_context)->pub,
			};

			if (rpcr_rdev_event_push(vd->dev, &ev) != 0)
				VRB_LOG(ERR, "%s: SRQ limit event lost", vd->ibname);
		}
		vrb_glue->ack_async_event(&ae);
		VRB_LOG(DEBUG, "%s: async event %s", vd->ibname, vrb_glue->event_type_str(t));
		if (t == IBV_EVENT_DEVICE_FATAL) {
			pthread_mutex_lock(&vd->lock);
			device_removed(vd);
			pthread_mutex_unlock(&vd->lock);
		}
	}
}

/* The fast path saw a remote-class error on a QP: end its connection for both sides. */
static void
fail_qps(struct vrb_dev *vd)
{
	struct vrb_conn *c;

	pthread_mutex_lock(&vd->lock);
	TAILQ_FOREACH (c, &vd->conns, next) {
		if (c->qp != NULL &&
		    __atomic_exchange_n(&c->qp->need_disc, false, __ATOMIC_ACQUIRE))
			(void)conn_disconnect(vd, c, true);
	}
	pthread_mutex_unlock(&vd->lock);
}

static void *
vrb_ctrl_thread(void *arg)
{
	struct vrb_dev *vd = arg;
	char name[16];

	snprintf(name, sizeof(name), "rpcr-vrb%u", vd->dev->id);
	pthread_setname_np(pthread_self(), name);
	while (!vd->stop) {
		struct pollfd p[3] = {
			{.fd = vd->ch->fd, .events = POLLIN},
			{.fd = vd->ctx->async_fd, .events = POLLIN},
			{.fd = vd->wake_fd, .events = POLLIN},
		};
		int rc = poll(p, RTE_DIM(p), 1000);

		if (rc < 0 && errno != EINTR)
			break;
		if (p[2].revents & POLLIN) {
			uint64_t v;

			if (read(vd->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
			fail_qps(vd);
		}
		if (p[1].revents & POLLIN)
			drain_async(vd);
		if (p[0].revents & POLLIN)
			drain_cm(vd);
	}
	return NULL;
}

static int
vrb_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	return vrb_probe_dp(dev, args, &vrb_verbs_dp);
}

const struct rpcr_rdev_ops vrb_ops = {
	.probe = vrb_probe,                   /* find the device, start the control thread */
	.remove = vrb_remove,                 /* stop it, release the device */
	.info_get = vrb_info_get,             /* ibv_query_device() */
	.pd_alloc = vrb_pd_alloc,             /* ibv_alloc_pd() */
	.pd_free = vrb_pd_free,               /* ibv_dealloc_pd() */
	.mr_reg = vrb_mr_reg,                 /* ibv_reg_mr() */
	.mr_dereg = vrb_mr_dereg,             /* ibv_dereg_mr() */
	.mr_invalidate = vrb_mr_invalidate,   /* ibv_dereg_mr(), the rpcr MR kept */
	.mr_rekey = vrb_mr_rekey,             /* ibv_reg_mr() anew, then the old one goes */
	.cq_create = vrb_cq_create,           /* ibv_create_cq() */
	.cq_destroy = vrb_cq_destroy,         /* ibv_destroy_cq() */
	.qp_create = vrb_qp_create,           /* ibv_create_qp(), RC */
	.qp_destroy = vrb_qp_destroy,         /* disconnect, rdma_destroy_id(), ibv_destroy_qp() */
	.srq_create = vrb_srq_create,         /* ibv_create_srq() */
	.srq_destroy = vrb_srq_destroy,       /* ibv_destroy_srq() */
	.srq_arm = vrb_srq_arm,               /* ibv_modify_srq(IBV_SRQ_LIMIT) */
	.listen = vrb_listen,                 /* rdma_bind_addr(), rdma_listen() */
	.listener_close = vrb_listener_close, /* rdma_destroy_id() */
	.connect = vrb_connect,               /* rdma_resolve_addr() ... rdma_connect() */
	.accept = vrb_accept,                 /* QP to RTS, rdma_accept() */
	.reject = vrb_reject,                 /* rdma_reject() */
	.disconnect = vrb_disconnect,         /* QP to error, rdma_disconnect() */
	.mw_alloc = vrb_mw_alloc,             /* ibv_alloc_mw(), type 2 */
	.mw_free = vrb_mw_free,               /* ibv_dealloc_mw() */
	.cq_event_fd = vrb_cq_event_fd,       /* the CQ's completion channel */
	.cq_arm = vrb_cq_arm,                 /* ibv_req_notify_cq() */
	.cq_disarm = vrb_cq_disarm,           /* ibv_get_cq_event(), ibv_ack_cq_events() */
};

static struct rpcr_rdev_driver vrb_driver = {
	.ops = &vrb_ops,
	.args = vrb_args,
};

RPCR_RDEV_REGISTER(ibverbs, vrb_driver);
