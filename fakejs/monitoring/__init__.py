"""nats-server's monitoring documents: ``/healthz``, ``/varz``, ``/connz``, ``/subsz``, ``/jsz``.

``endpoints`` (the path table, ``/healthz`` and ``/varz``), ``connz``
(``/connz`` and ``/subsz``), ``jsz``, ``routez``, ``health`` (the health
check behind ``/healthz``), ``accountz`` (``/accountz``, ``/accstatz``,
``/gatewayz``), ``leafz`` (``/leafz``, ``/varz``'s ``leaf``), ``records`` (what ``/connz`` keeps
about a connection, open or closed), ``query`` (query decoding and Go's
number formats) and ``source`` (:class:`~fakejs.monitoring.source.MonitoredServer`,
what the documents read from a server); ``claims`` answers the account resolver's requests
(``$SYS.REQ.CLAIMS...``), ``resolver`` makes them when the server needs them (at the start in
operator mode, else with the first account update), ``claims_pack`` keeps a full resolver's directory in step with the
cluster's (the periodic ``$SYS.REQ.CLAIMS.PACK``), ``system`` answers the requests of
the system account, ``userinfo`` ``$SYS.REQ.USER.INFO`` in every account,
``client_requests`` the ``KICK`` and ``LDM`` of one client and
``subscribers`` ``$SYS.DEBUG.SUBSCRIBERS`` and ``$SYS.REQ.ACCOUNT.NSUBS``.
Each document is shaped field
for field like nats-server's.  May import :mod:`fakejs.jetstream`,
:mod:`fakejs.core`, :mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; the
HTTP listener that serves them lives in :mod:`fakejs.server`, which
implements ``MonitoredServer``.
"""
