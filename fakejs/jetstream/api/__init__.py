"""The ``$JS.API`` surface: one route table from subject patterns to handlers.

A handler decodes the request, calls the domain (:mod:`fakejs.jetstream.service`,
streams, consumers) and encodes the reply; rules about streams and
consumers live in the domain, never here.  The top of the JetStream layer:
nothing in :mod:`fakejs.jetstream` imports it.
"""
