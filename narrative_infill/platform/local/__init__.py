"""The offline runtime: the llama.cpp server wrapper (``server``; ``llama_server`` runs it closed to
web pages, ``provider_key`` hands its key to Inspect's provider), and the setup check (``smoke``),
so the benchmark runs with no model hub. (NLTK's data, which the metrics and data rooms need too,
is the shared module ``narrative_infill.nltk_data``.)"""
