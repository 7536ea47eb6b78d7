"""A test engine that plays the first legal move, then, from its third move of each game on, sleeps past its time."""
import sys

from engine_base import main

main("timeout", int(sys.argv[1]) if len(sys.argv) > 1 else 2)
