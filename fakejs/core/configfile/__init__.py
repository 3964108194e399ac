"""nats-server configuration files mapped onto :class:`~fakejs.core.options.ServerOptions`.

:mod:`fakejs.conf` reads the format into a tree of positioned tokens; this
package walks that tree key by key, the way nats-server's option stage does:
every key it knows sets an option (with nats-server's checks and error texts,
reported against the value's ``FILE:LINE:COL``), every block fakejs does not
serve is refused or accepted as nats-server's behaviour requires, and the
errors are collected and reported together.  It may import
:mod:`fakejs.conf`, :mod:`fakejs.gocompat` and the core modules below the
broker (options, users, subjects, log).
"""
