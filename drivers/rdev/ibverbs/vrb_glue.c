/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The ibverbs driver's glue table (vrb_glue.h): the functions themselves in a shared build, or
 * looked up in rdma-core's libraries, dlopen()ed on first use, in a dlopen build.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef RPCR_IBVERBS_DLOPEN
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#endif

#include <rte_common.h>

#include "vrb_glue.h"
#include "vrb_internal.h"

const char *const vrb_glue_lib_names[VRB_GLUE_NUM_LIBS] = {
	[VRB_GLUE_IBVERBS] = "libibverbs.so.1",
	[VRB_GLUE_RDMACM] = "librdmacm.so.1",
};

/*
 * 0, or a compile error when entry @m of struct vrb_glue does not have the type of rdma-core's
 * @fn. Only the type of @fn is taken (no reference to it), so a dlopen build links nothing.
 */
#define GLUE_SAME_TYPE(m, fn)                                                                    \
	(0 * sizeof(struct {                                                                     \
		 _Static_assert(__builtin_types_compatible_p(                                    \
					__typeof__(&fn), __typeof__(((struct vrb_glue *)0)->m)), \
				"vrb_glue." #m " differs from " #fn);                            \
		 char c;                                                                         \
	 }))

#define GLUE_SYM(l, m, fn)                                                   \
	{                                                                    \
		.lib = (l), .name = #fn,                                     \
		.off = offsetof(struct vrb_glue, m) + GLUE_SAME_TYPE(m, fn), \
	}
#define IBV(m, fn)    GLUE_SYM(VRB_GLUE_IBVERBS, m, fn)
#define RDMACM(m, fn) GLUE_SYM(VRB_GLUE_RDMACM, m, fn)

const struct vrb_glue_sym vrb_glue_syms[] = {
	IBV(get_device_name, ibv_get_device_name),
	IBV(query_device, ibv_query_device),
	IBV(query_port, ibv_query_port),
	IBV(query_gid_table, _ibv_query_gid_table),
	IBV(get_async_event, ibv_get_async_event),
	IBV(ack_async_event, ibv_ack_async_event),
	IBV(event_type_str, ibv_event_type_str),
	IBV(alloc_pd, ibv_alloc_pd),
	IBV(dealloc_pd, ibv_dealloc_pd),
	IBV(reg_mr, ibv_reg_mr),
	IBV(dereg_mr, ibv_dereg_mr),
	IBV(dontfork_range, ibv_dontfork_range),
	IBV(create_cq, ibv_create_cq),
	IBV(destroy_cq, ibv_destroy_cq),
	IBV(create_comp_channel, ibv_create_comp_channel),
	IBV(destroy_comp_channel, ibv_destroy_comp_channel),
	IBV(get_cq_event, ibv_get_cq_event),
	IBV(ack_cq_events, ibv_ack_cq_events),
	IBV(create_qp, ibv_create_qp),
	IBV(modify_qp, ibv_modify_qp),
	IBV(destroy_qp, ibv_destroy_qp),
	IBV(create_srq, ibv_create_srq),
	IBV(modify_srq, ibv_modify_srq),
	IBV(destroy_srq, ibv_destroy_srq),
	RDMACM(get_devices, rdma_get_devices),
	RDMACM(free_devices, rdma_free_devices),
	RDMACM(create_event_channel, rdma_create_event_channel),
	RDMACM(destroy_event_channel, rdma_destroy_event_channel),
	RDMACM(get_cm_event, rdma_get_cm_event),
	RDMACM(ack_cm_event, rdma_ack_cm_event),
	RDMACM(event_str, rdma_event_str),
	RDMACM(create_id, rdma_create_id),
	RDMACM(destroy_id, rdma_destroy_id),
	RDMACM(bind_addr, rdma_bind_addr),
	RDMACM(resolve_addr, rdma_resolve_addr),
	RDMACM(resolve_route, rdma_resolve_route),
	RDMACM(init_qp_attr, rdma_init_qp_attr),
	RDMACM(listen, rdma_listen),
	RDMACM(connect, rdma_connect),
	RDMACM(accept, rdma_accept),
	RDMACM(reject, rdma_reject),
	RDMACM(establish, rdma_establish),
	RDMACM(disconnect, rdma_disconnect),
	RDMACM(migrate_id, rdma_migrate_id),
};
const unsigned int vrb_glue_num_syms = RTE_DIM(vrb_glue_syms);

/* Every entry is a function pointer, and every one has a name above. */
_Static_assert(sizeof(struct vrb_glue) == RTE_DIM(vrb_glue_syms) * sizeof(void (*)(void)),
	       "an entry of struct vrb_glue has no line in vrb_glue_syms");

#ifndef RPCR_IBVERBS_DLOPEN

/* ibv_query_port and ibv_reg_mr are function-like macros too: not followed by '(', they name
 * the exported functions. */
static const struct vrb_glue glue = {
	.get_device_name = ibv_get_device_name,
	.query_device = ibv_query_device,
	.query_port = ibv_query_port,
	.query_gid_table = _ibv_query_gid_table,
	.get_async_event = ibv_get_async_event,
	.ack_async_event = ibv_ack_async_event,
	.event_type_str = ibv_event_type_str,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = ibv_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.dontfork_range = ibv_dontfork_range,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.create_qp = ibv_create_qp,
	.modify_qp = ibv_modify_qp,
	.destroy_qp = ibv_destroy_qp,
	.create_srq = ibv_create_srq,
	.modify_srq = ibv_modify_srq,
	.destroy_srq = ibv_destroy_srq,
	.get_devices = rdma_get_devices,
	.free_devices = rdma_free_devices,
	.create_event_channel = rdma_create_event_channel,
	.destroy_event_channel = rdma_destroy_event_channel,
	.get_cm_event = rdma_get_cm_event,
	.ack_cm_event = rdma_ack_cm_event,
	.event_str = rdma_event_str,
	.create_id = rdma_create_id,
	.destroy_id = rdma_destroy_id,
	.bind_addr = rdma_bind_addr,
	.resolve_addr = rdma_resolve_addr,
	.resolve_route = rdma_resolve_route,
	.init_qp_attr = rdma_init_qp_attr,
	.listen = rdma_listen,
	.connect = rdma_connect,
	.accept = rdma_accept,
	.reject = rdma_reject,
	.establish = rdma_establish,
	.disconnect = rdma_disconnect,
	.migrate_id = rdma_migrate_id,
};

const struct vrb_glue *vrb_glue = &glue;

int
vrb_glue_init(void)
{
	return 0;
}

#else /* RPCR_IBVERBS_DLOPEN */

/* dlsym() gives data pointers; POSIX guarantees they convert to function pointers. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers are not data-sized");

const struct vrb_glue *vrb_glue;

static struct vrb_glue glue;
static pthread_once_t glue_once = PTHREAD_ONCE_INIT;
static int glue_rc = -ENODEV;

/*
 * Load both libraries and fill the table. Called once.
 *
 * libibverbs first, then librdmacm: librdmacm needs libibverbs and finds it already loaded under
 * its soname, so that from RPCR_RDMA_CORE_DIR too both come from one place (two copies of
 * libibverbs in a process would each have their own devices and providers).
 *
 * RTLD_LOCAL: rdma-core's symbols stay out of the process's global namespace (no clash with an
 * application's own, and librpcr cannot come to depend on them by accident); librdmacm and the
 * providers libibverbs loads bind to libibverbs through their own DT_NEEDED, which RTLD_LOCAL
 * does not affect. RTLD_NOW: a library that cannot be bound fails here, once, not in the middle
 * of a call (Debian builds both with BIND_NOW anyway).
 *
 * Once loaded, the libraries stay for the life of the process (as with DPDK's mlx5 glue): verbs
 * contexts, cm_ids and the providers' state point into them.
 */
static void
glue_load(void)
{
	const char *dir = secure_getenv("RPCR_RDMA_CORE_DIR");
	char path[VRB_GLUE_NUM_LIBS][PATH_MAX];
	void *h[VRB_GLUE_NUM_LIBS] = {NULL};
	struct vrb_glue tab;
	unsigned int l, i;

	memset(&tab, 0, sizeof(tab));
	for (l = 0; l < VRB_GLUE_NUM_LIBS; l++) {
		const char *name = vrb_glue_lib_names[l];
		int n;

		if (dir != NULL && dir[0] != '\0')
			n = snprintf(path[l], sizeof(path[l]), "%s/%s", dir, name);
		else
			n = snprintf(path[l], sizeof(path[l]), "%s", name);
		if (n < 0 || (size_t)n >= sizeof(path[l])) {
			VRB_LOG(ERR, "RPCR_RDMA_CORE_DIR is too long");
			goto out_close;
		}
		h[l] = dlopen(path[l], RTLD_NOW | RTLD_LOCAL);
		if (h[l] == NULL) {
			const char *why = dlerror();

			VRB_LOG(ERR,
				"cannot load %s: rdma-core is not installed (Debian: libibverbs1, "
				"librdmacm1); no ibverbs devices",
				why != NULL ? why : path[l]);
			goto out_close;
		}
		for (i = 0; i < RTE_DIM(vrb_glue_syms); i++) {
			const struct vrb_glue_sym *s = &vrb_glue_syms[i];
			void *p;

			if (s->lib != l)
				continue;
			/* Through the library's own handle: librdmacm's would find libibverbs's
			 * symbols too, and each must come from the library that exports it. */
			p = dlsym(h[l], s->name);
			if (p == NULL) {
				VRB_LOG(ERR,
					"%s has no %s: rdma-core is not installed, or "
					"is older than the one rpcr was built with; "
					"no ibverbs devices",
					path[l], s->name);
				goto out_close;
			}
			memcpy((char *)&tab + s->off, &p, sizeof(p));
		}
	}
	glue = tab;
	vrb_glue = &glue; /* (pthread_once() orders this before every caller's return) */
	glue_rc = 0;
	VRB_LOG(DEBUG, "rdma-core loaded (%s, %s)", path[VRB_GLUE_IBVERBS], path[VRB_GLUE_RDMACM]);
	return;

out_close:
	for (l = 0; l < VRB_GLUE_NUM_LIBS; l++)
		if (h[l] != NULL)
			dlclose(h[l]);
}

int
vrb_glue_init(void)
{
	pthread_once(&glue_once, glue_load);
	return glue_rc;
}

#endif /* RPCR_IBVERBS_DLOPEN */

/*
 * libibverbs' fork() protection, declined before anything can turn it on.
 *
 * After ibv_fork_init(), every ibv_reg_mr() and ibv_dereg_mr() madvise()s its range and, with
 * RDMAV_HUGEPAGES_SAFE set, first reads the whole of /proc/self/smaps to learn the range's page
 * size (rdma-core 44's ibv_fork_init() does not ask whether the kernel copies pinned pages at
 * fork(), as later ones do). Debian's DPDK loads every PMD in rte_eal_init(), and the mlx4 and
 * mlx5 ones set RDMAV_HUGEPAGES_SAFE and call ibv_fork_init() from their constructors: so in any
 * process that starts EAL, each registration would pay that, and rpcr registers for every call
 * with chunks (soft-RoCE in the test guest: 25 ms a call, against 0.05 ms for the registration
 * itself). ibv_fork_init() refuses to start once a range was registered without protection,
 * which ibv_dontfork_range() notes when protection is off: called here, in a constructor, so
 * before main() and before EAL loads a plugin, it keeps protection off for the process. The
 * kernels rpcr runs on copy pinned pages at fork() (`rdma system` says "copy-on-fork on"), which
 * is what the protection was for. An application that wants it all the same sets
 * RDMAV_FORK_SAFE or IBV_FORK_SAFE (rdma-core then turns it on when the first device list is
 * read), and this leaves it alone.
 */
RTE_INIT(vrb_fork_protection_off)
{
	if (getenv("RDMAV_FORK_SAFE") != NULL || getenv("IBV_FORK_SAFE") != NULL)
		return;
#ifndef RPCR_IBVERBS_DLOPEN
	(void)vrb_glue->dontfork_range(NULL, 0);
#else
	{
		/* Quietly: a machine without rdma-core hears about it when it asks for a device.
		 * The library stays loaded (its state is what this sets); the glue finds it. */
		const char *dir = secure_getenv("RPCR_RDMA_CORE_DIR");
		const char *name = vrb_glue_lib_names[VRB_GLUE_IBVERBS];
		char path[PATH_MAX];
		int (*fn)(void *, size_t);
		void *h, *p;
		int n;

		if (dir != NULL && dir[0] != '\0')
			n = snprintf(path, sizeof(path), "%s/%s", dir, name);
		else
			n = snprintf(path, sizeof(path), "%s", name);
		if (n < 0 || (size_t)n >= sizeof(path))
			return;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h == NULL)
			return;
		p = dlsym(h, "ibv_dontfork_range");
		if (p != NULL) {
			memcpy(&fn, &p, sizeof(fn));
			(void)fn(NULL, 0);
		}
	}
#endif
}
