"""Check on the shared data that refreshing one family's error bands gives the full run's bands to the bit.

    pipeweave train --out /tmp/refreshed.ubj --error-bands-for gemm_fp32 \
        --error-bands-from models/pipeweave_default.ubj --no-progress > /tmp/refresh.log
    python experiments/error_bands/refresh_check.py --refreshed /tmp/refreshed.ubj --log /tmp/refresh.log

Compares the bands in the refreshed file's stamp with the shipped model's (whose bands come from a full
``--error-bands`` run, ``experiments/train_default.log``), band by band, and writes ``refresh_check.md``
(the comparison, and the timing lines of the log). Writing into the committed folder needs ``--force``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pipeweave.model import BAND_SITUATIONS, read_stamp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def compare(full: dict, refreshed: dict) -> list[str]:
    """Markdown rows: per situation and band key, whether the refreshed band equals the full run's exactly."""
    carried = set(refreshed.get("carried", {}).get("families", ()))
    rows = ["| situation | band key | how it got there | equal to the full run's |", "|---|---|---|---|"]
    for s in BAND_SITUATIONS:
        keys = sorted(set(full.get(s, {}).get("bands", {})) | set(refreshed.get(s, {}).get("bands", {})))
        for key in keys:
            a, b = full[s]["bands"].get(key), refreshed[s]["bands"].get(key)
            how = "carried over" if key.split(":")[0] in carried else "re-estimated"
            rows.append(f"| {s} | {key} | {how} | {'yes' if a == b else 'NO'} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refreshed", required=True, help="the model file written with --error-bands-for")
    ap.add_argument("--full", default=str(ROOT / "models/pipeweave_default.ubj"), help="a full --error-bands model")
    ap.add_argument("--log", required=True, help="the refresh run's output (timing lines are quoted)")
    ap.add_argument("--out", default=str(HERE / "refresh_check.md"))
    ap.add_argument("--force", action="store_true", help="overwrite the committed refresh_check.md")
    args = ap.parse_args()
    out = Path(args.out)
    if out.resolve() == (HERE / "refresh_check.md").resolve() and out.exists() and not args.force:
        raise SystemExit(f"refusing to overwrite the committed {out}; pass --force or --out /tmp/refresh_check.md")
    full, new = read_stamp(args.full), read_stamp(args.refreshed)
    rows = compare(full["error_bands"], new["error_bands"])
    timing = [ln.strip() for ln in Path(args.log).read_text().splitlines() if re.search(r" in [0-9.]+s|Elapsed", ln)]
    fresh = sum("re-estimated" in r for r in rows)
    equal = sum(r.endswith("| yes |") for r in rows)
    text = [
        "# Refreshing one family's error bands: equal to the full run's",
        "",
        f"Written by `python experiments/error_bands/refresh_check.py` (see its docstring). Refreshed file made by "
        f"`{new.get('command', '?')}`; full run: `{full.get('command', '?')}`.",
        "",
        f"{equal} of {len(rows) - 2} bands equal the full run's exactly ({fresh} re-estimated, the rest carried "
        f"over from `{new['error_bands'].get('carried', {}).get('source', '?')}`).",
        "",
        "Timing of the refresh run (2 cores, no other long job running):",
        "",
        *[f"    {t}" for t in timing],
        "",
        *rows,
        "",
    ]
    out.write_text("\n".join(text))
    print(f"wrote {out}: {equal} of {len(rows) - 2} bands equal")


if __name__ == "__main__":
    main()
