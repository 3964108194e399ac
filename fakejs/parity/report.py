"""The parity report: JSON for tools, Markdown for review, HTML with a chart for people.

The headline is **divergences per 10,000 operations**: a seed stops at its
first divergence (after it the servers hold different state, and every
later reply would differ for the same reason), so a campaign counts the
operations that actually ran on both servers and the seeds that diverged.
``operations`` in the totals is exactly the sum of the per-seed counts, and
the group counts add up to the list of divergences; the test suite checks
both.  Every divergence is also run again on fresh servers, and the totals
say how many came back (``confirmed``): one that does not is timing, or
state an earlier seed left behind, rather than a difference in behaviour.

Everything is written to one directory: ``report.json``, ``report.md``,
``report.html`` (self-contained: inline CSS and SVG, no scripts) and
``repro/<group>.json``, one reproduction per group, which ``fakejs-parity
replay`` runs again.
"""

from __future__ import annotations

import datetime
import html
import json
import os
import subprocess
from typing import Any

from fakejs._version import __version__
from fakejs.parity.campaign import Outcome, feature_totals, group_key
from fakejs.parity.executor import FEATURES
from fakejs.parity.operations import generate
from fakejs.targets.real import find_nats_server

PER = 10_000


def rate(divergences: int, operations: int) -> float:
    """Divergences per 10,000 operations (0 when nothing ran)."""
    return round(divergences * PER / operations, 2) if operations else 0.0


def differences(fake: Any, real: Any, path: str = "", limit: int = 12) -> list[str]:
    """Where two replies differ, as ``path: fake X, real Y`` lines (at most ``limit``)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit or a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(dict.fromkeys([*a, *b])):
                step = f"{where}.{key}" if where else str(key)
                if key not in a:
                    out.append(f"{step}: only real has it ({_short(b[key])})")
                elif key not in b:
                    out.append(f"{step}: only fake has it ({_short(a[key])})")
                else:
                    walk(a[key], b[key], step)
                if len(out) >= limit:
                    return
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]")
        else:
            out.append(f"{where or '(reply)'}: fake {_short(a)}, real {_short(b)}")

    walk(fake, real, path)
    return out


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, sort_keys=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _server_version(binary: str | None) -> str:
    try:
        found = binary or find_nats_server()
        if not found:
            return "unknown"
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=10, check=False)
        return (out.stdout or out.stderr).strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---------------------------------------------------------------------------- the document


def build(outcome: Outcome) -> dict[str, Any]:
    """The report as data (what ``report.json`` holds)."""
    seeds = outcome.seeds
    divergent = [r for r in seeds if r["divergence"] is not None]
    operations = sum(r["operations"] for r in seeds)
    groups, divergences = _grouped(outcome, divergent)
    confirmed_total = sum(1 for r in divergent if outcome.confirmed.get(r["seed"]))
    return {
        "title": "fakejs parity report",
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "fakejs_version": __version__,
        "nats_server_version": _server_version(outcome.settings.binary),
        "engine": outcome.engine,
        "settings": outcome.settings_doc(),
        "elapsed_seconds": outcome.elapsed,
        "phases": outcome.phases,
        "totals": {
            "seeds": len(seeds),
            "operations": operations,
            "divergences": len(divergent),
            "confirmed": confirmed_total,
            "unconfirmed": sum(1 for r in divergent if outcome.confirmed.get(r["seed"]) is False),
            "reproductions": len(outcome.reproductions),
            "errors": sum(1 for r in seeds if "error" in r),
            "divergences_per_10k_operations": rate(len(divergent), operations),
            "confirmed_per_10k_operations": rate(confirmed_total, operations),
        },
        "features": _features(seeds, divergent),
        "groups": sorted(groups.values(), key=lambda g: (-g["count"], g["id"])),
        "divergences": divergences,
        "seeds": [
            {k: r[k] for k in ("seed", "generated", "operations", "seconds", "error") if k in r}
            | {"diverged": r["divergence"] is not None}
            for r in seeds
        ],
    }


def _features(seeds: list[dict[str, Any]], divergent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Operations and divergences per feature, in the executor's feature order."""
    by_feature = feature_totals(seeds)
    feature_divergences = {f: 0 for f in by_feature}
    for r in divergent:
        feature_divergences[r["divergence"]["feature"]] = feature_divergences.get(r["divergence"]["feature"], 0) + 1
    order = [f for f in FEATURES if f in by_feature] + sorted(set(by_feature) - set(FEATURES))
    return [
        {
            "feature": f,
            "operations": by_feature[f],
            "divergences": feature_divergences.get(f, 0),
            "divergences_per_10k_operations": rate(feature_divergences.get(f, 0), by_feature[f]),
        }
        for f in order
    ]


def _grouped(
    outcome: Outcome, divergent: list[dict[str, Any]]
) -> tuple[dict[tuple[str, str, str, str], dict[str, Any]], list[dict[str, Any]]]:
    """The divergence groups (by :func:`group_key`) and every divergence with its group and operations."""
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    divergences = []
    for r in divergent:
        div = r["divergence"]
        key = group_key(div)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _new_group(f"g{len(groups) + 1}", div)
        confirmed = outcome.confirmed.get(r["seed"])
        group["count"] += 1
        group["confirmed"] += bool(confirmed)
        group["seeds"].append(r["seed"])
        repro = outcome.reproductions.get(r["seed"])
        if repro is not None and group["reproduction"] is None:
            group["reproduction"] = repro
            group["reproduction_file"] = f"repro/{group['id']}.json"
        ops = _ops_for(r["seed"], outcome)
        entry = {
            "seed": r["seed"],
            "group": group["id"],
            "confirmed": confirmed,
            **div,
            "operations": ops[: div["index"] + 1],
        }
        entry["differences"] = differences(div["fake_reply"], div["real_reply"])
        if repro is not None:
            entry["reproduction"] = repro
        divergences.append(entry)
    return groups, divergences


def _new_group(group_id: str, div: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": group_id,
        "api": div["api"],
        "feature": div["feature"],
        "status_code": div["status_code"],
        "difference": div.get("difference") or "",
        "count": 0,
        "confirmed": 0,
        "seeds": [],
        "reproduction": None,
    }


def _ops_for(seed: int, outcome: Outcome) -> list[dict[str, Any]]:
    return generate(seed, outcome.settings.ops_per_seed)


# ---------------------------------------------------------------------------- writing


def write(report: dict[str, Any], out_dir: str) -> dict[str, str]:
    """Write every file of the report; returns their paths by kind."""
    os.makedirs(os.path.join(out_dir, "repro"), exist_ok=True)
    paths = {
        "json": os.path.join(out_dir, "report.json"),
        "markdown": os.path.join(out_dir, "report.md"),
        "html": os.path.join(out_dir, "report.html"),
    }
    with open(paths["json"], "w") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")
    with open(paths["markdown"], "w") as handle:
        handle.write(markdown(report))
    with open(paths["html"], "w") as handle:
        handle.write(html_page(report))
    for group in report["groups"]:
        if group.get("reproduction") is not None:
            path = os.path.join(out_dir, group["reproduction_file"])
            with open(path, "w") as handle:
                json.dump(group["reproduction"], handle, indent=2)
                handle.write("\n")
            paths[group["id"]] = path
    return paths


def headline(report: dict[str, Any]) -> str:
    t = report["totals"]
    return (
        f"{t['divergences_per_10k_operations']} divergences per 10,000 operations "
        f"({t['divergences']} divergent seeds in {t['operations']} operations over {t['seeds']} seeds; "
        f"{t['confirmed']} confirmed on fresh servers)"
    )


def _repro_lines(repro: dict[str, Any]) -> list[str]:
    lines = [
        f"Reproduction ({len(repro['operations'])} operations, diverges at operation {repro['index']}: "
        f"`{repro['subject']}`; {'reproduced on fresh servers' if repro.get('reproduced') else 'NOT reproduced on fresh servers'}):",
        "",
        "```json",
        *[json.dumps(op) for op in repro["operations"]],
        "```",
        "",
        "Differences (fake vs real):",
        "",
    ]
    lines += [f"- `{d}`" for d in differences(repro["fake_reply"], repro["real_reply"])]
    lines += ["", "<details><summary>both replies</summary>", "", "```json"]
    lines += [
        "fake: " + json.dumps(repro["fake_reply"]),
        "real: " + json.dumps(repro["real_reply"]),
        "```",
        "",
        "</details>",
        "",
    ]
    return lines


def markdown(report: dict[str, Any]) -> str:
    t = report["totals"]
    s = report["settings"]
    lines = [
        f"# {report['title']}",
        "",
        f"**{headline(report)}**",
        "",
        f"- fakejs {report['fakejs_version']} against {report['nats_server_version']}",
        f"- {t['seeds']} seeds (from {s['first_seed']}), {s['ops_per_seed']} operations per seed, on {report['engine']}, "
        f"{report['elapsed_seconds']} s",
        f"- generated {report['generated_at']}",
    ]
    if s.get("inject"):
        lines.append(f"- **injected divergence** (pipeline check): `{json.dumps(s['inject'])}`")
    if t["unconfirmed"]:
        lines.append(
            f"- {t['unconfirmed']} divergences did not come back on fresh servers (timing, or state left by an earlier seed)"
        )
    if t["errors"]:
        lines.append(f"- {t['errors']} seeds ended in an error (see report.json)")
    lines += [
        "",
        "## By feature",
        "",
        "| feature | operations | divergences | per 10,000 |",
        "| --- | ---: | ---: | ---: |",
    ]
    for f in report["features"]:
        lines.append(
            f"| {f['feature']} | {f['operations']} | {f['divergences']} | {f['divergences_per_10k_operations']} |"
        )
    lines += ["", "## Divergence groups", ""]
    if not report["groups"]:
        lines += ["No divergences.", ""]
    for g in report["groups"]:
        lines += [
            f"### {g['id']}: `{g['api']}` ({g['feature']}, status {g['status_code']}, differs at `{g['difference']}`): "
            f"{g['count']} seeds, {g['confirmed']} confirmed",
            "",
        ]
        lines += [f"Seeds: {', '.join(str(x) for x in g['seeds'][:30])}{' ...' if len(g['seeds']) > 30 else ''}", ""]
        if g.get("reproduction"):
            lines += [f"File: `{g['reproduction_file']}` (`fakejs-parity replay {g['reproduction_file']}`)", ""]
            lines += _repro_lines(g["reproduction"])
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- HTML


def _chart(features: list[dict[str, Any]]) -> str:
    """An inline SVG: operations per feature (grey) and divergences per 10,000 (red)."""
    if not features:
        return "<p>No operations.</p>"
    row, label_w, bar_w = 26, 120, 300
    height = row * len(features) + 30
    most_ops = max(f["operations"] for f in features) or 1
    most_rate = max(f["divergences_per_10k_operations"] for f in features) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + 2 * bar_w + 150}" height="{height}" role="img" '
        f'aria-label="operations and divergences per feature" font-family="sans-serif" font-size="12">',
        f'<text x="{label_w}" y="14" fill="#555">operations</text>',
        f'<text x="{label_w + bar_w + 40}" y="14" fill="#555">divergences per 10,000 operations</text>',
    ]
    for i, f in enumerate(features):
        y = 24 + i * row
        ops_w = max(1, int(bar_w * f["operations"] / most_ops))
        rate_w = int(bar_w * f["divergences_per_10k_operations"] / most_rate)
        name = html.escape(f["feature"])
        parts += [
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{name}</text>',
            f'<rect x="{label_w}" y="{y}" width="{ops_w}" height="18" fill="#9aa5b1"><title>{name}: {f["operations"]} operations</title></rect>',
            f'<text x="{label_w + ops_w + 4}" y="{y + 14}" fill="#333">{f["operations"]}</text>',
            f'<rect x="{label_w + bar_w + 40}" y="{y}" width="{rate_w}" height="18" fill="#d64545">'
            f"<title>{name}: {f['divergences']} divergences</title></rect>",
            f'<text x="{label_w + bar_w + 44 + rate_w}" y="{y + 14}" fill="#333">{f["divergences_per_10k_operations"]} ({f["divergences"]})</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts)


def _pre(value: Any) -> str:
    return f"<pre>{html.escape(value if isinstance(value, str) else json.dumps(value, indent=2))}</pre>"


def _html_group(g: dict[str, Any]) -> list[str]:
    """One divergence group: what it is, its seeds and its reproduction."""
    esc = html.escape
    body = [
        f"<h3>{esc(g['id'])}: <code>{esc(g['api'])}</code> ({esc(g['feature'])}, status {esc(str(g['status_code']))}, "
        f"differs at <code>{esc(g['difference'])}</code>): {g['count']} seeds, {g['confirmed']} confirmed</h3>",
        f"<p>Seeds: {esc(', '.join(str(x) for x in g['seeds'][:30]))}</p>",
    ]
    repro = g.get("reproduction")
    if repro:
        state = "reproduced on fresh servers" if repro.get("reproduced") else "NOT reproduced on fresh servers"
        body.append(
            f"<p>Reproduction <code>{esc(g['reproduction_file'])}</code>: {len(repro['operations'])} operations, "
            f"diverges at operation {repro['index']} (<code>{esc(repro['subject'])}</code>), {state}.</p>"
        )
        body.append(_pre("\n".join(json.dumps(op) for op in repro["operations"])))
        body.append(
            "<ul>"
            + "".join(f"<li><code>{esc(d)}</code></li>" for d in differences(repro["fake_reply"], repro["real_reply"]))
            + "</ul>"
        )
        body.append(f"<details><summary>fake reply</summary>{_pre(repro['fake_reply'])}</details>")
        body.append(f"<details><summary>real reply</summary>{_pre(repro['real_reply'])}</details>")
    return body


def html_page(report: dict[str, Any]) -> str:
    t = report["totals"]
    esc = html.escape
    body = [
        f"<h1>{esc(report['title'])}</h1>",
        f'<p class="headline">{esc(headline(report))}</p>',
        "<ul>",
        f"<li>fakejs {esc(report['fakejs_version'])} against {esc(report['nats_server_version'])}</li>",
        f"<li>{t['seeds']} seeds, {report['settings']['ops_per_seed']} operations per seed, on {esc(report['engine'])}, "
        f"{report['elapsed_seconds']} s</li>",
        f"<li>generated {esc(report['generated_at'])}</li>",
    ]
    if report["settings"].get("inject"):
        body.append(
            f"<li><strong>injected divergence</strong> (pipeline check): <code>{esc(json.dumps(report['settings']['inject']))}</code></li>"
        )
    body += ["</ul>", "<h2>By feature</h2>", _chart(report["features"])]
    body += ["<table><tr><th>feature</th><th>operations</th><th>divergences</th><th>per 10,000</th></tr>"]
    for f in report["features"]:
        body.append(
            f"<tr><td>{esc(f['feature'])}</td><td>{f['operations']}</td><td>{f['divergences']}</td>"
            f"<td>{f['divergences_per_10k_operations']}</td></tr>"
        )
    body += ["</table>", "<h2>Divergence groups</h2>"]
    if not report["groups"]:
        body.append("<p>No divergences.</p>")
    for g in report["groups"]:
        body += _html_group(g)
    style = (
        "body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}"
        ".headline{font-size:1.4em;font-weight:bold}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}td:first-child,th:first-child{text-align:left}"
        "pre{background:#f5f5f5;padding:.6em;overflow-x:auto;font-size:.85em}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(report['title'])}</title><style>{style}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
