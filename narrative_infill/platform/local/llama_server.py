"""llama-cpp-python's OpenAI-compatible server, closed to web pages: ``python -m`` this module
takes ``llama_cpp.server``'s arguments.

``llama_cpp.server`` answers every Origin (``CORSMiddleware`` with ``allow_origins=["*"]`` and
credentials), so any page open in the user's browser could drive the local model. Here the same
app is built with ``create_app``, that middleware is removed (no ``access-control-allow-*``
header is ever sent, so browsers refuse cross-origin reads), and every request needs the key in
``$NARRATIVE_INFILL_SERVER_API_KEY`` (read from the environment, never from the command line,
which other local users can list).
"""

from __future__ import annotations

import argparse
import os
import sys

#: The variable the server reads its API key from; ``serve`` sets it to a fresh random key.
API_KEY_VARIABLE = "NARRATIVE_INFILL_SERVER_API_KEY"


def closed_app(server_settings, model_settings):
    """``llama_cpp.server``'s app without its allow-every-origin CORS middleware."""
    from fastapi.middleware.cors import CORSMiddleware
    from llama_cpp.server.app import create_app

    app = create_app(server_settings=server_settings, model_settings=model_settings)
    # Starlette builds its middleware stack on the first request, from this list.
    app.user_middleware = [entry for entry in app.user_middleware if entry.cls is not CORSMiddleware]
    return app


def main(argv: list[str] | None = None) -> int:
    import uvicorn
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    api_key = os.environ.get(API_KEY_VARIABLE)
    if not api_key:
        print(f"{API_KEY_VARIABLE} is not set: refusing to serve without an API key", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_args_from_model(parser, Settings)
    args = parser.parse_args(argv)
    args.api_key = api_key
    server_settings = parse_model_from_args(ServerSettings, args)
    app = closed_app(server_settings, [parse_model_from_args(ModelSettings, args)])
    uvicorn.run(app, host=server_settings.host, port=server_settings.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
