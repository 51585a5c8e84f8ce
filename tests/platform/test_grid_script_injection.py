"""The sbatch array scripts against hostile names and paths: a model name from the grid file, the
log folder or a Slurm option that would break out of its line and run as a command of the job."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from narrative_infill.platform.grid.plan import GridError, load_grid, plan
from narrative_infill.platform.grid.slurm import SlurmOptions, array_scripts

HOSTILE_GRID = """
name: hostile
data: demo
tasks: [l2]
provider: baseline
models:
  - {{name: "Rule\\ntouch {marker}\\n", id: neighbour}}
  - {{name: "Q'$(touch {marker})\\r", id: neighbour}}
"""


def test_a_model_name_cannot_run_shell_code_in_the_array_script(tmp_path):
    marker = tmp_path / "injected"
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(HOSTILE_GRID.format(marker=marker))
    [script] = array_scripts(plan(load_grid(str(grid_file)), tmp_path).runs, tmp_path, SlurmOptions())
    runnable = script.text.replace(shlex.quote(sys.executable), "true")  # the script, without Inspect
    for index in range(2):
        done = subprocess.run(
            ["bash", "-c", runnable], env={"SLURM_ARRAY_TASK_ID": str(index)}, timeout=30, capture_output=True
        )
        assert done.returncode == 0, done.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("log_dir", "options", "field"),
    [
        ("logs\ntouch injected", SlurmOptions(), "--output"),
        ("logs", SlurmOptions(partition="gpu\necho x"), "--partition"),
        ("logs", SlurmOptions(time="1:00\r"), "--time"),
    ],
)
def test_a_directive_value_with_a_control_character_is_refused(tmp_path, log_dir, options, field):
    runs = plan(load_grid("paper"), tmp_path / log_dir, models=["Llama-3.1-8B"], studies=["main"]).runs
    with pytest.raises(GridError, match=f"sbatch {field}: .* a control character"):
        array_scripts(runs, tmp_path / log_dir, options)
