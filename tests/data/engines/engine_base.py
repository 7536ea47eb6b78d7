"""A tiny engine of the line protocol (docs/engine-protocol.md) that plays the first legal move, and then,
after its first ``after`` moves of each game, misbehaves as ``mode`` says: timeout (sleeps), garbage (an
answer that is not a move), illegal (a store's pit), crash (exits 3), vanish (exits 0 right after
its last good move). Pure Python: no jitsearch import."""

import sys
import time


def main(mode: str, after: int) -> None:
    moves = 0
    position = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return
        if words[0] == "hello":
            print(f"hello test-{mode}", flush=True)
        elif words[0] == "game":
            moves = 0
            print("ok", flush=True)
        elif words[0] == "position":
            position = words[1:]
            print("ok", flush=True)
        elif words[0] == "go":
            houses_0, _, houses_1, _ = position[0].split("/")
            mine = houses_0 if position[1] == "p0" else houses_1
            first = 1 if position[1] == "p0" else len(houses_0.split(",")) + 2
            pit = first + next(i for i, x in enumerate(mine.split(",")) if int(x) > 0)
            moves += 1
            if moves > after:
                if mode == "timeout":
                    sys.stderr.write("test engine: sleeping past its time\n")
                    sys.stderr.flush()
                    time.sleep(60)
                elif mode == "garbage":
                    print("bestmove e2e4", flush=True)
                    continue
                elif mode == "illegal":
                    pit = 0
                elif mode == "crash":
                    sys.stderr.write("test engine: crashing on purpose\n")
                    sys.exit(3)
            print(f"info first legal house, move {moves}", flush=True)
            print(f"move {pit}", flush=True)
            if mode == "vanish" and moves == after:  # gone between two moves of a game
                sys.exit(0)
        else:
            print(f"error unknown request {words[0]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ok", int(sys.argv[2]) if len(sys.argv) > 2 else 2)
