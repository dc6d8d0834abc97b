"""What the few-shot screens share (``auto_screen.py``, ``regime_screen.py``): the protocol's generic options, the
label of an option, and their records (``<name>.<key>.json`` per family / seed, rendered into ``<name>.md``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from pipeweave.evaluation import FEW_SHOT_OPTIONS

HERE = Path(__file__).resolve().parent
#: the protocol's options over the generic regime coordinates, as the screens were run (since session 33 the
#: protocol also offers ``"regime": "family"`` copies of its GP options for fused MoE)
GENERIC_OPTIONS: tuple[dict, ...] = tuple(o for o in FEW_SHOT_OPTIONS if o.get("regime", "generic") == "generic")


def label(opt: dict, regime: str = "generic") -> str:
    """Short text of a few-shot option, e.g. ``refit 10 + gp 4 / 0.3 / 0 [moe_shape]``."""
    if opt.get("method") == "gp":
        text = f"gp {opt['length_scale']:g} / {opt['noise']:g} / {opt['linear']:g}"
    else:
        text = str(opt.get("method"))
    refit = f"refit {opt['refit_weight']:g} + " if opt.get("refit_weight") else ""
    return refit + text + ("" if regime == "generic" else f" [{regime}]")


def screen_arguments(description: str, *, seed: bool = False) -> argparse.ArgumentParser:
    """The arguments every screen takes: ``--families``, ``--cache-dir``, ``--out`` (and ``--seed`` with ``seed``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--families", nargs="+", required=True)
    ap.add_argument("--cache-dir", default=None, help="zero-shot prediction cache (as evaluate --cache-dir)")
    ap.add_argument("--out", required=True, help="folder for the protocol's own report of this run (not committed)")
    if seed:
        ap.add_argument("--seed", type=int, default=0, help="the protocol's seed (shot plans, model seeds)")
    return ap


def run_screen(args: argparse.Namespace, options: tuple[dict, ...]) -> tuple[dict, dict, float]:
    """Run the few-shot protocol with ``options`` on the screen's ``args`` (families, out, cache dir, seed when the
    screen takes one): ``(report, the committed report as it stood before the run, start time)``."""
    import time

    from pipeweave.evaluation import run_few_shot

    committed = json.loads((HERE / "results.json").read_text())
    t0 = time.perf_counter()
    report = run_few_shot(
        families=args.families,
        out=args.out,
        cache_dir=args.cache_dir,
        options=options,
        seed=getattr(args, "seed", 0),
        plots=False,
    )
    return report, committed, t0


def held_out_cells(row: dict) -> str:
    """The last two cells of a screen's table row: the held-out MAPE and the committed report's (blank: none)."""
    old = row["held_out_committed"]
    return f"{row['held_out']:.1f} | " + ("" if old is None else f"{old:.1f}") + " |"


def cells(report: dict, committed: dict) -> Iterator[tuple[str, dict, np.ndarray, dict, dict]]:
    """Each (family, held-out generation, shot count > 0) of a few-shot report: ``(family, chosen option, inner MAPE
    per option, head, tail)``: a summary row is ``{**head, ...the screen's columns..., **tail}``, head holding
    ``generation`` and ``shots``, tail the held-out MAPE and the ``committed`` report's (``held_out``,
    ``held_out_committed``; None where it has no such cell)."""
    for fam, by_gen in report["chosen"].items():
        for gen, per_shots in by_gen.items():
            for s, opt in per_shots.items():
                if s == "0":
                    continue
                inner = np.asarray(report["inner"][fam][gen]["mape_per_option"][s], dtype=float)
                old = committed.get("results", {}).get(fam, {}).get(s, {}).get(gen, {}).get("mape")
                head = {"generation": gen, "shots": int(s)}
                tail = {
                    "held_out": round(float(report["results"][fam][s][gen]["mape"]), 1),
                    "held_out_committed": None if old is None else round(float(old), 1),
                }
                yield fam, opt, inner, head, tail


def write_records(name: str, rows_by_key: dict[str, list[dict]], command: str, elapsed_min: float) -> None:
    """``<name>.<key>.json`` for each key (a family, or family.seedN) of one run."""
    for key, rows in rows_by_key.items():
        rec = {"command": command, "elapsed_min": round(elapsed_min, 1), "rows": rows}
        (HERE / f"{name}.{key}.json").write_text(json.dumps(rec, indent=1) + "\n")


def render_records(name: str, render: Callable[[dict[str, list[dict]], dict[str, str]], str]) -> str:
    """Every ``<name>.*.json`` record rendered by ``render(rows by key, command by key)`` into ``<name>.md``."""
    summaries, commands = {}, {}
    for path in sorted(HERE.glob(f"{name}.*.json")):
        rec = json.loads(path.read_text())
        key = path.name[len(name) + 1 : -len(".json")]
        summaries[key], commands[key] = rec["rows"], rec["command"]
    text = render(summaries, commands)
    (HERE / f"{name}.md").write_text(text)
    return text
