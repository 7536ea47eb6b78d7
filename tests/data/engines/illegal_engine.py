"""A test engine that plays the first legal move, then, from its third move of each game on, plays an illegal move."""
import sys

from engine_base import main

main("illegal", int(sys.argv[1]) if len(sys.argv) > 1 else 2)
