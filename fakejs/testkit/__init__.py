"""What only a test server offers: virtual time, faults, scenarios, the control API, introspection.

``clock`` (the manual clock), ``faults`` (fault matching and firing at the
hook points :mod:`fakejs.core.hooks` names), ``schema`` (declared request
bodies and the one reader of them), ``arguments`` (what each action, event
change and match key takes), ``scenarios`` (TOML files of setup and fault
steps), ``control`` (the controller: clock, faults, actions, reset),
``control_routes`` (each control request with the declaration of its body),
``control_api`` (the controller over ``$FAKEJS.>`` and HTTP),
``control_reference`` (the documentation's reference, from the
declarations), ``control_subjects`` (the ``$FAKEJS.>`` subscription, which
imports the rest at the first request), ``introspection`` (server state for
tests) and ``transcript`` (a connection's bytes).  May import
:mod:`fakejs.monitoring`, :mod:`fakejs.jetstream`, :mod:`fakejs.core`,
:mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; it acts on the running
server through the small interface :class:`~fakejs.testkit.host.ServerActions`
that :mod:`fakejs.server` implements.
"""
