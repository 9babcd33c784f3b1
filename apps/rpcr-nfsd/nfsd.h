/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_NFSD_H
#define RPCR_NFSD_H

/*
 * rpcr-nfsd: an NFSv3 server (RFC 1813) over RPC-over-RDMA (RFC 8267's binding), on the public
 * rpcr API. The store (store.c) is an in-memory file system whose file data lives in the
 * poller's registered buffers: WRITE keeps the bulk buffers a read chunk was read into, READ
 * attaches them to the reply (no copy either way). The store is touched by the poller's lcore
 * only; the MOUNT thread (mount.c) needs nothing of it but the root handle, which never changes.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_mbuf.h>

#include <rpcr_xprt.h>

#define NFSD_PROG     100003u
#define NFSD_V3       3u
#define NFSD_MNT_PROG 100005u
#define NFSD_MNT_V3   3u

#define NFSD_FH_LEN   16u  /* fsid magic, inode number, generation, padding */
#define NFSD_NAME_MAX 255u /* NFS3 name length this server accepts */
#define NFSD_PATH_MAX 4096u
#define NFSD_FILE_MAX (1ull << 40) /* largest file offset */
#define NFSD_IO_MAX   (1u << 20)   /* rtmax, wtmax */
#define NFSD_IO_PREF  (1u << 18)   /* rtpref, wtpref unless --io-pref says otherwise */

/* ftype3 */
enum nfsd_type {
	NFSD_REG = 1,
	NFSD_DIR = 2,
	NFSD_LNK = 5,
};

/* nfsstat3 values the server returns. */
enum nfsd_stat {
	NFS3_OK = 0,
	NFS3ERR_PERM = 1,
	NFS3ERR_NOENT = 2,
	NFS3ERR_IO = 5,
	NFS3ERR_ACCES = 13,
	NFS3ERR_EXIST = 17,
	NFS3ERR_XDEV = 18,
	NFS3ERR_NOTDIR = 20,
	NFS3ERR_ISDIR = 21,
	NFS3ERR_INVAL = 22,
	NFS3ERR_FBIG = 27,
	NFS3ERR_NOSPC = 28,
	NFS3ERR_ROFS = 30,
	NFS3ERR_MLINK = 31,
	NFS3ERR_NAMETOOLONG = 63,
	NFS3ERR_NOTEMPTY = 66,
	NFS3ERR_STALE = 70,
	NFS3ERR_BADHANDLE = 10001,
	NFS3ERR_NOT_SYNC = 10002,
	NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004,
	NFS3ERR_TOOSMALL = 10005,
	NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007,
};

/* A piece of a file's data: @len bytes at file offset @off, held in buffer @m (one reference). */
struct nfsd_extent {
	uint64_t off;
	uint8_t *data;
	struct rte_mbuf *m;
	uint32_t len;
};

/* A directory entry; cookies grow with each entry added, so a cookie stays valid. */
struct nfsd_dirent {
	char *name;
	uint32_t ino;
	uint64_t cookie;
};

struct nfsd_inode {
	uint32_t ino;
	uint32_t gen;
	bool used;
	uint32_t type; /* enum nfsd_type */
	uint32_t mode; /* permission bits (07777) */
	uint32_t nlink;
	uint32_t uid, gid;
	uint64_t size;
	struct timespec atime, mtime, ctime;
	/* Directory. */
	uint32_t parent;
	struct nfsd_dirent *ents;
	uint32_t nents, ents_cap;
	uint64_t next_cookie;
	/* Regular file. */
	struct nfsd_extent *ext;
	uint32_t next, ext_cap;
	uint64_t stored; /* bytes held in extents */
	/* Symbolic link. */
	char *target;
	/* Made by CREATE EXCLUSIVE with this verifier, and not changed by SETATTR since. */
	bool excl;
	uint64_t excl_verf;
};

/* Attributes to set (sattr3). */
struct nfsd_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	uint32_t set_atime, set_mtime; /* 0 don't change, 1 server time, 2 client time */
	struct timespec atime, mtime;
};

/*
 * What the store needs of each poller serving it (a server of several pollers, rpcr_svc_join()):
 * message buffers to build replies from, its bulk pool (WRITE data it may keep), and keys of its
 * protection domain for the whole arena, which holds every buffer the store keeps (any poller's
 * bulk buffers, the store's own, the zeros): a READ served by that poller sends from them with
 * these keys.
 */
struct nfsd_view {
	struct rpcr_xprt_poller *p;
	struct rpcr_chunk_pool *msgpool;
	struct rte_mempool *bulk_mp;
	struct rpcr_rdev_mr *arena_mr; /* NULL: one poller (a buffer's own keys are used) */
};

#define NFSD_MAX_POLLERS 16

struct nfsd_store {
	struct nfsd_inode **tab; /* by inode number; 0 unused, 1 the root */
	uint32_t n, cap;
	uint32_t *free_ino;
	uint32_t nfree;
	uint32_t files;                    /* inodes in use */
	uint64_t bytes;                    /* file bytes held */
	struct rpcr_chunk_pool *msgpool;   /* the poller's message buffers (views, READLINK) */
	struct rpcr_chunk_pool *smallpool; /* the store's own 4 KiB buffers: inline WRITE data */
	struct rpcr_chunk_pool *bulkpool;
	struct rte_mempool *bulk_mp;
	uint32_t bulk_total; /* bulk buffers in the poller (FSSTAT's capacity) */
	uint8_t *zero;       /* registered zeros, for holes */
	struct rpcr_mem_reg *zero_reg;
	struct rpcr_mem_cache *mc;
	uint64_t adopted, copied; /* WRITE bytes kept in place / copied (inline data) */
	struct rpcr_mem_arena *arena;
	struct nfsd_view views[NFSD_MAX_POLLERS]; /* [0]: the poller of nfsd_store_init() */
	uint32_t nviews;
};

int nfsd_store_init(struct nfsd_store *st, struct rpcr_xprt_poller *p, struct rpcr_mem_arena *a,
		    uint32_t bulk_total, uint32_t small_bufs);
void nfsd_store_fini(struct nfsd_store *st);
/* Serve the store from poller @p too (before it serves calls): 0, -ENOSPC, -rte_errno. */
int nfsd_store_add_poller(struct nfsd_store *st, struct rpcr_xprt_poller *p, uint32_t bulk_total);
/* The view of the poller serving @r. */
const struct nfsd_view *nfsd_store_view(const struct nfsd_store *st, struct rpcr_svc_req *r);
/* Bulk buffers free, all pollers together. */
uint64_t nfsd_store_bulk_avail(const struct nfsd_store *st);
struct nfsd_inode *nfsd_store_get(struct nfsd_store *st, uint32_t ino, uint32_t gen);
struct nfsd_inode *nfsd_store_ino(struct nfsd_store *st, uint32_t ino);
struct nfsd_inode *nfsd_store_new(struct nfsd_store *st, uint32_t type, uint32_t mode, uint32_t uid,
				  uint32_t gid);
void nfsd_store_put(struct nfsd_store *st, struct nfsd_inode *in); /* nlink dropped to 0 */
struct nfsd_dirent *nfsd_dir_find(struct nfsd_inode *dir, const char *name, uint32_t len);
int nfsd_dir_add(struct nfsd_store *st, struct nfsd_inode *dir, const char *name, uint32_t len,
		 struct nfsd_inode *in);
void nfsd_dir_del(struct nfsd_inode *dir, struct nfsd_dirent *e);
int nfsd_file_write(struct nfsd_store *st, struct nfsd_inode *in, uint64_t off,
		    const struct rpcr_bulk *b);
int nfsd_file_truncate(struct nfsd_store *st, struct nfsd_inode *in, uint64_t size);
struct rte_mbuf *nfsd_file_read(struct nfsd_store *st, const struct nfsd_view *v,
				struct nfsd_inode *in, uint64_t off, uint32_t len);
void nfsd_touch(struct timespec *t);

/* Export and server configuration, shared by the NFS and MOUNT sides. */
struct nfsd_cidr {
	uint32_t net, mask; /* IPv4, host order */
};

struct nfsd_export {
	char path[256];
	bool ro;
	struct nfsd_cidr allow[16];
	uint32_t nallow; /* 0: everyone */
	uint8_t root_fh[NFSD_FH_LEN];
};

bool nfsd_export_allows(const struct nfsd_export *x, uint32_t addr);

/* Per-procedure counters (telemetry /rpcr_nfsd/procs). */
struct nfsd_counters {
	uint64_t calls[22];
	uint64_t errors[22]; /* answered with a status other than NFS3_OK */
	uint64_t garbage;    /* GARBAGE_ARGS replies */
	uint64_t badcred;    /* MSG_DENIED AUTH_BADCRED replies (flavour not served) */
	uint64_t refused;    /* RDMA connections refused (--allow) */
	uint64_t read_bytes, write_bytes;
};

extern const char *const nfsd_proc_names[22];

/* The duplicate request cache (drc.c). */
#define NFSD_DRC_REPLY_MAX 320u  /* larger replies are not kept (none of the cached procedures') */
#define NFSD_DRC_ENTRIES   4096u /* default --drc */
#define NFSD_DRC_WAYS      4u    /* entries a bucket */

struct nfsd_drc_entry;

struct nfsd_drc {
	struct nfsd_drc_entry *e; /* NULL: no cache (--drc 0) */
	uint32_t mask;
	uint64_t hits;    /* calls answered from the cache */
	uint64_t stored;  /* replies kept */
	uint64_t evicted; /* entries replaced by another's */
	uint64_t too_big; /* replies over NFSD_DRC_REPLY_MAX, not kept */
	uint64_t seq;     /* replies kept so far (entries' ages) */
};

struct nfsd_drc_key {
	uint8_t addr[16];
	uint16_t family;
	uint32_t xid, proc, arglen, csum;
};

/* @entries: a power of two from NFSD_DRC_WAYS, or 0 (no cache). @return 0, -EINVAL, -ENOMEM. */
int nfsd_drc_init(struct nfsd_drc *d, uint32_t entries);
void nfsd_drc_fini(struct nfsd_drc *d);
/* Whether procedure @proc's replies are kept. */
bool nfsd_drc_proc(uint32_t proc);
void nfsd_drc_key(struct nfsd_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t proc,
		  const void *args, uint32_t arglen);
/* The kept reply of the call @k (its bytes and *@len), or NULL. */
const uint8_t *nfsd_drc_lookup(struct nfsd_drc *d, const struct nfsd_drc_key *k, uint32_t *len);
void nfsd_drc_store(struct nfsd_drc *d, const struct nfsd_drc_key *k, const void *reply,
		    uint32_t len);

struct nfsd {
	struct nfsd_store st;
	/* Several pollers: the store, the duplicate request cache and the counters are shared, each
	 * procedure runs under this lock (nfs3.c's table of locked handlers). */
	pthread_mutex_t lock;
	struct nfsd_export *x;
	struct nfsd_counters cnt;
	uint32_t write_verf[2];
	uint32_t io_pref; /* FSINFO rtpref/wtpref: the Linux client's default rsize/wsize */
	struct nfsd_drc drc;
};

/* The handle of inode @ino, generation @gen (NFSD_FH_LEN bytes). */
void nfsd_fh_make(uint8_t *fh, uint32_t ino, uint32_t gen);

/* Register NFSv3 on @s; @shared: several pollers serve it (each procedure under nd->lock). */
int nfsd_nfs3_register(struct rpcr_svc *s, struct nfsd *nd, bool shared);

/* MOUNT v3 over TCP on @port, in a thread of its own. */
int nfsd_mount_start(const struct nfsd_export *x, uint16_t port);

#endif /* RPCR_NFSD_H */
