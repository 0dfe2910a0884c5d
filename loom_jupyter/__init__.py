"""Jupyter workbench for Loom (rich display, %%loom magic, stepper widget)."""
