"""A stream: publishing (dedup, expectations, rollups, TTLs), limits, retention, Direct Get.

Sits on :mod:`fakejs.jetstream.storage` and :mod:`fakejs.jetstream.config`;
it tells its consumers about new messages through a small interface and
never imports :mod:`fakejs.jetstream.consumer`.
"""
