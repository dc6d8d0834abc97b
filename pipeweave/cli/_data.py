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
  pipeweave data --data /path/to/datasets --no-cache
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``data`` options."""
    parser.add_argument(
        "--data", metavar="DIR", help="data directory (default: $PIPEWEAVE_DATA, else ../shared/datasets)"
    )
    parser.add_argument(
        "--json", action="store_true", help='print a JSON list of {"source","dataset","family","dtype","gpu","rows"}'
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

        print_json(rep.kept_records(), indent=1)
    else:
        print(rep.to_text())
    return 0
