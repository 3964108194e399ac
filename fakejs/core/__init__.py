"""The server without sockets: subjects, routing, client sessions, accounts, the clock seam.

``subjects`` (validation, matching, the subscription trie), ``router``
(subscriptions and fan-out), ``session`` (one client connection's protocol
logic), ``broker`` (server identity, INFO, authentication, the client
registry), ``accounts`` (an account holds its router, its users and its
JetStream), ``cluster`` (routes to the other servers of a cluster:
pools, gossip, remote interest), ``leaf`` (leaf node connections, as hub
and as leaf), ``clock`` (the one seam every timer goes through: the
protocol and real time), ``failures`` (exceptions of server handlers,
recorded for the test), ``hooks`` (the named points where faults may
fire), ``recorder`` (the timeline's event kinds and recording points), ``read_deferrals`` (work a handler puts off until the client read it came in ends), ``stats``, ``options`` (with ``resolver_directory`` and ``replicated_jetstream``, the settings only some servers have), ``log`` and ``process`` (the pid a harness
knows the server by).  May import :mod:`fakejs.protocol`
and :mod:`fakejs.gocompat`; it knows the layers above only through the
small protocols and callbacks it defines (an account's JetStream, fault
hooks, a connection's I/O, the session's host, closed-connection
callbacks, clock error sinks).

The rest: ``configfile`` (nats-server configuration files onto
``ServerOptions``); for a client, ``connect`` (CONNECT and the login its
credentials make), ``auth`` (the credential checks), ``callout``
(authorization callouts: a login decided by a service), ``jwt`` (operator
mode: JWTs verified, the chain of trust, user JWT logins), ``users`` (who may
connect, and their permissions), ``permissions`` (one client's permissions,
compiled), ``certmap`` (``verify_and_map``: the user a client certificate
logs in as), ``keepalive`` (PINGs, stale detection, the round-trip time),
``sublimits`` (``max_subscriptions``), ``publish_refusals`` (a message refused, a request nobody took), ``violations`` (how a session that
broke the protocol ends), ``clientio`` (what passes between a session and
the socket layer), ``linkio`` (what a route or leaf connection shares with its
socket: queued output, the input loop, the login deadline) and ``trace`` (protocol trace lines); for accounts,
``account_config`` (the ``accounts`` block), ``jetstream_limits`` (an account's JetStream limits), ``account_claims`` (operator mode's accounts following
their JWTs), ``account_fetch`` (an account JWT asked of the other servers of a cluster),
``account_reload`` (accounts
following a reload), ``imports`` (exports and imports between accounts),
``mappings`` (account subject mappings), ``subject_transform`` and
``transform_functions`` (subject transforms and their destination
functions), ``sysevents`` (system account events), ``request_info`` (the
requester's ``ClientInfo`` a request carries over a route); message tracing in
``msgtrace`` (the ``Nats-Trace-Dest`` events), ``msgtrace_route`` (the trace
of a message a route brought) and ``msgtrace_encoding`` (compressed trace
events); and for the server's settings, ``reload_options`` (what a reload
changes, and what it refuses), ``reload_errors`` (a refused reload, without
the comparison), ``reload_websocket`` (the refusal of a
websocket change, the block as Go prints it), ``transport_config`` (TLS and WebSocket
settings as plain data), ``cluster_config`` (the cluster port's settings as
plain data), ``leaf_config`` (the leaf port's and remotes' settings as plain data), ``cluster_checks`` (the start checks on JetStream and a
cluster), ``tls_files`` (the checks on a TLS configuration's files) and
``empty_reply`` (the marker of a reply subject that is present but empty).
"""
