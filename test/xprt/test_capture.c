/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * Capture (lib/xprt/capture.c), black box: a server poller and a client poller on shm, each on
 * its own worker lcore, a caller lcore making NULL calls through the client's ring without a
 * pause, and the main lcore:
 *
 *   - switches capture on and off 1,000 times under that load (each session's file on the
 *     same path): no call fails or is lost, and every session accounts for each record it
 *     took (written + dropped = recorded);
 *   - then captures a last second of calls and reads the file back (a pcapng walker here,
 *     independent of lib/cap): a section header, interfaces before the packets that name
 *     them, as many packet blocks as the capture says it wrote, each one a RoCEv2 frame
 *     (UDP 4791, a SEND's or an RDMA operation's BTH opcode), as many calls sent out as replies
 *     came in, the statistics blocks at the end;
 *   - one poller and one connection chosen (conf.poller, conf.conn), a connection that is not
 *     there;
 *   - the API's refusals: a second start (-EBUSY), a stop or a status with none running
 *     (-ENOENT), a snap length over the maximum (-EINVAL), a file that cannot be made, a poller
 *     that is not there (-ENODEV);
 *   - a poller destroyed while the capture runs: the stop that follows does not wait for it.
 *
 * usage: test_capture   (runs with --lcores 0@0,1@1,2@1,3@0)
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <rpcr_rdev.h>
#include <rpcr_xprt.h>

#include "rpcr_test.h"

#define TOGGLES 1000u

static struct rpcr_clnt *cl;
static volatile bool calls_stop;
static uint64_t calls_ok, calls_failed;

static int
caller(void *arg)
{
	RTE_SET_USED(arg);
	while (!calls_stop) {
		struct rpcr_call call;
		int rc;

		memset(&call, 0, sizeof(call));
		call.proc = RPCR_TESTPROG_NULL;
		rc = rpcr_clnt_call_sync(cl, &call);
		if (rc == 0)
			__atomic_add_fetch(&calls_ok, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&calls_failed, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* What the walker found in a pcapng file. */
struct walk {
	uint32_t shb, idb, epb, isb, other;
	uint32_t bad;       /* blocks or frames that are not what they should be */
	uint32_t out, in;   /* packets by direction (EPB flags) */
	uint32_t sends_out; /* SEND frames sent (calls, on the client's interfaces) */
	uint32_t sends_in;
	uint32_t rdma; /* RDMA WRITE / READ frames */
};

static uint32_t
le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* One enhanced packet block's frame: Ethernet, IPv4, UDP to 4791, a BTH with an opcode rpcr
 * sends. */
static void
walk_frame(struct walk *w, const uint8_t *f, uint32_t caplen, bool out)
{
	const uint8_t *bth;

	if (caplen < 14 + 20 + 8 + 12 || f[12] != 0x08 || f[13] != 0x00 || f[14] != 0x45 ||
	    f[14 + 9] != 17 || (f[14 + 20 + 2] << 8 | f[14 + 20 + 3]) != 4791) {
		w->bad++;
		return;
	}
	bth = f + 14 + 20 + 8;
	switch (bth[0]) {
	case 0x04: /* SEND ONLY */
	case 0x17: /* SEND ONLY with Invalidate */
		if (out)
			w->sends_out++;
		else
			w->sends_in++;
		break;
	case 0x0a: /* RDMA WRITE ONLY */
	case 0x0c: /* RDMA READ Request */
	case 0x10: /* RDMA READ Response Only */
		w->rdma++;
		break;
	default:
		w->bad++;
	}
}

static int
walk_file(const char *path, struct walk *w)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long len;
	uint32_t off = 0;

	memset(w, 0, sizeof(*w));
	if (f == NULL)
		return -errno;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)len + 1);
	if (b == NULL || fread(b, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(b);
		return -EIO;
	}
	fclose(f);
	while (off + 12 <= (uint32_t)len) {
		uint32_t type = le32(b + off), blen = le32(b + off + 4);

		if (blen < 12 || blen % 4 != 0 || off + blen > (uint32_t)len ||
		    le32(b + off + blen - 4) != blen) {
			w->bad++;
			break;
		}
		if (type == 0x0a0d0d0a) {
			w->shb++;
			if (le32(b + off + 8) != 0x1a2b3c4d)
				w->bad++;
		} else if (type == 1) {
			w->idb++;
			if (w->shb == 0)
				w->bad++;
		} else if (type == 6) {
			uint32_t iface = le32(b + off + 8), caplen = le32(b + off + 20),
				 orig = le32(b + off + 24),
				 optoff = off + 28 + ((caplen + 3) & ~3u);
			bool out = false;

			w->epb++;
			if (iface >= w->idb || caplen > orig || 28 + caplen + 4 > blen) {
				w->bad++;
			} else {
				/* The options: the direction flags (code 2). */
				while (optoff + 4 <= off + blen - 4) {
					uint16_t code, olen;

					memcpy(&code, b + optoff, 2);
					memcpy(&olen, b + optoff + 2, 2);
					if (code == 0)
						break;
					if (code == 2 && olen == 4)
						out = (le32(b + optoff + 4) & 3) == 2;
					optoff += 4 + ((olen + 3u) & ~3u);
				}
				if (out)
					w->out++;
				else
					w->in++;
				walk_frame(w, b + off + 28, caplen, out);
			}
		} else if (type == 5) {
			w->isb++;
			if (le32(b + off + 8) >= w->idb)
				w->bad++;
		} else {
			w->other++;
		}
		off += blen;
	}
	if (off != (uint32_t)len)
		w->bad++;
	free(b);
	return 0;
}

int
main(void)
{
	static char a0[] = "test_capture", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--lcores",
		    a4[] = "0@0,1@1,2@1,3@0", a5[] = "--no-shconf", a6[] = "--no-telemetry",
		    a7[] = "--iova-mode=va", a8[] = "--log-level=error", a9[] = "-m",
		    a10[] = "1024";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, NULL};
	struct rpcr_xprt_poller_conf pc = {.bufs = 2048,
					   .bulk_bufs = 16,
					   .poll_mode = RPCR_XPRT_POLL_ADAPTIVE,
					   .idle_us = 200};
	struct rpcr_xprt_capture_conf cc;
	struct rpcr_xprt_capture_stats st;
	struct rpcr_rdev *ds = NULL, *dc = NULL;
	struct rpcr_xprt_poller *ps = NULL, *pcl = NULL;
	struct rpcr_svc *s = NULL;
	unsigned int ls, lc, lk;
	uint64_t rec = 0, wr = 0, drops = 0, before;
	char dir[] = "/tmp/test_capture.XXXXXX", path[128], addr[64];
	struct walk w;
	uint32_t i;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 || rte_lcore_count() < 4) {
		fprintf(stderr, "test_capture: EAL with four lcores\n");
		return 1;
	}
	ls = rte_get_next_lcore(-1, 1, 0);
	lc = rte_get_next_lcore(ls, 1, 0);
	lk = rte_get_next_lcore(lc, 1, 0);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cap.pcapng", dir);

	/* Refusals with nothing running. */
	CHECK_EQ(rpcr_xprt_capture_stop(NULL), -ENOENT);
	CHECK_EQ(rpcr_xprt_capture_status(&st), -ENOENT);
	memset(&cc, 0, sizeof(cc));
	CHECK_EQ(rpcr_xprt_capture_start(&cc), -EINVAL);
	cc.path = path;
	cc.snap = RPCR_XPRT_CAPTURE_SNAP_MAX + 1;
	CHECK_EQ(rpcr_xprt_capture_start(&cc), -EINVAL);
	cc.snap = 0;
	cc.path = "/nonexistent-dir/cap.pcapng";
	CHECK_EQ(rpcr_xprt_capture_start(&cc), -ENOENT);
	cc.path = path;

	ds = rpcr_rdev_open("shm");
	dc = rpcr_rdev_open("shm");
	CHECK(ds != NULL && dc != NULL);
	pc.name = "srv";
	pc.dev = ds;
	ps = ds != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	pc.name = "cli";
	pc.dev = dc;
	pcl = dc != NULL ? rpcr_xprt_poller_create(&pc) : NULL;
	CHECK(ps != NULL && pcl != NULL);
	if (ps == NULL || pcl == NULL)
		goto out;
	snprintf(addr, sizeof(addr), "capture-%d", (int)getpid());
	s = rpcr_svc_create(ps, &(struct rpcr_svc_conf){.addr = addr});
	CHECK(s != NULL);
	if (s == NULL || rpcr_testprog_register(s, 0) != 0)
		goto out;
	cl = rpcr_clnt_create(pcl, &(struct rpcr_clnt_conf){.addr = addr,
							    .prog = RPCR_TESTPROG,
							    .vers = RPCR_TESTPROG_VERS,
							    .ulb = rpcr_testprog_ulb,
							    .nulb = 4});
	CHECK(cl != NULL);
	if (cl == NULL)
		goto out;
	CHECK_EQ(rpcr_xprt_poller_launch(ps, ls), 0);
	CHECK_EQ(rpcr_xprt_poller_launch(pcl, lc), 0);
	CHECK_EQ(rte_eal_remote_launch(caller, NULL, lk), 0);

	/* On and off, under load. */
	cc.ring = 4096;
	for (i = 0; i < TOGGLES; i++) {
		int rc = rpcr_xprt_capture_start(&cc);

		CHECK_EQ(rc, 0);
		if (rc != 0)
			break;
		if (i == 0) {
			CHECK_EQ(rpcr_xprt_capture_start(&cc), -EBUSY);
			CHECK_EQ(rpcr_xprt_capture_status(&st), 0);
			CHECK(st.running && st.pollers == 2 && strcmp(st.path, path) == 0);
		}
		usleep(i % 10 == 9 ? 2000 : 100);
		CHECK_EQ(rpcr_xprt_capture_stop(&st), 0);
		CHECK(!st.running);
		CHECK_EQ(st.written + st.drops, st.recorded);
		rec += st.recorded;
		wr += st.written;
		drops += st.drops;
	}
	printf("capture: %u sessions under load: %" PRIu64 " records, %" PRIu64 " written, %" PRIu64
	       " dropped; calls so far %" PRIu64 " (%" PRIu64 " failed)\n",
	       i, rec, wr, drops, calls_ok, calls_failed);
	CHECK(rec > 0);

	/* A last second, read back. */
	CHECK_EQ(rpcr_xprt_capture_start(&cc), 0);
	before = __atomic_load_n(&calls_ok, __ATOMIC_RELAXED);
	usleep(1000000);
	CHECK_EQ(rpcr_xprt_capture_stop(&st), 0);
	printf("capture: 1 s: %" PRIu64 " calls meanwhile, %" PRIu64 " records, %" PRIu64
	       " written, %" PRIu64 " dropped, %u connections\n",
	       __atomic_load_n(&calls_ok, __ATOMIC_RELAXED) - before, st.recorded, st.written,
	       st.drops, st.conns);
	CHECK_EQ(walk_file(path, &w), 0);
	printf("capture: file: %u section, %u interfaces, %u packets (%u out, %u in: %u SENDs "
	       "out, %u in, %u RDMA), %u statistics, %u other, %u bad\n",
	       w.shb, w.idb, w.epb, w.out, w.in, w.sends_out, w.sends_in, w.rdma, w.isb, w.other,
	       w.bad);
	CHECK_EQ(w.bad, 0);
	CHECK_EQ(w.shb, 1);
	CHECK_EQ(w.idb, st.conns + 1); /* the capture's own, and one per connection */
	CHECK_EQ(st.conns, 2);         /* the client's and the server's */
	CHECK_EQ((uint64_t)w.epb, st.written);
	CHECK_EQ(w.isb, w.idb);
	CHECK(w.epb > 1000);
	/* Each call is a Send out of the client and into the server, its reply the other way:
	 * a session cut while calls are on their way differs by a few. */
	CHECK(w.sends_out >= w.sends_in - 4 && w.sends_out <= w.sends_in + 4);
	CHECK_EQ(w.rdma, 0);

	/* One poller, one connection (the client's first: id 1); a connection that is not there;
	 * a poller that is not there. */
	cc.poller = "cli";
	cc.conn = 1;
	CHECK_EQ(rpcr_xprt_capture_start(&cc), 0);
	usleep(300000);
	CHECK_EQ(rpcr_xprt_capture_stop(&st), 0);
	CHECK_EQ(walk_file(path, &w), 0);
	printf("capture: poller cli, connection 1: %u poller(s), %u connection(s), %" PRIu64
	       " written; file: %u interfaces, %u packets (%u out, %u in)\n",
	       st.pollers, st.conns, st.written, w.idb, w.epb, w.out, w.in);
	CHECK(st.pollers == 1 && st.conns == 1 && st.written > 0 && st.drops == 0);
	CHECK(w.bad == 0 && w.idb == 2 && (uint64_t)w.epb == st.written);
	CHECK(w.out >= w.in - 1 && w.out <= w.in + 1);
	cc.conn = 99;
	CHECK_EQ(rpcr_xprt_capture_start(&cc), 0);
	usleep(100000);
	CHECK_EQ(rpcr_xprt_capture_stop(&st), 0);
	CHECK(st.conns == 0 && st.written == 0 && st.recorded == 0);
	cc.poller = "nosuch";
	cc.conn = 0;
	CHECK_EQ(rpcr_xprt_capture_start(&cc), -ENODEV);
	cc.poller = NULL;

	/* A poller destroyed while the capture runs. */
	calls_stop = true;
	CHECK_EQ(rte_eal_wait_lcore(lk), 0);
	CHECK_EQ(rpcr_xprt_capture_start(&cc), 0);
	rpcr_xprt_poller_stop(ps);
	rpcr_xprt_poller_stop(pcl);
	CHECK_EQ(rte_eal_wait_lcore(ls), 0);
	CHECK_EQ(rte_eal_wait_lcore(lc), 0);
	CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	cl = NULL;
	CHECK_EQ(rpcr_svc_destroy(s), 0);
	s = NULL;
	CHECK_EQ(rpcr_xprt_poller_destroy(pcl), 0);
	pcl = NULL;
	{
		uint64_t t0 = rte_rdtsc();

		CHECK_EQ(rpcr_xprt_capture_stop(&st), 0);
		CHECK((rte_rdtsc() - t0) * 1000 / rte_get_tsc_hz() < 2500);
	}
	CHECK_EQ(walk_file(path, &w), 0);
	CHECK_EQ(w.bad, 0);

	printf("capture: calls %" PRIu64 " answered, %" PRIu64 " failed\n", calls_ok, calls_failed);
	CHECK(calls_ok > 0);
	CHECK_EQ(calls_failed, 0);
out:
	calls_stop = true;
	rte_eal_mp_wait_lcore();
	if (cl != NULL)
		CHECK_EQ(rpcr_clnt_destroy(cl), 0);
	if (s != NULL)
		CHECK_EQ(rpcr_svc_destroy(s), 0);
	if (pcl != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(pcl), 0);
	if (ps != NULL)
		CHECK_EQ(rpcr_xprt_poller_destroy(ps), 0);
	if (dc != NULL)
		CHECK_EQ(rpcr_rdev_close(dc), 0);
	if (ds != NULL)
		CHECK_EQ(rpcr_rdev_close(ds), 0);
	unlink(path);
	rmdir(dir);
	rte_eal_cleanup();
	return rpcr_test_failed != 0;
}
