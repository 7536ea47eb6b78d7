"""A test engine that plays the first legal move and exits (status 0) right after its second move of a game."""
import sys

from engine_base import main

main("vanish", int(sys.argv[1]) if len(sys.argv) > 1 else 2)
