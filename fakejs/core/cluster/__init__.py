"""Clustering: routes to the other servers of a cluster, as nats-server's route protocol has them.

``cluster`` (the server's routes, pools, gossip and client URLs),
``greeting`` (its INFO and CONNECT), ``dialling`` (dials and redials),
``peers`` (the other servers, the pool an account travels on), ``link``
(one route connection, without the socket), ``interest`` (one
account's remote subscriptions and the announcement of its own) and
``reloading`` (a reload's new cluster name, routes and authorization).  The
package may import the rest of :mod:`fakejs.core` below the broker, and
:mod:`fakejs.protocol`; the socket layer (:mod:`fakejs.server`) dials and
accepts the connections.
"""
