/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Arenas: file-backed memory (hugepages when available), each a DPDK external malloc heap and a
 * lib/rdev shareable region.
 *
 * Backing, in order of preference: a memfd of hugepages (MFD_HUGETLB, no mount needed); a
 * hugetlbfs file from libhugetlbfs (needs a hugetlbfs mount, which usertools/rpcr-setup.sh
 * makes; used where hugetlb memfds are not available); an ordinary memfd, with a warning, when no
 * hugepages are reserved. Memfds are sealed against resizing, so that a peer process that maps
 * the arena (shm driver) can trust its size; hugetlbfs files cannot be sealed (doc/rdev.md).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_string_fns.h>

#ifdef RPCR_HAVE_HUGETLBFS
#include <hugetlbfs.h>
#endif

#include "rpcr_mem.h"

RTE_LOG_REGISTER(rpcr_mem_logtype, rpcr.mem, INFO);
#define MEM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, rpcr_mem_logtype, "mem: " fmt "\n", ##__VA_ARGS__)

/* DPDK keeps heap names to 32 bytes (RTE_HEAP_NAME_MAX_LEN, not exported). */
#define ARENA_NAME_MAX 32

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004u
#endif

struct rpcr_mem_arena {
	char name[ARENA_NAME_MAX];
	uint8_t *base;
	size_t len;
	size_t page;
	int fd;
	bool huge;
	int region;
	int socket;
};

static size_t
round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* Size @fd to @len, seal its size when it can be sealed, and map it shared, faulting it in now
 * when @populate (hugepages are reserved at mmap time, so a shortage shows here rather than as
 * SIGBUS later). */
static void *
map_fd(int fd, size_t len, bool populate, bool seal)
{
	void *p;

	if (ftruncate(fd, (off_t)len) != 0)
		return NULL;
	if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd,
		 0);
	return p == MAP_FAILED ? NULL : p;
}

static long
huge_page_size(void)
{
#ifdef RPCR_HAVE_HUGETLBFS
	return gethugepagesize();
#else
	long sz = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Hugepagesize: %ld kB", &sz) == 1)
			sz *= 1024;
	if (f != NULL)
		fclose(f);
	return sz;
#endif
}

/* Try the backings in order; fill a->fd, base, len, page, huge. */
static int
arena_back(struct rpcr_mem_arena *a, size_t len, unsigned int flags)
{
	long hp = (flags & RPCR_MEM_ARENA_F_NO_HUGE) ? 0 : huge_page_size();
	int fd;

	if (hp > 0) {
		size_t hlen = round_up(len, (size_t)hp);

		fd = memfd_create(a->name, MFD_CLOEXEC | MFD_HUGETLB | MFD_ALLOW_SEALING);
		if (fd >= 0) {
			a->base = map_fd(fd, hlen, true, true);
			if (a->base != NULL)
				goto huge;
			close(fd);
		}
#ifdef RPCR_HAVE_HUGETLBFS
		fd = hugetlbfs_unlinked_fd_for_size(hp);
		if (fd >= 0) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			a->base = map_fd(fd, hlen, true, false);
			if (a->base != NULL)
				goto huge;
			close(fd);
		}
#endif
		MEM_LOG(WARNING,
			"arena %s: no %ld kB hugepages for %zu bytes (reserve them with "
			"usertools/rpcr-setup.sh or /proc/sys/vm/nr_hugepages): using ordinary "
			"shared memory",
			a->name, hp / 1024, hlen);
	}
	a->page = (size_t)sysconf(_SC_PAGESIZE);
	a->len = round_up(len, a->page);
	fd = memfd_create(a->name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	a->base = map_fd(fd, a->len, false, true);
	if (a->base == NULL) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	a->fd = fd;
	a->huge = false;
	return 0;

huge:
	a->fd = fd;
	a->page = (size_t)hp;
	a->len = round_up(len, (size_t)hp);
	a->huge = true;
	return 0;
}

struct rpcr_mem_arena *
rpcr_mem_arena_create(const char *name, size_t len, unsigned int flags)
{
	struct rpcr_mem_arena *a;
	rte_iova_t *iova = NULL;
	size_t n, i;
	int rc;

	if (name == NULL || len == 0 || (flags & ~RPCR_MEM_ARENA_F_NO_HUGE) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_strscpy(a->name, name, sizeof(a->name)) < 0) {
		free(a);
		rte_errno = EINVAL;
		return NULL;
	}
	a->fd = -1;
	a->region = -1;
	rc = arena_back(a, len, flags);
	if (rc != 0)
		goto out_free;

	/* The heap: IOVA is the virtual address (rpcr runs the EAL with --iova-mode=va; RDMA
	 * devices translate virtual addresses themselves). */
	n = a->len / a->page;
	iova = malloc(n * sizeof(*iova));
	if (iova == NULL) {
		rc = -ENOMEM;
		goto out_unmap;
	}
	for (i = 0; i < n; i++)
		iova[i] = (rte_iova_t)(uintptr_t)(a->base + i * a->page);
	if (rte_malloc_heap_create(a->name) != 0) {
		rc = -rte_errno;
		goto out_unmap;
	}
	if (rte_malloc_heap_memory_add(a->name, a->base, a->len, iova, (unsigned int)n, a->page) !=
	    0) {
		rc = -rte_errno;
		goto out_heap;
	}
	a->socket = rte_malloc_heap_get_socket(a->name);
	a->region = rpcr_rdev_region_add(a->base, a->len, a->fd, 0, a->huge);
	if (a->region < 0) {
		rc = a->region;
		goto out_mem;
	}
	free(iova);
	MEM_LOG(DEBUG, "arena %s: %zu bytes of %s pages at %p", a->name, a->len,
		a->huge ? "huge" : "small", (void *)a->base);
	return a;

out_mem:
	rte_malloc_heap_memory_remove(a->name, a->base, a->len);
out_heap:
	rte_malloc_heap_destroy(a->name);
out_unmap:
	free(iova);
	munmap(a->base, a->len);
	close(a->fd);
out_free:
	free(a);
	rte_errno = -rc;
	return NULL;
}

int
rpcr_mem_arena_free(struct rpcr_mem_arena *a)
{
	if (a == NULL)
		return -EINVAL;
	/* Fails while allocations from the heap remain. */
	if (rte_malloc_heap_memory_remove(a->name, a->base, a->len) != 0)
		return rte_errno == EBUSY ? -EBUSY : -rte_errno;
	rpcr_rdev_region_del(a->region);
	rte_malloc_heap_destroy(a->name);
	munmap(a->base, a->len);
	close(a->fd);
	free(a);
	return 0;
}

int
rpcr_mem_arena_socket(const struct rpcr_mem_arena *a)
{
	return a->socket;
}

size_t
rpcr_mem_arena_free_bytes(const struct rpcr_mem_arena *a)
{
	struct rte_malloc_socket_stats st;

	if (a == NULL || rte_malloc_get_socket_stats(a->socket, &st) != 0)
		return 0;
	return st.heap_freesz_bytes;
}

void *
rpcr_mem_arena_alloc(struct rpcr_mem_arena *a, size_t len, size_t align)
{
	return rte_malloc_socket(a->name, len, (unsigned int)align, a->socket);
}

void *
rpcr_mem_arena_base(const struct rpcr_mem_arena *a)
{
	return a->base;
}

size_t
rpcr_mem_arena_len(const struct rpcr_mem_arena *a)
{
	return a->len;
}

size_t
rpcr_mem_arena_page_size(const struct rpcr_mem_arena *a)
{
	return a->page;
}

bool
rpcr_mem_arena_hugepage(const struct rpcr_mem_arena *a)
{
	return a->huge;
}
