/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef RPCR_PROTO_INTERNAL_H
#define RPCR_PROTO_INTERNAL_H

/* Helpers shared by the codec's .c files; not installed. */

#include "rpcr_proto.h"

/*
 * Write the three lists at @p, which has room for rpcr_proto_chunks_size(@c) bytes (a non-zero
 * size, so the counts are within their arrays). Returns the end of what was written.
 */
uint8_t *proto_chunks_put(uint8_t *p, const struct rpcr_proto_chunks *c);

#endif /* RPCR_PROTO_INTERNAL_H */
