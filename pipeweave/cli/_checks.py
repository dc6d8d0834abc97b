"""Checks of command-line values that fail fast, before any data is loaded or any model is trained.

Argument types for argparse (:func:`positive_int`, :func:`nonnegative_int`), the ``--params`` JSON
of ``train`` (:func:`parse_params`, against :data:`PARAM_DOMAINS`) and optuna storage URLs
(:func:`check_storage_url`). Each error names the bad value and the fix.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
from collections.abc import Callable
from typing import Any

from .._errors import DataError

__all__ = ["PARAM_DOMAINS", "check_storage_url", "nonnegative_int", "parse_params", "positive_int", "whole_number"]


def _int_type(low: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            v = int(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; expected {what}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{v} is not allowed; expected {what}")
        return v

    parse.__name__ = what.replace(" ", "_")
    return parse


#: argparse type: a whole number >= 1.
positive_int = _int_type(1, "a whole number >= 1")
#: argparse type: a whole number >= 0.
nonnegative_int = _int_type(0, "a whole number >= 0")


def whole_number(text: str) -> int:
    """argparse type of a shape flag: a whole number, written as a CSV cell may write it (4096, 4096.0, 4e3); its
    range is the family's domain, checked with the launch (the row checks name the bound)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid whole number: {text!r}") from None
    if not math.isfinite(v) or v != int(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (shape values count elements)")
    return int(v)


def _num(
    lo: float, hi: float, *, integer: bool = False, lo_open: bool = False, none_ok: bool = False
) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if v is None and none_ok:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not float(v).is_integer()):
            return f"{'a whole number' if integer else 'a number'} in {'(' if lo_open else '['}{lo}, {hi}]" + (
                " or null" if none_ok else ""
            )
        if not math.isfinite(v) or v < lo or (lo_open and v == lo) or v > hi:
            return f"in {'(' if lo_open else '['}{lo}, {hi}]"
        return None

    return check


def _kind(t: type, text: str, none_ok: bool = False) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        return None if isinstance(v, t) or (v is None and none_ok) else text

    return check


#: Valid value of each PipeweaveRegressor hyperparameter accepted by ``train --params``.
PARAM_DOMAINS: dict[str, Callable[[Any], str | None]] = {
    "n_estimators": _num(1, 100_000, integer=True),
    "max_depth": _num(1, 64, integer=True),
    "learning_rate": _num(0, 1, lo_open=True),
    "subsample": _num(0, 1, lo_open=True),
    "colsample_bytree": _num(0, 1, lo_open=True),
    "min_child_weight": _num(0, 1e9),
    "reg_lambda": _num(0, 1e9),
    "reg_alpha": _num(0, 1e9),
    "quantile": _num(0, 1, lo_open=True, none_ok=True),
    "use_sass": _kind(bool, "true or false"),
    "drop_features": _kind(list, "a list of feature names"),
    "reference": _kind(str, 'a string (e.g. "envelope")'),
    "monotone_constraints": _kind(dict, "an object {feature: -1|0|1} or null", none_ok=True),
    "per_family": _kind(bool, "true or false"),
    "n_jobs": _num(1, 1024, integer=True),
    "random_state": _num(0, 2**32 - 1, integer=True),
    "max_rows_per_group": _num(1, 2**31, integer=True, none_ok=True),
    # the recipe's per-family booster settings (pipeweave.model.FAMILY_BOOSTER_PARAMS), which max_depth,
    # min_child_weight and reg_lambda do not override: {} makes those apply to every booster
    "family_booster_params": _kind(dict, "an object {family: {setting: value}} or null", none_ok=True),
}


def parse_params(text: str | None) -> dict[str, Any]:
    """``--params`` JSON -> dict of hyperparameters; raises :class:`DataError` naming the bad key or value."""
    if not text:
        return {}
    if os.path.isfile(text):  # a file holding the JSON (e.g. saved from `pipeweave tune`)
        with open(text, encoding="utf-8") as fh:
            text = fh.read()
    try:
        params = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or e.g. an integer literal past the digit limit
        why = f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise DataError(
            f"--params {text[:60]!r} is not JSON ({why})",
            hint='give a JSON object, e.g. --params \'{"max_depth": 8, "learning_rate": 0.05}\'',
        ) from None
    if not isinstance(params, dict):
        raise DataError(
            f"--params must be a JSON object of hyperparameters, got a JSON {type(params).__name__} {text[:40]!r}",
            hint="e.g. --params '{\"max_depth\": 8}'",
        )
    for key, value in params.items():
        check = PARAM_DOMAINS.get(key)
        if check is None:
            close = difflib.get_close_matches(key, list(PARAM_DOMAINS), n=1)
            raise DataError(
                f"--params has an unknown hyperparameter {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                hint=f"valid keys: {sorted(PARAM_DOMAINS)}",
            )
        want = check(value)
        if want is not None:
            raise DataError(
                f"--params {key}={json.dumps(value)} is invalid; expected {want}", hint=f"fix the value of {key!r}"
            )
    if "drop_features" in params:
        params["drop_features"] = tuple(params["drop_features"])
    if params.get("family_booster_params") is not None:  # its families and values, checked as fit checks them
        from ..model import PipeweaveRegressor

        PipeweaveRegressor(family_booster_params=params["family_booster_params"]).family_booster_settings()
    return params


_PIP_NAMES = {
    "psycopg": "'psycopg[binary]'",
    "psycopg2": "psycopg2-binary",
    "MySQLdb": "mysqlclient",
    "pymysql": "PyMySQL",
    "asyncpg": "asyncpg",
    "pg8000": "pg8000",
    "oracledb": "oracledb",
}


def check_storage_url(url: str | None) -> None:
    """Raise :class:`DataError` unless ``url`` is an optuna storage URL this machine can open.

    Checks the URL form (``dialect[+driver]://...``), that the database driver is installed, and for
    SQLite that the database file's folder exists and is writable. None = in-memory study.
    """
    if url is None:
        return
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    fix = "e.g. --storage sqlite:///tune.db (a local file) or postgresql://user@host/db"
    try:
        u = make_url(url)
    except (ArgumentError, ValueError):
        raise DataError(f"--storage {url!r} is not a database URL", hint=fix) from None
    try:
        dialect = u.get_dialect()
    except NoSuchModuleError:
        raise DataError(f"--storage {url!r}: unknown database kind {u.drivername!r}", hint=fix) from None
    try:
        import_dbapi: Any = getattr(dialect, "import_dbapi", None) or dialect.dbapi
        import_dbapi()
    except ImportError as exc:
        pkg = _PIP_NAMES.get(exc.name or "", exc.name or "the driver")
        raise DataError(
            f"--storage {url!r}: the {u.drivername!r} driver is not installed (no module {exc.name!r})",
            hint=f"pip install {pkg}, or use sqlite:///tune.db",
        ) from None
    if u.get_backend_name() == "sqlite":
        db = u.database or ""
        if db in ("", ":memory:"):
            return
        from .._io import check_writable

        folder = os.path.dirname(os.path.abspath(db))
        if os.path.isdir(db):
            raise DataError(f"--storage {url!r}: {db!r} is a directory", hint="name a database file, e.g. tune.db")
        if not os.path.isdir(folder):
            raise DataError(
                f"--storage {url!r}: folder {folder!r} does not exist", hint="create it or choose another path"
            )
        check_writable(db, "--storage database")
