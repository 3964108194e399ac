"""nats-server configuration files mapped onto :class:`~fakejs.core.options.ServerOptions`.

:mod:`fakejs.conf` reads the format into a tree of positioned tokens; this
package walks that tree key by key, the way nats-server's option stage does:
every key it knows sets an option (with nats-server's checks and error texts,
reported against the value's ``FILE:LINE:COL``), every block fakejs does not
serve is refused or accepted as nats-server's behaviour requires, and the
errors are collected and reported together.  It may import
:mod:`fakejs.conf`, :mod:`fakejs.gocompat` and the core modules below the
broker (options, users, subjects, log).

Modules: ``leafnodes`` (the ``leafnodes {}`` settings fakejs serves), ``load`` (the entry points, the top-level switch and the checks at
start), ``server_keys`` (scalar keys: addresses, limits, timers, logging,
names), ``jetstream_keys`` (``jetstream`` and ``store_dir``),
``jetstream_limits`` (``jetstream { limits {} }``), ``authorization`` (the
``authorization`` block and ``no_auth_user``), ``callout`` (its
``auth_callout`` block), ``accounts`` (the
``accounts`` block), ``exports`` (an account's exports and imports),
``mappings`` (``mappings`` blocks), ``message_trace`` (an account's
``msg_trace``), ``resolver_directory`` (``resolver { type: full | cache }``),
``operator`` (operator mode's ``operator``, ``resolver``
and ``resolver_preload``), ``cluster`` (the ``cluster`` block), ``tls`` (``tls``
blocks), ``websocket`` (the ``websocket`` block), ``listeners`` (blocks of
features not served), ``values`` (Go's type assertions, ``listen`` and
durations) and ``context`` (what the walk reports).
"""

from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.load import (
    ConfigFileError,
    Loaded,
    base_options,
    load_file,
    load_text,
    options_from_config,
    start_problem,
)

__all__ = [
    "ConfigContext",
    "ConfigFileError",
    "Loaded",
    "base_options",
    "load_file",
    "load_text",
    "options_from_config",
    "start_problem",
]
