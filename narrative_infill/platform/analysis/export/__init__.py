"""Exports of logs into other projects' result formats: ``eee`` (Every Eval Ever)."""
