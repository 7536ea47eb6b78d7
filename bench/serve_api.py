#!/usr/bin/env python
"""`jitsearch serve`'s API against the library calls behind it: what the web layer costs.

Starts the real server (uvicorn, an open port on 127.0.0.1) in this process and times, with one
keep-alive HTTP client, after a warm-up of every route (the JIT and the endgame database load):

* ``POST /api/move`` against ``KalahState.from_text(...).play(pit)`` (the same work, no HTTP);
* ``POST /api/agent-move`` with ``random``: submit, then poll the job until done (the page's round trip);
* ``POST /api/analyse`` of the start of Kalah(3,3) and Kalah(4,3) (exact, every move) against
  ``analyse_position`` called directly;
* the cancel latency: an analysis of Kalah(6,6) (not solvable in time) cancelled after 1 s, from the
  cancel request to the job's end.

Medians of ``--repeats`` runs; writes bench/results/serve_api.json.

Run: ``python bench/serve_api.py [--repeats 200]`` (needs the web extra and httpx).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import threading
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "serve_api.json"


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--analysis-repeats", type=int, default=5)
    args = ap.parse_args()

    import httpx
    import uvicorn

    from jitsearch.arena.analysis import analyse_position
    from jitsearch.cli.serve import bind_socket
    from jitsearch.cli.webapp import LOOPBACK_HOSTS, TOKEN_HEADER, create_app
    from jitsearch.games.kalah import KalahState

    sock = bind_socket("127.0.0.1", 0)
    app = create_app(max_seconds=120, allowed_hosts=LOOPBACK_HOSTS)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    client = httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=120,
                          headers={TOKEN_HEADER: app.state.token})  # what the page sends

    def job(path, body):
        r = client.post(path, json=body)
        r.raise_for_status()
        j = r.json()["job"]
        while j["status"] == "running":
            time.sleep(0.005)
            j = client.get(f"/api/jobs/{j['id']}").json()["job"]
        assert j["status"] == "done", j
        return j

    text = KalahState.initial(6, 4).to_text()
    body = {"position": text, "move": 3}
    out = {"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
           "load_before": os.getloadavg(), "repeats": args.repeats}
    # warm-up: every route once, the kernels compiled or loaded
    client.post("/api/move", json=body).raise_for_status()
    KalahState.from_text(text).play(3)
    job("/api/agent-move", {"position": text, "agent": "random"})
    for houses, seeds in ((3, 3), (4, 3)):
        job("/api/analyse", {"position": KalahState.initial(houses, seeds).to_text(), "solve_time": 60})
    out["move_http_ms"] = median_ms(lambda: client.post("/api/move", json=body).raise_for_status(), args.repeats)
    out["move_library_ms"] = median_ms(lambda: KalahState.from_text(text).play(3), args.repeats)
    out["move_http_over_library"] = out["move_http_ms"] / out["move_library_ms"]
    out["agent_move_random_roundtrip_ms"] = median_ms(
        lambda: job("/api/agent-move", {"position": text, "agent": "random"}), args.repeats // 4 or 1)
    for houses, seeds in ((3, 3), (4, 3)):
        s = KalahState.initial(houses, seeds)
        http = median_ms(lambda: job("/api/analyse", {"position": s.to_text(), "solve_time": 60}),
                         args.analysis_repeats)
        direct = median_ms(lambda: analyse_position(s, solve_time=60), args.analysis_repeats)
        out[f"analyse_{houses}_{seeds}"] = {"http_ms": http, "library_ms": direct, "ratio": http / direct}
    cancels = []
    for _ in range(3):
        r = client.post("/api/analyse", json={"position": KalahState.initial(6, 6).to_text(),
                                              "engine": "alphabeta:time=60", "solve_time": 60})
        j = r.json()["job"]
        time.sleep(1.0)
        t0 = time.perf_counter()
        client.post(f"/api/jobs/{j['id']}/cancel", json={})
        while j["status"] == "running":
            time.sleep(0.01)
            j = client.get(f"/api/jobs/{j['id']}").json()["job"]
        cancels.append(time.perf_counter() - t0)
        assert j["result"]["interrupted"], j
    out["cancel_seconds"] = {"median": statistics.median(cancels), "max": max(cancels), "runs": cancels}
    out["load_after"] = os.getloadavg()
    server.should_exit = True
    thread.join(10)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
