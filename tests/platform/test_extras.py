"""The core installs alone; the platform's libraries come with extras named for what they serve, and
a command whose extra is missing says which one to install (issue 46)."""

from __future__ import annotations

import re
import sys
from importlib.metadata import requires

import pandas as pd

from narrative_infill.platform.cli import main
from narrative_infill.platform.extras import EXTRA_OF_MODULE, missing_extra

#: distributions whose name is not their module's with dashes
DISTRIBUTION = {"llama_cpp": "llama-cpp-python"}


def _requirements() -> list[tuple[str, str | None]]:
    """(distribution, extra or None for the core) of every requirement the installed package declares."""
    pairs = []
    for line in requires("narrative-infill") or []:
        name = re.match(r"[A-Za-z0-9_.-]+", line).group(0).lower().replace("_", "-")
        extra = re.search(r"""extra\s*==\s*["']([\w-]+)["']""", line)
        pairs.append((name, extra.group(1) if extra else None))
    return pairs


def test_each_platform_library_comes_with_its_extra_and_none_with_the_core():
    declared = _requirements()
    for module, extra in EXTRA_OF_MODULE.items():
        distribution = DISTRIBUTION.get(module, module.replace("_", "-"))
        assert (distribution, extra) in declared, f"{distribution} is not in the {extra!r} extra"
        assert (distribution, None) not in declared, f"{distribution} is a core dependency"


def test_the_all_extra_brings_every_extra_that_runs_on_a_cpu():
    """``all`` names the CPU extras (``narrative-infill[report,local,lm-eval]``), which the build
    backend may write out as their own requirements: either way it brings each of theirs."""
    declared = _requirements()
    under_all = {name for name, extra in declared if extra == "all"}
    for cpu_extra in ("report", "local", "lm-eval"):
        wanted = {name for name, extra in declared if extra == cpu_extra}
        assert wanted <= under_all or "narrative-infill" in under_all, cpu_extra
    assert {extra for extra in EXTRA_OF_MODULE.values()} - {"vllm"} <= {"report", "local", "lm-eval"}


def test_a_missing_module_or_one_pandas_could_not_import_maps_to_its_extra():
    assert missing_extra(ModuleNotFoundError("No module named 'scipy'", name="scipy.stats")) == "report"
    try:
        try:
            raise ModuleNotFoundError("No module named 'openpyxl'", name="openpyxl")
        except ModuleNotFoundError as missing:
            raise ImportError("`Import openpyxl` failed.") from missing  # pandas' own error
    except ImportError as err:
        assert missing_extra(err) == "report"
    assert missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch")) is None


def test_a_command_whose_extra_is_missing_names_it_and_its_install_line(tmp_path, monkeypatch, capsys):
    """``import`` of an xlsx without openpyxl (the report extra): one line naming the extra, no
    traceback. Failed before: pandas' ImportError escaped as a traceback."""
    pd.DataFrame({"id": ["x"], "response": ["y"]}).to_excel(tmp_path / "gen.xlsx", index=False)
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if the report extra were not installed
    assert main(["import", str(tmp_path / "gen.xlsx"), "-o", str(tmp_path / "logs")]) == 1
    error = capsys.readouterr().err
    assert "narrative-infill import: needs the 'report' extra" in error
    assert "pip install 'narrative-infill[report]'" in error and "Traceback" not in error
