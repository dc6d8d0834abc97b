"""Exception types shared by every subpackage.

Every error a user can trigger with bad input derives from :class:`PipeweaveError`, whose
message says what is wrong, shows the offending value and says what was expected or how to fix
it. The CLI prints these without a traceback and exits with status 2.
"""

from __future__ import annotations

__all__ = [
    "PipeweaveError",
    "DataError",
    "UnknownGPUError",
    "UnknownFamilyError",
    "SchemaMismatchError",
    "CompileError",
    "SHOWN_MAX_CHARS",
    "shown",
]


class PipeweaveError(Exception):
    """Base class of user-facing errors (message = what, value, fix)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message  # without the fix line: for re-raising with more context
        self.hint = hint
        super().__init__(message if hint is None else f"{message}\n  fix: {hint}")


class DataError(PipeweaveError, ValueError):
    """Input data is missing, malformed or physically impossible."""


class UnknownGPUError(DataError, KeyError):
    """A GPU name that the catalog cannot resolve (a :class:`DataError`: ``except DataError`` catches it)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return self.args[0] if self.args else ""


class UnknownFamilyError(DataError, KeyError):
    """A kernel family that no registry entry describes (a :class:`DataError` too)."""

    def __str__(self) -> str:
        return self.args[0] if self.args else ""


class SchemaMismatchError(PipeweaveError):
    """A model file whose stamp does not match what this version of pipeweave expects."""


class CompileError(PipeweaveError, RuntimeError):
    """A Triton kernel could not be compiled or disassembled."""


#: longest echo of a user's value in a message (a 5,000-character --gpu is cut, not printed whole)
SHOWN_MAX_CHARS = 80


def shown(value: object, limit: int = SHOWN_MAX_CHARS) -> str:
    """``repr`` of a value a message echoes (``'H1000'``), on one line and cut to ``limit`` characters with ``...``
    when longer: the message stays one readable paragraph whatever was typed."""
    if not isinstance(value, str):
        text = " ".join(repr(value).split())  # a numpy array's repr spans lines: one line here
        return text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(value if len(value) <= limit else value[: limit - 3] + "...")
