"""The error a configuration file can fail with, and how nats-server reports it.

nats-server 2.15.1 prints every configuration error on **stderr** as one line,
``nats-server: <message>``, and exits with status **1** -- both when starting
(``-c FILE``) and when only testing the file (``-t -c FILE``).  For the
parse stage ``<message>`` carries no file name except in two cases (``config
is invalid (FILE:LINE:COL)`` and the ``open FILE: ...`` of a missing file);
lexer errors name only the line::

    nats-server: Parse error on line 2: 'Unexpected EOF.'
    nats-server: variable reference for 'X' on line 1 can not be found
    nats-server: error parsing include file 'a.conf', open a.conf: no such file or directory

The later option stage (not this package) reports against a value's
position, ``FILE:LINE:COL: reason``, followed by an empty line.  A file that
passes ``-t`` prints, also on stderr and with status 0,
``nats-server: configuration file FILE is valid (sha256:<digest>)``; see
:func:`fakejs.conf.values.digest`.
"""

from __future__ import annotations

#: How nats-server names itself at the start of every fatal configuration line.
PROGRAM = "nats-server"
#: The exit status of a server (or ``-t``) that meets a configuration error.
EXIT_STATUS = 1
#: The whole stderr line for a configuration error: ``STDERR_FORMAT.format(message=str(error))``.
STDERR_FORMAT = PROGRAM + ": {message}"
#: What ``-t`` prints (on stderr, status 0) for a file that passes.
VALID_FORMAT = PROGRAM + ": configuration file {path} is valid ({digest})"


class ConfigError(Exception):
    """A configuration file nats-server would refuse; ``str()`` is nats-server's message for it.

    ``line`` (and ``pos``, nats-server's column) are set when the error has a
    place in the file; they are for callers, the message already says what
    nats-server says.
    """

    def __init__(self, message: str, line: int | None = None, pos: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.pos = pos

    def __str__(self) -> str:
        return self.message

    def stderr_line(self) -> str:
        """The line nats-server writes to stderr before exiting with :data:`EXIT_STATUS`."""
        return STDERR_FORMAT.format(message=self.message)
