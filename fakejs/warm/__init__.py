"""Warm starts: each ``fakejs`` a harness runs, served by a fork of a process that has fakejs imported.

``launch`` (the ``fakejs`` command's front door: the forkserver asked for a
server, or the server started in the launcher's own process),
``forkserver`` (the warm process: fakejs imported once, a server forked per
request) and ``wire`` (where the two meet and what they say).  ``launch``
and ``wire`` import only the standard library's cheapest modules, as every
command pays for them; ``forkserver`` may import :mod:`fakejs.cli` and
what it imports.  Only ``fakejs.__main__`` and the ``fakejs`` script
import this package.
"""
