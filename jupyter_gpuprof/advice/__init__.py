"""Advice: analysis results -> a verdict and ranked findings, as data (never rendered here)."""
