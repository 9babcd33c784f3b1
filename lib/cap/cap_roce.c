/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * RoCEv2 frames (rpcr_cap.h): the headers of one reliable-connected message as one packet, and
 * its invariant CRC. Fields are written big-endian as the wire has them; the CRC is stored
 * little-endian, as the IBA specifies (Annex A17).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_net_crc.h>

#include "rpcr_cap.h"

#define ETH_LEN   14u
#define IP_LEN    20u
#define UDP_LEN   8u
#define BTH_LEN   12u
#define ROCE_PORT 4791u

/* BTH opcodes, reliable connected (IBA table 38). */
#define OP_SEND_ONLY      0x04u
#define OP_WRITE_ONLY     0x0au
#define OP_READ_REQ       0x0cu
#define OP_READ_RESP_ONLY 0x10u
#define OP_SEND_ONLY_INV  0x17u

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

uint32_t
rpcr_cap_roce_hdr(uint8_t *buf, const struct rpcr_cap_roce *f)
{
	uint8_t *ip = buf + ETH_LEN, *udp = ip + IP_LEN, *bth = udp + UDP_LEN, *ext = bth + BTH_LEN;
	uint32_t ext_len, op, len = RTE_MIN(f->len, RPCR_CAP_PAYLOAD_MAX), pad, iplen;

	switch (f->op) {
	case RPCR_CAP_SEND_INV:
		op = OP_SEND_ONLY_INV;
		ext_len = 4;
		put32(ext, f->rkey); /* IETH */
		break;
	case RPCR_CAP_WRITE:
	case RPCR_CAP_READ_REQ:
		op = f->op == RPCR_CAP_WRITE ? OP_WRITE_ONLY : OP_READ_REQ;
		ext_len = 16;
		put32(ext, (uint32_t)(f->va >> 32)); /* RETH */
		put32(ext + 4, (uint32_t)f->va);
		put32(ext + 8, f->rkey);
		put32(ext + 12, f->dma_len);
		if (f->op == RPCR_CAP_READ_REQ)
			len = 0; /* a request carries no data */
		break;
	case RPCR_CAP_READ_RESP:
		op = OP_READ_RESP_ONLY;
		ext_len = 4;
		put32(ext, 0); /* AETH: ACK, MSN 0 */
		break;
	default:
		op = OP_SEND_ONLY;
		ext_len = 0;
		break;
	}
	pad = (4 - len % 4) % 4;
	iplen = IP_LEN + UDP_LEN + BTH_LEN + ext_len + len + pad + RPCR_CAP_ICRC_LEN;

	/* Ethernet: locally administered addresses, 02:00 and the IPv4 address. */
	buf[0] = 0x02, buf[1] = 0;
	put32(buf + 2, f->dst_ip);
	buf[6] = 0x02, buf[7] = 0;
	put32(buf + 8, f->src_ip);
	put16(buf + 12, 0x0800);
	/* IPv4: DF, TTL 64, UDP. */
	memset(ip, 0, IP_LEN);
	ip[0] = 0x45;
	put16(ip + 2, iplen);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	put32(ip + 12, f->src_ip);
	put32(ip + 16, f->dst_ip);
	put16(ip + 10, rte_be_to_cpu_16(rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip)));
	/* UDP to the RoCEv2 port, checksum 0 (RoCEv2 allows it). */
	put16(udp, f->src_port);
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, iplen - IP_LEN);
	put16(udp + 6, 0);
	/* BTH: the opcode, solicited event off, no migration, the pad count, default P_Key. */
	bth[0] = (uint8_t)op;
	bth[1] = (uint8_t)(pad << 4);
	put16(bth + 2, 0xffff);
	bth[4] = 0;
	put24(bth + 5, f->dest_qp);
	bth[8] = 0;
	put24(bth + 9, f->psn);
	return ETH_LEN + IP_LEN + UDP_LEN + BTH_LEN + ext_len;
}

uint32_t
rpcr_cap_roce_len(const uint8_t *hdr)
{
	return ETH_LEN + ((uint32_t)hdr[ETH_LEN + 2] << 8 | hdr[ETH_LEN + 3]);
}

void
rpcr_cap_roce_icrc(uint8_t *frame)
{
	static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint32_t len = rpcr_cap_roce_len(frame), n = len - ETH_LEN - RPCR_CAP_ICRC_LEN;
	uint8_t stack[1024], *tmp = stack, *icrc = frame + len - RPCR_CAP_ICRC_LEN;
	uint32_t crc;

	/* CRC-32 (Ethernet's) over 8 bytes of ones, then the IP packet with the fields that may
	 * change in flight set to ones: TOS, TTL, IP checksum, UDP checksum, BTH resv8a. */
	if (sizeof(ones) + n > sizeof(stack)) {
		tmp = malloc(sizeof(ones) + n);
		if (tmp == NULL) {
			memset(icrc, 0, RPCR_CAP_ICRC_LEN);
			return;
		}
	}
	memcpy(tmp, ones, sizeof(ones));
	memcpy(tmp + sizeof(ones), frame + ETH_LEN, n);
	tmp[8 + 1] = 0xff;
	tmp[8 + 8] = 0xff;
	tmp[8 + 10] = tmp[8 + 11] = 0xff;
	tmp[8 + IP_LEN + 6] = tmp[8 + IP_LEN + 7] = 0xff;
	tmp[8 + IP_LEN + UDP_LEN + 4] = 0xff;
	crc = rte_net_crc_calc(tmp, sizeof(ones) + n, RTE_NET_CRC32_ETH);
	if (tmp != stack)
		free(tmp);
	icrc[0] = (uint8_t)crc;
	icrc[1] = (uint8_t)(crc >> 8);
	icrc[2] = (uint8_t)(crc >> 16);
	icrc[3] = (uint8_t)(crc >> 24);
}
