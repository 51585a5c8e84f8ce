"""The dry run's cost against pricing and throughput figures that are no figures (negative, not a
number, infinite): refused, naming the file, model and field, rather than printed as dollars or hours."""

from __future__ import annotations

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
