// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_net.c - the UDP/4791 sockets of each network namespace.
 *
 * A RoCEv2 device sends and receives in the namespace of its netdev.  The
 * first eroce device created in a namespace opens one IPv4 and (if IPv6 is
 * available there) one IPv6 kernel UDP socket bound to port 4791, made by
 * udp_sock_create(), with a tunnel's encap_rcv (eroce_recv.c) and GRO
 * hooks (eroce_gro.c); the last device to go closes them.  Kernel sockets
 * hold no reference on their namespace, so the pernet exit hook waits
 * until every device of a dying namespace has been unregistered (its
 * netdev goes away with the namespace) and the sockets are closed, before
 * the namespace is freed.
 * Nothing is ever queued to them: the UDP stack hands every packet to
 * eroce_recv_encap() on the CPU that received it; eroce_xmit.c sends on
 * them.
 *
 * Context: process context only (device creation and teardown, pernet
 * exit).  Locks: eroce_net_lock (mutex) guards eroce_net_list and every
 * eroce_net's users count; it is never held across device unregistration.
 */
#include <linux/module.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

#include "eroce.h"

struct eroce_net {
	struct list_head list;		/* in eroce_net_list */
	struct net *net;		/* not counted: see the file comment */
	struct socket *sock4;
	struct socket *sock6;		/* NULL if IPv6 is off in net */
	unsigned int users;		/* devices using the sockets */
};

static DEFINE_MUTEX(eroce_net_lock);
static LIST_HEAD(eroce_net_list);
static DECLARE_WAIT_QUEUE_HEAD(eroce_net_released);

static struct socket *eroce_net_sock_open(struct net *net, bool ipv6)
{
	struct udp_port_cfg udp_cfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		udp_cfg.family = AF_INET6;
		udp_cfg.ipv6_v6only = 1;
	} else {
		udp_cfg.family = AF_INET;
	}
	udp_cfg.local_udp_port = htons(EROCE_ROCEV2_UDP_PORT);

	/*
	 * RoCEv2 senders may leave the UDP checksum zero even over IPv6;
	 * use_udp6_rx_checksums stays false so such packets are accepted.
	 */
	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err)
		return ERR_PTR(err);

	/*
	 * A tunnel's socket (eroce_gro_sock_setup()): each packet goes to
	 * eroce_recv_encap() in the softirq that received it, never through
	 * a queue all CPUs share (Documentation/design.rst, "Receive on
	 * many CPUs").  The stack cuts a GSO skb without a tunnel flag into
	 * its packets first, and hands a batch that GRO chained from a NIC's
	 * packets through eroce_gro.c's hooks whole, as the socket accepts
	 * GSO.  Multicast loopback stays on, as every new inet socket has it
	 * (setup_udp_tunnel_sock() turns it off for IPv4;
	 * eroce_gro_sock_setup() turns it back on): through ip_mc_output() or
	 * ip6_finish_output2(), a multicast packet sent with these sockets
	 * comes back in on its egress netdev when that netdev has joined the
	 * group, as the group's first attachment made it (eroce_mcast.c).
	 * So the QPs of that netdev's device attached to the group get what
	 * their own host sends to it, as a RoCE NIC delivers a group's
	 * packets to its own.
	 */
	eroce_gro_sock_setup(sock);
	udp_allow_gso(sock->sk);
	return sock;
}

static struct eroce_net *eroce_net_find(struct net *net)
{
	struct eroce_net *en;

	lockdep_assert_held(&eroce_net_lock);
	list_for_each_entry(en, &eroce_net_list, list)
		if (net_eq(en->net, net))
			return en;
	return NULL;
}

static struct eroce_net *eroce_net_create(struct net *net)
{
	struct eroce_net *en;
	int err;

	lockdep_assert_held(&eroce_net_lock);
	en = kzalloc(sizeof(*en), GFP_KERNEL);
	if (!en)
		return ERR_PTR(-ENOMEM);
	en->net = net;

	en->sock4 = eroce_net_sock_open(net, false);
	if (IS_ERR(en->sock4)) {
		err = PTR_ERR(en->sock4);
		if (err == -EADDRINUSE)
			pr_err("eroce: UDP port %u is already in use in this network namespace (is rdma_rxe loaded here?)\n",
			       EROCE_ROCEV2_UDP_PORT);
		else
			pr_err("eroce: cannot open the IPv4 RoCEv2 socket: %d\n",
			       err);
		goto err_free_net;
	}

	en->sock6 = eroce_net_sock_open(net, true);
	if (IS_ERR(en->sock6)) {
		err = PTR_ERR(en->sock6);
		if (err == -EADDRINUSE) {
			pr_err("eroce: UDP port %u (IPv6) is already in use in this network namespace\n",
			       EROCE_ROCEV2_UDP_PORT);
			goto err_release_sock4;
		}
		/* IPv6 disabled in this namespace or kernel: IPv4 only */
		en->sock6 = NULL;
	}

	list_add(&en->list, &eroce_net_list);
	return en;

err_release_sock4:
	udp_tunnel_sock_release(en->sock4);
err_free_net:
	kfree(en);
	return ERR_PTR(err);
}

/**
 * eroce_net_get() - take a reference on the RoCEv2 sockets of @net
 * @net: namespace of the netdev a device is created on
 *
 * Opens the sockets when this is the first eroce device in @net.
 * Context: process context; takes eroce_net_lock.
 * Return: the namespace's sockets or an ERR_PTR (-EADDRINUSE when another
 * driver, such as rdma_rxe, owns UDP port 4791 in @net).
 */
struct eroce_net *eroce_net_get(struct net *net)
{
	struct eroce_net *en;

	mutex_lock(&eroce_net_lock);
	en = eroce_net_find(net);
	if (!en)
		en = eroce_net_create(net);
	if (!IS_ERR(en))
		en->users++;
	mutex_unlock(&eroce_net_lock);
	return en;
}

/**
 * eroce_net_put() - drop a reference taken by eroce_net_get()
 * @en: the namespace's sockets
 *
 * Closes the sockets when the last device of the namespace goes.
 * Context: process context; takes eroce_net_lock.
 */
void eroce_net_put(struct eroce_net *en)
{
	mutex_lock(&eroce_net_lock);
	if (--en->users) {
		mutex_unlock(&eroce_net_lock);
		return;
	}
	list_del(&en->list);
	mutex_unlock(&eroce_net_lock);

	if (en->sock6)
		udp_tunnel_sock_release(en->sock6);
	udp_tunnel_sock_release(en->sock4);
	kfree(en);
	wake_up_all(&eroce_net_released);
}

/* the namespace's IPv4 or IPv6 RoCEv2 socket (NULL: no IPv6 there) */
struct sock *eroce_net_sk(struct eroce_net *en, bool ipv6)
{
	struct socket *sock = ipv6 ? en->sock6 : en->sock4;

	return sock ? sock->sk : NULL;
}

static bool eroce_net_gone(struct net *net)
{
	bool gone;

	mutex_lock(&eroce_net_lock);
	gone = !eroce_net_find(net);
	mutex_unlock(&eroce_net_lock);
	return gone;
}

/*
 * The namespace is being dismantled: its netdevs have been unregistered
 * (pernet subsystems exit after pernet devices), which queued the
 * unregistration of every eroce device on them.  Wait for those to finish
 * so that no socket outlives its namespace.  eroce_net_gone() sleeps on
 * eroce_net_lock, so it cannot be a wait_event() condition (that runs it
 * with the task no longer TASK_RUNNING); wait_woken() lets it run
 * between waits and loses no wakeup that comes while it does.
 */
static void eroce_net_exit_net(struct net *net)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(&eroce_net_released, &wait);
	while (!eroce_net_gone(net))
		wait_woken(&wait, TASK_UNINTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
	remove_wait_queue(&eroce_net_released, &wait);
}

static struct pernet_operations eroce_net_ops = {
	.exit = eroce_net_exit_net,
};

int eroce_net_init(void)
{
	return register_pernet_subsys(&eroce_net_ops);
}

void eroce_net_exit(void)
{
	unregister_pernet_subsys(&eroce_net_ops);
}
