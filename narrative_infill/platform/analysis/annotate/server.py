"""The rating page's local server: ``narrative-infill annotate``.

Python's own ``http.server`` (no dependency to keep up, nothing from a network): one page
(``page.html``, inline CSS and JS) and a small JSON API. Bound to 127.0.0.1 by default. One
annotator per server; a second server for the same annotator name is refused while the first
runs (an flock on its lock file, released by the kernel if the server is killed).

Any page the annotator visits can send requests to 127.0.0.1, so the server answers only its
own page: a request whose ``Host`` or ``Origin`` is not the server's own address is refused (a
DNS-rebinding page carries its own name), a save needs the study's secret (``.page-token``,
written into the page when it loads and sent back as ``X-Rating-Token``, which no other page
can read or send without a preflight this server never grants) and ``Content-Type:
application/json``, and a body over 64 KB is refused before it is read. The page cannot be
framed by another page either (clickjacking would send the token on the annotator's keys).
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import ipaddress
import json
import os
import secrets
import socket
import tempfile
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ....errors import NarrativeInfillError
from ....scorers.judge.prompt import dimension_definitions
from ...local.process_group import interrupted_by_signals
from .study import EXPORT, Ratings, StudyError, blank_marked, export, order_for, ratings_files

TOKEN = ".page-token"
TOKEN_HEADER = "X-Rating-Token"
MAX_BODY = 64 * 1024
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'none'",
}


class AnnotationServerError(NarrativeInfillError, RuntimeError):
    """The server cannot start: port taken, or the annotator already rating elsewhere."""


class RatingKeptExportFailed(NarrativeInfillError, RuntimeError):
    """The rating is on disk but ``ratings.csv`` was not rewritten: answered as saved, with why."""


class AnnotatorLock:
    """``.lock-<annotator>`` in the study folder, ``flock``-ed while this annotator's server runs.

    The kernel holds the lock, not the process id in the file (kept only for the message): a
    server killed with -9 leaves a file whose id may be another program's by the next start.
    """

    def __init__(self, folder: Path, annotator: str):
        self.path = Path(folder) / f".lock-{annotator}"
        self.annotator = annotator

    def acquire(self) -> None:
        while True:
            handle = open(self.path, "a+")  # noqa: SIM115 (held open, and locked, while the server runs)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "?"
                handle.close()
                raise AnnotationServerError(
                    f"annotator {self.annotator!r} is already rating in this study (server process "
                    f"{holder}); "
                    "two people need two names"
                ) from None
            if self.path.exists() and os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino:
                break
            handle.close()  # a server that stopped meanwhile removed the file this handle locked
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        self.path.unlink()  # while still locked: a server starting now locks a new file
        self.handle.close()


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
        return {
            "annotator": self.ratings.annotator,
            "total": len(self.order),
            "rated": len(rated),
            "current": first_open,
            "dimensions": dimension_definitions(),
        }

    def item(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self.order):
            raise StudyError(f"no item {index}")
        item = self.items[self.order[index]]
        return {
            "index": index,
            "item": item["item"],
            **blank_marked(item["problem"], item["answer"]),
            "rating": self.ratings.load().get(item["item"]),
        }

    def rate(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise StudyError("a rating is a JSON object with 'item', 'scores' and 'note'")
        item, note = body.get("item"), body.get("note")
        if not isinstance(item, str) or item not in self.items:
            raise StudyError(f"unknown item {item!r}")
        if note is None:
            note = ""
        if not isinstance(note, str):
            raise StudyError("'note' must be text")
        self.ratings.add(item, body.get("scores"), note)
        try:
            export(self.folder, self.manifest)
        except (StudyError, OSError, ValueError) as err:  # a damaged or unreadable file, an unwritable export
            raise RatingKeptExportFailed(
                f"Saved in {self.ratings.path.name}, but {EXPORT} (what report --human reads) was not "
                f"rewritten: {err}. The next save, or a restart of this server, rewrites it once that "
                "is fixed."
            ) from None
        return self.state()


def study_token(folder: Path) -> str:
    """The study's page secret: drawn once and kept in the folder (readable by its owner only), so a
    page opened before a server was killed still saves after it restarts."""
    path = Path(folder) / TOKEN
    if not path.is_file():
        handle, partial = tempfile.mkstemp(prefix=f"{TOKEN}.", suffix=".partial", dir=folder)  # mode 0600
        try:
            with os.fdopen(handle, "w") as out:
                out.write(secrets.token_urlsafe(32))
            with contextlib.suppress(FileExistsError):
                os.link(partial, path)  # created whole, and only once: servers starting together agree
        finally:
            os.unlink(partial)
    token = path.read_text().strip()
    if len(token) < 32:
        raise AnnotationServerError(f"{path}: not a page secret (edited?); delete it to draw a new one")
    return token


class OwnAddress:
    """What ``Host`` and ``Origin`` may name: the address the server is bound to (with 'localhost'
    for the loopback; any IP literal for a wildcard bind, since a rebinding page names its domain)."""

    def __init__(self, host: str, port: int):
        self.port, self.names, self.wildcard = port, {host.lower()}, host in ("", "0.0.0.0", "::")
        if self.wildcard or host == "localhost" or _loopback(host):
            self.names |= {"localhost", "127.0.0.1"}

    def _names(self, hostname: str | None, port: int | None) -> bool:
        if hostname is None or (port or 80) != self.port:
            return False
        return hostname in self.names or (self.wildcard and _ip_literal(hostname) is not None)

    def host(self, value: str | None) -> bool:
        try:
            parts = urlsplit(f"//{value}")
            return bool(value) and parts.path == "" and self._names(parts.hostname, parts.port)
        except ValueError:  # a port that is no number
            return False

    def origin(self, value: str) -> bool:
        try:
            parts = urlsplit(value)
            return parts.scheme == "http" and parts.path == "" and self._names(parts.hostname, parts.port)
        except ValueError:
            return False


def _ip_literal(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``name`` spells, or None for a host name."""
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(name)
    return None


def _loopback(name: str) -> bool:
    address = _ip_literal(name)
    return address is not None and address.is_loopback


class RatingHandler(BaseHTTPRequestHandler):
    """One request to a study's server: the page, the study's state and items, and ratings.
    ``make_handler`` binds it to a study (http.server builds one handler per request)."""

    study: Study
    page: str
    token: str
    own: OwnAddress

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in _HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _refuse(self, status: int, why: str) -> None:
        self.close_connection = True  # any body stays unread
        self._json(status, {"error": why})

    def _foreign(self) -> bool:
        """Refused unless it names this server: DNS rebinding, or another page's request."""
        if not self.own.host(self.headers.get("Host")):
            self._refuse(HTTPStatus.FORBIDDEN, "Host is not this server's address")
            return True
        origin = self.headers.get("Origin")
        if origin is not None and not self.own.origin(origin):
            self._refuse(HTTPStatus.FORBIDDEN, "the request comes from another page")
            return True
        return False

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self._foreign():
            return
        try:
            if self.path in ("/", "/index.html"):
                self._send(HTTPStatus.OK, self.page.encode(), "text/html; charset=utf-8")
            elif self.path == "/api/state":
                self._json(HTTPStatus.OK, self.study.state())
            elif self.path.startswith("/api/item/"):
                self._json(HTTPStatus.OK, self.study.item(int(self.path.rsplit("/", 1)[1])))
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
        except (StudyError, ValueError) as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})

    def _refusal(self) -> tuple[HTTPStatus, str] | None:
        """Why a rating request is refused before its body is read (None: it may be read)."""
        if not hmac.compare_digest(self.headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
            return HTTPStatus.FORBIDDEN, "not this study's page (reload it)"
        if self.headers.get_content_type() != "application/json":  # text/plain when absent
            return HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send Content-Type: application/json"
        length = self.headers.get("Content-Length")
        if length is None:
            return HTTPStatus.LENGTH_REQUIRED, "Content-Length is required"
        if not (length.isascii() and length.isdigit()):
            return HTTPStatus.BAD_REQUEST, f"Content-Length {length!r} is not a length"
        if int(length) > MAX_BODY:
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a rating is at most {MAX_BODY} bytes"
        return None

    def do_POST(self):  # noqa: N802
        if self._foreign():
            return
        if self.path != "/api/rate":
            return self._refuse(HTTPStatus.NOT_FOUND, "not found")
        refusal = self._refusal()
        if refusal is not None:
            return self._refuse(*refusal)
        self._rate(self.rfile.read(int(self.headers["Content-Length"])))

    def _rate(self, body: bytes) -> None:
        """Save a rating. Every failure says whether it is on disk ("saved"): the page moves on only if so."""
        try:
            self._json(HTTPStatus.OK, self.study.rate(json.loads(body)))
        except RatingKeptExportFailed as err:
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(err), "saved": True})
        except (StudyError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError included
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err), "saved": False})
        except RecursionError:
            self._json(
                HTTPStatus.BAD_REQUEST, {"error": "not a rating: JSON nested too deep", "saved": False}
            )
        except OSError as err:  # the ratings file cannot be written: say so, never drop the answer
            self._json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"cannot write the rating: {err}", "saved": False}
            )

    def log_message(self, *args):  # quiet: the terminal shows progress lines instead
        pass


def make_handler(study: Study, page: str, token: str, own: OwnAddress) -> type[RatingHandler]:
    """The request handler of one study's server, bound to its study, page, token and address."""
    return type("Handler", (RatingHandler,), {"study": study, "page": page, "token": token, "own": own})


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
        token = study_token(folder)
        page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
        page = page.replace("__RATING_TOKEN__", token)
        study = Study(folder, manifest, annotator)
        if ratings_files(folder):  # a server killed between a save and its export
            export(folder, manifest)
        server = ThreadingHTTPServer((host, port), make_handler(study, page, token, OwnAddress(host, port)))
        state = study.state()
        print(
            f"rating page for {annotator}: http://{host}:{port}/  ({state['rated']} of {state['total']} "
            f"rated; Ctrl-C stops)",
            flush=True,
        )
        try:
            with interrupted_by_signals():
                server.serve_forever()
        finally:
            server.server_close()
    finally:
        lock.release()
