/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The ibverbs driver's glue table (drivers/rdev/ibverbs/vrb_glue.h), in whichever link mode the
 * build has (-Dibverbs_link): after vrb_glue_init() every entry is set, and each is the function
 * its library exports under the name vrb_glue_syms gives it. Needs no RDMA device.
 *
 * usage: test_vrb_glue [CASE ...]
 *        test_vrb_glue --missing WHAT   (dlopen build, RPCR_RDMA_CORE_DIR set so that rdma-core
 *                                        cannot load: WHAT, a library or symbol, must be named)
 * The second form is run by test/rdev/ibverbs-link.sh.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <rpcr_rdev.h>

#include "eal_test.h"
#include "rpcr_test.h"
#include "vrb_glue.h"

/* rdma-core's libraries were loaded before main(), i.e. the program links them. */
static bool preloaded[VRB_GLUE_NUM_LIBS];

/* What the driver logged, while captured. */
static char *log_buf;
static size_t log_len;
static FILE *log_f;

#ifdef RPCR_IBVERBS_DLOPEN
static const bool dlopen_build = true;
#else
static const bool dlopen_build = false;
#endif

static bool
lib_loaded(enum vrb_glue_lib l)
{
	void *h = dlopen(vrb_glue_lib_names[l], RTLD_LAZY | RTLD_NOLOAD);

	if (h == NULL)
		return false;
	dlclose(h);
	return true;
}

static void
log_capture(void)
{
	log_f = open_memstream(&log_buf, &log_len);
	if (log_f != NULL)
		rte_openlog_stream(log_f);
}

/* Lines of the captured log that contain @s. */
static int
log_count(const char *s)
{
	const char *p;
	int n = 0;

	if (log_f == NULL || s == NULL)
		return -1;
	fflush(log_f);
	for (p = log_buf; p != NULL && (p = strstr(p, s)) != NULL; p = strchr(p, '\n'))
		n++;
	return n;
}

static void
log_release(void)
{
	if (log_f == NULL)
		return;
	rte_openlog_stream(NULL);
	fclose(log_f);
	if (log_len != 0)
		fprintf(stderr, "-- the driver's log:\n%s--\n", log_buf);
	free(log_buf);
	log_f = NULL;
}

static void *
entry(const struct vrb_glue_sym *s)
{
	void *p;

	memcpy(&p, (const char *)vrb_glue + s->off, sizeof(p));
	return p;
}

/* The user asked libibverbs for fork() protection (then the driver leaves it alone). */
static bool
fork_safe_asked(void)
{
	return getenv("RDMAV_FORK_SAFE") != NULL || getenv("IBV_FORK_SAFE") != NULL;
}

/*
 * A shared build links rdma-core; a dlopen build does not, nor loads librdmacm before the first
 * use. (It loads libibverbs at start-up, to decline fork() protection: see test_fork_protection.)
 */
static void
test_link_mode(void)
{
	printf("     -Dibverbs_link=%s\n", dlopen_build ? "dlopen" : "shared");
	CHECK_EQ(preloaded[VRB_GLUE_RDMACM], !dlopen_build);
	CHECK_EQ(preloaded[VRB_GLUE_IBVERBS], !dlopen_build || !fork_safe_asked());
}

/*
 * libibverbs' fork() protection stays off in a process with the driver, although EAL loaded
 * DPDK's mlx4 and mlx5 PMDs, which ask for it: ibv_fork_init() says it is too late (EINVAL).
 * With RDMAV_FORK_SAFE set, the user's wish wins: protection is on (0).
 */
static void
test_fork_protection(void)
{
	void *h = dlopen(vrb_glue_lib_names[VRB_GLUE_IBVERBS], RTLD_NOW | RTLD_NOLOAD);
	int (*fork_init)(void);
	void *p;

	CHECK(h != NULL);
	if (h == NULL)
		return;
	p = dlsym(h, "ibv_fork_init");
	CHECK(p != NULL);
	if (p != NULL) {
		memcpy(&fork_init, &p, sizeof(fork_init));
		CHECK_EQ(fork_init(), fork_safe_asked() ? 0 : EINVAL);
	}
	dlclose(h);
}

/* Expect: vrb_glue_syms names every entry once, each at its own offset. */
static void
test_syms_cover_table(void)
{
	const unsigned int n = sizeof(struct vrb_glue) / sizeof(void (*)(void));
	bool seen[sizeof(struct vrb_glue) / sizeof(void (*)(void))] = {false};
	unsigned int i, j, dups = 0;

	CHECK_EQ(vrb_glue_num_syms, n);
	for (i = 0; i < vrb_glue_num_syms; i++) {
		const struct vrb_glue_sym *s = &vrb_glue_syms[i];
		size_t k = s->off / sizeof(void (*)(void));

		CHECK(s->off % sizeof(void (*)(void)) == 0 && k < n);
		CHECK(s->lib < VRB_GLUE_NUM_LIBS);
		if (k < n) {
			CHECK(!seen[k]);
			seen[k] = true;
		}
		for (j = 0; j < i; j++)
			dups += strcmp(s->name, vrb_glue_syms[j].name) == 0;
	}
	CHECK_EQ(dups, 0);
}

/* Expect: after init, every entry is set, and is what its library exports under its name. */
static void
test_table_complete(void)
{
	void *h[VRB_GLUE_NUM_LIBS] = {NULL};
	void (*const *slot)(void);
	unsigned int i, l;

	CHECK_EQ(vrb_glue_init(), 0);
	CHECK_EQ(vrb_glue_init(), 0); /* (again: the first result) */
	CHECK(vrb_glue != NULL);
	if (vrb_glue == NULL)
		return;
	/* Every slot, independently of the name list. */
	slot = (void (*const *)(void))(const void *)vrb_glue;
	for (i = 0; i < sizeof(struct vrb_glue) / sizeof(*slot); i++)
		CHECK(slot[i] != NULL);
	for (l = 0; l < VRB_GLUE_NUM_LIBS; l++) {
		h[l] = dlopen(vrb_glue_lib_names[l], RTLD_LAZY | RTLD_NOLOAD);
		CHECK(h[l] != NULL);
	}
	for (i = 0; i < vrb_glue_num_syms; i++) {
		const struct vrb_glue_sym *s = &vrb_glue_syms[i];
		void *want = h[s->lib] != NULL ? dlsym(h[s->lib], s->name) : NULL;

		if (entry(s) == NULL || entry(s) != want) {
			fprintf(stderr, "entry for %s: %p, %s exports %p\n", s->name, entry(s),
				vrb_glue_lib_names[s->lib], want);
			CHECK(entry(s) == want && want != NULL);
		}
	}
	for (l = 0; l < VRB_GLUE_NUM_LIBS; l++) {
		Dl_info di;

		for (i = 0; i < vrb_glue_num_syms && vrb_glue_syms[i].lib != l; i++)
			;
		if (i < vrb_glue_num_syms && dladdr(entry(&vrb_glue_syms[i]), &di) != 0)
			printf("     %s from %s\n", vrb_glue_lib_names[l], di.dli_fname);
		if (h[l] != NULL)
			dlclose(h[l]);
	}
}

/* Expect: rdma-core loaded, the driver probes as usual: a machine without an RDMA device gets
 * ENODEV from the driver itself, with nothing said about rdma-core. */
static void
test_probe(void)
{
	struct rpcr_rdev *dev;

	log_capture();
	dev = rpcr_rdev_open("ibverbs");
	if (dev != NULL) {
		printf("     ibverbs: a device\n");
		CHECK_EQ(rpcr_rdev_close(dev), 0);
	} else {
		printf("     ibverbs: no device (%s)\n", strerror(rte_errno));
		CHECK_EQ(rte_errno, ENODEV);
	}
	CHECK_EQ(log_count("rdma-core"), 0);
	log_release();
}

/*
 * rdma-core cannot load (--missing): said once, naming what is missing; no ibverbs device however
 * often asked; the shm driver works.
 */
static const char *missing;

static void
test_missing(void)
{
	struct rpcr_rdev_pd *pd;
	struct rpcr_rdev *dev;
	int i;

	log_capture();
	CHECK_EQ(vrb_glue_init(), -ENODEV);
	CHECK(vrb_glue == NULL);
	for (i = 0; i < 3; i++) {
		CHECK(rpcr_rdev_open("ibverbs:dev=rxe0") == NULL);
		CHECK_EQ(rte_errno, ENODEV);
	}
	CHECK_EQ(vrb_glue_init(), -ENODEV);
	CHECK_EQ(log_count("rdma-core"), 1);
	CHECK_EQ(log_count(missing), 1);
	dev = rpcr_rdev_open("shm");
	CHECK(dev != NULL);
	pd = dev != NULL ? rpcr_rdev_pd_alloc(dev) : NULL;
	CHECK(pd != NULL);
	if (pd != NULL)
		CHECK_EQ(rpcr_rdev_pd_free(pd), 0);
	if (dev != NULL)
		CHECK_EQ(rpcr_rdev_close(dev), 0);
	log_release();
}

static const struct rpcr_test_case cases[] = {
	{"link_mode", test_link_mode},
	{"syms_cover_table", test_syms_cover_table},
	{"table_complete", test_table_complete},
	{"probe", test_probe},
	{"fork_protection", test_fork_protection},
};

static const struct rpcr_test_case missing_cases[] = {
	{"missing", test_missing},
};

int
main(int argc, char **argv)
{
	unsigned int l;
	int rc;

	for (l = 0; l < VRB_GLUE_NUM_LIBS; l++)
		preloaded[l] = lib_loaded(l);
	if (argc == 3 && strcmp(argv[1], "--missing") == 0) {
		if (!dlopen_build) {
			printf("--missing: a shared build links rdma-core; nothing to test\n");
			return 77;
		}
		missing = argv[2];
	}
	if (rpcr_test_eal_init() != 0)
		return 1;
	if (missing != NULL)
		rc = rpcr_test_main(1, argv, missing_cases, RTE_DIM(missing_cases));
	else
		rc = rpcr_test_main(argc, argv, cases, RTE_DIM(cases));
	rte_eal_cleanup();
	return rc;
}
