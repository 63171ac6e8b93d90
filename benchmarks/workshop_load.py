"""The workshop server under a room's load: 200 participants checking every few seconds for ten minutes.

    .venv/bin/python benchmarks/workshop_load.py [--participants 200] [--minutes 10] [--speed 10] [--no-browser]

A scaled clock: the simulated workshop's ten minutes run in 10 / speed minutes of wall time, every report
of it sent (200 participants x one check every 2 to 6 s = about 30,000 reports), so the server sees `speed`
times a real room's rate; its per-participant rate limit is raised by the same factor (a real room never
meets it). Each participant joins (a pseudonym and a secret from the server), then posts from a loopback address of its
own (127.0.3.x, as laptops on a network) with a new connection per report, as the client does. Participants
work through the exercises in order, failing a few times, with the signatures of the catalogues' known wrong
answers (so the server matches misconceptions), before they pass; a few never pass (the stuck); a third
share their culprit line.

Measured on the server process (`autograder workshop serve`, the real command line, pinned to core 0 with
os.sched_setaffinity; the load generator on the other core): CPU time over the run (from /proc/PID/stat),
resident memory (VmRSS sampled, VmHWM at the end), and the dashboard: three dashboards wait on the heaviest
view (controls) as the page does (a long poll: asked again as soon as answered). The update latency, side by
side in the same run: a "marker" participant changes its seat label at random moments; from the server's
answer to that change, how long until (a) a client polling every 2 s (the page before its long poll),
(b) a long-poll client, and (c) the real page in headless Chromium (the helpers' view, seen by a
MutationObserver) show it. Only loopback addresses are used; every loop is bounded in count and time.

`--restart-at F` stops the server (SIGINT, as Ctrl-C) at that fraction of the run and starts it again on the
same port and state file, as a host would. Each simulated participant then behaves as the client's sender
does (sender.py): its reports go out in order, each with an id, and one that gets no answer (or 429, 5xx)
stays at the head of its queue and is sent again until the server answers. The closing lines count the
reports lost (made, minus those in the state file, each id once) and set the room's final counts (passed
and failing per exercise, as the server shows them) against the truth (what the generator made).
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

from autograder.workshop.course import load  # noqa: E402

COURSE = load()
EXERCISES = COURSE.exercises
LINES = ["out += x", "h = F.dropout(h, p, training, inplace=True)", "x[:, 0] = labels", "w -= lr * w.grad"]


def wrong_answers(exercise: str) -> list[dict]:
    """The report fields of the catalogue's known wrong answers of `exercise` (course.json's signatures)."""
    found = []
    for (e, key), _ in COURSE.table.items():
        if e == exercise:
            failing, error, op, grad_mode = json.loads(key)
            found.append({"failing": failing, "error": error, "op": op, "grad_mode": grad_mode})
    return found or [{"failing": sorted(COURSE.checks[exercise])[:1], "error": None, "op": None, "grad_mode": None}]


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_memory(pid: int) -> dict[str, int]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {k: int(re.search(rf"{k}:\s+(\d+)", text).group(1)) // 1024 for k in ("VmRSS", "VmHWM")}


def start_server(args, tmp: Path, port: int = 0, name: str = "server") -> tuple[subprocess.Popen, int, str, str]:
    command = [sys.executable, "-m", "autograder", "workshop"] if args.entry == "cli" else \
        [sys.executable, "-m", "autograder.workshop"]
    command += ["serve", "--host", "127.0.0.1", "--port", str(port), "--no-qr", "--state", str(tmp / "room.sqlite"),
                "--max-participants", str(args.participants + 10), "--participant-rate", str(0.5 * args.speed)]
    out = tmp / f"{name}.log"
    process = subprocess.Popen(command, stdout=out.open("w"), stderr=subprocess.STDOUT, cwd=ROOT,
                               env={**os.environ, "TMPDIR": str(tmp)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = out.read_text()
        found = re.search(r"Host: +http://127\.0\.0\.1:(\d+)/dashboard#token=(\S+)", text)
        code = re.search(r"room ([A-Z0-9]{6})", text)
        if found and code:
            return process, int(found.group(1)), found.group(2), code.group(1)
        if process.poll() is not None:
            raise SystemExit(text)
        time.sleep(0.1)
    raise SystemExit("the server did not start in 60 s")


async def http(port: int, method: str, path: str, body: bytes = b"", headers: dict | None = None,
               source: str = "127.0.0.2", timeout: float = 10) -> tuple[int, bytes]:
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), timeout=10)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    try:
        raw = await asyncio.wait_for(reader.read(), timeout=timeout)
    finally:
        writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


JSON = {"Content-Type": "application/json"}
RETRY_S = 0.5
"""Wall seconds between two tries of a report the server did not receive (the client's RETRY, 2 s, scaled
down: the simulated room runs faster than a real one)."""


class Participant:
    def __init__(self, i: int, rng: random.Random):
        self.seat, self.source = f"{'ABCDEFGH'[i % 8]}{i // 8 + 1}", f"127.0.3.{i % 250 + 1}"
        self.exercise, self.rng = 0, rng
        self.share = rng.random() < 1 / 3
        self.stuck = rng.random() < 0.1  # never passes their current exercise
        self.attempts = 0
        self.name = self.secret = None
        self.queue: list[bytes] = []  # made, not yet received: sent in order, the head again until it arrives
        self.made: list[dict] = []
        self.refused = 0

    async def join(self, port: int, code: str) -> None:
        status, raw = await http(port, "POST", f"/{code}/join", json.dumps({"v": 2, "seat": self.seat}).encode(),
                                 JSON, self.source)
        assert status == 200, (status, raw)
        answer = json.loads(raw)
        self.name, self.secret = answer["pseudonym"], answer["secret"]

    def report(self) -> bytes:
        e = EXERCISES[min(self.exercise, len(EXERCISES) - 1)]
        self.attempts += 1
        passed = not self.stuck and self.rng.random() < min(0.9, 0.2 * self.attempts)
        wrong = {"failing": [], "error": None, "op": None, "grad_mode": None} if passed else \
            self.rng.choice(wrong_answers(e))
        data = {"v": 2, "pseudonym": self.name, "secret": self.secret, "exercise": e,
                "status": "passed" if passed else "failed",
                "checks": [{"name": c, "passed": c not in wrong["failing"]} for c in sorted(COURSE.checks[e])],
                "error": wrong["error"], "op": wrong["op"], "grad_mode": wrong["grad_mode"]}
        if self.share and not passed and wrong["op"]:
            data["line"] = LINES[EXERCISES.index(e) % len(LINES)]
        if passed:
            self.exercise, self.attempts = self.exercise + 1, 0
        data["id"] = f"{self.seat}-{len(self.made):06d}"
        self.made.append(data)
        return json.dumps(data).encode()


async def browser_page(port: int, token: str, shown: dict[int, float], stop: asyncio.Event) -> str | None:
    """The real page (helpers' view) in headless Chromium; a MutationObserver notes when each marker seat
    first shows (the browser's wall clock, the same machine's). Returns why not, if it cannot run."""
    chromium = Path("/usr/bin/chromium")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        return "playwright is not installed"
    if not chromium.exists():
        return f"{chromium} not found"
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox"])
        page = await browser.new_page(viewport={"width": 1280, "height": 720})
        await page.goto(f"http://127.0.0.1:{port}/dashboard#view=helper&token={token}")
        shown[0] = time.time()  # ready from here: changes before this are not counted
        await page.evaluate("""() => { window.__seen = {};
            new MutationObserver(() => { const now = Date.now();
              for (const td of document.querySelectorAll('#people tbody td:first-child')) {
                const m = /^m(\\d+)$/.exec(td.textContent); \
if (m && !(m[1] in window.__seen)) window.__seen[m[1]] = now; }
            }).observe(document.getElementById('people'), {childList: true, subtree: true}); }""")
        await stop.wait()
        for n, t in (await page.evaluate("window.__seen")).items():
            shown[int(n)] = t / 1000
        await browser.close()
    return None


async def run(args, port: int, token: str, code: str, restart=None) -> dict:
    rng = random.Random(args.seed)
    people = [Participant(i, rng) for i in range(args.participants)]
    for i in range(0, len(people), 50):
        await asyncio.gather(*(p.join(port, code) for p in people[i:i + 50]))
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
    lag_s: list[float] = []  # how late the load generator sent each report (its own core was busy)
    limit = asyncio.Semaphore(128)
    start = time.monotonic()
    wall = args.minutes * 60 / args.speed
    auth = {"Authorization": f"Bearer {token}"}

    retries = [0]

    async def post(p: Participant) -> None:
        """As the client's sender: the report joins the participant's queue; the queue is sent in order, its
        head again (every RETRY_S) until the server answers."""
        p.queue.append(p.report())
        if len(p.queue) > 1:
            return  # the one flushing the queue sends it
        while p.queue:
            async with limit:
                t0 = time.perf_counter()
                try:
                    status, _ = await http(port, "POST", f"/{code}/report", p.queue[0], JSON, p.source)
                except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                    status = 0
                post_ms.append((time.perf_counter() - t0) * 1000)
                statuses[status] = statuses.get(status, 0) + 1
            if status in (0, 408, 429) or status >= 500:
                retries[0] += 1
                await asyncio.sleep(RETRY_S)
                continue
            if status != 200:
                p.refused += 1
            p.queue.pop(0)

    answers = [0]

    async def dashboard(view: str, source: str) -> None:
        """As the page does: ask with the version drawn; the answer comes when the room has changed."""
        version = ""
        while time.monotonic() - start < wall:
            try:
                status, raw = await http(port, "GET", f"/api/state?view={view}{version}", headers=auth,
                                         source=source, timeout=40)
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):  # the server restarting
                version = ""
                await asyncio.sleep(0.2)
                continue
            if status != 200:  # a server stopping
                version = ""
                await asyncio.sleep(0.2)
                continue
            answers[0] += 1
            version = f"&since={json.loads(raw)['version']}"

    async def state_timing() -> None:
        """The heaviest view asked for outright every 2 s of wall time: how long the server takes to answer."""
        while time.monotonic() - start < wall:
            t0 = time.perf_counter()
            try:
                status, _ = await http(port, "GET", "/api/state?view=controls", headers=auth, source="127.0.0.6")
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                await asyncio.sleep(0.2)
                continue
            if status != 200:
                await asyncio.sleep(0.2)
                continue
            poll_ms.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(max(0.0, 2.0 - (time.perf_counter() - t0)))

    marker = Participant(999, rng)
    marker.source = "127.0.0.9"
    await marker.join(port, code)
    acked: dict[int, float] = {}  # marker seat number -> when the server answered its change (time.time())

    async def marker_changes() -> None:
        n = 0
        while time.monotonic() - start < wall - 3:
            n += 1
            try:
                status, _ = await http(port, "POST", f"/{code}/join", json.dumps(
                    {"v": 2, "seat": f"m{n}", "pseudonym": marker.name, "secret": marker.secret}).encode(), JSON,
                    marker.source)
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                status = 0
            if status == 200:
                acked[n] = time.time()
            await asyncio.sleep(rng.uniform(1, 3))

    def marker_seat(raw: bytes) -> int:
        seats = [p["seat"] for p in json.loads(raw)["people"] if p["pseudonym"] == marker.name]
        return int(seats[0][1:]) if seats and seats[0].startswith("m") else 0

    polled: dict[int, float] = {}
    waited: dict[int, float] = {}

    async def polling_client() -> None:
        """The page before its long poll: the helpers' view every 2 s of wall time."""
        while time.monotonic() - start < wall:
            t0 = time.monotonic()
            try:
                _, raw = await http(port, "GET", "/api/state?view=helper", headers=auth, source="127.0.0.8")
                polled.setdefault(marker_seat(raw), time.time())
            except (OSError, asyncio.TimeoutError, ValueError, IndexError, KeyError):
                pass
            await asyncio.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))

    async def long_poll_client() -> None:
        version = ""
        while time.monotonic() - start < wall:
            try:
                _, raw = await http(port, "GET", f"/api/state?view=helper{version}", headers=auth,
                                    source="127.0.0.7", timeout=40)
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                version = ""
                await asyncio.sleep(0.2)
                continue
            if not raw.startswith(b"{"):
                version = ""
                continue
            waited.setdefault(marker_seat(raw), time.time())
            version = f"&since={json.loads(raw)['version']}"

    async def schedule() -> None:
        tasks = []
        for t, p in events:
            delay = start + t / args.speed - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            lag_s.append(-delay)
            tasks.append(asyncio.create_task(post(p)))
        await asyncio.gather(*tasks)

    stop = asyncio.Event()
    seen_in_browser: dict[int, float] = {}
    browser = asyncio.create_task(browser_page(port, token, seen_in_browser, stop)) if args.browser else None
    lag_start = time.monotonic()

    async def bounded(coroutine):
        try:
            await asyncio.wait_for(coroutine, timeout=wall + 60)
        except asyncio.TimeoutError:
            pass

    outage = [0.0]

    async def restarting() -> None:
        if restart is None:
            return
        await asyncio.sleep(wall * args.restart_at)
        outage[0] = await asyncio.to_thread(restart)

    async def drained() -> float:
        """Until every participant's queue is empty (bounded): when the last kept report arrived."""
        deadline = time.monotonic() + 120
        while any(p.queue for p in people) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        return time.monotonic() - start

    await asyncio.gather(schedule(), marker_changes(), bounded(polling_client()), bounded(long_poll_client()),
                         bounded(state_timing()), restarting(),
                         *(bounded(dashboard("controls", f"127.0.0.{10 + i}")) for i in range(3)))
    drained_at = await drained()
    await asyncio.sleep(1.0)
    _, raw = await http(port, "GET", "/api/state?view=helper", headers=auth, source="127.0.0.6")
    final = json.loads(raw)
    stop.set()
    browser_note = await browser if browser else "--no-browser"

    def latencies(shown: dict[int, float]) -> list[float]:
        """From each change's answer to the first sight of it (or of a later change, which shows it too), for
        changes made once the watcher was ready (shown[0], if it says)."""
        out = []
        ready = shown.pop(0, 0.0) + 1.0
        for n, t in acked.items():
            if t < ready:
                continue
            later = [s for m, s in shown.items() if m >= n and s >= t - 0.5]
            if later:
                out.append(max(0.0, min(later) - t))
        return out

    return {"reports": len(events), "statuses": statuses, "wall_s": time.monotonic() - lag_start,
            "post_ms": post_ms, "lag_s": lag_s, "poll_ms": poll_ms, "polls": answers[0],
            "update_polling_s": latencies(polled), "update_long_poll_s": latencies(waited),
            "update_browser_s": latencies(seen_in_browser), "browser": browser_note, "people": people,
            "final": final, "outage_s": outage[0], "retries": retries[0], "drained_at_s": drained_at}


def truth(people: list[Participant]) -> dict[str, dict[str, int]]:
    """What the room should show per exercise: who passed, who failed and has not passed, from what was made."""
    out = {e: {"passed": 0, "failing": 0} for e in EXERCISES}
    for p in people:
        tried: dict[str, bool] = {}
        for data in p.made:
            tried[data["exercise"]] = tried.get(data["exercise"], False) or data["status"] == "passed"
        for exercise, passed in tried.items():
            out[exercise]["passed" if passed else "failing"] += 1
    return out


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
    p.add_argument("--no-browser", dest="browser", action="store_false",
                   help="skip the real page in headless Chromium (its latency column stays empty)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--restart-at", type=float, metavar="F",
                   help="stop the server (SIGINT) at this fraction of the run and start it again (same port, state)")
    p.add_argument("--json", type=Path, help="also write the numbers here")
    args = p.parse_args()
    if args.participants > 250:
        raise SystemExit("at most 250 participants (one loopback address each)")
    with tempfile.TemporaryDirectory() as tmp:
        process, port, token, code = start_server(args, Path(tmp))
        cpu_before = [0.0]  # of the servers stopped by a restart

        def restart() -> float:
            """Ctrl-C, then the same command again: seconds without a server."""
            nonlocal process
            t0 = time.monotonic()
            cpu_before[0] += proc_cpu(process.pid)
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)
            process, _, _, _ = start_server(args, Path(tmp), port, "restarted")
            os.sched_setaffinity(process.pid, {0})
            return time.monotonic() - t0

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
                    return await run(args, port, token, code, restart if args.restart_at is not None else None)
                finally:
                    sampler.cancel()

            result = asyncio.run(both())
            cpu, wall = proc_cpu(process.pid) + cpu_before[0] - cpu0, time.monotonic() - t0
            memory = proc_memory(process.pid)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
        import sqlite3

        with sqlite3.connect(Path(tmp) / "room.sqlite") as db:
            stored = [rid for (rid,) in db.execute("SELECT rid FROM reports")]
    numbers = {
        "participants": args.participants, "simulated_minutes": args.minutes, "speed": args.speed,
        "entry": args.entry, "reports": result["reports"], "statuses": result["statuses"],
        "wall_s": round(wall, 1), "reports_per_wall_s": round(result["reports"] / result["wall_s"], 1),
        "server_cpu_s": round(cpu, 2), "server_cpu_share_of_one_core": round(cpu / wall, 3),
        "server_cpu_ms_per_report": round(1000 * cpu / result["reports"], 3),
        "rss_idle_mib": idle["VmRSS"], "rss_max_sampled_mib": max(rss) if rss else None, "rss_hwm_mib": memory["VmHWM"],
        "generator_late_s_p95": round(pct(result["lag_s"], 95), 2), "load_average_1min": os.getloadavg()[0],
        "post_ms_p50": round(pct(result["post_ms"], 50), 2), "post_ms_p95": round(pct(result["post_ms"], 95), 2),
        "dashboard_answers_per_s": round(result["polls"] / 3 / result["wall_s"], 2),
        "state_ms_p50": round(pct(result["poll_ms"], 50), 2), "state_ms_p95": round(pct(result["poll_ms"], 95), 2),
        "state_ms_max": round(max(result["poll_ms"]), 2),
        "browser": result["browser"] or "headless Chromium",
    }
    for name in ("polling", "long_poll", "browser"):
        values = result[f"update_{name}_s"]
        numbers[f"update_{name}_s_p50"] = round(pct(values, 50), 2) if values else None
        numbers[f"update_{name}_s_max"] = round(max(values), 2) if values else None
        numbers[f"update_{name}_samples"] = len(values)
    if numbers["update_polling_s_p50"] and numbers["update_long_poll_s_p50"]:
        numbers["update_p50_polling_over_long_poll"] = round(
            numbers["update_polling_s_p50"] / max(numbers["update_long_poll_s_p50"], 1e-3), 1)
    made = [data["id"] for person in result["people"] for data in person.made]
    numbers["restart_at"] = args.restart_at
    numbers["outage_s"] = round(result["outage_s"], 2)
    numbers["reports_made"] = len(made)
    numbers["reports_lost"] = len(set(made) - set(stored))
    numbers["reports_counted_twice"] = len(stored) - len(set(stored))
    numbers["reports_refused"] = sum(person.refused for person in result["people"])
    numbers["posts_sent_again"] = result["retries"]
    numbers["last_kept_report_arrived_s"] = round(result["drained_at_s"], 1)
    shown = {g["exercise"]: {"passed": g["passed"], "failing": g["failing"]} for g in result["final"]["grid"]}
    expected = truth(result["people"])
    numbers["final_counts_shown"] = shown
    numbers["final_counts_truth"] = expected
    numbers["final_counts_equal"] = shown == expected
    for key, value in numbers.items():
        print(f"{key:32} {value}")
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))


if __name__ == "__main__":
    main()
