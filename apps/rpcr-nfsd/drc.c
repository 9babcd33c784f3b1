/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The duplicate request cache: the replies of the procedures that must not run twice (SETATTR,
 * CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK), so that a call the client sends
 * again after a lost reply (RPC-over-RDMA clients resend every call outstanding on a lost
 * connection, with its xid) gets the first execution's answer rather than a second execution's
 * (EXIST for a GUARDED CREATE, NOENT for a REMOVE). Keyed as Linux's nfsd keys its cache: the
 * client's address (without the port: a new RDMA-CM connection has a new one), the xid, the
 * procedure, the arguments' length and a checksum of them. Buckets of four entries: a new
 * reply replaces the oldest of its bucket; the poller's thread only.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_jhash.h>

#include "nfsd.h"

struct nfsd_drc_entry {
	uint8_t addr[16]; /* IPv4 (first 4 bytes) or IPv6 */
	uint16_t family;  /* the key's (address family + 1); 0: slot empty */
	uint16_t len;     /* reply bytes */
	uint32_t xid;
	uint32_t proc;
	uint32_t arglen;
	uint32_t csum;
	uint64_t seq; /* when it was kept (the oldest of a bucket goes first) */
	uint8_t reply[NFSD_DRC_REPLY_MAX];
};

int
nfsd_drc_init(struct nfsd_drc *d, uint32_t entries)
{
	memset(d, 0, sizeof(*d));
	if (entries == 0)
		return 0;
	if (!rte_is_power_of_2(entries) || entries < NFSD_DRC_WAYS || entries > (1u << 20))
		return -EINVAL;
	d->e = calloc(entries, sizeof(*d->e));
	if (d->e == NULL)
		return -ENOMEM;
	d->mask = entries - 1;
	return 0;
}

void
nfsd_drc_fini(struct nfsd_drc *d)
{
	free(d->e);
	d->e = NULL;
}

bool
nfsd_drc_proc(uint32_t proc)
{
	/* SETATTR, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK */
	return proc == 2 || (proc >= 8 && proc <= 15);
}

void
nfsd_drc_key(struct nfsd_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t proc,
	     const void *args, uint32_t arglen)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint16_t)(peer->sa_family + 1); /* (never 0: 0 marks an empty slot) */
	if (peer->sa_family == AF_INET)
		memcpy(k->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	else if (peer->sa_family == AF_INET6)
		memcpy(k->addr, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
	k->xid = xid;
	k->proc = proc;
	k->arglen = arglen;
	k->csum = rte_jhash(args, arglen, proc);
}

/* The first of @k's bucket's NFSD_DRC_WAYS entries. */
static struct nfsd_drc_entry *
bucket(const struct nfsd_drc *d, const struct nfsd_drc_key *k)
{
	uint32_t h = rte_jhash(k->addr, sizeof(k->addr), k->xid ^ k->csum);

	return &d->e[h & d->mask & ~(NFSD_DRC_WAYS - 1)];
}

static bool
same(const struct nfsd_drc_entry *e, const struct nfsd_drc_key *k)
{
	return e->family == k->family && e->xid == k->xid && e->proc == k->proc &&
	       e->arglen == k->arglen && e->csum == k->csum &&
	       memcmp(e->addr, k->addr, sizeof(e->addr)) == 0;
}

const uint8_t *
nfsd_drc_lookup(struct nfsd_drc *d, const struct nfsd_drc_key *k, uint32_t *len)
{
	const struct nfsd_drc_entry *e;
	uint32_t i;

	if (d->e == NULL)
		return NULL;
	e = bucket(d, k);
	for (i = 0; i < NFSD_DRC_WAYS; i++, e++)
		if (e->family != 0 && same(e, k)) {
			d->hits++;
			*len = e->len;
			return e->reply;
		}
	return NULL;
}

void
nfsd_drc_store(struct nfsd_drc *d, const struct nfsd_drc_key *k, const void *reply, uint32_t len)
{
	struct nfsd_drc_entry *e, *b;
	uint32_t i;

	if (d->e == NULL)
		return;
	if (len > NFSD_DRC_REPLY_MAX) {
		d->too_big++;
		return;
	}
	b = bucket(d, k);
	e = b;
	for (i = 0; i < NFSD_DRC_WAYS; i++) {
		if (b[i].family == 0) {
			e = &b[i];
			break;
		}
		if (b[i].seq < e->seq)
			e = &b[i];
	}
	if (e->family != 0)
		d->evicted++;
	e->seq = ++d->seq;
	e->family = k->family;
	memcpy(e->addr, k->addr, sizeof(e->addr));
	e->xid = k->xid;
	e->proc = k->proc;
	e->arglen = k->arglen;
	e->csum = k->csum;
	e->len = (uint16_t)len;
	memcpy(e->reply, reply, len);
	d->stored++;
}
