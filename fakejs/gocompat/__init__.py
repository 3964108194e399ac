"""Go compatibility: what nats-server's Go runtime does that Python does not, written once.

Go's JSON (decoder errors with offsets, unknown-field and case-folding rules,
encoder escapes), Go durations and RFC 3339 times, number parsing, NUIDs and
the other identifiers nats-server generates, and shared constants such as
nanoseconds per second.  This is the bottom layer: it imports nothing from
fakejs, only the standard library.
"""
