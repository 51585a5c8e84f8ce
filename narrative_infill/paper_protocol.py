"""The paper's protocol, each value once: what a run must use to be the paper's run.

Decoding (§3.2), the output-cap rule, the published data's size (§3.1), the judge and its
temperature (§3.4) and the scoring backbones (§3.3). The tasks, the solver, the submission
tracks, the grid, the report's comparison with the paper and the Register entry (``eval.yaml``,
checked by a test) read them from here, so a reader finds each choice in one place and a change
to one moves every reader. Imports nothing from the package, so any room may import it.
"""

from __future__ import annotations

#: Decoding of every generation (§3.2: "temperature = 0.8, top-p = 0.9").
TEMPERATURE = 0.8
TOP_P = 0.9

#: The output cap of the TELeR levels: this many times the masked span's length (§3.2: "a maximum
#: output length set to twice the length of the masked span"), at least one token.
CAP_FACTOR = 2.0
#: The output cap of the reasoning-paradigm tasks: the published code's ``max_tokens``, under
#: which the authors' own generations were made (their DeepSeek-R1 traces run to ~4,400 words
#: and punctuation marks). Those prompts ask for reasoning before the tagged answer, so twice
#: the gold span would cut almost every reply before its answer.
REASONING_MAX_TOKENS = 4096

#: The published benchmark: 9,142 instances (§3.1) masked from 3,823 narratives ("base samples").
PUBLISHED_INSTANCES = 9142
PUBLISHED_NARRATIVES = 3823

#: The paper's judge (§3.4: GPT-4.1-mini, version 2025-04-14) as Inspect names it, and its
#: temperature ("to ensure deterministic evaluation").
JUDGE_MODEL = "openai/gpt-4.1-mini"
JUDGE_TEMPERATURE = 0.0

#: The scoring backbones (§3.3): BERTScore on roberta-large's layer 17 (bert-score's default for
#: it), Sem-F1 on paraphrase-distilroberta.
BERTSCORE_MODEL = "roberta-large"
BERTSCORE_LAYER = 17
SEMF1_MODEL = "sentence-transformers/paraphrase-distilroberta-base-v1"
