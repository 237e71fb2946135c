/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: verbs objects (ucontext, PD, AH, MR, MW, CQ, SRQ, QP).
 *
 * Lifetime: ib_core allocates and frees every object but the MR; the
 * objects the engines look up by number (QP by QPN, MR and MW by key, AH
 * by number) sit in an xarray of struct eroce_res and carry a struct
 * eroce_obj: a kref whose last put completes a completion.  A lookup
 * takes a reference with kref_get_unless_zero(); destroy removes the
 * object from its xarray, drops the initial reference and waits for the
 * completion, so no engine still uses the object when ib_core frees it.
 * CQs and SRQs are reached only through a QP, which ib_core's use counts
 * keep from outliving them.
 */
#ifndef EROCE_VERBS_H
#define EROCE_VERBS_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/if_ether.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/eroce-abi.h>

#include "eroce_engine.h"
#include "eroce_psn.h"
#include "eroce_ring.h"

/* QPNs below this are reserved (QP0/QP1); QPNs are 24 bits */
#define EROCE_FIRST_QPN		16
#define EROCE_QPN_MASK		0xffffff
/* the last QPN a QP gets: 0xffffff (IB_MULTICAST_QPN) names a group */
#define EROCE_LAST_QPN		(IB_MULTICAST_QPN - 1)
#define EROCE_GSI_QPN		1

/*
 * Memory keys are (index << 8) | key byte.  MRs and memory windows number
 * apart: an MR index has bit 23 clear, a window's has it set, so bit 31
 * of a key says which table it names.
 */
#define EROCE_MR_INDEX_MAX	0x7fffff
#define EROCE_MW_INDEX_MIN	0x800000
#define EROCE_MW_INDEX_MAX	0xffffff
#define EROCE_KEY_MW		BIT(31)
#define EROCE_AH_NUM_MAX	0xffffff

/* the verbs objects of one device */
struct eroce_res {
	atomic_t num_pd;
	atomic_t num_ah;
	atomic_t num_cq;
	atomic_t num_srq;
	atomic_t num_qp;
	atomic_t num_mr;
	atomic_t num_mw;

	/*
	 * QPN -> struct eroce_qp (NULL while the QP is unpublished, i.e.
	 * still in its first RESET).  Lookups run under RCU; writers take
	 * the xa_lock; next_qpn is guarded by the xa_lock.
	 */
	struct xarray qp_xa;
	u32 next_qpn;

	/*
	 * MR index -> struct eroce_mr; RCU lookups (MRs are kfree_rcu'd).
	 * Indexes are random (eroce_res_alloc_index()), as in mw_xa.
	 */
	struct xarray mr_xa;

	/*
	 * MW index -> struct eroce_mw; lookups and writers take the xa_lock
	 * with interrupts off (ib_core frees windows without an RCU grace
	 * period, and the engines look them up in softirq context).
	 */
	struct xarray mw_xa;

	/*
	 * AH number -> struct eroce_ah; lookups and writers take the
	 * xa_lock with interrupts off (AHs come and go in atomic context).
	 */
	struct xarray ah_xa;
	u32 next_ah;
};

/* reference count of an object the engines look up */
struct eroce_obj {
	struct kref ref;
	struct completion released;	/* the last reference is gone */
};

struct eroce_ucontext {
	struct ib_ucontext ibuc;
};

struct eroce_pd {
	struct ib_pd ibpd;
};

/* address vector: where a UD WQE or a connected QP sends to */
struct eroce_av {
	const struct ib_gid_attr *sgid_attr;	/* reference held */
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u8 sgid_index;
	u8 sl;
	u8 traffic_class;
	u8 hop_limit;
	u8 static_rate;
	u32 flow_label;
	enum rdma_network_type network_type;	/* RDMA_NETWORK_IPV4/IPV6 */
};

struct eroce_ah {
	struct ib_ah ibah;
	struct eroce_obj obj;
	u32 num;
	struct eroce_av av;
};

enum eroce_mr_type {
	EROCE_MR_DMA,		/* all of kernel memory, kernel PDs only */
	EROCE_MR_USER,		/* pinned user memory */
	EROCE_MR_FAST,		/* fast registration (alloc_mr, REG_MR) */
};

/* most pages one fast-registration MR maps (max_fast_reg_page_list_len) */
#define EROCE_MAX_FAST_REG_PAGES	512

/* the page list of a fast-registration MR */
struct eroce_mr_pages {
	u64 *addr;		/* the kernel address of each block */
	u32 num;		/* blocks in use */
	u32 first_offset;	/* of the MR's first byte in block 0 */
	u8 shift;		/* log2 of the block size */
};

/*
 * A fast-registration MR is FREE or VALID.  map_mr_sg() fills the staged
 * page list (the consumer serialises its own calls); REG_MR, run by the
 * requester, swaps it in and makes the MR VALID with the key, access,
 * iova and length of the work request; LOCAL_INV or a remote
 * invalidation makes it FREE.  Every access to the memory checks the
 * state, key and rights and copies under the lock, so once an
 * invalidation returns no packet reads or writes the pages any more.
 */
struct eroce_mr_fast {
	/* guards valid, live and the MR's key, access, iova and length */
	spinlock_t lock;
	bool valid;
	u32 max_pages;
	struct eroce_mr_pages live;
	struct eroce_mr_pages staged;
};

struct eroce_mr {
	struct ib_mr ibmr;
	struct eroce_obj obj;
	struct rcu_head rcu;
	enum eroce_mr_type type;
	/*
	 * The key the engines match, never ibmr.lkey/rkey: a consumer
	 * changes those for its next REG_MR (ib_update_fast_reg_key()).
	 */
	u32 key;
	int access;		/* enum ib_access_flags */
	u32 index;
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	/* the pinned pages; iova maps to pages[0] + page_offset */
	struct page **pages;
	unsigned long npages;
	unsigned int page_offset;
	struct eroce_mr_fast fast;	/* EROCE_MR_FAST */

	/*
	 * Memory windows bound to a user MR: while there are, the MR cannot
	 * be deregistered, so a window's pointer to it stays good.  mw_lock
	 * (irq safe, inside a window's lock) guards num_mw and unbindable,
	 * which deregistration sets once it has seen no window bound.
	 */
	spinlock_t mw_lock;
	unsigned int num_mw;
	bool unbindable;
};

/*
 * A memory window: a range of a user MR, with remote rights of its own,
 * that the consumer binds and invalidates through its send queue.  Type 1
 * serves every QP of its PD, type 2 (2B) only the QP that bound it.  The
 * lock (irq safe, taken inside an engine's lock) guards the binding; a
 * remote access checks it and copies under it, so a bind or invalidation
 * is either before or after a packet's copy, never during.
 */
struct eroce_mw {
	struct ib_mw ibmw;		/* first: ib_core allocates it */
	struct eroce_obj obj;
	u32 index;

	spinlock_t lock;		/* guards the binding below */
	bool valid;			/* bound, and not invalidated */
	u32 key;			/* the rkey the engines match */
	struct eroce_mr *mr;		/* bound to; counted in mr->num_mw */
	u64 addr;			/* first byte as a peer names it */
	u64 mr_iova;			/* the same byte in mr */
	u64 length;
	int access;			/* IB_ACCESS_REMOTE_* */
	u32 qpn;			/* type 2: the QP it serves */
};

struct eroce_cq {
	struct ib_cq ibcq;
	bool user;
	u32 comp_vector;		/* picks the CPU of its QPs, but 0 */
	struct eroce_ring ring;
	/* IB_EVENT_CQ_ERR raised once; guarded by ring.producer_lock */
	bool overflowed;
};

struct eroce_srq {
	struct ib_srq ibsrq;
	bool user;
	u32 max_sge;
	struct eroce_ring ring;
	/* armed limit, 0 when disarmed; guarded by ring.consumer_lock */
	u32 limit;
};

/*
 * Attributes set by modify_qp.  Whoever writes them (modify_qp, and
 * eroce_qp_mark_err() for the state) holds both qp->eng.lock and
 * qp->state_lock, so the engines read them under the one and query_qp
 * under the other.  Read with neither held: the state, by the post paths
 * (eroce_qp_state(), READ_ONCE() against its writers' WRITE_ONCE()), and
 * max_dest_rd_atomic, which modify_qp reads before it takes them to size
 * the response queue it may need (eroce_qp_rsp_alloc()).
 */
struct eroce_qp_attrs {
	enum ib_qp_state state;
	enum ib_mtu path_mtu;
	enum ib_mig_state path_mig_state;
	u32 qkey;
	u32 rq_psn;
	u32 sq_psn;
	u32 dest_qp_num;
	int access_flags;
	u16 pkey_index;
	u8 port_num;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 en_sqd_async_notify;
	bool av_valid;
	struct eroce_av av;
};

/*
 * What a QPN lookup (eroce_qp_get(), a multicast group's walk) finds: the
 * QP's reference count, in memory of its own that outlives the QP by an
 * RCU grace period (kfree_rcu() in destroy_qp).  A lookup racing with
 * destroy_qp touches no freed memory, and destroy_qp need not wait for a
 * grace period before ib_core frees the QP.
 */
struct eroce_qp_handle {
	struct eroce_obj obj;
	struct eroce_qp *qp;
	struct rcu_head rcu;
};

struct eroce_qp {
	struct ib_qp ibqp;
	struct eroce_qp_handle *handle;
	bool user;
	bool published;		/* in eroce_res.qp_xa; set under state_lock */
	bool sig_all;		/* IB_SIGNAL_ALL_WR */

	struct eroce_ring sq;
	u32 sq_max_sge;
	u32 sq_max_inline;

	struct eroce_ring rq;	/* rq.ctrl is NULL when the QP has an SRQ */
	u32 rq_max_sge;

	/* attrs' writers hold it inside eng.lock; query_qp reads under it */
	spinlock_t state_lock;
	struct eroce_qp_attrs attrs;

	struct eroce_qp_engine eng;	/* transport state, own lock */
};

static inline struct eroce_ucontext *to_eroce_uctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct eroce_ucontext, ibuc);
}

static inline struct eroce_pd *to_eroce_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct eroce_pd, ibpd);
}

static inline struct eroce_ah *to_eroce_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct eroce_ah, ibah);
}

static inline struct eroce_mr *to_eroce_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct eroce_mr, ibmr);
}

static inline struct eroce_mw *to_eroce_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct eroce_mw, ibmw);
}

/* does @key name a memory window (else an MR)? */
static inline bool eroce_key_is_mw(u32 key)
{
	return key & EROCE_KEY_MW;
}

static inline struct eroce_cq *to_eroce_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct eroce_cq, ibcq);
}

static inline struct eroce_srq *to_eroce_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct eroce_srq, ibsrq);
}

static inline struct eroce_qp *to_eroce_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct eroce_qp, ibqp);
}

/*
 * A message length the device accepts.  EROCE_MAX_MSG_SIZE is BIT(31), an
 * unsigned long of 2 GiB, defined by eroce.h after it includes this
 * header (hence a macro); the (u32) cast leaves its value as it is.
 */
#define eroce_msg_len_ok(len)	((u64)(len) <= (u32)EROCE_MAX_MSG_SIZE)

/* the state an engine acts on; a snapshot, modify_qp may change it */
static inline enum ib_qp_state eroce_qp_state(const struct eroce_qp *qp)
{
	return READ_ONCE(qp->attrs.state);
}

/* RC or UC: one peer, messages of path-MTU packets in PSN order */
static inline bool eroce_qp_connected(const struct eroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

/* eroce_verbs.c */
extern const struct ib_device_ops eroce_verbs_ops;

/* eroce_obj.c */
void eroce_res_init(struct eroce_res *res);
void eroce_res_fini(struct eroce_res *res);
int eroce_res_alloc_index(struct xarray *xa, u32 *index, u32 min, u32 max,
			  bool irq);
int eroce_res_count_get(atomic_t *count, int max);
void eroce_obj_init(struct eroce_obj *obj);
bool eroce_obj_get(struct eroce_obj *obj);
void eroce_obj_put(struct eroce_obj *obj);
void eroce_obj_drain(struct eroce_obj *obj, bool sleepable);

/* eroce_ucontext.c */
int eroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void eroce_dealloc_ucontext(struct ib_ucontext *ibuc);
int eroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void eroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
void eroce_disassociate_ucontext(struct ib_ucontext *ibuc);

/* eroce_pd.c */
int eroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int eroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* eroce_ah.c */
int eroce_av_from_attr(struct eroce_av *av, const struct rdma_ah_attr *attr);
void eroce_av_to_attr(const struct eroce_av *av, struct rdma_ah_attr *attr);
void eroce_av_release(struct eroce_av *av);
int eroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int eroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int eroce_destroy_ah(struct ib_ah *ibah, u32 flags);
struct eroce_ah *eroce_ah_get(struct eroce_res *res, u32 num);
void eroce_ah_put(struct eroce_ah *ah);

/* eroce_mr.c */
struct ib_mr *eroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *eroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *eroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
int eroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *eroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int eroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int eroce_mr_fast_reg(struct eroce_res *res, struct ib_pd *pd,
		      const struct eroce_send_wqe *wqe);
int eroce_mr_invalidate(struct eroce_res *res, struct ib_pd *pd, u32 key);
bool eroce_mr_window_get(struct eroce_mr *mr);
void eroce_mr_window_put(struct eroce_mr *mr);
struct eroce_mr *eroce_mr_get(struct eroce_res *res, u32 key);
void eroce_mr_put(struct eroce_mr *mr);

/* eroce_mw.c */
int eroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int eroce_dealloc_mw(struct ib_mw *ibmw);
int eroce_mw_bind(struct eroce_res *res, struct eroce_qp *qp,
		  const struct eroce_send_wqe *wqe);
int eroce_key_invalidate(struct eroce_res *res, struct eroce_qp *qp,
			 u32 key, bool remote);
struct eroce_mw *eroce_mw_get(struct eroce_res *res, u32 key);
void eroce_mw_put(struct eroce_mw *mw);

/* eroce_cq.c */
int eroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int eroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int eroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int eroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int eroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int eroce_cq_post(struct eroce_cq *cq, const struct eroce_cqe *cqe,
		  bool solicited);

/* eroce_srq.c */
int eroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int eroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int eroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int eroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int eroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
void eroce_srq_check_limit(struct eroce_srq *srq);
int eroce_ring_post_recv(struct eroce_ring *ring, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

/* eroce_qp.c */
int eroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int eroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int eroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int eroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int eroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int eroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* eroce_restrack.c */
int eroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

#endif /* EROCE_VERBS_H */
