"""``python -m pytest_plangraph`` runs the ``plangraph`` command."""

from .cli import run

run()
