// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_kconsumer: posts to an eroce device the way kernel consumers do,
 * from the contexts they post from.  ib_mad posts sends with interrupts
 * off (its send queue lock taken with spin_lock_irqsave()), so post_send
 * and post_recv on a QP in ERR must neither sleep nor enable bottom
 * halves there, and the work requests must still complete with a flush
 * error.
 *
 *   insmod eroce_kconsumer.ko dev=eroce1
 *
 * The checks run at load time, each printing "eroce_kconsumer: ok NAME" or
 * "eroce_kconsumer: not ok NAME ..."; loading fails (-EIO) when one
 * failed, so insmod's exit status is the verdict.  Nothing is left behind:
 * the module can be removed at once.
 *
 * Context: process context (module init).  Locks: none of its own.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <rdma/ib_verbs.h>

static char *dev = "eroce1";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to use");

static int kc_failures;

static void kc_result(const char *name, bool ok, const char *why)
{
	if (ok) {
		pr_info("eroce_kconsumer: ok %s\n", name);
	} else {
		pr_err("eroce_kconsumer: not ok %s: %s\n", name, why);
		kc_failures++;
	}
}

/*
 * The completion of @wr_id within a few seconds: its status, or -1 (at
 * once when insmod was killed, as by the test's timeout).
 */
static int kc_wait_wc(struct ib_cq *cq, u64 wr_id)
{
	struct ib_wc wc;
	int i;

	for (i = 0; i < 500 && !fatal_signal_pending(current); i++) {
		while (ib_poll_cq(cq, 1, &wc) == 1)
			if (wc.wr_id == wr_id)
				return wc.status;
		msleep(10);
	}
	return -1;
}

static void kc_run(struct ib_device *ibdev)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr init_attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
	};
	struct ib_qp_attr err_attr = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr swr = { .wr_id = 0x5e, .opcode = IB_WR_SEND };
	struct ib_recv_wr rwr = { .wr_id = 0x4e };
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	unsigned long flags;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int err;

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd)) {
		kc_result("setup", false, "ib_alloc_pd failed");
		return;
	}
	cq = ib_alloc_cq(ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq)) {
		kc_result("setup", false, "ib_alloc_cq failed");
		goto out_dealloc_pd;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ib_create_qp(pd, &init);
	if (IS_ERR(qp)) {
		kc_result("setup", false, "ib_create_qp failed");
		goto out_free_cq;
	}
	/* IBA 10.3.1: every state but RESET may go to ERR */
	err = ib_modify_qp(qp, &init_attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (!err)
		err = ib_modify_qp(qp, &err_attr, IB_QP_STATE);
	kc_result("setup", !err, "RESET -> INIT -> ERR refused");
	if (err)
		goto out_destroy_qp;

	local_irq_save(flags);
	err = ib_post_send(qp, &swr, &sbad);
	local_irq_restore(flags);
	kc_result("post_send_irqs_off_accepted", !err,
		  "ib_post_send on a QP in ERR failed");
	kc_result("post_send_irqs_off_flushed",
		  !err && kc_wait_wc(cq, swr.wr_id) == IB_WC_WR_FLUSH_ERR,
		  "no flush completion for the send");

	local_irq_save(flags);
	err = ib_post_recv(qp, &rwr, &rbad);
	local_irq_restore(flags);
	kc_result("post_recv_irqs_off_accepted", !err,
		  "ib_post_recv on a QP in ERR failed");
	kc_result("post_recv_irqs_off_flushed",
		  !err && kc_wait_wc(cq, rwr.wr_id) == IB_WC_WR_FLUSH_ERR,
		  "no flush completion for the receive");

out_destroy_qp:
	ib_destroy_qp(qp);
out_free_cq:
	ib_free_cq(cq);
out_dealloc_pd:
	ib_dealloc_pd(pd);
}

static int __init eroce_kconsumer_init(void)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		pr_err("eroce_kconsumer: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	kc_run(ibdev);
	ib_device_put(ibdev);
	pr_info("eroce_kconsumer: %d failed\n", kc_failures);
	return kc_failures ? -EIO : 0;
}

static void __exit eroce_kconsumer_exit(void)
{
}

module_init(eroce_kconsumer_init);
module_exit(eroce_kconsumer_exit);
MODULE_DESCRIPTION("eroce selftest: a kernel RDMA consumer posting with interrupts off");
MODULE_LICENSE("Dual BSD/GPL");
