"""Model names that enter the platform from a file (a log's header, a submission's ``model.id``,
an imported row's ``model`` column, an lm-eval results file): one rule, here, for each way in.

A name is read in NFKC (a fullwidth or mathematical ``a`` is an ``a``) and refused, naming the
character (``U+XXXX``), when it holds a character that changes how it renders or shows nothing
(control, format and bidi characters, the Hangul fillers, the blank Braille pattern) or when it
mixes scripts beyond Unicode's "highly restrictive" profile (UTS #39: Latin with the scripts of
Chinese, Japanese or Korean): ``gpt-4о`` with a Cyrillic ``о``. Two names that differ only in
look-alikes (``I``, ``l`` and ``1``; ``O`` and ``0``; Cyrillic and Latin; a hyphen and U+2010)
share a confusable skeleton (UTS #39), and :class:`LookAlikes` refuses the second, naming both.

The Unicode data (Scripts.txt, confusables.txt) comes from ``confusable-homoglyphs`` (MIT, pure
Python, no dependencies, Unicode 15.1). It gives each character's script and its look-alikes but no
skeleton, so the skeleton is built here from its pairs; ``confusables`` (the other PyPI package)
enumerates every normal form of a string, which grows exponentially with its length.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ..data.text import BLANK_CHARACTERS

#: Unicode categories a name may not hold: control (Cc), format (Cf: bidi overrides, zero-width
#: characters), private use (Co), surrogate (Cs), unassigned (Cn), line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
#: Scripts a name may mix (UTS #39 "highly restrictive"); Common and Inherited (digits, "-", "/",
#: combining marks) go with any script.
MIXED_SCRIPTS_ALLOWED = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
#: The left-to-right marks the data wraps right-to-left look-alikes in (not part of the glyph).
_LRM = "\u200e"


def _described(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"


def script(char: str) -> str:
    """The character's script (Scripts.txt's alias: ``LATIN``, ``CYRILLIC``, ``COMMON``...)."""
    from confusable_homoglyphs.categories import alias

    return alias(char)


def name_problem(name: str, as_written: bool = False) -> str | None:
    """Why ``name`` would render as another name or as nothing, or None when it is a name.
    ``as_written``: a name NFKC would change is refused too (a submission names its model as its
    logs do, so the name cannot be normalised on the way)."""
    if not name.strip():
        return "is empty"
    for char in name:
        if unicodedata.category(char) in REFUSED_CATEGORIES or char in BLANK_CHARACTERS:
            return (
                f"holds {_described(char)}, which changes how the name renders or shows nothing; "
                "write the name without it"
            )
    scripts: dict[str, str] = {}
    for char in unicodedata.normalize("NFKC", name):
        if (found := script(char)) not in _ANY_SCRIPT:
            scripts.setdefault(found, char)
    if len(scripts) > 1 and not any(set(scripts) <= allowed for allowed in MIXED_SCRIPTS_ALLOWED):
        shown = ", ".join(f"{found.title()} ({char!r}, U+{ord(char):04X})" for found, char in scripts.items())
        return f"mixes letters of look-alike scripts: {shown}; write the name in one script"
    if as_written and (normal := unicodedata.normalize("NFKC", name)) != name:
        return f"is not in Unicode NFKC form (it reads as {ascii(normal)}); name the model so"
    return None


def checked_name(name: object, where: str, error: type[Exception], as_written: bool = False) -> str:
    """``name`` in NFKC, or ``error`` naming ``where`` (file and field) and why (:func:`name_problem`)."""
    if not isinstance(name, str):
        raise error(f"{where}: expected text, got {type(name).__name__}")
    if reason := name_problem(name, as_written):
        raise error(f"{where}: {ascii(name)} {reason}")
    return unicodedata.normalize("NFKC", name)


@lru_cache(maxsize=4096)
def _prototype(char: str, expand: bool = True) -> str:
    """The one member of ``char``'s look-alike set that stands for the set. confusables.txt maps
    each character to a prototype; the data holds those pairs both ways, so the set is the
    prototype with its sources: a multi-character member is the prototype, else the member with
    most look-alikes (the lowest code point between two)."""
    from confusable_homoglyphs.confusables import confusables_data

    def alikes(member: str) -> list[str]:
        return [entry["c"].replace(_LRM, "") for entry in confusables_data.get(member, ())]

    members = {char, *alikes(char)}
    members |= {far for near in list(members) if len(near) == 1 for far in alikes(near)}
    longer = sorted(member for member in members if len(member) > 1)
    if longer:
        return "".join(_prototype(c, False) for c in longer[0]) if expand else longer[0]
    return min(members, key=lambda member: (-len(alikes(member)), ord(member)))


def _shows(char: str) -> bool:
    return not (
        char.isspace() or char in BLANK_CHARACTERS or unicodedata.category(char) in REFUSED_CATEGORIES
    )


def skeleton(name: str) -> str:
    """What ``name`` looks like: NFKC, without what shows nothing (whitespace, invisible and blank
    characters), each character replaced by its look-alike set's prototype, case folded (and
    mapped once more, as a letter's lower case may have a prototype of its own: ``m`` is ``rn``).
    Two names with one skeleton cannot be told apart."""
    visible = filter(_shows, unicodedata.normalize("NFKC", name))
    mapped = "".join(map(_prototype, visible)).casefold()
    return "".join(map(_prototype, mapped)).casefold()  # again: a folded letter may have a prototype ("M")


class LookAlikes:
    """The names met so far, by skeleton: a second name that only looks like one of them is
    refused, naming both and where each came from."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, str]] = {}  # skeleton -> (name, where)

    def problem(self, name: str, where: str) -> str | None:
        """Why ``name`` (read at ``where``) cannot stand beside the names met before, or None."""
        first, first_where = self.seen.setdefault(skeleton(name), (name, where))
        if first == name:
            return None
        return (
            f"{ascii(name)} differs from {ascii(first)} ({first_where}) only in look-alike characters, "
            "whitespace or case: the two would print as one name; write each model's name one way"
        )
