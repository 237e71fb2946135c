// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: the lookups that the network and transport code use to find what
 * the device and the verbs created: the eroce device of a netdev, the
 * netdev of a device (both ib_core's pointers), and a QP by its QPN or
 * its handle (struct eroce_res.qp_xa, filled by eroce_qp.c).  It sits
 * below every file that looks something up, so that none of them calls
 * the device's or the QP's own file.
 *
 * Contexts: any; eroce_qp_handle_get() inside an RCU read-side section.
 * Locks: ib_core's port_data netdev_lock (a spinlock) in
 * eroce_get_netdev(); QP lookups take the RCU read lock and a reference
 * in the QP's handle, no lock.
 */
#include "eroce.h"

/**
 * eroce_dev_get_by_netdev() - find the eroce device of a netdev
 * @ndev: the parent netdev
 *
 * Context: any; the returned device holds a reference, drop it with
 * ib_device_put().
 * Return: the device or NULL.
 */
struct eroce_dev *eroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev,
					(enum rdma_driver_id)EROCE_DRIVER_ID);
	return ibdev ? to_eroce_dev(ibdev) : NULL;
}

/*
 * The port's netdev, with a reference, or NULL once unregistration has
 * dropped it.  ib_core answers this itself for drivers that call
 * ib_device_set_netdev(), but Linux 6.1's SMC-R finds the RDMA device of
 * a netdev only through this legacy operation.  It reads ib_core's own
 * pointer, under ib_core's lock, as ib_device_get_netdev() does: unlike
 * edev->ndev it goes NULL when free_netdevs() releases the reference.
 * Outside the netdev notifier (where the netdev is alive) every use of
 * the netdev goes through here: a device outlives its netdev while
 * rdma_cm's users hold it, and its sysfs files are read meanwhile.
 */
struct net_device *eroce_get_netdev(struct ib_device *ibdev, u32 port_num)
{
	struct ib_port_data *pdata = &ibdev->port_data[port_num];
	struct net_device *ndev;

	spin_lock(&pdata->netdev_lock);
	ndev = rcu_dereference_protected(pdata->netdev,
					 lockdep_is_held(&pdata->netdev_lock));
	dev_hold(ndev);
	spin_unlock(&pdata->netdev_lock);
	return ndev;
}

/*
 * eroce_qp_handle_get - the QP of @h with a reference, or NULL when it is
 * being destroyed.  Caller in an RCU read-side section that found @h.
 */
struct eroce_qp *eroce_qp_handle_get(struct eroce_qp_handle *h)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(),
			 "a QP handle looked at outside an RCU read-side section");
	return h && eroce_obj_get(&h->obj) ? h->qp : NULL;
}

/* QP @qpn with a reference, or NULL.  Any context. */
struct eroce_qp *eroce_qp_get(struct eroce_res *res, u32 qpn)
{
	struct eroce_qp *qp;

	rcu_read_lock();
	qp = eroce_qp_handle_get(xa_load(&res->qp_xa, qpn));
	rcu_read_unlock();
	return qp;
}

void eroce_qp_put(struct eroce_qp *qp)
{
	eroce_obj_put(&qp->handle->obj);
}
