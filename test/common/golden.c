/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Golden messages, written by hand from the specifications. Every XDR item is one big-endian
 * 32-bit word, W(x); a 64-bit offset is two words, H(x) (high word first, RFC 4506 §4.5).
 * Sizes in the comments are in bytes.
 */

#include <errno.h>
#include <string.h>

#include "golden.h"

#include <rpcr_proto.h>

/* The tables below are laid out by hand, a word per item: keep clang-format away. */
/* clang-format off */
#define W(x)                                                                                       \
	(uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16),                           \
		(uint8_t)((uint32_t)(x) >> 8), (uint8_t)(uint32_t)(x)
#define H(x) W((uint64_t)(x) >> 32), W((uint64_t)(x) & 0xffffffffu)

/* ------------------------------------------------------------------------------------------ */
/* RPC-over-RDMA version 1 (2005 draft §4.2, RFC 8166 §4.2).                                   */
/* Fixed words: xid, vers (1), credit, proc (MSG 0, NOMSG 1, MSGP 2, DONE 3, ERROR 4).         */
/* ------------------------------------------------------------------------------------------ */

/* RDMA_MSG with three empty lists: 4 fixed words + read-list end (0) + write-list end (0) +
 * reply chunk absent (0) = 7 words = 28 bytes; the RPC message would follow. */
static const uint8_t v1_msg_empty[] = {
	W(0x0a0b0c0d), W(1), W(32), W(0), /* xid, vers 1, 32 credits, RDMA_MSG */
	W(0),                             /* read list: empty */
	W(0),                             /* write list: empty */
	W(0),                             /* reply chunk: absent */
};

/* RDMA_MSG with every list in use. Read list: two segments at position 64 (one read chunk of
 * two segments, RFC 8166 §3.4.5) and one at position 200; each entry is 1 + position + HLOO
 * = 6 words. Write list: a chunk of 2 segments and a chunk of 1; each is 1 + count + 4 words a
 * segment. Reply chunk: 1 + count 1 + one segment. 16 + 72 + 4 + 40 + 24 + 4 + 24 = 184. */
static const uint8_t v1_msg_chunks[] = {
	W(0x11223344), W(1), W(128), W(0),
	/* read list */
	W(1), W(64), W(0x100), W(4096), H(0x00007f0000001000ull),
	W(1), W(64), W(0x101), W(1024), H(0x00007f0000003000ull),
	W(1), W(200), W(0x102), W(512), H(0x10),
	W(0),
	/* write list */
	W(1), W(2), W(0x200), W(8192), H(0xffffffff00000000ull), W(0x201), W(100), H(1),
	W(1), W(1), W(0x202), W(65536), H(0x8000000000000000ull),
	W(0),
	/* reply chunk */
	W(1), W(1), W(0x300), W(1024), H(0x2000),
};

/* RDMA_NOMSG long call: a position-zero read chunk carries the whole RPC call (RFC 8166 §3.5.3).
 * 16 + 24 + 4 + 4 + 4 = 52. */
static const uint8_t v1_nomsg_pos0[] = {
	W(0x0000beef), W(1), W(1), W(1),
	W(1), W(0), W(0x400), W(2048), H(0x5000), W(0), /* read list: one chunk at position 0 */
	W(0),                                           /* write list: empty */
	W(0),                                           /* no reply chunk */
};

/* RDMA_NOMSG long reply: the server wrote the reply into the reply chunk (two segments) and
 * returns the chunk with its lengths rewritten. 16 + 4 + 4 + (4 + 4 + 32) = 64. */
static const uint8_t v1_nomsg_reply[] = {
	W(0x0000beef), W(1), W(64), W(1),
	W(0), W(0),                                     /* read list, write list: empty */
	W(1), W(2), W(0x500), W(4096), H(0x6000),       /* reply chunk, segment 1 */
	W(0x501), W(17), H(0x7000),                     /* segment 2 */
};

/* RDMA_MSGP (2005 draft §3.5, §4.2): align and thresh precede the lists. 16 + 8 + 12 = 36. */
static const uint8_t v1_msgp[] = {
	W(0x01010101), W(1), W(16), W(2),
	W(4096), W(1024),                              /* rdma_align, rdma_thresh */
	W(0), W(0), W(0),
};

/* RDMA_DONE (2005 draft §3.8: "only 16 bytes in length"): the fixed words only. */
static const uint8_t v1_done[] = {
	W(0x02020202), W(1), W(0), W(3),
};

/* RDMA_ERROR ERR_VERS with the supported range 1..1 (RFC 8166 §4.2, §5.3.2). 28 bytes. */
static const uint8_t v1_err_vers[] = {
	W(0x03030303), W(1), W(64), W(4), W(1), W(1), W(1),
};

/* RDMA_ERROR ERR_CHUNK, RFC 8166 form (no arm), as Linux sends it. 20 bytes. */
static const uint8_t v1_err_chunk[] = {
	W(0x04040404), W(1), W(64), W(4), W(2),
};

/* RDMA_ERROR ERR_CHUNK, 2005 draft form: rdma_extra[8] follows. The header is the first 20
 * bytes; the extra words are ignored. */
static const uint8_t v1_err_chunk_draft[] = {
	W(0x04040404), W(1), W(64), W(4), W(2),
	W(1), W(2), W(3), W(4), W(5), W(6), W(7), W(8),
};

/* RDMA_ERROR with an error code neither spec defines: decodes with no arm. 20 bytes. */
static const uint8_t v1_err_unknown[] = {
	W(0x05050505), W(1), W(1), W(4), W(7),
};

/* rdma_vers 3: ERR_VERS is the answer; the fixed words are still valid. */
static const uint8_t v1_bad_vers[] = {
	W(0x06060606), W(3), W(1), W(0), W(0), W(0), W(0),
};

/* rdma_proc 5 is not a version 1 message type: ERR_CHUNK. */
static const uint8_t v1_bad_proc[] = {
	W(0x07070707), W(1), W(1), W(5), W(0), W(0), W(0),
};

/* A read-list discriminator of 2: XDR optional data is a bool, 0 or 1. */
static const uint8_t v1_bad_discrim[] = {
	W(0x08080808), W(1), W(1), W(0), W(2), W(0), W(0),
};

/* A write chunk claiming 0x10000000 segments in a 32-byte message. */
static const uint8_t v1_bad_count[] = {
	W(0x09090909), W(1), W(1), W(0), W(0), W(1), W(0x10000000), W(0),
};

/* 12 bytes: not even the fixed words. Dropped without a reply. */
static const uint8_t v1_short[] = {
	W(0x0a0a0a0a), W(1), W(1),
};

/* ------------------------------------------------------------------------------------------ */
/* RPC-over-RDMA version 2 (draft-01 §6, §8). Prefix: xid, vers (2), credit, htype, flags.     */
/* htype: MSG 0, NOMSG 1, ERROR 4, CONNPROP 5. Flags: RESPONSE 1, MORE 2, TPMORE 4.            */
/* ------------------------------------------------------------------------------------------ */

/* RDMA2_MSG, empty chunk lists: prefix (5) + inv_handle + 3 list words = 9 words = 36. */
static const uint8_t v2_msg_empty[] = {
	W(0x0a0b0c0d), W(2), W(32), W(0), W(0), /* prefix: a call (RESPONSE clear) */
	W(0),                                   /* rdma_inv_handle: none */
	W(0), W(0), W(0),                       /* read list, write list, reply chunk */
};

/* RDMA2_MSG with one read chunk, one write chunk of two segments and a reply chunk whose handle
 * the responder may invalidate. 20 + 4 + 24 + 4 + 40 + 4 + 24 = 120. */
static const uint8_t v2_msg_chunks[] = {
	W(0x22334455), W(2), W(8), W(0), W(0),
	W(0x300),                                                   /* rdma_inv_handle */
	W(1), W(32), W(0x100), W(4096), H(0x10000), W(0),           /* read list */
	W(1), W(2), W(0x200), W(512), H(0x20000), W(0x201), W(512), H(0x30000), W(0), /* writes */
	W(1), W(1), W(0x300), W(8192), H(0x40000),                  /* reply chunk */
};

/* RDMA2_MSG carrying a reply: RESPONSE set (§6.2.2.1). */
static const uint8_t v2_msg_response[] = {
	W(0x0a0b0c0d), W(2), W(30), W(0), W(1), W(0), W(0), W(0), W(0),
};

/* RDMA2_NOMSG with empty lists: a credit grant refresh, xid 0 (§6.3.2). */
static const uint8_t v2_nomsg_refresh[] = {
	W(0), W(2), W(64), W(1), W(0), W(0), W(0), W(0), W(0),
};

/* RDMA2_MSG with MORE: the payload continues in the next message; no chunks (§6.2.2.2). */
static const uint8_t v2_msg_more[] = {
	W(0x0c0c0c0c), W(2), W(4), W(0), W(2), W(0), W(0), W(0), W(0),
};

/* RDMA2_ERROR (htype 4, RESPONSE set, §6.2.2.1) with each rdma_err and its arm (§6.3.3). */
static const uint8_t v2_err_vers[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(1), W(2), W(2), /* ERR_VERS 2..2: 32 */
};
static const uint8_t v2_err_bad_xdr[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(2), /* BAD_XDR: void, 24 */
};
static const uint8_t v2_err_bad_propval[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(3),
};
static const uint8_t v2_err_inval_htype[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(4),
};
static const uint8_t v2_err_inval_cont[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(5),
};
static const uint8_t v2_err_read_chunks[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(6), W(2), /* rdma_max_chunks 2: 28 */
};
static const uint8_t v2_err_write_chunks[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(7), W(0), /* rdma_max_chunks 0 */
};
static const uint8_t v2_err_segments[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(8), W(16), /* rdma_max_segments 16 */
};
static const uint8_t v2_err_write_resource[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(9), W(1), W(65536), /* index 1, needed: 32 */
};
static const uint8_t v2_err_reply_resource[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(10), W(12288), /* rdma_length_needed */
};
static const uint8_t v2_err_system[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(100),
};
static const uint8_t v2_err_unknown[] = {
	W(0x0d0d0d0d), W(2), W(1), W(4), W(1), W(77), /* unknown code: "default: void" */
};

/* RDMA2_CONNPROP (§5, §6.3.4): a propset of 7 propvals, each { which, opaque rdma_data<> }.
 * 20 + 4 + 12 + 8 + 12 + 12 + 12 + 20 + 12 = 112. */
static const uint8_t v2_connprop[] = {
	W(0), W(2), W(32), W(5), W(0),
	W(7),                                /* seven properties */
	W(1), W(4), W(8192),                 /* SBSIZ = 8192 */
	W(2), W(0),                          /* RBSIZ: zero length = default (4096) */
	W(3), W(4), W(0x100000),             /* RSSIZ = 1 MiB */
	W(4), W(4), W(32),                   /* RCSIZ = 32 */
	W(5), W(4), W(3),                    /* BRS = RDMA2_RVRSDIR_GENL */
	W(6), W(12), W(5), 'r', 'p', 'c', 'r', 1, 0, 0, 0, /* HOSTAUTH: opaque<> of 5 bytes */
	W(0x7fff0001), W(3), 'a', 'b', 'c', 0, /* unknown property: kept, not checked */
};

/* RDMA2_CONNPROP with TPMORE and no properties yet. 24 bytes. */
static const uint8_t v2_connprop_tpmore[] = {
	W(0), W(2), W(32), W(5), W(4), W(0),
};

/* SBSIZ whose rdma_data is 2 bytes: not a uint32 (§5.1): BAD_PROPVAL. */
static const uint8_t v2_bad_propval_len[] = {
	W(0), W(2), W(32), W(5), W(0), W(1), W(1), W(2), 0x10, 0x00, 0, 0,
};

/* BRS = 4: no such reverse-direction level. */
static const uint8_t v2_bad_propval_brs[] = {
	W(0), W(2), W(32), W(5), W(0), W(1), W(5), W(4), W(4),
};

/* HOSTAUTH whose inner opaque<> claims 9 bytes inside 8 bytes of rdma_data. */
static const uint8_t v2_bad_propval_hostauth[] = {
	W(0), W(2), W(32), W(5), W(0), W(1), W(6), W(8), W(9), 'a', 'b', 'c', 'd',
};

/* An unknown property whose rdma_data runs past the message: BAD_PROPVAL (§5.1). */
static const uint8_t v2_propval_overrun[] = {
	W(0), W(2), W(32), W(5), W(0), W(1), W(99), W(100), W(0),
};

/* TPMORE on RDMA2_MSG: INVAL_HTYPE (§6.2.2.3). */
static const uint8_t v2_tpmore_on_msg[] = {
	W(0x0e0e0e0e), W(2), W(1), W(0), W(4), W(0), W(0), W(0), W(0),
};

/* MORE on RDMA2_NOMSG: INVAL_CONT (§6.2.2.2). */
static const uint8_t v2_more_on_nomsg[] = {
	W(0x0e0e0e0e), W(2), W(1), W(1), W(2), W(0), W(0), W(0), W(0),
};

/* MORE with a write chunk: chunks only in the last message of a sequence: INVAL_CONT. */
static const uint8_t v2_more_with_chunks[] = {
	W(0x0e0e0e0e), W(2), W(1), W(0), W(2), W(0),
	W(0), W(1), W(1), W(0x200), W(64), H(0), W(0), W(0),
};

/* htype 2 (version 1's MSGP) is not a version 2 header type: INVAL_HTYPE. */
static const uint8_t v2_bad_htype[] = {
	W(0x0f0f0f0f), W(2), W(1), W(2), W(0), W(0), W(0), W(0), W(0),
};

/* Version 2 but only 16 bytes: shorter than the prefix, dropped (§7). */
static const uint8_t v2_short[] = {
	W(0x10101010), W(2), W(1), W(0),
};

/* rdma_vers 3. */
static const uint8_t v2_bad_vers[] = {
	W(0x11111111), W(3), W(1), W(0), W(0), W(0), W(0), W(0), W(0),
};

/* ------------------------------------------------------------------------------------------ */
/* xcharext operations in rpcr's OPTIONAL carrier: prefix with htype 0x72706372, then         */
/* rdma_opttype and opaque rdma_optinfo<> holding the operation (xcharext §4, §5.2).           */
/* ------------------------------------------------------------------------------------------ */

/* INIT_XCHAR: xcharspec of 4 xcharvals + xcharsubset { 0x5 } (elements 0 and 2 never change).
 * Body: 4 + 12 + 12 + 12 + 16 + 8 = 64; message 20 + 8 + 64 = 92. */
static const uint8_t xchar_init[] = {
	W(0), W(2), W(32), W(0x72706372), W(0),
	W(1), W(64),                          /* ROPT_INITXCH, optinfo length */
	W(4),                                 /* optixc_start: 4 values */
	W(1), W(4), W(8192),                  /* XCHAR_RBSIZ = 8192 */
	W(2), W(4), W(1),                     /* XCHAR_RQREMINV = TRUE */
	W(3), W(4), W(3),                     /* XCHAR_BRS = BKRQSUP_GENL */
	W(0xffffff00), W(5), 'h', 'e', 'l', 'l', 'o', 0, 0, 0, /* experimental id (§6.3) */
	W(1), W(0x5),                         /* optixc_nochg */
};

/* REQ_XCHAR: want RBSIZ = 16384. Body 4 + 12 = 16; message 44. */
static const uint8_t xchar_req[] = {
	W(0x1234), W(2), W(32), W(0x72706372), W(0),
	W(2), W(16), W(1), W(1), W(4), W(16384),
};

/* RESP_XCHAR: done { 0x1 }, rej { 0x2 }, pend {}. Body 8 + 8 + 4 = 20; message 48. */
static const uint8_t xchar_resp[] = {
	W(0x1234), W(2), W(32), W(0x72706372), W(1),
	W(3), W(20), W(1), W(1), W(1), W(2), W(0),
};

/* UPD_XCHAR: now RBSIZ = 16384, pendclr TRUE. Body 12 + 4 = 16; message 44. */
static const uint8_t xchar_upd[] = {
	W(0x99), W(2), W(32), W(0x72706372), W(0),
	W(4), W(16), W(1), W(4), W(16384), W(1),
};

/* UPD_XCHAR with RQREMINV = 2: not a bool: BAD_PROPVAL. */
static const uint8_t xchar_bad_bool[] = {
	W(0x99), W(2), W(32), W(0x72706372), W(0),
	W(4), W(16), W(2), W(4), W(2), W(0),
};

/* UPD_XCHAR with pendclr = 2: a malformed bool outside any xcharval: BAD_XDR. */
static const uint8_t xchar_bad_pendclr[] = {
	W(0x99), W(2), W(32), W(0x72706372), W(0),
	W(4), W(16), W(1), W(4), W(4096), W(2),
};

/* Operation 9 does not exist: INVAL_HTYPE (the fallback for the draft's INVAL_OPTION). */
static const uint8_t xchar_bad_op[] = {
	W(0x99), W(2), W(32), W(0x72706372), W(0), W(9), W(4), W(0),
};

/* REQ_XCHAR whose optinfo carries a word after the operation: BAD_XDR. */
static const uint8_t xchar_trailing[] = {
	W(0x99), W(2), W(32), W(0x72706372), W(0),
	W(2), W(20), W(1), W(1), W(4), W(16384), W(0),
};

/* ------------------------------------------------------------------------------------------ */
/* RDMA-CM private data (RFC 8797 §4): magic 0xf6ab0e18, version 1, flags (R = bit 0),          */
/* send size, receive size, each (bytes / 1024) - 1.                                           */
/* ------------------------------------------------------------------------------------------ */

/* What knfsd sends (FACTS.md): no R, 4096 / 4096. */
static const uint8_t cm_knfsd[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03};
/* R set, send 256 KiB (255), receive 1 KiB (0). */
static const uint8_t cm_rbit[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0xff, 0x00};
/* After 3 bytes of another layer's data (§5.2: any offset, unaligned), then a trailing byte:
 * R, send 8 KiB (7), receive 16 KiB (15). */
static const uint8_t cm_offset[] = {0x00, 0x11, 0x22, 0xf6, 0xab, 0x0e, 0x18,
				    0x01, 0x01, 0x07, 0x0f, 0xaa};
/* Reserved bits set: ignored (§4); R clear; 1 KiB both ways. */
static const uint8_t cm_reserved[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x00, 0x00};
/* Version 2 of the format: not understood, so as if absent. */
static const uint8_t cm_bad_version[] = {0xf6, 0xab, 0x0e, 0x18, 0x02, 0x00, 0x03, 0x03};
/* Another layer's private data only (iWARP MPA's "MPA ID Req Frame" start). */
static const uint8_t cm_other[] = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q'};
/* An unknown version first, then a good occurrence: the search goes on. No R, 2 KiB / 4 KiB. */
static const uint8_t cm_second[] = {0xf6, 0xab, 0x0e, 0x18, 0x09, 0x00, 0x00, 0x00,
				    0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x01, 0x03};

/* ------------------------------------------------------------------------------------------ */
/* ONC RPC (RFC 5531 §9): call = xid, CALL (0), rpcvers 2, prog, vers, proc, cred, verf;      */
/* opaque_auth = flavor, body<400>.                                                            */
/* ------------------------------------------------------------------------------------------ */

/* NFSv3 NULL call with AUTH_NONE credential and verifier: 10 words = 40. */
static const uint8_t call_null_none[] = {
	W(0x0a0b0c0d), W(0), W(2), W(100003), W(3), W(0),
	W(0), W(0), /* cred: AUTH_NONE, empty body */
	W(0), W(0), /* verf: AUTH_NONE, empty body */
};

/* AUTH_SYS credential (RFC 5531 Appendix A): stamp, machinename<255> "rpcr-host" (9 bytes, 3
 * pad), uid 1000, gid 100, gids<16> {10, 20}: body 4 + 16 + 4 + 4 + 12 = 40. Call 24 + 48 + 8. */
static const uint8_t call_authsys[] = {
	W(0x00000042), W(0), W(2), W(0x2f5a0001), W(1), W(1),
	W(1), W(40),                                              /* cred: AUTH_SYS, 40 bytes */
	W(0x12345678),                                            /* stamp */
	W(9), 'r', 'p', 'c', 'r', '-', 'h', 'o', 's', 't', 0, 0, 0, /* machinename */
	W(1000), W(100),                                          /* uid, gid */
	W(2), W(10), W(20),                                       /* gids */
	W(0), W(0),                                               /* verf: AUTH_NONE */
};

/* RPCSEC_GSS (flavor 6): passed through as opaque. 24 + 16 + 12 = 52. */
static const uint8_t call_gss[] = {
	W(0x43), W(0), W(2), W(100003), W(4), W(1),
	W(6), W(8), W(0xdeadbeef), W(0xcafef00d),
	W(6), W(4), W(0x01020304),
};

/* rpcvers 3: answered RPC_MISMATCH (2..2), nothing after rpcvers is parsed. */
static const uint8_t call_bad_rpcvers[] = {
	W(0x44), W(0), W(3), W(100003), W(3), W(0), W(0), W(0), W(0), W(0),
};

/* A credential body of 404 bytes (> 400, RFC 5531 §8.2): AUTH_ERROR AUTH_BADCRED. The body is
 * zeros; the verifier after it is AUTH_NONE (zeros too). 24 + 8 + 404 + 8 = 444. */
static const uint8_t call_cred_too_big[444] = {
	W(0x45), W(0), W(2), W(100003), W(3), W(0), W(1), W(404),
};

/* msg_type REPLY where a call is expected. */
static const uint8_t call_not_call[] = {
	W(0x46), W(1), W(0), W(0), W(0), W(0),
};

/* Replies: xid, REPLY (1), reply_stat; MSG_ACCEPTED (0): verf, accept_stat [mismatch]; MSG_DENIED
 * (1): reject_stat, then RPC_MISMATCH low/high or AUTH_ERROR auth_stat. */
static const uint8_t reply_success[] = {
	W(0x0a0b0c0d), W(1), W(0), W(0), W(0), W(0), /* verf AUTH_NONE, SUCCESS: 24 */
};
static const uint8_t reply_prog_unavail[] = {
	W(0x50), W(1), W(0), W(0), W(0), W(1),
};
static const uint8_t reply_prog_mismatch[] = {
	W(0x51), W(1), W(0), W(0), W(0), W(2), W(2), W(4), /* versions 2..4: 32 */
};
static const uint8_t reply_proc_unavail[] = {
	W(0x52), W(1), W(0), W(0), W(0), W(3),
};
static const uint8_t reply_garbage_args[] = {
	W(0x53), W(1), W(0), W(0), W(0), W(4),
};
static const uint8_t reply_system_err[] = {
	W(0x54), W(1), W(0), W(0), W(0), W(5),
};
static const uint8_t reply_rpc_mismatch[] = {
	W(0x55), W(1), W(1), W(0), W(2), W(2), /* MSG_DENIED RPC_MISMATCH 2..2: 24 */
};
static const uint8_t reply_auth_error[] = {
	W(0x56), W(1), W(1), W(1), W(1), /* MSG_DENIED AUTH_ERROR AUTH_BADCRED: 20 */
};
/* A verifier with a 4-byte body (e.g. AUTH_SHORT handed back). */
static const uint8_t reply_verf[] = {
	W(0x57), W(1), W(0), W(2), W(4), W(0x0badf00d), W(0),
};
static const uint8_t reply_bad_stat[] = {
	W(0x58), W(1), W(2), W(0), W(0), W(0),
};
static const uint8_t reply_bad_reject[] = {
	W(0x59), W(1), W(1), W(3), W(0),
};

/* AUTH_SYS bodies alone. */
static const uint8_t authsys_basic[] = {
	W(0x12345678), W(9), 'r', 'p', 'c', 'r', '-', 'h', 'o', 's', 't', 0, 0, 0,
	W(1000), W(100), W(2), W(10), W(20),
};
/* Root, empty machine name, no groups: 20 bytes. */
static const uint8_t authsys_root[] = {
	W(0), W(0), W(0), W(0), W(0),
};
/* 17 groups: one over the limit. */
static const uint8_t authsys_17_gids[] = {
	W(1), W(0), W(0), W(0), W(17),
	W(1), W(2), W(3), W(4), W(5), W(6), W(7), W(8), W(9), W(10), W(11), W(12), W(13),
	W(14), W(15), W(16), W(17),
};
/* A machine name of 256 bytes: one over the limit (only the count matters). */
static const uint8_t authsys_long_machine[] = {
	W(1), W(256), W(0), W(0),
};
/* A word after the groups: the body must be exactly authsys_parms. */
static const uint8_t authsys_trailing[] = {
	W(1), W(0), W(0), W(0), W(0), W(0),
};

/* CONF_RDMA (2005 draft §6.2): three words each. */
static const uint8_t conf_req[] = {
	W(4096), W(1024), W(16), /* maxcall_sendsize, maxreply_sendsize, maxrdmaread */
};
static const uint8_t conf_reply[] = {
	W(8192), W(4096), W(8), /* maxcall_sendsize, align, maxrdmaread */
};
static const uint8_t conf_short[] = {
	W(4096), W(1024),
};

#define G(fam, n, exp, canon)                                                                      \
	{                                                                                          \
		.family = (fam), .name = #n, .bytes = (n), .len = sizeof(n), .expect = (exp),      \
		.canonical = (canon),                                                              \
	}

/* clang-format on */

const struct rpcr_golden rpcr_goldens[] = {
	G(RPCR_GOLDEN_V1, v1_msg_empty, 28, true),
	G(RPCR_GOLDEN_V1, v1_msg_chunks, 184, true),
	G(RPCR_GOLDEN_V1, v1_nomsg_pos0, 52, true),
	G(RPCR_GOLDEN_V1, v1_nomsg_reply, 64, true),
	G(RPCR_GOLDEN_V1, v1_msgp, 36, true),
	G(RPCR_GOLDEN_V1, v1_done, 16, true),
	G(RPCR_GOLDEN_V1, v1_err_vers, 28, true),
	G(RPCR_GOLDEN_V1, v1_err_chunk, 20, true),
	G(RPCR_GOLDEN_V1, v1_err_chunk_draft, 20, true),
	G(RPCR_GOLDEN_V1, v1_err_unknown, 20, true),
	G(RPCR_GOLDEN_V1, v1_bad_vers, RPCR_PROTO_EVERS, false),
	G(RPCR_GOLDEN_V1, v1_bad_proc, RPCR_PROTO_EHTYPE, false),
	G(RPCR_GOLDEN_V1, v1_bad_discrim, RPCR_PROTO_EBADXDR, false),
	G(RPCR_GOLDEN_V1, v1_bad_count, RPCR_PROTO_EBADXDR, false),
	G(RPCR_GOLDEN_V1, v1_short, RPCR_PROTO_ESHORT, false),

	G(RPCR_GOLDEN_V2, v2_msg_empty, 36, true),
	G(RPCR_GOLDEN_V2, v2_msg_chunks, 120, true),
	G(RPCR_GOLDEN_V2, v2_msg_response, 36, true),
	G(RPCR_GOLDEN_V2, v2_nomsg_refresh, 36, true),
	G(RPCR_GOLDEN_V2, v2_msg_more, 36, true),
	G(RPCR_GOLDEN_V2, v2_err_vers, 32, true),
	G(RPCR_GOLDEN_V2, v2_err_bad_xdr, 24, true),
	G(RPCR_GOLDEN_V2, v2_err_bad_propval, 24, true),
	G(RPCR_GOLDEN_V2, v2_err_inval_htype, 24, true),
	G(RPCR_GOLDEN_V2, v2_err_inval_cont, 24, true),
	G(RPCR_GOLDEN_V2, v2_err_read_chunks, 28, true),
	G(RPCR_GOLDEN_V2, v2_err_write_chunks, 28, true),
	G(RPCR_GOLDEN_V2, v2_err_segments, 28, true),
	G(RPCR_GOLDEN_V2, v2_err_write_resource, 32, true),
	G(RPCR_GOLDEN_V2, v2_err_reply_resource, 28, true),
	G(RPCR_GOLDEN_V2, v2_err_system, 24, true),
	G(RPCR_GOLDEN_V2, v2_err_unknown, 24, true),
	G(RPCR_GOLDEN_V2, v2_connprop, 112, true),
	G(RPCR_GOLDEN_V2, v2_connprop_tpmore, 24, true),
	G(RPCR_GOLDEN_V2, v2_bad_propval_len, RPCR_PROTO_EPROPVAL, false),
	G(RPCR_GOLDEN_V2, v2_bad_propval_brs, RPCR_PROTO_EPROPVAL, false),
	G(RPCR_GOLDEN_V2, v2_bad_propval_hostauth, RPCR_PROTO_EPROPVAL, false),
	G(RPCR_GOLDEN_V2, v2_propval_overrun, RPCR_PROTO_EPROPVAL, false),
	G(RPCR_GOLDEN_V2, v2_tpmore_on_msg, RPCR_PROTO_EHTYPE, false),
	G(RPCR_GOLDEN_V2, v2_more_on_nomsg, RPCR_PROTO_ECONT, false),
	G(RPCR_GOLDEN_V2, v2_more_with_chunks, RPCR_PROTO_ECONT, false),
	G(RPCR_GOLDEN_V2, v2_bad_htype, RPCR_PROTO_EHTYPE, false),
	G(RPCR_GOLDEN_V2, v2_short, RPCR_PROTO_ESHORT, false),
	G(RPCR_GOLDEN_V2, v2_bad_vers, RPCR_PROTO_EVERS, false),

	G(RPCR_GOLDEN_XCHAR, xchar_init, 92, true),
	G(RPCR_GOLDEN_XCHAR, xchar_req, 44, true),
	G(RPCR_GOLDEN_XCHAR, xchar_resp, 48, true),
	G(RPCR_GOLDEN_XCHAR, xchar_upd, 44, true),
	G(RPCR_GOLDEN_XCHAR, xchar_bad_bool, RPCR_PROTO_EPROPVAL, false),
	G(RPCR_GOLDEN_XCHAR, xchar_bad_pendclr, RPCR_PROTO_EBADXDR, false),
	G(RPCR_GOLDEN_XCHAR, xchar_bad_op, RPCR_PROTO_EHTYPE, false),
	G(RPCR_GOLDEN_XCHAR, xchar_trailing, RPCR_PROTO_EBADXDR, false),

	G(RPCR_GOLDEN_CM, cm_knfsd, 1, true),
	G(RPCR_GOLDEN_CM, cm_rbit, 1, true),
	G(RPCR_GOLDEN_CM, cm_offset, 1, false),
	G(RPCR_GOLDEN_CM, cm_reserved, 1, false),
	G(RPCR_GOLDEN_CM, cm_bad_version, 0, false),
	G(RPCR_GOLDEN_CM, cm_other, 0, false),
	G(RPCR_GOLDEN_CM, cm_second, 1, false),

	G(RPCR_GOLDEN_CALL, call_null_none, 40, true),
	G(RPCR_GOLDEN_CALL, call_authsys, 80, true),
	G(RPCR_GOLDEN_CALL, call_gss, 52, true),
	G(RPCR_GOLDEN_CALL, call_bad_rpcvers, -EPROTONOSUPPORT, false),
	G(RPCR_GOLDEN_CALL, call_cred_too_big, -EACCES, false),
	G(RPCR_GOLDEN_CALL, call_not_call, -EBADMSG, false),

	G(RPCR_GOLDEN_REPLY, reply_success, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_prog_unavail, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_prog_mismatch, 32, true),
	G(RPCR_GOLDEN_REPLY, reply_proc_unavail, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_garbage_args, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_system_err, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_rpc_mismatch, 24, true),
	G(RPCR_GOLDEN_REPLY, reply_auth_error, 20, true),
	G(RPCR_GOLDEN_REPLY, reply_verf, 28, true),
	G(RPCR_GOLDEN_REPLY, reply_bad_stat, -EBADMSG, false),
	G(RPCR_GOLDEN_REPLY, reply_bad_reject, -EBADMSG, false),

	G(RPCR_GOLDEN_AUTHSYS, authsys_basic, 0, true),
	G(RPCR_GOLDEN_AUTHSYS, authsys_root, 0, true),
	G(RPCR_GOLDEN_AUTHSYS, authsys_17_gids, -E2BIG, false),
	G(RPCR_GOLDEN_AUTHSYS, authsys_long_machine, -E2BIG, false),
	G(RPCR_GOLDEN_AUTHSYS, authsys_trailing, -EBADMSG, false),

	G(RPCR_GOLDEN_CONF_REQ, conf_req, 0, true),
	G(RPCR_GOLDEN_CONF_REPLY, conf_reply, 0, true),
	G(RPCR_GOLDEN_CONF_REQ, conf_short, RPCR_PROTO_EBADXDR, false),
};

const size_t rpcr_goldens_count = sizeof(rpcr_goldens) / sizeof(rpcr_goldens[0]);

const struct rpcr_golden *
rpcr_golden_find(const char *name)
{
	size_t i;

	for (i = 0; i < rpcr_goldens_count; i++)
		if (strcmp(rpcr_goldens[i].name, name) == 0)
			return &rpcr_goldens[i];
	return NULL;
}

const char *
rpcr_golden_family_name(enum rpcr_golden_family f)
{
	static const char *const names[] = {"v1",    "v2",      "xchar",    "cm",        "call",
					    "reply", "authsys", "conf_req", "conf_reply"};

	return (unsigned int)f < RPCR_GOLDEN_NUM_FAMILIES ? names[f] : "?";
}
