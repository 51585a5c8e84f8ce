"""The two steps of every narrative_infill task: build the prompt, generate the infill."""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ..errors import OptionError
from ..inspect_compat import active_generate_config
from ..paper_protocol import CAP_FACTOR, PAPER_PROMPT_VARIANT, output_cap
from ..prompts import prompt_template
from .served_context import fit_served_context
from .valid_output import make_output_valid


@solver
def infill_prompt(
    template: str, variant: str = PAPER_PROMPT_VARIANT, system_role: bool = False, unit: str | None = None
) -> Solver:
    """Replace the conversation with the rendered benchmark prompt.

    Args:
        template: the task's template (l0..l4, abductive, causal, cot, counterfactual).
        variant: ``paper`` (Appendix B) or one of the published code's variants.
        system_role: send the system text as a system message. Off by default because
            some chat templates (Gemma-2) reject a system role; the text then leads the
            user turn as ``f"{system}\\n\\n{prompt}"``, exactly the authors' fallback.
        unit: text for the ``{{unit}}`` slot; by default the record's ``unit`` column
            (``sentence(s)`` throughout the published data), which is what the slot held
            when the authors ran these templates.
    """
    prompt = prompt_template(template, variant)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        slots = {
            "problem": state.input_text,
            "n": state.metadata["n"],
            "unit": unit or state.metadata["unit"],
        }
        state.messages = [
            ChatMessageSystem(content=text) if role == "system" else ChatMessageUser(content=text)
            for role, text in prompt.conversation(slots, system_role)
        ]
        return state

    return solve


def _user_max_tokens() -> int | None:
    """A cap the user set: Inspect's ``GenerateConfig.max_tokens`` in force (``--max-tokens``
    over the task's ``-T max_tokens``, Inspect's own order), else the model's."""
    model = get_model()
    return active_generate_config().max_tokens or model.config.max_tokens


def check_cap_factor(max_tokens_factor: float) -> None:
    """Refuse a per-sample cap factor that is not a positive number."""
    if type(max_tokens_factor) not in (int, float) or max_tokens_factor <= 0:
        raise OptionError(f"max_tokens_factor must be positive (a number), got {max_tokens_factor!r}")


@solver
def generate_infill(max_tokens_factor: float = CAP_FACTOR, template: str = "l0") -> Solver:
    """Generate with the output cap of ``paper_protocol.output_cap``: the user's (Inspect's
    ``max_tokens``), else the template's fixed room (reasoning paradigms), else per sample.

    Args:
        max_tokens_factor: multiple of the gold span's length (``gold_tokens`` metadata,
            words plus punctuation marks) used as the per-sample cap (the paper: 2).
        template: the task's template (l0..l4, abductive, causal, cot, counterfactual): a
            reasoning paradigm gets ``paper_protocol.REASONING_MAX_TOKENS`` when the user sets no cap.

    The sample's metadata records the cap (``max_tokens``) and where it came from
    (``max_tokens_rule``: ``user``, ``task_default`` or ``per_sample``), and the epoch it was
    generated in (``epoch``: a record relabelled to another epoch afterwards, the best of several
    kept as epoch 1, says otherwise; ``verify`` compares them); on a vLLM server, a cap
    the served context cannot hold beside the prompt is lowered and says why (``max_tokens_limit``).
    The output is made valid Unicode as it arrives (``valid_output``; ``output_replaced_chars`` when
    anything was replaced).
    """
    check_cap_factor(max_tokens_factor)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cap, rule = output_cap(template, state.metadata["gold_tokens"], _user_max_tokens(), max_tokens_factor)
        state.metadata["max_tokens_rule"] = rule
        state.metadata["epoch"] = state.epoch
        state.metadata["max_tokens"] = cap = await fit_served_context(get_model(), state, cap)
        state = await generate(state, max_tokens=cap)
        make_output_valid(state)
        return state

    return solve
