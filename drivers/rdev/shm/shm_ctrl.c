/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * shm control path: devices, protection domains, keys, queues, and connections.
 *
 * Connections are set up over a unix SOCK_SEQPACKET socket, as RDMA-CM sets them up over the
 * fabric: the client sends its regions (REGION_ADD + fd each), then HELLO with its private data,
 * its key table and its QP half (fds); the server's application sees CONNECT_REQUEST and accepts
 * (server's regions, then ACCEPT + fds) or rejects (REJECT); the client maps the server's side,
 * goes to RTS, answers RTU and sees ESTABLISHED; the server sees ESTABLISHED on RTU. A region
 * added later is sent to every live connection, and the adder waits for each peer's REGION_ACK
 * before the region can be advertised. A socket that closes without DISCONNECT is a dead peer.
 *
 * One control thread per device owns the sockets' receive side (epoll); application threads
 * send on them. Both take the device lock; the fast path never does.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_string_fns.h>
#include <rte_tailq.h>

#include "shm_internal.h"

static const char *const shm_args[] = {"path", "keys", NULL};

/* ---- helpers ---- */

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int
memfd_map(const char *name, size_t len, int *fd_out, void **map_out)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*fd_out = fd;
	*map_out = p;
	return 0;
}

/* Map a peer's file in full, its size taken from the file itself, not from the peer's word. */
static void *
map_peer_fd(int fd, size_t min, size_t *len_out)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) != 0 || st.st_size < 0 || (size_t)st.st_size < min)
		return NULL;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*len_out = (size_t)st.st_size;
	return p;
}

static int
send_msg(int sock, const struct shm_msg *m, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = {.iov_base = (void *)(uintptr_t)m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

/*
 * Receive one message and up to two fds. Returns 1, 0 (nothing pending), -ECONNRESET (peer gone)
 * or -EPROTO (malformed: wrong size or version). Extra fds are closed.
 */
static int
recv_msg(int sock, struct shm_msg *m, int *fds, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -ECONNRESET;
	if (n == 0)
		return -ECONNRESET;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		int k, cnt;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < cnt; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (*nfds < 2)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m->version != SHM_VERSION) {
		while (*nfds > 0)
			close(fds[--(*nfds)]);
		return -EPROTO;
	}
	return 1;
}

static void
close_fds(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

static void
wake_ctrl(struct shm_dev *sd)
{
	uint64_t one = 1;

	if (write(sd->wake_fd, &one, sizeof(one)) != sizeof(one))
		SHM_LOG(WARNING, "control thread wake-up failed");
}

/* ---- keys ---- */

static uint32_t
rand32(struct shm_dev *sd)
{
	if (sd->rand_left == 0) {
		ssize_t n = getrandom(sd->rand_pool, sizeof(sd->rand_pool), 0);

		if (n != (ssize_t)sizeof(sd->rand_pool)) {
			/* getrandom() of 256 bytes does not fail once the pool is seeded; be safe. */
			uint32_t i;

			for (i = 0; i < RTE_DIM(sd->rand_pool); i++)
				sd->rand_pool[i] = (uint32_t)rte_rdtsc() * 2654435761u + i;
		}
		sd->rand_left = RTE_DIM(sd->rand_pool);
	}
	return sd->rand_pool[--sd->rand_left];
}

/* A fresh key for @slot: random high bits, never 0, never the slot's previous key. */
static uint32_t
new_key(struct shm_dev *sd, uint32_t slot, uint32_t old)
{
	uint32_t k;

	do {
		k = (rand32(sd) << sd->key_bits) | slot;
	} while (k == 0 || k == old || (k >> sd->key_bits) == 0);
	return k;
}

/* ---- device ---- */

static int
make_dir(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	if (rte_strscpy(tmp, dir, sizeof(tmp)) < 0)
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void *shm_ctrl_thread(void *arg);

static int
kv_get(const char *key, const char *value, void *opaque)
{
	RTE_SET_USED(key);
	*(const char **)opaque = value;
	return 0;
}

static int
shm_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	struct shm_dev *sd = calloc(1, sizeof(*sd));
	const char *path = NULL, *keys = NULL;
	struct epoll_event ev = {.events = EPOLLIN};
	uint32_t nkeys = SHM_DEFAULT_KEYS;
	void *map;
	int rc;

	if (sd == NULL)
		return -ENOMEM;
	sd->dev = dev;
	sd->keys_fd = sd->epfd = sd->wake_fd = -1;
	pthread_mutex_init(&sd->lock, NULL);
	pthread_cond_init(&sd->cond, NULL);
	TAILQ_INIT(&sd->conns);
	TAILQ_INIT(&sd->listeners);
	dev->priv = sd;

	if (args != NULL) {
		rte_kvargs_process(args, "path", kv_get, &path);
		rte_kvargs_process(args, "keys", kv_get, &keys);
	}
	if (keys != NULL) {
		char *end;
		unsigned long v = strtoul(keys, &end, 0);

		if (*end != '\0' || v < 16 || v > (1u << 20) || !rte_is_power_of_2((uint32_t)v)) {
			SHM_LOG(ERR, "keys=%s: a power of two from 16 to 1048576", keys);
			rc = -EINVAL;
			goto out_free;
		}
		nkeys = (uint32_t)v;
	}
	if (path == NULL)
		path = getenv("RPCR_SHM_DIR");
	if (path != NULL)
		rc = rte_strscpy(sd->dir, path, sizeof(sd->dir)) < 0 ? -ENAMETOOLONG : 0;
	else if (geteuid() == 0)
		rc = rte_strscpy(sd->dir, "/run/rpcr", sizeof(sd->dir)) < 0 ? -ENAMETOOLONG : 0;
	else
		rc = snprintf(sd->dir, sizeof(sd->dir), "/tmp/rpcr-%u", (unsigned int)geteuid()) < 0
			     ? -EINVAL
			     : 0;
	if (rc == 0)
		rc = make_dir(sd->dir);
	if (rc != 0) {
		SHM_LOG(ERR, "socket directory %s: %s", sd->dir, strerror(-rc));
		goto out_free;
	}

	/* The key table peers validate against. */
	sd->key_bits = (uint32_t)rte_log2_u32(nkeys);
	sd->key_mask = nkeys - 1;
	sd->keys_len =
		align_up(sizeof(struct shm_keytab) + (size_t)nkeys * sizeof(struct shm_key), 4096);
	rc = memfd_map("rpcr-shm-keys", sd->keys_len, &sd->keys_fd, &map);
	if (rc != 0)
		goto out_free;
	sd->keys = map;
	sd->keys->magic = SHM_KEYTAB_MAGIC;
	sd->keys->version = SHM_VERSION;
	sd->keys->nkeys = nkeys;
	sd->slot_used = calloc(nkeys, 1);
	if (sd->slot_used == NULL) {
		rc = -ENOMEM;
		goto out_unmap;
	}
	/* Slot 0 is never used: key 0 means "invalid" everywhere. */
	sd->slot_used[0] = 1;

	sd->epfd = epoll_create1(EPOLL_CLOEXEC);
	sd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sd->epfd < 0 || sd->wake_fd < 0) {
		rc = -errno;
		goto out_unmap;
	}
	ev.data.u64 = 0; /* KIND_WAKE */
	if (epoll_ctl(sd->epfd, EPOLL_CTL_ADD, sd->wake_fd, &ev) != 0) {
		rc = -errno;
		goto out_unmap;
	}
	rc = pthread_create(&sd->ctrl, NULL, shm_ctrl_thread, sd);
	if (rc != 0) {
		rc = -rc;
		goto out_unmap;
	}
	sd->ctrl_running = true;

	rpcr_rdev_set_fp_ops(dev, &(const struct rpcr_rdev_fp_ops){
					  .post_send = shm_post_send,
					  .post_recv = shm_post_recv,
					  .poll_cq = shm_poll_cq,
				  });
	SHM_LOG(DEBUG, "device %s: sockets in %s, %u keys", dev->name, sd->dir, nkeys);
	return 0;

out_unmap:
	if (sd->epfd >= 0)
		close(sd->epfd);
	if (sd->wake_fd >= 0)
		close(sd->wake_fd);
	free(sd->slot_used);
	munmap(sd->keys, sd->keys_len);
	close(sd->keys_fd);
out_free:
	pthread_mutex_destroy(&sd->lock);
	pthread_cond_destroy(&sd->cond);
	free(sd);
	dev->priv = NULL;
	return rc;
}

static void conn_teardown(struct shm_conn *c);

static int
shm_remove(struct rpcr_rdev *dev)
{
	struct shm_dev *sd = shm_dev(dev);
	struct shm_conn *c;

	sd->stop = true;
	wake_ctrl(sd);
	if (sd->ctrl_running)
		pthread_join(sd->ctrl, NULL);
	/* Requests never accepted or rejected, connections whose QP is gone. */
	while ((c = TAILQ_FIRST(&sd->conns)) != NULL) {
		free(c->req);
		c->req = NULL;
		conn_teardown(c);
	}
	close(sd->epfd);
	close(sd->wake_fd);
	free(sd->slot_used);
	munmap(sd->keys, sd->keys_len);
	close(sd->keys_fd);
	pthread_mutex_destroy(&sd->lock);
	pthread_cond_destroy(&sd->cond);
	free(sd);
	return 0;
}

static int
shm_info_get(struct rpcr_rdev *dev, struct rpcr_rdev_info *info)
{
	struct shm_dev *sd = shm_dev(dev);

	info->caps = RPCR_RDEV_CAP_REMOTE_INV | RPCR_RDEV_CAP_SHARED_MEM;
	info->max_qp = 1u << 16;
	info->max_cq = 1u << 16;
	info->max_mr = sd->key_mask; /* slot 0 is reserved */
	info->max_mr_size = 1ull << 40;
	info->max_qp_wr = SHM_MAX_QP_WR;
	info->max_cqe = SHM_MAX_CQE;
	info->max_sge = SHM_MAX_RECV_SGE;
	info->max_inline = SHM_MAX_INLINE;
	info->max_pdata = RPCR_RDEV_PDATA_MAX;
	info->max_msg_size = SHM_MAX_MSG;
	return 0;
}

/* ---- protection domains, memory ---- */

static struct rpcr_rdev_pd *
shm_pd_alloc(struct rpcr_rdev *dev)
{
	struct shm_dev *sd = shm_dev(dev);
	struct rpcr_rdev_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->dev = dev;
	pthread_mutex_lock(&sd->lock);
	pd->id = ++sd->next_pd;
	pthread_mutex_unlock(&sd->lock);
	return pd;
}

static int
shm_pd_free(struct rpcr_rdev_pd *pd)
{
	free(pd);
	return 0;
}

static struct rpcr_rdev_mr *
shm_mr_reg(struct rpcr_rdev_pd *pd, void *addr, size_t len, uint32_t access)
{
	struct shm_dev *sd = shm_dev(pd->dev);
	struct rpcr_rdev_region r;
	struct shm_mr *mr;
	struct shm_key *e;
	uint32_t slot, i;

	if (rpcr_rdev_region_find(addr, len, &r) != 0) {
		SHM_LOG(ERR, "register %p+%zu: not inside a shareable region (use lib/mem arenas)",
			addr, len);
		rte_errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i <= sd->key_mask; i++) {
		slot = (sd->slot_hint + i) & sd->key_mask;
		if (!sd->slot_used[slot])
			break;
	}
	if (i > sd->key_mask) {
		pthread_mutex_unlock(&sd->lock);
		free(mr);
		rte_errno = ENOSPC;
		return NULL;
	}
	sd->slot_used[slot] = 1;
	sd->slot_hint = slot + 1;
	e = &sd->keys->keys[slot];
	e->access = access;
	e->region = r.id;
	e->pd = pd->id;
	e->va = (uint64_t)(uintptr_t)addr;
	e->len = len;
	e->region_off = (uint64_t)((uintptr_t)addr - (uintptr_t)r.base);
	mr->pub.lkey = mr->pub.rkey = new_key(sd, slot, 0);
	/* The key last: a reader that sees it sees the fields above. */
	__atomic_store_n(&e->key, mr->pub.rkey, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sd->lock);

	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->slot = slot;
	mr->region = r.id;
	return &mr->pub;
}

static int
shm_mr_invalidate(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);

	__atomic_store_n(&sd->keys->keys[mr->slot].key, 0, __ATOMIC_RELEASE);
	return 0;
}

static int
shm_mr_rekey(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);
	uint32_t k;

	pthread_mutex_lock(&sd->lock);
	k = new_key(sd, mr->slot, pmr->rkey);
	pthread_mutex_unlock(&sd->lock);
	pmr->lkey = pmr->rkey = k;
	__atomic_store_n(&sd->keys->keys[mr->slot].key, k, __ATOMIC_RELEASE);
	return 0;
}

static int
shm_mr_dereg(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);

	shm_mr_invalidate(pmr);
	pthread_mutex_lock(&sd->lock);
	sd->slot_used[mr->slot] = 0;
	pthread_mutex_unlock(&sd->lock);
	free(mr);
	return 0;
}

/* ---- completion queues, queue pairs ---- */

static struct rte_ring *
private_ring(const char *name, uint32_t esize, uint32_t count)
{
	ssize_t sz = rte_ring_get_memsize_elem(esize, rte_align32pow2(count + 1));
	struct rte_ring *r;

	if (sz < 0)
		return NULL;
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, align_up((size_t)sz, RTE_CACHE_LINE_SIZE));
	if (r == NULL)
		return NULL;
	if (rte_ring_init(r, name, count, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static struct rpcr_rdev_cq *
shm_cq_create(struct rpcr_rdev *dev, uint32_t depth)
{
	struct shm_cq *cq;

	if (depth > SHM_MAX_CQE) {
		rte_errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->scq = private_ring("shm-scq", sizeof(struct shm_scqe), depth);
	if (cq->scq == NULL) {
		free(cq);
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->sd = shm_dev(dev);
	cq->pub.dev_id = dev->id;
	cq->pub.depth = depth;
	return &cq->pub;
}

static int
shm_cq_destroy(struct rpcr_rdev_cq *pcq)
{
	struct shm_cq *cq = (struct shm_cq *)pcq;

	if (cq->committed != 0)
		return -EBUSY;
	free(cq->scq);
	free(cq);
	return 0;
}

static struct rpcr_rdev_qp *
shm_qp_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_qp_attr *attr)
{
	struct shm_dev *sd = shm_dev(pd->dev);
	struct shm_cq *scq = (struct shm_cq *)attr->send_cq;
	struct shm_cq *rcq = (struct shm_cq *)attr->recv_cq;
	uint32_t nrecv = attr->max_recv_wr, nslots, rq_slot;
	size_t rq_off, rcq_off, size;
	struct shm_qp *qp;
	void *map;
	int rc;

	if (attr->max_send_wr > SHM_MAX_QP_WR || nrecv > SHM_MAX_QP_WR ||
	    attr->max_send_sge > SHM_MAX_SEND_SGE || attr->max_recv_sge > SHM_MAX_RECV_SGE ||
	    attr->max_inline > SHM_MAX_INLINE) {
		rte_errno = EINVAL;
		return NULL;
	}
	/*
	 * Each outstanding work request has at most one completion: a CQ at least as deep as the
	 * queues it serves never overruns.
	 */
	if ((scq == rcq && scq->committed + attr->max_send_wr + nrecv > scq->pub.depth) ||
	    (scq != rcq && (scq->committed + attr->max_send_wr > scq->pub.depth ||
			    rcq->committed + nrecv > rcq->pub.depth)) ||
	    rcq->nrecv >= SHM_MAX_RECV_QPS_PER_CQ) {
		SHM_LOG(ERR, "QP of %u+%u work requests does not fit its completion queues",
			attr->max_send_wr, nrecv);
		rte_errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* Slots per queue: a power of two, at least the receives that may be outstanding. */
	nslots = rte_align32pow2(nrecv);
	rq_slot = (uint32_t)align_up(sizeof(struct shm_rdesc) +
					     attr->max_recv_sge * sizeof(struct shm_sge),
				     SHM_SLOT_ALIGN);
	rq_off = align_up(sizeof(struct shm_half), SHM_SLOT_ALIGN);
	rcq_off = rq_off + (size_t)nslots * rq_slot;
	size = align_up(rcq_off + (size_t)nslots * SHM_SLOT_ALIGN, 4096);
	qp->wr_ids = calloc(nslots, sizeof(*qp->wr_ids));
	rc = qp->wr_ids == NULL ? -ENOMEM : memfd_map("rpcr-shm-qp", size, &qp->half_fd, &map);
	if (rc != 0) {
		free(qp->wr_ids);
		free(qp);
		rte_errno = -rc;
		return NULL;
	}
	/* The file starts zeroed: every slot's stamp is 0, which no sequence number uses until
	 * every slot has been written at least once. */
	qp->half = map;
	qp->half_len = size;
	qp->half->magic = SHM_HALF_MAGIC;
	qp->half->version = SHM_VERSION;
	qp->half->pd = pd->id;
	qp->half->nslots = nslots;
	qp->half->rq_slot = rq_slot;
	qp->half->max_recv_sge = attr->max_recv_sge;
	qp->half->rq_off = (uint32_t)rq_off;
	qp->half->rcq_off = (uint32_t)rcq_off;
	qp->half->size = (uint32_t)size;
	qp->half->state = SHM_QPS_INIT;
	qp->rq_ring = (uint8_t *)map + rq_off;
	qp->rcq_ring = (uint8_t *)map + rcq_off;
	qp->mask = nslots - 1;
	qp->rq_slot = rq_slot;

	qp->sd = sd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->pub.dev_id = pd->dev->id;
	qp->pub.pd = pd;
	qp->pub.attr = *attr;
	pthread_mutex_lock(&sd->lock);
	qp->pub.qp_num = ++sd->next_qp;
	scq->committed += attr->max_send_wr;
	rcq->committed += nrecv;
	rcq->recv_qps[rcq->nrecv++] = qp;
	pthread_mutex_unlock(&sd->lock);
	return &qp->pub;
}

/* Remove @qp's send completions from its CQ (the CQ's thread is the caller). */
static void
scq_purge(struct shm_cq *cq, const struct shm_qp *qp)
{
	struct shm_scqe e;
	unsigned int n = rte_ring_count(cq->scq), i;

	for (i = 0; i < n; i++) {
		if (rte_ring_sc_dequeue_elem(cq->scq, &e, sizeof(e)) != 0)
			break;
		if (e.qp != qp)
			rte_ring_sp_enqueue_elem(cq->scq, &e, sizeof(e));
	}
}

static int shm_disconnect_locked(struct shm_qp *qp, bool notify_peer);

static int
shm_qp_destroy(struct rpcr_rdev_qp *pqp)
{
	struct shm_qp *qp = (struct shm_qp *)pqp;
	struct shm_dev *sd = qp->sd;
	struct shm_conn *c;
	uint32_t i;

	pthread_mutex_lock(&sd->lock);
	c = qp->conn;
	if (c != NULL) {
		if (c->state == SHM_CONN_ESTABLISHED || c->state == SHM_CONN_ACCEPTED ||
		    c->state == SHM_CONN_CONNECTING)
			shm_disconnect_locked(qp, true);
		c->qp = NULL;
		qp->conn = NULL;
		/* The socket is closed (disconnect): nothing else uses the peer's mappings now. */
		if (c->fd < 0)
			conn_teardown(c);
	}
	for (i = 0; i < qp->rcq->nrecv; i++) {
		if (qp->rcq->recv_qps[i] == qp) {
			qp->rcq->recv_qps[i] = qp->rcq->recv_qps[--qp->rcq->nrecv];
			break;
		}
	}
	qp->scq->committed -= qp->pub.attr.max_send_wr;
	qp->rcq->committed -= qp->pub.attr.max_recv_wr;
	pthread_mutex_unlock(&sd->lock);
	scq_purge(qp->scq, qp);
	munmap(qp->half, qp->half_len);
	close(qp->half_fd);
	free(qp->wr_ids);
	free(qp);
	return 0;
}

/* ---- connections ---- */

static int
resolve(const struct shm_dev *sd, const char *addr, struct sockaddr_un *sun)
{
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (addr[0] == '/')
		n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", addr);
	else
		n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s", sd->dir, addr);
	if (n < 0 || (size_t)n >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

static struct shm_conn *
conn_new(struct shm_dev *sd, int fd)
{
	struct shm_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->sd = sd;
	c->fd = fd;
	c->id = ++sd->next_obj;
	TAILQ_INSERT_TAIL(&sd->conns, c, next);
	return c;
}

/* Stop watching and close the socket (device lock held). */
static void
conn_close_socket(struct shm_conn *c)
{
	if (c->fd < 0)
		return;
	epoll_ctl(c->sd->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	pthread_cond_broadcast(&c->sd->cond);
}

/* Free a connection and unmap what the peer shared (device lock held; no QP uses it). */
static void
conn_teardown(struct shm_conn *c)
{
	uint32_t i;

	conn_close_socket(c);
	for (i = 0; i < RPCR_RDEV_MAX_REGIONS; i++)
		if (c->regions[i].len != 0 && c->regions[i].base != NULL)
			munmap(c->regions[i].base, c->regions[i].len);
	for (i = 0; i < c->retired_n; i++)
		munmap(c->retired[i].base, c->retired[i].len);
	if (c->peer_keys != NULL)
		munmap(c->peer_keys, c->peer_keys_len);
	if (c->peer_half != NULL)
		munmap(c->peer_half, c->peer_half_len);
	TAILQ_REMOVE(&c->sd->conns, c, next);
	free(c);
}

/* Send every region of this process, so that the peer maps them before HELLO/ACCEPT. */
static int
send_regions(struct shm_conn *c)
{
	struct rpcr_rdev_region r;
	uint32_t id;
	int rc;

	for (id = 0; id < RPCR_RDEV_MAX_REGIONS; id++) {
		struct shm_msg m = {.type = SHM_MSG_REGION_ADD, .version = SHM_VERSION};

		if (rpcr_rdev_region_get(id, &r) != 0)
			continue;
		m.u.region.id = r.id;
		m.u.region.hugepage = r.hugepage;
		m.u.region.len = r.len;
		m.u.region.fd_off = r.fd_off;
		rc = send_msg(c->fd, &m, &r.fd, 1);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
send_conn_msg(struct shm_conn *c, uint32_t type, const struct shm_qp *qp, const void *pdata,
	      uint8_t len)
{
	struct shm_msg m = {.type = type, .version = SHM_VERSION};
	int fds[2];

	m.u.conn.pdata_len = len;
	if (len != 0)
		memcpy(m.u.conn.pdata, pdata, len);
	if (qp == NULL)
		return send_msg(c->fd, &m, NULL, 0);
	m.u.conn.pd = qp->pub.pd->id;
	fds[0] = c->sd->keys_fd;
	fds[1] = qp->half_fd;
	return send_msg(c->fd, &m, fds, 2);
}

/*
 * epoll payloads are (kind, id), not pointers: an event may arrive for an object that an
 * earlier event, or an application thread, has freed; the id is looked up among live objects.
 */
enum { KIND_WAKE = 0, KIND_LISTENER = 1, KIND_CONN = 2 };

static int
watch(struct shm_dev *sd, int fd, uint32_t kind, uint32_t id)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
				 .data.u64 = (uint64_t)kind << 32 | id};

	return epoll_ctl(sd->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

static struct rpcr_rdev_listener *
shm_listen(struct rpcr_rdev *dev, const char *addr, int backlog)
{
	struct shm_dev *sd = shm_dev(dev);
	struct sockaddr_un sun;
	struct shm_listener *l;
	int fd, rc;

	rc = resolve(sd, addr, &sun);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rte_errno = errno;
		return NULL;
	}
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (rc != 0 && errno == EADDRINUSE) {
		/* A socket file left by a process that died: take it over if nobody answers. */
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof(sun)) != 0 &&
		    errno == ECONNREFUSED)
			unlink(sun.sun_path);
		if (probe >= 0)
			close(probe);
		errno = EADDRINUSE;
		rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	}
	if (rc != 0) {
		rte_errno = errno;
		close(fd);
		return NULL;
	}
	/* Owner only: only this user's processes may connect. */
	if (chmod(sun.sun_path, 0600) != 0 || listen(fd, backlog) != 0) {
		rte_errno = errno;
		unlink(sun.sun_path);
		close(fd);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		unlink(sun.sun_path);
		close(fd);
		rte_errno = ENOMEM;
		return NULL;
	}
	l->pub.dev = dev;
	l->fd = fd;
	rte_strscpy(l->path, sun.sun_path, sizeof(l->path));
	pthread_mutex_lock(&sd->lock);
	l->id = ++sd->next_obj;
	TAILQ_INSERT_TAIL(&sd->listeners, l, next);
	rc = watch(sd, fd, KIND_LISTENER, l->id);
	if (rc != 0)
		TAILQ_REMOVE(&sd->listeners, l, next);
	pthread_mutex_unlock(&sd->lock);
	if (rc != 0) {
		unlink(l->path);
		close(fd);
		free(l);
		rte_errno = -rc;
		return NULL;
	}
	return &l->pub;
}

static int
shm_listener_close(struct rpcr_rdev_listener *pl)
{
	struct shm_listener *l = (struct shm_listener *)pl;
	struct shm_dev *sd = shm_dev(pl->dev);
	struct shm_conn *c, *tmp;

	pthread_mutex_lock(&sd->lock);
	epoll_ctl(sd->epfd, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd);
	unlink(l->path);
	TAILQ_REMOVE(&sd->listeners, l, next);
	/* Connections still waiting for the application's answer are refused. */
	RTE_TAILQ_FOREACH_SAFE(c, &sd->conns, next, tmp)
	{
		if (c->listener != l)
			continue;
		c->listener = NULL;
		if (c->state == SHM_CONN_WAIT_HELLO || c->state == SHM_CONN_REQUESTED) {
			if (c->req != NULL) {
				rpcr_rdev_event_purge_req(pl->dev, &c->req->pub);
				free(c->req);
				c->req = NULL;
			}
			conn_teardown(c);
		}
	}
	pthread_mutex_unlock(&sd->lock);
	free(l);
	return 0;
}

static int
shm_connect(struct rpcr_rdev_qp *pqp, const char *addr, const void *pdata, uint8_t len)
{
	struct shm_qp *qp = (struct shm_qp *)pqp;
	struct shm_dev *sd = qp->sd;
	struct sockaddr_un sun;
	struct shm_conn *c;
	int fd, rc;

	rc = resolve(sd, addr, &sun);
	if (rc != 0)
		return rc;
	if (qp->conn != NULL || __atomic_load_n(&qp->half->state, __ATOMIC_ACQUIRE) != SHM_QPS_INIT)
		return -EISCONN;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	pthread_mutex_lock(&sd->lock);
	c = conn_new(sd, fd);
	if (c == NULL) {
		pthread_mutex_unlock(&sd->lock);
		close(fd);
		return -ENOMEM;
	}
	c->state = SHM_CONN_CONNECTING;
	c->qp = qp;
	qp->conn = c;
	rc = send_regions(c);
	if (rc == 0)
		rc = send_conn_msg(c, SHM_MSG_HELLO, qp, pdata, len);
	if (rc == 0) {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		rc = watch(sd, fd, KIND_CONN, c->id);
	}
	if (rc != 0) {
		qp->conn = NULL;
		c->qp = NULL;
		conn_teardown(c);
	}
	pthread_mutex_unlock(&sd->lock);
	return rc;
}

static int
shm_accept(struct rpcr_rdev_qp *pqp, struct rpcr_rdev_conn_req *preq, const void *pdata,
	   uint8_t len)
{
	struct shm_conn_req *req = (struct shm_conn_req *)preq;
	struct shm_qp *qp = (struct shm_qp *)pqp;
	struct shm_dev *sd = qp->sd;
	struct shm_conn *c;
	int rc;

	pthread_mutex_lock(&sd->lock);
	c = req->conn;
	if (qp->conn != NULL ||
	    __atomic_load_n(&qp->half->state, __ATOMIC_ACQUIRE) != SHM_QPS_INIT) {
		pthread_mutex_unlock(&sd->lock);
		return -EISCONN;
	}
	c->req = NULL;
	free(req);
	if (c->state != SHM_CONN_REQUESTED || c->fd < 0) {
		/* The peer went away while the request waited. */
		conn_teardown(c);
		pthread_mutex_unlock(&sd->lock);
		return -ECONNABORTED;
	}
	c->qp = qp;
	qp->conn = c;
	/* Ready before ACCEPT leaves: the client may Send as soon as it has read it. */
	__atomic_store_n(&qp->half->state, SHM_QPS_RTS, __ATOMIC_RELEASE);
	rc = send_regions(c);
	if (rc == 0)
		rc = send_conn_msg(c, SHM_MSG_ACCEPT, qp, pdata, len);
	if (rc == 0) {
		c->state = SHM_CONN_ACCEPTED;
		sd->dev->stats.conn_accepted++;
	} else {
		__atomic_store_n(&qp->half->state, SHM_QPS_ERROR, __ATOMIC_RELEASE);
		c->qp = NULL;
		qp->conn = NULL;
		conn_teardown(c);
		rc = -ECONNABORTED;
	}
	pthread_mutex_unlock(&sd->lock);
	return rc;
}

static int
shm_reject(struct rpcr_rdev_conn_req *preq, const void *pdata, uint8_t len)
{
	struct shm_conn_req *req = (struct shm_conn_req *)preq;
	struct shm_dev *sd = shm_dev(preq->dev);
	struct shm_conn *c;

	pthread_mutex_lock(&sd->lock);
	c = req->conn;
	c->req = NULL;
	free(req);
	if (c->fd >= 0)
		(void)send_conn_msg(c, SHM_MSG_REJECT, NULL, pdata, len);
	sd->dev->stats.conn_rejected++;
	conn_teardown(c);
	pthread_mutex_unlock(&sd->lock);
	return 0;
}

/* Disconnect (device lock held): error both halves, tell the peer, report it here too. */
static int
shm_disconnect_locked(struct shm_qp *qp, bool notify_peer)
{
	struct shm_conn *c = qp->conn;
	struct rpcr_rdev_event ev = {.type = RPCR_RDEV_EVENT_DISCONNECTED, .qp = &qp->pub};
	enum shm_conn_state was;

	if (c == NULL || c->state == SHM_CONN_CLOSED)
		return -ENOTCONN;
	was = c->state;
	shm_qp_set_error(qp);
	if (notify_peer && c->fd >= 0)
		(void)send_conn_msg(c, SHM_MSG_DISCONNECT, NULL, NULL, 0);
	c->state = SHM_CONN_CLOSED;
	conn_close_socket(c);
	qp->sd->dev->stats.disconnects++;
	if (was == SHM_CONN_CONNECTING) {
		ev.type = RPCR_RDEV_EVENT_CONNECT_ERROR;
		ev.status = -ECONNABORTED;
	}
	rpcr_rdev_event_push(qp->sd->dev, &ev);
	return 0;
}

static int
shm_disconnect(struct rpcr_rdev_qp *pqp)
{
	struct shm_qp *qp = (struct shm_qp *)pqp;
	int rc;

	pthread_mutex_lock(&qp->sd->lock);
	rc = shm_disconnect_locked(qp, true);
	pthread_mutex_unlock(&qp->sd->lock);
	return rc;
}

/* ---- regions ---- */

static void
shm_region_added(struct rpcr_rdev *dev, const struct rpcr_rdev_region *r)
{
	struct shm_dev *sd = shm_dev(dev);
	struct shm_msg m = {.type = SHM_MSG_REGION_ADD, .version = SHM_VERSION};
	struct timespec deadline;
	struct shm_conn *c;
	bool waiting;

	m.u.region.id = r->id;
	m.u.region.hugepage = r->hugepage;
	m.u.region.len = r->len;
	m.u.region.fd_off = r->fd_off;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;

	pthread_mutex_lock(&sd->lock);
	TAILQ_FOREACH(c, &sd->conns, next)
	{
		c->region_wait = 0;
		if (c->fd < 0 || c->state == SHM_CONN_WAIT_HELLO)
			continue;
		if (send_msg(c->fd, &m, &r->fd, 1) == 0)
			c->region_wait = c->region_acks + 1;
	}
	/* The region may be advertised to a peer only once that peer has mapped it. */
	do {
		waiting = false;
		TAILQ_FOREACH(c, &sd->conns, next)
		if (c->region_wait != 0 && c->fd >= 0 && c->region_acks < c->region_wait)
			waiting = true;
	} while (waiting && pthread_cond_timedwait(&sd->cond, &sd->lock, &deadline) == 0);
	if (waiting)
		SHM_LOG(WARNING, "region %u: a peer did not confirm mapping it within 5 s", r->id);
	pthread_mutex_unlock(&sd->lock);
}

static void
shm_region_removed(struct rpcr_rdev *dev, uint32_t id)
{
	struct shm_dev *sd = shm_dev(dev);
	struct shm_msg m = {.type = SHM_MSG_REGION_DEL, .version = SHM_VERSION};
	struct shm_conn *c;

	m.u.region.id = id;
	pthread_mutex_lock(&sd->lock);
	TAILQ_FOREACH(c, &sd->conns, next)
	if (c->fd >= 0)
		(void)send_msg(c->fd, &m, NULL, 0);
	pthread_mutex_unlock(&sd->lock);
}

/* ---- control thread ---- */

/* Map the peer's key table and QP half from a HELLO or ACCEPT, checking every number in them. */
static int
map_peer(struct shm_conn *c, const struct shm_msg *m, int *fds, int nfds)
{
	const struct shm_half *h;
	size_t klen = 0, hlen = 0;
	uint64_t rq_end, rcq_end;

	if (nfds != 2 || m->u.conn.pdata_len > RPCR_RDEV_PDATA_MAX)
		return -EPROTO;
	c->peer_keys = map_peer_fd(fds[0], sizeof(struct shm_keytab), &klen);
	c->peer_keys_len = c->peer_keys != NULL ? klen : 0;
	c->peer_half = map_peer_fd(fds[1], sizeof(struct shm_half), &hlen);
	c->peer_half_len = c->peer_half != NULL ? hlen : 0;
	close_fds(fds, nfds);
	if (c->peer_keys == NULL || c->peer_half == NULL)
		return -EPROTO;
	if (c->peer_keys->magic != SHM_KEYTAB_MAGIC || c->peer_keys->version != SHM_VERSION ||
	    !rte_is_power_of_2(c->peer_keys->nkeys) ||
	    sizeof(struct shm_keytab) + (size_t)c->peer_keys->nkeys * sizeof(struct shm_key) > klen)
		return -EPROTO;
	c->peer_key_mask = c->peer_keys->nkeys - 1;

	/*
	 * Queue geometry: checked here once against the file's real size and copied, so that
	 * the fast path never follows a number the peer could change later.
	 */
	h = c->peer_half;
	if (h->magic != SHM_HALF_MAGIC || h->version != SHM_VERSION ||
	    !rte_is_power_of_2(h->nslots) || h->nslots > 2 * SHM_MAX_QP_WR ||
	    h->max_recv_sge > SHM_MAX_RECV_SGE || h->rq_slot % SHM_SLOT_ALIGN != 0 ||
	    h->rq_slot < sizeof(struct shm_rdesc) + h->max_recv_sge * sizeof(struct shm_sge) ||
	    h->rq_off < sizeof(struct shm_half) || h->rcq_off < sizeof(struct shm_half))
		return -EPROTO;
	rq_end = (uint64_t)h->rq_off + (uint64_t)h->nslots * h->rq_slot;
	rcq_end = (uint64_t)h->rcq_off + (uint64_t)h->nslots * SHM_SLOT_ALIGN;
	if (rq_end > hlen || rcq_end > hlen ||
	    (h->rq_off < h->rcq_off ? rq_end > h->rcq_off : rcq_end > h->rq_off))
		return -EPROTO;
	c->peer_rq = (uint8_t *)c->peer_half + h->rq_off;
	c->peer_rcq = (uint8_t *)c->peer_half + h->rcq_off;
	c->peer_mask = h->nslots - 1;
	c->peer_rq_slot = h->rq_slot;
	c->peer_max_sge = h->max_recv_sge;
	c->peer_rq_cons = 0;
	c->peer_rcq_prod = 0;
	c->peer_pd = m->u.conn.pd;
	c->pdata_len = m->u.conn.pdata_len;
	memcpy(c->pdata, m->u.conn.pdata, c->pdata_len);
	return 0;
}

static void
push_event(struct shm_conn *c, enum rpcr_rdev_event_type type, int status)
{
	struct rpcr_rdev_event ev = {.type = type, .status = status};

	ev.qp = c->qp != NULL ? &c->qp->pub : NULL;
	if (type == RPCR_RDEV_EVENT_ESTABLISHED || type == RPCR_RDEV_EVENT_REJECTED ||
	    type == RPCR_RDEV_EVENT_CONNECT_REQUEST) {
		ev.pdata_len = c->pdata_len;
		memcpy(ev.pdata, c->pdata, c->pdata_len);
	}
	if (type == RPCR_RDEV_EVENT_CONNECT_REQUEST) {
		ev.listener = &c->listener->pub;
		ev.req = &c->req->pub;
	}
	rpcr_rdev_event_push(c->sd->dev, &ev);
}

/* The socket is gone (device lock held). */
static void
conn_lost(struct shm_conn *c)
{
	switch (c->state) {
	case SHM_CONN_WAIT_HELLO:
		conn_teardown(c);
		return;
	case SHM_CONN_REQUESTED:
		/* The request stays queued; accept will answer -ECONNABORTED, reject frees it. */
		conn_close_socket(c);
		c->state = SHM_CONN_CLOSED;
		return;
	case SHM_CONN_CONNECTING:
		c->state = SHM_CONN_CLOSED;
		conn_close_socket(c);
		if (c->qp != NULL) {
			__atomic_store_n(&c->qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
			push_event(c, RPCR_RDEV_EVENT_CONNECT_ERROR, -ECONNRESET);
		}
		return;
	case SHM_CONN_ACCEPTED:
	case SHM_CONN_ESTABLISHED:
		/* A dead peer: fail the QP and flush; its mappings stay until the QP is destroyed. */
		__atomic_store_n(&c->peer_dead, true, __ATOMIC_RELEASE);
		c->state = SHM_CONN_CLOSED;
		conn_close_socket(c);
		if (c->qp != NULL) {
			__atomic_store_n(&c->qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
			c->sd->dev->stats.disconnects++;
			push_event(c, RPCR_RDEV_EVENT_DISCONNECTED, -ECONNRESET);
		} else {
			conn_teardown(c);
		}
		return;
	case SHM_CONN_CLOSED:
		conn_close_socket(c);
		if (c->qp == NULL && c->req == NULL)
			conn_teardown(c);
		return;
	}
}

/* Handle one message (device lock held). Returns false when the connection is gone. */
static bool
conn_message(struct shm_conn *c, struct shm_msg *m, int *fds, int nfds)
{
	struct shm_dev *sd = c->sd;
	struct shm_msg ack = {.type = SHM_MSG_REGION_ACK, .version = SHM_VERSION};
	struct shm_peer_region *pr;
	void *p;

	switch (m->type) {
	case SHM_MSG_REGION_ADD:
		if (nfds != 1 || m->u.region.id >= RPCR_RDEV_MAX_REGIONS || m->u.region.len == 0)
			goto bad;
		pr = &c->regions[m->u.region.id];
		if (pr->base != NULL) {
			/* Sent twice (a region added while this connection was being set up). */
			close_fds(fds, nfds);
		} else {
			p = mmap(NULL, m->u.region.len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
				 (off_t)m->u.region.fd_off);
			close_fds(fds, nfds);
			if (p == MAP_FAILED) {
				SHM_LOG(ERR, "cannot map the peer's region %u: %s", m->u.region.id,
					strerror(errno));
				goto bad_nofd;
			}
			pr->len = m->u.region.len;
			__atomic_store_n(&pr->base, (uint8_t *)p, __ATOMIC_RELEASE);
		}
		ack.u.region.id = m->u.region.id;
		(void)send_msg(c->fd, &ack, NULL, 0);
		return true;
	case SHM_MSG_REGION_ACK:
		close_fds(fds, nfds);
		c->region_acks++;
		pthread_cond_broadcast(&sd->cond);
		return true;
	case SHM_MSG_REGION_DEL:
		close_fds(fds, nfds);
		/* Refuse new accesses; the mapping itself goes with the connection. */
		if (m->u.region.id < RPCR_RDEV_MAX_REGIONS &&
		    c->regions[m->u.region.id].base != NULL) {
			pr = &c->regions[m->u.region.id];
			if (c->retired_n < RPCR_RDEV_MAX_REGIONS) {
				c->retired[c->retired_n].base = pr->base;
				c->retired[c->retired_n].len = pr->len;
				c->retired_n++;
				__atomic_store_n(&pr->base, NULL, __ATOMIC_RELEASE);
				pr->len = 0;
			}
		}
		return true;
	case SHM_MSG_HELLO:
		if (c->state != SHM_CONN_WAIT_HELLO || c->listener == NULL ||
		    map_peer(c, m, fds, nfds) != 0)
			goto bad_nofd;
		c->req = calloc(1, sizeof(*c->req));
		if (c->req == NULL)
			goto bad_nofd;
		c->req->pub.dev = sd->dev;
		c->req->conn = c;
		c->state = SHM_CONN_REQUESTED;
		push_event(c, RPCR_RDEV_EVENT_CONNECT_REQUEST, 0);
		return true;
	case SHM_MSG_ACCEPT:
		if (c->state != SHM_CONN_CONNECTING || c->qp == NULL ||
		    map_peer(c, m, fds, nfds) != 0)
			goto bad_nofd;
		/* Everything the fast path reads is in place: now RTS (release). */
		__atomic_store_n(&c->qp->half->state, SHM_QPS_RTS, __ATOMIC_RELEASE);
		if (send_conn_msg(c, SHM_MSG_RTU, NULL, NULL, 0) != 0)
			goto bad_nofd;
		c->state = SHM_CONN_ESTABLISHED;
		sd->dev->stats.conn_accepted++;
		push_event(c, RPCR_RDEV_EVENT_ESTABLISHED, 0);
		return true;
	case SHM_MSG_REJECT:
		close_fds(fds, nfds);
		if (c->state != SHM_CONN_CONNECTING || c->qp == NULL ||
		    m->u.conn.pdata_len > RPCR_RDEV_PDATA_MAX)
			goto bad_nofd;
		c->pdata_len = m->u.conn.pdata_len;
		memcpy(c->pdata, m->u.conn.pdata, c->pdata_len);
		__atomic_store_n(&c->qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
		c->state = SHM_CONN_CLOSED;
		conn_close_socket(c);
		sd->dev->stats.conn_rejected++;
		push_event(c, RPCR_RDEV_EVENT_REJECTED, -ECONNREFUSED);
		return false;
	case SHM_MSG_RTU:
		close_fds(fds, nfds);
		if (c->state != SHM_CONN_ACCEPTED)
			goto bad_nofd;
		c->state = SHM_CONN_ESTABLISHED;
		push_event(c, RPCR_RDEV_EVENT_ESTABLISHED, 0);
		return true;
	case SHM_MSG_DISCONNECT:
		close_fds(fds, nfds);
		if (c->qp != NULL &&
		    (c->state == SHM_CONN_ESTABLISHED || c->state == SHM_CONN_ACCEPTED)) {
			shm_disconnect_locked(c->qp, false);
			return false;
		}
		conn_lost(c);
		return false;
	default:
		goto bad;
	}
bad:
	close_fds(fds, nfds);
bad_nofd:
	SHM_LOG(WARNING, "protocol error from peer pid %d (message %u): dropping the connection",
		(int)c->peer_pid, m->type);
	conn_lost(c);
	return false;
}

static void
accept_conn(struct shm_dev *sd, struct shm_listener *l)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct shm_conn *c;
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
		    (cred.uid != geteuid() && geteuid() != 0)) {
			SHM_LOG(WARNING, "connection from uid %u refused: not this user",
				(unsigned int)cred.uid);
			close(fd);
			continue;
		}
		c = conn_new(sd, fd);
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->listener = l;
		c->state = SHM_CONN_WAIT_HELLO;
		c->peer_pid = cred.pid;
		c->peer_uid = cred.uid;
		if (watch(sd, fd, KIND_CONN, c->id) != 0)
			conn_teardown(c);
	}
}

static void
conn_readable(struct shm_conn *c, uint32_t events)
{
	struct shm_msg m;
	int fds[2], nfds, rc;

	for (;;) {
		rc = recv_msg(c->fd, &m, fds, &nfds);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (rc == -EPROTO)
				SHM_LOG(WARNING, "malformed message from peer pid %d",
					(int)c->peer_pid);
			conn_lost(c);
			return;
		}
		if (!conn_message(c, &m, fds, nfds))
			return;
	}
	if (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		conn_lost(c);
}

static void *
shm_ctrl_thread(void *arg)
{
	struct shm_dev *sd = arg;
	struct epoll_event evs[16];
	int n, i;

	while (!sd->stop) {
		n = epoll_wait(sd->epfd, evs, RTE_DIM(evs), 200);
		pthread_mutex_lock(&sd->lock);
		for (i = 0; i < n && !sd->stop; i++) {
			uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t id = (uint32_t)evs[i].data.u64;
			struct shm_listener *l;
			struct shm_conn *c;

			if (kind == KIND_WAKE) {
				uint64_t v;

				if (read(sd->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					SHM_LOG(WARNING, "wake-up read failed");
			} else if (kind == KIND_LISTENER) {
				TAILQ_FOREACH(l, &sd->listeners, next)
				if (l->id == id)
					break;
				if (l != NULL)
					accept_conn(sd, l);
			} else {
				TAILQ_FOREACH(c, &sd->conns, next)
				if (c->id == id)
					break;
				if (c != NULL && c->fd >= 0)
					conn_readable(c, evs[i].events);
			}
		}
		pthread_mutex_unlock(&sd->lock);
	}
	return NULL;
}

static const struct rpcr_rdev_ops shm_ops = {
	.probe = shm_probe,
	.remove = shm_remove,
	.info_get = shm_info_get,
	.pd_alloc = shm_pd_alloc,
	.pd_free = shm_pd_free,
	.mr_reg = shm_mr_reg,
	.mr_dereg = shm_mr_dereg,
	.mr_invalidate = shm_mr_invalidate,
	.mr_rekey = shm_mr_rekey,
	.cq_create = shm_cq_create,
	.cq_destroy = shm_cq_destroy,
	.qp_create = shm_qp_create,
	.qp_destroy = shm_qp_destroy,
	.listen = shm_listen,
	.listener_close = shm_listener_close,
	.connect = shm_connect,
	.accept = shm_accept,
	.reject = shm_reject,
	.disconnect = shm_disconnect,
	.region_added = shm_region_added,
	.region_removed = shm_region_removed,
};

static struct rpcr_rdev_driver shm_driver = {
	.ops = &shm_ops,
	.args = shm_args,
};

RPCR_RDEV_REGISTER(shm, shm_driver);
