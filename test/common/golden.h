/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_GOLDEN_H
#define RPCR_GOLDEN_H

/*
 * Golden messages: bytes written by hand from the specifications, each with a comment that
 * derives it, and what decoding them must return. Shared by the unit tests, the fuzzers' seed
 * corpus and the tshark agreement test.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rpcr_golden_family {
	RPCR_GOLDEN_V1,         /* RPC-over-RDMA version 1 header */
	RPCR_GOLDEN_V2,         /* RPC-over-RDMA version 2 header */
	RPCR_GOLDEN_XCHAR,      /* version 2 OPTIONAL message carrying an xcharext operation */
	RPCR_GOLDEN_CM,         /* RDMA-CM private data */
	RPCR_GOLDEN_CALL,       /* ONC RPC call header */
	RPCR_GOLDEN_REPLY,      /* ONC RPC reply header */
	RPCR_GOLDEN_AUTHSYS,    /* AUTH_SYS credential body */
	RPCR_GOLDEN_CONF_REQ,   /* CONF_RDMA config_rdma_req */
	RPCR_GOLDEN_CONF_REPLY, /* CONF_RDMA config_rdma_reply */
	RPCR_GOLDEN_NUM_FAMILIES,
};

struct rpcr_golden {
	enum rpcr_golden_family family;
	const char *name;
	const uint8_t *bytes;
	size_t len;
	/*
	 * What the family's decoder returns: the header length (or 0 for whole-buffer formats) or
	 * a negative error. For RPCR_GOLDEN_CM: 1 when the private data is found, 0 when not.
	 */
	long expect;
	/* Re-encoding the decoded message gives back bytes[0, expect) exactly. */
	bool canonical;
};

extern const struct rpcr_golden rpcr_goldens[];
extern const size_t rpcr_goldens_count;

/* The golden called @name, or NULL. */
const struct rpcr_golden *rpcr_golden_find(const char *name);

/* Short name of a family ("v1", "v2", ...). */
const char *rpcr_golden_family_name(enum rpcr_golden_family f);

#endif /* RPCR_GOLDEN_H */
