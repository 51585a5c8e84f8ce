"""The grid's dry run as a user reads it: pricing and throughput figures that are no figures
(negative, not a number, infinite) or a cost file missing a field Inspect's ``ModelCost`` needs are
refused, naming the file, model and field; estimated sample counts are marked ``~`` and each
seed-study line shows its seed (issue 61, item 7)."""

from __future__ import annotations

import re

import pytest

from narrative_infill.platform.cli import main

GRID = """
name: priced
data: demo
tasks: [l2]
provider: openai
models:
  - {name: Api, id: neighbour}
"""


@pytest.mark.parametrize("price", ["-1", ".nan", ".inf", "-.inf"])
def test_a_cost_file_with_a_price_that_is_no_price_is_refused(tmp_path, capsys, price):
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(GRID)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        f"openai/neighbour: {{input: {price}, output: 1, input_cache_write: 0, input_cache_read: 0}}\n"
    )
    assert main(["grid", str(grid_file), "--dry-run", "--model-cost-config", str(prices)]) == 1
    assert f"{prices}: openai/neighbour: input: " in capsys.readouterr().err


@pytest.mark.parametrize("rate", ["-100", "nan", "inf", "0"])
def test_a_throughput_that_is_no_throughput_is_refused(tmp_path, capsys, rate):
    with pytest.raises(SystemExit):
        main(["grid", "paper", "--dry-run", f"--samples-per-hour={rate}"])
    assert "--samples-per-hour" in capsys.readouterr().err


def test_a_cost_file_without_the_cache_prices_is_refused_in_one_sentence_naming_them(tmp_path, capsys):
    """Inspect's ``ModelCost`` has no defaults: ``inspect eval --model-cost-config`` refuses this file
    too. The grid says so in one line naming the fields, not pydantic's report."""
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(GRID)
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/neighbour: {input: 2.5, output: 10}\n")
    assert main(["grid", str(grid_file), "--dry-run", "--model-cost-config", str(prices)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{prices}: openai/neighbour: missing input_cache_write, input_cache_read" in err
    assert "validation error" not in err and "Field required" not in err


def test_estimated_counts_are_marked_on_each_command_and_seed_lines_show_their_seed(capsys):
    assert main(["grid", "paper", "--dry-run", "--studies", "seeds"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("# seeds: ")]
    assert headers and all(re.search(r", ~[\d,]+ samples, ~[\d,]+ grader calls", h) for h in headers), headers
    seeds = [re.search(r", seed (\d+),", h) for h in headers]
    assert all(seeds) and len(set(headers)) == len(headers)  # no two lines alike
