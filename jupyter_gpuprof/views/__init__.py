"""Renderings of a report summary (the JSON object): text, static HTML, widgets."""
