/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * NFSv3 (RFC 1813) on the in-memory store, and its upper-layer binding (RFC 8267 §4): WRITE's
 * data is a DDP-eligible argument, READ's data and READLINK's path DDP-eligible results. Every
 * handler decodes all of its arguments before it changes anything; arguments that do not decode
 * get GARBAGE_ARGS. Results are encoded with the lib/xdr cursors; an encoder that runs out of
 * room (which the reply sizes below never should) gets SYSTEM_ERR.
 */

#include <errno.h>
#include <string.h>

#include "nfsd.h"

#define FH_MAGIC 0x72706e66u /* "rpnf" */

const char *const nfsd_proc_names[22] = {
	"null",    "getattr",     "setattr", "lookup", "access",   "readlink", "read",   "write",
	"create",  "mkdir",       "symlink", "mknod",  "remove",   "rmdir",    "rename", "link",
	"readdir", "readdirplus", "fsstat",  "fsinfo", "pathconf", "commit",
};

enum {
	ACCESS3_READ = 0x1,
	ACCESS3_LOOKUP = 0x2,
	ACCESS3_MODIFY = 0x4,
	ACCESS3_EXTEND = 0x8,
	ACCESS3_DELETE = 0x10,
	ACCESS3_EXECUTE = 0x20,
};

/* A request being served: its decoder, encoder and server. */
struct rq {
	struct rpcr_svc_req *r;
	struct nfsd *nd;
	struct rpcr_xdr_dec *d;
	struct rpcr_xdr_enc *e;
	uint32_t proc;
	bool garbage;      /* an argument did not decode */
	bool full;         /* the results did not fit */
	uint32_t uid, gid; /* the caller's (AUTH_SYS), or nobody's (AUTH_NONE) */
	uint32_t ngids;    /* and its supplementary groups */
	uint32_t gids[RPCR_ONCRPC_AUTHSYS_GIDS_MAX];
	enum rpcr_svc_verdict verdict; /* rq_init() said no: the handler returns this */
	bool drc;                      /* keep the reply (under drc_key; results from res0) */
	struct nfsd_drc_key drc_key;
	uint8_t *res0;
};

/* ---- decoding ---- */

static uint32_t
get_u32(struct rq *q)
{
	uint32_t v = 0;

	if (!q->garbage && rpcr_xdr_dec_u32(q->d, &v) != 0)
		q->garbage = true;
	return v;
}

static uint64_t
get_u64(struct rq *q)
{
	uint64_t v = 0;

	if (!q->garbage && rpcr_xdr_dec_u64(q->d, &v) != 0)
		q->garbage = true;
	return v;
}

static bool
get_bool(struct rq *q)
{
	uint32_t v = get_u32(q);

	if (v > 1)
		q->garbage = true;
	return v == 1;
}

/* nfs_fh3: the handle's inode number and generation; *@stat says whether it is ours. */
struct fh {
	uint32_t ino, gen;
	uint32_t stat; /* NFS3_OK, NFS3ERR_BADHANDLE */
};

static void
get_fh(struct rq *q, struct fh *fh)
{
	const void *p;
	uint32_t len;

	fh->stat = NFS3ERR_BADHANDLE;
	fh->ino = 0;
	fh->gen = 0;
	if (q->garbage)
		return;
	if (rpcr_xdr_dec_opaque(q->d, 64, &p, &len) != 0) {
		q->garbage = true;
		return;
	}
	if (len != NFSD_FH_LEN || rpcr_xdr_load32(p) != FH_MAGIC)
		return;
	fh->ino = rpcr_xdr_load32((const uint8_t *)p + 4);
	fh->gen = rpcr_xdr_load32((const uint8_t *)p + 8);
	fh->stat = NFS3_OK;
}

/* filename3 (or nfspath3 with @max NFSD_PATH_MAX). */
struct name {
	const char *s;
	uint32_t len;
};

static void
get_name(struct rq *q, struct name *n, uint32_t max)
{
	n->s = "";
	n->len = 0;
	if (!q->garbage && rpcr_xdr_dec_string(q->d, max, &n->s, &n->len) != 0)
		q->garbage = true;
}

static void
get_time(struct rq *q, struct timespec *t)
{
	t->tv_sec = get_u32(q);
	t->tv_nsec = get_u32(q);
	if (t->tv_nsec >= 1000000000)
		q->garbage = true;
}

/* sattr3 */
static void
get_sattr(struct rq *q, struct nfsd_sattr *a)
{
	memset(a, 0, sizeof(*a));
	a->set_mode = get_bool(q);
	if (a->set_mode)
		a->mode = get_u32(q);
	a->set_uid = get_bool(q);
	if (a->set_uid)
		a->uid = get_u32(q);
	a->set_gid = get_bool(q);
	if (a->set_gid)
		a->gid = get_u32(q);
	a->set_size = get_bool(q);
	if (a->set_size)
		a->size = get_u64(q);
	a->set_atime = get_u32(q);
	if (a->set_atime == 2)
		get_time(q, &a->atime);
	else if (a->set_atime > 2)
		q->garbage = true;
	a->set_mtime = get_u32(q);
	if (a->set_mtime == 2)
		get_time(q, &a->mtime);
	else if (a->set_mtime > 2)
		q->garbage = true;
}

/* ---- encoding ---- */

static void
put_u32(struct rq *q, uint32_t v)
{
	if (!q->full && rpcr_xdr_enc_u32(q->e, v) != 0)
		q->full = true;
}

static void
put_u64(struct rq *q, uint64_t v)
{
	if (!q->full && rpcr_xdr_enc_u64(q->e, v) != 0)
		q->full = true;
}

static void
put_fixed(struct rq *q, const void *p, uint32_t n)
{
	if (!q->full && rpcr_xdr_enc_fixed(q->e, p, n) != 0)
		q->full = true;
}

static void
put_time(struct rq *q, const struct timespec *t)
{
	put_u32(q, (uint32_t)t->tv_sec);
	put_u32(q, (uint32_t)t->tv_nsec);
}

void
nfsd_fh_make(uint8_t *fh, uint32_t ino, uint32_t gen)
{
	memset(fh, 0, NFSD_FH_LEN);
	rpcr_xdr_store32(fh, FH_MAGIC);
	rpcr_xdr_store32(fh + 4, ino);
	rpcr_xdr_store32(fh + 8, gen);
}

static void
put_fh(struct rq *q, const struct nfsd_inode *in)
{
	uint8_t fh[NFSD_FH_LEN];

	nfsd_fh_make(fh, in->ino, in->gen);
	put_u32(q, NFSD_FH_LEN);
	put_fixed(q, fh, NFSD_FH_LEN);
}

/* fattr3: 84 bytes. */
static void
put_fattr(struct rq *q, const struct nfsd_inode *in)
{
	uint64_t used = in->type == NFSD_REG ? RTE_ALIGN_CEIL(in->stored, 4096) : 4096;

	put_u32(q, in->type);
	put_u32(q, in->mode);
	put_u32(q, in->nlink);
	put_u32(q, in->uid);
	put_u32(q, in->gid);
	put_u64(q, in->size);
	put_u64(q, used);
	put_u64(q, 0); /* rdev */
	put_u64(q, 1); /* fsid */
	put_u64(q, in->ino);
	put_time(q, &in->atime);
	put_time(q, &in->mtime);
	put_time(q, &in->ctime);
}

static void
put_post_attr(struct rq *q, const struct nfsd_inode *in)
{
	put_u32(q, in != NULL);
	if (in != NULL)
		put_fattr(q, in);
}

/* pre_op_attr, taken before a change. */
struct pre {
	bool valid;
	uint64_t size;
	struct timespec mtime, ctime;
};

static void
take_pre(struct pre *p, const struct nfsd_inode *in)
{
	p->valid = in != NULL;
	if (in != NULL) {
		p->size = in->size;
		p->mtime = in->mtime;
		p->ctime = in->ctime;
	}
}

static void
put_wcc(struct rq *q, const struct pre *p, const struct nfsd_inode *in)
{
	put_u32(q, p->valid);
	if (p->valid) {
		put_u64(q, p->size);
		put_time(q, &p->mtime);
		put_time(q, &p->ctime);
	}
	put_post_attr(q, in);
}

/* ---- common steps ---- */

static enum rpcr_svc_verdict
finish(struct rq *q, uint32_t stat)
{
	struct nfsd_counters *c = &q->nd->cnt;

	if (q->garbage) {
		c->garbage++;
		rpcr_svc_req_error(q->r, RPCR_ONCRPC_GARBAGE_ARGS);
		return RPCR_SVC_ERROR;
	}
	if (q->full) {
		rpcr_svc_req_error(q->r, RPCR_ONCRPC_SYSTEM_ERR);
		return RPCR_SVC_ERROR;
	}
	c->calls[q->proc]++;
	if (stat != NFS3_OK)
		c->errors[q->proc]++;
	if (q->drc)
		nfsd_drc_store(&q->nd->drc, &q->drc_key, q->res0, (uint32_t)(q->e->p - q->res0));
	return RPCR_SVC_REPLY;
}

/*
 * Start serving @r. Credentials: AUTH_SYS (a body that decodes) and AUTH_NONE (nobody) are
 * served; any other flavour, or an AUTH_SYS body that does not decode, is answered MSG_DENIED
 * AUTH_BADCRED before anything is decoded or done, as Linux's sunrpc does. A procedure that
 * must not run twice is looked up in the duplicate request cache (drc.c): a call seen before
 * gets the reply kept then, and does not run.
 * @return false: answered already (the handler returns q->verdict).
 */
static bool
rq_init(struct rq *q, struct rpcr_svc_req *r, uint32_t proc)
{
	const struct rpcr_oncrpc_call *c = rpcr_svc_req_call(r);
	struct rpcr_oncrpc_authsys as;

	q->r = r;
	q->nd = rpcr_svc_req_ctx(r);
	q->d = rpcr_msg_dec(rpcr_svc_req_args(r));
	q->e = rpcr_msg_enc(rpcr_svc_req_results(r));
	q->proc = proc;
	q->garbage = false;
	q->full = false;
	q->uid = 65534;
	q->gid = 65534;
	q->ngids = 0;
	q->drc = false;
	if (c->cred.flavor == RPCR_ONCRPC_AUTH_SYS &&
	    rpcr_oncrpc_authsys_decode(&as, c->cred.body, c->cred.len) == 0) {
		q->uid = as.uid;
		q->gid = as.gid;
		q->ngids = as.ngids;
		memcpy(q->gids, as.gids, sizeof(q->gids[0]) * as.ngids);
	} else if (c->cred.flavor != RPCR_ONCRPC_AUTH_NONE) {
		q->nd->cnt.badcred++;
		rpcr_svc_req_auth_error(r, RPCR_ONCRPC_AUTH_BADCRED);
		q->verdict = RPCR_SVC_ERROR;
		return false;
	}
	q->drc = q->nd->drc.e != NULL && nfsd_drc_proc(proc);
	if (q->drc) {
		const uint8_t *kept;
		uint32_t len;

		nfsd_drc_key(&q->drc_key, rpcr_svc_req_peer(r), c->xid, proc, q->d->p,
			     (uint32_t)(q->d->end - q->d->p));
		kept = nfsd_drc_lookup(&q->nd->drc, &q->drc_key, &len);
		if (kept != NULL) {
			q->verdict = rpcr_xdr_enc_fixed(q->e, kept, len) == 0 ? RPCR_SVC_REPLY
									      : RPCR_SVC_DROP;
			return false;
		}
		q->res0 = q->e->p;
	}
	return true;
}

/* The inode of a decoded handle, or NULL with *@stat. */
static struct nfsd_inode *
lookup_fh(struct rq *q, const struct fh *fh, uint32_t *stat)
{
	struct nfsd_inode *in;

	if (fh->stat != NFS3_OK) {
		*stat = fh->stat;
		return NULL;
	}
	in = nfsd_store_get(&q->nd->st, fh->ino, fh->gen);
	*stat = in != NULL ? NFS3_OK : NFS3ERR_STALE;
	return in;
}

/* The caller's AUTH_SYS uid and gid (AUTH_NONE: nobody). */
static void
caller(struct rq *q, uint32_t *uid, uint32_t *gid)
{
	*uid = q->uid;
	*gid = q->gid;
}

/* Permission bits asked for (as in a mode's rwx). */
#define MAY_READ  4u
#define MAY_WRITE 2u
#define MAY_EXEC  1u

/* The caller's rwx bits on @in: the owner's, the group's (its group or a supplementary one) or
 * the others' bits of the mode; all for uid 0 (the export behaves as no_root_squash). */
static uint32_t
caller_bits(const struct rq *q, const struct nfsd_inode *in)
{
	uint32_t i;

	if (q->uid == 0)
		return 7;
	if (q->uid == in->uid)
		return (in->mode >> 6) & 7;
	if (q->gid == in->gid)
		return (in->mode >> 3) & 7;
	for (i = 0; i < q->ngids; i++)
		if (q->gids[i] == in->gid)
			return (in->mode >> 3) & 7;
	return in->mode & 7;
}

/*
 * NFS3_OK when the caller may do @want (MAY_*) to @in, else NFS3ERR_ACCES. @owner: the owner
 * may read and write its own file whatever the mode says, as knfsd allows (the client checked
 * at open; a chmod since must not break the open file).
 */
static uint32_t
may(const struct rq *q, const struct nfsd_inode *in, uint32_t want, bool owner)
{
	if (owner && q->uid == in->uid)
		return NFS3_OK;
	return (caller_bits(q, in) & want) == want ? NFS3_OK : NFS3ERR_ACCES;
}

/* Whether the caller is in group @gid. */
static bool
in_group(const struct rq *q, uint32_t gid)
{
	uint32_t i;

	if (q->gid == gid)
		return true;
	for (i = 0; i < q->ngids; i++)
		if (q->gids[i] == gid)
			return true;
	return false;
}

/* SETATTR's rules (POSIX chmod, chown, truncate, utimes), for a caller other than uid 0. */
static uint32_t
may_setattr(const struct rq *q, const struct nfsd_inode *in, const struct nfsd_sattr *a)
{
	bool owner = q->uid == in->uid;

	if (q->uid == 0)
		return NFS3_OK;
	if ((a->set_mode || a->set_uid || a->set_gid || a->set_atime == 2 || a->set_mtime == 2) &&
	    !owner)
		return NFS3ERR_PERM;
	if (a->set_uid && a->uid != in->uid)
		return NFS3ERR_PERM;
	if (a->set_gid && a->gid != in->gid && !in_group(q, a->gid))
		return NFS3ERR_PERM;
	if (a->set_size && may(q, in, MAY_WRITE, true) != NFS3_OK)
		return NFS3ERR_ACCES;
	if ((a->set_atime == 1 || a->set_mtime == 1) && !owner &&
	    may(q, in, MAY_WRITE, false) != NFS3_OK)
		return NFS3ERR_ACCES;
	return NFS3_OK;
}

/* A name a new entry may have. */
static uint32_t
check_new_name(const struct name *n)
{
	if (n->len == 0 || memchr(n->s, '/', n->len) != NULL || memchr(n->s, 0, n->len) != NULL)
		return NFS3ERR_ACCES;
	if (n->len > NFSD_NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	if ((n->len == 1 && n->s[0] == '.') || (n->len == 2 && n->s[0] == '.' && n->s[1] == '.'))
		return NFS3ERR_EXIST;
	return NFS3_OK;
}

static void
apply_sattr(struct nfsd_inode *in, const struct nfsd_sattr *a)
{
	struct timespec now;

	nfsd_touch(&now);
	if (a->set_mode)
		in->mode = a->mode & 07777;
	if (a->set_uid)
		in->uid = a->uid;
	if (a->set_gid)
		in->gid = a->gid;
	if (a->set_atime == 1)
		in->atime = now;
	else if (a->set_atime == 2)
		in->atime = a->atime;
	if (a->set_mtime == 1)
		in->mtime = now;
	else if (a->set_mtime == 2)
		in->mtime = a->mtime;
	in->ctime = now;
}

/* ---- the procedures ---- */

static enum rpcr_svc_verdict
nfs3_null(struct rpcr_svc_req *r)
{
	struct rq q;

	if (!rq_init(&q, r, 0))
		return q.verdict;
	return finish(&q, NFS3_OK);
}

static enum rpcr_svc_verdict
nfs3_getattr(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	struct fh fh;
	uint32_t stat;
	struct rq q;

	if (!rq_init(&q, r, 1))
		return q.verdict;
	get_fh(&q, &fh);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	put_u32(&q, stat);
	if (in != NULL)
		put_fattr(&q, in);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_setattr(struct rpcr_svc_req *r)
{
	struct nfsd_sattr a;
	struct nfsd_inode *in;
	struct timespec guard;
	struct pre pre;
	struct fh fh;
	uint32_t stat;
	bool check;
	struct rq q;

	if (!rq_init(&q, r, 2))
		return q.verdict;
	get_fh(&q, &fh);
	get_sattr(&q, &a);
	check = get_bool(&q);
	if (check)
		get_time(&q, &guard);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	take_pre(&pre, in);
	if (in != NULL) {
		if (q.nd->x->ro)
			stat = NFS3ERR_ROFS;
		else if (check &&
			 (guard.tv_sec != in->ctime.tv_sec || guard.tv_nsec != in->ctime.tv_nsec))
			stat = NFS3ERR_NOT_SYNC;
		else if (a.set_size && in->type == NFSD_DIR)
			stat = NFS3ERR_ISDIR;
		else if (a.set_size && in->type != NFSD_REG)
			stat = NFS3ERR_INVAL;
		else if (a.set_size && a.size > NFSD_FILE_MAX)
			stat = NFS3ERR_FBIG;
		else
			stat = may_setattr(&q, in, &a);
	}
	if (in != NULL && stat == NFS3_OK) {
		if (a.set_size && a.size != in->size) {
			if (nfsd_file_truncate(&q.nd->st, in, a.size) != 0)
				stat = NFS3ERR_NOSPC;
			else
				nfsd_touch(&in->mtime);
		}
		if (stat == NFS3_OK) {
			/* The client sets the real attributes after an EXCLUSIVE CREATE: from
			 * here on the verifier no longer names this file. */
			apply_sattr(in, &a);
			in->excl = false;
		}
	}
	put_u32(&q, stat);
	put_wcc(&q, &pre, in);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_lookup(struct rpcr_svc_req *r)
{
	struct nfsd_inode *dir, *in = NULL;
	struct nfsd_dirent *e;
	struct name n;
	struct fh fh;
	uint32_t stat;
	struct rq q;

	if (!rq_init(&q, r, 3))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	dir = lookup_fh(&q, &fh, &stat);
	if (dir != NULL && dir->type != NFSD_DIR) {
		stat = NFS3ERR_NOTDIR;
	} else if (dir != NULL && may(&q, dir, MAY_EXEC, false) != NFS3_OK) {
		stat = NFS3ERR_ACCES;
	} else if (dir != NULL) {
		if (n.len > NFSD_NAME_MAX)
			stat = NFS3ERR_NAMETOOLONG;
		else if (n.len == 1 && n.s[0] == '.')
			in = dir;
		else if (n.len == 2 && n.s[0] == '.' && n.s[1] == '.')
			in = nfsd_store_ino(&q.nd->st, dir->parent);
		else if ((e = nfsd_dir_find(dir, n.s, n.len)) != NULL)
			in = nfsd_store_ino(&q.nd->st, e->ino);
		if (stat == NFS3_OK && in == NULL)
			stat = NFS3ERR_NOENT;
	}
	put_u32(&q, stat);
	if (stat == NFS3_OK) {
		put_fh(&q, in);
		put_post_attr(&q, in);
	}
	put_post_attr(&q, dir);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_access(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	uint32_t stat, want, uid, gid, bits, ok = 0;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 4))
		return q.verdict;
	get_fh(&q, &fh);
	want = get_u32(&q);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	if (in != NULL) {
		caller(&q, &uid, &gid);
		bits = caller_bits(&q, in);
		if (bits & 4)
			ok |= ACCESS3_READ;
		if ((bits & 2) && !q.nd->x->ro)
			ok |= ACCESS3_MODIFY | ACCESS3_EXTEND |
			      (in->type == NFSD_DIR ? ACCESS3_DELETE : 0);
		if (in->type == NFSD_DIR) {
			if (bits & 1)
				ok |= ACCESS3_LOOKUP;
		} else if ((bits & 1) || (uid == 0 && (in->mode & 0111) != 0)) {
			ok |= ACCESS3_EXECUTE;
		}
		if (uid == 0 && in->type != NFSD_DIR && (in->mode & 0111) == 0)
			ok &= ~(uint32_t)ACCESS3_EXECUTE;
	}
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK)
		put_u32(&q, want & ok);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_readlink(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	struct fh fh;
	uint32_t stat;
	struct rq q;

	if (!rq_init(&q, r, 5))
		return q.verdict;
	get_fh(&q, &fh);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	if (in != NULL && in->type != NFSD_LNK)
		stat = NFS3ERR_INVAL;
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK && !q.full) {
		/* The path is DDP-eligible (RFC 8267 §4.1): a buffer of ours, in a write chunk
		 * when the client offered one, inline otherwise. */
		uint32_t len = (uint32_t)strlen(in->target);
		struct rte_mbuf *m = rpcr_chunk_alloc_chain(nfsd_store_view(&q.nd->st, r)->msgpool,
							    RTE_MAX(len, 1u));
		struct rpcr_bulk b = {m, 0, len};

		if (m == NULL) {
			rpcr_svc_req_error(r, RPCR_ONCRPC_SYSTEM_ERR);
			return RPCR_SVC_ERROR;
		}
		memcpy(rte_pktmbuf_mtod(m, void *), in->target, len);
		if (rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b) != 0)
			q.full = true;
		rte_pktmbuf_free(m);
	}
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_read(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	struct rte_mbuf *m = NULL;
	uint64_t off;
	uint32_t stat, count, n = 0;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 6))
		return q.verdict;
	get_fh(&q, &fh);
	off = get_u64(&q);
	count = get_u32(&q);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	if (in != NULL && in->type == NFSD_DIR)
		stat = NFS3ERR_ISDIR;
	else if (in != NULL && in->type != NFSD_REG)
		stat = NFS3ERR_INVAL;
	else if (in != NULL)
		stat = may(&q, in, MAY_READ, true);
	if (stat == NFS3_OK) {
		count = RTE_MIN(count, NFSD_IO_MAX);
		if (off < in->size)
			n = (uint32_t)RTE_MIN((uint64_t)count, in->size - off);
		if (n != 0) {
			m = nfsd_file_read(&q.nd->st, nfsd_store_view(&q.nd->st, r), in, off, n);
			if (m == NULL)
				stat = NFS3ERR_IO;
		}
	}
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK) {
		struct rpcr_bulk b = {m, 0, n};

		put_u32(&q, n);
		put_u32(&q, off + n >= in->size);
		/* READ's data (RFC 8267 §4.1): straight from the store's buffers into the
		 * client's write chunk. */
		if (!q.full && rpcr_msg_put_bulk(rpcr_svc_req_results(r), &b) != 0)
			q.full = true;
		q.nd->cnt.read_bytes += n;
	}
	rte_pktmbuf_free(m);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_write(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	struct rpcr_bulk b = {NULL, 0, 0};
	struct pre pre;
	uint64_t off;
	uint32_t stat, count, stable;
	struct fh fh;
	struct rq q;
	int rc;

	if (!rq_init(&q, r, 7))
		return q.verdict;
	get_fh(&q, &fh);
	off = get_u64(&q);
	count = get_u32(&q);
	stable = get_u32(&q);
	if (stable > 2)
		q.garbage = true;
	if (!q.garbage && rpcr_msg_get_bulk(rpcr_svc_req_args(r), NFSD_IO_MAX, &b) != 0)
		q.garbage = true;
	if (!q.garbage && b.len < count)
		q.garbage = true; /* RFC 1813: count bytes of data follow */
	if (q.garbage)
		return finish(&q, 0);
	b.len = count;
	in = lookup_fh(&q, &fh, &stat);
	take_pre(&pre, in);
	if (in != NULL && q.nd->x->ro)
		stat = NFS3ERR_ROFS;
	else if (in != NULL && in->type == NFSD_DIR)
		stat = NFS3ERR_ISDIR;
	else if (in != NULL && in->type != NFSD_REG)
		stat = NFS3ERR_INVAL;
	else if (in != NULL && off + count > NFSD_FILE_MAX)
		stat = NFS3ERR_FBIG;
	else if (in != NULL)
		stat = may(&q, in, MAY_WRITE, true);
	if (stat == NFS3_OK) {
		rc = nfsd_file_write(&q.nd->st, in, off, &b);
		if (rc != 0) {
			stat = NFS3ERR_NOSPC;
		} else {
			nfsd_touch(&in->mtime);
			in->ctime = in->mtime;
			q.nd->cnt.write_bytes += count;
		}
	}
	put_u32(&q, stat);
	put_wcc(&q, &pre, in);
	if (stat == NFS3_OK) {
		put_u32(&q, count);
		put_u32(&q, 2); /* FILE_SYNC: the store is memory, every write is stable */
		put_fixed(&q, q.nd->write_verf, 8);
	}
	return finish(&q, stat);
}

/*
 * CREATE, MKDIR, SYMLINK: make @type named @n in @fh's directory. @how is createmode3 (MKDIR and
 * SYMLINK: GUARDED); EXCLUSIVE keeps @verf in the new file so that a retransmitted CREATE (same
 * verifier) finds its own file and succeeds, as RFC 1813 asks.
 */
static enum rpcr_svc_verdict
make_node(struct rq *q, const struct fh *fh, const struct name *n, uint32_t type,
	  const struct nfsd_sattr *a, uint32_t how, uint64_t verf, const struct name *target)
{
	struct nfsd_inode *dir, *in = NULL;
	struct nfsd_dirent *e;
	struct pre pre;
	uint32_t stat, uid, gid;

	dir = lookup_fh(q, fh, &stat);
	take_pre(&pre, dir);
	if (dir != NULL && dir->type != NFSD_DIR)
		stat = NFS3ERR_NOTDIR;
	else if (dir != NULL && q->nd->x->ro)
		stat = NFS3ERR_ROFS;
	else if (dir != NULL && may(q, dir, MAY_WRITE | MAY_EXEC, false) != NFS3_OK)
		stat = NFS3ERR_ACCES;
	else if (dir != NULL)
		stat = check_new_name(n);
	if (stat == NFS3_OK && (e = nfsd_dir_find(dir, n->s, n->len)) != NULL) {
		/* CREATE UNCHECKED of an existing file: that file (with its size set); EXCLUSIVE
		 * with the verifier that made it: that file. */
		in = nfsd_store_ino(&q->nd->st, e->ino);
		if (type == NFSD_REG && how == 2 && in != NULL && in->excl && in->excl_verf == verf)
			;
		else if (type != NFSD_REG || how != 0 || in == NULL || in->type != NFSD_REG)
			stat = NFS3ERR_EXIST;
		else if (a->set_size && nfsd_file_truncate(&q->nd->st, in, a->size) != 0)
			stat = NFS3ERR_NOSPC;
		if (stat != NFS3_OK)
			in = NULL;
	} else if (stat == NFS3_OK) {
		caller(q, &uid, &gid);
		in = nfsd_store_new(&q->nd->st, type,
				    a->set_mode ? a->mode : (type == NFSD_DIR ? 0755 : 0644), uid,
				    gid);
		if (in == NULL) {
			stat = NFS3ERR_NOSPC;
		} else {
			if (type == NFSD_LNK) {
				in->target = strndup(target->s, target->len);
				in->size = target->len;
				in->mode = 0777;
			}
			if (type == NFSD_DIR)
				in->parent = dir->ino;
			if ((type == NFSD_LNK && in->target == NULL) ||
			    nfsd_dir_add(&q->nd->st, dir, n->s, n->len, in) != 0) {
				in->nlink = 0;
				nfsd_store_put(&q->nd->st, in);
				in = NULL;
				stat = NFS3ERR_NOSPC;
			} else {
				struct nfsd_sattr rest = *a;

				rest.set_mode = false;
				rest.set_size = false;
				apply_sattr(in, &rest);
				if (type == NFSD_DIR)
					dir->nlink++;
				in->excl = how == 2;
				in->excl_verf = verf;
			}
		}
	}
	put_u32(q, stat);
	if (stat == NFS3_OK) {
		put_u32(q, 1); /* post_op_fh3 */
		put_fh(q, in);
		put_post_attr(q, in);
	}
	put_wcc(q, &pre, dir);
	return finish(q, stat);
}

static enum rpcr_svc_verdict
nfs3_create(struct rpcr_svc_req *r)
{
	struct nfsd_sattr a;
	struct name n;
	struct fh fh;
	uint64_t verf = 0;
	uint32_t how;
	struct rq q;

	if (!rq_init(&q, r, 8))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	how = get_u32(&q);
	memset(&a, 0, sizeof(a));
	if (how == 0 || how == 1) {
		get_sattr(&q, &a);
	} else if (how == 2) {
		verf = get_u64(&q); /* EXCLUSIVE: createverf3 */
	} else {
		q.garbage = true;
	}
	if (q.garbage)
		return finish(&q, 0);
	return make_node(&q, &fh, &n, NFSD_REG, &a, how, verf, NULL);
}

static enum rpcr_svc_verdict
nfs3_mkdir(struct rpcr_svc_req *r)
{
	struct nfsd_sattr a;
	struct name n;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 9))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	get_sattr(&q, &a);
	if (q.garbage)
		return finish(&q, 0);
	return make_node(&q, &fh, &n, NFSD_DIR, &a, 1, 0, NULL);
}

static enum rpcr_svc_verdict
nfs3_symlink(struct rpcr_svc_req *r)
{
	struct nfsd_sattr a;
	struct name n, target;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 10))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	get_sattr(&q, &a);
	get_name(&q, &target, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	return make_node(&q, &fh, &n, NFSD_LNK, &a, 1, 0, &target);
}

/* MKNOD: devices, sockets and fifos are not kept by this store. */
static enum rpcr_svc_verdict
nfs3_mknod(struct rpcr_svc_req *r)
{
	struct nfsd_inode *dir;
	struct pre pre;
	struct name n;
	struct fh fh;
	uint32_t stat;
	struct rq q;

	if (!rq_init(&q, r, 11))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	/* (The rest of the arguments, mknoddata3, is not needed to refuse.) */
	dir = lookup_fh(&q, &fh, &stat);
	take_pre(&pre, dir);
	if (stat == NFS3_OK)
		stat = NFS3ERR_NOTSUPP;
	put_u32(&q, stat);
	put_wcc(&q, &pre, dir);
	return finish(&q, stat);
}

/* Drop one link of @in (from a directory entry being removed). */
static void
unlink_inode(struct nfsd_store *st, struct nfsd_inode *in)
{
	if (in->type == NFSD_DIR) {
		in->nlink = 0;
	} else if (in->nlink > 0) {
		in->nlink--;
		nfsd_touch(&in->ctime);
	}
	if (in->nlink == 0)
		nfsd_store_put(st, in);
}

/* REMOVE (@rmdir false) and RMDIR. */
static enum rpcr_svc_verdict
remove_common(struct rpcr_svc_req *r, uint32_t proc, bool rmdir)
{
	struct nfsd_inode *dir, *in = NULL;
	struct nfsd_dirent *e = NULL;
	struct pre pre;
	struct name n;
	struct fh fh;
	uint32_t stat;
	struct rq q;

	if (!rq_init(&q, r, proc))
		return q.verdict;
	get_fh(&q, &fh);
	get_name(&q, &n, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	dir = lookup_fh(&q, &fh, &stat);
	take_pre(&pre, dir);
	if (dir != NULL && dir->type != NFSD_DIR)
		stat = NFS3ERR_NOTDIR;
	else if (dir != NULL && q.nd->x->ro)
		stat = NFS3ERR_ROFS;
	else if (dir != NULL && may(&q, dir, MAY_WRITE | MAY_EXEC, false) != NFS3_OK)
		stat = NFS3ERR_ACCES;
	else if (dir != NULL && n.len > NFSD_NAME_MAX)
		stat = NFS3ERR_NAMETOOLONG;
	else if (dir != NULL &&
		 ((n.len == 1 && n.s[0] == '.') || (n.len == 2 && n.s[0] == '.' && n.s[1] == '.')))
		stat = rmdir ? NFS3ERR_INVAL : NFS3ERR_ACCES;
	if (stat == NFS3_OK) {
		e = nfsd_dir_find(dir, n.s, n.len);
		in = e != NULL ? nfsd_store_ino(&q.nd->st, e->ino) : NULL;
		if (in == NULL)
			stat = NFS3ERR_NOENT;
		else if (rmdir && in->type != NFSD_DIR)
			stat = NFS3ERR_NOTDIR;
		else if (!rmdir && in->type == NFSD_DIR)
			stat = NFS3ERR_ISDIR;
		else if (rmdir && in->nents != 0)
			stat = NFS3ERR_NOTEMPTY;
	}
	if (stat == NFS3_OK) {
		nfsd_dir_del(dir, e);
		if (rmdir)
			dir->nlink--;
		unlink_inode(&q.nd->st, in);
	}
	put_u32(&q, stat);
	put_wcc(&q, &pre, dir);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_remove(struct rpcr_svc_req *r)
{
	return remove_common(r, 12, false);
}

static enum rpcr_svc_verdict
nfs3_rmdir(struct rpcr_svc_req *r)
{
	return remove_common(r, 13, true);
}

/* Whether directory @anc is @dir or one of its ancestors. */
static bool
is_ancestor(struct nfsd_store *st, const struct nfsd_inode *anc, const struct nfsd_inode *dir)
{
	uint32_t hops = 0;

	while (dir != NULL && hops++ < 100000) {
		if (dir == anc)
			return true;
		if (dir->ino == 1)
			return false;
		dir = nfsd_store_ino(st, dir->parent);
	}
	return false;
}

static enum rpcr_svc_verdict
nfs3_rename(struct rpcr_svc_req *r)
{
	struct nfsd_store *st;
	struct nfsd_inode *fd, *td = NULL, *in = NULL, *old = NULL;
	struct nfsd_dirent *fe = NULL, *te = NULL;
	struct pre fpre, tpre;
	struct name fn, tn;
	struct fh ffh, tfh;
	uint32_t stat, tstat;
	struct rq q;

	if (!rq_init(&q, r, 14))
		return q.verdict;
	st = &q.nd->st;
	get_fh(&q, &ffh);
	get_name(&q, &fn, NFSD_PATH_MAX);
	get_fh(&q, &tfh);
	get_name(&q, &tn, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	fd = lookup_fh(&q, &ffh, &stat);
	td = lookup_fh(&q, &tfh, &tstat);
	take_pre(&fpre, fd);
	take_pre(&tpre, td);
	if (stat == NFS3_OK)
		stat = tstat;
	if (stat == NFS3_OK && (fd->type != NFSD_DIR || td->type != NFSD_DIR))
		stat = NFS3ERR_NOTDIR;
	if (stat == NFS3_OK && q.nd->x->ro)
		stat = NFS3ERR_ROFS;
	if (stat == NFS3_OK && (may(&q, fd, MAY_WRITE | MAY_EXEC, false) != NFS3_OK ||
				may(&q, td, MAY_WRITE | MAY_EXEC, false) != NFS3_OK))
		stat = NFS3ERR_ACCES;
	if (stat == NFS3_OK) {
		stat = check_new_name(&tn);
		if (stat == NFS3_OK && check_new_name(&fn) != NFS3_OK)
			stat = fn.len > NFSD_NAME_MAX ? NFS3ERR_NAMETOOLONG : NFS3ERR_INVAL;
	}
	if (stat == NFS3_OK) {
		fe = nfsd_dir_find(fd, fn.s, fn.len);
		in = fe != NULL ? nfsd_store_ino(st, fe->ino) : NULL;
		if (in == NULL)
			stat = NFS3ERR_NOENT;
	}
	if (stat == NFS3_OK && in->type == NFSD_DIR && is_ancestor(st, in, td))
		stat = NFS3ERR_INVAL;
	if (stat == NFS3_OK && (te = nfsd_dir_find(td, tn.s, tn.len)) != NULL) {
		old = nfsd_store_ino(st, te->ino);
		if (old == in) {
			old = NULL; /* the same file: nothing to do (RFC 1813) */
			te = NULL;
			fe = NULL;
		} else if (old != NULL && old->type == NFSD_DIR && in->type != NFSD_DIR) {
			stat = NFS3ERR_ISDIR;
		} else if (old != NULL && old->type != NFSD_DIR && in->type == NFSD_DIR) {
			stat = NFS3ERR_NOTDIR;
		} else if (old != NULL && old->type == NFSD_DIR && old->nents != 0) {
			stat = NFS3ERR_NOTEMPTY;
		}
	}
	if (stat == NFS3_OK && fe != NULL) {
		uint32_t ino = in->ino;

		if (te != NULL) {
			/* Replace the target's entry in place (no allocation can fail). */
			te->ino = ino;
			nfsd_touch(&td->mtime);
			td->ctime = td->mtime;
			if (old->type == NFSD_DIR)
				td->nlink--;
		} else if (nfsd_dir_add(st, td, tn.s, tn.len, in) != 0) {
			stat = NFS3ERR_NOSPC;
		}
		if (stat == NFS3_OK) {
			/* fe may have moved if td == fd grew: find it again. */
			fe = nfsd_dir_find(fd, fn.s, fn.len);
			nfsd_dir_del(fd, fe);
			if (in->type == NFSD_DIR && fd != td) {
				fd->nlink--;
				td->nlink++;
				in->parent = td->ino;
			}
			nfsd_touch(&in->ctime);
			if (old != NULL)
				unlink_inode(st, old);
		}
	}
	put_u32(&q, stat);
	put_wcc(&q, &fpre, fd);
	put_wcc(&q, &tpre, td);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_link(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in, *dir = NULL;
	struct pre pre;
	struct name n;
	struct fh fh, dfh;
	uint32_t stat, dstat;
	struct rq q;

	if (!rq_init(&q, r, 15))
		return q.verdict;
	get_fh(&q, &fh);
	get_fh(&q, &dfh);
	get_name(&q, &n, NFSD_PATH_MAX);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	dir = lookup_fh(&q, &dfh, &dstat);
	take_pre(&pre, dir);
	if (stat == NFS3_OK)
		stat = dstat;
	if (stat == NFS3_OK && dir->type != NFSD_DIR)
		stat = NFS3ERR_NOTDIR;
	else if (stat == NFS3_OK && in->type == NFSD_DIR)
		stat = NFS3ERR_ISDIR;
	else if (stat == NFS3_OK && q.nd->x->ro)
		stat = NFS3ERR_ROFS;
	else if (stat == NFS3_OK && may(&q, dir, MAY_WRITE | MAY_EXEC, false) != NFS3_OK)
		stat = NFS3ERR_ACCES;
	else if (stat == NFS3_OK && in->nlink >= 65000)
		stat = NFS3ERR_MLINK;
	if (stat == NFS3_OK)
		stat = check_new_name(&n);
	if (stat == NFS3_OK && nfsd_dir_find(dir, n.s, n.len) != NULL)
		stat = NFS3ERR_EXIST;
	if (stat == NFS3_OK) {
		if (nfsd_dir_add(&q.nd->st, dir, n.s, n.len, in) != 0) {
			stat = NFS3ERR_NOSPC;
		} else {
			in->nlink++;
			nfsd_touch(&in->ctime);
		}
	}
	put_u32(&q, stat);
	put_post_attr(&q, in);
	put_wcc(&q, &pre, dir);
	return finish(&q, stat);
}

/* READDIR (@plus false) and READDIRPLUS. */
static enum rpcr_svc_verdict
readdir_common(struct rpcr_svc_req *r, bool plus)
{
	static const uint8_t verf[8] = {0};
	struct nfsd_inode *dir;
	uint64_t cookie;
	uint32_t stat, count, i, n = 0, budget;
	size_t start;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, plus ? 17 : 16))
		return q.verdict;
	get_fh(&q, &fh);
	cookie = get_u64(&q);
	get_u64(&q); /* cookieverf: cookies here stay valid, any verifier is accepted */
	if (plus)
		get_u32(&q); /* dircount */
	count = get_u32(&q);
	if (q.garbage)
		return finish(&q, 0);
	dir = lookup_fh(&q, &fh, &stat);
	if (dir != NULL && dir->type != NFSD_DIR)
		stat = NFS3ERR_NOTDIR;
	else if (dir != NULL)
		stat = may(&q, dir, MAY_READ, false);
	start = rpcr_xdr_enc_pos(q.e);
	put_u32(&q, stat);
	put_post_attr(&q, dir);
	if (stat != NFS3_OK)
		return finish(&q, stat);
	/* The reply must fit the client's count and this reply's buffer (inline, or the one
	 * bulk buffer of a reply chunk): fewer entries is what NFSv3 allows. */
	budget = (uint32_t)RTE_MIN((size_t)count,
				   rpcr_xdr_enc_left(q.e) + (rpcr_xdr_enc_pos(q.e) - start));
	if (budget > 256)
		budget -= 16; /* the RPC layer's own words in a reply chunk */
	put_fixed(&q, verf, 8);
	/* Entries in cookie order: "." (1), ".." (2), then the directory's, each with its own. */
	for (i = 0; i < dir->nents + 2; i++) {
		const struct nfsd_inode *in;
		const char *name;
		uint64_t c;
		uint32_t len, need;

		if (i == 0) {
			name = ".", c = 1, in = dir;
		} else if (i == 1) {
			name = "..", c = 2, in = nfsd_store_ino(&q.nd->st, dir->parent);
		} else {
			name = dir->ents[i - 2].name;
			c = dir->ents[i - 2].cookie;
			in = nfsd_store_ino(&q.nd->st, dir->ents[i - 2].ino);
		}
		if (c <= cookie || in == NULL)
			continue;
		len = (uint32_t)strlen(name);
		need = 4 + 8 + 4 + RTE_ALIGN_CEIL(len, 4) + 8 + (plus ? 4 + 84 + 4 + 4 + 16 : 0);
		/* ... and the list's end and eof after it. */
		if (rpcr_xdr_enc_pos(q.e) - start + need + 8 > budget)
			break;
		put_u32(&q, 1);
		put_u64(&q, in->ino);
		put_u32(&q, len);
		put_fixed(&q, name, len);
		put_u64(&q, c);
		if (plus) {
			put_post_attr(&q, in);
			put_u32(&q, 1);
			put_fh(&q, in);
		}
		n++;
	}
	if (n == 0 && i < dir->nents + 2) {
		/* Not even one entry fits in the client's count: start the results again. */
		q.e->p = q.e->base + start;
		q.full = false;
		put_u32(&q, NFS3ERR_TOOSMALL);
		put_post_attr(&q, dir);
		return finish(&q, NFS3ERR_TOOSMALL);
	}
	put_u32(&q, 0);
	put_u32(&q, i >= dir->nents + 2);
	nfsd_touch(&dir->atime);
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_readdir(struct rpcr_svc_req *r)
{
	return readdir_common(r, false);
}

static enum rpcr_svc_verdict
nfs3_readdirplus(struct rpcr_svc_req *r)
{
	return readdir_common(r, true);
}

static enum rpcr_svc_verdict
nfs3_fsstat(struct rpcr_svc_req *r)
{
	struct nfsd_store *st;
	struct nfsd_inode *in;
	uint64_t total, avail;
	uint32_t stat;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 18))
		return q.verdict;
	st = &q.nd->st;
	get_fh(&q, &fh);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK) {
		/* Capacity: the bulk buffers (file data lives there). */
		total = (uint64_t)st->bulk_total * 61440;
		avail = nfsd_store_bulk_avail(st) * 61440;
		put_u64(&q, total);
		put_u64(&q, avail);
		put_u64(&q, avail);
		put_u64(&q, 1u << 20);
		put_u64(&q, (1u << 20) - st->files);
		put_u64(&q, (1u << 20) - st->files);
		put_u32(&q, 0); /* invarsec */
	}
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_fsinfo(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	uint32_t stat;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 19))
		return q.verdict;
	get_fh(&q, &fh);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK) {
		put_u32(&q, NFSD_IO_MAX);   /* rtmax */
		put_u32(&q, q.nd->io_pref); /* rtpref */
		put_u32(&q, 4096);          /* rtmult */
		put_u32(&q, NFSD_IO_MAX);   /* wtmax */
		put_u32(&q, q.nd->io_pref); /* wtpref */
		put_u32(&q, 4096);          /* wtmult */
		put_u32(&q, 32768);         /* dtpref */
		put_u64(&q, NFSD_FILE_MAX);
		put_u32(&q, 0); /* time_delta: 1 ns */
		put_u32(&q, 1);
		/* FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME */
		put_u32(&q, 0x1 | 0x2 | 0x8 | 0x10);
	}
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_pathconf(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	uint32_t stat;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 20))
		return q.verdict;
	get_fh(&q, &fh);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	put_u32(&q, stat);
	put_post_attr(&q, in);
	if (stat == NFS3_OK) {
		put_u32(&q, 65000);         /* linkmax */
		put_u32(&q, NFSD_NAME_MAX); /* name_max */
		put_u32(&q, 1);             /* no_trunc */
		put_u32(&q, 1);             /* chown_restricted */
		put_u32(&q, 0);             /* case_insensitive */
		put_u32(&q, 1);             /* case_preserving */
	}
	return finish(&q, stat);
}

static enum rpcr_svc_verdict
nfs3_commit(struct rpcr_svc_req *r)
{
	struct nfsd_inode *in;
	struct pre pre;
	uint32_t stat;
	struct fh fh;
	struct rq q;

	if (!rq_init(&q, r, 21))
		return q.verdict;
	get_fh(&q, &fh);
	get_u64(&q);
	get_u32(&q);
	if (q.garbage)
		return finish(&q, 0);
	in = lookup_fh(&q, &fh, &stat);
	take_pre(&pre, in);
	if (in != NULL && in->type != NFSD_REG)
		stat = in->type == NFSD_DIR ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	put_u32(&q, stat);
	put_wcc(&q, &pre, in);
	if (stat == NFS3_OK)
		put_fixed(&q, q.nd->write_verf, 8);
	return finish(&q, stat);
}

/* The binding (RFC 8267 §4.1): WRITE data in, READ data and READLINK's path out. */
static struct rpcr_svc_proc nfs3_procs[22] = {
	{0, nfs3_null, {0, 0, 0}},      {1, nfs3_getattr, {0, 0, 0}},
	{2, nfs3_setattr, {0, 0, 0}},   {3, nfs3_lookup, {0, 0, 0}},
	{4, nfs3_access, {0, 0, 0}},    {5, nfs3_readlink, {0, 1, 1024}},
	{6, nfs3_read, {0, 1, 1024}},   {7, nfs3_write, {1, 0, 1024}},
	{8, nfs3_create, {0, 0, 0}},    {9, nfs3_mkdir, {0, 0, 0}},
	{10, nfs3_symlink, {0, 0, 0}},  {11, nfs3_mknod, {0, 0, 0}},
	{12, nfs3_remove, {0, 0, 0}},   {13, nfs3_rmdir, {0, 0, 0}},
	{14, nfs3_rename, {0, 0, 0}},   {15, nfs3_link, {0, 0, 0}},
	{16, nfs3_readdir, {0, 0, 0}},  {17, nfs3_readdirplus, {0, 0, 0}},
	{18, nfs3_fsstat, {0, 0, 0}},   {19, nfs3_fsinfo, {0, 0, 0}},
	{20, nfs3_pathconf, {0, 0, 0}}, {21, nfs3_commit, {0, 0, 0}},
};

/*
 * Several pollers: the same procedures, each under the server's lock (the store, the duplicate
 * request cache and the counters are shared; a procedure holds it for its decoding, its work on
 * the store and its encoding, none of which waits for anything).
 */
static inline enum rpcr_svc_verdict
locked(struct rpcr_svc_req *r, enum rpcr_svc_verdict (*fn)(struct rpcr_svc_req *))
{
	struct nfsd *nd = rpcr_svc_req_ctx(r);
	enum rpcr_svc_verdict v;

	pthread_mutex_lock(&nd->lock);
	v = fn(r);
	pthread_mutex_unlock(&nd->lock);
	return v;
}

#define LOCKED(fn)                                                       \
	static enum rpcr_svc_verdict fn##_locked(struct rpcr_svc_req *r) \
	{                                                                \
		return locked(r, fn);                                    \
	}
LOCKED(nfs3_null)
LOCKED(nfs3_getattr)
LOCKED(nfs3_setattr)
LOCKED(nfs3_lookup)
LOCKED(nfs3_access)
LOCKED(nfs3_readlink)
LOCKED(nfs3_read)
LOCKED(nfs3_write)
LOCKED(nfs3_create)
LOCKED(nfs3_mkdir)
LOCKED(nfs3_symlink)
LOCKED(nfs3_mknod)
LOCKED(nfs3_remove)
LOCKED(nfs3_rmdir)
LOCKED(nfs3_rename)
LOCKED(nfs3_link)
LOCKED(nfs3_readdir)
LOCKED(nfs3_readdirplus)
LOCKED(nfs3_fsstat)
LOCKED(nfs3_fsinfo)
LOCKED(nfs3_pathconf)
LOCKED(nfs3_commit)

/* (NULL too: its counters are shared.) */
static struct rpcr_svc_proc nfs3_procs_locked[22] = {
	{0, nfs3_null_locked, {0, 0, 0}},      {1, nfs3_getattr_locked, {0, 0, 0}},
	{2, nfs3_setattr_locked, {0, 0, 0}},   {3, nfs3_lookup_locked, {0, 0, 0}},
	{4, nfs3_access_locked, {0, 0, 0}},    {5, nfs3_readlink_locked, {0, 1, 1024}},
	{6, nfs3_read_locked, {0, 1, 1024}},   {7, nfs3_write_locked, {1, 0, 1024}},
	{8, nfs3_create_locked, {0, 0, 0}},    {9, nfs3_mkdir_locked, {0, 0, 0}},
	{10, nfs3_symlink_locked, {0, 0, 0}},  {11, nfs3_mknod_locked, {0, 0, 0}},
	{12, nfs3_remove_locked, {0, 0, 0}},   {13, nfs3_rmdir_locked, {0, 0, 0}},
	{14, nfs3_rename_locked, {0, 0, 0}},   {15, nfs3_link_locked, {0, 0, 0}},
	{16, nfs3_readdir_locked, {0, 0, 0}},  {17, nfs3_readdirplus_locked, {0, 0, 0}},
	{18, nfs3_fsstat_locked, {0, 0, 0}},   {19, nfs3_fsinfo_locked, {0, 0, 0}},
	{20, nfs3_pathconf_locked, {0, 0, 0}}, {21, nfs3_commit_locked, {0, 0, 0}},
};

int
nfsd_nfs3_register(struct rpcr_svc *s, struct nfsd *nd, bool shared)
{
	struct rpcr_svc_prog prog;
	struct timespec now;

	nfsd_touch(&now);
	/* The write verifier changes when the server restarts (the store is gone then). */
	nd->write_verf[0] = (uint32_t)now.tv_sec;
	nd->write_verf[1] = (uint32_t)now.tv_nsec;
	memset(&prog, 0, sizeof(prog));
	prog.prog = NFSD_PROG;
	prog.vers = NFSD_V3;
	prog.procs = shared ? nfs3_procs_locked : nfs3_procs;
	prog.nprocs = RTE_DIM(nfs3_procs);
	if (shared)
		pthread_mutex_init(&nd->lock, NULL);
	prog.ctx = nd;
	return rpcr_svc_register(s, &prog);
}
