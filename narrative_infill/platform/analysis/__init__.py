"""Reading results: ``report/`` (the paper's tables from logs), ``importer`` (existing
generations as Inspect logs) and ``extraction_eval`` (extraction against labels)."""
