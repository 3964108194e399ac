"""What only a test server offers: faults at hook points, scenarios, the control API, introspection.

``faults`` (fault matching and firing at the hook points :mod:`fakejs.core.hooks`
names), ``scenarios`` (TOML files of setup and fault steps), ``control``
(the controller: clock, faults, actions, reset), ``control_api`` (the
controller over ``$FAKEJS.>`` and HTTP) and ``introspection`` (server state
and transcripts for tests).  May import :mod:`fakejs.monitoring`,
:mod:`fakejs.jetstream`, :mod:`fakejs.core`, :mod:`fakejs.protocol` and
:mod:`fakejs.gocompat`; it acts on the running server through the small
interface :class:`~fakejs.testkit.control.ServerActions` that
:mod:`fakejs.server` implements.
"""
