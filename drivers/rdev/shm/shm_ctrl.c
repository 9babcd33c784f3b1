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
 * added later is sent to every live connection, and the adder waits until each peer has
 * acknowledged every region sent to it before the region can be advertised.
 *
 * A connection's socket stays open until its QP is destroyed, even after a disconnect, so that
 * the peer's exit is always seen (end of file): only then is the peer "dead" and may our flush
 * stop waiting for an operation the peer was in the middle of.
 *
 * Files shared with peers are memfds sealed against resizing, and files received from peers must
 * be sealed too (a hugetlbfs file, which cannot be sealed, is the one exception, see
 * doc/rdev.md): a peer cannot make this process fault by shrinking a file under its mapping.
 *
 * One control thread per device owns the sockets' receive side (epoll); application threads
 * send on them. Both take the device lock; the fast path never does. Sends block for at most
 * SEND_TIMEOUT; a connection whose peer stops reading is dropped, never silently short of a
 * message.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pause.h>
#include <rte_string_fns.h>
#include <rte_tailq.h>

#include "shm_internal.h"

static const char *const shm_args[] = {
	"path",      "keys",           "allow_uids", "fault_seed", "fault_disconnect",
	"fault_reg", "fault_delay_us", "fault_recv", NULL};

/* Longest a send on a connection's socket may block. */
#define SEND_TIMEOUT_S 2
/* Longest a peer may take to acknowledge a region. */
#define REGION_ACK_TIMEOUT_S 5
/* Longest an invalidation waits for a peer's operation in flight to finish. */
#define FENCE_TIMEOUT_NS 1000000000ull

#define SEALS            (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* epoll payloads are (kind, id): see shm_ctrl_thread(). */
enum { KIND_WAKE = 0, KIND_LISTENER = 1, KIND_CONN = 2 };

/* ---- helpers ---- */

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A sealed memfd of @len bytes, mapped: its size can never change under a peer's mapping. */
static int
memfd_map(const char *name, size_t len, int *fd_out, void **map_out)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;
	int rc;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, SEALS) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*fd_out = fd;
	*map_out = p;
	return 0;
}

/*
 * A peer's file may be mapped only if it cannot shrink under the mapping: sealed, or a hugetlbfs
 * file (which cannot be sealed; see doc/rdev.md). @size gets its size.
 */
static bool
peer_fd_ok(int fd, bool allow_hugetlbfs, uint64_t *size)
{
	struct statfs sfs;
	struct stat st;
	int seals;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0)
		return false;
	*size = (uint64_t)st.st_size;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0)
		return (seals & F_SEAL_SHRINK) != 0;
	return allow_hugetlbfs && fstatfs(fd, &sfs) == 0 && sfs.f_type == HUGETLBFS_MAGIC;
}

/* Map a peer's whole file, its size taken from the file itself. */
static void *
map_peer_fd(int fd, size_t min, size_t *len_out)
{
	uint64_t size;
	void *p;

	if (!peer_fd_ok(fd, false, &size) || size < min || size > SIZE_MAX)
		return NULL;
	p = shm_map_get(fd, 0, (size_t)size); /* (one mapping for every connection, shm_map.c) */
	if (p == NULL)
		return NULL;
	*len_out = (size_t)size;
	return p;
}

static int
send_msg(int sock, const struct shm_msg *m, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 3)];
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
 * Receive one message and up to three fds. Returns 1, 0 (nothing pending), -ECONNRESET (peer gone)
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
			if (*nfds < 4)
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

void
shm_ctrl_kick(struct shm_dev *sd)
{
	wake_ctrl(sd);
}

/* Blocking sends, bounded; receives are always MSG_DONTWAIT. */
static int
sock_setup(int fd)
{
	struct timeval tv = {.tv_sec = SEND_TIMEOUT_S};

	return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0 ? 0 : -errno;
}

/*
 * The socket's peer runs as this user, as root, or as a user of allow_uids=. (Without an
 * allow-list a root process takes any peer: its socket is root's alone, mode 0600.)
 */
static int
peer_cred(const struct shm_dev *sd, int fd, struct ucred *cred)
{
	socklen_t clen = sizeof(*cred);
	uint32_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &clen) != 0)
		return -errno;
	if (cred->uid == geteuid() || cred->uid == 0)
		return 0;
	for (i = 0; i < sd->nallow; i++)
		if (cred->uid == sd->allow_uids[i])
			return 0;
	if (sd->nallow == 0 && geteuid() == 0)
		return 0;
	return -EACCES;
}

/* allow_uids=UID[:UID...]: @return 0 or -EINVAL. */
static int
parse_allow_uids(struct shm_dev *sd, const char *v)
{
	const char *p = v;

	sd->nallow = 0;
	while (*p != '\0') {
		unsigned long uid;
		char *end;

		if (sd->nallow == SHM_MAX_ALLOW || *p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		uid = strtoul(p, &end, 10);
		if (errno != 0 || uid >= UINT32_MAX || (*end != ':' && *end != '\0'))
			return -EINVAL;
		sd->allow_uids[sd->nallow++] = (uid_t)uid;
		p = *end == ':' ? end + 1 : end;
	}
	return sd->nallow != 0 ? 0 : -EINVAL;
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

/*
 * Make sure no peer operation that may have used a key we just changed is still running (device
 * lock held). The caller stored the shared key word with sequential consistency; a peer raises our
 * half's @busy before it checks keys (shm_rxtx.c), so once @busy is seen low, every later
 * operation sees the new key. A peer stuck mid-operation for a second has its connection failed;
 * later fences (a deregistration, the QP's destroy) do not wait for it again: every operation it
 * starts after the failure sees ERROR and touches nothing, so only the stuck one could still be
 * running, and that one was already given up on. One stuck peer costs the caller one second, not
 * one per fence.
 */
static void
fence_peers(struct shm_dev *sd)
{
	struct shm_conn *c;

	TAILQ_FOREACH (c, &sd->conns, next) {
		uint64_t deadline;

		if (c->qp == NULL || c->qp->peer_stalled)
			continue;
		deadline = mono_ns() + FENCE_TIMEOUT_NS;
		while (__atomic_load_n(&c->qp->half->busy, __ATOMIC_SEQ_CST) != 0 &&
		       !__atomic_load_n(&c->peer_dead, __ATOMIC_ACQUIRE)) {
			if (mono_ns() > deadline) {
				SHM_LOG(ERR, "QP %u: peer pid %d stuck in an operation: failing it",
					c->qp->pub.qp_num, (int)c->peer_pid);
				c->qp->peer_stalled = true;
				shm_qp_set_error(c->qp);
				break;
			}
			rte_pause();
		}
	}
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

/* A probability (fault_disconnect, fault_reg, fault_recv) as a threshold, see struct shm_fault. */
static int
fault_prob(const char *key, const char *v, uint64_t *thresh)
{
	char *end;
	double p;

	if (v == NULL)
		return 0;
	errno = 0;
	p = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(p >= 0.0 && p <= 1.0)) {
		SHM_LOG(ERR, "%s=%s: a probability from 0 to 1", key, v);
		return -EINVAL;
	}
	if (p >= 1.0)
		*thresh = UINT64_MAX;
	else
		*thresh = (uint64_t)(p * 18446744073709551616.0);
	return 0;
}

/* The fault_* devargs (doc/rdev.md). */
static int
fault_parse(struct shm_dev *sd, struct rte_kvargs *args)
{
	const char *seed = NULL, *disc = NULL, *delay = NULL, *reg = NULL, *recv = NULL;
	struct shm_fault *f = &sd->fault;
	char *end;
	int rc;

	if (args == NULL)
		return 0;
	rte_kvargs_process(args, "fault_seed", kv_get, &seed);
	rte_kvargs_process(args, "fault_disconnect", kv_get, &disc);
	rte_kvargs_process(args, "fault_delay_us", kv_get, &delay);
	rte_kvargs_process(args, "fault_reg", kv_get, &reg);
	rte_kvargs_process(args, "fault_recv", kv_get, &recv);
	if (seed != NULL) {
		errno = 0;
		f->seed = strtoull(seed, &end, 0);
		if (errno != 0 || end == seed || *end != '\0') {
			SHM_LOG(ERR, "fault_seed=%s: a number", seed);
			return -EINVAL;
		}
	}
	rc = fault_prob("fault_disconnect", disc, &f->disconnect);
	if (rc == 0)
		rc = fault_prob("fault_reg", reg, &f->reg);
	if (rc == 0)
		rc = fault_prob("fault_recv", recv, &f->recv);
	if (rc != 0)
		return rc;
	if (delay != NULL) {
		unsigned long us;

		errno = 0;
		us = strtoul(delay, &end, 0);
		if (errno != 0 || end == delay || *end != '\0' || us > SHM_FAULT_DELAY_MAX) {
			SHM_LOG(ERR, "fault_delay_us=%s: microseconds, at most %u", delay,
				SHM_FAULT_DELAY_MAX);
			return -EINVAL;
		}
		/* One unit more than asked: "held back at least N us". */
		if (us != 0)
			f->delay = (uint32_t)((us * rte_get_tsc_hz() / 1000000u) >>
					      SHM_FAULT_TSC_SHIFT) +
				   1;
	}
	f->on = f->disconnect != 0 || f->reg != 0 || f->recv != 0 || f->delay != 0;
	f->reg_rng = f->seed ^ 0x72656773ull; /* "regs": its own stream */
	if (f->on)
		SHM_LOG(NOTICE,
			"%s: faults on, seed %" PRIu64 ": disconnect %s reg %s recv %s delay %s us",
			sd->dev->name, f->seed, disc != NULL ? disc : "0", reg != NULL ? reg : "0",
			recv != NULL ? recv : "0", delay != NULL ? delay : "0");
	return 0;
}

static int
shm_probe(struct rpcr_rdev *dev, struct rte_kvargs *args)
{
	struct shm_dev *sd = calloc(1, sizeof(*sd));
	const char *path = NULL, *keys = NULL, *allow = NULL;
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
	TAILQ_INIT(&sd->srqs);
	dev->priv = sd;

	if (args != NULL) {
		rte_kvargs_process(args, "path", kv_get, &path);
		rte_kvargs_process(args, "keys", kv_get, &keys);
		rte_kvargs_process(args, "allow_uids", kv_get, &allow);
	}
	if (allow != NULL && parse_allow_uids(sd, allow) != 0) {
		SHM_LOG(ERR, "allow_uids=%s: up to %d user ids separated by ':'", allow,
			SHM_MAX_ALLOW);
		rc = -EINVAL;
		goto out_free;
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
	rc = fault_parse(sd, args);
	if (rc != 0)
		goto out_free;
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
	/* Other users must reach the sockets: the directory searchable (not listable) by all. */
	if (sd->nallow != 0) {
		struct stat st;

		if (stat(sd->dir, &st) == 0 && st.st_uid == geteuid() &&
		    (st.st_mode & 0711) != 0711 && chmod(sd->dir, (st.st_mode & 07777) | 0711) != 0)
			SHM_LOG(WARNING,
				"socket directory %s: chmod: %s: other users cannot connect",
				sd->dir, strerror(errno));
	}

	/* The key table peers validate against, and our private copy of it. */
	sd->key_bits = (uint32_t)rte_log2_u32(nkeys);
	sd->key_mask = nkeys - 1;
	{
		size_t db_off = align_up(
			sizeof(struct shm_keytab) + (size_t)nkeys * sizeof(struct shm_key), 64);

		sd->keys_len = align_up(
			db_off + (size_t)SHM_DB_CQS * SHM_DB_WORDS * sizeof(uint64_t), 4096);
		rc = memfd_map("rpcr-shm-keys", sd->keys_len, &sd->keys_fd, &map);
		if (rc != 0)
			goto out_free;
		sd->keys = map;
		sd->keys->magic = SHM_KEYTAB_MAGIC;
		sd->keys->version = SHM_VERSION;
		sd->keys->nkeys = nkeys;
		sd->keys->db_off = (uint32_t)db_off;
		sd->keys->db_bits = SHM_DB_CQS * SHM_DB_WORDS * 64;
		sd->db = (uint64_t *)((uint8_t *)map + db_off);
	}
	sd->mine = calloc(nkeys, sizeof(*sd->mine));
	if (sd->mine == NULL) {
		rc = -ENOMEM;
		goto out_unmap;
	}
	/* Slot 0 is never used: key 0 means "invalid" everywhere. */
	sd->mine[0].key = UINT32_MAX;
	sd->slot_hint = 1;

	sd->epfd = epoll_create1(EPOLL_CLOEXEC);
	sd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sd->epfd < 0 || sd->wake_fd < 0) {
		rc = -errno;
		goto out_unmap;
	}
	ev.data.u64 = (uint64_t)KIND_WAKE << 32;
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

	if (sd->fault.on)
		rpcr_rdev_set_fp_ops(dev, &(const struct rpcr_rdev_fp_ops){
						  .post_send = shm_post_send_fault,
						  .post_recv = shm_post_recv_fault,
						  .poll_cq = shm_poll_cq_fault,
						  .post_srq_recv = shm_post_srq_recv,
					  });
	else
		rpcr_rdev_set_fp_ops(dev, &(const struct rpcr_rdev_fp_ops){
						  .post_send = shm_post_send,
						  .post_recv = shm_post_recv,
						  .poll_cq = shm_poll_cq,
						  .post_srq_recv = shm_post_srq_recv,
					  });
	SHM_LOG(DEBUG, "device %s: sockets in %s, %u keys", dev->name, sd->dir, nkeys);
	return 0;

out_unmap:
	if (sd->epfd >= 0)
		close(sd->epfd);
	if (sd->wake_fd >= 0)
		close(sd->wake_fd);
	free(sd->mine);
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
	free(sd->mine);
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

	info->caps = RPCR_RDEV_CAP_REMOTE_INV | RPCR_RDEV_CAP_SHARED_MEM |
		     RPCR_RDEV_CAP_PDATA_EXACT | RPCR_RDEV_CAP_MW | RPCR_RDEV_CAP_SEND_INV |
		     RPCR_RDEV_CAP_SRQ;
	/* (Delayed completions, a fault, would come with nobody to wake the poller.) */
	if (!sd->fault.on)
		info->caps |= RPCR_RDEV_CAP_CQ_EVENT;
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
	info->max_srq_wr = SHM_MAX_QP_WR;
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
	struct shm_mine *m;
	struct shm_mr *mr;
	struct shm_key *e;
	uint32_t slot = 0, i;

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
	if (unlikely(sd->fault.reg != 0) && __atomic_load_n(&sd->fault.armed, __ATOMIC_RELAXED) &&
	    shm_fault_hit(&sd->fault.reg_rng, sd->fault.reg)) {
		/* What a NIC says when it cannot pin or map more memory. */
		pthread_mutex_unlock(&sd->lock);
		free(mr);
		__atomic_fetch_add(&sd->dev->stats.fault_reg, 1, __ATOMIC_RELAXED);
		rte_errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= sd->key_mask; i++) {
		slot = (sd->slot_hint + i) & sd->key_mask;
		if (sd->mine[slot].key == 0)
			break;
	}
	if (i > sd->key_mask) {
		pthread_mutex_unlock(&sd->lock);
		free(mr);
		rte_errno = ENOSPC;
		return NULL;
	}
	sd->slot_hint = slot + 1;
	m = &sd->mine[slot];
	m->access = access;
	m->region = r.id;
	m->pd = pd->id;
	m->va = (uint64_t)(uintptr_t)addr;
	m->len = len;
	m->region_off = (uint64_t)((uintptr_t)addr - (uintptr_t)r.base);
	m->key = new_key(sd, slot, 0);
	e = &sd->keys->keys[slot];
	e->access = m->access;
	e->region = m->region;
	e->pd = m->pd;
	e->va = m->va;
	e->len = m->len;
	e->region_off = m->region_off;
	/* The key last: a peer that sees it sees the fields above. */
	__atomic_store_n(&e->key, m->key, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sd->lock);

	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->pub.lkey = mr->pub.rkey = m->key;
	mr->slot = slot;
	mr->region = r.id;
	return &mr->pub;
}

/* Clear a slot's shared key and wait until no peer operation can still be using it. */
static void
slot_invalidate(struct shm_dev *sd, uint32_t slot)
{
	__atomic_store_n(&sd->keys->keys[slot].key, 0, __ATOMIC_SEQ_CST);
	fence_peers(sd);
}

static int
shm_mr_invalidate(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);

	pthread_mutex_lock(&sd->lock);
	slot_invalidate(sd, mr->slot);
	pthread_mutex_unlock(&sd->lock);
	return 0;
}

static int
shm_mr_rekey(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);
	uint32_t k;

	pthread_mutex_lock(&sd->lock);
	slot_invalidate(sd, mr->slot);
	k = new_key(sd, mr->slot, sd->mine[mr->slot].key);
	sd->mine[mr->slot].key = k;
	__atomic_store_n(&sd->keys->keys[mr->slot].key, k, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sd->lock);
	pmr->lkey = pmr->rkey = k;
	return 0;
}

/* A window still bound over registration slot @slot (device lock held). */
static bool
mr_has_windows(const struct shm_dev *sd, uint32_t slot)
{
	uint32_t i;

	for (i = 0; i < sd->nmw; i++) {
		uint32_t w = sd->mw_slots[i];

		if (sd->mine[w].parent == slot &&
		    __atomic_load_n(&sd->keys->keys[w].key, __ATOMIC_ACQUIRE) != 0)
			return true;
	}
	return false;
}

static int
shm_mr_dereg(struct rpcr_rdev_mr *pmr)
{
	struct shm_mr *mr = (struct shm_mr *)pmr;
	struct shm_dev *sd = shm_dev(pmr->pd->dev);

	pthread_mutex_lock(&sd->lock);
	/* As verbs: not while a window is bound over it (invalidate the windows first). */
	if (mr_has_windows(sd, mr->slot)) {
		pthread_mutex_unlock(&sd->lock);
		return -EBUSY;
	}
	slot_invalidate(sd, mr->slot);
	sd->mine[mr->slot].key = 0;
	pthread_mutex_unlock(&sd->lock);
	free(mr);
	return 0;
}

/* ---- memory windows (bound and invalidated in shm_rxtx.c) ---- */

static struct rpcr_rdev_mw *
shm_mw_alloc(struct rpcr_rdev_pd *pd)
{
	struct shm_dev *sd = shm_dev(pd->dev);
	struct shm_mine *m;
	struct shm_mw *mw;
	uint32_t slot = 0, i;

	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i <= sd->key_mask; i++) {
		slot = (sd->slot_hint + i) & sd->key_mask;
		if (slot != 0 && sd->mine[slot].key == 0)
			break;
	}
	if (i > sd->key_mask || sd->nmw == SHM_MAX_MW) {
		pthread_mutex_unlock(&sd->lock);
		free(mw);
		rte_errno = ENOSPC;
		return NULL;
	}
	sd->slot_hint = slot + 1;
	m = &sd->mine[slot];
	memset(m, 0, sizeof(*m));
	m->mw = true;
	m->pd = SHM_PD_NONE; /* (local checks fail on it) */
	/* A key of its own from the start (the slot is taken), shared as invalid until bound. */
	m->key = new_key(sd, slot, 0);
	__atomic_store_n(&sd->keys->keys[slot].key, 0, __ATOMIC_RELEASE);
	sd->mw_slots[sd->nmw++] = slot;
	pthread_mutex_unlock(&sd->lock);
	mw->pub.pd = pd;
	mw->pub.rkey = m->key;
	mw->pub.next_rkey = new_key(sd, slot, m->key);
	mw->slot = slot;
	return &mw->pub;
}

static int
shm_mw_free(struct rpcr_rdev_mw *pmw)
{
	struct shm_mw *mw = (struct shm_mw *)pmw;
	struct shm_dev *sd = shm_dev(pmw->pd->dev);
	uint32_t i;

	pthread_mutex_lock(&sd->lock);
	slot_invalidate(sd, mw->slot); /* (a binding dies with the window) */
	memset(&sd->mine[mw->slot], 0, sizeof(sd->mine[mw->slot]));
	for (i = 0; i < sd->nmw; i++) {
		if (sd->mw_slots[i] == mw->slot) {
			sd->mw_slots[i] = sd->mw_slots[--sd->nmw];
			break;
		}
	}
	pthread_mutex_unlock(&sd->lock);
	free(mw);
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
	cq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cq->epfd < 0) {
		rte_errno = errno;
		free(cq->scq);
		free(cq);
		return NULL;
	}
	cq->sd = shm_dev(dev);
	cq->pub.dev_id = dev->id;
	cq->pub.depth = depth;
	/* Doorbells, while the device has a slot for it (and not with fault injection, whose
	 * delayed completions are looked for at every poll). */
	pthread_mutex_lock(&cq->sd->lock);
	if (!cq->sd->fault.on && cq->sd->db_cqs != (1u << SHM_DB_CQS) - 1) {
		cq->by_bit = calloc(SHM_DB_WORDS * 64, sizeof(*cq->by_bit));
		if (cq->by_bit != NULL) {
			cq->db_idx = (uint32_t)__builtin_ctz(~cq->sd->db_cqs);
			cq->sd->db_cqs |= 1u << cq->db_idx;
			cq->db = cq->sd->db + (size_t)cq->db_idx * SHM_DB_WORDS;
			cq->db_base = cq->db_idx * SHM_DB_WORDS * 64;
			memset(cq->db, 0, SHM_DB_WORDS * sizeof(uint64_t));
		}
	}
	pthread_mutex_unlock(&cq->sd->lock);
	return &cq->pub;
}

static int
shm_cq_destroy(struct rpcr_rdev_cq *pcq)
{
	struct shm_cq *cq = (struct shm_cq *)pcq;
	int rc = 0;

	pthread_mutex_lock(&cq->sd->lock);
	if (cq->committed != 0)
		rc = -EBUSY;
	pthread_mutex_unlock(&cq->sd->lock);
	if (rc != 0)
		return rc;
	close(cq->epfd);
	free(cq->scq);
	free(cq->orphans);
	if (cq->db != NULL) {
		pthread_mutex_lock(&cq->sd->lock);
		cq->sd->db_cqs &= ~(1u << cq->db_idx);
		pthread_mutex_unlock(&cq->sd->lock);
		free(cq->by_bit);
	}
	free(cq);
	return 0;
}

/* ---- shared receive queues (the fast path and the protocol: shm_rxtx.c, shm_layout.h) ---- */

static void
srq_free(struct shm_srq *srq)
{
	if (srq->hdr != NULL) {
		munmap(srq->hdr, srq->len);
		close(srq->fd);
	}
	free(srq->wr_ids);
	free(srq->lens);
	free(srq->seqs);
	free(srq->held);
	free(srq->takers);
	free(srq->slot_qps);
	free(srq);
}

static struct rpcr_rdev_srq *
shm_srq_create(struct rpcr_rdev_pd *pd, const struct rpcr_rdev_srq_attr *attr)
{
	struct shm_dev *sd = shm_dev(pd->dev);
	struct shm_srq *srq;
	uint32_t nslots, slot;
	size_t size;
	void *map;
	int rc;

	if (attr->max_wr > SHM_MAX_QP_WR || attr->max_sge > SHM_MAX_RECV_SGE) {
		rte_errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* Twice the receives in slots: a slot held by a Send under way blocks no other post. */
	nslots = rte_align32pow2(2 * attr->max_wr);
	slot = (uint32_t)align_up(sizeof(struct shm_srq_desc) +
					  attr->max_sge * sizeof(struct shm_sge),
				  SHM_SLOT_ALIGN);
	size = align_up(sizeof(struct shm_srq_hdr) + (size_t)nslots * slot, 4096);
	srq->wr_ids = calloc(nslots, sizeof(*srq->wr_ids));
	srq->lens = calloc(nslots, sizeof(*srq->lens));
	srq->seqs = calloc(nslots, sizeof(*srq->seqs));
	srq->held = calloc(nslots, sizeof(*srq->held));
	srq->takers = calloc(nslots, sizeof(*srq->takers));
	srq->slot_qps = calloc(SHM_MAX_RECV_QPS_PER_CQ, sizeof(*srq->slot_qps));
	rc = srq->wr_ids == NULL || srq->lens == NULL || srq->seqs == NULL || srq->held == NULL ||
			     srq->takers == NULL || srq->slot_qps == NULL
		     ? -ENOMEM
		     : memfd_map("rpcr-shm-srq", size, &srq->fd, &map);
	if (rc != 0) {
		srq_free(srq);
		rte_errno = -rc;
		return NULL;
	}
	/* Zeroed: no slot's word matches a sequence number before it is posted (seq 0 needs 1). */
	srq->hdr = map;
	srq->len = size;
	srq->hdr->magic = SHM_SRQ_MAGIC;
	srq->hdr->version = SHM_VERSION;
	srq->hdr->pd = pd->id;
	srq->hdr->nslots = nslots;
	srq->hdr->slot = slot;
	srq->hdr->max_sge = attr->max_sge;
	srq->hdr->size = (uint32_t)size;
	srq->ring = (uint8_t *)map + sizeof(struct shm_srq_hdr);
	srq->mask = nslots - 1;
	srq->slot = slot;
	srq->sd = sd;
	srq->pub.dev_id = pd->dev->id;
	srq->pub.pd = pd;
	srq->pub.max_wr = attr->max_wr;
	srq->pub.max_sge = attr->max_sge;
	srq->limit = attr->limit;
	pthread_mutex_lock(&sd->lock);
	TAILQ_INSERT_TAIL(&sd->srqs, srq, next);
	pthread_mutex_unlock(&sd->lock);
	return &srq->pub;
}

static int
shm_srq_destroy(struct rpcr_rdev_srq *psrq)
{
	struct shm_srq *srq = (struct shm_srq *)psrq;
	struct shm_dev *sd = srq->sd;

	pthread_mutex_lock(&sd->lock);
	if (srq->nqps != 0) {
		pthread_mutex_unlock(&sd->lock);
		return -EBUSY;
	}
	TAILQ_REMOVE(&sd->srqs, srq, next);
	pthread_mutex_unlock(&sd->lock);
	srq_free(srq);
	return 0;
}

/* Limit events the fast path noted (shm_rxtx.c), queued for the application (device lock). */
static void
srq_limit_events(struct shm_dev *sd)
{
	struct shm_srq *srq;

	TAILQ_FOREACH (srq, &sd->srqs, next) {
		if (__atomic_exchange_n(&srq->limit_hit, false, __ATOMIC_ACQ_REL)) {
			struct rpcr_rdev_event ev = {.type = RPCR_RDEV_EVENT_SRQ_LIMIT,
						     .srq = &srq->pub};

			if (rpcr_rdev_event_push(sd->dev, &ev) != 0)
				SHM_LOG(ERR, "SRQ limit event lost (no memory)");
		}
	}
}

/*
 * @qp (of @cq, taking from @srq) has its SRQ receives complete in the queue's slots
 * (SHM_SRQ_SLOT_CQ, shm_layout.h) if the queue's slots are read by @cq, or can be: a slot tag of
 * its own. Not with faults configured (their delays apply to QPs' completion slots only), nor
 * past SHM_CQ_SRQS queues for one CQ. Device lock.
 */
static void
srq_slot_cq_get(struct shm_srq *srq, struct shm_cq *cq, struct shm_qp *qp)
{
	uint32_t w, idx;

	if (srq->sd->fault.on || (srq->cq != NULL && srq->cq != cq) ||
	    (srq->cq == NULL && cq->nsrqs == SHM_CQ_SRQS))
		return;
	for (w = 0; w < RTE_DIM(srq->slot_used) && srq->slot_used[w] == UINT64_MAX; w++)
		;
	if (w == RTE_DIM(srq->slot_used))
		return;
	idx = w * 64 + (uint32_t)__builtin_ctzll(~srq->slot_used[w]);
	srq->slot_used[w] |= 1ull << (idx % 64);
	if (srq->cq == NULL) {
		uint32_t i;

		/* The poll reads from the oldest receive held (any QP may take it). */
		srq->cq = cq;
		srq->slot_next = srq->prod;
		for (i = 0; i <= srq->mask; i++)
			if (srq->held[i] && (int32_t)(srq->seqs[i] - srq->slot_next) < 0)
				srq->slot_next = srq->seqs[i];
		srq->nwaits = 0;
		cq->srqs[cq->nsrqs++] = srq;
	}
	srq->slot_qps[idx] = qp;
	srq->nslot_qps++;
	qp->srq_slot_cq = true;
	RTE_BUILD_BUG_ON(SHM_MAX_RECV_QPS_PER_CQ != 1u << SHM_SRQ_TAG_IDX_BITS);
	qp->srq_tag = SHM_SRQ_TAG_SLOT |
		      (srq->slot_gen++ & SHM_SRQ_TAG_GEN_MASK) << SHM_SRQ_TAG_IDX_BITS | idx;
}

/* @qp goes: its slot tag is free, and the last such QP unbinds the queue from its CQ. */
static void
srq_slot_cq_put(struct shm_srq *srq, struct shm_qp *qp)
{
	uint32_t idx = qp->srq_tag & SHM_SRQ_TAG_IDX_MASK, i;
	struct shm_cq *cq = srq->cq;

	srq->slot_qps[idx] = NULL;
	srq->slot_used[idx / 64] &= ~(1ull << (idx % 64));
	if (--srq->nslot_qps != 0)
		return;
	for (i = 0; i < cq->nsrqs && cq->srqs[i] != srq; i++)
		;
	if (i < cq->nsrqs)
		cq->srqs[i] = cq->srqs[--cq->nsrqs];
	srq->cq = NULL;
	srq->nwaits = 0;
}

/*
 * The QP goes (in the error state, device lock held, on the thread that polls its receive CQ and
 * posts into its SRQ: rpcr_rdev.h): once its peer is out of any Send, the SRQ's receives that
 * peer took and nobody polled are given back to their slots and reported by the CQ with qp NULL
 * (their buffers come back to the application).
 */
static void
srq_detach(struct shm_qp *qp)
{
	struct shm_srq *srq = qp->srq;
	struct shm_cq *cq = qp->rcq;
	/* (A peer the destroy's fence already gave up on is not waited for twice: one look.) */
	uint64_t deadline = qp->peer_stalled ? 0 : mono_ns() + FENCE_TIMEOUT_NS;
	bool stalled = false;
	uint32_t i;

	while (__atomic_load_n(&qp->half->busy, __ATOMIC_SEQ_CST) != 0 &&
	       !(qp->conn != NULL && __atomic_load_n(&qp->conn->peer_dead, __ATOMIC_ACQUIRE))) {
		if (mono_ns() >= deadline) {
			stalled = true;
			break;
		}
		rte_pause();
	}
	/* A live peer still in a Send after the fence may yet complete what it took in the SRQ's
	 * slot (SHM_SRQ_SLOT_CQ): that slot must not be posted again under it, or its late @done
	 * would overwrite the next taker's completion. Those receives stay taken under this QP's
	 * tag, which no QP has any more: the slots' poll reports each with no QP, flushed, once
	 * its completion comes (one that never comes keeps its slot, and a place in the poll's
	 * waits). Elsewhere the peer writes its completion in this QP's own slots: the receive is
	 * reported now. */
	if (stalled && qp->srq_slot_cq)
		SHM_LOG(WARNING,
			"QP %u destroyed with its peer in a Send for %u ms: the SRQ "
			"receives it took come back when it completes them",
			qp->pub.qp_num, (unsigned int)(FENCE_TIMEOUT_NS / 1000000));
	for (i = 0; i <= srq->mask; i++) {
		if (!srq->held[i] || shm_srq_taker(srq, i) != qp->srq_tag)
			continue;
		if (stalled && qp->srq_slot_cq)
			continue;
		if (cq->norphans == cq->orphans_cap) {
			uint32_t cap = cq->orphans_cap != 0 ? 2 * cq->orphans_cap : 64;
			uint64_t *o = realloc(cq->orphans, cap * sizeof(*o));

			if (o == NULL) {
				SHM_LOG(ERR, "SRQ receive of a destroyed QP lost (no memory)");
				continue; /* (its slot stays held: never reused under a peer) */
			}
			cq->orphans = o;
			cq->orphans_cap = cap;
		}
		cq->orphans[cq->norphans++] = srq->wr_ids[i];
		srq->held[i] = 0;
		srq->takers[i] = 0;
		srq->outstanding--;
	}
	srq->nqps--;
	if (qp->srq_slot_cq)
		srq_slot_cq_put(srq, qp);
}

static void
qp_free(struct shm_qp *qp)
{
	if (qp->half != NULL)
		munmap(qp->half, qp->half_len);
	if (qp->half != NULL)
		close(qp->half_fd);
	if (qp->wake_sock[0] >= 0) {
		close(qp->wake_sock[0]);
		close(qp->wake_sock[1]);
	}
	free(qp->rq_ent);
	free(qp);
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

	if (attr->srq != NULL && nrecv == 0)
		nrecv = 64; /* completion slots (rpcr_rdev_qp_attr) */
	if (attr->max_send_wr > SHM_MAX_QP_WR || nrecv > SHM_MAX_QP_WR ||
	    attr->max_send_sge > SHM_MAX_SEND_SGE || attr->max_recv_sge > SHM_MAX_RECV_SGE ||
	    attr->max_inline > SHM_MAX_INLINE ||
	    (attr->srq != NULL && attr->srq->dev_id != pd->dev->id)) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* (Line-aligned: the fast path's fields are laid out by line, shm_internal.h.) */
	RTE_BUILD_BUG_ON(offsetof(struct shm_qp, conn) / 64 != 1 ||
			 offsetof(struct shm_qp, srq) != 128 ||
			 offsetof(struct shm_qp, unsignaled) / 64 != 2);
	if (posix_memalign((void **)&qp, 64, sizeof(*qp)) != 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(qp, 0, sizeof(*qp));
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, qp->wake_sock) != 0) {
		rte_errno = errno;
		free(qp);
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
	qp->rq_ent = calloc(nslots, sizeof(*qp->rq_ent));
	rc = qp->rq_ent == NULL ? -ENOMEM : memfd_map("rpcr-shm-qp", size, &qp->half_fd, &map);
	if (rc != 0) {
		qp_free(qp);
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
	qp->half->srq = attr->srq != NULL ? SHM_SRQ_QP_CQ : SHM_SRQ_NONE;
	qp->half->db_bit = UINT32_MAX;
	qp->db_bit = UINT32_MAX;
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
	qp->pub.attr.max_recv_wr = nrecv;
	qp->srq = (struct shm_srq *)attr->srq;

	pthread_mutex_lock(&sd->lock);
	/*
	 * Each outstanding work request has at most one completion: a CQ at least as deep as the
	 * queues it serves never overruns.
	 */
	if ((scq == rcq && scq->committed + attr->max_send_wr + nrecv > scq->pub.depth) ||
	    (scq != rcq && (scq->committed + attr->max_send_wr > scq->pub.depth ||
			    rcq->committed + nrecv > rcq->pub.depth)) ||
	    rcq->nrecv >= SHM_MAX_RECV_QPS_PER_CQ) {
		pthread_mutex_unlock(&sd->lock);
		SHM_LOG(ERR, "QP of %u+%u work requests does not fit its completion queues",
			attr->max_send_wr, nrecv);
		qp_free(qp);
		rte_errno = EINVAL;
		return NULL;
	}
	/* (QP numbers stay below SHM_SRQ_TAG_SLOT: an SRQ tells its slot tags by that bit.) */
	if (sd->next_qp >= SHM_SRQ_TAG_SLOT - 1) {
		pthread_mutex_unlock(&sd->lock);
		qp_free(qp);
		rte_errno = ENOSPC;
		return NULL;
	}
	qp->pub.qp_num = ++sd->next_qp;
	qp->half->qp_num = qp->pub.qp_num;
	/* Its own fault stream: decisions depend on the seed and on what this QP posts. */
	qp->frng = sd->fault.seed ^ ((uint64_t)qp->pub.qp_num * 0xd1b54a32d192ed03ull);
	qp->krng = rte_rdtsc() ^ ((uint64_t)qp->pub.qp_num << 32) ^ (uint64_t)getpid();
	{
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = qp};

		if (epoll_ctl(rcq->epfd, EPOLL_CTL_ADD, qp->wake_sock[0], &ev) != 0) {
			rc = errno;
			pthread_mutex_unlock(&sd->lock);
			qp_free(qp);
			rte_errno = rc;
			return NULL;
		}
	}
	scq->committed += attr->max_send_wr;
	rcq->committed += nrecv;
	rcq->recv_qps[rcq->nrecv++] = qp;
	if (qp->srq != NULL) {
		qp->srq->nqps++;
		qp->srq_tag = qp->pub.qp_num;
		srq_slot_cq_get(qp->srq, rcq, qp);
		qp->half->srq = qp->srq_slot_cq ? SHM_SRQ_SLOT_CQ : SHM_SRQ_QP_CQ;
		qp->half->srq_tag = qp->srq_tag;
	}
	if (rcq->db != NULL) {
		/* Its doorbell: the CQ's first free bit (at most SHM_MAX_RECV_QPS_PER_CQ QPs). */
		uint32_t w;

		for (w = 0; w < SHM_DB_WORDS && rcq->db_used[w] == UINT64_MAX; w++)
			;
		if (w < SHM_DB_WORDS) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(~rcq->db_used[w]);

			rcq->db_used[w] |= 1ull << (b % 64);
			rcq->db_nwords = RTE_MAX(rcq->db_nwords, w + 1);
			rcq->by_bit[b] = qp;
			qp->db_bit = b;
			qp->half->db_bit = rcq->db_base + b;
		}
	}
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

static void push_event(struct shm_conn *c, enum rpcr_rdev_event_type type, int status);
static int conn_send(struct shm_conn *c, const struct shm_msg *m, const int *fds, int nfds);

/*
 * End a connection from this side (device lock held): both halves to the error state, DISCONNECT
 * to the peer, and, when @report, the event for this side's application. The socket stays open.
 */
static int
conn_disconnect(struct shm_conn *c, bool report)
{
	struct shm_msg m = {.type = SHM_MSG_DISCONNECT, .version = SHM_VERSION};
	enum shm_conn_state was = c->state;

	if (was == SHM_CONN_CLOSED || was == SHM_CONN_WAIT_HELLO || was == SHM_CONN_REQUESTED)
		return -ENOTCONN;
	c->state = SHM_CONN_CLOSED;
	if (c->qp != NULL)
		shm_qp_set_error(c->qp);
	if (!c->broken)
		(void)conn_send(c, &m, NULL, 0);
	__atomic_fetch_add(&c->sd->dev->stats.disconnects, 1, __ATOMIC_RELAXED);
	if (report && c->qp != NULL)
		push_event(c,
			   was == SHM_CONN_CONNECTING ? RPCR_RDEV_EVENT_CONNECT_ERROR
						      : RPCR_RDEV_EVENT_DISCONNECTED,
			   was == SHM_CONN_CONNECTING ? -ECONNABORTED : 0);
	return 0;
}

static int
shm_qp_destroy(struct rpcr_rdev_qp *pqp)
{
	struct shm_qp *qp = (struct shm_qp *)pqp;
	struct shm_dev *sd = qp->sd;
	struct shm_conn *c;
	uint32_t i;

	pthread_mutex_lock(&sd->lock);
	/* Windows bound to it die with it (nothing could reach them through another QP); its
	 * peer is let finish what it may have started with one of their keys. */
	for (i = 0; i < sd->nmw; i++) {
		struct shm_mine *m = &sd->mine[sd->mw_slots[i]];

		if (m->qp_num == qp->pub.qp_num) {
			__atomic_store_n(&sd->keys->keys[sd->mw_slots[i]].key, 0, __ATOMIC_SEQ_CST);
			m->qp_num = 0;
		}
	}
	if (qp->conn != NULL)
		fence_peers(sd);
	c = qp->conn;
	if (c != NULL) {
		/* No event: the QP is going, nobody is left to hear about it. */
		conn_disconnect(c, false);
		c->qp = NULL;
		qp->conn = NULL;
		/* Closing the socket tells the peer we are gone: it stops waiting for us. */
		conn_teardown(c);
	}
	epoll_ctl(qp->rcq->epfd, EPOLL_CTL_DEL, qp->wake_sock[0], NULL);
	for (i = 0; i < qp->rcq->nrecv; i++) {
		if (qp->rcq->recv_qps[i] == qp) {
			qp->rcq->recv_qps[i] = qp->rcq->recv_qps[--qp->rcq->nrecv];
			break;
		}
	}
	qp->scq->committed -= qp->pub.attr.max_send_wr;
	qp->rcq->committed -= qp->pub.attr.max_recv_wr;
	if (qp->db_bit != UINT32_MAX) {
		qp->rcq->by_bit[qp->db_bit] = NULL;
		qp->rcq->db_used[qp->db_bit / 64] &= ~(1ull << (qp->db_bit % 64));
		qp->rcq->db_pend[qp->db_bit / 64] &= ~(1ull << (qp->db_bit % 64));
		while (qp->rcq->db_nwords != 0 && qp->rcq->db_used[qp->rcq->db_nwords - 1] == 0)
			qp->rcq->db_nwords--;
	}
	if (qp->srq != NULL)
		srq_detach(qp);
	pthread_mutex_unlock(&sd->lock);
	scq_purge(qp->scq, qp);
	qp_free(qp);
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

static int
watch(struct shm_dev *sd, int fd, uint32_t kind, uint32_t id)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
				 .data.u64 = (uint64_t)kind << 32 | id};

	return epoll_ctl(sd->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

static struct shm_conn *
conn_new(struct shm_dev *sd, int fd)
{
	struct shm_conn *c;

	/* Line-aligned: the fast path's fields fill its first line (shm_internal.h). */
	RTE_BUILD_BUG_ON(offsetof(struct shm_conn, peer_srq_on) / 64 != 0);
	if (posix_memalign((void **)&c, 64, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->sd = sd;
	c->fd = fd;
	c->peer_wake_fd = -1;
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
	/* (Each descriptor is its mapping's: a reference per table entry.) */
	for (i = 0; i < RPCR_RDEV_MAX_REGIONS; i++)
		if (c->regions[i] != NULL)
			shm_map_put(c->regions[i]->base);
	for (i = 0; i < c->retired_n; i++)
		shm_map_put(c->retired[i]->base);
	shm_map_put(c->peer_keys);
	shm_map_put(c->peer_half);
	shm_map_put(c->peer_srq);
	if (c->peer_wake_fd >= 0)
		close(c->peer_wake_fd);
	TAILQ_REMOVE(&c->sd->conns, c, next);
	free(c);
}

/*
 * A connection that cannot go on (a protocol or send error; device lock held): its QP fails and
 * its application hears of it; nothing more is read from the peer, but the socket stays open so
 * that the peer's exit is still seen.
 */
static void
conn_fail(struct shm_conn *c, int err)
{
	enum shm_conn_state was = c->state;

	if (c->broken)
		return;
	c->broken = true;
	SHM_LOG(WARNING, "connection to pid %d failed: %s", (int)c->peer_pid, strerror(-err));
	c->state = SHM_CONN_CLOSED;
	if (c->qp == NULL) {
		/* No QP waits for a flush: close now, so that the peer learns at once. The
		 * connection itself goes when nothing refers to it (conn_reap()). */
		conn_close_socket(c);
		return;
	}
	shm_qp_set_error(c->qp);
	if (was == SHM_CONN_CONNECTING)
		push_event(c, RPCR_RDEV_EVENT_CONNECT_ERROR, err);
	else if (was == SHM_CONN_ACCEPTED || was == SHM_CONN_ESTABLISHED)
		push_event(c, RPCR_RDEV_EVENT_DISCONNECTED, err);
}

/* Free a connection nothing refers to any more (control thread, device lock held). */
static void
conn_reap(struct shm_conn *c)
{
	if (c->fd < 0 && c->qp == NULL && c->req == NULL)
		conn_teardown(c);
}

/* Send on a connection; a failure fails the connection (device lock held). */
static int
conn_send(struct shm_conn *c, const struct shm_msg *m, const int *fds, int nfds)
{
	int rc;

	if (c->fd < 0 || c->broken)
		return -ENOTCONN;
	rc = send_msg(c->fd, m, fds, nfds);
	if (rc != 0)
		conn_fail(c, rc);
	return rc;
}

static int
send_region(struct shm_conn *c, const struct rpcr_rdev_region *r)
{
	struct shm_msg m = {.type = SHM_MSG_REGION_ADD, .version = SHM_VERSION};
	int rc;

	m.u.region.id = r->id;
	m.u.region.hugepage = r->hugepage;
	m.u.region.len = r->len;
	m.u.region.fd_off = r->fd_off;
	rc = conn_send(c, &m, &r->fd, 1);
	if (rc == 0)
		c->region_sent++;
	return rc;
}

/* Send every region of this process, so that the peer maps them before HELLO/ACCEPT. */
static int
send_regions(struct shm_conn *c)
{
	struct rpcr_rdev_region r;
	uint32_t id;
	int rc;

	for (id = 0; id < RPCR_RDEV_MAX_REGIONS; id++) {
		if (rpcr_rdev_region_get(id, &r) != 0)
			continue;
		rc = send_region(c, &r);
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
	int fds[4];

	m.u.conn.pdata_len = len;
	if (len != 0)
		memcpy(m.u.conn.pdata, pdata, len);
	if (qp == NULL)
		return conn_send(c, &m, NULL, 0);
	m.u.conn.pd = qp->pub.pd->id;
	fds[0] = c->sd->keys_fd;
	fds[1] = qp->half_fd;
	fds[2] = qp->wake_sock[1];
	if (qp->srq != NULL) {
		fds[3] = qp->srq->fd;
		return conn_send(c, &m, fds, 4);
	}
	return conn_send(c, &m, fds, 3);
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
	/* Owner only: only this user's processes may connect; with allow_uids=, anyone may
	 * connect and the peer's credentials decide (peer_cred()). */
	if (chmod(sun.sun_path, sd->nallow != 0 ? 0666 : 0600) != 0 || listen(fd, backlog) != 0) {
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
	RTE_TAILQ_FOREACH_SAFE (c, &sd->conns, next, tmp) {
		if (c->listener != l)
			continue;
		c->listener = NULL;
		if (c->state == SHM_CONN_WAIT_HELLO) {
			conn_teardown(c);
			continue;
		}
		/*
		 * A request still queued is refused here. One the application already took stays
		 * valid: it may still be accepted or rejected.
		 */
		if (c->req != NULL && rpcr_rdev_event_purge_req(pl->dev, &c->req->pub) != 0) {
			(void)send_conn_msg(c, SHM_MSG_REJECT, NULL, NULL, 0);
			free(c->req);
			c->req = NULL;
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
	struct ucred cred;
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
	/* Only a server of this user (or root) hears our keys. */
	rc = peer_cred(sd, fd, &cred);
	if (rc == 0)
		rc = sock_setup(fd);
	if (rc != 0) {
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
	c->peer_pid = cred.pid;
	c->peer_uid = cred.uid;
	c->state = SHM_CONN_CONNECTING;
	rc = send_regions(c);
	if (rc == 0)
		rc = send_conn_msg(c, SHM_MSG_HELLO, qp, pdata, len);
	if (rc == 0)
		rc = watch(sd, fd, KIND_CONN, c->id);
	if (rc == 0) {
		c->qp = qp;
		qp->conn = c;
	} else {
		conn_teardown(c);
	}
	pthread_mutex_unlock(&sd->lock);
	return rc;
}

/*
 * Take connection @c, whose request another handle's listener took, onto handle @sd (both device
 * locks held): its socket leaves the other control thread's epoll set for @sd's, under a number of
 * @sd's (that thread, if it was about to read the socket, finds the old number in no list of its
 * own). Everything the peer shared is the connection's own; what we share, ACCEPT sends from @sd.
 */
static void
conn_adopt(struct shm_dev *sd, struct shm_conn *c)
{
	struct shm_dev *from = c->sd;

	if (c->fd >= 0)
		epoll_ctl(from->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	TAILQ_REMOVE(&from->conns, c, next);
	c->sd = sd;
	c->id = ++sd->next_obj;
	c->listener = NULL;
	TAILQ_INSERT_TAIL(&sd->conns, c, next);
	if (c->fd >= 0 && watch(sd, c->fd, KIND_CONN, c->id) != 0)
		conn_close_socket(c); /* (as a peer gone: accept says ECONNABORTED) */
	pthread_cond_broadcast(&from->cond);
}

static int
shm_accept(struct rpcr_rdev_qp *pqp, struct rpcr_rdev_conn_req *preq, const void *pdata,
	   uint8_t len)
{
	struct shm_conn_req *req = (struct shm_conn_req *)preq;
	struct shm_dev *from = shm_dev(preq->dev);
	struct shm_qp *qp = (struct shm_qp *)pqp;
	struct shm_dev *sd = qp->sd;
	struct shm_conn *c;
	int rc;

	/* A request of another handle: both locks (in address order; nothing else takes two). */
	if (from == sd) {
		pthread_mutex_lock(&sd->lock);
	} else {
		bool lo = (uintptr_t)from < (uintptr_t)sd;

		pthread_mutex_lock(lo ? &from->lock : &sd->lock);
		pthread_mutex_lock(lo ? &sd->lock : &from->lock);
	}
	c = req->conn;
	if (qp->conn != NULL ||
	    __atomic_load_n(&qp->half->state, __ATOMIC_ACQUIRE) != SHM_QPS_INIT) {
		if (from != sd)
			pthread_mutex_unlock(&from->lock);
		pthread_mutex_unlock(&sd->lock);
		return -EISCONN;
	}
	if (from != sd) {
		conn_adopt(sd, c);
		pthread_mutex_unlock(&from->lock);
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
		__atomic_fetch_add(&sd->dev->stats.conn_accepted, 1, __ATOMIC_RELAXED);
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
	(void)send_conn_msg(c, SHM_MSG_REJECT, NULL, pdata, len);
	__atomic_fetch_add(&sd->dev->stats.conn_rejected, 1, __ATOMIC_RELAXED);
	conn_teardown(c);
	pthread_mutex_unlock(&sd->lock);
	return 0;
}

static int
shm_disconnect(struct rpcr_rdev_qp *pqp)
{
	struct shm_qp *qp = (struct shm_qp *)pqp;
	int rc = -ENOTCONN;

	pthread_mutex_lock(&qp->sd->lock);
	if (qp->conn != NULL)
		rc = conn_disconnect(qp->conn, true);
	pthread_mutex_unlock(&qp->sd->lock);
	return rc;
}

/* ---- regions ---- */

struct region_wait {
	uint32_t conn_id;
	uint32_t target; /* acknowledgements that mean "mapped everything up to our region" */
};

static void
shm_region_added(struct rpcr_rdev *dev, const struct rpcr_rdev_region *r)
{
	struct shm_dev *sd = shm_dev(dev);
	struct region_wait *w = NULL;
	struct timespec deadline;
	struct shm_conn *c;
	uint32_t n = 0, cap = 0, i;
	bool waiting;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += REGION_ACK_TIMEOUT_S;
	pthread_mutex_lock(&sd->lock);
	TAILQ_FOREACH (c, &sd->conns, next)
		cap++;
	w = calloc(cap + 1, sizeof(*w));
	TAILQ_FOREACH (c, &sd->conns, next) {
		if (c->fd < 0 || c->broken || c->state == SHM_CONN_WAIT_HELLO ||
		    c->state == SHM_CONN_CLOSED)
			continue;
		if (send_region(c, r) == 0 && w != NULL)
			w[n++] = (struct region_wait){c->id, c->region_sent};
	}
	/*
	 * The region may be advertised to a peer only once that peer has mapped it: wait until each
	 * has acknowledged every region sent to it so far (acknowledgements come in order).
	 */
	do {
		waiting = false;
		for (i = 0; i < n; i++) {
			TAILQ_FOREACH (c, &sd->conns, next)
				if (c->id == w[i].conn_id)
					break;
			if (c != NULL && !c->broken && c->fd >= 0 && c->region_acks < w[i].target)
				waiting = true;
		}
	} while (waiting && pthread_cond_timedwait(&sd->cond, &sd->lock, &deadline) == 0);
	for (i = 0; waiting && i < n; i++) {
		TAILQ_FOREACH (c, &sd->conns, next)
			if (c->id == w[i].conn_id)
				break;
		if (c != NULL && !c->broken && c->fd >= 0 && c->region_acks < w[i].target)
			conn_fail(c, -ETIMEDOUT);
	}
	pthread_mutex_unlock(&sd->lock);
	free(w);
}

static void
shm_region_removed(struct rpcr_rdev *dev, uint32_t id)
{
	struct shm_dev *sd = shm_dev(dev);
	struct shm_msg m = {.type = SHM_MSG_REGION_DEL, .version = SHM_VERSION};
	struct shm_conn *c;
	uint32_t slot, stale = 0;

	m.u.region.id = id;
	pthread_mutex_lock(&sd->lock);
	/* Keys into the region die with it. */
	for (slot = 1; slot <= sd->key_mask; slot++) {
		if (sd->mine[slot].key != 0 && sd->mine[slot].region == id &&
		    __atomic_load_n(&sd->keys->keys[slot].key, __ATOMIC_ACQUIRE) != 0) {
			__atomic_store_n(&sd->keys->keys[slot].key, 0, __ATOMIC_SEQ_CST);
			stale++;
		}
	}
	if (stale != 0) {
		SHM_LOG(WARNING, "region %u removed with %u registrations in it: invalidated", id,
			stale);
		fence_peers(sd);
	}
	TAILQ_FOREACH (c, &sd->conns, next)
		if (c->fd >= 0 && !c->broken && c->state != SHM_CONN_WAIT_HELLO)
			(void)conn_send(c, &m, NULL, 0);
	pthread_mutex_unlock(&sd->lock);
}

/* ---- control thread ---- */

/* An fd a peer passed as its wake socket: a Unix datagram socket (we only ever send on it, with
 * MSG_DONTWAIT: nothing the peer does to it can make our Sends block). */
static bool
wake_fd_ok(int fd)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM)
		return false;
	len = sizeof(domain);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

/* Map the peer QP's shared receive queue (consumes @fd); its header checked as map_peer's. */
static int
map_peer_srq(struct shm_conn *c, int fd)
{
	struct shm_srq_hdr h;
	size_t len = 0;
	void *map;

	if (c->peer_srq != NULL) {
		shm_map_put(c->peer_srq);
		c->peer_srq = NULL;
		c->peer_srq_on = false;
		c->peer_srq_slot_cq = false;
	}
	map = map_peer_fd(fd, sizeof(struct shm_srq_hdr), &len);
	close(fd);
	if (map == NULL)
		return -EPROTO;
	c->peer_srq = map;
	memcpy(&h, map, sizeof(h));
	if (h.magic != SHM_SRQ_MAGIC || h.version != SHM_VERSION || !rte_is_power_of_2(h.nslots) ||
	    h.nslots > 2 * SHM_MAX_QP_WR || h.max_sge > SHM_MAX_RECV_SGE ||
	    h.slot % SHM_SLOT_ALIGN != 0 ||
	    h.slot < sizeof(struct shm_srq_desc) + h.max_sge * sizeof(struct shm_sge) ||
	    sizeof(struct shm_srq_hdr) + (uint64_t)h.nslots * h.slot > len)
		return -EPROTO;
	/* (Its geometry in the receive queue's fields, which the peer's QP does not use:
	 * map_peer() leaves them.) */
	c->peer_srq_ring = (uint8_t *)map + sizeof(struct shm_srq_hdr);
	c->peer_srq_mask = h.nslots - 1;
	c->peer_srq_slot = h.slot;
	c->peer_srq_max_sge = h.max_sge;
	c->peer_srq_on = true;
	return 0;
}

/*
 * Map the peer's key table and QP half from a HELLO or ACCEPT, and keep its wake socket. The
 * fds are consumed on every path. Headers are copied out of shared memory once and the copies
 * checked, so that the peer cannot change a number between its check and its use.
 */
static int
map_peer(struct shm_conn *c, const struct shm_msg *m, int *fds, int nfds)
{
	struct shm_keytab kt;
	struct shm_half h;
	size_t klen = 0, hlen = 0;
	uint64_t rq_end, rcq_end;
	int rc;

	if ((nfds != 3 && nfds != 4) || m->u.conn.pdata_len > RPCR_RDEV_PDATA_MAX ||
	    !wake_fd_ok(fds[2])) {
		close_fds(fds, nfds);
		return -EPROTO;
	}
	if (nfds == 4) {
		rc = map_peer_srq(c, fds[3]);
		nfds = 3;
		if (rc != 0) {
			close_fds(fds, nfds);
			return rc;
		}
	}
	c->peer_keys = map_peer_fd(fds[0], sizeof(struct shm_keytab), &klen);
	c->peer_half = map_peer_fd(fds[1], sizeof(struct shm_half), &hlen);
	if (c->peer_wake_fd >= 0)
		close(c->peer_wake_fd); /* (a second HELLO or ACCEPT: the last one counts) */
	c->peer_wake_fd = fds[2];
	close_fds(fds, 2);
	if (c->peer_keys == NULL || c->peer_half == NULL)
		return -EPROTO;
	memcpy(&kt, c->peer_keys, sizeof(kt));
	if (kt.magic != SHM_KEYTAB_MAGIC || kt.version != SHM_VERSION ||
	    !rte_is_power_of_2(kt.nkeys) ||
	    sizeof(struct shm_keytab) + (size_t)kt.nkeys * sizeof(struct shm_key) > klen)
		return -EPROTO;
	c->peer_key_mask = kt.nkeys - 1;
	/* Its doorbells: after its keys, inside what it passed. */
	if (kt.db_off % 8 != 0 ||
	    kt.db_off < sizeof(struct shm_keytab) + (size_t)kt.nkeys * sizeof(struct shm_key) ||
	    (uint64_t)kt.db_off + kt.db_bits / 8 > klen || kt.db_bits % 64 != 0)
		return -EPROTO;

	memcpy(&h, c->peer_half, sizeof(h));
	if (h.magic != SHM_HALF_MAGIC || h.version != SHM_VERSION || !rte_is_power_of_2(h.nslots) ||
	    h.nslots > 2 * SHM_MAX_QP_WR || h.max_recv_sge > SHM_MAX_RECV_SGE ||
	    h.rq_slot % SHM_SLOT_ALIGN != 0 ||
	    h.rq_slot < sizeof(struct shm_rdesc) + h.max_recv_sge * sizeof(struct shm_sge) ||
	    h.rq_off < sizeof(struct shm_half) || h.rcq_off < sizeof(struct shm_half))
		return -EPROTO;
	rq_end = (uint64_t)h.rq_off + (uint64_t)h.nslots * h.rq_slot;
	rcq_end = (uint64_t)h.rcq_off + (uint64_t)h.nslots * SHM_SLOT_ALIGN;
	if (rq_end > hlen || rcq_end > hlen ||
	    (h.rq_off < h.rcq_off ? rq_end > h.rcq_off : rcq_end > h.rq_off))
		return -EPROTO;
	/* Receives from an SRQ exactly when it passed one. */
	if ((h.srq != SHM_SRQ_NONE) != (c->peer_srq != NULL) || h.srq > SHM_SRQ_SLOT_CQ ||
	    h.qp_num == 0 ||
	    (h.srq != SHM_SRQ_NONE && (h.srq_tag == 0 || h.srq_tag == SHM_SRQ_SKIP)))
		return -EPROTO;
	c->peer_db = NULL;
	if (h.db_bit != UINT32_MAX) {
		if (h.db_bit >= kt.db_bits)
			return -EPROTO;
		c->peer_db = (uint64_t *)((uint8_t *)c->peer_keys + kt.db_off) + h.db_bit / 64;
		c->peer_db_bit = (uint8_t)(h.db_bit % 64);
	}
	if (c->peer_srq_on) {
		c->peer_srq_tag = h.srq_tag; /* (the SRQ's geometry: map_peer_srq()) */
		c->peer_srq_slot_cq = h.srq == SHM_SRQ_SLOT_CQ;
	} else {
		c->peer_rq = (uint8_t *)c->peer_half + h.rq_off;
		c->peer_rq_slot = h.rq_slot;
		c->peer_max_sge = h.max_recv_sge;
		c->peer_rq_cons = 0;
	}
	c->peer_rcq = (uint8_t *)c->peer_half + h.rcq_off;
	c->peer_mask = h.nslots - 1;
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
		struct sockaddr_in *sin = (struct sockaddr_in *)&ev.peer;

		ev.listener = &c->listener->pub;
		ev.req = &c->req->pub;
		/* A process on this host (its credentials decided already: allow_uids). */
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	/* Faults start with the first connection: set-up is never failed (struct shm_fault). */
	if (type == RPCR_RDEV_EVENT_ESTABLISHED && c->sd->fault.on)
		__atomic_store_n(&c->sd->fault.armed, true, __ATOMIC_RELAXED);
	rpcr_rdev_event_push(c->sd->dev, &ev);
}

/* The peer's end of the socket closed: the peer is gone (device lock held). */
static void
conn_eof(struct shm_conn *c)
{
	enum shm_conn_state was = c->state;

	__atomic_store_n(&c->peer_dead, true, __ATOMIC_RELEASE);
	c->state = SHM_CONN_CLOSED;
	conn_close_socket(c);
	switch (was) {
	case SHM_CONN_WAIT_HELLO:
		return; /* reaped */
	case SHM_CONN_REQUESTED:
		/* The request stays valid: accept answers -ECONNABORTED, reject frees it. */
		return;
	case SHM_CONN_CONNECTING:
	case SHM_CONN_ACCEPTED:
	case SHM_CONN_ESTABLISHED:
		if (c->qp == NULL)
			break;
		shm_qp_set_error(c->qp);
		if (c->broken)
			return; /* its application heard already */
		if (was == SHM_CONN_CONNECTING) {
			push_event(c, RPCR_RDEV_EVENT_CONNECT_ERROR, -ECONNRESET);
		} else {
			__atomic_fetch_add(&c->sd->dev->stats.disconnects, 1, __ATOMIC_RELAXED);
			push_event(c, RPCR_RDEV_EVENT_DISCONNECTED, -ECONNRESET);
		}
		return;
	case SHM_CONN_CLOSED:
		break;
	}
	/* Its QP keeps the mappings until destroyed; a request keeps the connection; otherwise it
	 * is reaped. */
}

/* Map a region the peer sent (device lock held). */
static int
region_add(struct shm_conn *c, const struct shm_msg *m, int fd)
{
	const struct shm_peer_region *r, *old;
	uint64_t size;

	if (m->u.region.id >= RPCR_RDEV_MAX_REGIONS || m->u.region.len == 0 ||
	    m->u.region.len > SIZE_MAX || !peer_fd_ok(fd, true, &size) ||
	    m->u.region.fd_off > size || m->u.region.len > size - m->u.region.fd_off)
		return -EPROTO;
	r = shm_map_get_region(fd, m->u.region.fd_off, (size_t)m->u.region.len);
	if (r == NULL) {
		SHM_LOG(ERR, "cannot map the peer's region %u: %s", m->u.region.id,
			strerror(errno));
		return -EPROTO;
	}
	old = c->regions[m->u.region.id];
	if (old != NULL) {
		/* The id was reused: the old mapping retires (an operation may still use it). */
		if (c->retired_n == SHM_MAX_RETIRED) {
			shm_map_put(r->base);
			return -ENOSPC;
		}
		c->retired[c->retired_n++] = old;
	}
	__atomic_store_n(&c->regions[m->u.region.id], r, __ATOMIC_RELEASE);
	return 0;
}

/* Handle one message (device lock held). Returns false when nothing more is to be read. */
static bool
conn_message(struct shm_conn *c, struct shm_msg *m, int *fds, int nfds)
{
	struct shm_dev *sd = c->sd;
	struct shm_msg ack = {.type = SHM_MSG_REGION_ACK, .version = SHM_VERSION};
	int rc = -EPROTO;

	switch (m->type) {
	case SHM_MSG_REGION_ADD:
		if (nfds != 1)
			break;
		rc = region_add(c, m, fds[0]);
		close_fds(fds, nfds);
		nfds = 0;
		if (rc != 0)
			break;
		ack.u.region.id = m->u.region.id;
		return conn_send(c, &ack, NULL, 0) == 0;
	case SHM_MSG_REGION_ACK:
		if (nfds != 0 || c->region_acks == c->region_sent)
			break;
		c->region_acks++;
		pthread_cond_broadcast(&sd->cond);
		return true;
	case SHM_MSG_REGION_DEL:
		if (nfds != 0 || m->u.region.id >= RPCR_RDEV_MAX_REGIONS)
			break;
		/* Refuse new accesses; the mapping itself goes with the connection. */
		if (c->regions[m->u.region.id] != NULL) {
			if (c->retired_n == SHM_MAX_RETIRED) {
				rc = -ENOSPC;
				break;
			}
			c->retired[c->retired_n++] = c->regions[m->u.region.id];
			__atomic_store_n(&c->regions[m->u.region.id], NULL, __ATOMIC_RELEASE);
		}
		return true;
	case SHM_MSG_HELLO:
		if (c->state != SHM_CONN_WAIT_HELLO || c->listener == NULL)
			break;
		rc = map_peer(c, m, fds, nfds);
		nfds = 0;
		if (rc != 0)
			break;
		rc = -ENOMEM;
		c->req = calloc(1, sizeof(*c->req));
		if (c->req == NULL)
			break;
		c->req->pub.dev = sd->dev;
		c->req->conn = c;
		c->state = SHM_CONN_REQUESTED;
		push_event(c, RPCR_RDEV_EVENT_CONNECT_REQUEST, 0);
		return true;
	case SHM_MSG_ACCEPT:
		if (c->state != SHM_CONN_CONNECTING || c->qp == NULL)
			break;
		rc = map_peer(c, m, fds, nfds);
		nfds = 0;
		if (rc != 0)
			break;
		/* Everything the fast path reads is in place: now RTS (release). */
		__atomic_store_n(&c->qp->half->state, SHM_QPS_RTS, __ATOMIC_RELEASE);
		if (send_conn_msg(c, SHM_MSG_RTU, NULL, NULL, 0) != 0)
			return false;
		c->state = SHM_CONN_ESTABLISHED;
		__atomic_fetch_add(&sd->dev->stats.conn_accepted, 1, __ATOMIC_RELAXED);
		push_event(c, RPCR_RDEV_EVENT_ESTABLISHED, 0);
		return true;
	case SHM_MSG_REJECT:
		if (nfds != 0 || c->state != SHM_CONN_CONNECTING || c->qp == NULL ||
		    m->u.conn.pdata_len > RPCR_RDEV_PDATA_MAX)
			break;
		c->pdata_len = m->u.conn.pdata_len;
		memcpy(c->pdata, m->u.conn.pdata, c->pdata_len);
		__atomic_store_n(&c->qp->half->state, SHM_QPS_ERROR, __ATOMIC_SEQ_CST);
		c->state = SHM_CONN_CLOSED;
		__atomic_fetch_add(&sd->dev->stats.conn_rejected, 1, __ATOMIC_RELAXED);
		push_event(c, RPCR_RDEV_EVENT_REJECTED, -ECONNREFUSED);
		return true;
	case SHM_MSG_RTU:
		if (nfds != 0 || c->state != SHM_CONN_ACCEPTED)
			break;
		c->state = SHM_CONN_ESTABLISHED;
		push_event(c, RPCR_RDEV_EVENT_ESTABLISHED, 0);
		return true;
	case SHM_MSG_DISCONNECT:
		if (nfds != 0)
			break;
		if (c->state == SHM_CONN_ESTABLISHED || c->state == SHM_CONN_ACCEPTED ||
		    c->state == SHM_CONN_CONNECTING) {
			/* Our half fails (the peer failed its own), the application hears. */
			c->broken = true; /* nothing more to send to a peer that left */
			c->state = SHM_CONN_CLOSED;
			if (c->qp != NULL) {
				__atomic_store_n(&c->qp->half->state, SHM_QPS_ERROR,
						 __ATOMIC_SEQ_CST);
				__atomic_fetch_add(&sd->dev->stats.disconnects, 1,
						   __ATOMIC_RELAXED);
				push_event(c, RPCR_RDEV_EVENT_DISCONNECTED, 0);
			}
		}
		return true;
	default:
		break;
	}
	close_fds(fds, nfds);
	SHM_LOG(WARNING, "protocol error from peer pid %d (message %u): dropping the connection",
		(int)c->peer_pid, m->type);
	conn_fail(c, rc);
	return false;
}

static void
accept_conn(struct shm_dev *sd, struct shm_listener *l)
{
	struct ucred cred = {0};
	struct shm_conn *c;
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (peer_cred(sd, fd, &cred) != 0 || sock_setup(fd) != 0) {
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
	int fds[4], nfds, rc;

	while (c->fd >= 0) {
		rc = recv_msg(c->fd, &m, fds, &nfds);
		if (rc == 0)
			break;
		if (rc == -ECONNRESET) {
			conn_eof(c);
			break;
		}
		if (c->broken) {
			/* Nothing a broken peer says counts; we only wait for it to exit. */
			close_fds(fds, nfds);
			continue;
		}
		if (rc < 0) {
			conn_fail(c, rc);
			continue;
		}
		if (!conn_message(c, &m, fds, nfds) && c->fd < 0)
			break;
	}
	if (c->fd >= 0 && (events & (EPOLLHUP | EPOLLERR)))
		conn_eof(c);
	conn_reap(c);
}

/*
 * Connections a fault broke in the fast path (both halves are in ERROR already): disconnect them
 * as rpcr_rdev_disconnect() does, so that both applications hear DISCONNECTED (device lock held).
 */
static void
fault_disconnects(struct shm_dev *sd)
{
	struct shm_conn *c;

	TAILQ_FOREACH (c, &sd->conns, next)
		if (c->qp != NULL && __atomic_exchange_n(&c->fault_disc, false, __ATOMIC_ACQ_REL))
			(void)conn_disconnect(c, true);
}

/*
 * The control thread: accepts connections and reads every connection's messages. epoll payloads
 * are (kind, id), not pointers: an event may arrive for an object that an earlier event, or an
 * application thread, has freed; the id is looked up among live objects.
 */
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
				if (sd->fault.on)
					fault_disconnects(sd);
				srq_limit_events(sd);
			} else if (kind == KIND_LISTENER) {
				TAILQ_FOREACH (l, &sd->listeners, next)
					if (l->id == id)
						break;
				if (l != NULL)
					accept_conn(sd, l);
			} else {
				TAILQ_FOREACH (c, &sd->conns, next)
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
	.cq_event_fd = shm_cq_event_fd,
	.cq_arm = shm_cq_arm,
	.cq_disarm = shm_cq_disarm,
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
	.mw_alloc = shm_mw_alloc,
	.mw_free = shm_mw_free,
	.srq_create = shm_srq_create,
	.srq_destroy = shm_srq_destroy,
	.srq_arm = shm_srq_arm,
};

static struct rpcr_rdev_driver shm_driver = {
	.ops = &shm_ops,
	.args = shm_args,
};

RPCR_RDEV_REGISTER(shm, shm_driver);
