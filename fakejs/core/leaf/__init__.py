"""Leaf nodes: this server's leaf connections, as hub (its leaf port) and as leaf (its remotes).

``leafs`` (the server's leaf connections: the hub's INFO and logins, the
remotes dialled and redialled, loop detection), ``link`` (one leaf
connection, without the socket), ``interest`` (the bound account's
interest exchanged with each leaf connection, and the messages relayed
between them), ``jetstream`` (what each link denies of JetStream's API,
and the subjects of a JetStream domain) ``permissions`` (what a connection
may carry each way) and ``signing`` (a leaf's login with a credentials file or
an nkey, signing the hub's nonce).  The package may import the rest of :mod:`fakejs.core`
below the broker, and :mod:`fakejs.protocol`; the socket layer
(:mod:`fakejs.server`) dials and accepts the connections.
"""
