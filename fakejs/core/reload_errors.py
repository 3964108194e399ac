"""A refused configuration reload: what the command line, the server and ``$SYS`` requests catch.

Kept apart from :mod:`fakejs.core.reload_options` (the comparison of two
configurations) so that a server that never reloads does not import that.
"""

from __future__ import annotations

# nats-server's error for a reload of a server started without a configuration file.
NO_CONFIG_FILE = "can only reload config when a file is provided using -c or --config"


class ReloadRefused(Exception):
    """A reload changes an option that cannot be reloaded; the old configuration stays."""
