"""A consumer and the parts it is composed of.

The waiting-pull queue, the ack tracker, push flow control, lifecycle and
inactivity, and priority groups each own their state and offer a small
interface that :class:`~fakejs.jetstream.consumer.consumer.Consumer` calls.
Sits on :mod:`fakejs.jetstream.stream`, :mod:`fakejs.jetstream.storage` and
:mod:`fakejs.jetstream.config`.
"""
