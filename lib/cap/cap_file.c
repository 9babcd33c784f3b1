/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * pcapng files (rpcr_cap.h). rte_pcapng writes the section header block and formats the
 * enhanced packet blocks; this file writes what DPDK 22.11 ties to ethdev ports: interface
 * description blocks (rte_pcapng_fdopen() writes one per ethdev port, and there is no other
 * way to add one), the interface of each packet block (rte_pcapng_write_packets() takes it
 * from a table of ethdev ports), and interface statistics blocks (rte_pcapng_write_stats()
 * wants an ethdev port). Block layouts: draft-tuexen-opsawg-pcapng, sections 4.2, 4.3, 4.6.
 */

/* rte_pcapng is experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pcapng.h>

#include "rpcr_cap.h"

#define BT_IDB            0x00000001u /* interface description block */
#define BT_ISB            0x00000005u /* interface statistics block */

#define OPT_END           0
#define OPT_COMMENT       1
#define IF_NAME           2
#define IF_DESCR          3
#define IF_TSRESOL        9
#define ISB_START         2
#define ISB_END           3
#define ISB_IFRECV        4
#define ISB_IFDROP        5

#define LINKTYPE_ETHERNET 1u

/* The enhanced packet block's fixed part, as rte_pcapng_copy() lays it out. */
#define EPB_IFACE    8u  /* interface id */
#define EPB_TIME     12u /* timestamp, high word then low */
#define EPB_ORIG_LEN 24u /* original packet length */

#define BLOCK_MAX    2048u /* an interface or statistics block, options included */
#define IOV_BURST    64u

struct rpcr_cap_file {
	rte_pcapng_t *pcapng;
	int fd;
	uint32_t nifaces;
	uint64_t bytes;
};

/* A block being built: its words, little-endian as this host writes them. */
struct block {
	uint8_t b[BLOCK_MAX];
	uint32_t len;
};

static void
put32(struct block *k, uint32_t v)
{
	if (k->len + 4 <= sizeof(k->b))
		memcpy(k->b + k->len, &v, 4);
	k->len += 4;
}

static void
opt(struct block *k, uint16_t code, const void *v, uint16_t len)
{
	uint32_t pad = (4 - len % 4) % 4;

	if (k->len + 4 + len + pad > sizeof(k->b)) {
		k->len += 4 + len + pad; /* too long: the block is refused */
		return;
	}
	memcpy(k->b + k->len, &code, 2);
	memcpy(k->b + k->len + 2, &len, 2);
	if (len != 0)
		memcpy(k->b + k->len + 4, v, len);
	memset(k->b + k->len + 4 + len, 0, pad);
	k->len += 4 + len + pad;
}

static void
opt_str(struct block *k, uint16_t code, const char *s)
{
	size_t n;

	if (s == NULL || s[0] == '\0')
		return;
	n = RTE_MIN(strlen(s), (size_t)1024);
	opt(k, code, s, (uint16_t)n);
}

/* Close the block: the end option (when @p opts), the total length at both ends; write it. */
static int
block_write(struct rpcr_cap_file *f, struct block *k, bool opts)
{
	uint32_t total;
	ssize_t w;

	if (opts)
		opt(k, OPT_END, NULL, 0);
	total = k->len + 4;
	if (total > sizeof(k->b))
		return -E2BIG;
	memcpy(k->b + 4, &total, 4);
	put32(k, total);
	w = write(f->fd, k->b, k->len);
	if (w != (ssize_t)k->len)
		return w < 0 ? -errno : -EIO;
	f->bytes += (uint64_t)w;
	return 0;
}

struct rpcr_cap_file *
rpcr_cap_file_open(const char *path, const char *app, const char *comment)
{
	struct rpcr_cap_file *f;
	uint16_t port;
	off_t end;

	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		rte_errno = errno;
		free(f);
		return NULL;
	}
	f->pcapng = rte_pcapng_fdopen(f->fd, NULL, NULL, app, comment);
	if (f->pcapng == NULL) {
		close(f->fd);
		free(f);
		return NULL;
	}
	/* (rte_pcapng_fdopen() wrote an interface per ethdev port: the first indexes are theirs.) */
	end = lseek(f->fd, 0, SEEK_END);
	f->bytes = end > 0 ? (uint64_t)end : 0;
	RTE_ETH_FOREACH_DEV(port)
	f->nifaces++;
	return f;
}

int
rpcr_cap_file_iface(struct rpcr_cap_file *f, const char *name, const char *descr,
		    const char *comment, uint32_t snap)
{
	struct block k = {.len = 0};
	uint8_t tsresol = 9; /* nanoseconds */
	int rc;

	put32(&k, BT_IDB);
	put32(&k, 0);                 /* total length, at the end */
	put32(&k, LINKTYPE_ETHERNET); /* link type, then 16 reserved bits */
	put32(&k, snap);
	opt_str(&k, IF_NAME, name);
	opt_str(&k, IF_DESCR, descr);
	opt(&k, IF_TSRESOL, &tsresol, 1);
	opt_str(&k, OPT_COMMENT, comment);
	rc = block_write(f, &k, true);
	if (rc < 0)
		return rc;
	return (int)f->nifaces++;
}

struct rte_mbuf *
rpcr_cap_file_block(struct rpcr_cap_file *f, uint32_t iface, const struct rte_mbuf *m,
		    struct rte_mempool *mp, uint32_t orig_len, uint64_t ns, bool out,
		    uint32_t queue)
{
	uint32_t ts[2] = {(uint32_t)(ns >> 32), (uint32_t)ns};
	struct rte_mbuf *b;
	uint8_t *epb;

	RTE_SET_USED(f);
	b = rte_pcapng_copy(0, queue, m, mp, UINT32_MAX, rte_get_tsc_cycles(),
			    out ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);
	if (b == NULL) {
		rte_errno = ENOBUFS;
		return NULL;
	}
	epb = rte_pktmbuf_mtod(b, uint8_t *);
	memcpy(epb + EPB_IFACE, &iface, 4);
	memcpy(epb + EPB_TIME, ts, sizeof(ts));
	orig_len = RTE_MAX(orig_len, rte_pktmbuf_pkt_len(m));
	memcpy(epb + EPB_ORIG_LEN, &orig_len, 4);
	return b;
}

ssize_t
rpcr_cap_file_write(struct rpcr_cap_file *f, struct rte_mbuf **blocks, uint16_t n)
{
	struct iovec iov[IOV_BURST];
	uint32_t cnt = 0, want = 0;
	ssize_t total = 0, w;
	int err = 0;
	uint16_t i;

	for (i = 0; i <= n; i++) {
		struct rte_mbuf *s;

		/* Written when the vector is full or at the end, the blocks freed after. */
		if (i == n || cnt + blocks[i]->nb_segs > IOV_BURST) {
			if (cnt != 0 && err == 0) {
				w = writev(f->fd, iov, (int)cnt);
				if (w < 0)
					err = errno;
				else if ((uint32_t)w != want)
					err = EIO;
				else
					total += w;
			}
			cnt = 0;
			want = 0;
			if (i == n)
				break;
		}
		for (s = blocks[i]; s != NULL; s = s->next) {
			iov[cnt].iov_base = rte_pktmbuf_mtod(s, void *);
			iov[cnt].iov_len = s->data_len;
			want += s->data_len;
			cnt++;
		}
	}
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(blocks[i]);
	f->bytes += (uint64_t)total;
	if (err != 0) {
		rte_errno = err;
		return -1;
	}
	return total;
}

int
rpcr_cap_file_stats(struct rpcr_cap_file *f, uint32_t iface, uint64_t start_ns, uint64_t end_ns,
		    uint64_t recv, uint64_t drop, const char *comment)
{
	struct block k = {.len = 0};

	put32(&k, BT_ISB);
	put32(&k, 0);
	put32(&k, iface);
	put32(&k, (uint32_t)(end_ns >> 32));
	put32(&k, (uint32_t)end_ns);
	opt_str(&k, OPT_COMMENT, comment);
	if (start_ns != 0) {
		uint32_t t[2] = {(uint32_t)(start_ns >> 32), (uint32_t)start_ns};

		opt(&k, ISB_START, t, sizeof(t));
	}
	if (end_ns != 0) {
		uint32_t t[2] = {(uint32_t)(end_ns >> 32), (uint32_t)end_ns};

		opt(&k, ISB_END, t, sizeof(t));
	}
	opt(&k, ISB_IFRECV, &recv, sizeof(recv));
	opt(&k, ISB_IFDROP, &drop, sizeof(drop));
	return block_write(f, &k, true);
}

uint32_t
rpcr_cap_file_mbuf_size(uint32_t frame_len)
{
	return rte_pcapng_mbuf_size(frame_len) + RTE_PKTMBUF_HEADROOM;
}

uint64_t
rpcr_cap_file_bytes(const struct rpcr_cap_file *f)
{
	return f->bytes;
}

int
rpcr_cap_file_close(struct rpcr_cap_file *f)
{
	int rc = 0;

	if (f == NULL)
		return 0;
	if (fsync(f->fd) != 0 && errno != EINVAL)
		rc = -errno;
	rte_pcapng_close(f->pcapng); /* closes the descriptor */
	free(f);
	return rc;
}
