"""The Jupyter surface: magics, widgets and display (issue: notebook surface)."""
