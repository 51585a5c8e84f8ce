"""benchmarks/scorer_profile.py times the encoders' forward passes with hooks on BERTScore's encoder and
on the sentence model's first module. Under the MiniLM fallback both metrics use one encoder object,
and sentence-transformers before 6 (the project allows >=3) calls that encoder through its hooks from
inside the first module's forward: a Sem-F1 pass was then timed twice, the encoder's share overstated
and "rest" (wall minus the parts) understated, down to negative."""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest
from helpers import REPO

torch = pytest.importorskip("torch")


def _profile_module():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        path = REPO / "benchmarks" / "scorer_profile.py"
        spec = importlib.util.spec_from_file_location("scorer_profile_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


class Clockwork:
    """A perf_counter that moves only when the encoder works: one second a pass."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


class Encoder(torch.nn.Module):
    def __init__(self, clockwork: Clockwork) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 4)
        self.clockwork = clockwork

    def forward(self, x):
        self.clockwork.now += 1.0
        return self.layer(x)


class FirstModule(torch.nn.Module):
    """sentence-transformers 3-5's ``Transformer``: its forward calls the encoder as a module."""

    def __init__(self, encoder: Encoder) -> None:
        super().__init__()
        self.auto_model = encoder

    def forward(self, x):
        return self.auto_model(x)


def test_a_pass_through_both_hooked_modules_is_timed_once(monkeypatch):
    profile = _profile_module()
    clockwork = Clockwork()
    monkeypatch.setattr(profile, "time", clockwork)
    encoder = Encoder(clockwork)
    first = FirstModule(encoder)
    clock = profile.Clock()
    clock.watch_encoders([encoder, first])
    with torch.no_grad():
        encoder(torch.ones(1, 4))  # BERTScore's pass
        first(torch.ones(1, 4))  # Sem-F1's pass through the sentence model
    assert clockwork.now == 2.0
    assert clock.seconds["encoder"] == 2.0  # two passes of one second, each timed once
    assert clock.flops == 2 * (2.0 * 4 * 4)  # each linear call counted once
    for handle in clock.handles:
        handle.remove()


def _run_main(profile, monkeypatch, capsys, *argv: str) -> str:
    monkeypatch.setattr(sys, "argv", ["scorer_profile.py", *argv])
    profile.main()
    return capsys.readouterr().out


def test_no_sizes_below_one(monkeypatch, capsys):
    """``--n 0`` divided the FLOPs by no encoder time, ``--rounds 0`` took the median of nothing and
    ``--batch 0`` cut the pairs in steps of 0: each a traceback, not a usage message."""
    profile = _profile_module()
    for option in ("--n", "--batch", "--rounds"):
        with pytest.raises(SystemExit) as stopped:
            _run_main(profile, monkeypatch, capsys, option, "0")
        assert stopped.value.code == 2, option


def test_pairs_the_encoder_never_sees_give_a_report_not_a_traceback(monkeypatch, capsys):
    """Answers that extract to nothing (a model that never answered, the first rows of an output
    file) are scored without an encoder pass: the encoder's time is 0 and its GFLOP/s and scaling
    are not measured, which the report says instead of dividing by zero."""
    from contextlib import contextmanager

    from narrative_infill.scorers.metrics import loading, pairs

    profile = _profile_module()
    monkeypatch.setattr(profile, "scored_pairs", lambda n: [("", "A gold.")] * n)
    monkeypatch.setattr(pairs, "resolve_backbones", lambda backbone: None)
    monkeypatch.setattr(loading, "wait_loaded", lambda backbones: None)

    @contextmanager
    def instrumented(backbones):
        yield profile.Clock(), (4, 4)

    monkeypatch.setattr(profile, "instrumented", instrumented)
    monkeypatch.setattr(
        profile,
        "one_round",
        lambda batches, backbones, clock: (0.01, {"encoder": 0.0, "lexical": 0.0, "rest": 0.01}, 0.0),
    )
    monkeypatch.setattr(profile, "matmul_gflops", lambda shape: 10.0)
    out = _run_main(profile, monkeypatch, capsys, "--n", "1", "--batch", "1", "--rounds", "1")
    assert out.splitlines()[-1] == "ratio=1.000"


def test_a_failure_while_instrumenting_leaves_the_library_as_it_was(monkeypatch):
    """.ci/smoke_together.py runs the next benchmarks in this process: if setting the hooks up fails
    (an encoder the profile cannot read, no linear layer to compare with), the lexical metrics must
    not stay wrapped and no hook may stay on an encoder."""
    from narrative_infill.scorers.metrics import embedding, pairs

    profile = _profile_module()
    before = {name: getattr(pairs, name) for name in ("rouge1_f1", "meteor", "chrf")}
    encoder = torch.nn.Sequential(torch.nn.ReLU())  # no linear layer: max() of nothing
    monkeypatch.setattr(embedding, "_bertscore_encoder", lambda *args: (None, encoder, "cpu"))
    monkeypatch.setattr(embedding, "_sentence_model", lambda model: [torch.nn.Sequential(torch.nn.ReLU())])
    backbones = types.SimpleNamespace(bertscore_model="m", bertscore_layer=1, semf1_model="m")
    with pytest.raises(ValueError), profile.instrumented(backbones):
        pass
    assert {name: getattr(pairs, name) for name in before} == before
    assert not encoder._forward_hooks and not encoder._forward_pre_hooks
