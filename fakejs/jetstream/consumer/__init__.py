"""A consumer and the parts it is composed of.

:class:`~fakejs.jetstream.consumer.consumer.Consumer` is the one object
streams, the JetStream service, the API and monitoring talk to.  It composes
parts that each own their state and offer a small interface:

* ``position`` -- where delivery stands: next sequences, what is still to deliver;
* ``ack_tracker`` -- pending acks, redeliveries, ack floors, the ack-wait timer;
* ``redelivery_queue`` -- the deliveries waiting to be sent again;
* ``ack_messages`` -- what clients send on the ack subject (ack, nak, term...);
* ``waiting_acks`` -- plain acks held until the end of the client read that brought them;
* ``pull_requests`` -- what a pull asks for, and the queue pulls wait in;
* ``pull_dispatch`` -- admitting pulls, handing deliveries to them, expiry;
* ``priority_groups`` -- pins and overflow thresholds (ADR-42);
* ``push_flow`` -- push flow control and idle heartbeats;
* ``pacing`` -- replay in original time, rate limits, held deliveries;
* ``lifecycle`` -- deletion after inactivity, pauses;
* ``delivery`` -- the delivery loop that works the parts above;
* ``registry`` -- a stream's consumers read back as consumers (:func:`~fakejs.jetstream.consumer.registry.consumers_of`);
* ``entries`` -- a consumer's changes as its group's replicated entries;
* ``replica`` -- the state machine a consumer group applies them to, its snapshot;
* ``replicated`` -- a replicated consumer's leader: it delivers and proposes, and takes over from the state;
* ``retention`` -- a replicated work-queue or interest stream removing what replicated acks released.

The parts never import ``consumer`` (``replicated`` runs one, as ``registry``
reads them back): they see it through the
:class:`~fakejs.jetstream.consumer.view.ConsumerView` protocol (``view``) and callbacks
given to their constructors.  The package sits on
:mod:`fakejs.jetstream.stream`, :mod:`fakejs.jetstream.storage`,
:mod:`fakejs.jetstream.config`, :mod:`fakejs.jetstream.replication` (its groups)
and the modules below them.
"""
