"""A test engine that plays the first legal move, then answers go with garbage from its third move of each game on."""
import sys

from engine_base import main

main("garbage", int(sys.argv[1]) if len(sys.argv) > 1 else 2)
