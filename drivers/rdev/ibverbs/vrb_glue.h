/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef VRB_GLUE_H
#define VRB_GLUE_H

/*
 * The ibverbs driver's only door to rdma-core's libraries, as DPDK's mlx5_glue is mlx5's: one
 * table of pointers to every exported libibverbs and librdmacm function the driver calls, and
 * every such call goes through it (vrb_glue->reg_mr(...)).
 *
 * -Dibverbs_link=shared (the default): the table is a constant initialised with the functions
 * themselves, and librpcr links both libraries.
 * -Dibverbs_link=dlopen (RPCR_IBVERBS_DLOPEN): librpcr links neither. The first probe of an
 * ibverbs device dlopen()s libibverbs.so.1 and librdmacm.so.1 and looks every entry up by name;
 * when rdma-core is missing it says so once, the driver finds no devices, and the rest of rpcr
 * (the shm driver, the codecs, the engine) works as ever. The headers are needed to build either.
 *
 * Only exported symbols are here. The fast path's ibv_post_send(), ibv_post_recv() and
 * ibv_poll_cq() are static inlines of <infiniband/verbs.h> that call the provider through the
 * context's ops (ctx->ops), with no symbol of libibverbs involved: vrb_rxtx.c calls them
 * directly, at no extra indirection.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/*
 * Exported by libibverbs since its version 1.1 (symbol version IBVERBS_1.1, in its public map),
 * but not declared by <infiniband/verbs.h>: the driver uses it once, at load (vrb_glue.c).
 */
int ibv_dontfork_range(void *base, size_t size);

/* One member per function, named after it without its library's prefix (ibv_, rdma_). */
struct vrb_glue {
	/* libibverbs */
	const char *(*get_device_name)(struct ibv_device *device);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
	/* The exported ibv_query_port(): it fills the older, shorter struct, a prefix of
	 * struct ibv_port_attr (the header's macro of the same name asks the context's op for the
	 * whole one). */
	int (*query_port)(struct ibv_context *ctx, uint8_t port_num,
			  struct _compat_ibv_port_attr *attr);
	/* _ibv_query_gid_table(): ibv_query_gid_table() is an inline that adds the entry size. */
	ssize_t (*query_gid_table)(struct ibv_context *ctx, struct ibv_gid_entry *entries,
				   size_t max_entries, uint32_t flags, size_t entry_size);
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *event);
	void (*ack_async_event)(struct ibv_async_event *event);
	const char *(*event_type_str)(enum ibv_event_type event);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	/* The exported ibv_reg_mr(): the header's macro of the same name picks ibv_reg_mr_iova2()
	 * for the optional access flags, which the driver never asks for. */
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	int (*dontfork_range)(void *base, size_t size);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	/* Completion events (ibv_req_notify_cq() is a static inline through the context's ops). */
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
	int (*destroy_comp_channel)(struct ibv_comp_channel *channel);
	int (*get_cq_event)(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			    void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*destroy_qp)(struct ibv_qp *qp);
	/* Shared receive queues (ibv_post_srq_recv() is a static inline through the context's
	 * ops). */
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
	int (*destroy_srq)(struct ibv_srq *srq);
	/* librdmacm */
	struct ibv_context **(*get_devices)(int *num_devices);
	void (*free_devices)(struct ibv_context **list);
	struct rdma_event_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rdma_event_channel *channel);
	int (*get_cm_event)(struct rdma_event_channel *channel, struct rdma_cm_event **event);
	int (*ack_cm_event)(struct rdma_cm_event *event);
	const char *(*event_str)(enum rdma_cm_event_type event);
	int (*create_id)(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
			 enum rdma_port_space ps);
	int (*destroy_id)(struct rdma_cm_id *id);
	int (*bind_addr)(struct rdma_cm_id *id, struct sockaddr *addr);
	int (*resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src_addr,
			    struct sockaddr *dst_addr, int timeout_ms);
	int (*resolve_route)(struct rdma_cm_id *id, int timeout_ms);
	int (*init_qp_attr)(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask);
	int (*listen)(struct rdma_cm_id *id, int backlog);
	int (*connect)(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);
	int (*accept)(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);
	int (*reject)(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len);
	int (*establish)(struct rdma_cm_id *id);
	int (*disconnect)(struct rdma_cm_id *id);
	int (*migrate_id)(struct rdma_cm_id *id, struct rdma_event_channel *channel);
};

/*
 * The table. Shared link: set from the start. dlopen link: NULL until vrb_glue_init() has
 * loaded rdma-core, and for good when it could not; nothing but a probed device uses it.
 */
extern const struct vrb_glue *vrb_glue;

/*
 * Make vrb_glue usable (the first call loads rdma-core in a dlopen build; thread-safe, later
 * calls only report the first one's result). A failure is logged once, naming the library or
 * symbol missing. @return 0, or -ENODEV when rdma-core could not be loaded.
 *
 * Debugging aid (dlopen build only): RPCR_RDMA_CORE_DIR=DIR loads DIR/libibverbs.so.1 and
 * DIR/librdmacm.so.1 instead of searching the usual paths; a directory without them simulates a
 * machine without rdma-core. Ignored in set-user-ID programs.
 */
int vrb_glue_init(void);

/* The libraries, by soname. */
enum vrb_glue_lib {
	VRB_GLUE_IBVERBS, /* libibverbs.so.1 */
	VRB_GLUE_RDMACM,  /* librdmacm.so.1 */
	VRB_GLUE_NUM_LIBS,
};
extern const char *const vrb_glue_lib_names[VRB_GLUE_NUM_LIBS];

/* Where each entry of struct vrb_glue comes from: what a dlopen build looks up (and what the unit
 * test checks a shared build's table against). */
struct vrb_glue_sym {
	enum vrb_glue_lib lib;
	const char *name; /* the exported symbol */
	size_t off;       /* of its entry in struct vrb_glue */
};
extern const struct vrb_glue_sym vrb_glue_syms[];
extern const unsigned int vrb_glue_num_syms;

#endif /* VRB_GLUE_H */
