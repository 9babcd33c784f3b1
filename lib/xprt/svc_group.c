/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Servers of several pollers: a listening server (the lead) and the members that joined it
 * (rpcr_svc_join()), one per other poller, each serving its own connections on its own thread.
 *
 * What happens, in order, for a connection request:
 *   1. the lead's poller takes it from its device handle (poller.c, step 6) and judges it: the
 *      group's connections (gconns) below max_conns, then the application's accept (svc.c);
 *   2. placement: the application's place, or round-robin over the lead and the members that
 *      are not leaving; the lead keeps it (step 3 on its own poller), or hands it, with the event
 *      copied, to the member's poller through that poller's ring (XPRT_RING_CONNREQ), under the
 *      group lock, so that a member that is leaving sees no more after it said so;
 *   3. the serving poller accepts it (xprt_svc_conn_accept()): a place among max_conns taken
 *      (gconns, atomic: the lead's check in 1 is only early), its QP made on its own device
 *      handle, rpcr_rdev_accept() moving the request there; the connection is that poller's
 *      alone from then on, and gives its place back when lost.
 *
 * A member being destroyed first says it is leaving (no more requests come to it; those on their
 * way are refused when its ring is drained), then tears down its connections (each giving its
 * place back to the lead), and only then leaves the lead's array: a lead with members left
 * cannot be destroyed (-EBUSY), so it outlives every place its members give back.
 *
 * The group lock is taken for a connection request placed elsewhere, a join and a leave: never
 * on the fast path.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "xprt_internal.h"

bool
xprt_svc_group_reserve(struct rpcr_svc *s)
{
	struct rpcr_svc *lead = s->lead;

	if (__atomic_fetch_add(&lead->gconns, 1, __ATOMIC_RELAXED) < lead->conf.max_conns)
		return true;
	__atomic_fetch_sub(&lead->gconns, 1, __ATOMIC_RELAXED);
	return false;
}

void
xprt_svc_group_release(struct rpcr_svc *s)
{
	__atomic_fetch_sub(&s->lead->gconns, 1, __ATOMIC_RELAXED);
}

/* The server of the group on poller @p (group lock held), or NULL. */
static struct rpcr_svc *
group_find(struct rpcr_svc *lead, const struct rpcr_xprt_poller *p)
{
	uint32_t i;

	if (p == lead->p)
		return lead;
	for (i = 0; i < lead->nmembers; i++)
		if (lead->members[i]->p == p)
			return lead->members[i];
	return NULL;
}

/* Round-robin over the lead and the members not leaving (group lock held). */
static struct rpcr_svc *
group_next(struct rpcr_svc *lead)
{
	uint32_t n = lead->nmembers + 1, k;

	for (k = 0; k < n; k++) {
		uint32_t i = lead->rr++ % n;
		struct rpcr_svc *m = i == 0 ? lead : lead->members[i - 1];

		if (!m->leaving)
			return m;
	}
	return lead;
}

bool
xprt_svc_group_place(struct rpcr_svc *s, const struct rpcr_rdev_event *ev)
{
	struct rpcr_xprt_poller *want = NULL;
	struct xprt_svc_handoff *h;
	struct rpcr_svc *to;

	if (__atomic_load_n(&s->nmembers, __ATOMIC_ACQUIRE) == 0)
		return false;
	if (s->conf.place != NULL)
		want = s->conf.place((const struct sockaddr *)&ev->peer, s->conf.place_arg);
	pthread_mutex_lock(&s->group_lock);
	to = want != NULL ? group_find(s, want) : group_next(s);
	if (to == s) {
		pthread_mutex_unlock(&s->group_lock);
		return false;
	}
	if (to == NULL || to->leaving) {
		pthread_mutex_unlock(&s->group_lock);
		XPRT_LOG(ERR, "%s: %s: connection refused: the server's place names %s, %s",
			 s->p->name, s->conf.addr, want->name,
			 to == NULL ? "which serves no member of it" : "whose member is leaving");
		s->p->stats.conns_refused++;
		rpcr_rdev_reject(ev->req, NULL, 0);
		return true;
	}
	/* (Under the lock to the end: the member, which leaves the group under it, and its
	 * poller are alive while it is held.) */
	h = malloc(sizeof(*h));
	if (h != NULL) {
		h->to = to;
		h->ev = *ev;
		if (rte_ring_mp_enqueue(to->p->ring, (void *)((uintptr_t)h | XPRT_RING_CONNREQ)) !=
		    0) {
			free(h);
			h = NULL;
		}
	}
	if (h != NULL) {
		xprt_poller_kick(to->p);
	} else {
		XPRT_LOG(WARNING, "%s: %s: connection refused: %s's ring is full", s->p->name,
			 s->conf.addr, to->p->name);
		s->p->stats.conns_refused++;
		rpcr_rdev_reject(ev->req, NULL, 0);
	}
	pthread_mutex_unlock(&s->group_lock);
	return true;
}

void
xprt_svc_group_take(struct xprt_svc_handoff *h)
{
	struct rpcr_svc *s = h->to;

	if (s->leaving) {
		s->p->stats.conns_refused++;
		rpcr_rdev_reject(h->ev.req, NULL, 0);
	} else {
		xprt_svc_conn_accept(s, &h->ev);
	}
	free(h);
}

struct rpcr_svc *
rpcr_svc_join(struct rpcr_svc *lead, struct rpcr_xprt_poller *p)
{
	struct rpcr_svc *s;

	/* (A member's poller on a handle of the lead's driver: rpcr_rdev_accept() moves the
	 * requests there.) */
	if (lead == NULL || p == NULL || lead->lead != lead || lead->listener == NULL ||
	    p == lead->p || strcmp(p->info.driver, lead->p->info.driver) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc("rpcr_svc", sizeof(*s), RTE_CACHE_LINE_SIZE);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* The lead's configuration and programs (its procedure tables, which outlive the member:
	 * the lead goes last), no listener, no fini. */
	s->p = p;
	s->lead = lead;
	s->conf = lead->conf;
	memcpy(s->addr, lead->addr, sizeof(s->addr));
	s->conf.addr = s->addr;
	pthread_mutex_lock(&lead->group_lock);
	if (group_find(lead, p) != NULL || lead->nmembers == XPRT_SVC_MEMBERS) {
		rte_errno = lead->nmembers == XPRT_SVC_MEMBERS ? ENOSPC : EINVAL;
		pthread_mutex_unlock(&lead->group_lock);
		rte_free(s);
		return NULL;
	}
	s->nprogs = lead->nprogs;
	memcpy(s->progs, lead->progs, sizeof(s->progs));
	TAILQ_INSERT_TAIL(&p->svcs, s, next);
	xprt_srq_svc_add(p, s->conf.max_conns);
	lead->members[lead->nmembers] = s;
	__atomic_store_n(&lead->nmembers, lead->nmembers + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lead->group_lock);
	XPRT_LOG(INFO, "%s: %s: serves connections of %s's server too", p->name, s->addr,
		 lead->p->name);
	return s;
}

int
xprt_svc_group_leave(struct rpcr_svc *s)
{
	struct rpcr_svc *lead = s->lead;
	int rc = 0;

	if (lead == NULL)
		return 0;
	pthread_mutex_lock(&lead->group_lock);
	if (lead == s)
		rc = lead->nmembers != 0 ? -EBUSY : 0;
	else
		s->leaving = true;
	pthread_mutex_unlock(&lead->group_lock);
	if (rc != 0)
		XPRT_LOG(NOTICE, "%s: %s: not destroyed: %u members serve its connections still",
			 s->p->name, s->addr, lead->nmembers);
	return rc;
}

void
xprt_svc_group_gone(struct rpcr_svc *s)
{
	struct rpcr_svc *lead = s->lead;
	uint32_t i;

	if (lead == NULL)
		return;
	if (lead == s) {
		pthread_mutex_destroy(&s->group_lock);
		return;
	}
	pthread_mutex_lock(&lead->group_lock);
	for (i = 0; i < lead->nmembers; i++)
		if (lead->members[i] == s)
			break;
	if (i < lead->nmembers) {
		memmove(&lead->members[i], &lead->members[i + 1],
			sizeof(lead->members[0]) * (lead->nmembers - i - 1));
		__atomic_store_n(&lead->nmembers, lead->nmembers - 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lead->group_lock);
}
