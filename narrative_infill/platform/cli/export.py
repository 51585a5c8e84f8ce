"""``export eee`` and ``export register``: logs in other projects' result formats, and the Register entry."""

from __future__ import annotations

import argparse

from .options import command, high_inclusive_option, output_option


def _eee(args: argparse.Namespace) -> int:
    """Every Eval Ever: an aggregate and a per-sample file per log (validate with its validator)"""
    from ..analysis.export.every_eval_ever import ExportError, export_eee
    from ..analysis.report.load import log_locations

    files = log_locations(args.logs, ExportError)
    written = export_eee(files, args.output, args.organization, args.relationship, args.high_inclusive)
    print(f"{len(files)} logs -> {len(written)} Every Eval Ever files under {args.output / 'data'}")
    return 0


def _register(args: argparse.Namespace) -> int:
    """The Inspect Evals Register entry, completed with the repository and its maintainers

    The packaged eval.yaml lacks the fields only the repository's publisher knows; this writes the
    complete entry (register/narrative_infill/eval.yaml in inspect_evals). See docs/register.md.
    """
    from ..analysis.export.register import register_entry, write_register_entry

    entry = register_entry(args.repository_url, args.maintainer, args.contributor)
    write_register_entry(entry, args.output)
    print(f"Register entry for {entry['source']['repository_url']} -> {args.output}")
    return 0


def add_commands(commands) -> None:
    export = commands.add_parser("export", help="logs in other projects' result formats")
    formats = export.add_subparsers(dest="format", required=True)
    eee = command(formats, "eee", _eee)
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
    register = command(formats, "register", _register)
    register.add_argument(
        "--repository-url", required=True, help="the published code: https://github.com/OWNER/REPO"
    )
    register.add_argument(
        "--maintainer", action="append", required=True, help="GitHub user who maintains it (repeat)"
    )
    register.add_argument(
        "--contributor",
        action="append",
        default=[],
        help="GitHub user who wrote it (repeat; default: maintainers)",
    )
    output_option(register, "the entry's file (eval.yaml)")
