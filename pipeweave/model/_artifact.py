"""Model files: the XGBoost booster as UBJSON (or JSON) with a stamp in its attributes.

The stamp records the schema version, the ordered feature list, the families, sources and GPUs
trained on, a fingerprint of the training data, the hyperparameters and library versions.
:func:`load_model` refuses a file whose schema version or feature list differs from what this
version of pipeweave computes, listing the differences and the command that retrains. No pickle.

A model with one booster per family (``per_family=True``) is still one file: the shared booster
is the file's booster, and each family's booster is stored as its own UBJSON bytes (base64) in the
attribute ``pipeweave_family_<family>``; the stamp lists them under ``family_boosters``.

Integrity: nothing reaches XGBoost's native parser unchecked (a truncated file used to crash it).
The stamp holds ``file_integrity = "pwfile-<length, 12 digits>-<sha256 hex>"``: the file's length
and the SHA-256 of the file with the 64 digest characters written as ``0`` (the digest is patched
in after writing; same length, so the file's layout does not move), and ``booster_blobs``:
``{family: {"bytes": n, "sha256": hex}}`` of each per-family booster blob. :func:`verify_model_file`
checks both before any booster is built, from the bytes in memory (no re-read in between). A file
without an integrity record (written before it existed) is still read, after a structural walk of
its UBJSON/JSON that proves it complete.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import math
import os
import platform
import re
import struct
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from .. import __version__
from .._errors import DataError, SchemaMismatchError, shown
from .._io import atomic_write, read_error_text
from .._paths import MODELS_DIR
from ._bands import check_error_bands
from ._features import model_feature_names
from ._library import TileTable
from ._regressor import REFERENCES, PipeweaveRegressor, companion_family

__all__ = [
    "save_model",
    "load_model",
    "read_stamp",
    "library_versions",
    "verify_model_file",
    "save_booster",
    "load_booster",
    "check_model_path",
    "SCHEMA_VERSION",
    "DEFAULT_MODEL_PATH",
    "RETRAIN_COMMAND",
]

_FAMILY_ATTR = "pipeweave_family_"
#: blob key prefix of a family's crude companion booster (attribute pipeweave_family_companion__<family>)
_COMPANION_KEY = "companion__"
#: blob key prefix of a family's seen-GPU booster (PipeweaveRegressor(seen_gpu=...))
_SEEN_KEY = "seen__"

#: Bump when features, target or file layout change meaning.
SCHEMA_VERSION = "pipeweave-model/1"
DEFAULT_MODEL_PATH = MODELS_DIR / "pipeweave_default.ubj"
RETRAIN_COMMAND = "pipeweave train --out models/pipeweave_default.ubj --force --error-bands"


def library_versions() -> dict[str, str]:
    """Versions of pipeweave, XGBoost, numpy, pandas, scikit-learn and Python (for model stamps)."""
    import numpy
    import pandas
    import sklearn
    import xgboost

    return {
        "pipeweave": __version__,
        "xgboost": xgboost.__version__,
        "numpy": numpy.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
        "python": platform.python_version(),
    }


_INTEGRITY_RE = re.compile(rb"pwfile-(\d{12})-([0-9a-f]{64})")
_ZERO_DIGEST = b"0" * 64
_MAX_MODEL_BYTES = 2**31  # larger files are not pipeweave models (and would not fit a memory check)


def _integrity_hits(data: bytes | bytearray) -> list[re.Match[bytes]]:
    """The integrity records in ``data``: each ``pwfile-`` found by ``bytes.find`` (memchr-fast over the tens of
    MB of a model file; a regex scan of the whole file took 0.1 s at 51 MB), then matched in place."""
    hits, pos = [], data.find(b"pwfile-")
    while pos >= 0:
        m = _INTEGRITY_RE.match(data, pos)
        if m is not None:
            hits.append(m)
        pos = data.find(b"pwfile-", pos + 1)
    return hits


def _integrity_placeholder() -> str:
    return "pwfile-" + "0" * 12 + "-" + "0" * 64


def _seal(tmp: Path) -> None:
    """Patch the file's length and digest into its integrity record (same byte length)."""
    data = bytearray(tmp.read_bytes())
    hits = _integrity_hits(data)
    if len(hits) != 1:  # pragma: no cover - only if xgboost stopped storing attributes verbatim
        raise RuntimeError(f"model file has {len(hits)} integrity records, expected 1")
    m = hits[0]
    data[m.start(1) : m.end(1)] = b"%012d" % len(data)
    data[m.start(2) : m.end(2)] = _ZERO_DIGEST
    data[m.start(2) : m.end(2)] = hashlib.sha256(data).hexdigest().encode("ascii")
    tmp.write_bytes(bytes(data))


def _is_range(v: object) -> bool:
    """A stamp's [fastest, slowest] latency pair: two finite numbers, 0 < fastest <= slowest."""
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        return False
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v):
        return False
    return 0.0 < float(v[0]) <= float(v[1])


def save_model(
    model: PipeweaveRegressor, path: str | os.PathLike[str], *, data_fingerprint: str = "", extra: dict | None = None
) -> Path:
    """Write ``model`` to ``path`` (``.ubj`` -> UBJSON, ``.json`` -> JSON) atomically with its stamp.

    The stamp carries the file's length and SHA-256 and those of each per-family booster blob
    (see the module docstring); :func:`load_model` checks them before XGBoost parses anything.
    """
    if not isinstance(model, PipeweaveRegressor):
        raise DataError(
            f"save_model writes a fitted PipeweaveRegressor, got {type(model).__name__}",
            hint="e.g. save_model(pipeweave.PipeweaveRegressor().fit(rows), 'mine.ubj')",
        )
    model._check_fitted()
    path = Path(_model_path(path))
    check_model_path(path)
    blobs = {fam: bytes(fb.save_raw("ubj")) for fam, fb in (getattr(model, "family_boosters_", None) or {}).items()}
    companions = dict(getattr(model, "companion_weights_", None) or {})
    comp_boosters = getattr(model, "companion_boosters_", None) or {}
    comp_blobs = {_COMPANION_KEY + fam: bytes(b.save_raw("ubj")) for fam, b in comp_boosters.items()}
    seen_boosters = getattr(model, "seen_boosters_", None) or {}
    seen_keys = getattr(model, "seen_keys_", None) or {}
    seen_weights = getattr(model, "seen_weights_", None) or {}
    comp_blobs.update({_SEEN_KEY + fam: bytes(b.save_raw("ubj")) for fam, b in seen_boosters.items()})
    stamp = {
        "schema_version": SCHEMA_VERSION,
        "features": model.feature_names_,
        "families": model.families_,
        "gpu_blind_families": list(getattr(model, "blind_families_", ())),
        # attention backends whose one-hot was held at 0 (PipeweaveRegressor.min_backend_gpus)
        "unsupported_backends": list(getattr(model, "unsupported_backends_", ())),
        # the reference each booster's target is relative to (PipeweaveRegressor.reference_of)
        "references": {
            "shared": str(getattr(model, "shared_reference_", model.reference)),
            "families": dict(getattr(model, "family_references_", {})),
        },
        "sources": model.sources_,
        "gpus": model.gpus_,
        "n_train_rows": model.n_train_rows_,
        "data_fingerprint": data_fingerprint,
        "params": model.get_params(),
        "versions": library_versions(),
        "family_boosters": sorted(blobs),
        # family -> the extra columns its booster reads (PipeweaveRegressor(family_extra_features=...))
        "family_extra_features": {
            str(f): list(v) for f, v in (getattr(model, "family_extra_features_", None) or {}).items()
        },
        # the shared booster's extra columns (PipeweaveRegressor(shared_extra_features=...))
        "shared_extra_features": list(getattr(model, "shared_extra_features_", ()) or ()),
        # crude companion boosters (PipeweaveRegressor(companion=...)): family or family:dtype -> blend weight
        "companions": companions,
        # family (or family:dtype) -> the companion's weight on a new GPU of a trained generation
        # (PipeweaveRegressor(sibling_companion=...)), and the GPUs and generations each key trained on; absent: none
        "sibling_companion": dict(getattr(model, "sibling_companion_", None) or {}),
        "sibling_trained_gpus": _family_lists(model, "sibling_trained_gpus_"),
        "sibling_trained_generations": _family_lists(model, "sibling_trained_generations_"),
        # the calibrated roofline's weight in each listed family's last blend (PipeweaveRegressor(roofline_blend=...))
        "roofline_blend": dict(getattr(model, "roofline_blend_", None) or {}),
        # family -> the GPUs it trained on, whose rows the roofline blend leaves alone; absent: blend every row
        "roofline_trained_gpus": _family_lists(model, "roofline_trained_gpus_"),
        # family (or family:dtype) -> the generations it trained on, whose new GPUs the roofline blend leaves alone
        # too; absent: only the trained GPUs are left alone
        "roofline_trained_generations": _family_lists(model, "roofline_trained_generations_"),
        # seen-GPU boosters (PipeweaveRegressor(seen_gpu=...)): family -> blend weight and its one-hot keys
        "seen_gpu": {f: {"weight": float(seen_weights[f]), "keys": list(seen_keys[f])} for f in seen_boosters},
        # family -> [fastest, slowest] measured latency (us) of its training rows (PipeweaveRegressor.extrapolated)
        "latency_range_us": dict(getattr(model, "latency_range_us_", None) or {}),
        # GPU -> its FP32 GEMM launches with the kernel they ran (PipeweaveRegressor.library_tiles); absent: none
        "library_tiles": {g: t.to_dict() for g, t in (getattr(model, "library_tile_tables_", None) or {}).items()},
        # held-out measured / predicted quantiles per family (PipeweaveRegressor.predict_interval); absent: none
        **({"error_bands": model.error_bands_} if getattr(model, "error_bands_", None) else {}),
        **({"calibration": model.calibration_.to_dict()} if getattr(model, "calibration_", None) is not None else {}),
        **{k: v for k, v in (extra or {}).items() if k not in ("file_integrity", "booster_blobs")},
        "booster_blobs": {
            fam: {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()}
            for fam, b in {**blobs, **comp_blobs}.items()
        },
        "file_integrity": _integrity_placeholder(),
    }
    booster = model.booster_.copy()
    for fam, b in {**blobs, **comp_blobs}.items():
        booster.set_attr(**{_FAMILY_ATTR + fam: base64.b64encode(b).decode("ascii")})
    booster.set_attr(pipeweave_stamp=json.dumps(stamp, sort_keys=True, default=str))

    def write(tmp: Path) -> None:
        # xgboost picks the format from the suffix; the temp file keeps the target's suffix
        booster.save_model(str(tmp))
        _seal(tmp)

    return atomic_write(path, write)


def _model_path(path: object) -> str | os.PathLike[str]:
    """``path`` when it is a path (``str`` or ``os.PathLike``), else a :class:`DataError` naming its type."""
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(
            f"a model path must be a string or a path, got {type(path).__name__} ({shown(path)})",
            hint="e.g. 'models/mine.ubj' (a .ubj or .json file written by pipeweave.save_model)",
        )
    return path


def check_model_path(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`DataError` unless ``path`` can receive a model file (``.ubj``/``.json``, writable).

    Cheap; ``pipeweave train`` calls it before training so a bad ``--out`` fails in a second.
    """
    from .._io import check_writable

    if not str(_model_path(path)).strip():
        raise DataError("the model path is empty", hint="e.g. /tmp/mine.ubj")
    path = Path(path)
    if path.suffix not in (".ubj", ".json"):
        raise DataError(
            f"model path must end in .ubj or .json, got {str(path)!r}", hint=f"e.g. {str(path.with_suffix('.ubj'))!r}"
        )
    check_writable(path, "model")
    return path


# ----------------------------------------------------------------------------------- integrity
class _Malformed(Exception):
    pass


_UBJ_FIXED = {
    ord("Z"): 0,
    ord("N"): 0,
    ord("T"): 0,
    ord("F"): 0,
    ord("i"): 1,
    ord("U"): 1,
    ord("C"): 1,
    ord("I"): 2,
    ord("l"): 4,
    ord("L"): 8,
    ord("d"): 4,
    ord("D"): 8,
}
_UBJ_INT = {ord("i"): ">b", ord("U"): ">B", ord("I"): ">h", ord("l"): ">i", ord("L"): ">q"}


def _ubjson_complete(buf: bytes) -> None:
    """Walk a UBJSON document without building it; raise :class:`_Malformed` unless it is complete."""
    n = len(buf)

    def need(pos: int, k: int) -> None:
        if pos + k > n:
            raise _Malformed(f"it ends at byte {n:,} but its structure needs at least {pos + k:,} (truncated?)")

    def count_at(pos: int) -> tuple[int, int]:
        need(pos, 1)
        fmt = _UBJ_INT.get(buf[pos])
        if fmt is None:
            raise _Malformed(f"byte {pos:,} should start a length")
        k = struct.calcsize(fmt)
        need(pos + 1, k)
        v = struct.unpack_from(fmt, buf, pos + 1)[0]
        if v < 0:
            raise _Malformed(f"negative length at byte {pos:,}")
        return v, pos + 1 + k

    def key(pos: int) -> int:
        ln, pos = count_at(pos)
        need(pos, ln)
        return pos + ln

    def value(pos: int, t: int | None, depth: int) -> int:
        if depth > 100:
            raise _Malformed("nesting deeper than any model")
        if t is None:
            need(pos, 1)
            t, pos = buf[pos], pos + 1
        if t in _UBJ_FIXED:
            need(pos, _UBJ_FIXED[t])
            return pos + _UBJ_FIXED[t]
        if t in (ord("S"), ord("H")):
            return key(pos)
        if t not in (ord("["), ord("{")):
            raise _Malformed(f"unknown UBJSON marker {chr(t)!r} at byte {pos - 1:,}")
        obj = t == ord("{")
        typ = None
        need(pos, 1)
        if buf[pos] == ord("$"):
            need(pos + 1, 2)
            typ, pos = buf[pos + 1], pos + 2
            if buf[pos] != ord("#"):
                raise _Malformed(f"typed container without a count at byte {pos:,}")
        if buf[pos] == ord("#"):
            count, pos = count_at(pos + 1)
            if typ in _UBJ_FIXED and not obj:
                need(pos, _UBJ_FIXED[typ] * count)
                return pos + _UBJ_FIXED[typ] * count
            for _ in range(count):
                if obj:
                    pos = key(pos)
                pos = value(pos, typ, depth + 1)
            return pos
        end = ord("}") if obj else ord("]")
        while True:
            need(pos, 1)
            if buf[pos] == end:
                return pos + 1
            if obj:
                pos = key(pos)
            pos = value(pos, None, depth + 1)

    end = value(0, None, 0)
    if end != n:
        raise _Malformed(f"{n - end:,} bytes follow the end of the model")


def _structurally_complete(data: bytes, what: str) -> None:
    """Raise :class:`_Malformed` unless ``data`` is one complete UBJSON or JSON document."""
    if data[:1] != b"{":
        raise _Malformed(f"{what} does not start like an XGBoost model")
    if data[1:2] in (b'"', b" ", b"\n", b"\r", b"\t", b"}"):  # JSON
        try:
            json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise _Malformed(f"{what} is not complete JSON ({read_error_text(exc)})") from None
        return
    try:
        _ubjson_complete(data)
    except RecursionError:
        raise _Malformed(f"{what} nests too deeply") from None


def _retrain_hint(path: str | os.PathLike[str] | None) -> str:
    """How to re-create the model file at ``path``: the shipped model's command for the shipped model,
    else the command that wrote the user's own file (never the shipped model's: it would overwrite it)."""
    if path is None or Path(path).resolve() == Path(DEFAULT_MODEL_PATH).resolve():
        return f"retrain with `{RETRAIN_COMMAND}`"
    return f"re-create {str(path)!r} with the command that wrote it (`pipeweave train ...` or `calibrate fit ...`)"


def verify_model_file(path: str | os.PathLike[str], *, rebuild_command: str | None = None) -> bytes:
    """The bytes of a model file, after checking that XGBoost may parse them.

    A file with an integrity record must have the recorded length and SHA-256; one without (older
    files) must be a structurally complete UBJSON/JSON document. Raises :class:`DataError`
    naming the file and what is wrong; its hint names ``rebuild_command`` (the command that writes
    such a file; default: the shipped model's for the shipped model, else the command that wrote it).
    """
    path = Path(_model_path(path))
    again = f"retrain with `{rebuild_command}`" if rebuild_command else _retrain_hint(path)
    if not path.exists():
        default = path.resolve() == Path(DEFAULT_MODEL_PATH).resolve()
        raise DataError(
            f"model file not found: {str(path)!r}",
            hint=f"train one with `{rebuild_command or RETRAIN_COMMAND}` or give the path of an existing model file"
            if default
            else "check the path (a typo?), or train a model there with `pipeweave train`",
        )
    if not path.is_file():
        raise DataError(f"model path {str(path)!r} is not a file", hint="give the path of a .ubj/.json model file")
    size = path.stat().st_size
    if size > _MAX_MODEL_BYTES:
        raise DataError(
            f"{str(path)!r} ({size:,} bytes) is too large to be a pipeweave model",
            hint=again,
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read model file {str(path)!r}: {exc.strerror}", hint="check the path") from None
    hits = _integrity_hits(data)
    fix = f"the file is damaged or was altered; {again} (or copy it again)"
    if len(hits) > 1:
        raise DataError(f"model file {str(path)!r} holds {len(hits)} integrity records (altered)", hint=fix)
    if hits:
        m = hits[0]
        want_len, want = int(m.group(1)), m.group(2).decode("ascii")
        if want_len != len(data):
            raise DataError(
                f"model file {str(path)!r} has {len(data):,} bytes but was written with {want_len:,} "
                f"(truncated or extended)",
                hint=fix,
            )
        view = memoryview(data)  # hashed in place: the file with its digest zeroed, without a 50 MB copy
        digest = hashlib.sha256(view[: m.start(2)])
        digest.update(_ZERO_DIGEST)
        digest.update(view[m.end(2) :])
        if digest.hexdigest() != want:
            raise DataError(f"model file {str(path)!r} fails its SHA-256 check (altered after writing)", hint=fix)
        return data
    if data[:1] != b"{":
        raise DataError(
            f"{str(path)!r} is not an XGBoost model file (it starts with {data[:12]!r})",
            hint="pass a model written by `pipeweave train` or `pipeweave calibrate fit`",
        )
    try:
        _structurally_complete(data, "it")
    except _Malformed as exc:
        raise DataError(f"{str(path)!r} is not a complete XGBoost model file: {exc}", hint=fix) from None
    return data


def _booster_from_bytes(data: bytes, what: str, path: str | os.PathLike[str] | None = None):  # noqa: ANN202
    import xgboost as xgb

    try:
        return xgb.Booster(model_file=bytearray(data))
    except Exception as exc:  # xgboost raises its own XGBoostError for files it cannot read
        raise DataError(
            f"{what} is not an XGBoost model ({exc.__class__.__name__})", hint=_retrain_hint(path)
        ) from None


def save_booster(booster: Any, path: str | os.PathLike[str]) -> Path:
    """Write a bare XGBoost ``booster`` (its attributes kept) to ``path`` atomically, with the
    file-integrity record that :func:`load_booster` checks; returns ``path``. For the project's
    other model files (the diagnose config ranker); :func:`save_model` writes regressors."""
    b = booster.copy()
    b.set_attr(file_integrity=_integrity_placeholder())

    def write(tmp: Path) -> None:
        b.save_model(str(tmp))
        _seal(tmp)

    return atomic_write(Path(path), write)


def load_booster(path: str | os.PathLike[str], *, rebuild_command: str | None = None) -> Any:
    """An XGBoost booster read from ``path`` after :func:`verify_model_file` (length, digest or
    structure), so that a damaged file is a :class:`DataError` naming ``rebuild_command``, never a
    native crash inside XGBoost."""
    data = verify_model_file(path, rebuild_command=rebuild_command)
    return _booster_from_bytes(data, repr(str(path)), path)


def _parse_stamp(raw: str | None, path: Path) -> dict:
    fix = _retrain_hint(path)
    if raw is None:
        raise SchemaMismatchError(f"{str(path)!r} has no pipeweave stamp (not written by pipeweave)", hint=fix)
    try:
        stamp = json.loads(raw)
    except ValueError:
        raise SchemaMismatchError(f"the stamp of {str(path)!r} is not JSON (starts {raw[:40]!r})", hint=fix) from None
    if not isinstance(stamp, dict):
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} is a JSON {type(stamp).__name__}, not an object", hint=fix
        )
    kinds = {
        "features": list,
        "families": list,
        "gpu_blind_families": list,
        "unsupported_backends": list,
        "sources": list,
        "gpus": list,
        "family_boosters": list,
        "params": dict,
        "booster_blobs": dict,
        "n_train_rows": int,
    }
    for key, kind in kinds.items():
        if key in stamp and not isinstance(stamp[key], kind):
            raise SchemaMismatchError(
                f"stamp field {key!r} of {str(path)!r} is {type(stamp[key]).__name__} "
                f"{str(stamp[key])[:40]!r}, expected a {kind.__name__}",
                hint=fix,
            )
    for key in ("features", "family_boosters"):
        if not all(isinstance(v, str) for v in stamp.get(key, [])):
            raise SchemaMismatchError(f"stamp field {key!r} of {str(path)!r} must list strings", hint=fix)
    return stamp


def read_stamp(path: str | os.PathLike[str]) -> dict:
    """The stamp of a saved model, with its booster under ``_booster`` (no compatibility check).

    The file is verified first (:func:`verify_model_file`).
    """
    path = Path(_model_path(path))
    data = verify_model_file(path)
    booster = _booster_from_bytes(data, repr(str(path)), path)
    return {"_booster": booster, **_parse_stamp(booster.attr("pipeweave_stamp"), path)}


def has_error_bands(model: Any = None) -> bool:
    """Whether ``model`` carries error bands (:meth:`PipeweaveRegressor.predict_interval` can answer): a fitted
    :class:`PipeweaveRegressor`, a model file path, or ``None`` (the shipped model; a file is read only for its
    stamp). Bands of a few-shot calibration (on the calibrated GPU) count."""
    if model is None or isinstance(model, (str, os.PathLike)):
        stamp = read_stamp(DEFAULT_MODEL_PATH if model is None else model)
        corrections = (stamp.get("calibration") or {}).get("corrections", {})
        return bool(stamp.get("error_bands")) or any(c.get("band_t") for c in corrections.values())
    calibration = getattr(model, "calibration_", None)
    return bool(getattr(model, "error_bands_", None)) or (calibration is not None and calibration.has_band())


def _family_blob(booster, stamp: dict, fam: str, path: Path) -> bytes:  # noqa: ANN001
    """The checked UBJSON bytes of ``fam``'s booster (present, base64, recorded length/SHA-256)."""
    fix = f"the file is damaged; {_retrain_hint(path)}"
    raw = booster.attr(_FAMILY_ATTR + fam)
    if raw is None:
        raise SchemaMismatchError(f"model file {str(path)!r} lists a booster for family {fam!r} but lacks it", hint=fix)
    try:
        blob = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise SchemaMismatchError(
            f"the {fam!r} booster of {str(path)!r} is not base64 (starts {raw[:20]!r})", hint=fix
        ) from None
    rec = stamp.get("booster_blobs", {}).get(fam)
    if rec is not None:
        if (
            not isinstance(rec, dict)
            or rec.get("bytes") != len(blob)
            or rec.get("sha256") != hashlib.sha256(blob).hexdigest()
        ):
            raise SchemaMismatchError(
                f"the {fam!r} booster of {str(path)!r} ({len(blob):,} bytes) does not match "
                f"its recorded length/SHA-256",
                hint=fix,
            )
    else:
        try:
            _structurally_complete(blob, f"the {fam!r} booster")
        except _Malformed as exc:
            raise SchemaMismatchError(f"model file {str(path)!r}: {exc}", hint=fix) from None
    return blob


class LazyBoosters(MutableMapping[str, Any]):
    """Family -> XGBoost booster, each built from its checked bytes on first access.

    A booster is built only when its family is predicted: a single-launch ``pipeweave predict``
    builds one of the twelve (start-up time). :func:`load_model` has then already refused a damaged
    file: a sealed file's every byte is covered by its length + SHA-256 record, and an older file's
    family blobs are checked at load. Iteration order is the file's; assignment and deletion work
    as on a dict."""

    def __init__(self, blobs: Mapping[str, Callable[[], bytes]], where: str) -> None:
        self._blobs = dict(blobs)  # family -> the checked bytes of its booster, produced on demand
        self._built: dict[str, Any] = {}
        self._where = where

    def __getitem__(self, fam: str) -> Any:
        if fam not in self._built:
            blob = self._blobs[fam]()  # KeyError for a family without its own booster, as a dict
            self._built[fam] = _booster_from_bytes(blob, f"the {fam!r} booster of {self._where}")
        return self._built[fam]

    def __setitem__(self, fam: str, booster: Any) -> None:
        self._built[fam] = booster
        self._blobs.setdefault(fam, bytes)

    def __delitem__(self, fam: str) -> None:
        del self._blobs[fam]
        self._built.pop(fam, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return f"LazyBoosters({list(self._blobs)}, built={list(self._built)})"


def _lazy_boosters(booster, stamp: dict, keys: Mapping[str, str], path: Path) -> LazyBoosters:  # noqa: ANN001
    """Family -> booster of the blobs ``keys`` (family -> blob key) stored in the file's attributes."""
    if stamp.get("file_integrity"):  # sealed: verify_model_file checked every byte; each blob's own
        # record is checked when its booster is first built
        blobs = {fam: functools.partial(_family_blob, booster, stamp, key, path) for fam, key in keys.items()}
    else:  # an older file without the seal: check every blob now
        checked = {fam: _family_blob(booster, stamp, key, path) for fam, key in keys.items()}
        blobs = {fam: functools.partial(bytes, blob) for fam, blob in checked.items()}
    return LazyBoosters(blobs, repr(str(path)))


def _family_lists(model: PipeweaveRegressor, attr: str) -> dict[str, list[str]]:
    """The fitted ``attr`` of ``model`` (family key -> list of names; absent: ``{}``) as plain strings, for the stamp."""
    return {str(f): [str(k) for k in v] for f, v in (getattr(model, attr, None) or {}).items()}


def _stamp_family_lists(
    stamp: dict[str, Any], key: str, what: str, path: str | os.PathLike[str]
) -> dict[str, list[str]]:
    """The stamp's ``key`` field (family -> list of ``what``), checked; absent: ``{}`` (a file written before it)."""
    value = stamp.get(key) or {}
    if not (
        isinstance(value, dict)
        and all(isinstance(v, list) and all(isinstance(k, str) for k in v) for v in value.values())
    ):
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed {key} field {value!r} (expected family -> list of {what})",
            hint=_retrain_hint(path),
        )
    return {str(f): list(v) for f, v in value.items()}


def _stamp_blend_weights(stamp: dict[str, Any], field: str, path: str | os.PathLike[str]) -> dict[str, float]:
    """The stamp's ``field`` (key -> geometric blend weight in (0, 1); absent = {}), else SchemaMismatchError."""
    value = stamp.get(field) or {}
    if not isinstance(value, dict) or not all(
        isinstance(w, (int, float)) and not isinstance(w, bool) and 0.0 < float(w) < 1.0 for w in value.values()
    ):
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed {field} field {value!r} (family -> weight in (0, 1))",
            hint=_retrain_hint(path),
        )
    return {str(k): float(w) for k, w in value.items()}


def _stamp_extra_features(stamp: dict, path: Path) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The stamp's ``family_extra_features`` (family booster -> known extra column names) and
    ``shared_extra_features`` (the shared booster's), validated; absent (older files): none."""
    from ..frontend import EXTRA_FEATURES

    extra = stamp.get("family_extra_features") or {}
    shared = stamp.get("shared_extra_features") or []
    boosters = set(stamp.get("family_boosters", []))
    ok = (
        isinstance(extra, dict)
        and all(
            f in boosters and isinstance(v, list) and v and all(c in EXTRA_FEATURES for c in v)
            for f, v in extra.items()
        )
        and isinstance(shared, list)
        and all(c in EXTRA_FEATURES for c in shared)
    )
    if not ok:
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed family_extra_features {extra!r} or shared_extra_features "
            f"{shared!r} field (expected family booster -> list, and a list, of names of "
            f"pipeweave.frontend.EXTRA_FEATURES {list(EXTRA_FEATURES)})",
            hint=_retrain_hint(path),
        )
    return {str(f): tuple(str(c) for c in v) for f, v in extra.items()}, tuple(str(c) for c in shared)


def load_model(path: str | os.PathLike[str] | None = None) -> PipeweaveRegressor:
    """Load a model written by :func:`save_model`; refuses damaged files and schema or feature-list mismatches."""
    path = Path(_model_path(path)) if path is not None else DEFAULT_MODEL_PATH
    stamp = read_stamp(path)
    booster = stamp.pop("_booster")
    params = dict(stamp.get("params", {}))
    known = PipeweaveRegressor().get_params()
    model = PipeweaveRegressor(**{k: v for k, v in params.items() if k in known})
    sass_cols = [f for f in stamp.get("features", []) if f.startswith("sass_")]
    try:
        expected = model_feature_names(sass_cols, tuple(model.drop_features or ()))
    except TypeError:
        raise SchemaMismatchError(
            f"stamp of {str(path)!r} has a malformed drop_features {model.drop_features!r}",
            hint=_retrain_hint(path),
        ) from None
    diffs = []
    if stamp.get("schema_version") != SCHEMA_VERSION:
        diffs.append(f"schema_version: file {stamp.get('schema_version')!r} != expected {SCHEMA_VERSION!r}")
    got = stamp.get("features", [])
    if got != expected:
        missing = [f for f in expected if f not in got]
        extra = [f for f in got if f not in expected]
        diffs.append(
            f"features: missing {missing}, unexpected {extra}"
            if (missing or extra)
            else "features: same names in a different order"
        )
    if diffs:
        raise SchemaMismatchError(
            f"model file {str(path)!r} does not match this pipeweave:\n  - " + "\n  - ".join(diffs),
            hint=_retrain_hint(path),
        )
    if isinstance(model.drop_features, list):
        model.drop_features = tuple(model.drop_features)
    if isinstance(model.gpu_blind_families, list):
        model.gpu_blind_families = tuple(model.gpu_blind_families)
    if isinstance(model.sample_informative_only, list):
        model.sample_informative_only = tuple(model.sample_informative_only)
    # the families trained blind, as resolved at fit time (a file written before the option existed
    # lacks the field: every row saw the GPU-constant features, and is predicted the same way)
    model.blind_families_ = tuple(str(f) for f in stamp.get("gpu_blind_families", []))
    # attention backends held at 0 (a file written before the option: none, so it predicts as it did)
    model.unsupported_backends_ = tuple(str(b) for b in stamp.get("unsupported_backends", []))
    # the boosters' references (a file written before family_reference existed: every booster on `reference`)
    refs = stamp.get("references") or {}
    if not isinstance(refs, dict) or not isinstance(refs.get("families", {}), dict):
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed references field {refs!r}",
            hint=_retrain_hint(path),
        )
    model.shared_reference_ = str(refs.get("shared", model.reference))
    model.family_references_ = {str(k): str(v) for k, v in refs.get("families", {}).items()}
    bad = sorted({r for r in [model.shared_reference_, *model.family_references_.values()]} - set(REFERENCES))
    if bad:
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} names unknown references {bad} (known: {sorted(REFERENCES)})",
            hint=_retrain_hint(path),
        )
    model.booster_ = booster
    model.family_boosters_ = _lazy_boosters(booster, stamp, {f: f for f in stamp.get("family_boosters", [])}, path)
    # the extra columns of family boosters (a file written before the option: none, so it predicts as it did)
    model.family_extra_features_, model.shared_extra_features_ = _stamp_extra_features(stamp, path)
    # crude companions and the roofline blend (a file written before an option: none, so it predicts as it did)
    model.companion_weights_ = _stamp_blend_weights(stamp, "companions", path)
    model.sibling_companion_ = _stamp_blend_weights(stamp, "sibling_companion", path)
    model.sibling_trained_gpus_ = _stamp_family_lists(stamp, "sibling_trained_gpus", "GPU names", path)
    model.sibling_trained_generations_ = _stamp_family_lists(stamp, "sibling_trained_generations", "generations", path)
    comp_keys = (*model.companion_weights_, *model.sibling_companion_)
    keys = {fam: _COMPANION_KEY + fam for fam in dict.fromkeys(companion_family(k) for k in comp_keys)}
    model.companion_boosters_ = _lazy_boosters(booster, stamp, keys, path)
    model.roofline_blend_ = _stamp_blend_weights(stamp, "roofline_blend", path)
    model.roofline_trained_gpus_ = _stamp_family_lists(stamp, "roofline_trained_gpus", "GPU names", path)
    model.roofline_trained_generations_ = _stamp_family_lists(
        stamp, "roofline_trained_generations", "generations", path
    )
    # seen-GPU boosters (a file written before the option: none, so it predicts as it did)
    seen = stamp.get("seen_gpu") or {}
    ok = isinstance(seen, dict) and all(
        isinstance(v, dict)
        and isinstance(v.get("weight"), (int, float))
        and not isinstance(v.get("weight"), bool)
        and 0.0 < float(v["weight"]) <= 1.0
        and isinstance(v.get("keys"), list)
        and bool(v["keys"])
        and all(isinstance(k, str) for k in v["keys"])
        for v in seen.values()
    )
    if not ok:
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed seen_gpu field {seen!r} "
            "(family -> {'weight': w in (0, 1], 'keys': ['H100-SXM', ...]})",
            hint=_retrain_hint(path),
        )
    model.seen_weights_ = {str(f): float(v["weight"]) for f, v in seen.items()}
    model.seen_keys_ = {str(f): [str(k) for k in v["keys"]] for f, v in seen.items()}
    model.seen_boosters_ = _lazy_boosters(booster, stamp, {f: _SEEN_KEY + f for f in seen}, path)
    # the measured latency range per family (a file written before it: none, nothing is marked)
    span = stamp.get("latency_range_us") or {}
    if not isinstance(span, dict) or not all(_is_range(v) for v in span.values()):
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed latency_range_us field {span!r} "
            "(family -> [fastest, slowest] us, 0 < fastest <= slowest)",
            hint=_retrain_hint(path),
        )
    model.latency_range_us_ = {str(k): [float(v[0]), float(v[1])] for k, v in span.items()}
    # each GPU's FP32 GEMM launches with their kernel (PipeweaveRegressor.library_tiles; a file without: none)
    tables = stamp.get("library_tiles") or {}
    try:
        model.library_tile_tables_ = {str(g): TileTable.from_dict(t) for g, t in dict(tables).items()}
    except (DataError, TypeError, ValueError) as exc:
        raise SchemaMismatchError(
            f"the stamp of {str(path)!r} has a malformed library_tiles field ({str(exc).splitlines()[0]})",
            hint=_retrain_hint(path),
        ) from None
    # error bands (pipeweave train --error-bands; a file without them has none: predict_interval refuses)
    model.error_bands_ = None
    if "error_bands" in stamp:
        try:
            model.error_bands_ = check_error_bands(stamp["error_bands"], f"the stamp of {str(path)!r}")
        except DataError as exc:
            raise SchemaMismatchError(str(exc).split("\n")[0], hint=_retrain_hint(path)) from None
    model.feature_names_ = got
    model.families_ = stamp.get("families", [])
    model.sources_ = stamp.get("sources", [])
    model.gpus_ = stamp.get("gpus", [])
    model.n_train_rows_ = stamp.get("n_train_rows", 0)
    if stamp.get("calibration"):  # a few-shot calibration of one GPU (`pipeweave calibrate fit`)
        from ..calibrate import GPUCalibration

        model.calibration_ = GPUCalibration.from_dict(stamp["calibration"])
    model.stamp_ = stamp
    return model
