"""Jupyter server extension: thin REST handlers over the run store (never imports torch)."""
