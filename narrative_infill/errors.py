"""The package's error types: an error about input or environment shows its message, never a traceback."""

from __future__ import annotations


class NarrativeInfillError(Exception):
    """Base of every error the package raises about its input or environment (a bad file, an
    option outside its choices, a busy port): the command line prints the message without a
    traceback. Any other exception is a bug and shows its traceback."""


class OptionError(NarrativeInfillError):
    """An option or task argument outside its allowed values. Not a ``ValueError``: Inspect's
    scorer loader reads a ``ValueError`` from a scorer factory as "no such scorer" and hides the
    message (``inspect score --scorer narrative_infill/metrics -S extraction=bogus``)."""
