"""Stream and consumer configurations: nats-server's defaults, validation and update rules.

Pure functions over configuration values; imports only :mod:`fakejs.jetstream.errors`,
:mod:`fakejs.core.subjects` and :mod:`fakejs.gocompat`.
"""
