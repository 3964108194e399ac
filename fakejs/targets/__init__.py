"""The two servers a test can run against: fakejs on a thread, and a real nats-server process.

The pytest plugin, the parity campaign and this repository's own tests all
start servers through here; there is one real-server launcher.  May import
:mod:`fakejs.server` and everything below it.
"""
