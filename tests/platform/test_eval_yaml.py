"""eval.yaml, the Inspect Evals Register entry, says what the tasks are: names, files, sizes; the
Register's own schema (ExternalEvalMetadata of the release pinned in .ci/register-schema.txt) accepts it."""

import ast
import logging
import re
import subprocess
import sys
import types
import zipfile

import pytest
import yaml
from helpers import REPO, SHARED, require
from inspect_ai.util import registry_create

from narrative_infill.paper_protocol import (
    BERTSCORE_MODEL,
    PARADIGMS,
    PUBLISHED_INSTANCES,
    SEMF1_MODEL,
    TELER_LEVELS,
)
from narrative_infill.tasks.infill import TASK_VERSION
from narrative_infill.task_options import version_parts

ENTRY = yaml.safe_load((REPO / "narrative_infill" / "eval.yaml").read_text(encoding="utf-8"))


def _task_functions(source: str) -> set[str]:
    """Names of the functions decorated with ``@task`` in ``source`` (how Inspect finds them in files)."""
    return {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
        and any(
            getattr(d, "id", None) == "task" or getattr(d, "attr", None) == "task"
            for d in node.decorator_list
        )
    }


def test_the_entry_lists_every_benchmark_task_with_its_file():
    assert [t["name"] for t in ENTRY["tasks"]] == list(TELER_LEVELS + PARADIGMS)
    for path in {t["task_path"] for t in ENTRY["tasks"]}:
        listed = {t["name"] for t in ENTRY["tasks"] if t["task_path"] == path}
        # Both ways: a task added to the file but not to the entry would be missing from the Register.
        assert _task_functions((REPO / path).read_text(encoding="utf-8")) == listed, path


def test_sizes_are_the_tasks_own_and_every_task_has_the_one_version():
    """TASK_VERSION (tasks/infill.py) is the version's one home; the entry's sizes restate paper_protocol."""
    for entry in ENTRY["tasks"]:
        task = registry_create("task", f"narrative_infill/{entry['name']}", data="demo")
        assert task.version == TASK_VERSION
        # The published set as recorded (the tasks' default data, no filters); the hub is out of reach here.
        assert entry["dataset_samples"] == PUBLISHED_INSTANCES


def test_the_pinned_commit_holds_the_tasks_it_lists():
    commit = ENTRY["source"]["repository_commit"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit), "the Register wants a full 40-character commit"
    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--git-dir"], capture_output=True)
    require(git.returncode == 0, "needs the git history of the repository (not a source copy)")
    for path in {t["task_path"] for t in ENTRY["tasks"]}:
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{commit}:{path}"], capture_output=True, text=True
        )
        assert shown.returncode == 0, f"{path} at {commit}: {shown.stderr}"
        listed = {t["name"] for t in ENTRY["tasks"] if t["task_path"] == path}
        assert listed <= _task_functions(shown.stdout), f"{path} at {commit}"


def _task_version_at(commit: str, path: str) -> object:
    """``TASK_VERSION`` as the file at ``path`` held it at ``commit`` (read, not imported)."""
    shown = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{path}"], capture_output=True, text=True)
    assert shown.returncode == 0, f"{path} at {commit}: {shown.stderr}"
    [value] = [
        node.value
        for node in ast.parse(shown.stdout).body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["TASK_VERSION"]
    ]
    return ast.literal_eval(value)


def _in_history(commit: str) -> bool:
    """Whether ``commit`` is an ancestor of this checkout's HEAD (a merge keeps a branch's commits)."""
    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--git-dir"], capture_output=True)
    require(git.returncode == 0, "needs the git history of the repository (not a source copy)")
    ancestor = ["git", "-C", str(REPO), "merge-base", "--is-ancestor", commit, "HEAD"]
    return subprocess.run(ancestor, capture_output=True).returncode == 0


def test_the_listed_commit_runs_the_current_task_version():
    """Issue 61: the listed commit (fee35d8) held task version 2 and the old task functions, 473
    commits behind: a user cloning it ran another benchmark. The commit must be in this history and
    hold this checkout's TASK_VERSION; a change that bumps the version fails here until a release
    commit of the new version is listed."""
    commit = ENTRY["source"]["repository_commit"]
    assert _in_history(commit), f"{commit} is not in this repository's history"
    for path in {t["task_path"] for t in ENTRY["tasks"]}:
        assert _task_version_at(commit, path) == TASK_VERSION, f"{path} at {commit}"


def test_the_entry_says_what_it_needs_and_reports_runs_of_this_version():
    """Issue 61: no ``metadata.requires`` though the published data and the paper's judge need the
    network, and no evaluation report. The report's rows are runs this package makes here: a local
    model, null rules, and the paper's published outputs imported, at a commit of this history
    holding this task version."""
    assert ENTRY["metadata"]["requires"] == {"internet": True}
    report = ENTRY["evaluation_report"]
    # runs of an earlier release stay valid while their scores compare (the N of N-X; a plain 3 is 3-A)
    now = version_parts(TASK_VERSION)[0]
    assert _in_history(report["commit"]) and version_parts(report["version"])[0] == now
    assert version_parts(_task_version_at(report["commit"], "narrative_infill/tasks/infill.py"))[0] == now
    models = {row["model"] for row in report["results"]}
    assert "llama-cpp-python/smollm2" in models
    assert any(m.startswith("baseline/") for m in models) and any(m.startswith("replay/") for m in models)
    assert {row["task"] for row in report["results"]} <= {t["name"] for t in ENTRY["tasks"]}
    for row in report["results"]:
        assert row["data"] and {m["key"] for m in row["metrics"]} >= {"atavg", "atavg_ci_lower", "samples"}
    assert all(part in report["command"] for part in ("inspect eval", "narrative-infill import"))


@pytest.mark.shared
def test_the_arxiv_id_is_the_papers():
    front_matter = (SHARED / "paper" / "paper.md").read_text(encoding="utf-8").split("---")[1]
    assert ENTRY["arxiv"] == f"https://arxiv.org/abs/{yaml.safe_load(front_matter)['arxiv_id']}"


def test_the_lm_eval_tasks_carry_the_tasks_version():
    """lm-eval's task files cannot import TASK_VERSION; they restate it (the importer writes it into the
    imported log's task_version, so a stale one would set imported runs apart from Inspect's)."""
    files = sorted((REPO / "narrative_infill" / "platform" / "lm_eval" / "tasks").glob("*.yaml"))
    assert len(files) == 11
    for path in files:
        assert yaml.safe_load(path.read_text(encoding="utf-8"))["metadata"]["version"] == TASK_VERSION, path


def _register_schema() -> types.ModuleType:
    """``inspect_evals.metadata`` from the wheel pinned in .ci/register-schema.txt (fetched by scripts/setup.sh),
    read from the wheel itself: it imports only pydantic, PyYAML and the standard library, so the
    rest of inspect_evals (and its dependencies) stays out."""
    pin = (REPO / ".ci" / "register-schema.txt").read_text(encoding="utf-8")
    version = re.search(r"^inspect_evals==(\S+)", pin, re.MULTILINE).group(1)
    wheel = REPO / ".cache" / "register-schema" / f"inspect_evals-{version}-py3-none-any.whl"
    require(wheel.is_file(), f"needs {wheel.relative_to(REPO)} (.ci/register-schema.txt says how to get it)")
    module = types.ModuleType("register_schema")
    sys.modules[module.__name__] = module  # pydantic resolves the models' annotations through it
    source = zipfile.ZipFile(wheel).read("inspect_evals/metadata.py")
    exec(compile(source, f"{wheel.name}/inspect_evals/metadata.py", "exec"), module.__dict__)
    return module


def _as_the_register_loads_it(entry: dict) -> dict:
    """The Register's loader names the entry after its folder (register/narrative_infill/eval.yaml)."""
    return {**entry, "id": "narrative_infill"}


def test_the_task_version_has_inspect_evals_form():
    """Issue 61: versions were plain integers where inspect_evals uses ``N-X`` (TASK_VERSIONING.md:
    N the comparability version, X the interface); the Register's own ``TaskVersion`` reads it."""
    version = _register_schema().TaskVersion(TASK_VERSION)
    assert version.comparability_version == 3 and version.interface_version == "A"


def test_the_register_schema_names_only_the_publisher_fields_as_missing():
    from pydantic import ValidationError

    from narrative_infill.platform.analysis.export.register import PUBLISHER_FIELDS

    schema = _register_schema()
    with pytest.raises(ValidationError) as raised:
        schema.ExternalEvalMetadata(**_as_the_register_loads_it(ENTRY))
    missing = {".".join(map(str, error["loc"])) for error in raised.value.errors()}
    assert missing == set(PUBLISHER_FIELDS) - {"source.maintainers"}  # maintainers default to the owner


def test_the_register_schema_accepts_the_entry_the_publisher_completes(tmp_path, caplog):
    from narrative_infill.platform.cli import main

    schema = _register_schema()
    output = tmp_path / "register" / "narrative_infill" / "eval.yaml"
    # Example values, ONLY here: the real ones are the publisher's (docs/register.md).
    url, user = "https://github.com/example-owner/narrative-infill", "example-owner"
    argv = ["--repository-url", url, "--maintainer", user]
    assert main(["export", "register", *argv, "-o", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    [description] = [line for line in text.splitlines() if line.startswith("description:")]
    assert "&id" not in text and yaml.safe_load(description) == {"description": ENTRY["description"]}
    with caplog.at_level(logging.WARNING):
        entry = schema.ExternalEvalMetadata(**_as_the_register_loads_it(yaml.safe_load(text)))
    assert str(entry.source.repository_url) == url
    assert entry.source.maintainers == entry.contributors == [user]
    assert entry.source.repository_commit == ENTRY["source"]["repository_commit"]
    assert [t.name for t in entry.tasks] == list(TELER_LEVELS + PARADIGMS)
    # Its one complaint: nine tasks in one entry (a warning; docs/register.md says why one entry).
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        f"Register entry 'narrative_infill' declares 9 tasks {[t.name for t in entry.tasks]}"
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--repository-url", "http://example.org/x", "--maintainer", "a"], "github.com/OWNER/REPO"),
        (["--repository-url", "https://github.com/a/b", "--maintainer", "not a user"], "not a GitHub user"),
    ],
)
def test_the_publisher_fields_are_checked_before_they_are_written(tmp_path, capsys, argv, message):
    from narrative_infill.platform.cli import main

    assert main(["export", "register", *argv, "-o", str(tmp_path / "eval.yaml")]) == 1
    assert message in capsys.readouterr().err and not (tmp_path / "eval.yaml").exists()


def test_every_hub_asset_the_tasks_fetch_is_listed_with_its_state():
    """The Register asks for each external asset and whether it is pinned; its external entries have no
    field for them, so docs/register.md lists them, with the dataset's state as the code has it."""
    from narrative_infill.data.dataset import HF_DATASET, PUBLISHED_REVISION, revision_is_pinned

    page = (REPO / "docs" / "register.md").read_text(encoding="utf-8")
    for source in (HF_DATASET, BERTSCORE_MODEL, SEMF1_MODEL):
        assert f"`{source}`" in page, source
    state = "pinned" if revision_is_pinned(PUBLISHED_REVISION) else "floating"
    assert f"`{HF_DATASET}` | `snapshot_download` | {state}" in page


def test_no_repository_url_is_invented():
    """The entry leaves out what only the publisher knows and says so, instead of guessing."""
    from narrative_infill.platform.analysis.export.register import PUBLISHER_FIELDS

    text = (REPO / "narrative_infill" / "eval.yaml").read_text(encoding="utf-8")
    assert "contributors" not in ENTRY and set(ENTRY["source"]) == {"repository_commit"}
    for field in PUBLISHER_FIELDS:
        assert field in text  # named in the comment that says why it is absent
