"""A complete engine of the jitsearch line protocol: it sows the house with the most seeds."""
import sys

position = None
for line in sys.stdin:
    request, _, rest = line.strip().partition(" ")
    if request == "hello":
        print("hello most-seeds", flush=True)
    elif request in ("game", "seed", "position"):
        position = rest.split() if request == "position" else position
        print("ok", flush=True)
    elif request == "go" and position:
        south, _, north, _ = position[0].split("/")
        houses = [int(x) for x in (south if position[1] == "p0" else north).split(",")]
        first = 1 if position[1] == "p0" else len(houses) + 2  # pit index of house 1
        print(f"move {first + houses.index(max(houses))}", flush=True)
    elif request == "quit":
        break
    else:
        print(f"error cannot answer {line.strip()!r}", flush=True)
