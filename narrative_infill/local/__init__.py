"""The offline runtime: the llama.cpp server wrapper (``server``) and NLTK data setup
(``nltk_data``), so the benchmark runs with no model hub."""
