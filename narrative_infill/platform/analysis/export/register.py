"""``export register``: the Inspect Evals Register entry, completed with what only its publisher knows.

The packaged ``eval.yaml`` is the entry without ``source.repository_url``, ``source.maintainers``
and ``contributors``: this checkout has no public repository, and those fields are not guessed.
Whoever publishes the repository gives them here; the result is the file the Register takes
(``register/narrative_infill/eval.yaml``), valid against its schema (tests/platform/test_eval_yaml.py).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ....errors import NarrativeInfillError

#: the fields of the entry only the repository's publisher can fill
PUBLISHER_FIELDS = ("source.repository_url", "source.maintainers", "contributors")
_GITHUB_REPOSITORY = re.compile(r"https://github\.com/[A-Za-z0-9-]+/[A-Za-z0-9._-]+")
_GITHUB_USER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


class RegisterEntryError(NarrativeInfillError, ValueError):
    """A publisher field that cannot go into the entry as given."""


def entry_template() -> dict[str, Any]:
    """The packaged entry, publisher fields absent."""
    return yaml.safe_load(resources.files("narrative_infill").joinpath("eval.yaml").read_text("utf-8"))


def register_entry(repository_url: str, maintainers: list[str], contributors: list[str]) -> dict[str, Any]:
    """The complete entry: the template plus the publisher's repository and GitHub users."""
    if not _GITHUB_REPOSITORY.fullmatch(repository_url.removesuffix(".git")):
        raise RegisterEntryError(
            f"--repository-url {repository_url!r}: the Register takes a https://github.com/OWNER/REPO URL"
        )
    for user in [*maintainers, *contributors]:
        if not _GITHUB_USER.fullmatch(user):
            raise RegisterEntryError(f"{user!r} is not a GitHub user name")
    if not maintainers:
        raise RegisterEntryError("name at least one maintainer (--maintainer USER)")
    entry = entry_template()
    entry["contributors"] = list(contributors or maintainers)  # a copy: no YAML alias between the two
    entry["source"] = {
        "repository_url": repository_url.removesuffix(".git"),
        **entry["source"],
        "maintainers": list(maintainers),
    }
    return entry


def write_register_entry(entry: dict[str, Any], output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    # No line wrapping: the Register renders the description into its README as one line.
    text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=float("inf"))
    output.write_text(text, encoding="utf-8")
