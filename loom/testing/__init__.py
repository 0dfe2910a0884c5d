"""Helpers for testing Loom itself and measuring it against corpora (no pytest dependency)."""
