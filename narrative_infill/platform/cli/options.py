"""Argparse pieces the command groups share: one spelling of each command and common option."""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...paper_protocol import high_label


def command(commands, name: str, run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """The subcommand ``name``, which ``run`` handles; ``run``'s docstring's first paragraph is the
    command's help, the rest its description."""
    help, _, description = inspect.cleandoc(run.__doc__ or "").partition("\n\n")
    parser = commands.add_parser(
        name,
        help=" ".join(help.split()),
        description=" ".join(description.split()) or None,
    )
    parser.set_defaults(run=run)
    return parser


def output_option(parser: argparse.ArgumentParser, help: str, type: Callable[[str], Any] = Path) -> None:
    """The required ``-o/--output`` every writing command takes."""
    parser.add_argument("-o", "--output", required=True, type=type, help=help)


def high_inclusive_option(parser: argparse.ArgumentParser, counted: str) -> None:
    """The same switch of the High% rule (``paper_protocol.is_high``) for every command that counts it."""
    parser.add_argument(
        "--high-inclusive",
        action="store_true",
        help=f"{counted} as {high_label(inclusive=True)} (the authors' scripts) instead of {high_label()}",
    )


def model_role_option(parser: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    """``--model-role ROLE=MODEL``, repeatable, parsed as ``inspect eval`` parses it."""
    parser.add_argument(
        "--model-role",
        action="append",
        default=None if required else [],
        required=required,
        metavar="ROLE=MODEL",
        help=help,
    )


def skip_unreadable_option(parser: argparse.ArgumentParser) -> None:
    """One switch, one name, for every command that reads runs from logs."""
    parser.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="set aside .eval files that are not readable Inspect logs, naming each (default: refuse, "
        "naming all of them)",
    )


def readable(paths: list[str], args: argparse.Namespace) -> list[str]:
    """The logs a command reads: ``paths``, or with --skip-unreadable their readable logs, each
    one set aside named on stderr."""
    from ..analysis.report.logs import readable_paths
    from ..terminal import printable

    kept, skipped = readable_paths(paths, args.skip_unreadable)
    for line in skipped:
        print(printable(line), file=sys.stderr)
    return kept


def passed(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options as keyword arguments of the function a command calls (dest = parameter)."""
    return {name: getattr(args, name) for name in names}
