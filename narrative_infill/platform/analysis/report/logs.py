"""Which logs a command reads: the files named or found in folders, each readable, and of each run
its latest successful log (``load``'s docstring says why).

Every unreadable ``.eval`` is named at once, not only the first: a user with a folder of runs and
two truncated files learns of both in one try. ``--skip-unreadable`` (``report``, ``submit``,
``compare``) sets them aside instead, one line each. A run without a successful log is absent,
with the command that finishes it as it must be typed: a local model's retry needs its server,
so its command is ``serve``'s (``inspect eval-retry`` alone finds no server, and writes to
``./logs``, where the next ``report`` of the run's folder does not look).
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote, urlparse

from ....errors import NarrativeInfillError
from .run_labels import run_identity

#: The option that sets unreadable logs aside (one name for every command that reads runs).
SKIP_OPTION = "--skip-unreadable"
#: Providers whose model only ``narrative-infill serve`` makes reachable.
SERVED_PROVIDERS = ("llama-cpp-python/",)


class NoSuccessfulLogError(NarrativeInfillError, ValueError):
    """Paths that hold no log, an unreadable one, or no successful log to report on."""


class MixedRunsError(NarrativeInfillError, ValueError):
    """Logs whose scores must not be averaged together (different metrics or judges, or one eval
    under two headers)."""


def log_locations(paths: list[str], error: type[Exception] = NoSuccessfulLogError) -> list[str]:
    """The logs named, and those inside the folders named (sorted), in order. A local path that is
    neither a file nor a folder, or a folder without logs, raises ``error`` naming it: a mistyped
    path must not silently leave a model out of a report."""
    from inspect_ai.log import list_eval_logs

    files: list[str] = []
    for path in map(str, paths):
        local = "://" not in path  # s3://... and other remote folders: Inspect lists them
        if local and Path(path).is_file():
            files.append(path)
            continue
        if local and not Path(path).is_dir():
            raise error(f"{path}: no such log or folder")
        found = sorted(info.name for info in list_eval_logs(path, recursive=True))
        if local:  # Inspect's listing passes over a dangling or looping link: named unreadable, not dropped
            found += sorted(str(p) for p in Path(path).rglob("*.eval") if p.is_symlink() and not p.is_file())
        if not found:
            raise error(f"{path}: no .eval logs in this folder")
        files += found
    return files


def read_log(location: str, error: type[Exception] = NoSuccessfulLogError, header_only: bool = True):
    """A log (its header by default), or ``error`` naming a file that is not a readable Inspect log."""
    import zipfile
    import zlib

    from inspect_ai.log import read_eval_log
    from zstandard import ZstdError  # Inspect's member compression: damaged bytes raise its error

    try:
        return read_eval_log(location, header_only=header_only)
    # not a zip ("EOCD not found"), not a log (pydantic), a damaged member (a whole zip directory)
    except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile, zlib.error, ZstdError) as err:
        reason = str(err).partition("\n")[0]
        raise error(f"{location}: not a readable Inspect log ({reason})") from None


def read_headers(paths: list[str], skip_unreadable: bool = False) -> tuple[dict, list[str]]:
    """(location -> header of each readable log, a line per log set aside). Unreadable logs are
    all named in one error unless ``skip_unreadable``; a header read is bounded (Inspect reads the
    zip's directory and one member), so a folder of bad files costs one pass."""
    headers, unreadable = {}, []
    for location in log_locations(paths):
        try:
            headers[location] = read_log(location)
        except NoSuccessfulLogError as err:
            unreadable.append(str(err))
    if unreadable and not skip_unreadable:
        raise NoSuccessfulLogError(
            f"{len(unreadable)} unreadable log(s); {SKIP_OPTION} sets them aside:\n"
            + "\n".join(f"  {line}" for line in unreadable)
        )
    return headers, [f"skipped (unreadable): {line}" for line in unreadable]


def readable_paths(paths: list[str], skip_unreadable: bool) -> tuple[list[str], list[str]]:
    """(what a command reads, a line per log set aside): ``paths`` as given, or with
    ``skip_unreadable`` each readable log found in them (an error when none is)."""
    if not skip_unreadable:
        return paths, []
    headers, skipped = read_headers(paths, skip_unreadable=True)
    if not headers:  # every log set aside: the lines say why, else the user learns nothing of them
        found = "".join(f"\n  {line}" for line in skipped)
        raise NoSuccessfulLogError(f"no readable log in {', '.join(map(str, paths))}{found}")
    return list(headers), skipped


def select_logs(paths: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """(the log read for each run, absent runs with the reason, notes)."""
    headers, _ = read_headers(paths)
    runs: dict[tuple, list] = defaultdict(list)
    for location, header in headers.items():
        samples = header.results.completed_samples if header.results else 0
        runs[(header.eval.task, header.eval.model, run_identity(header))].append(
            ((samples, header.eval.created), location, header)
        )
    selected, absent, set_aside = [], {}, 0
    by_eval: dict[str, str] = {}
    for key, logs in runs.items():
        logs.sort(key=lambda item: item[0])
        successful = [item for item in logs if item[2].status == "success"]
        if successful:
            _, location, header = successful[-1]
            if (other := by_eval.setdefault(header.eval.eval_id, location)) != location:
                raise MixedRunsError(
                    f"{other} and {location} are one eval (id {header.eval.eval_id}) under two headers "
                    "that name different runs: one is a copy with its header edited; keep the original"
                )
            selected.append(location)
            set_aside += len(logs) - 1
            continue
        absent[f"{key[0]} / {key[1]}"] = _unfinished(logs)
    notes = (
        [
            f"{set_aside} log(s) set aside: a later successful log of the same run replaces them "
            f"(eval-retry, re-runs)."
        ]
        if set_aside
        else []
    )
    return selected, absent, notes


def retry_command(location: str, model: str) -> str:
    """The command that completes the run of the log at ``location``, writing beside it (a local
    log as a path: Inspect lists a folder's logs as ``file://`` URIs)."""
    if location.startswith("file://"):
        location = unquote(urlparse(location).path)
    log_dir = str(Path(location).parent) if "://" not in location else location.rpartition("/")[0]
    retry = ["inspect", "eval-retry", location, "--log-dir", log_dir]
    served = str(model).startswith(SERVED_PROVIDERS)
    return shlex.join(["narrative-infill", "serve", "--", *retry] if served else retry)


def _unfinished(logs: list) -> str:
    """Why a run without a successful log is absent: its latest log's status and samples done."""
    from inspect_ai.log import read_eval_log_sample_summaries

    _, location, latest = logs[-1]
    done = sum(1 for summary in read_eval_log_sample_summaries(location) if not summary.error)
    total = (latest.eval.dataset.samples or 0) * (latest.eval.config.epochs or 1)
    return (
        f"no successful log ({len(logs)} log(s), the latest {latest.status}: {done} of {total} "
        f"samples); finish it with: {retry_command(location, latest.eval.model)}"
    )
