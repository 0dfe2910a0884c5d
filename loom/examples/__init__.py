"""Small, self-contained example frontends that build Loom through the public API."""
