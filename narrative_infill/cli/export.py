"""``export eee``: logs in other projects' result formats."""

from __future__ import annotations

import argparse

from .options import command, high_inclusive_option, output_option


def _eee(args: argparse.Namespace) -> int:
    """Every Eval Ever: an aggregate and a per-sample file per log (validate with its validator)"""
    from ..analysis.export.eee import ExportError, export_eee
    from ..analysis.report.load import log_locations

    files = log_locations(args.logs, ExportError)
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
