"""``pipeweave data``: what the shared measurements hold, and what the loader dropped and why."""

from __future__ import annotations

import argparse
import warnings

COMMAND = "data"
HELP = "summarise the measurements in the data directory (rows per source, dataset, dtype, GPU; drops)"
DESCRIPTION = """\
Load every real measurement in the data directory (the sources in datasets/sources/*.toml) into
the canonical profile table and print the rows per source, dataset, family, dtype and GPU, then
the source rows that were dropped or merged, with the reason. The parsed table is cached under
$PIPEWEAVE_CACHE (default ~/.cache/pipeweave).

examples:
  pipeweave data
  pipeweave data --json
  pipeweave data --json drops
  pipeweave data --data /path/to/datasets --no-cache
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``data`` options."""
    parser.add_argument(
        "--data", metavar="DIR", help="data directory (default: $PIPEWEAVE_DATA, else ../shared/datasets)"
    )
    parser.add_argument(
        "--json",
        nargs="?",
        const="kept",
        choices=("kept", "drops", "messages"),
        metavar="{kept,drops,messages}",
        help='print JSON instead of the text report: kept (the default) = a list of {"source","dataset","family",'
        '"dtype","gpu","rows"}; drops = a list of {"source","dataset","family","reason","rows"} (rows removed, or '
        "merged into a median for a duplicate key); messages = a list of the loader's file-level notes",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the parsed-table cache")


def run(args: argparse.Namespace) -> int:
    """Load the profiles and print the report."""
    from ..sources import load_profiles_report

    with warnings.catch_warnings():  # the report prints every note itself
        warnings.simplefilter("ignore")
        _, rep = load_profiles_report(args.data, cache=not args.no_cache)
    if args.json:
        from ._common import print_json

        records = {"kept": rep.kept_records, "drops": rep.drop_records, "messages": lambda: list(rep.messages)}
        print_json(records[args.json](), indent=1)
    else:
        print(rep.to_text())
    return 0
