"""The end of the command-line process: exit handlers and output flushed, then ``os._exit``.

Once the server has stopped, it has said "Server Exiting..", closed every
client and listener, removed its ports file and closed its file store (each
record is written with ``os.write`` before its ack, so nothing of it is
buffered in the process).  An ordinary exit would then run the exit handlers
(logging's flushes and closes the log file), flush stdout and stderr, and
collect and free every module's objects.  That last part is the
interpreter's teardown of its whole heap: tens of milliseconds between
SIGTERM and the exit, where nats-server takes a few.  :func:`end_process`
does the first two and ends the process.  Only the command-line process ends
this way; a server run inside another program (``fakejs.Server``, the pytest
plugin) never comes here, and a process under a profiler or a tracer ends
the ordinary way, for it to write what it measured.
"""

from __future__ import annotations

import atexit
import os
import sys


def end_process(status: int) -> None:
    """Run the exit handlers, flush stdout and stderr, and end the process with ``status``.

    Returns, leaving the ordinary exit to the caller, when a profiler or a
    tracer watches the process (``python -m cProfile``, ``python -m trace``):
    it writes what it measured once the program returns.
    """
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    atexit._run_exitfuncs()  # what an ordinary exit runs: logging's shutdown, any finalizers
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can reach it
            pass
    os._exit(status)
