"""Outputs that appear whole or not at all, and never replace what the package did not write.

Every command that writes (build, import, report, submit...) writes into a temporary file or
folder beside its target and moves it into place only when the work has succeeded: a command
that fails leaves earlier outputs intact. A folder is replaced whole, so it may be replaced only
when this package wrote it: the folder carries a marker (``MARKER``) naming the command and
every file it wrote with its SHA-256. A folder without the marker (unless empty), written by
another command, holding a file the command did not write or changed since, or that is, holds
or sits inside one of the command's inputs, is refused before anything is touched.

Outputs take the user's umask like any other file they create (``mkstemp`` and ``mkdtemp``
alone would leave them readable by their owner only).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import NarrativeInfillError

#: The file an output folder carries: which command wrote it and the files it wrote.
MARKER = ".narrative-infill-output"


class OutputFolderError(NarrativeInfillError, ValueError):
    """An output folder that must not be replaced: an input, a stranger's folder, edited files."""


def umask_mode(directory: bool = False) -> int:
    """The mode a plain ``open``/``mkdir`` would give under the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: Path) -> dict[str, Path]:
    """Every file below ``folder`` (links included, not followed) by its path relative to it."""
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if not path.is_dir() or path.is_symlink()
    }


def _refuse_inputs(target: Path, inputs: Iterable[Path | str], what: str) -> Path:
    """``target`` resolved (links followed); ``OutputFolderError`` if it is, holds or sits inside an input."""
    resolved = Path(target).resolve()
    for given in inputs:
        source = Path(given).resolve()
        if resolved == source or resolved in source.parents or source in resolved.parents:
            relation = (
                "is" if resolved == source else "contains" if resolved in source.parents else "sits inside"
            )
            raise OutputFolderError(
                f"{what} {target} {relation} the input {given}; it would be replaced whole: "
                f"choose an {what} apart from the inputs"
            )
    return resolved


def _make_beside(target: Path, make):
    """``make(folder)`` for a temporary beside ``target``, its folder created first; a folder that
    cannot be written is an ``OutputFolderError`` naming the target."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return make(target.parent)
    except OSError as err:
        where = f" ({err.filename})" if err.filename else ""
        raise OutputFolderError(f"cannot write {target}: {err.strerror or err}{where}") from None


def check_output_dir(target: Path, command: str, inputs: Iterable[Path | str] = ()) -> Path:
    """``target`` resolved (links followed), or ``OutputFolderError`` saying why it may not be replaced."""
    resolved = _refuse_inputs(target, inputs, "output folder")
    if not resolved.exists():
        return resolved
    if not resolved.is_dir():
        raise OutputFolderError(f"output folder {target} is a file; choose a folder")
    present = {name: path for name, path in _files(resolved).items() if name != MARKER}
    if not present and not (resolved / MARKER).exists():
        return resolved
    advice = "choose a new folder, or remove it yourself if it can go"
    try:
        marker = json.loads((resolved / MARKER).read_text(encoding="utf-8"))
        written, writer = dict(marker["files"]), str(marker["command"])
    except (OSError, ValueError, KeyError, TypeError):
        raise OutputFolderError(
            f"output folder {target} was not written by narrative-infill (no readable {MARKER}) and is "
            f"not empty; it would be replaced whole: {advice}"
        ) from None
    if writer != command:
        raise OutputFolderError(
            f"output folder {target} holds the output of `narrative-infill {writer}`, "
            f"not `{command}`: {advice}"
        )
    strangers = sorted(set(present) - set(written))
    changed = sorted(name for name in set(present) & set(written) if _sha256(present[name]) != written[name])
    if strangers or changed:
        listing = "; ".join(
            part
            for part in (
                f"files it did not write: {', '.join(strangers[:5])}" if strangers else "",
                f"files changed since: {', '.join(changed[:5])}" if changed else "",
            )
            if part
        )
        raise OutputFolderError(
            f"output folder {target} holds {listing}; it would be replaced whole: {advice}"
        )
    return resolved


@contextmanager
def atomic_file(target: Path, inputs: Iterable[Path | str] = ()) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target`` in one rename.
    A target that is (or sits inside) one of ``inputs`` is refused before anything is written."""
    target = Path(target)
    _refuse_inputs(target, inputs, "output")
    handle, temporary = _make_beside(
        target, lambda folder: tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=folder)
    )
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, umask_mode())
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


@contextmanager
def atomic_dir(target: Path, command: str, inputs: Iterable[Path | str] = ()) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; on success it takes ``target``'s place.

    ``target`` is checked first (``check_output_dir``); the folder written gets ``MARKER``. The old
    folder is moved aside first and removed only after the new one is in place.
    """
    target = check_output_dir(target, command, inputs)
    temporary = Path(
        _make_beside(
            target, lambda folder: tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=folder)
        )
    )
    try:
        yield temporary
        files = {name: _sha256(path) for name, path in _files(temporary).items() if name != MARKER}
        (temporary / MARKER).write_text(
            json.dumps({"command": command, "files": files}, indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
        os.chmod(temporary, umask_mode(directory=True))
        previous = None
        if target.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, previous / target.name)
        os.replace(temporary, target)
        if previous is not None:
            shutil.rmtree(previous)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary)
