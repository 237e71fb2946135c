// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_ktimer: makes an RC QP's retransmit timer expire while the
 * sender, holding the engine lock, handles an acknowledgment that re-arms
 * it.  The expiry then waits for the lock on the timer's CPU and
 * runs after the re-arm: eroce_req_timer() must see that the timer is
 * queued again and count a stale expiry instead of a timeout (which, with
 * retry_cnt 0, would fail the QP despite the fresh ACK).
 *
 *   insmod eroce_ktimer.ko [shots=N] [max_wait_ms=MS]
 *
 * A kprobe on eroce_req_responded() (called by eroce_req_match.c under the
 * engine lock, before the timer is re-armed) waits, for at most
 * max_wait_ms, until the timer's callback has started on another CPU,
 * shots times in all.  /sys/module/eroce_ktimer/parameters/ says how it
 * went: fired (the callback was seen running), same_cpu (the timer was on
 * the acknowledgment's own CPU, where its softirq cannot run meanwhile: no
 * race possible), missed (the callback did not start in time).  White-box:
 * it reads the QP through the driver's own headers.
 *
 * Context: the kprobe runs where the acknowledgment is handled (softirq or the
 * QP's work item) with the engine lock held and bottom halves off; it
 * takes no lock.  The counters are written only there, under that lock
 * (one QP), and read through sysfs.
 */
#include <linux/hrtimer.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>

#include "eroce.h"

static unsigned int shots = 10;
module_param(shots, uint, 0444);
MODULE_PARM_DESC(shots, "races to provoke, at most");

static unsigned int max_wait_ms = 1000;
module_param(max_wait_ms, uint, 0444);
MODULE_PARM_DESC(max_wait_ms, "longest wait for the timer's callback");

static unsigned int fired;
module_param(fired, uint, 0444);
MODULE_PARM_DESC(fired, "expiries held on the engine lock");

static unsigned int same_cpu;
module_param(same_cpu, uint, 0444);
MODULE_PARM_DESC(same_cpu, "ACKs handled on the timer's own CPU");

static unsigned int missed;
module_param(missed, uint, 0444);
MODULE_PARM_DESC(missed, "waits that ended before the callback started");

static int eroce_ktimer_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct eroce_qp *qp = (void *)regs_get_kernel_argument(regs, 0);
	struct hrtimer *timer = &qp->eng.req.timer;
	u64 deadline;

	if (READ_ONCE(fired) >= shots || !hrtimer_is_queued(timer))
		return 0;
	/* only the engine lock, held here, starts the timer: its base stays */
	if (timer->base->cpu_base->cpu == smp_processor_id()) {
		WRITE_ONCE(same_cpu, same_cpu + 1);
		return 0;
	}
	/* the engine lock is held, bottom halves are off: no sleeping */
	deadline = ktime_get_ns() + (u64)max_wait_ms * NSEC_PER_MSEC;
	while (!hrtimer_callback_running(timer)) {
		if (ktime_get_ns() > deadline) {
			WRITE_ONCE(missed, missed + 1);
			return 0;
		}
		cpu_relax();
	}
	WRITE_ONCE(fired, fired + 1);
	return 0;
}

static struct kprobe eroce_ktimer_kp = {
	.symbol_name = "eroce_req_responded",
	.pre_handler = eroce_ktimer_pre,
};

static int __init eroce_ktimer_init(void)
{
	return register_kprobe(&eroce_ktimer_kp);
}

static void __exit eroce_ktimer_exit(void)
{
	unregister_kprobe(&eroce_ktimer_kp);
}

module_init(eroce_ktimer_init);
module_exit(eroce_ktimer_exit);
MODULE_DESCRIPTION("eroce test: the retransmit timer races an ACK");
MODULE_LICENSE("Dual BSD/GPL");
