"""What the honest-entry suites share (tests/platform/test_honest_entries.py, the fast kinds;
test_honest_baselines.py, every ``baseline/<rule>``; test_honest_local.py, SmolLM2 through ``serve``):
each entry submitted and verified as an entrant runs the commands, the board built over them in a
fresh process, and every outcome sorted into verified / consistent / refused per kind and step.

An honest entry is one whose logs are exactly what Inspect wrote for a real run: every refusal of
one is a false refusal, a defect like a false "verified" (issue 57). The only "consistent with its
logs" accepted is the documented one that names only what cannot be checked here: the drawn
``--sample``, and what a test names as out of reach on this machine (``unreadable``)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from inspect_ai import eval

from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

BIN = Path(sys.executable).parent
#: How many samples ``verify --sample K`` re-scores: another batch than the whole entry's.
SAMPLE_K = 5
#: What a ``consistent with its logs`` verdict may name as not checked here: the drawn ``--sample``.
SAMPLED = "metrics re-scored on "
VERIFIED, CONSISTENT, REFUSED = "verified", "consistent", "refused"


@dataclass(frozen=True)
class Outcome:
    """One command's verdict on one entry: the step (``submit``, ``verify``, ``verify --sample 5``,
    ``board``), its category and the message an entrant reads."""

    kind: str
    entry: str
    step: str
    category: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.entry} {self.step}: {self.category}: {self.message}"


def _category(verdict: str, unchecked: list[str], allowed: tuple[str, ...]) -> str:
    """verified, consistent (only for what ``allowed`` names as not checkable here), else refused."""
    if verdict.startswith("verified"):
        return VERIFIED
    if verdict.startswith("consistent with its logs") and all(u.startswith(allowed) for u in unchecked):
        return CONSISTENT
    return REFUSED


def _run_cli(argv: list[str]) -> tuple[int, str]:
    """``narrative-infill ARGV`` in this process: its exit status and what it printed (a crash is
    a refusal too, with its exception)."""
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        try:
            status = main(argv)
        except Exception as err:  # noqa: BLE001 - an honest entry's crash is reported, not raised
            return -1, f"{out.getvalue()}crashed: {err!r}"
    return status, out.getvalue()


def submit(kind: str, entry: str, logs: Path, output: Path, track: str) -> Outcome:
    """``narrative-infill submit LOGS -o OUTPUT --track TRACK``: refused when it writes nothing."""
    status, printed = _run_cli(["submit", str(logs), "-o", str(output), "--track", track])
    rescored = status == 0 and output.is_file() and "metrics re-scored here" in printed
    return Outcome(kind, entry, "submit", VERIFIED if rescored else REFUSED, printed.strip()[-2000:])


def verify(
    kind: str,
    entry: str,
    submission: Path,
    logs: Path,
    sample: int | None = None,
    unreadable: tuple[str, ...] = (),
) -> Outcome:
    """``narrative-infill verify SUBMISSION --logs LOGS [--sample K]``; the verdict and what it names
    are read from the record verify writes beside the submission. ``unreadable``: what the verdict
    may name as not checked here besides the drawn sample (a check that cannot run on this machine)."""
    if not submission.is_file():
        return Outcome(kind, entry, _verify_step(sample), REFUSED, "nothing to verify: submit refused")
    argv = ["verify", str(submission), "--logs", str(logs)]
    argv += ["--sample", str(sample)] if sample is not None else []
    stored = Path(f"{submission}.verification.json")
    stored.unlink(missing_ok=True)  # an earlier run's record must not stand for this one
    status, printed = _run_cli(argv)
    if not stored.is_file():
        return Outcome(kind, entry, _verify_step(sample), REFUSED, printed.strip()[-2000:])
    record = json.loads(stored.read_text(encoding="utf-8"))
    allowed = (*unreadable, *((SAMPLED,) if sample is not None else ()))
    category = _category(record["verdict"], record["unchecked"], allowed) if status == 0 else REFUSED
    message = "; ".join([record["verdict"], *record["failures"]])
    return Outcome(kind, entry, _verify_step(sample), category, message)


def _verify_step(sample: int | None) -> str:
    return "verify" if sample is None else f"verify --sample {sample}"


def checked(
    root: Path, kind: str, entry: str, track: str = "demo", unreadable: tuple[str, ...] = ()
) -> list[Outcome]:
    """An entrant's three commands on ``root/logs/ENTRY``: submit to ``root/submissions/ENTRY.json``,
    verify on every sample, verify ``--sample 5``."""
    logs, submission = root / "logs" / entry, root / "submissions" / f"{entry}.json"
    submission.parent.mkdir(parents=True, exist_ok=True)
    return [
        submit(kind, entry, logs, submission, track),
        verify(kind, entry, submission, logs, unreadable=unreadable),
        verify(kind, entry, submission, logs, sample=SAMPLE_K, unreadable=unreadable),
    ]


def demo_eval(root: Path, entry: str, model, settings=("l2",), **eval_args) -> None:
    """``model`` on the demo set (MiniLM backbones, judged when a grader role is given), its logs in
    ``root/logs/ENTRY``."""
    for setting in settings:
        [log] = eval(
            infill_task(setting, data="demo", backbone="minilm", judge="model_roles" in eval_args),
            model=model, log_dir=str(root / "logs" / entry), display="none", **eval_args,
        )  # fmt: skip
        assert log.status == "success", log.error


def assert_honest(outcomes: list[Outcome], entries: set[str]) -> None:
    """Every entry went through every step and none was refused (a "consistent" verdict counts as
    refused unless it names only what cannot be checked here); the counts printed first."""
    print(counts(outcomes))
    assert {o.entry for o in outcomes} == entries
    refused = false_refusals(outcomes)
    assert not refused, "honest entries refused:\n" + "\n".join(refused)


def board(
    kinds: dict[str, str], submissions: Path, logs: Path, site: Path, consistent: tuple[str, ...] = ()
) -> list[Outcome]:
    """``narrative-infill leaderboard SUBMISSIONS --logs LOGS -o SITE`` in a fresh process (the CLI,
    as a board host runs it): every entry re-scored there, beside the others. ``kinds``: each
    submission file's stem -> its kind; ``consistent``: the entries that may be badged "consistent
    with its logs" (``verify`` named what cannot be checked here). A board that refuses to be
    written refuses every entry."""
    run = subprocess.run(
        [str(BIN / "narrative-infill"), "leaderboard", str(submissions), "--logs", str(logs),
         "-o", str(site)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if run.returncode != 0:
        message = (run.stderr or run.stdout).strip()[-2000:]
        return [Outcome(kind, entry, "board", REFUSED, message) for entry, kind in kinds.items()]
    rows = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))["rows"]
    badges = {Path(row["file"]).stem: row["badge"] for row in rows if not row["baseline"]}
    outcomes = []
    for entry, kind in kinds.items():
        badge = badges.get(entry, "absent from the board")
        category = VERIFIED if badge == "verified" else REFUSED
        if badge == "consistent with its logs" and entry in consistent:
            category = CONSISTENT
        outcomes.append(Outcome(kind, entry, "board", category, badge))
    return outcomes


def counts(outcomes: list[Outcome]) -> str:
    """One line per kind and step: how many entries came out verified, consistent and refused."""
    tally = Counter((o.kind, o.step, o.category) for o in outcomes)
    lines = []
    for kind, step in dict.fromkeys((o.kind, o.step) for o in outcomes):
        cells = ", ".join(f"{tally[(kind, step, c)]} {c}" for c in (VERIFIED, CONSISTENT, REFUSED))
        lines.append(f"{kind:>10} {step:<18} {cells}")
    return "\n".join(lines)


def false_refusals(outcomes: list[Outcome]) -> list[str]:
    """Every outcome that refused an honest entry, with the message an entrant would read."""
    return [str(o) for o in outcomes if o.category == REFUSED]
