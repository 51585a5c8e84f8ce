"""eval.yaml, the Inspect Evals Register entry, says what the tasks are: names, files, versions, sizes."""

import ast
import inspect
import re
import subprocess

import pytest
import yaml
from helpers import REPO, SHARED, require
from inspect_ai.util import registry_create

from narrative_infill.definitions import PARADIGMS, TELER_LEVELS
from narrative_infill.paper_protocol import BERTSCORE_MODEL, PUBLISHED_INSTANCES, SEMF1_MODEL
from narrative_infill.tasks.infill import TASK_VERSION

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


def test_version_and_sizes_are_the_tasks_own():
    """eval.yaml is the version's home (the tasks read it); its sizes restate paper_protocol's."""
    assert ENTRY["version"] == TASK_VERSION
    for entry in ENTRY["tasks"]:
        task = registry_create("task", f"narrative_infill/{entry['name']}", data="demo")
        assert task.version == ENTRY["version"]
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


@pytest.mark.shared
def test_the_arxiv_id_is_the_papers():
    front_matter = (SHARED / "paper" / "paper.md").read_text(encoding="utf-8").split("---")[1]
    assert ENTRY["arxiv"] == f"https://arxiv.org/abs/{yaml.safe_load(front_matter)['arxiv_id']}"


def test_every_hub_asset_the_tasks_fetch_is_listed_with_its_state():
    """The published set and the paper's scoring backbones come from the Hugging Face hub; the
    Register asks for each such asset and whether it is pinned. The tasks read the dataset at the
    hub's main branch unless ``-T revision=`` pins one: floating, unless the default changes."""
    from narrative_infill.data.dataset import HF_DATASET
    from narrative_infill.tasks.infill import infill_task

    assets = {asset["source"]: asset for asset in ENTRY["external_assets"]}
    assert set(assets) == {HF_DATASET, BERTSCORE_MODEL, SEMF1_MODEL}
    for asset in assets.values():
        assert asset["type"] == "huggingface" and asset["state"] in {"pinned", "floating"}, asset
        assert asset["fetch_method"], asset
    defaults = inspect.signature(infill_task).parameters
    assert defaults["data"].default == "hf"  # the hub dataset is the tasks' default
    assert assets[HF_DATASET]["state"] == ("floating" if defaults["revision"].default is None else "pinned")
    assert assets[HF_DATASET]["fetch_method"] == "load_dataset"  # datasets.load_dataset (data/dataset.py)


def test_no_repository_url_is_invented():
    """The Register wants source.repository_url and source.maintainers; this checkout has no remote,
    so the entry leaves them out and says so instead of guessing one. With a remote, the URL must
    be that remote's."""
    remote = subprocess.run(
        ["git", "-C", str(REPO), "remote", "get-url", "origin"], capture_output=True, text=True
    )
    url = ENTRY["source"].get("repository_url")
    if remote.returncode == 0 and url is not None:
        assert url.removesuffix(".git") == remote.stdout.strip().removesuffix(".git")
    else:
        assert url is None
        text = (REPO / "narrative_infill" / "eval.yaml").read_text(encoding="utf-8")
        assert "repository_url" in text and "unknown" in text  # the comment that says why it is absent
