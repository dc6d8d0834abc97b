"""Guard for report folders: commands do not silently replace results committed to the repository.

A folder "holds committed results" when git tracks a file under it (checked with ``git ls-files``;
outside a git checkout nothing is committed). Writing there needs an explicit ``force``; examples
in the docs write to a scratch folder such as ``/tmp``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ._errors import DataError

__all__ = ["committed_files", "refuse_committed_output"]


def committed_files(folder: str | os.PathLike[str]) -> list[str]:
    """Files under ``folder`` that git tracks (empty outside a git checkout or without git)."""
    path = Path(folder).resolve()
    probe = path if path.is_dir() else path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(probe), "ls-files", "--full-name", "--", str(path)],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [line for line in out.stdout.splitlines() if line.strip()]


def refuse_committed_output(
    folder: str | os.PathLike[str], *, force: bool = False, what: str = "report", hint: str | None = None
) -> None:
    """Raise :class:`DataError` when ``folder`` (a folder or one file) holds files committed to git and
    ``force`` is False; ``hint`` replaces the default fix (a CLI names its own flag)."""
    if force:
        return
    files = committed_files(folder)
    if files:
        raise DataError(
            f"{str(folder)!r} holds {len(files)} committed {what} file{'s' if len(files) != 1 else ''} (e.g. {files[0]!r}); "
            "writing there would replace committed results",
            hint=hint
            or "write to a scratch folder (e.g. /tmp/pipeweave_out) or pass force=True "
            "to refresh the committed results on purpose",
        )
