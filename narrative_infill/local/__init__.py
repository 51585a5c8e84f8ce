"""The offline runtime: the llama.cpp server wrapper (``server``; ``llama_server`` runs it closed to
web pages, ``provider_key`` hands its key to Inspect's provider), the setup check (``smoke``) and
NLTK data setup (``nltk_data``), so the benchmark runs with no model hub."""
