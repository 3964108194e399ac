"""The server without sockets: subjects, routing, client sessions, accounts, the clock seam.

``subjects`` (validation, matching, the subscription trie), ``router``
(subscriptions and fan-out), ``session`` (one client connection's protocol
logic), ``broker`` (server identity, INFO, authentication, the client
registry), ``accounts`` (an account holds its router, its users and its
JetStream), ``cluster`` (routes to the other servers of a cluster:
pools, gossip, remote interest), ``clock`` (the one seam every timer goes through: the
protocol and real time), ``failures`` (exceptions of server handlers,
recorded for the test), ``hooks`` (the named points where faults may
fire), ``stats``, ``options`` and ``log``.  May import :mod:`fakejs.protocol`
and :mod:`fakejs.gocompat`; it knows the layers above only through the
small protocols and callbacks it defines (an account's JetStream, fault
hooks, a connection's I/O, the session's host, closed-connection
callbacks, clock error sinks).
"""
