"""The recorder under a steady load (issue 32, section 2): `toolturn serve --record` for a while,
its memory and its flush times.

    python bench/recorder_memory.py                       # 20 minutes, 32 clients at a time
    python bench/recorder_memory.py --minutes 3 --clients 16 --out /tmp/recorder.json

It starts `toolturn serve` with the probe scenario `two_calls_clean` (a response with two tool
calls, then a final answer) recording into a fresh folder, and keeps `--clients` scripted
clients busy, each running sessions one after another: a streaming request declaring Read and
Bash, the calls' results sent back with the assistant message, until a response calls no tool.
Every session is new to the server (its own first message), so a recorder that kept what it had
written would grow with the recording.

Sampled every second: the server's resident memory, and `recording.json`'s flush count and the
latest flush's time (`flush_ms`). The run fails (exit 1) unless, after the warm-up (`--warm-up`,
default 60 s), memory stays within `RSS_TOLERANCE` (10%) of its median over the 30 s that follow
the warm-up, and the flushes of the run's last third take at most `FLUSH_TOLERANCE` times those
of its first third (medians): constant, not growing with the rows written. A client that gets an
answer other than 200 also fails it. The figures go to stdout as JSON (and to `--out`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolturn.probe.runner import WORKDIR_FILES  # noqa: E402
from toolturn.probe.sdk_agent import TOOLS  # noqa: E402
from toolturn.runtime.accumulator import StreamAccumulator  # noqa: E402

SCENARIO = ROOT / "toolturn" / "scenarios" / "probes" / "two_calls_clean.toml"
RSS_TOLERANCE = 0.10
FLUSH_TOLERANCE = 1.5
BASELINE_S = 30.0
MAX_TURNS = 4
EXCHANGE_S = 30.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def post(port: int, body: dict[str, Any]) -> tuple[int, bytes]:
    """One request on its own connection; the status and the decoded body."""
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: bench\r\ncontent-type: "
                     b"application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
                     % len(data) + data)
        status = int((await reader.readline()).split()[1])
        chunked = False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            chunked |= line.lower().startswith(b"transfer-encoding: chunked")
        if not chunked:
            return status, await reader.read()
        received = bytearray()
        while size := int(await reader.readline(), 16):
            received += await reader.readexactly(size)
            await reader.readline()
        return status, bytes(received)
    finally:
        writer.close()


def message_of(body: bytes) -> dict[str, Any]:
    accumulator = StreamAccumulator()
    for line in body.decode().splitlines():
        if line.startswith("data: "):
            accumulator.feed(json.loads(line[6:]))
    return accumulator.snapshot()


async def session(port: int, number: int, counts: dict[str, int]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"bench session {number}"}]
    for _ in range(MAX_TURNS):
        status, body = await asyncio.wait_for(post(port, {
            "model": "m", "max_tokens": 1024, "stream": True, "tools": TOOLS,
            "messages": messages}), EXCHANGE_S)
        counts["requests"] += 1
        if status != 200:
            counts["not_200"] += 1
            return
        content = message_of(body)["content"]
        messages.append({"role": "assistant", "content": content})
        uses = [block for block in content if block.get("type") == "tool_use"]
        if not uses:
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use["id"], "content": "ok"} for use in uses]})
    counts["sessions"] += 1


async def client(port: int, first: int, step: int, until: float, counts: dict[str, int]) -> None:
    number = first
    while time.monotonic() < until:
        try:
            await session(port, number, counts)
        except (TimeoutError, OSError, ValueError) as error:
            counts["failed"] += 1
            print(f"client: {type(error).__name__}: {error}", file=sys.stderr)
        number += step


async def sample(pid: int, folder: Path, until: float, rss: list[tuple[float, float]],
                 flushes: list[tuple[float, float, int]]) -> None:
    start, seen = time.monotonic(), 0
    while (now := time.monotonic()) < until:
        rss.append((now - start, rss_mb(pid)))
        try:
            summary = json.loads((folder / "recording.json").read_text())
        except (OSError, ValueError):
            summary = {}
        if summary.get("flushes", 0) > seen:
            seen = summary["flushes"]
            flushes.append((now - start, float(summary["flush_ms"]), int(summary["flush_rows"])))
        await asyncio.sleep(1.0)


def start_server(folder: Path, workdir: Path, speed: float,
                 flush_s: float) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "toolturn", "serve", str(SCENARIO), "--port", "0",
               "--speed", str(speed), "--record", str(folder), "--client-dir", str(workdir),
               "--flush-every", str(flush_s)]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               stdout=subprocess.DEVNULL)
    assert process.stderr is not None
    found = re.search(r"http://[^:]+:(\d+)", process.stderr.readline())
    if found is None:
        process.kill()
        raise SystemExit("toolturn serve did not start")
    # Drain its log (one line per request) so that it never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()
    return process, int(found.group(1))


async def load(port: int, pid: int, folder: Path, seconds: float, clients: int) -> tuple[
        dict[str, int], list[tuple[float, float]], list[tuple[float, float, int]]]:
    until = time.monotonic() + seconds
    counts = dict.fromkeys(("requests", "sessions", "not_200", "failed"), 0)
    rss: list[tuple[float, float]] = []
    flushes: list[tuple[float, float, int]] = []
    await asyncio.gather(sample(pid, folder, until, rss, flushes),
                         *(client(port, n, clients, until, counts) for n in range(clients)))
    return counts, rss, flushes


def by_minute(rss: list[tuple[float, float]]) -> list[float]:
    """The median resident memory of each minute of the run, in MB."""
    minutes: dict[int, list[float]] = {}
    for t, mb in rss:
        minutes.setdefault(int(t // 60), []).append(mb)
    return [round(statistics.median(mbs), 1) for _, mbs in sorted(minutes.items())]


def verdict(rss: list[tuple[float, float]], flushes: list[tuple[float, float, int]],
            warm_up_s: float) -> dict[str, Any]:
    after = [mb for t, mb in rss if t >= warm_up_s]
    baseline = statistics.median([mb for t, mb in rss if warm_up_s <= t < warm_up_s
                                  + BASELINE_S] or after)
    times = [ms for t, ms, _ in flushes if t >= warm_up_s]
    rows = [n for t, _, n in flushes if t >= warm_up_s]
    third = max(len(times) // 3, 1)
    early, late = statistics.median(times[:third]), statistics.median(times[-third:])
    return {
        "rss_mb_at_warm_up": round(baseline, 1), "rss_mb_max_after": round(max(after), 1),
        "rss_mb_end": round(after[-1], 1),
        "rss_growth": round(max(after) / baseline - 1, 4),
        # The shape of the curve, not only its top: a step after the warm-up (allocator pools
        # filling) reads differently from a slope (something kept per session).
        "rss_mb_by_minute": by_minute(rss),
        "flush_ms_first_third": round(early, 2), "flush_ms_last_third": round(late, 2),
        "flush_ms_max": round(max(times), 2), "flushes_after_warm_up": len(times),
        "rows_per_flush_first_third": statistics.median(rows[:third]),
        "rows_per_flush_last_third": statistics.median(rows[-third:]),
        "rss_flat": max(after) <= baseline * (1 + RSS_TOLERANCE),
        "flush_constant": late <= early * FLUSH_TOLERANCE,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--speed", type=float, default=20.0)
    parser.add_argument("--warm-up", type=float, default=60.0, metavar="SECONDS")
    parser.add_argument("--flush-every", type=float, default=2.0, metavar="SECONDS")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if args.minutes * 60 <= args.warm_up + BASELINE_S:
        parser.error(f"--minutes: the run must outlast the warm-up and {BASELINE_S:g} s more")
    scratch = Path(tempfile.mkdtemp(prefix="recorder-bench-"))
    folder, workdir = scratch / "recording", scratch / "work"
    for name, text in WORKDIR_FILES.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text)
    process, port = start_server(folder, workdir, args.speed, args.flush_every)
    try:
        counts, rss, flushes = asyncio.run(
            load(port, process.pid, folder, args.minutes * 60, args.clients))
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        summary = json.loads((folder / "recording.json").read_text())
    finally:
        if process.poll() is None:
            process.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    figures = {"minutes": args.minutes, "clients": args.clients, "speed": args.speed,
               **counts, "rows": summary["row_counts"], "parts": summary["parts"],
               **verdict(rss, flushes, args.warm_up)}
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    ok = figures["rss_flat"] and figures["flush_constant"] and not (
        counts["not_200"] or counts["failed"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
