/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef SHM_LAYOUT_H
#define SHM_LAYOUT_H

/*
 * What the shm driver shares between processes. Everything here lives in files the peer maps
 * (memfd or hugetlbfs); it holds numbers and offsets, never pointers, because each process maps
 * it at its own address.
 *
 * Per process (per device): one key table. Per queue pair and side: one "half" holding the
 * receive queue its owner posts into and the receive completion queue the peer's Sends fill.
 * Data lives in the process's shareable regions (lib/mem arenas), which peers map too.
 *
 *     process A                                process B
 *     key table A  <--- B validates rkeys ---  (maps A's table)
 *     half A: RQ (A posts, B's Sends take)     half B: RQ (B posts, A's Sends take)
 *             RCQ (B's Sends complete, A polls)        RCQ (A's Sends complete, B polls)
 *     regions of A  <--- B writes/reads ---    regions of B
 */

#include <stdint.h>

/* The version of this layout and of the socket protocol. */
#define SHM_VERSION      6u

#define SHM_KEYTAB_MAGIC 0x72706372734b5431ull /* "rpcrsKT1" */
#define SHM_HALF_MAGIC   0x7270637273514831ull /* "rpcrsQH1" */
#define SHM_SRQ_MAGIC    0x7270637273535131ull /* "rpcrsSQ1" */

/*
 * Where a QP's receives come from and complete (shm_half::srq). With a shared receive queue, the
 * peer's Send takes the queue's next receive (shm_srq_hdr) and completes it:
 * - SHM_SRQ_QP_CQ: in the QP's own completion slots, once the owner emptied the slot (stamp 0;
 *   an SRQ does not bound what one QP receives), its wr_id field naming the SRQ's sequence
 *   number, and rings the QP's doorbell;
 * - SHM_SRQ_SLOT_CQ: in the SRQ slot it took (shm_srq_desc's completion fields, @done last), as
 *   a NIC writes one CQ for all the QPs of a queue: the owner reads the queue's slots in order
 *   and touches no QP to find the completions. The owner uses it for the QPs whose receive CQ is
 *   the queue's, whose tags then have SHM_SRQ_TAG_SLOT set (the rest of the tag is the owner's:
 *   shm_internal.h); the doorbell rings only when the QP fails.
 */
#define SHM_SRQ_NONE     0u
#define SHM_SRQ_QP_CQ    1u
#define SHM_SRQ_SLOT_CQ  2u
#define SHM_SRQ_TAG_SLOT 0x80000000u

/* Scatter entries a shared receive descriptor holds. */
#define SHM_MAX_RECV_SGE 4u

/*
 * One registration or bound memory window, one cache line. The slot is the low bits of the key;
 * the high bits are random. @key is written last on registration or bind (release) and cleared
 * first on invalidation, so a reader that sees its key sees the fields that go with it; readers
 * check it again after using the fields, in case the slot was reused meanwhile. A window is
 * reachable only through the owner's QP @qp_num (verbs' type 2B); a registration through any QP
 * of its protection domain (@qp_num 0).
 */
struct shm_key {
	uint32_t key;        /* 0: no valid key in this slot */
	uint32_t access;     /* RPCR_RDEV_ACCESS_* */
	uint32_t region;     /* owner's region id */
	uint32_t pd;         /* owner's protection domain */
	uint64_t va;         /* registered address, in the owner's address space (a number) */
	uint64_t len;        /* registered length */
	uint64_t region_off; /* offset of va in the region */
	uint32_t qp_num;     /* a window: the owner's QP it is bound to; 0: a registration */
	uint8_t pad[20];
};

/*
 * The key table's file also holds the device's completion doorbells, after the keys: per CQ
 * (SHM_DB_CQS of them) SHM_DB_WORDS words, a bit per QP whose receives complete there. A peer
 * that wrote a receive completion into a QP's half (or failed the QP) sets that QP's bit, so
 * that the CQ's poll visits the QPs whose bits it takes (exchange) instead of every QP's half;
 * a full visit every SHM_DB_FULL polls bounds what a peer clearing bits could delay.
 */
#define SHM_DB_CQS   16u  /* CQs of a device with doorbells (more poll every QP) */
#define SHM_DB_WORDS 64u  /* words per CQ: 4096 QPs */
#define SHM_DB_FULL  256u /* polls between two visits of every QP */
/* Up to this many QPs a CQ's poll visits them all (cheaper than the doorbells; their bits then
 * stay set, and a peer's Send only loads its word). */
#define SHM_DB_MIN_QPS 16u

struct shm_keytab {
	uint64_t magic;
	uint32_t version;
	uint32_t nkeys;   /* a power of two */
	uint32_t db_off;  /* bytes from the start to the doorbells (SHM_DB_CQS * SHM_DB_WORDS) */
	uint32_t db_bits; /* doorbell bits there */
	uint8_t pad[40];
	struct shm_key keys[];
};

/* A scatter entry of a shared receive descriptor: region + offset. */
struct shm_sge {
	uint32_t region;
	uint32_t len;
	uint64_t off;
};

/*
 * The two queues of a half are rings of slots stamped with a sequence number: the producer fills
 * slot (seq % n) and then stores seq + 1 in its stamp (release); the consumer takes that slot
 * when it reads the stamp it expects (acquire). Neither side reads the other's index, so a
 * message costs the cache lines of its slot and nothing more; the producer can never overrun
 * the consumer because the owner never has more than n receives outstanding (posted, completion
 * not yet polled), and each completion answers one of them. Slots are whole cache lines.
 */
#define SHM_SLOT_ALIGN 64u

/* A receive its owner posted (receive queue slot). */
struct shm_rdesc {
	uint32_t stamp; /* seq + 1 once filled */
	uint32_t nsge;
	uint32_t status; /* non-zero: the owner's lkey check failed (completes with this status) */
	uint32_t pad;
	uint64_t wr_id;
	struct shm_sge sge[]; /* max_recv_sge entries */
};

/* A receive completion, written by the peer's Send (completion queue slot). */
struct shm_rcqe {
	uint32_t stamp; /* seq + 1 once filled */
	uint32_t status;
	uint32_t byte_len;
	uint32_t flags;
	uint32_t inv_key;
	uint32_t pad;
	uint64_t wr_id;
};

/* QP states as both sides see them. */
enum shm_qp_state {
	SHM_QPS_INIT = 0,  /* created, not connected: receives may be posted */
	SHM_QPS_RTS = 1,   /* connected */
	SHM_QPS_ERROR = 2, /* failed or disconnected: outstanding work flushes */
};

/*
 * One side of a queue pair. The owner writes the header; @state may be set to ERROR by either
 * side; @busy is raised by the peer while one of its Sends works on this half, so that the owner
 * flushes its receives only when no Send can still complete one (see shm_rxtx.c). @asleep is
 * raised by the owner while the thread that polls this half's completions sleeps
 * (rpcr_rdev_cq_arm()): the peer, after a Send (or after failing the QP), lowers it and sends a
 * datagram on the wake socket the owner passed at connect (shm_rxtx.c explains why no wake-up
 * is lost).
 */
struct shm_half {
	uint64_t magic;
	uint32_t version;
	uint32_t pd;      /* owner's protection domain */
	uint32_t nslots;  /* slots per queue, a power of two */
	uint32_t rq_slot; /* bytes per receive queue slot */
	uint32_t max_recv_sge;
	uint32_t rq_off;  /* receive queue: nslots slots of rq_slot bytes */
	uint32_t rcq_off; /* completion queue: nslots slots of SHM_SLOT_ALIGN bytes */
	uint32_t size;    /* bytes of the whole half */
	uint32_t qp_num;  /* the owner's QP number (windows bound to it name it) */
	uint32_t srq;     /* SHM_SRQ_*: where receives come from and complete */
	uint32_t db_bit;  /* its receive CQ's doorbell bit in the owner's key table file
			   * (UINT32_MAX: none) */
	uint32_t srq_tag; /* with an SRQ: what the peer's Sends mark its receives taken with */
	uint8_t pad0[8];
	uint32_t state; /* enum shm_qp_state, own cache line */
	uint8_t pad1[60];
	uint32_t busy;   /* own cache line, with @asleep: the peer reads it after lowering @busy */
	uint32_t asleep; /* the owner's poller sleeps: wake it */
	uint8_t pad2[56];
};

/*
 * A shared receive queue: receives its owner posts for the Sends of every peer of its QPs. Its
 * file is passed with HELLO/ACCEPT of each such QP. Slot (seq % nslots) holds receive seq; its
 * @word is seq + 1 in the low half once posted (store-release after the fields) and, in the high
 * half, the tag of the Send that took it (the tag of the owner's QP it arrived on, its half's
 * @srq_tag: its QP number, or SHM_SRQ_TAG_SLOT | index; 0: not taken).
 * Peers take receives in order: a peer reads @cons, takes that slot by compare-and-swap of @word
 * from (0, cons + 1) to (its tag, cons + 1), and moves @cons on by compare-and-swap from cons
 * (any peer that finds the slot taken moves it on too, so a peer that dies between the two steps
 * stops nobody). The sequence number in the word makes a slot posted again (seq + nslots)
 * different from the one a slow peer read. The owner reposts a slot only once the completion of
 * its last receive was polled; a post that finds the next slot still held marks that sequence
 * number taken by SHM_SRQ_SKIP (peers pass it as any taken slot) and goes on with the next
 * one, so a receive whose completion waits blocks nothing. The taker completes the receive as its
 * QP's half says (SHM_SRQ_*, above). The owner writes @done (shm_srq_desc) as anything but
 * seq + 1 when it posts seq, so a slot's last completion says nothing of its next receive. Peers
 * sharing an SRQ share its fate: one that writes @cons or words at will can take or hide
 * receives from the others (one that moves @cons past a receive it does not take holds the
 * owner's reading of the slots there for up to SHM_DB_FULL polls: the reading goes in take
 * order and stops where the taken ones end, and only that often looks at @cons, a line the
 * peers write), and one that takes receives completed in the slots and never
 * completes them holds back the owner's reading of the slots after SHM_SRQ_WAITS
 * (shm_internal.h) of them, and one that takes a receive under another QP's
 * tag makes its message arrive there (as it can write into the owner's regions it maps); none
 * can make the owner read or write outside its buffers, nor complete a receive twice: the owner
 * keeps what it posted, privately.
 */
struct shm_srq_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t pd;      /* owner's protection domain */
	uint32_t nslots;  /* a power of two */
	uint32_t slot;    /* bytes per slot */
	uint32_t max_sge; /* scatter entries per receive */
	uint32_t size;    /* bytes of the whole file */
	uint8_t pad0[32];
	uint32_t cons; /* next receive to take, own cache line */
	uint8_t pad1[60];
};

#define SHM_SRQ_SKIP 0xffffffffu /* a taker no QP is: the sequence number has no receive */

struct shm_srq_desc {
	uint64_t word; /* (taker's tag << 32) | (seq + 1) */
	uint32_t nsge;
	uint32_t status; /* non-zero: the owner's lkey check failed */
	/* The completion (SHM_SRQ_SLOT_CQ), written by the taker: the fields, then @done (seq + 1,
	 * release). */
	uint32_t done;
	uint32_t cstatus;
	uint32_t byte_len;
	uint32_t flags;
	uint32_t inv_key;
	uint32_t pad;
	struct shm_sge sge[];
};

/* Socket messages (SOCK_SEQPACKET: one message per datagram, ordered, reliable). */
enum shm_msg_type {
	SHM_MSG_REGION_ADD = 1, /* + region fd: map this region */
	SHM_MSG_REGION_ACK = 2, /* region mapped */
	SHM_MSG_REGION_DEL = 3, /* unmap this region */
	SHM_MSG_HELLO = 4,  /* connect request, + key table fd, half fd, wake socket (+ SRQ fd) */
	SHM_MSG_ACCEPT = 5, /* accept, + key table fd, half fd, wake socket (+ SRQ fd) */
	SHM_MSG_REJECT = 6, /* reject */
	SHM_MSG_RTU = 7,    /* ready to use: the client's side is connected */
	SHM_MSG_DISCONNECT = 8, /* the sender disconnected */
};

struct shm_msg {
	uint32_t type;
	uint32_t version;
	union {
		struct {
			uint32_t id;
			uint32_t hugepage;
			uint64_t len;
			uint64_t fd_off;
		} region;
		struct {
			uint32_t pd;
			uint8_t pdata_len;
			uint8_t pdata[56];
		} conn; /* HELLO, ACCEPT, REJECT */
	} u;
};

#endif /* SHM_LAYOUT_H */
