"""Go compatibility: what nats-server's Go runtime does that Python does not, written once.

Go's JSON (decoder errors with offsets, unknown-field and case-folding rules,
encoder escapes), Go durations and RFC 3339 times, number parsing, NUIDs and
the other identifiers nats-server generates, and shared constants such as
nanoseconds per second.  This is the bottom layer: it imports nothing from
fakejs, only the standard library.

Modules: ``gojson`` (JSON read and written as ``encoding/json`` does),
``jsonscan`` (Go's JSON reader, iteratively), ``jsonvalue`` (the values it
produces), ``gostruct`` (a JSON value decoded into a table of struct
fields), ``jsonwindow`` (how much of a body Go's streaming decoder holds
when it reports an error), ``gotime`` (times and durations), ``gobytes``
(``friendlyBytes``), ``goflag`` (Go's ``flag`` package), ``goquote``
(``strconv`` quoting), ``gourl`` (``net/url.Parse``,
``net.SplitHostPort`` and ``net.Listen``'s errors), ``ids`` (NUIDs and the other ids, from a seeded
generator) and ``curvekeys`` (nkeys' text form of keys, and the server's
curve key for INFO's ``xkey``).
"""
