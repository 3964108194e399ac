"""Differential parity testing: random JetStream operation sequences on fakejs and nats-server.

* :mod:`fakejs.parity.operations` -- operations as plain data, generated from a
  seed, from the value sets in :mod:`fakejs.parity.vocabulary` (configurations
  and headers are drawn by :mod:`fakejs.parity.configs`);
  :mod:`fakejs.parity.strategies` draws the same operations with hypothesis;
* :mod:`fakejs.parity.normalize` -- what is replaced before replies are compared;
* :mod:`fakejs.parity.executor` -- runs a sequence on both servers and finds
  the first divergence;
* :mod:`fakejs.parity.shrink` -- delta debugging down to a short reproduction;
  :mod:`fakejs.parity.reproduce` confirms, shrinks and replays divergences;
* :mod:`fakejs.parity.campaign` -- many seeds at once, on Spark or locally,
  and the parity report (:mod:`fakejs.parity.report`);
* :mod:`fakejs.parity.cli` -- the ``fakejs-parity`` command.

An entry point: may import every layer of fakejs (the real server is
started through :mod:`fakejs.targets`), but not the package face
(``fakejs/__init__.py``); nothing inside fakejs imports it.  pyspark and
hypothesis are optional: only :mod:`~fakejs.parity.campaign`'s Spark engine
and :mod:`~fakejs.parity.strategies` need them.
"""
