/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The mlx5 driver's data path on the queue model, for instruction counts: N rounds of a burst of
 * B requests from side A (the last one signalled), B receives posted first on side B when they
 * are Sends, the model run, then A's one completion and B's B polled. Deterministic: run it under
 * callgrind with --toggle-collect=mlx5_post_send (and mlx5_post_recv, mlx5_poll_cq) and divide
 * by the counts it prints (test/perf/mlx5-dp-bench.sh does).
 *
 * usage: bench_mlx5_dp [--op send|write|read] [--len L] [--burst B] [--iters N]
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5_pair.h"
#include "rpcr_test.h"

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"op", required_argument, NULL, 'o'},
					     {"len", required_argument, NULL, 'l'},
					     {"burst", required_argument, NULL, 'b'},
					     {"iters", required_argument, NULL, 'n'},
					     {NULL, 0, NULL, 0}};
	struct pair_conf c = mlx5_pair_conf_default;
	const char *op = "send";
	uint32_t len = 32, burst = 1, iters = 100000, i, k;
	uint64_t wqes = 0, recvs = 0, cqes = 0;
	struct rpcr_rdev_send_wr w[64];
	struct rpcr_rdev_recv_wr r[64];
	struct rpcr_rdev_sge gs[64], gr[64];
	struct rpcr_rdev_wc wc[64];
	struct rpcr_rdev_mw mw[32];
	struct rpcr_rdev_mw_bind mb[32];
	struct rpcr_rdev_mr mr;
	uint8_t opcode;
	struct pair p;
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			op = optarg;
			break;
		case 'l':
			len = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			burst = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			iters = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [--op send|write|read|bind] [--len L] [--burst B] "
				"[--iters N]\n",
				argv[0]);
			return 2;
		}
	}
	if (strcmp(op, "send") == 0)
		opcode = RPCR_RDEV_WR_SEND;
	else if (strcmp(op, "write") == 0)
		opcode = RPCR_RDEV_WR_WRITE;
	else if (strcmp(op, "read") == 0)
		opcode = RPCR_RDEV_WR_READ;
	else if (strcmp(op, "bind") == 0) /* a window bound over len bytes, then invalidated */
		opcode = RPCR_RDEV_WR_BIND_MW;
	else
		return 2;
	if (burst == 0 || burst > 64 || len == 0 || len > 4096 ||
	    (opcode == RPCR_RDEV_WR_BIND_MW && burst % 2 != 0))
		return 2;
	c.max_send_wr = c.max_recv_wr = 64;
	c.sge = 1;
	c.cqe_cnt = 256;
	c.mw = opcode == RPCR_RDEV_WR_BIND_MW;
	pair_up(&p, &c);
	mr = (struct rpcr_rdev_mr){.lkey = p.key, .rkey = p.key};
	for (k = 0; k < burst; k++) {
		gs[k] = sge(&p, k * 4096, len);
		gr[k] = sge(&p, 0x80000 + k * 4096, 4096);
		w[k] = swr(k, opcode, k == burst - 1, &gs[k], 1);
		w[k].remote_addr = (uintptr_t)at(&p, 0x40000 + k * 4096);
		w[k].rkey = p.key;
		r[k] = (struct rpcr_rdev_recv_wr){.wr_id = k, .sg_list = &gr[k], .num_sge = 1};
		if (opcode == RPCR_RDEV_WR_BIND_MW && k % 2 == 0) {
			struct rpcr_rdev_mw *m = &mw[k / 2];

			m->rkey = mm_mw_alloc(p.m);
			m->next_rkey = (m->rkey & ~0xffu) | ((m->rkey + 1) & 0xffu);
			mb[k / 2] = (struct rpcr_rdev_mw_bind){
				m, &mr, (uintptr_t)at(&p, 0x40000 + k * 4096), len,
				RPCR_RDEV_ACCESS_REMOTE_READ | RPCR_RDEV_ACCESS_REMOTE_WRITE};
			w[k].bind = &mb[k / 2];
			w[k].num_sge = 0;
			w[k].sg_list = NULL;
		} else if (opcode == RPCR_RDEV_WR_BIND_MW) {
			w[k].opcode = RPCR_RDEV_WR_LOCAL_INV;
			w[k].num_sge = 0;
			w[k].sg_list = NULL;
		}
	}
	for (i = 0; i < iters; i++) {
		uint16_t got;

		if (opcode == RPCR_RDEV_WR_SEND) {
			recvs += mlx5_post_recv(&p.qp[1]->vq.pub, r, (uint16_t)burst);
		}
		for (k = 1; opcode == RPCR_RDEV_WR_BIND_MW && k < burst; k += 2)
			w[k].invalidate_rkey = mw[k / 2].next_rkey; /* the key its bind gives */
		wqes += mlx5_post_send(&p.qp[0]->vq.pub, w, (uint16_t)burst);
		mm_step(p.m);
		got = mlx5_poll_cq(&p.cq[0]->vc.pub, wc, 1);
		if (opcode == RPCR_RDEV_WR_SEND)
			got += mlx5_poll_cq(&p.cq[1]->vc.pub, wc + 1, (uint16_t)burst);
		cqes += got;
		if (got != (opcode == RPCR_RDEV_WR_SEND ? burst + 1 : 1) || wc[0].status != 0) {
			fprintf(stderr, "round %u: %u completions, status %u\n", i, got,
				wc[0].status);
			return 1;
		}
	}
	printf("op %s len %u burst %u iters %u: wqes %llu recvs %llu cqes %llu doorbells %llu\n",
	       op, len, burst, iters, (unsigned long long)wqes, (unsigned long long)recvs,
	       (unsigned long long)cqes, (unsigned long long)doorbells(&p));
	pair_down(&p);
	return rpcr_test_failed != 0;
}
