"""Benchmark data: ``records`` (schema, validation, position), ``dataset`` (records ->
Inspect samples), ``sources`` and ``builder`` (raw corpora -> records), ``jsonl`` and
``text`` helpers, and the bundled ``demo.jsonl``."""
