"""Bridges to other game-AI libraries (optional extras): :mod:`jitsearch.interop.openspiel`."""
