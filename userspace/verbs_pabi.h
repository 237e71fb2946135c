/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Declarations of the rdma-core 44 private provider ABI (symbol version
 * IBVERBS_PRIVATE_34) that the eroce provider uses.
 *
 * rdma-core does not install its private headers (driver.h, kern-abi.h), so
 * this file re-declares exactly the subset we need.  The layouts must match
 * rdma-core v44.0 byte for byte: libibverbs reads and writes these structures
 * directly.  Every structure size and the offsets libibverbs depends on are
 * checked with static_assert; the numbers were cross-checked against the
 * installed libibverbs.so.1 and the librxe/libsiw providers (see the
 * comments next to the asserts).  The Makefile separately refuses to build
 * against a libibverbs that exports another private ABI version.
 *
 * PABI 34 covered three different verbs_context_ops layouts (rdma-core 34,
 * 35 and 36..56); the asserts below pin the 36..56 layout that v44 uses.
 */
#ifndef EROCE_VERBS_PABI_H
#define EROCE_VERBS_PABI_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define EROCE_IBVERBS_PABI	34

/* ---- logging (libibverbs prints only with VERBS_LOG_LEVEL + _FILE set) */

enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define verbs_log(ctx, level, fmt, ...)					\
	do {								\
		int __saved_errno = errno;				\
									\
		__verbs_log(ctx, level, "%s: %s:%d: " fmt,		\
			    (ctx)->context.device->name, __func__,	\
			    __LINE__, ##__VA_ARGS__);			\
		errno = __saved_errno;					\
	} while (0)
#define verbs_err(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define verbs_warn(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_WARN, fmt, ##__VA_ARGS__)
#define verbs_debug(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* ---- ccan list_node: two pointers */

struct list_node {
	struct list_node *next, *prev;
};

/* ---- object wrappers */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ---- device matching and registration */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

#define VERBS_DRIVER_ID(_id) \
	{ .u.driver_id = (_id), .kind = VERBS_MATCH_DRIVER_ID, }
/* fnmatch() pattern on "rdma_device:N<ibdev name>" */
#define VERBS_NAME_MATCH(_name_prefix, _data)				\
	{								\
		.driver_data = (_data),					\
		.u.modalias = "rdma_device:*N" _name_prefix "*",	\
		.kind = VERBS_MATCH_MODALIAS,				\
	}

struct verbs_sysfs_dev {
	struct list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/*
 * All 76 slots, in rdma-core v44 order (alphabetical).  verbs_set_ops()
 * reads every slot; slots this provider never sets are typed loosely as
 * void * to keep this header short -- only their position matters.
 */
struct verbs_context_ops {
	void *advise_mr;					/*  0 */
	void *alloc_dm;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	void *alloc_null_mr;
	void *alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);	/*  5 */
	void *alloc_td;
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	void *attach_counters_point_flow;
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);		/* 10 */
	void *close_xrcd;
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	void *create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);		/* 15 */
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	void *create_flow;
	void *create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	/* 20 */
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	void *create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	void *create_wq;
	int (*dealloc_mw)(struct ibv_mw *mw);			/* 25 */
	int (*dealloc_pd)(struct ibv_pd *pd);
	void *dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	void *destroy_counters;					/* 30 */
	int (*destroy_cq)(struct ibv_cq *cq);
	void *destroy_flow;
	void *destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	void *destroy_rwq_ind_table;				/* 35 */
	int (*destroy_srq)(struct ibv_srq *srq);
	void *destroy_wq;
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	void *free_dm;						/* 40 */
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	void *import_dm;
	void *import_mr;
	void *import_pd;
	int (*modify_cq)(struct ibv_cq *cq,
			 struct ibv_modify_cq_attr *attr);	/* 45 */
	void *modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	void *modify_wq;					/* 50 */
	void *open_qp;
	void *open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);		/* 55 */
	void *post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	void *query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);	/* 60 */
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	void *query_qp_data_in_order;
	void *query_rt_values;
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	void *read_counters;					/* 65 */
	void *reg_dm_mr;
	void *reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);		/* 70 */
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	void *set_ece;
	void *unimport_dm;
	void *unimport_mr;
	void *unimport_pd;					/* 75 */
};

#define VERBS_OPS_SLOT(name) \
	(offsetof(struct verbs_context_ops, name) / sizeof(void *))

void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * Like rdma-core's PROVIDER_DRIVER(), without the alias symbol for static
 * builds: register from an ELF constructor when the library is dlopen()ed.
 */
#define PROVIDER_DRIVER(provider_name, drv_struct)			\
	static __attribute__((constructor)) void			\
	provider_name##_register_driver(void)				\
	{								\
		verbs_register_driver_34(&drv_struct);			\
	}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb, \
				     driver_id)				   \
	((__typeof__(drv_ctx_ptr))_verbs_init_and_alloc_context(	   \
		ibdev, cmd_fd, sizeof(*drv_ctx_ptr),			   \
		&((__typeof__(drv_ctx_ptr))NULL)->ctx_memb, (driver_id)))

void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* ---- command wrappers: uverbs header + kernel core struct (kern-abi.h) */

struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define EROCE_DECLARE_CMD(_name, _kabi)				\
	struct _name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct _kabi core_payload;				\
	};								\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct ib_uverbs_cmd_hdr) +		\
		      sizeof(struct _kabi), "bad " #_name " size")

#define EROCE_DECLARE_CMD_EX(_name, _kabi)				\
	struct _name {							\
		struct ex_hdr hdr;					\
		struct _kabi core_payload;				\
	};								\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct ex_hdr) + sizeof(struct _kabi),	\
		      "bad " #_name " size");				\
	static_assert(sizeof(struct _name) % 8 == 0,			\
		      "bad " #_name " alignment")

EROCE_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
EROCE_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
EROCE_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
EROCE_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
EROCE_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
EROCE_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
EROCE_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
EROCE_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
EROCE_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
EROCE_DECLARE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
EROCE_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
EROCE_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
EROCE_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
EROCE_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
EROCE_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
EROCE_DECLARE_CMD(ibv_post_send, ib_uverbs_post_send);
EROCE_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
EROCE_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
EROCE_DECLARE_CMD_EX(ibv_modify_cq, ib_uverbs_ex_modify_cq);
EROCE_DECLARE_CMD_EX(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);

/*
 * A provider request/response: the core wrapper followed, with no padding,
 * by the driver (UHW) part.  libibverbs sends everything past the core part
 * as driver data, so padding here would shift what the kernel sees.
 */
#define EROCE_DECLARE_DRV_RESP(_name, _kresp, _drv)			\
	struct _name {							\
		struct _kresp ibv_resp;					\
		struct _drv drv;					\
	};								\
	static_assert(offsetof(struct _name, drv) ==			\
		      sizeof(struct _kresp), "padding in " #_name);	\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct _kresp) + sizeof(struct _drv),	\
		      "tail padding in " #_name);			\
	static_assert(sizeof(struct _name) % 4 == 0,			\
		      "bad " #_name " alignment")

/* ---- ibv_cmd_* (IBVERBS_PRIVATE_34) */

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/* ---- layout checks (x86_64 / LP64; rdma-core v44.0) */

static_assert(sizeof(void *) == 8, "only LP64 layouts are checked");

static_assert(sizeof(struct list_node) == 16, "list_node");

static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
static_assert(offsetof(struct verbs_match_ent, u) == 8, "match u");
static_assert(offsetof(struct verbs_match_ent, vendor) == 16, "match vendor");
static_assert(offsetof(struct verbs_match_ent, device) == 18, "match device");
static_assert(offsetof(struct verbs_match_ent, kind) == 20, "match kind");

/* librxe reads abi_ver at 0x3c8 */
static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
static_assert(offsetof(struct verbs_sysfs_dev, match) == 24, "sysfs match");
static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36,
	      "sysfs_name");
static_assert(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104,
	      "sysfs_cdev");
static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112,
	      "ibdev_name");
static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176,
	      "ibdev_path");
static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432, "modalias");
static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944,
	      "node_guid");
static_assert(offsetof(struct verbs_sysfs_dev, driver_id) == 952,
	      "driver_id");
static_assert(offsetof(struct verbs_sysfs_dev, num_ports) == 964,
	      "num_ports");
static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "abi_ver");
static_assert(offsetof(struct verbs_sysfs_dev, time_created) == 976,
	      "time_created");

static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
static_assert(offsetof(struct verbs_device_ops, match_table) == 16,
	      "match_table");
static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40,
	      "alloc_context");
static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56,
	      "alloc_device");
static_assert(offsetof(struct verbs_device_ops, uninit_device) == 64,
	      "uninit_device");

/* libsiw callocs 0x2c8 for its verbs_device-only device struct */
static_assert(sizeof(struct ibv_device) == 664, "ibv_device");
static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
static_assert(offsetof(struct verbs_device, ops) == 664, "vdev ops");
static_assert(offsetof(struct verbs_device, refcount) == 672, "vdev ref");
static_assert(offsetof(struct verbs_device, entry) == 680, "vdev entry");
static_assert(offsetof(struct verbs_device, sysfs) == 696, "vdev sysfs");
static_assert(offsetof(struct verbs_device, core_support) == 704,
	      "vdev core_support");

static_assert(sizeof(struct verbs_context) == 648, "verbs_context");
static_assert(offsetof(struct verbs_context, context) == 320,
	      "verbs_context.context");

static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	      "verbs_context_ops must have 76 slots");
static_assert(VERBS_OPS_SLOT(alloc_pd) == 5, "slot alloc_pd");
static_assert(VERBS_OPS_SLOT(attach_mcast) == 9, "slot attach_mcast");
static_assert(VERBS_OPS_SLOT(create_ah) == 13, "slot create_ah");
static_assert(VERBS_OPS_SLOT(create_cq) == 15, "slot create_cq");
static_assert(VERBS_OPS_SLOT(create_qp) == 19, "slot create_qp");
static_assert(VERBS_OPS_SLOT(create_qp_ex) == 20, "slot create_qp_ex");
static_assert(VERBS_OPS_SLOT(create_srq) == 22, "slot create_srq");
static_assert(VERBS_OPS_SLOT(dealloc_pd) == 26, "slot dealloc_pd");
static_assert(VERBS_OPS_SLOT(dereg_mr) == 28, "slot dereg_mr");
static_assert(VERBS_OPS_SLOT(destroy_cq) == 31, "slot destroy_cq");
static_assert(VERBS_OPS_SLOT(destroy_qp) == 34, "slot destroy_qp");
static_assert(VERBS_OPS_SLOT(destroy_srq) == 36, "slot destroy_srq");
static_assert(VERBS_OPS_SLOT(free_context) == 39, "slot free_context");
static_assert(VERBS_OPS_SLOT(modify_cq) == 45, "slot modify_cq");
static_assert(VERBS_OPS_SLOT(modify_qp) == 47, "slot modify_qp");
static_assert(VERBS_OPS_SLOT(modify_srq) == 49, "slot modify_srq");
static_assert(VERBS_OPS_SLOT(poll_cq) == 53, "slot poll_cq");
static_assert(VERBS_OPS_SLOT(post_send) == 55, "slot post_send");
static_assert(VERBS_OPS_SLOT(post_srq_recv) == 57, "slot post_srq_recv");
static_assert(VERBS_OPS_SLOT(query_device_ex) == 58, "slot query_device_ex");
static_assert(VERBS_OPS_SLOT(query_port) == 60, "slot query_port");
static_assert(VERBS_OPS_SLOT(query_srq) == 64, "slot query_srq");
static_assert(VERBS_OPS_SLOT(reg_mr) == 68, "slot reg_mr");
static_assert(VERBS_OPS_SLOT(req_notify_cq) == 69, "slot req_notify_cq");
static_assert(VERBS_OPS_SLOT(resize_cq) == 71, "slot resize_cq");
static_assert(VERBS_OPS_SLOT(unimport_pd) == 75, "slot unimport_pd");

static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr");
static_assert(offsetof(struct verbs_mr, mr_type) == 48, "verbs_mr.mr_type");
static_assert(offsetof(struct verbs_mr, access) == 52, "verbs_mr.access");
static_assert(sizeof(struct ibv_qp) == 160, "ibv_qp");
static_assert(sizeof(struct ibv_qp_ex) == 352, "ibv_qp_ex");
static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "qp_ex.qp_base");
/* librxe ORs VERBS_QP_EX into offset 0x160 */
static_assert(sizeof(struct verbs_qp) == 368, "verbs_qp");
static_assert(offsetof(struct verbs_qp, comp_mask) == 352,
	      "verbs_qp.comp_mask");
static_assert(offsetof(struct verbs_qp, xrcd) == 360, "verbs_qp.xrcd");
static_assert(sizeof(struct ibv_cq) == 128, "ibv_cq");
static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq");
static_assert(sizeof(struct ibv_srq) == 128, "ibv_srq");
static_assert(sizeof(struct verbs_srq) == 160, "verbs_srq");
static_assert(offsetof(struct verbs_srq, srq_type) == 128, "srq_type");
static_assert(offsetof(struct verbs_srq, xrcd) == 136, "srq xrcd");
static_assert(offsetof(struct verbs_srq, cq) == 144, "srq cq");
static_assert(offsetof(struct verbs_srq, srq_num) == 152, "srq_num");
static_assert(sizeof(struct verbs_xrcd) == 16, "verbs_xrcd");

/* kernel uapi sizes the wrappers above are built from (6.1 headers) */
static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8, "cmd_hdr");
static_assert(sizeof(struct ex_hdr) == 24, "ex_hdr");
static_assert(sizeof(struct ibv_get_context) == 16, "get_context");
static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8, "ctx resp");
static_assert(sizeof(struct ibv_query_port) == 24, "query_port");
static_assert(sizeof(struct ibv_alloc_pd) == 16, "alloc_pd");
static_assert(sizeof(struct ib_uverbs_alloc_pd_resp) == 4, "pd resp");
static_assert(sizeof(struct ibv_reg_mr) == 48, "reg_mr");
static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12, "mr resp");
static_assert(sizeof(struct ibv_create_cq) == 40, "create_cq");
static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8, "cq resp");
static_assert(sizeof(struct ibv_create_cq_ex) == 56, "create_cq_ex");
static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16, "cq_ex resp");
static_assert(sizeof(struct ibv_create_srq) == 40, "create_srq");
static_assert(sizeof(struct ibv_create_xsrq) == 56, "create_xsrq");
static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 16, "srq resp");
static_assert(sizeof(struct ibv_modify_srq) == 24, "modify_srq");
static_assert(sizeof(struct ibv_query_srq) == 24, "query_srq");
static_assert(sizeof(struct ibv_create_qp) == 64, "create_qp");
static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32, "qp resp");
static_assert(sizeof(struct ibv_create_qp_ex) == 88, "create_qp_ex");
static_assert(sizeof(struct ib_uverbs_ex_create_qp_resp) == 40, "qp_ex resp");
static_assert(sizeof(struct ibv_modify_cq) == 40, "modify_cq");
static_assert(sizeof(struct ibv_query_qp) == 24, "query_qp");
static_assert(sizeof(struct ibv_modify_qp) == 120, "modify_qp");
static_assert(sizeof(struct ibv_post_send) == 32, "post_send");
static_assert(sizeof(struct ib_uverbs_post_send_resp) == 4, "post_send resp");
static_assert(sizeof(struct ib_uverbs_create_ah_resp) == 4, "ah resp");
static_assert(sizeof(struct ib_uverbs_ex_query_device_resp) == 304,
	      "query_device resp");
static_assert(sizeof(struct ib_uverbs_send_wr) == 56, "uverbs send_wr");

#endif /* EROCE_VERBS_PABI_H */
