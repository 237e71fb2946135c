// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_main.c - module entry points, the "eroce" rdma link type and the
 * netdev notifier.
 *
 * `rdma link add NAME type eroce netdev DEV` reaches eroce_newlink(); the
 * notifier makes every device follow its netdev (up/down, MTU) and go away
 * with it.
 *
 * Context: process context.  Locks: eroce_link_lock (mutex) serialises
 * device creation so that two concurrent `rdma link add` commands cannot
 * both bind the same netdev.  The notifier runs under RTNL.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "eroce.h"
#include "eroce_crc32.h"
#include "eroce_fault.h"

MODULE_AUTHOR("The eroce developers");
MODULE_DESCRIPTION("Software RoCEv2 RDMA provider for Ethernet netdevs");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(EROCE_VERSION);
MODULE_ALIAS_RDMA_LINK(EROCE_LINK_TYPE);

static DEFINE_MUTEX(eroce_link_lock);

/*
 * ib_core refuses a name that is taken with ENFILE, which `rdma` prints
 * as "Too many open files in system"; say EEXIST and what happened.  A
 * device keeps its name until its netdev is unregistered, and the netdev
 * of a deleted namespace lives until the namespace's last socket is gone
 * (admin guide, "Network namespaces").  ib_core's check still decides.
 */
static int eroce_name_free(const char *ibdev_name)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return 0;
	pr_err("eroce: RDMA device name %s is taken (rdma link show)\n",
	       ibdev_name);
	ib_device_put(ibdev);
	return -EEXIST;
}

static int eroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct eroce_dev *edev;
	int err;

	mutex_lock(&eroce_link_lock);
	err = eroce_name_free(ibdev_name);
	if (err)
		goto out_unlock;
	edev = eroce_dev_get_by_netdev(ndev);
	if (edev) {
		pr_err("eroce: %s already has RDMA device %s\n",
		       netdev_name(ndev), dev_name(&edev->ibdev.dev));
		ib_device_put(&edev->ibdev);
		err = -EEXIST;
		goto out_unlock;
	}
	err = eroce_dev_add(ibdev_name, ndev);
out_unlock:
	mutex_unlock(&eroce_link_lock);
	return err;
}

static struct rdma_link_ops eroce_link_ops = {
	.type = EROCE_LINK_TYPE,
	.newlink = eroce_newlink,
};

static int eroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct eroce_dev *edev;

	edev = eroce_dev_get_by_netdev(ndev);
	if (!edev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* releases the netdev reference ib_device_set_netdev took */
		ib_unregister_device_queued(&edev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		eroce_dev_port_event(edev);
		break;
	case NETDEV_CHANGEMTU:
		eroce_dev_mtu_changed(edev);
		break;
	default:
		break;
	}

	ib_device_put(&edev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block eroce_netdev_notifier = {
	.notifier_call = eroce_netdev_event,
};

static int __init eroce_init(void)
{
	int err;

	eroce_task_init();
	eroce_dispatch_init();
	err = eroce_wq_init();
	if (err)
		return err;
	eroce_crc32_init();

	err = eroce_net_init();
	if (err)
		goto err_crc32_exit;

	err = register_netdevice_notifier(&eroce_netdev_notifier);
	if (err)
		goto err_net_exit;

	eroce_fault_init();
	rdma_link_register(&eroce_link_ops);
	pr_info("eroce: loaded\n");
	return 0;

err_net_exit:
	eroce_net_exit();
err_crc32_exit:
	eroce_crc32_exit();
	eroce_wq_exit();
	return err;
}

static void __exit eroce_exit(void)
{
	rdma_link_unregister(&eroce_link_ops);
	/* waits for every eroce device, including queued unregistrations */
	ib_unregister_driver((enum rdma_driver_id)EROCE_DRIVER_ID);
	unregister_netdevice_notifier(&eroce_netdev_notifier);
	eroce_fault_exit();
	eroce_net_exit();
	eroce_crc32_exit();
	eroce_wq_exit();
	pr_info("eroce: unloaded\n");
}

module_init(eroce_init);
module_exit(eroce_exit);
