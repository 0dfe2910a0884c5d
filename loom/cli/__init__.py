"""Command-line tools: loom-format and loom-run."""
