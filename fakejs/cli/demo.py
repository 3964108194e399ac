"""``--demo_credentials DIR``: serve operator (JWT) mode with credentials made for the run, for ``docker run`` and CI.

The directory gets the server's configuration (``server.conf``: an
operator, its system account and an account ``APP`` with JetStream,
preloaded in a MEMORY resolver), the account's user's ``user.creds`` and the
operator JWT, unless it holds them already (a restart serves the same
credentials); the server reads the configuration as ``-c`` would, and the
paths are logged at start.  fakejs's own flag: nats-server has none like it.
"""

from __future__ import annotations

import logging
import os

from fakejs.testkit.jwt.demo import DemoFiles, demo_files


class DemoError(Exception):
    """The directory cannot hold the credentials; ``str()`` says why."""


def make_demo_credentials(directory: str) -> tuple[DemoFiles, bool]:
    """The credentials in ``directory`` (written now unless there), and whether they were written."""
    try:
        return demo_files(directory)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise DemoError(f"--demo_credentials {directory}: {reason}") from None


def log_demo_credentials(files: DemoFiles, written: bool, log: logging.Logger) -> None:
    """The start lines saying where the credentials are."""
    made = "made for this run" if written else "found"
    log.info("Operator mode with credentials %s (--demo_credentials) in %s", made, files.config_file.parent)
    log.info("  user credentials:    %s", files.creds_file)
    log.info("  configuration:       %s", files.config_file)
    log.info("  operator JWT:        %s", files.operator_file)
