"""The server soak: `toolturn serve` under mixed, misbehaving clients for a bounded time (issue 13).

    python bench/soak_server.py                  # 120 s, 24 clients at a time
    python bench/soak_server.py --seconds 30 --clients 8

It starts `toolturn serve scenarios/default.toml` on a free loopback port (short timeouts, high
speed) and keeps `--clients` clients busy, each drawing its next behaviour in turn:

- valid: a streaming request read to its end (a cut stream, a 529 or a 429 is an answer too);
- invalid: a body the API refuses (bad JSON, a wrong shape): a 400 is expected;
- slow: a request head sent a byte at a time, slower than the header timeout: a 408 or a close;
- short: a body shorter than its Content-Length: a 408 or a close;
- disconnect: a streaming request dropped by the client after its first bytes;
- idle: a connection that sends nothing: the server must close it.

Every exchange has its own deadline (`EXCHANGE_S`, well beyond the server's timeouts): one that
passes it is a hang. The server's resident memory and open file descriptors are sampled every
second. The soak fails (exit 1) if any exchange hung or got an unexpected answer, if memory
grew by more than `RSS_GROWTH_MB` from the end of the warm-up to the end, or if the descriptors
held once the clients are gone are more than at the start. Nothing here asserts speed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "default.toml"
SERVER_TIMEOUT_S = 1.0  # header, body and idle timeouts given to the server
EXCHANGE_S = 20.0
RSS_GROWTH_MB = 25.0
WARM_UP_FRACTION = 0.25
KINDS = ("valid", "invalid", "slow", "short", "disconnect", "idle")
WEIGHTS = (8, 3, 1, 1, 2, 1)
BAD_BODIES = (
    b"{not json",
    json.dumps({"model": "m", "max_tokens": 10, "messages": []}).encode(),
    json.dumps({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}],
                "tools": 5}).encode(),
    json.dumps({"model": "m", "max_tokens": 10**30,
                "messages": [{"role": "user", "content": "x"}]}).encode(),
    b"[" * 50_000,
)


def post(body: bytes, *, length: int | None = None, close: bool = False) -> bytes:
    head = (f"POST /v1/messages HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
            f"x-api-key: dummy\r\nContent-Length: {len(body) if length is None else length}\r\n")
    return (head + ("Connection: close\r\n" if close else "") + "\r\n").encode() + body


def valid_body(rng: random.Random) -> bytes:
    prompt = f"soak {rng.randrange(10**9)}"
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 2048, "stream": True,
                       "messages": [{"role": "user", "content": prompt}]}).encode()


async def read_all(reader: asyncio.StreamReader) -> bytes:
    data = b""
    try:
        while chunk := await reader.read(65536):
            data += chunk
    except ConnectionError:
        pass  # a reset ends the answer as a close does
    return data


async def exchange(kind: str, port: int, rng: random.Random) -> str:
    """One client behaviour; its outcome in a word ("ok", or what went wrong)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if kind == "valid":
            writer.write(post(valid_body(rng), close=True))
            answer = await read_all(reader)
            status = answer[9:12]
            # A stream the model cuts ends without the final chunk: still an answer.
            return "ok" if status in (b"200", b"429", b"529", b"500") else f"status {status!r}"
        if kind == "invalid":
            writer.write(post(rng.choice(BAD_BODIES), close=True))
            answer = await read_all(reader)
            return "ok" if answer.startswith(b"HTTP/1.1 400 ") else f"got {answer[:12]!r}"
        if kind == "slow":
            data = post(valid_body(rng))
            try:
                for index in range(len(data)):
                    writer.write(data[index:index + 1])
                    await writer.drain()
                    await asyncio.sleep(0.2)
                    if reader.at_eof():
                        break
            except ConnectionError:
                pass
            answer = await read_all(reader)
            return "ok" if answer in (b"",) or answer.startswith(b"HTTP/1.1 408 ") else (
                f"got {answer[:12]!r}")
        if kind == "short":
            body = valid_body(rng)
            writer.write(post(body[: len(body) // 2], length=len(body)))
            answer = await read_all(reader)
            return "ok" if answer.startswith(b"HTTP/1.1 408 ") else f"got {answer[:12]!r}"
        if kind == "disconnect":
            writer.write(post(valid_body(rng)))
            await reader.read(rng.choice((1, 200, 2000)))
            writer.transport.abort()
            return "ok"
        answer = await read_all(reader)  # idle: the server must close on us
        return "ok" if answer == b"" else f"got {answer[:12]!r}"
    finally:
        writer.close()


async def client(port: int, seed: int, until: float, outcomes: Counter[tuple[str, str]]) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        kind = rng.choices(KINDS, WEIGHTS)[0]
        try:
            outcome = await asyncio.wait_for(exchange(kind, port, rng), EXCHANGE_S)
        except TimeoutError:
            outcome = "HUNG"
        except OSError as error:
            outcome = f"connect failed: {error}"
        outcomes[(kind, outcome)] += 1


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else float("nan")


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def sample(pid: int, until: float, samples: list[tuple[float, float, int]]) -> None:
    start = time.monotonic()
    while time.monotonic() < until:
        samples.append((time.monotonic() - start, rss_mb(pid), fds(pid)))
        await asyncio.sleep(1.0)


def start_server() -> tuple[subprocess.Popen[str], int, list[str]]:
    command = [
        sys.executable, "-m", "toolturn.cli", "serve", str(SCENARIO), "--port", "0",
        "--speed", "50",
        "--idle-timeout", str(SERVER_TIMEOUT_S), "--header-timeout", str(SERVER_TIMEOUT_S),
        "--body-timeout", str(SERVER_TIMEOUT_S), "--write-timeout", "5",
    ]
    # faulthandler: a server that will not stop is sent SIGABRT, which prints where it is stuck.
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               stdout=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert process.stderr is not None
    banner = process.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)", banner)
    if found is None:
        process.kill()
        raise SystemExit(f"soak: the server did not start: {banner.strip()}")
    # Its log read all along: a full pipe would block the server's event loop on a log line.
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(process.stderr or ()), daemon=True).start()
    return process, int(found.group(1)), log


async def soak(port: int, pid: int, seconds: float, clients: int) -> tuple[
        Counter[tuple[str, str]], list[tuple[float, float, int]], int, int]:
    baseline_fds = fds(pid)
    outcomes: Counter[tuple[str, str]] = Counter()
    samples: list[tuple[float, float, int]] = []
    until = time.monotonic() + seconds
    await asyncio.gather(sample(pid, until, samples),
                         *(client(port, seed, until, outcomes) for seed in range(clients)))
    await asyncio.sleep(SERVER_TIMEOUT_S * 3)  # every connection closed, idle ones timed out
    return outcomes, samples, baseline_fds, fds(pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--clients", type=int, default=24)
    args = parser.parse_args()
    process, port, log_lines = start_server()
    try:
        outcomes, samples, fds_before, fds_after = asyncio.run(
            soak(port, process.pid, args.seconds, args.clients))
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    time.sleep(0.5)  # the reader thread takes the last lines
    log = "".join(log_lines)
    failures = report(outcomes, samples, fds_before, fds_after)
    tracebacks = log.count("Traceback") + log.count("Fatal Python error")
    if tracebacks:
        failures.append(f"{tracebacks} tracebacks in the server's log")
        print(log[log.find("Traceback") if "Traceback" in log else log.find("Fatal"):][:6000])
    if process.returncode != 0:
        failures.append(f"the server exited with status {process.returncode}")
    for failure in failures:
        print(f"FAIL: {failure}")
    print("soak: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


def report(outcomes: Counter[tuple[str, str]], samples: list[tuple[float, float, int]],
           fds_before: int, fds_after: int) -> list[str]:
    failures = []
    print(f"{'client':<12}{'outcome':<40}{'count':>8}")
    for (kind, outcome), count in sorted(outcomes.items()):
        print(f"{kind:<12}{outcome[:39]:<40}{count:>8}")
        if outcome != "ok":
            failures.append(f"{count} {kind} exchanges: {outcome}")
    warm = samples[int(len(samples) * WARM_UP_FRACTION)]
    last = samples[-1]
    peak_fds = max(fd for _, _, fd in samples)
    print(f"RSS {warm[1]:.1f} MB after warm-up ({warm[0]:.0f} s), {last[1]:.1f} MB at the end "
          f"({last[0]:.0f} s); descriptors {fds_before} before, peak {peak_fds}, "
          f"{fds_after} after")
    if last[1] - warm[1] > RSS_GROWTH_MB:
        failures.append(f"RSS grew {last[1] - warm[1]:.1f} MB after the warm-up")
    if fds_after > fds_before:
        failures.append(f"{fds_after - fds_before} descriptors still open after the clients")
    return failures


if __name__ == "__main__":
    sys.exit(main())
