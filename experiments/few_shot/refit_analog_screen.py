"""Screen: the analog-GPU term after a refit (``refit_weight`` and ``analog_penalty`` together).

Two ways to use a new GPU's shots lead the few-shot protocol (``analog_screen.md``): **refit** (the model retrained
with the shots as weighted training rows, then the residual GP) wins on bf16 GEMM and decode attention, and the
**analog term** (the residuals first regressed on ``z_g(x) = log(f(x on g) / f(x on the new GPU))`` for each trained
GPU ``g``, :mod:`pipeweave.calibrate._analog`) wins on fused MoE. They read different things: the refit moves the
model towards the shots, the analog term asks which mixture of the trained GPUs' behaviour the new GPU follows.
Session 44 made them combinable in the protocol: with both, the analog coordinates are the *refitted* model's
(``_BaseModels.refit_analog_rows``: one more prediction of the case's rows per analog GPU and refit).

This runs the few-shot protocol (:func:`pipeweave.evaluation.run_few_shot`) with all of its options, the analog-only
ones offered to the screened family, plus :data:`REFIT_ANALOG_OPTIONS` (refit weight 10 / 30, then the analog term
at penalty 1 / 10 and the GP at length scale 2 / 4, noise 0.3: the settings the refit and analog options were chosen
at). Inner = mean MAPE (%) over the inner folds (each training generation playing the new GPU), the best option of
each kind: what the protocol chooses on. Held-out = the protocol's MAPE on the held-out generation with the option
it chose, beside the committed report; reported, not used.

Decision rule (written before the first run, session 44): for each family screened (bf16 GEMM, decode attention),
at plan seed 0, the refit + analog options pass if the best of them is below the best other option (every other
option the run offers, analog-only ones included) in at least 7 of the 8 inner cells at 32 and 128 shots, by more
than 0.2 points on average at 32 shots (the 8-shot cells are reported, not counted). A family that passes at seed 0
is run again at plan seed 1 under the same rule; only a family that passes both gets the refit + analog options in
the protocol (``pipeweave calibrate fit`` does not refit and is not concerned).

Seed 0 (session 44): both fail. bf16 GEMM: 2 of 8 cells at 32 and 128 shots, -0.40 points at 32 (11.2 minutes);
decode attention: 3 of 8, -0.04 points at 32 (17.9 minutes). The refitted model's analog coordinates add nothing the
refit has not already learned from the shots: the best refit + analog option sits within 0.1 points of the best
refit option in most cells, and above it at 8 shots. Not adopted; seed 1 is not run. The protocol keeps the
combination possible (``_BaseModels.refit_analog_rows``), so this screen stays reproducible; a user gets it as
``pipeweave train --profiles ... --profiles-weight W`` then ``calibrate fit --analog-penalty 1`` on that model.

Usage: ``python experiments/few_shot/refit_analog_screen.py --families gemm_bf16 --cache-dir /tmp/fs --out /tmp/ra``.
"""

from __future__ import annotations

from screens import kind_counts, kind_report, run_kind_screen

from pipeweave.evaluation import FEW_SHOT_OPTIONS

#: the refit weights the protocol offers (10 and 30)
REFIT_WEIGHTS: tuple[float, ...] = tuple(sorted({o["refit_weight"] for o in FEW_SHOT_OPTIONS if o.get("refit_weight")}))

#: the options screened: a refit, then the analog term and the residual GP
REFIT_ANALOG_OPTIONS: tuple[dict, ...] = tuple(
    {"refit_weight": w, "method": "gp", "length_scale": ls, "noise": 0.3, "linear": 0.0, "analog_penalty": lam}
    for w in REFIT_WEIGHTS
    for lam in (1.0, 10.0)
    for ls in (2.0, 4.0)
)


def _is_refit_analog(opt: dict) -> bool:
    return bool(opt.get("refit_weight") and opt.get("analog_penalty"))


def _verdict(rows: list[dict]) -> str:
    below, n_late, _ = kind_counts(rows, "inner_refit_analog", (32, 128))
    margin = kind_counts(rows, "inner_refit_analog", (32,))[2]
    verdict = "passes" if below >= 7 and margin > 0.2 else "fails"
    return (
        f"Best refit + analog option below the best other one in {below} of {n_late} inner cells at 32 and 128 "
        f"shots; at 32 shots by {margin:.2f} points on average: the rule {verdict}."
    )


def render(summaries: dict[str, list[dict]], commands: dict[str, str]) -> str:
    """The markdown of every record: a verdict line per family and seed, and the per-cell table."""
    title = "Few-shot: the analog-GPU term after a refit"
    return kind_report(title, __doc__, summaries, commands, "inner_refit_analog", "refit + analog", _verdict)


def main() -> None:
    options = (*FEW_SHOT_OPTIONS, *REFIT_ANALOG_OPTIONS)  # the analog-only ones offered to the screened families too
    run_kind_screen("refit_analog_screen", __doc__, options, _is_refit_analog, "inner_refit_analog", render)


if __name__ == "__main__":
    main()
