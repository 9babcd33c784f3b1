/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Sleeping pollers (poll modes adaptive and interrupt; doc/xprt.md "Poll modes").
 *
 * At the end of a poll that found nothing (rpcr_xprt_poll()), in this order:
 *   1. xprt_sleep_due(): adaptive sleeps after idle_us of polls with no work in a row,
 *      interrupt at once;
 *   2. xprt_sleep_arm(): raise @asleep, then the fence; a call or reply queued on the ring, or a
 *      stop asked, since the last look means work (no sleep); then the CQ armed
 *      (rpcr_rdev_cq_arm(): -EAGAIN, completions on their way, means no sleep either);
 *   3. the poll takes the CQ once more (what completed before the arm);
 *   4. xprt_sleep_wait(): if that found nothing and the ring is still empty, one epoll_wait() on
 *      the CQ's fd, the device's event fd (connection events) and @wake_fd, for at most
 *      sleep_max_ms (timers), 1 ms while calls or requests wait for resources (buffers an
 *      application thread frees announce nothing);
 *   5. xprt_sleep_disarm(): the CQ disarmed, @asleep lowered, @wake_fd drained, the timers due
 *      at the next look at the clock.
 *
 * Other threads queue on the ring and then call xprt_poller_kick(): a sequentially consistent
 * fence, then a look at @asleep, and a write to @wake_fd when it is raised. The poller's store of
 * @asleep and its fence come before its look at the ring: in the order of the two fences, either
 * the queuer's comes first and the poller's look finds the entry, or the poller's comes first and
 * the queuer sees @asleep. Completions wake it through the device's own protocol (rpcr_rdev.h,
 * "Completion events").
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "xprt_internal.h"

/* (Over soft-RoCE, round trips of 50-100 us: at 100 us, adaptive's NULL p50 was 1.25x busy's;
 * at 500, 0.96x. The price: a poller spins 500 us after each burst before it sleeps.) */
#define SLEEP_DEFAULT_IDLE_US 500u
#define SLEEP_DEFAULT_MAX_MS  10u
#define SLEEP_MAX_MS          60000u
/* While calls or requests wait (for a credit, send-queue room, buffers an application thread
 * may free), sleeps last at most this: buffers freed elsewhere announce nothing. */
#define SLEEP_WAITING_MS 1

static int
watch(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int
xprt_sleep_init(struct rpcr_xprt_poller *p, const struct rpcr_xprt_poller_conf *conf)
{
	int cq_fd, rc;

	p->epfd = -1;
	p->wake_fd = -1;
	p->mode = RPCR_XPRT_POLL_BUSY;
	if (conf->poll_mode == RPCR_XPRT_POLL_BUSY)
		return 0;
	if (conf->poll_mode != RPCR_XPRT_POLL_ADAPTIVE &&
	    conf->poll_mode != RPCR_XPRT_POLL_INTERRUPT)
		return -EINVAL;
	if (!(p->info.caps & RPCR_RDEV_CAP_CQ_EVENT)) {
		XPRT_LOG(NOTICE, "poller %s: device %s cannot wake a poller: polling busily",
			 p->name, p->info.name);
		return 0;
	}
	cq_fd = rpcr_rdev_cq_event_fd(p->cq);
	if (cq_fd < 0)
		return cq_fd;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->epfd < 0 || p->wake_fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = watch(p->epfd, cq_fd);
	if (rc == 0)
		rc = watch(p->epfd, rpcr_rdev_event_fd(p->dev));
	if (rc == 0)
		rc = watch(p->epfd, p->wake_fd);
	if (rc != 0)
		goto fail;
	p->idle_tsc = xprt_us_to_tsc(p, conf->idle_us != 0 ? conf->idle_us : SLEEP_DEFAULT_IDLE_US);
	p->sleep_max_ms = (int)RTE_MIN(
		conf->sleep_max_ms != 0 ? conf->sleep_max_ms : SLEEP_DEFAULT_MAX_MS, SLEEP_MAX_MS);
	p->mode = (uint8_t)conf->poll_mode;
	return 0;
fail:
	xprt_sleep_fini(p);
	return rc;
}

void
xprt_sleep_fini(struct rpcr_xprt_poller *p)
{
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	p->epfd = -1;
	p->wake_fd = -1;
	p->mode = RPCR_XPRT_POLL_BUSY;
}

bool
xprt_sleep_due(struct rpcr_xprt_poller *p)
{
	uint64_t now;

	if (p->mode == RPCR_XPRT_POLL_INTERRUPT)
		return true;
	now = rte_rdtsc();
	if (p->idle_since == 0) {
		p->idle_since = now;
		return false;
	}
	return now - p->idle_since >= p->idle_tsc;
}

int
xprt_sleep_arm(struct rpcr_xprt_poller *p)
{
	int rc;

	__atomic_store_n(&p->asleep, 1, __ATOMIC_SEQ_CST);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!rte_ring_empty(p->ring) || __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&p->asleep, 0, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	rc = rpcr_rdev_cq_arm(p->cq);
	if (rc != 0) {
		__atomic_store_n(&p->asleep, 0, __ATOMIC_RELAXED);
		return rc;
	}
	return 0;
}

void
xprt_sleep_wait(struct rpcr_xprt_poller *p)
{
	struct epoll_event ev[4];
	uint64_t t0 = rte_rdtsc();
	int n;

	if (!rte_ring_empty(p->ring))
		return;
	n = epoll_wait(p->epfd, ev, RTE_DIM(ev),
		       p->nqueued != 0 || p->nwaiting != 0 ? SLEEP_WAITING_MS : p->sleep_max_ms);
	p->stats.sleeps++;
	p->stats.wakeups += n > 0;
	p->stats.sleep_us += (rte_rdtsc() - t0) * 1000000ull / p->tsc_hz;
}

void
xprt_sleep_disarm(struct rpcr_xprt_poller *p)
{
	uint64_t v;

	rpcr_rdev_cq_disarm(p->cq);
	__atomic_store_n(&p->asleep, 0, __ATOMIC_RELAXED);
	while (read(p->wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
	/* Timers at the next poll (it looks at the clock); polls spin again before the next
	 * sleep. */
	p->next_tick = 0;
	p->npolls |= 15;
	p->idle_since = 0;
}

void
xprt_poller_wake_slow(struct rpcr_xprt_poller *p)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&p->asleep, 0, __ATOMIC_SEQ_CST) != 0 &&
	    write(p->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		XPRT_LOG(DEBUG, "poller %s: wake-up: %s", p->name, strerror(errno));
}

void
rpcr_xprt_poller_wake(struct rpcr_xprt_poller *p)
{
	if (p != NULL)
		xprt_poller_kick(p);
}

enum rpcr_xprt_poll_mode
rpcr_xprt_poller_mode(const struct rpcr_xprt_poller *p)
{
	return (enum rpcr_xprt_poll_mode)p->mode;
}

int
rpcr_xprt_poller_set_poll_mode(struct rpcr_xprt_poller *p, enum rpcr_xprt_poll_mode mode)
{
	if (p == NULL || (unsigned int)mode > RPCR_XPRT_POLL_INTERRUPT)
		return -EINVAL;
	if (!xprt_on_owner(p) || p->in_poll)
		return -EBUSY;
	if (mode != RPCR_XPRT_POLL_BUSY && p->epfd < 0)
		return -ENOTSUP; /* (created busy, or on a device that cannot wake it) */
	p->mode = (uint8_t)mode;
	p->idle_since = 0;
	return 0;
}

int
rpcr_xprt_lcore_isolated(unsigned int lcore)
{
	rte_cpuset_t set;
	char buf[1024], *s, *save = NULL, *tok;
	unsigned int cpu = 0, i, n = 0;
	ssize_t len;
	int fd;

	if (lcore >= RTE_MAX_LCORE)
		return -EINVAL;
	set = rte_lcore_cpuset(lcore);
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &set)) {
			cpu = i;
			n++;
		}
	}
	if (n != 1)
		return 0;
	fd = open("/sys/devices/system/cpu/isolated", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -EIO;
	buf[len] = '\0';
	for (s = buf; (tok = strtok_r(s, ",\n", &save)) != NULL; s = NULL) {
		unsigned long lo, hi;
		char *end;

		lo = strtoul(tok, &end, 10);
		hi = *end == '-' ? strtoul(end + 1, NULL, 10) : lo;
		if (cpu >= lo && cpu <= hi)
			return 1;
	}
	return 0;
}

static const char *const mode_names[] = {
	[RPCR_XPRT_POLL_BUSY] = "busy",
	[RPCR_XPRT_POLL_ADAPTIVE] = "adaptive",
	[RPCR_XPRT_POLL_INTERRUPT] = "interrupt",
};

const char *
rpcr_xprt_poll_mode_name(enum rpcr_xprt_poll_mode mode)
{
	return (unsigned int)mode < RTE_DIM(mode_names) ? mode_names[mode] : "?";
}

int
rpcr_xprt_poll_mode_parse(const char *name)
{
	unsigned int i;

	for (i = 0; name != NULL && i < RTE_DIM(mode_names); i++)
		if (strcmp(name, mode_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}
