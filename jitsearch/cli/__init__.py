"""The ``jitsearch`` command-line interface."""

from .app import app, main

__all__ = ["app", "main"]
