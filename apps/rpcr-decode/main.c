/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * rpcr-decode: decode and pretty-print RPC-over-RDMA messages (version 1 and 2, with the ONC RPC
 * header of an inline message) or RDMA-CM private data, from hex on the command line, a hex text
 * file, or a binary file.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcr_oncrpc.h>
#include <rpcr_proto.h>
#include <rpcr_proto_cm.h>
#include <rpcr_proto_v1.h>
#include <rpcr_proto_v2.h>
#include <rpcr_proto_xchar.h>

#define MAX_MSG    (1u << 20)
#define CAP_READS  64
#define CAP_WRITES 16
#define CAP_SEGS   256
#define CAP_PROPS  64

/*
 * An example: RDMA_MSG carrying a call of the test program 0x2f5a0001 procedure 3 (READ of 8192
 * bytes), with one write chunk of one segment for the result.
 */
static const char example_hex[] = "0a0b0c0d 00000001 00000020 00000000 "
				  "00000000 "
				  "00000001 00000001 00000011 00002000 00000000 7f000000 00000000 "
				  "00000000 "
				  "0a0b0c0d 00000000 00000002 2f5a0001 00000001 00000003 "
				  "00000000 00000000 00000000 00000000 "
				  "00002000";

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: rpcr-decode [options] [HEX ...]\n"
		"Decode RPC-over-RDMA transport headers (version 1 or 2, by rdma_vers) and the ONC "
		"RPC\n"
		"header of an inline message, and print them.\n\n"
		"  HEX ...          the message as hex digits (spaces, ':' and '0x' are ignored)\n"
		"  -x, --hex FILE   read hex digits from FILE ('-' = stdin)\n"
		"  -b, --bin FILE   read the raw message from FILE\n"
		"  -c, --cm         decode RDMA-CM private data (RFC 8797) instead\n"
		"  -e, --example    decode a built-in example message\n"
		"  -h, --help       this text\n\n"
		"Exit status: 0 decoded, 1 the message is malformed, 2 usage or I/O error.\n");
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Append hex digits from @s to @buf; @half holds a pending nibble (or -1). */
static int
parse_hex(const char *s, uint8_t *buf, size_t *len, int *half)
{
	for (; *s != '\0'; s++) {
		int v;

		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && *half < 0) {
			s++;
			continue;
		}
		if (isspace((unsigned char)*s) || *s == ':' || *s == ',' || *s == '-')
			continue;
		v = hexval((unsigned char)*s);
		if (v < 0) {
			fprintf(stderr, "rpcr-decode: '%c' is not a hex digit\n", *s);
			return -EINVAL;
		}
		if (*half < 0) {
			*half = v;
			continue;
		}
		if (*len >= MAX_MSG) {
			fprintf(stderr, "rpcr-decode: message longer than %u bytes\n", MAX_MSG);
			return -E2BIG;
		}
		buf[(*len)++] = (uint8_t)(*half << 4 | v);
		*half = -1;
	}
	return 0;
}

static int
read_file(const char *path, bool hex, uint8_t *buf, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, hex ? "r" : "rb");
	int rc = 0;

	if (f == NULL) {
		fprintf(stderr, "rpcr-decode: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (hex) {
		char line[4096];
		int half = -1;

		while (rc == 0 && fgets(line, sizeof(line), f) != NULL)
			rc = parse_hex(line, buf, len, &half);
		if (rc == 0 && half >= 0) {
			fprintf(stderr, "rpcr-decode: odd number of hex digits\n");
			rc = -EINVAL;
		}
	} else {
		*len = fread(buf, 1, MAX_MSG, f);
		if (ferror(f)) {
			fprintf(stderr, "rpcr-decode: %s: read error\n", path);
			rc = -EIO;
		}
	}
	if (f != stdin)
		fclose(f);
	return rc;
}

static const char *
v1_proc_name(uint32_t proc)
{
	static const char *const names[] = {"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE",
					    "RDMA_ERROR"};

	return proc < 5 ? names[proc] : "unknown";
}

static const char *
v2_htype_name(uint32_t htype)
{
	switch (htype) {
	case RPCR_PROTO_V2_MSG:
		return "RDMA2_MSG";
	case RPCR_PROTO_V2_NOMSG:
		return "RDMA2_NOMSG";
	case RPCR_PROTO_V2_ERROR:
		return "RDMA2_ERROR";
	case RPCR_PROTO_V2_CONNPROP:
		return "RDMA2_CONNPROP";
	case RPCR_PROTO_V2_OPTIONAL:
		return "OPTIONAL (rpcr)";
	default:
		return "unknown";
	}
}

static const char *
v2_err_name(uint32_t err)
{
	static const char *const names[] = {"?",
					    "RDMA2_ERR_VERS",
					    "RDMA2_ERR_BAD_XDR",
					    "RDMA2_ERR_BAD_PROPVAL",
					    "RDMA2_ERR_INVAL_HTYPE",
					    "RDMA2_ERR_INVAL_CONT",
					    "RDMA2_ERR_READ_CHUNKS",
					    "RDMA2_ERR_WRITE_CHUNKS",
					    "RDMA2_ERR_SEGMENTS",
					    "RDMA2_ERR_WRITE_RESOURCE",
					    "RDMA2_ERR_REPLY_RESOURCE"};

	if (err == RPCR_PROTO_V2_ERR_SYSTEM)
		return "RDMA2_ERR_SYSTEM";
	return err >= 1 && err <= 10 ? names[err] : "unknown";
}

static void
print_seg(const char *indent, const struct rpcr_proto_seg *s)
{
	printf("%shandle 0x%08" PRIx32 " length %" PRIu32 " offset 0x%016" PRIx64 "\n", indent,
	       s->handle, s->length, s->offset);
}

static void
print_chunks(const struct rpcr_proto_chunks *c)
{
	uint32_t i, j;

	if (c->nreads == 0) {
		printf("  read list: empty\n");
	} else {
		printf("  read list: %" PRIu32 " segment(s) in %" PRIu32 " chunk(s)\n", c->nreads,
		       rpcr_proto_chunks_read_chunks(c));
		for (i = 0; i < c->nreads; i++) {
			printf("    position %" PRIu32 " ", c->reads[i].position);
			print_seg("", &c->reads[i].seg);
		}
	}
	if (c->nwrites == 0)
		printf("  write list: empty\n");
	for (i = 0; i < c->nwrites; i++) {
		printf("  write chunk %" PRIu32 ": %" PRIu32 " segment(s), %" PRIu64 " bytes\n", i,
		       c->writes[i].nsegs, rpcr_proto_wchunk_length(&c->writes[i]));
		for (j = 0; j < c->writes[i].nsegs; j++)
			print_seg("    ", &c->writes[i].segs[j]);
	}
	if (!c->has_reply) {
		printf("  reply chunk: none\n");
		return;
	}
	printf("  reply chunk: %" PRIu32 " segment(s), %" PRIu64 " bytes\n", c->reply.nsegs,
	       rpcr_proto_wchunk_length(&c->reply));
	for (j = 0; j < c->reply.nsegs; j++)
		print_seg("    ", &c->reply.segs[j]);
}

static const char *
flavor_name(uint32_t f)
{
	switch (f) {
	case RPCR_ONCRPC_AUTH_NONE:
		return "AUTH_NONE";
	case RPCR_ONCRPC_AUTH_SYS:
		return "AUTH_SYS";
	case RPCR_ONCRPC_AUTH_SHORT:
		return "AUTH_SHORT";
	case RPCR_ONCRPC_AUTH_DH:
		return "AUTH_DH";
	case RPCR_ONCRPC_RPCSEC_GSS:
		return "RPCSEC_GSS";
	default:
		return "flavor";
	}
}

static void
print_auth(const char *what, const struct rpcr_oncrpc_auth *a)
{
	struct rpcr_oncrpc_authsys sys;
	uint32_t i;

	printf("    %s: %s(%" PRIu32 "), %" PRIu32 " bytes", what, flavor_name(a->flavor),
	       a->flavor, a->len);
	if (a->flavor == RPCR_ONCRPC_AUTH_SYS &&
	    rpcr_oncrpc_authsys_decode(&sys, a->body, a->len) == 0) {
		printf(": stamp 0x%" PRIx32 " machine \"%.*s\" uid %" PRIu32 " gid %" PRIu32
		       " gids [",
		       sys.stamp, (int)sys.machine_len, sys.machine, sys.uid, sys.gid);
		for (i = 0; i < sys.ngids; i++)
			printf("%s%" PRIu32, i ? " " : "", sys.gids[i]);
		printf("]");
	}
	printf("\n");
}

static const char *const accept_names[] = {"SUCCESS",      "PROG_UNAVAIL", "PROG_MISMATCH",
					   "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"};

static void
print_rpc(const uint8_t *p, size_t len, uint32_t rdma_xid)
{
	struct rpcr_oncrpc_call call;
	struct rpcr_oncrpc_reply reply;
	uint32_t xid, mtype;
	ssize_t n;

	if (rpcr_oncrpc_peek(p, len, &xid, &mtype) != 0) {
		printf("  RPC message: %zu bytes, too short for an RPC header\n", len);
		return;
	}
	if (xid != rdma_xid)
		printf("  note: RPC xid 0x%08" PRIx32 " differs from rdma_xid\n", xid);
	if (mtype == RPCR_ONCRPC_CALL) {
		n = rpcr_oncrpc_call_decode(&call, p, len);
		if (n == -EPROTONOSUPPORT) {
			printf("  RPC CALL xid 0x%08" PRIx32 " rpcvers %" PRIu32
			       " (not 2: a server answers RPC_MISMATCH)\n",
			       call.xid, call.rpcvers);
			return;
		}
		if (n < 0) {
			printf("  RPC CALL: malformed (%s)\n", strerror((int)-n));
			return;
		}
		printf("  RPC CALL xid 0x%08" PRIx32 " prog %" PRIu32 " (0x%" PRIx32
		       ") vers %" PRIu32 " proc %" PRIu32 "\n",
		       call.xid, call.prog, call.prog, call.vers, call.proc);
		print_auth("cred", &call.cred);
		print_auth("verf", &call.verf);
		printf("    arguments: %zu bytes inline\n", len - (size_t)n);
		return;
	}
	n = rpcr_oncrpc_reply_decode(&reply, p, len);
	if (n < 0) {
		printf("  RPC REPLY: malformed (%s)\n", strerror((int)-n));
		return;
	}
	if (reply.stat == RPCR_ONCRPC_MSG_ACCEPTED) {
		printf("  RPC REPLY xid 0x%08" PRIx32 " MSG_ACCEPTED %s(%" PRIu32 ")", reply.xid,
		       reply.accept_stat < 6 ? accept_names[reply.accept_stat] : "unknown",
		       reply.accept_stat);
		if (reply.accept_stat == RPCR_ONCRPC_PROG_MISMATCH)
			printf(" low %" PRIu32 " high %" PRIu32, reply.mismatch_low,
			       reply.mismatch_high);
		printf("\n");
		print_auth("verf", &reply.verf);
		printf("    results: %zu bytes inline\n", len - (size_t)n);
	} else if (reply.reject_stat == RPCR_ONCRPC_RPC_MISMATCH) {
		printf("  RPC REPLY xid 0x%08" PRIx32 " MSG_DENIED RPC_MISMATCH low %" PRIu32
		       " high %" PRIu32 "\n",
		       reply.xid, reply.mismatch_low, reply.mismatch_high);
	} else {
		printf("  RPC REPLY xid 0x%08" PRIx32 " MSG_DENIED AUTH_ERROR auth_stat %" PRIu32
		       "\n",
		       reply.xid, reply.auth_stat);
	}
}

static int
decode_v1(const uint8_t *buf, size_t len)
{
	RPCR_PROTO_CHUNKS_DEFINE(c, CAP_READS, CAP_WRITES, CAP_SEGS);
	struct rpcr_proto_v1_hdr h = {.chunks = c};
	ssize_t n = rpcr_proto_v1_decode(&h, buf, len);

	printf("RPC-over-RDMA version 1 %s(%" PRIu32 ") xid 0x%08" PRIx32 " credits %" PRIu32 "\n",
	       v1_proc_name(h.proc), h.proc, h.xid, h.credit);
	if (n < 0) {
		uint32_t reply = rpcr_proto_v1_errcode((int)n);

		printf("  malformed: %s; a receiver answers %s\n", rpcr_proto_strerror((int)n),
		       reply == RPCR_PROTO_V1_ERR_CHUNK  ? "RDMA_ERROR ERR_CHUNK"
		       : reply == RPCR_PROTO_V1_ERR_VERS ? "RDMA_ERROR ERR_VERS"
							 : "nothing (drop)");
		return 1;
	}
	printf("  header: %zd bytes\n", n);
	switch (h.proc) {
	case RPCR_PROTO_V1_MSGP:
		printf("  padding: align %" PRIu32 " threshold %" PRIu32 "\n", h.align, h.thresh);
		/* fall through */
	case RPCR_PROTO_V1_MSG:
	case RPCR_PROTO_V1_NOMSG:
		print_chunks(&h.chunks);
		if (h.proc != RPCR_PROTO_V1_NOMSG)
			print_rpc(buf + n, len - (size_t)n, h.xid);
		break;
	case RPCR_PROTO_V1_ERROR:
		if (h.err == RPCR_PROTO_V1_ERR_VERS)
			printf("  ERR_VERS: versions %" PRIu32 "..%" PRIu32 "\n", h.vers_low,
			       h.vers_high);
		else if (h.err == RPCR_PROTO_V1_ERR_CHUNK)
			printf("  ERR_CHUNK\n");
		else
			printf("  error code %" PRIu32 " (unknown)\n", h.err);
		break;
	default:
		break;
	}
	return 0;
}

static void
print_xchar(const struct rpcr_proto_v2_hdr *h)
{
	struct rpcr_proto_xchar_val vals[CAP_PROPS];
	uint32_t words[3][16];
	struct rpcr_proto_xchar x = {
		.spec = {.vals = vals, .cap = CAP_PROPS},
		.sub = {{.words = words[0], .cap = 16},
			{.words = words[1], .cap = 16},
			{.words = words[2], .cap = 16}},
	};
	static const char *const ops[] = {"?", "INIT_XCHAR", "REQ_XCHAR", "RESP_XCHAR",
					  "UPD_XCHAR"};
	uint32_t i;
	int rc = rpcr_proto_v2_xchar_decode(h, &x);

	printf("  operation %s(%" PRIu32 "), %" PRIu32 " bytes\n",
	       h->opttype <= 4 ? ops[h->opttype] : "?", h->opttype, h->optinfo_len);
	if (rc != 0) {
		printf("  malformed: %s\n", rpcr_proto_strerror(rc));
		return;
	}
	for (i = 0; i < x.spec.n; i++)
		printf("    xcharval %" PRIu32 ": which %" PRIu32 ", %" PRIu32 " bytes\n", i,
		       vals[i].which, vals[i].len);
	if (x.op == RPCR_PROTO_XCHAR_UPD)
		printf("    now: which %" PRIu32 ", %" PRIu32 " bytes; pendclr %d\n", x.now.which,
		       x.now.len, x.pendclr);
	for (i = 0; i < 3; i++)
		if (x.sub[i].n != 0)
			printf("    subset %" PRIu32 ": %" PRIu32 " word(s), first 0x%08" PRIx32
			       "\n",
			       i, x.sub[i].n, x.sub[i].words[0]);
}

static int
decode_v2(const uint8_t *buf, size_t len)
{
	RPCR_PROTO_CHUNKS_DEFINE(c, CAP_READS, CAP_WRITES, CAP_SEGS);
	struct rpcr_proto_v2_prop props[CAP_PROPS];
	struct rpcr_proto_v2_hdr h = {.chunks = c, .props = {.props = props, .cap = CAP_PROPS}};
	ssize_t n = rpcr_proto_v2_decode(&h, buf, len);
	uint32_t i;

	printf("RPC-over-RDMA version 2 %s(%" PRIu32 ") xid 0x%08" PRIx32 " credits %" PRIu32
	       " flags 0x%" PRIx32 "%s%s%s\n",
	       v2_htype_name(h.htype), h.htype, h.xid, h.credit, h.flags,
	       h.flags & RPCR_PROTO_V2_F_RESPONSE ? " RESPONSE" : "",
	       h.flags & RPCR_PROTO_V2_F_MORE ? " MORE" : "",
	       h.flags & RPCR_PROTO_V2_F_TPMORE ? " TPMORE" : "");
	if (n < 0) {
		uint32_t reply = rpcr_proto_v2_errcode((int)n);

		printf("  malformed: %s; a receiver answers %s\n", rpcr_proto_strerror((int)n),
		       reply != 0 ? v2_err_name(reply) : "nothing (drop)");
		return 1;
	}
	printf("  header: %zd bytes\n", n);
	switch (h.htype) {
	case RPCR_PROTO_V2_MSG:
	case RPCR_PROTO_V2_NOMSG:
		printf("  inv_handle 0x%08" PRIx32 "\n", h.inv_handle);
		print_chunks(&h.chunks);
		if (h.htype == RPCR_PROTO_V2_MSG && !(h.flags & RPCR_PROTO_V2_F_MORE))
			print_rpc(buf + n, len - (size_t)n, h.xid);
		else if (h.htype == RPCR_PROTO_V2_MSG)
			printf("  payload: %zu bytes (continues in the next message)\n",
			       len - (size_t)n);
		break;
	case RPCR_PROTO_V2_ERROR:
		printf("  %s(%" PRIu32 ")", v2_err_name(h.err), h.err);
		switch (h.err) {
		case RPCR_PROTO_V2_ERR_VERS:
			printf(" versions %" PRIu32 "..%" PRIu32, h.vers_low, h.vers_high);
			break;
		case RPCR_PROTO_V2_ERR_READ_CHUNKS:
		case RPCR_PROTO_V2_ERR_WRITE_CHUNKS:
			printf(" max_chunks %" PRIu32, h.max_chunks);
			break;
		case RPCR_PROTO_V2_ERR_SEGMENTS:
			printf(" max_segments %" PRIu32, h.max_segments);
			break;
		case RPCR_PROTO_V2_ERR_WRITE_RESOURCE:
			printf(" chunk_index %" PRIu32 " length_needed %" PRIu32, h.chunk_index,
			       h.length_needed);
			break;
		case RPCR_PROTO_V2_ERR_REPLY_RESOURCE:
			printf(" length_needed %" PRIu32, h.length_needed);
			break;
		default:
			break;
		}
		printf("\n");
		break;
	case RPCR_PROTO_V2_CONNPROP:
		printf("  %" PRIu32 " propert%s\n", h.props.n, h.props.n == 1 ? "y" : "ies");
		for (i = 0; i < h.props.n; i++) {
			printf("    which %" PRIu32 ", %" PRIu32 " bytes", props[i].which,
			       props[i].len);
			if (props[i].which >= RPCR_PROTO_V2_PROP_SBSIZ &&
			    props[i].which <= RPCR_PROTO_V2_PROP_BRS)
				printf(" = %" PRIu32,
				       props[i].len == 4
					       ? rpcr_xdr_load32(props[i].data)
					       : rpcr_proto_v2_prop_default(props[i].which));
			printf("\n");
		}
		break;
	default:
		print_xchar(&h);
		break;
	}
	return 0;
}

static int
decode_cm(const uint8_t *buf, size_t len)
{
	struct rpcr_proto_cm cm;

	rpcr_proto_cm_decode(&cm, buf, len);
	printf("RDMA-CM private data (%zu bytes): %s\n", len,
	       cm.present ? "RPC-over-RDMA version 1 format found"
			  : "no RFC 8797 data: defaults apply");
	printf("  remote invalidation %s, send size %" PRIu32 ", receive size %" PRIu32 "\n",
	       cm.remote_inv ? "yes" : "no", cm.send_size, cm.recv_size);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"hex", required_argument, NULL, 'x'}, {"bin", required_argument, NULL, 'b'},
		{"cm", no_argument, NULL, 'c'},        {"example", no_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
	};
	static uint8_t buf[MAX_MSG];
	struct rpcr_proto_fixed f;
	const char *hexfile = NULL, *binfile = NULL;
	bool cm = false, example = false;
	size_t len = 0;
	int half = -1;
	int c, i;

	while ((c = getopt_long(argc, argv, "x:b:ceh", opts, NULL)) != -1) {
		switch (c) {
		case 'x':
			hexfile = optarg;
			break;
		case 'b':
			binfile = optarg;
			break;
		case 'c':
			cm = true;
			break;
		case 'e':
			example = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (example) {
		printf("example: %s\n", example_hex);
		if (parse_hex(example_hex, buf, &len, &half) != 0)
			return 2;
	} else if (hexfile != NULL || binfile != NULL) {
		if (optind != argc || (hexfile != NULL && binfile != NULL)) {
			usage(stderr);
			return 2;
		}
		if (read_file(hexfile != NULL ? hexfile : binfile, hexfile != NULL, buf, &len) != 0)
			return 2;
	} else {
		if (optind == argc) {
			usage(stderr);
			return 2;
		}
		for (i = optind; i < argc; i++)
			if (parse_hex(argv[i], buf, &len, &half) != 0)
				return 2;
		if (half >= 0) {
			fprintf(stderr, "rpcr-decode: odd number of hex digits\n");
			return 2;
		}
	}

	if (cm)
		return decode_cm(buf, len);
	if (rpcr_proto_peek(buf, len, &f) != 0) {
		printf("%zu bytes: shorter than any RPC-over-RDMA header (16 bytes); a receiver "
		       "drops "
		       "it\n",
		       len);
		return 1;
	}
	if (f.vers == RPCR_PROTO_V2_VERS)
		return decode_v2(buf, len);
	return decode_v1(buf, len);
}
