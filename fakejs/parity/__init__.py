"""Differential parity testing: random JetStream operation sequences on fakejs and nats-server.

* :mod:`fakejs.parity.operations` -- operations as plain data, generated from a
  seed or drawn by hypothesis, from the value sets in :mod:`fakejs.parity.vocabulary`;
* :mod:`fakejs.parity.normalize` -- what is replaced before replies are compared;
* :mod:`fakejs.parity.executor` -- runs a sequence on both servers, finds the
  first divergence, confirms it, replays reproductions;
* :mod:`fakejs.parity.shrink` -- delta debugging down to a short reproduction;
* :mod:`fakejs.parity.campaign` -- many seeds at once, on Spark or locally,
  and the parity report (:mod:`fakejs.parity.report`);
* :mod:`fakejs.parity.cli` -- the ``fakejs-parity`` command.
"""
