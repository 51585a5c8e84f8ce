"""``export eee``: logs in other projects' result formats."""

from __future__ import annotations

import argparse
from pathlib import Path

from .options import command, high_inclusive_option, output_option


def _log_files(paths: list[str]) -> list[str]:
    """The ``.eval`` logs named or inside the folders named, in order."""
    from inspect_ai.log import list_eval_logs

    files: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            found = [info.name for info in list_eval_logs(path, recursive=True)]
            if not found:
                raise FileNotFoundError(f"{path}: no .eval logs in this folder")
            files += sorted(found)
        elif Path(path).is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such log or folder")
    return files


def _eee(args: argparse.Namespace) -> int:
    """Every Eval Ever: an aggregate and a per-sample file per log (validate with its validator)"""
    from ..analysis.export.eee import ExportError, export_eee

    try:
        files = _log_files(args.logs)
    except FileNotFoundError as err:
        raise ExportError(str(err)) from None
    written = export_eee(files, args.output, args.organization, args.relationship, args.high_inclusive)
    print(f"{len(files)} logs -> {len(written)} Every Eval Ever files under {args.output / 'data'}")
    return 0


def add_commands(commands) -> None:
    export = commands.add_parser("export", help="logs in other projects' result formats")
    formats = export.add_subparsers(dest="format", required=True)
    eee = command(formats, _eee)
    eee.add_argument("logs", nargs="+", help=".eval logs or folders of them")
    output_option(eee, "folder; files go under DIR/data/")
    eee.add_argument(
        "--organization", required=True, help="who provides these results (EEE's source_organization_name)"
    )
    eee.add_argument(
        "--relationship",
        default="third_party",
        choices=["first_party", "third_party", "collaborative", "other"],
        help="the evaluator's relationship to the model (default: third_party)",
    )
    high_inclusive_option(eee, "High%%")
