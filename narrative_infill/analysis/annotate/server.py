"""The rating page's local server: ``narrative-infill annotate``.

Python's own ``http.server`` (no dependency to keep up, nothing from a network): one page
(``page.html``, inline CSS and JS) and a small JSON API. Bound to 127.0.0.1 by default. One
annotator per server; a second server for the same annotator name is refused while the first
runs (a lock file holding its process id).
"""

from __future__ import annotations

import json
import os
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from ...scorers.judge.prompt import dimension_definitions
from .study import Ratings, StudyError, blank_marked, export, order_for


class AnnotationServerError(RuntimeError):
    """The server cannot start: port taken, or the annotator already rating elsewhere."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AnnotatorLock:
    """``.lock-<annotator>`` in the study folder while this annotator's server runs."""

    def __init__(self, folder: Path, annotator: str):
        self.path = Path(folder) / f".lock-{annotator}"
        self.annotator = annotator

    def acquire(self) -> None:
        if self.path.is_file():
            pid = int(self.path.read_text().strip() or 0)
            if pid and pid != os.getpid() and _alive(pid):
                raise AnnotationServerError(
                    f"annotator {self.annotator!r} is already rating in this study (server process {pid}); "
                    "two people need two names"
                )  # fmt: skip
        self.path.write_text(str(os.getpid()))

    def release(self) -> None:
        if self.path.is_file() and self.path.read_text().strip() == str(os.getpid()):
            self.path.unlink()


class Study:
    """What the page needs: the items in this annotator's order, and their ratings."""

    def __init__(self, folder: Path, manifest: dict[str, Any], annotator: str):
        self.folder, self.manifest = Path(folder), manifest
        self.ratings = Ratings(folder, annotator)
        self.order = order_for(manifest, annotator)
        self.items = {item["item"]: item for item in manifest["items"]}

    def state(self) -> dict[str, Any]:
        rated = self.ratings.load()
        first_open = next((i for i, item in enumerate(self.order) if item not in rated), len(self.order))
        return {"annotator": self.ratings.annotator, "total": len(self.order), "rated": len(rated),
                "current": first_open, "dimensions": dimension_definitions()}  # fmt: skip

    def item(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self.order):
            raise StudyError(f"no item {index}")
        item = self.items[self.order[index]]
        return {"index": index, "item": item["item"], **blank_marked(item["problem"], item["answer"]),
                "rating": self.ratings.load().get(item["item"])}  # fmt: skip

    def rate(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("item") not in self.items:
            raise StudyError(f"unknown item {body.get('item')!r}")
        self.ratings.add(body["item"], body.get("scores") or {}, str(body.get("note") or ""))
        export(self.folder, self.manifest)
        return self.state()


def make_handler(study: Study, page: str):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: Any) -> None:
            self._send(status, json.dumps(value).encode(), "application/json")

        def do_GET(self):  # noqa: N802 (http.server's name)
            try:
                if self.path in ("/", "/index.html"):
                    self._send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8")
                elif self.path == "/api/state":
                    self._json(HTTPStatus.OK, study.state())
                elif self.path.startswith("/api/item/"):
                    self._json(HTTPStatus.OK, study.item(int(self.path.rsplit("/", 1)[1])))
                else:
                    self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            except (StudyError, ValueError) as err:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})

        def do_POST(self):  # noqa: N802
            try:
                if self.path != "/api/rate":
                    return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
                length = int(self.headers.get("Content-Length") or 0)
                self._json(HTTPStatus.OK, study.rate(json.loads(self.rfile.read(length) or b"{}")))
            except (StudyError, ValueError) as err:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})

        def log_message(self, *args):  # quiet: the terminal shows progress lines instead
            pass

    return Handler


def port_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(
            socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
        )  # as the server binds: a closed one's TIME_WAIT is no owner
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def serve(folder: Path, manifest: dict[str, Any], annotator: str, host: str, port: int) -> None:
    """Serve until interrupted; every rating is on disk before its request is answered."""
    if not port_free(host, port):
        raise AnnotationServerError(f"port {port} on {host} is already in use; choose another with --port")
    lock = AnnotatorLock(folder, annotator)
    lock.acquire()
    try:
        page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
        study = Study(folder, manifest, annotator)
        server = ThreadingHTTPServer((host, port), make_handler(study, page))
        state = study.state()
        print(
            f"rating page for {annotator}: http://{host}:{port}/  ({state['rated']} of {state['total']} rated; Ctrl-C stops)",
            flush=True,
        )
        try:
            server.serve_forever()
        finally:
            server.server_close()
    finally:
        lock.release()
