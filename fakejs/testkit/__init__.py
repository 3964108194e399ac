"""What only a test server offers: virtual time, faults, scenarios, the control API, introspection.

``clock`` (the manual clock), ``faults`` (fault matching and firing at the
hook points :mod:`fakejs.core.hooks` names, and the names of the actions a
fault may run), ``scenarios`` (TOML files of setup and fault steps),
``control`` (the controller: clock, faults, actions, reset), ``control_api``
(the controller over ``$FAKEJS.>`` and HTTP), ``control_subjects`` (the
``$FAKEJS.>`` subscription, which imports the rest at the first request), ``introspection`` (server
state for tests) and ``transcript`` (a connection's bytes).  May import
:mod:`fakejs.monitoring`, :mod:`fakejs.jetstream`, :mod:`fakejs.core`,
:mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; it acts on the running
server through the small interface :class:`~fakejs.testkit.host.ServerActions`
that :mod:`fakejs.server` implements.
"""
