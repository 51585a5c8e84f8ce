"""The results platform around the benchmark core: the `narrative-infill` command (cli), report,
submission, board, annotation, import and export (analysis), local serving (local), the grid (grid)
and the lm-evaluation-harness tasks (lm_eval). It imports the core; the core imports nothing from
here (tests/core/test_layout.py checks it)."""
