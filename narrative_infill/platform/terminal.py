"""Text read from a file (a log's error, a grid folder's name, a model name in a refusal), made safe
to print: a control, format or bidi character would let the file move the cursor, colour or
rewrite the line, or reorder it (``"\\x1b[2K\\rfinished 24/24"``), so each is printed as its
escape (``\\x1b``, ``\\u202e``) instead. Every terminal line the CLI builds from a file goes through
:func:`printable`.
"""

from __future__ import annotations

import unicodedata

#: Categories escaped: control (Cc), format (Cf: bidi overrides and isolates, zero-width
#: characters), line and paragraph separators (Zl, Zp), surrogates (Cs) and unassigned (Cn).
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


def _escaped(char: str, keep: str) -> str:
    if char in keep or unicodedata.category(char) not in ESCAPED_CATEGORIES:
        return char
    return char.encode("unicode_escape").decode("ascii")


def printable(text: object, keep_newlines: bool = False) -> str:
    """``str(text)`` with every character of ``ESCAPED_CATEGORIES`` written as its Python escape;
    ``keep_newlines``: a message of several lines keeps its line breaks (a field's own are escaped
    where it is printed alone)."""
    keep = "\n" if keep_newlines else ""
    return "".join(_escaped(char, keep) for char in str(text))
