"""Canonical Loom text: tokenizer, parser and printer."""
