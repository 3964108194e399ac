"""Shrinking a divergent sequence to a short reproduction (delta debugging).

A random sequence that diverges at operation 23 usually needs two or three
of those operations to diverge.  :func:`ddmin` (Zeller's delta debugging)
drops chunks of operations -- halves, then quarters, down to single
operations -- keeping any smaller sequence that still shows the *same*
divergence (same operation, API subject and status codes, see
:func:`fakejs.parity.executor.signature`; a different divergence found along
the way would be a different bug).  :func:`simplify` then drops optional
keys from configs, bodies and headers one at a time.

Every candidate runs on brand-new servers, so what is kept is a sequence
that diverges on its own.  The number of runs is bounded by ``budget``.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from fakejs.parity.executor import run_fresh, signature
from fakejs.parity.operations import Operation

# Keys a simplified operation must keep (without them it is a different request).
REQUIRED = frozenset({"name", "durable_name", "stream_name", "subjects", "config", "KV-Operation", "Nats-Trace-Dest"})

Test = Callable[[list[Operation]], Awaitable[dict[str, Any] | None]]


async def ddmin(ops: list[Operation], test: Test, budget: int) -> tuple[list[Operation], int]:
    """The smallest sequence found (1-minimal if the budget allows) for which ``test`` still diverges.

    ``test`` returns the divergence (its ``index`` may be earlier than the
    end: everything after it is dropped at once) or ``None``.
    """
    runs = 0
    n = 2
    while len(ops) >= 2 and runs < budget:
        size = -(-len(ops) // n)  # ceiling
        chunks = [(start, min(start + size, len(ops))) for start in range(0, len(ops), size)]
        reduced = False
        for start, end in chunks:
            candidate = ops[:start] + ops[end:]
            if not candidate:
                continue
            runs += 1
            found = await test(candidate)
            if found is not None:
                ops = candidate[: found["index"] + 1]
                n = max(n - 1, 2)
                reduced = True
                break
            if runs >= budget:
                break
        if not reduced:
            if n >= len(ops):
                break
            n = min(n * 2, len(ops))
    return ops, runs


def _variants(op: Operation) -> list[Operation]:
    """``op`` with one optional key dropped, for every such key (body, config and headers)."""
    out: list[Operation] = []
    for path in (("body",), ("body", "config"), ("headers",), ("extra",)):
        container: Any = op
        for key in path:
            container = container.get(key) if isinstance(container, dict) else None
        if not isinstance(container, dict):
            continue
        for key in list(container):
            if key in REQUIRED:
                continue
            variant = copy.deepcopy(op)
            target = variant
            for step in path:
                target = target[step]
            del target[key]
            if path == ("headers",) and not target:
                variant["headers"] = None
            out.append(variant)
    if op.get("payload"):
        out.append({**op, "payload": op["payload"][:1] if len(op["payload"]) > 1 else ""})
    return out


async def simplify(ops: list[Operation], test: Test, budget: int) -> tuple[list[Operation], int]:
    """Drop optional keys while the divergence persists (one key at a time, until nothing more goes)."""
    runs = 0
    changed = True
    while changed and runs < budget:
        changed = False
        for index in range(len(ops)):
            for variant in _variants(ops[index]):
                if runs >= budget:
                    return ops, runs
                candidate = ops[:index] + [variant] + ops[index + 1 :]
                runs += 1
                found = await test(candidate)
                if found is not None:
                    ops = candidate[: found["index"] + 1]
                    changed = True
                    break
            if changed:
                break
    return ops, runs


async def shrink_sequence(
    ops: list[Operation], first: dict[str, Any], inject: dict[str, Any] | None, binary: str | None, budget: int
) -> tuple[list[Operation], dict[str, Any], int]:
    """Shrink ``ops`` (which diverge as ``first`` on fresh servers); returns the ops, their divergence, the runs made."""
    wanted = signature(first)
    last: dict[str, Any] = {"found": first}

    async def test(candidate: list[Operation]) -> dict[str, Any] | None:
        result = await run_fresh(candidate, inject, binary)
        found = result.divergence
        if found is None or signature(found) != wanted:
            return None
        last["found"] = found
        return found

    ops, runs = await ddmin(ops, test, budget)
    more = 0
    if runs < budget:
        ops, more = await simplify(ops, test, budget - runs)
    # The divergence of the final sequence itself (the last successful test may have been a larger one).
    final = await run_fresh(ops, inject, binary)
    if final.divergence is not None and signature(final.divergence) == wanted:
        last["found"] = final.divergence
    return ops, last["found"], runs + more + 1
