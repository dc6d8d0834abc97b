"""What the few-shot screens share (``auto_screen.py``, ``regime_screen.py``, ``analog_screen.py``,
``refit_analog_screen.py`` ...): the protocol's generic options, the label of an option, their records
(``<name>.<key>.json`` per family / seed, rendered into ``<name>.md``), and for a screen that pits some options
against the rest (:func:`run_kind_screen`) the best of each kind per cell and its table."""

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


def option_label(opt: dict) -> str:
    """:func:`label` with the option's regime and, for an option with the analog term, its penalty in front
    (``analog 1 + refit 10 + gp 2 / 0.3 / 0``); ``median level, `` first for a median-level option."""
    text = label(opt, str(opt.get("regime", "generic")))
    text = (f"analog {opt['analog_penalty']:g} + " + text) if opt.get("analog_penalty") else text
    return ("median level, " + text) if opt.get("level") == "median" else text


def offer_analog_options(families: list[str]) -> None:
    """Let the protocol offer the analog options (``analog_penalty``) to the evaluation ``families`` (this process
    only: :data:`pipeweave.calibrate.FAMILY_ANALOG_PENALTY` gets them at penalty 1 where absent)."""
    from pipeweave.calibrate import FAMILY_ANALOG_PENALTY
    from pipeweave.evaluation import EVAL_FAMILIES

    for label_ in families:
        FAMILY_ANALOG_PENALTY.setdefault(EVAL_FAMILIES[label_][0], 1.0)


def offered_options(options: list[dict], family_label: str) -> list[dict]:
    """The ``options`` the few-shot protocol offers the evaluation family ``family_label`` (as ``few_shot_fold``
    filters them: the family-coordinate copies only to a family with coordinates of its own, the analog options only
    to a family of ``FAMILY_ANALOG_PENALTY``, as it stands in this process), in order."""
    from pipeweave.calibrate import FAMILY_ANALOG_PENALTY, FAMILY_REGIME_FEATURES
    from pipeweave.evaluation import EVAL_FAMILIES

    family = EVAL_FAMILIES[family_label][0]
    out = list(options)
    if family not in FAMILY_REGIME_FEATURES:
        out = [o for o in out if o.get("regime", "generic") != "family"]
    if family not in FAMILY_ANALOG_PENALTY:
        out = [o for o in out if not o.get("analog_penalty")]
    return out


def best_by_kind(
    report: dict, committed: dict, is_candidate: Callable[[dict], bool], column: str
) -> dict[str, list[dict]]:
    """Per family, one row per (held-out generation, shots > 0): the best inner MAPE of the screened options
    (``is_candidate``; in ``column``, None where none was offered) and of the others (``inner_other``), the chosen
    option and the held-out MAPE beside the committed one."""
    out: dict[str, list[dict]] = {}
    for fam, opt, inner, head, tail in cells(report, committed):
        cand = np.array([is_candidate(o) for o in offered_options(report["options"], fam)])
        ok = np.isfinite(inner)
        row = {
            **head,
            "inner_other": round(float(inner[~cand & ok].min()), 2),
            column: round(float(inner[cand & ok].min()), 2) if (cand & ok).any() else None,
            "chosen": option_label(opt),
            **tail,
        }
        out.setdefault(fam, []).append(row)
    return out


def kind_counts(rows: list[dict], column: str, shots: tuple[int, ...] = (8, 32, 128)) -> tuple[int, int, float]:
    """(cells at ``shots`` where the screened options' best inner MAPE (``column``) is below the others', cells
    offered there, the mean margin in points there; NaN without cells) of one :func:`best_by_kind` record."""
    cells = [r for r in rows if r[column] is not None and r["shots"] in shots]
    below = sum(r[column] < r["inner_other"] for r in cells)
    margin = float(np.mean([r["inner_other"] - r[column] for r in cells])) if cells else float("nan")
    return below, len(cells), margin


def kind_table(rows: list[dict], column: str, heading: str) -> list[str]:
    """The markdown table of one :func:`best_by_kind` record (``heading``: the screened options' column title)."""
    lines = [
        f"| held-out | shots | inner best other | inner best {heading} | chosen | held-out | committed |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['generation']} | {r['shots']} | {r['inner_other']:.2f} | "
            + ("" if r[column] is None else f"{r[column]:.2f}")
            + f" | {r['chosen']} | "
            + held_out_cells(r)
        )
    return lines


def kind_report(
    title: str,
    doc: str,
    summaries: dict[str, list[dict]],
    commands: dict[str, str],
    column: str,
    heading: str,
    verdict: Callable[[list[dict]], str],
) -> str:
    """The markdown of a :func:`run_kind_screen` screen's records: ``# title``, the screen's ``doc`` (up to its
    usage), then per record a section with its command, the sentence ``verdict(rows)`` says of it and its
    :func:`kind_table`."""
    lines = [f"# {title}", "", doc.split("\n\nUsage:")[0], ""]
    for key, rows in summaries.items():
        lines += [
            f"## {key}",
            "",
            f"Command: `{commands[key]}`. {verdict(rows)}",
            "",
            *kind_table(rows, column, heading),
            "",
        ]
    return "\n".join(lines)


def run_kind_screen(
    name: str,
    doc: str,
    options: tuple[dict, ...],
    is_candidate: Callable[[dict], bool],
    column: str,
    render: Callable[[dict[str, list[dict]], dict[str, str]], str],
    *,
    offer_analog: bool = True,
) -> None:
    """The command line of a screen that pits some options against the rest (``experiments/few_shot/<name>.py``):
    parse its arguments (``doc``'s first line as the description), offer the analog options to its families (unless
    ``offer_analog`` is False: then only the families of ``FAMILY_ANALOG_PENALTY`` are offered them, as the protocol
    does), run
    the protocol with ``options``, write ``<name>.<family>.seed<N>.json`` (:func:`best_by_kind`) and render
    ``<name>.md``."""
    import time

    ap = screen_arguments(doc.split("\n")[0], seed=True)
    ap.add_argument(
        "--from-report",
        action="store_true",
        help="summarize the report an earlier run of this screen wrote to --out instead of running again",
    )
    args = ap.parse_args()
    if offer_analog:
        offer_analog_options(args.families)
    if args.from_report:
        report = json.loads((Path(args.out) / "results.json").read_text())
        committed = json.loads((HERE / "results.json").read_text())
        t0 = time.perf_counter() - float(report["extra"]["elapsed_s"])  # the run's own time
    else:
        report, committed, t0 = run_screen(args, options)
    cmd = f"python experiments/few_shot/{name}.py --families " + " ".join(args.families)
    cmd += f" --seed {args.seed}" if args.seed else ""
    rows = best_by_kind(report, committed, is_candidate, column)
    write_records(name, {f"{fam}.seed{args.seed}": r for fam, r in rows.items()}, cmd, (time.perf_counter() - t0) / 60)
    print(render_records(name, render))
