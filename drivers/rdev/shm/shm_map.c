/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Mappings of peers' files, one per file range in the process, shared by every connection that
 * maps it.
 *
 * Why: every connection of a peer process receives the same files (its regions, its key table,
 * the shared receive queue of the server's QPs). Mapped once per connection, 1000 connections of
 * one peer put the same memory at 1000 virtual addresses: each connection's Send then touches
 * its own page-table entries and TLB entries for the same buffers, and the many-connection rate
 * (test/perf/bench_scale.c) paid a TLB miss and a page walk for each (doc/xprt.md). Mapped once,
 * the buffers of all connections share the translations of one mapping.
 *
 * What is shared: a range is identified by its file (device and inode of the descriptor
 * received) and its offset and length. While mapped, the mapping holds the file, so its inode
 * cannot be reused for another file: equal keys are the same memory. What each connection may do
 * with the memory is still checked per connection (its peer's keys, its region table), exactly
 * as before; only the address the bytes are reached through is common.
 *
 * A peer's region is reached through the range's own descriptor (shm_map_get_region()), shared
 * too: 1000 connections' Sends into one peer's buffers then read one descriptor, which stays in
 * the caches, instead of 1000 (bench_scale). It lives as long as the mapping, unchanged.
 *
 * In order: shm_map_get() checks nothing about the file (the caller did, peer_fd_ok()), finds
 * the range or maps it (MAP_SHARED, read and write), and counts a reference; shm_map_put() drops
 * one and unmaps the range with its last. Both run on control paths (the device lock may be
 * held; this module's own lock is taken inside it and never held while taking another).
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <rte_log.h>

#include "shm_internal.h"

struct shm_map {
	struct shm_peer_region region; /* base and length: what shm_map_get_region() returns */
	TAILQ_ENTRY(shm_map) next;
	dev_t dev;
	ino_t ino;
	uint64_t off;
	uint32_t refs;
};

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, shm_map) maps = TAILQ_HEAD_INITIALIZER(maps);

static struct shm_map *
map_get(int fd, uint64_t off, size_t len)
{
	struct shm_map *m;
	struct stat st;
	void *p;

	if (fstat(fd, &st) != 0)
		return NULL;
	pthread_mutex_lock(&maps_lock);
	TAILQ_FOREACH (m, &maps, next) {
		if (m->dev == st.st_dev && m->ino == st.st_ino && m->off == off &&
		    m->region.len == len) {
			m->refs++;
			pthread_mutex_unlock(&maps_lock);
			return m;
		}
	}
	m = malloc(sizeof(*m));
	p = m == NULL ? MAP_FAILED
		      : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED) {
		int err = m == NULL ? ENOMEM : errno;

		pthread_mutex_unlock(&maps_lock);
		free(m);
		errno = err;
		return NULL;
	}
	*m = (struct shm_map){.region = {.base = p, .len = len},
			      .dev = st.st_dev,
			      .ino = st.st_ino,
			      .off = off,
			      .refs = 1};
	TAILQ_INSERT_HEAD(&maps, m, next);
	pthread_mutex_unlock(&maps_lock);
	return m;
}

void *
shm_map_get(int fd, uint64_t off, size_t len)
{
	struct shm_map *m = map_get(fd, off, len);

	return m != NULL ? m->region.base : NULL;
}

const struct shm_peer_region *
shm_map_get_region(int fd, uint64_t off, size_t len)
{
	struct shm_map *m = map_get(fd, off, len);

	return m != NULL ? &m->region : NULL;
}

void
shm_map_put(void *base)
{
	struct shm_map *m;

	if (base == NULL)
		return;
	pthread_mutex_lock(&maps_lock);
	TAILQ_FOREACH (m, &maps, next)
		if (m->region.base == base)
			break;
	if (m == NULL) {
		pthread_mutex_unlock(&maps_lock);
		SHM_LOG(ERR, "unmapping %p: not a peer's mapping", base);
		return;
	}
	if (--m->refs == 0) {
		TAILQ_REMOVE(&maps, m, next);
		munmap(m->region.base, m->region.len);
		free(m);
	}
	pthread_mutex_unlock(&maps_lock);
}

uint32_t
shm_map_count(void)
{
	struct shm_map *m;
	uint32_t n = 0;

	pthread_mutex_lock(&maps_lock);
	TAILQ_FOREACH (m, &maps, next)
		n++;
	pthread_mutex_unlock(&maps_lock);
	return n;
}
