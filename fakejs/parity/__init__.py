"""Differential parity testing: random JetStream operation sequences on fakejs and nats-server.

* ``operations`` -- operations as plain data, generated from a seed, from
  the value sets in ``vocabulary`` (configurations and headers are drawn by
  ``configs``; ``batches`` builds atomic and fast-ingest batches, and
  ``families`` the wider families: prioritized pulls, TTL expiry, imports,
  tracing, advisories, reloads); ``strategies`` draws the same operations
  with hypothesis;
* ``normalize`` -- what is replaced before replies are compared, and
  ``events`` the same for advisories and trace events;
* ``executor`` -- runs a sequence on both servers and finds the first
  divergence; ``feeds`` waits for mirrors, sources and schedules, ``wide``
  carries out the wider families and ``accounts`` starts both servers with
  two accounts;
* ``shrink`` -- delta debugging down to a short reproduction;
  ``reproduce`` confirms, shrinks and replays divergences;
* ``campaign`` -- many seeds at once, on Spark or locally, and the parity
  report (``report``);
* ``cli`` -- the ``fakejs-parity`` command.

An entry point: may import every layer of fakejs (the real server is
started through :mod:`fakejs.targets`), but not the package face
(``fakejs/__init__.py``); nothing inside fakejs imports it.  pyspark and
hypothesis are optional: only :mod:`~fakejs.parity.campaign`'s Spark engine
and :mod:`~fakejs.parity.strategies` need them.
"""
