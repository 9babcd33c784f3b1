/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#ifndef MLX5_GLUE_H
#define MLX5_GLUE_H

/*
 * The mlx5 driver's door to libmlx5, and the test hook that replaces it.
 *
 * The driver asks libmlx5 two things: is a device an mlx5 one (mlx5dv_is_supported()), and where
 * are a QP's, CQ's or SRQ's queues, doorbell records and doorbell register (mlx5dv_init_obj()). Those
 * calls go through a struct rpcr_mlx5_glue: libmlx5's own functions (linked, or dlopen()ed with
 * -Dibverbs_link=dlopen), or, when the environment names a library in RPCR_MLX5_GLUE, that
 * library's table, exported as `rpcr_mlx5_glue`: a model of the device's queues
 * (test/rdev/mlx5_model_rxe.c) that answers for a soft-RoCE device and executes the WQEs the
 * driver writes. The driver says which it uses when it probes. Ignored in set-user-ID programs.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define RPCR_MLX5_GLUE_VERSION 2
#define RPCR_MLX5_GLUE_SYM     "rpcr_mlx5_glue"

struct rpcr_mlx5_glue {
	uint32_t version; /* RPCR_MLX5_GLUE_VERSION */
	const char *what; /* for the log: "libmlx5", "queue model" */
	bool (*is_supported)(struct ibv_device *device);
	int (*init_obj)(struct mlx5dv_obj *obj, uint64_t obj_type);
	/* A model cannot watch memory as a device watches its doorbell records and register:
	 * where this is set, the driver calls it after each burst it posted on a QP init_obj()
	 * described, send or receive (it then posts through wrappers that do; a device's glue
	 * leaves it NULL and the fast path is the plain one). */
	void (*doorbell)(struct ibv_qp *qp);
	/* Called before the control path moves a QP init_obj() described to the error state. A
	 * device has by then executed what its doorbell announced (it does not wait); a model
	 * catches up now (NULL: nothing to do). */
	void (*qp_sync)(struct ibv_qp *qp);
	/* Called before ibv_destroy_qp() / ibv_destroy_cq() of an object init_obj() described,
	 * after which its queues are no longer the driver's (NULL: nothing to do). */
	void (*qp_release)(struct ibv_qp *qp);
	void (*cq_release)(struct ibv_cq *cq);
	/* Version 2: shared receive queues. Where doorbell is set, srq_doorbell must be: called
	 * after each burst posted to an SRQ init_obj() described; srq_release before
	 * ibv_destroy_srq() of one (NULL: nothing to do). */
	void (*srq_doorbell)(struct ibv_srq *srq);
	void (*srq_release)(struct ibv_srq *srq);
};

#endif /* MLX5_GLUE_H */
