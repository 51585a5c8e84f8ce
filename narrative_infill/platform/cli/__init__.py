"""The ``narrative-infill`` command line: one module per group of commands, ``main`` here.

An error the package raises about its input or environment (a ``NarrativeInfillError``) is
printed as one line without a traceback, and so is a library missing because its extra is not
installed (the line names the extra); any other exception is a bug and shows its traceback.
``--debug`` shows the traceback always.
"""

from __future__ import annotations

import argparse
import os
import sys

from ...errors import NarrativeInfillError
from ..extras import install_line, missing_extra
from ..terminal import printable
from . import compare, data, export, lm_eval, local, results, runs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="narrative-infill", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of every error, the package's own included"
    )
    commands = parser.add_subparsers(dest="subcommand", required=True)
    for group in (local, data, runs, results, compare, export, lm_eval):
        group.add_commands(commands)
    return parser


def _split_passed_on(argv: list[str]) -> tuple[list[str], list[str]]:
    """``grid ... -- ARGS``: ARGS go to every inspect command (argparse cannot take options there)."""
    command = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    if command is not None and argv[command] == "grid" and "--" in argv[command:]:
        end = argv.index("--", command)
        return argv[:end], argv[end + 1 :]
    return argv, []


def _grid_status_spelling(argv: list[str]) -> list[str]:
    """``grid status LOG_DIR`` is the ``grid-status`` command (a grid file named status: ./status)."""
    command = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    if command is not None and argv[command : command + 2] == ["grid", "status"]:
        return [*argv[:command], "grid-status", *argv[command + 2 :]]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv, passed_on = _split_passed_on(_grid_status_spelling(list(sys.argv[1:] if argv is None else argv)))
    args = build_parser().parse_args(argv)
    if passed_on:
        args.inspect_args = passed_on
    try:
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except NarrativeInfillError as err:
        if args.debug:
            raise
        print(f"narrative-infill {args.subcommand}: {printable(err, keep_newlines=True)}", file=sys.stderr)
        return 1
    except ImportError as err:
        extra = missing_extra(err)
        if extra is None or args.debug:
            raise
        print(
            f"narrative-infill {args.subcommand}: needs the '{extra}' extra ({err}): {install_line(extra)}",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
