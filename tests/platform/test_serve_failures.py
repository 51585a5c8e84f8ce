"""``serve`` when the model server dies, and a server closed to web pages and to callers without
its key. A stand-in server (``standin_llama_server.py``) plays a llama.cpp built for another CPU."""

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest
from helpers import free_port

from narrative_infill.platform.local.server import (
    LocalModelServer,
    LocalServerError,
    describe_exit,
    port_in_use,
)


def test_exit_statuses_are_named():
    assert describe_exit(0) == "exited with status 0"
    assert describe_exit(3) == "exited with status 3"
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL (killed)"
    sigill = describe_exit(-signal.SIGILL)
    assert sigill.startswith(
        "was killed by SIGILL (illegal instruction): llama-cpp-python was built for another CPU"
    )
    assert "scripts/setup.sh" in sigill


@pytest.mark.subprocess
def test_a_server_dying_at_start_up_is_named_with_its_log(standin, monkeypatch):
    monkeypatch.setenv("STANDIN_DIE_AT_START", "1")
    server = LocalModelServer(standin, port=free_port(), startup_timeout=60)
    with pytest.raises(LocalServerError) as raised:
        server.start()
    message = str(raised.value)
    assert message.startswith("while starting, the model server was killed by SIGILL (illegal instruction)")
    assert "stand-in: executing tileloadd" in message  # the end of the server's log
    log = Path(message.split("end of the server's log (")[1].split("):")[0])
    assert log.is_file()  # a crash's log is kept for the user to read
    log.unlink()


#: A command that needs the server: lists its models, asks for a completion, then waits (like
#: Inspect retrying); it records whether it finished or was stopped.
CLIENT = """
import os, sys, time, urllib.request
base, key, mark = os.environ["LLAMA_CPP_PYTHON_BASE_URL"], os.environ["LLAMA_CPP_PYTHON_API_KEY"], sys.argv[1]
auth = {"Authorization": "Bearer " + key}
urllib.request.urlopen(urllib.request.Request(base + "/models", headers=auth), timeout=5)
try:
    urllib.request.urlopen(urllib.request.Request(base + "/chat/completions", data=b"{}", headers=auth), timeout=5)
except Exception as err:
    open(mark, "w").write("request failed: " + type(err).__name__)
try:
    time.sleep(600)
    open(mark, "w").write("finished")
except KeyboardInterrupt:
    open(mark, "a").write("; interrupted")
    sys.exit(130)
"""


@pytest.mark.subprocess
def test_serve_stops_its_command_and_names_a_sigill_of_the_server(standin, tmp_path):
    mark, port = tmp_path / "client.txt", free_port()
    result = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--model", str(standin), "--port", str(port),
         "--", sys.executable, "-c", CLIENT, str(mark)],
        capture_output=True, text=True, timeout=300, env=os.environ.copy(), check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "the model server was killed by SIGILL (illegal instruction): llama-cpp-python was built" in (
        result.stderr
    ), result.stderr
    assert "stand-in: executing tileloadd" in result.stderr  # the end of the server's log
    assert (
        "the command was asked to stop: SIGINT to its process group; all its processes have ended "
        "(its exit status 130)"
    ) in result.stderr
    assert mark.read_text() == "request failed: RemoteDisconnected; interrupted"
    assert not port_in_use(port)
    Path(result.stderr.split("end of the server's log (")[1].split("):")[0]).unlink()


@pytest.mark.subprocess
def test_an_inspect_eval_through_serve_is_stopped_when_the_server_dies(standin, tmp_path, monkeypatch):
    """The issue's report: the eval waited on connection errors and nothing said the server had died.
    The server's key is in none of what serve, the eval or its log show."""
    logs, key_file = tmp_path / "logs", tmp_path / "key"
    monkeypatch.setenv("STANDIN_KEY_FILE", str(key_file))
    result = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--model", str(standin), "--port", str(free_port()),
         "--", sys.executable, "-m", "inspect_ai", "eval", "narrative_infill/l2", "--model", "llama-cpp-python/smollm2",
         "-T", "data=demo", "--limit", "2", "--max-retries", "2", "--timeout", "120", "--log-dir", str(logs),
         "--display", "plain"],
        capture_output=True, text=True, timeout=300, env=os.environ.copy(), check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "the model server was killed by SIGILL (illegal instruction)" in result.stderr
    # The stand-in answers a completion only with the key: the provider sent serve's key.
    assert "stand-in: executing tileloadd" in result.stderr
    [log] = logs.glob("*.eval")
    from inspect_ai.log import read_eval_log

    assert read_eval_log(str(log), header_only=True).status == "cancelled"
    key = key_file.read_text()
    assert len(key) >= 32 and key not in result.stdout + result.stderr
    with zipfile.ZipFile(log) as archive:
        assert not [name for name in archive.namelist() if key.encode() in archive.read(name)]
    Path(result.stderr.split("end of the server's log (")[1].split("):")[0]).unlink()


@pytest.mark.subprocess
def test_each_server_gets_its_own_random_key(standin):
    first, second = LocalModelServer(standin), LocalModelServer(standin)
    assert first.api_key != second.api_key and len(first.api_key) >= 32
    assert first.environment()["LLAMA_CPP_PYTHON_API_KEY"] == first.api_key


def _get(url: str, headers: dict[str, str], method: str = "GET") -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers)


@pytest.mark.local_server
def test_the_real_server_refuses_callers_without_the_key_and_web_pages():
    with LocalModelServer(port=free_port()) as server:
        models, key = f"{server.base_url}/models", {"Authorization": f"Bearer {server.api_key}"}
        assert _get(models, {})[0] == 401
        assert _get(models, {"Authorization": "Bearer local"})[0] == 401
        evil = {"Origin": "http://evil.example"}
        status, headers = _get(models, {**key, **evil})
        assert status == 200
        assert not [name for name in headers if name.lower().startswith("access-control-")], headers
        preflight = {
            **evil,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization",
        }
        status, headers = _get(f"{server.base_url}/chat/completions", preflight, method="OPTIONS")
        assert status != 200 and "access-control-allow-origin" not in {n.lower() for n in headers}


def test_the_provider_sends_the_key_serve_set_and_keeps_an_explicit_one(monkeypatch):
    from inspect_ai.model import get_model

    monkeypatch.setenv("LLAMA_CPP_PYTHON_API_KEY", "key-from-serve")
    url = "http://127.0.0.1:9/v1"
    assert get_model("llama-cpp-python/smollm2", base_url=url, memoize=False).api.api_key == "key-from-serve"
    explicit = get_model("llama-cpp-python/smollm2", base_url=url, api_key="mine", memoize=False)
    assert explicit.api.api_key == "mine"
    monkeypatch.delenv("LLAMA_CPP_PYTHON_API_KEY")
    assert (
        get_model("llama-cpp-python/smollm2", base_url=url, memoize=False).api.api_key == "llama-cpp-python"
    )


def test_the_setup_smoke_names_a_library_that_dies_with_sigill(monkeypatch, tmp_path, capsys):
    """setup.sh's last step: the generation runs in a child, so a SIGILL is reported, not fatal."""
    from narrative_infill.platform.local import smoke

    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(smoke, "default_gguf", lambda: model)
    crash = "import os, signal\nprint('loading ggml-cpu', flush=True)\nos.kill(os.getpid(), signal.SIGILL)\n"
    monkeypatch.setattr(smoke, "GENERATE", crash)
    assert smoke.main() == 1
    error = capsys.readouterr().err
    assert error.startswith("llama.cpp smoke generation FAILED: llama.cpp could not generate from model.gguf")
    assert "was killed by SIGILL (illegal instruction): llama-cpp-python was built for another CPU" in error
    assert "loading ggml-cpu" in error  # the end of its output


def test_the_setup_smoke_fails_when_nothing_was_generated(monkeypatch, tmp_path):
    """A library that loads and returns no tokens has not shown that it can run."""
    from narrative_infill.platform.local import smoke

    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(smoke, "default_gguf", lambda: model)
    monkeypatch.setattr(smoke, "GENERATE", "print('0 tokens in 0.01 s: \\'\\'')")
    with pytest.raises(LocalServerError, match="generated no tokens"):
        smoke.smoke_generation()


@pytest.mark.subprocess
def test_serve_with_a_command_that_cannot_start_says_so_and_stops_the_server(standin):
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--model", str(standin), "--port", str(port),
         "--", "inpsect-typo", "eval"],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr
    assert "narrative-infill serve: cannot run inpsect-typo: No such file or directory" in result.stderr
    assert not port_in_use(port)


@pytest.mark.subprocess
def test_serve_without_a_command_ends_naming_the_death_of_its_server(standin):
    """`serve` alone (the user evals from another shell): the server's SIGILL ends it, by name."""
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--model", str(standin), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        exports = {}
        for line in serve.stdout:
            if line.strip().startswith("export "):
                name, value = line.strip().removeprefix("export ").split("=", 1)
                exports[name] = value
            if "Ctrl-C stops the server" in line:
                break
        request = urllib.request.Request(
            exports["LLAMA_CPP_PYTHON_BASE_URL"] + "/chat/completions",
            data=b"{}",
            headers={"Authorization": "Bearer " + exports["LLAMA_CPP_PYTHON_API_KEY"]},
        )
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(request, timeout=10)
        assert serve.wait(timeout=60) == 1
        error = serve.stderr.read()
    finally:
        serve.kill()
        serve.wait()
    assert "narrative-infill serve: the model server was killed by SIGILL (illegal instruction)" in error, (
        error
    )
    assert "stand-in: executing tileloadd" in error
    assert not port_in_use(port)
    Path(error.split("end of the server's log (")[1].split("):")[0]).unlink()


@pytest.mark.subprocess
def test_serve_stops_the_server_when_its_command_ends_first_and_passes_on_its_status(standin):
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--model", str(standin), "--port", str(port),
         "--", sys.executable, "-c", "import sys; sys.exit(3)"],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "model server" not in result.stderr, result.stderr  # it was stopped, not reported dead
    assert not port_in_use(port)
