"""Divergences made reproducible: confirmed on fresh servers, shrunk, replayed.

:func:`check` turns the first divergence of a sequence into a reproduction
-- ``{seed, operations, index, subject, fake_reply, real_reply, feature,
status_code}`` -- after confirming it on brand-new servers and shrinking it
(:mod:`fakejs.parity.shrink`); :func:`replay` runs a reproduction again.
"""

from __future__ import annotations

import time
from typing import Any

from fakejs.parity.executor import run_fresh, signature
from fakejs.parity.operations import Operation
from fakejs.parity.shrink import shrink_sequence


def reproduction(
    seed: int | None, ops: list[Operation], found: dict[str, Any], inject: dict[str, Any] | None
) -> dict[str, Any]:
    """A self-contained reproduction: the operations up to the divergence, and what each server said."""
    index = found["index"]
    doc = {"seed": seed, "operations": ops[: index + 1], **found}
    doc["inject"] = inject
    return doc


async def check(
    seed: int | None,
    ops: list[Operation],
    *,
    found: dict[str, Any] | None = None,
    inject: dict[str, Any] | None = None,
    binary: str | None = None,
    shrink: bool = True,
    budget: int = 250,
) -> dict[str, Any] | None:
    """The first divergence of ``ops``, confirmed on fresh servers and (optionally) shrunk.

    ``found`` is a divergence already seen on reused servers.  If fresh
    servers do not show it, the reproduction says ``"reproduced": false``
    (it depended on an earlier sequence, or on timing) and is not shrunk.
    Returns ``None`` when fresh servers agree and nothing was ``found``.
    """
    started = time.monotonic()
    fresh = await run_fresh(ops, inject, binary)
    if fresh.divergence is None or (found is not None and signature(fresh.divergence) != signature(found)):
        if found is None:
            return None
        doc = reproduction(seed, ops, found, inject)
        doc.update({"reproduced": False, "original_length": found["index"] + 1})
        return doc
    first = fresh.divergence
    original_length = first["index"] + 1
    runs = 1
    if shrink:
        ops, first, runs = await shrink_sequence(ops[:original_length], first, inject, binary, budget)
    doc = reproduction(seed, ops, first, inject)
    doc.update(
        {
            "reproduced": True,
            "original_length": original_length,
            "shrink_runs": runs,
            "seconds": round(time.monotonic() - started, 3),
        }
    )
    return doc


async def replay(doc: dict[str, Any], binary: str | None = None, attempts: int = 1) -> dict[str, Any]:
    """Run a reproduction again on fresh servers; says whether (and how often) it still diverges."""
    ops = doc["operations"]
    results = []
    for _ in range(max(1, attempts)):
        result = await run_fresh(ops, doc.get("inject"), binary)
        results.append(result.divergence)
    diverged = [r for r in results if r is not None]
    same = [r for r in diverged if "api" not in doc or signature(r) == signature(doc)]
    return {
        "still_diverges": bool(diverged),
        "same_divergence": len(same) == len(results),
        "attempts": len(results),
        "diverged": len(diverged),
        "divergence": diverged[0] if diverged else None,
    }
