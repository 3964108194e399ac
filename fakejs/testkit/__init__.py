"""What only a test server offers: virtual time, faults, scenarios, the control API, introspection.

``clock`` (the manual clock), ``faults`` (fault matching and firing at the
hook points :mod:`fakejs.core.hooks` names), ``schema`` (declared request
bodies and the one reader of them), ``arguments`` (what each action, event
change and match key takes), ``scenarios`` (TOML files of setup and fault
steps), ``scenario_conformance`` (a scenario's ``[conformance]`` table),
``control`` (the controller: clock, faults, actions, reset),
``control_routes`` (each control request with the declaration of its body),
``control_api`` (the controller over ``$FAKEJS.>`` and HTTP),
``control_reference`` (the documentation's reference, from the
declarations), ``control_subjects`` (the ``$FAKEJS.>`` subscription, which
imports the rest at the first request), ``access`` (who may use the
control API), ``introspection`` (server state for
tests), ``transcript`` (a connection's bytes), ``timeline`` (the ring of
events the server recorded, and its queries), ``timeline_page`` (the
timeline as one self-contained HTML page), ``conditions`` (a waited-for
condition in words, and its time-out), ``certs`` (throwaway certificates,
with trustme), ``jwt`` (credentials for operator mode: operators, accounts
and users minted as nats-io/jwt v2 writes them, ``.creds`` files, the
server configuration), ``coverage``, ``coverage_jetstream`` and
``coverage_reference`` (the coverage page's facts and tables), and
``conformance`` (the client conformance watch).  May import
:mod:`fakejs.monitoring`, :mod:`fakejs.jetstream`, :mod:`fakejs.core`,
:mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; it acts on the running
server through the small interface :class:`~fakejs.testkit.host.ServerActions`
(``host``) that :mod:`fakejs.server` implements.
"""
