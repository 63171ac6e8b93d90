"""The workshop server under a room's load: 200 participants checking every few seconds for ten minutes.

    .venv/bin/python benchmarks/workshop_load.py [--participants 200] [--minutes 10] [--speed 10]

A scaled clock: the simulated workshop's ten minutes run in 10 / speed minutes of wall time, every report
of it sent (200 participants x one check every 2 to 6 s = about 30,000 reports), so the server sees `speed`
times a real room's rate; its per-participant rate limit is raised by the same factor (a real room never
meets it). Each participant posts from a loopback address of its own (127.0.3.x, as laptops on a network)
with a new connection per report, as the client does. Participants work through the exercises in order,
failing a few times before they pass; a few never pass (the stuck); a third share their culprit line.

Measured on the server process (`autograder workshop serve`, the real command line, pinned to core 0 with
os.sched_setaffinity; the load generator on the other core): CPU time over the run (from /proc/PID/stat),
resident memory (VmRSS sampled, VmHWM at the end), and the dashboard: three dashboards poll the heaviest
view (controls) every 2 s of simulated time, and one more polls like the page does (every 2 s of wall
time) and measures the update latency: from a report's answer to the first poll that shows it.
Only loopback addresses are used; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.catalog import exercise_ids  # noqa: E402

EXERCISES = exercise_ids()
CHECKS = ["forward", "backward runs", "gradients", "gradcheck"]
OPS = ["torch.Tensor.add_", "torch.nn.functional.dropout", "torch.Tensor.copy_", "torch.Tensor.mul_"]
LINES = ["out += x", "h = F.dropout(h, p, training, inplace=True)", "x[:, 0] = labels", "w -= lr * w.grad"]


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_memory(pid: int) -> dict[str, int]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {k: int(re.search(rf"{k}:\s+(\d+)", text).group(1)) // 1024 for k in ("VmRSS", "VmHWM")}


def start_server(args, tmp: Path) -> tuple[subprocess.Popen, int, str, str]:
    command = [sys.executable, "-m", "autograder", "workshop"] if args.entry == "cli" else \
        [sys.executable, "-m", "autograder.workshop"]
    command += ["serve", "--host", "127.0.0.1", "--port", "0", "--no-qr",
                "--max-participants", str(args.participants + 10), "--participant-rate", str(0.5 * args.speed)]
    out = tmp / "server.log"
    process = subprocess.Popen(command, stdout=out.open("w"), stderr=subprocess.STDOUT, cwd=ROOT,
                               env={**os.environ, "TMPDIR": str(tmp)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = out.read_text()
        found = re.search(r"Host: +http://127\.0\.0\.1:(\d+)/dashboard#token=(\S+)", text)
        code = re.search(r"Join code: +(\w+)", text)
        if found and code:
            return process, int(found.group(1)), found.group(2), code.group(1)
        if process.poll() is not None:
            raise SystemExit(text)
        time.sleep(0.1)
    raise SystemExit("the server did not start in 60 s")


async def http(port: int, method: str, path: str, body: bytes = b"", headers: dict | None = None,
               source: str = "127.0.0.2") -> tuple[int, bytes]:
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), timeout=10)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    try:
        raw = await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


class Participant:
    def __init__(self, i: int, rng: random.Random):
        self.name = f"{'calm brave eager keen quick wise'.split()[i % 6]}-{'otter heron lynx wren'.split()[i % 4]}-{i + 10}"
        self.seat, self.source = f"{'ABCDEFGH'[i % 8]}{i // 8 + 1}", f"127.0.3.{i % 250 + 1}"
        self.exercise, self.rng = 0, rng
        self.share = rng.random() < 1 / 3
        self.stuck = rng.random() < 0.1  # never passes their current exercise
        self.attempts = 0

    def report(self) -> bytes:
        e = min(self.exercise, len(EXERCISES) - 1)
        self.attempts += 1
        passed = not self.stuck and self.rng.random() < min(0.9, 0.2 * self.attempts)
        failing = [] if passed else self.rng.sample(CHECKS, self.rng.randint(1, 3))
        k = e % len(OPS)
        data = {"v": 1, "pseudonym": self.name, "seat": self.seat, "exercise": EXERCISES[e],
                "status": "passed" if passed else "failed",
                "checks": [{"name": c, "passed": c not in failing} for c in CHECKS],
                "error": None if passed else "RuntimeError", "op": None if passed else OPS[k]}
        if self.share and not passed:
            data["line"] = LINES[k]
        if passed:
            self.exercise, self.attempts = self.exercise + 1, 0
        return json.dumps(data).encode()


async def run(args, port: int, token: str, code: str) -> dict:
    rng = random.Random(args.seed)
    people = [Participant(i, rng) for i in range(args.participants)]
    events = []
    for p in people:
        t = rng.uniform(0, 6)
        while t < args.minutes * 60:
            events.append((t, p))
            t += rng.uniform(2, 6)
    events.sort(key=lambda e: e[0])
    statuses: dict[int, int] = {}
    post_ms: list[float] = []
    poll_ms: list[float] = []
    update_s: list[float] = []
    lag_s: list[float] = []  # how late the load generator sent each report (its own core was busy)
    limit = asyncio.Semaphore(128)
    start = time.monotonic()
    wall = args.minutes * 60 / args.speed
    auth = {"Authorization": f"Bearer {token}"}

    async def post(p: Participant) -> None:
        async with limit:
            t0 = time.perf_counter()
            try:
                status, _ = await http(port, "POST", f"/{code}/report", p.report(),
                                       {"Content-Type": "application/json"}, p.source)
            except (OSError, asyncio.TimeoutError):
                status = 0
            post_ms.append((time.perf_counter() - t0) * 1000)
            statuses[status] = statuses.get(status, 0) + 1

    async def dashboard(interval: float, view: str, source: str) -> None:
        while time.monotonic() - start < wall:
            t0 = time.perf_counter()
            status, _ = await http(port, "GET", f"/api/state?view={view}", headers=auth, source=source)
            assert status == 200, status
            poll_ms.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - t0)))

    marker = {"v": 1, "pseudonym": "marker-mole-10", "exercise": EXERCISES[0], "status": "failed", "checks": []}
    acked: dict[int, float] = {}

    async def marker_reports() -> None:
        """A participant whose seat label counts up, at random moments: the page below times when it shows."""
        n = 0
        while time.monotonic() - start < wall - 3:
            n += 1
            status, _ = await http(port, "POST", f"/{code}/report", json.dumps({**marker, "seat": f"m{n}"}).encode(),
                                   {"Content-Type": "application/json"}, "127.0.0.9")
            if status == 204:
                acked[n] = time.monotonic()
            await asyncio.sleep(rng.uniform(1, 3))

    async def page_like() -> None:
        """Polls the helper view every 2 s of wall time, as the page does; a marker's update latency is
        from its report's answer to the end of the first poll that shows it."""
        seen = 0
        while time.monotonic() - start < wall:
            t0 = time.monotonic()
            _, raw = await http(port, "GET", "/api/state?view=helper", headers=auth, source="127.0.0.8")
            now = time.monotonic()
            shown = [int(p["seat"][1:]) for p in json.loads(raw)["people"] if p["pseudonym"] == marker["pseudonym"]]
            for n in range(seen + 1, (shown[0] if shown else 0) + 1):
                if n in acked:
                    update_s.append(now - acked[n])
            seen = max(seen, shown[0] if shown else 0)
            await asyncio.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))

    async def schedule() -> None:
        tasks = []
        for t, p in events:
            delay = start + t / args.speed - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            lag_s.append(-delay)
            tasks.append(asyncio.create_task(post(p)))
        await asyncio.gather(*tasks)

    lag_start = time.monotonic()
    await asyncio.gather(schedule(), marker_reports(), page_like(),
                         *(dashboard(2.0 / args.speed, "controls", f"127.0.0.{10 + i}") for i in range(3)))
    return {"reports": len(events), "statuses": statuses, "wall_s": time.monotonic() - lag_start,
            "post_ms": post_ms, "lag_s": lag_s, "poll_ms": poll_ms, "update_s": update_s, "polls": len(poll_ms)}


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else (values[0] if values else float("nan"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--participants", type=int, default=200)
    p.add_argument("--minutes", type=float, default=10, help="simulated minutes of workshop")
    p.add_argument("--speed", type=float, default=10, help="simulated seconds per wall second")
    p.add_argument("--entry", choices=("cli", "module"), default="cli",
                   help="cli: `autograder workshop serve` (imports torch with the course's command line); "
                        "module: `python -m autograder.workshop serve` (no torch)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the numbers here")
    args = p.parse_args()
    if args.participants > 250:
        raise SystemExit("at most 250 participants (one loopback address each)")
    with tempfile.TemporaryDirectory() as tmp:
        process, port, token, code = start_server(args, Path(tmp))
        try:
            os.sched_setaffinity(process.pid, {0})
            os.sched_setaffinity(0, {1} if os.cpu_count() and os.cpu_count() > 1 else {0})
            time.sleep(1.0)
            idle = proc_memory(process.pid)
            cpu0, t0 = proc_cpu(process.pid), time.monotonic()
            rss: list[int] = []

            async def sample() -> None:
                while process.poll() is None:
                    rss.append(proc_memory(process.pid)["VmRSS"])
                    await asyncio.sleep(0.5)

            async def both():
                sampler = asyncio.create_task(sample())
                try:
                    return await run(args, port, token, code)
                finally:
                    sampler.cancel()

            result = asyncio.run(both())
            cpu, wall = proc_cpu(process.pid) - cpu0, time.monotonic() - t0
            memory = proc_memory(process.pid)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
    numbers = {
        "participants": args.participants, "simulated_minutes": args.minutes, "speed": args.speed,
        "entry": args.entry, "reports": result["reports"], "statuses": result["statuses"],
        "wall_s": round(wall, 1), "reports_per_wall_s": round(result["reports"] / result["wall_s"], 1),
        "server_cpu_s": round(cpu, 2), "server_cpu_share_of_one_core": round(cpu / wall, 3),
        "server_cpu_ms_per_report": round(1000 * cpu / result["reports"], 3),
        "rss_idle_mib": idle["VmRSS"], "rss_max_sampled_mib": max(rss) if rss else None, "rss_hwm_mib": memory["VmHWM"],
        "generator_late_s_p95": round(pct(result["lag_s"], 95), 2), "load_average_1min": os.getloadavg()[0],
        "post_ms_p50": round(pct(result["post_ms"], 50), 2), "post_ms_p95": round(pct(result["post_ms"], 95), 2),
        "dashboard_polls": result["polls"], "poll_ms_p50": round(pct(result["poll_ms"], 50), 2),
        "poll_ms_p95": round(pct(result["poll_ms"], 95), 2), "poll_ms_max": round(max(result["poll_ms"]), 2),
        "update_latency_s_p50": round(pct(result["update_s"], 50), 2),
        "update_latency_s_max": round(max(result["update_s"]), 2) if result["update_s"] else None,
        "update_samples": len(result["update_s"]),
    }
    for key, value in numbers.items():
        print(f"{key:32} {value}")
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))


if __name__ == "__main__":
    main()
