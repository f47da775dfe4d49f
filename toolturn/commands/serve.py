"""`toolturn serve SCENARIO`: the scenario's mock model as an Anthropic-compatible HTTP server.

    $ toolturn serve scenarios/default.toml --port 8765 --speed 10
    toolturn serve: listening on http://127.0.0.1:8765 (model claude-sonnet-4-5, seed 20261130,
    speed 10)

Point a client at it (`base_url="http://127.0.0.1:8765"`, any API key, `max_retries=0` to see
every fault). The model calls the tools the client declares, with built-in read-only inputs
(`--schema-inputs` for others). Any model name plays the scenario's model unless
`--strict-models`. A connection idle, slow to send its request or not reading its answer beyond
the timeouts is closed (408 for a request begun); beyond `--max-connections` a new one is
closed at once. One line per request goes to stderr. Ctrl-C stops it (exit status 0).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import signal
import sys
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.metrics.provenance import file_sha256, git_commit, package_versions
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.loader import load_scenario, unmodelled_live, with_overrides
from toolturn.scenario.packaged import scenario_argument
from toolturn.wire.client_tools import ClientTools
from toolturn.wire.connection import Timeouts
from toolturn.wire.record_files import (
    FLUSH_S,
    RecordingFiles,
    flush,
    flush_every,
    open_recording,
)
from toolturn.wire.recorder import Recorder
from toolturn.wire.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    MAX_CONNECTIONS,
    MockServer,
    log_to_stderr,
)

EXIT_OK = 0


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the scenario's mock model over HTTP/SSE for real clients",
        description="Serve the scenario's mock model as an Anthropic-compatible POST "
        "/v1/messages, and as the OpenAI Responses API (POST /v1/responses) and Chat "
        "Completions (POST /v1/chat/completions), streaming and not, with its latencies and "
        "faults, on loopback.",
    )
    parser.add_argument("scenario", metavar="SCENARIO", type=scenario_argument,
                        help="scenario TOML file, or a packaged scenario's name "
                        "(default, overload, ...)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on "
                        f"(default {DEFAULT_HOST})")
    parser.add_argument("-p", "--port", type=int, default=DEFAULT_PORT,
                        help=f"port to listen on; 0 picks a free one (default {DEFAULT_PORT})")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="divide every delay by this: 10 is ten times faster (default 1)")
    parser.add_argument("-s", "--seed", type=int, default=None,
                        help="root seed of the model's draws (default: the scenario's)")
    parser.add_argument("--client-dir", metavar="DIR", default=None,
                        help="the client's working directory: Read calls read files under it "
                        "(without it, Read is not called)")
    parser.add_argument("--schema-inputs", action="store_true",
                        help="also call declared tools without built-in safe inputs, with inputs "
                        "from the scenario or the client's schema (they may write or run "
                        "anything: for sandboxed agents only)")
    parser.add_argument("--record", metavar="DIR", default=None,
                        help="record what clients did in DIR (Parquet: requests, tool_calls, "
                        "recoveries), flushed every few seconds and at shutdown")
    parser.add_argument("--flush-every", type=float, default=FLUSH_S, metavar="SECONDS",
                        help="with --record, write what is new this often (default "
                        f"{FLUSH_S:g})")
    parser.add_argument("--give-up", type=float, default=60.0, metavar="SECONDS",
                        help="a fault with no further request of its session within this long "
                        "is recorded as given up (default 60)")
    parser.add_argument("--strict-models", action="store_true",
                        help="answer 404 to a model name the scenario does not name (default: "
                        "every name plays the scenario's model)")
    defaults = Timeouts()
    for flag, field, what in (
        ("--idle-timeout", "idle_s", "close a connection idle this long between requests"),
        ("--header-timeout", "header_s", "408 a request whose headers take longer"),
        ("--body-timeout", "body_s", "408 a request whose body takes longer after its headers"),
        ("--write-timeout", "write_s", "cut a client that reads nothing of its answer this long"),
    ):
        default = getattr(defaults, field)
        parser.add_argument(flag, type=float, default=default, dest=field, metavar="SECONDS",
                            help=f"{what} (default {default:g})")
    parser.add_argument("--max-connections", type=int, default=MAX_CONNECTIONS,
                        help=f"connections open at once; one more is closed at once "
                        f"(default {MAX_CONNECTIONS})")
    parser.set_defaults(func=run)


def timeouts(args: argparse.Namespace) -> Timeouts:
    """The timeouts the flags give; a bad one is a UserError naming its flag."""
    for field in ("idle_s", "header_s", "body_s", "write_s"):
        value = getattr(args, field)
        if not (math.isfinite(value) and value > 0):
            flag = "--" + field[:-2] + "-timeout"
            raise UserError(f"{flag}: must be a positive number of seconds (got {value:g})")
    return Timeouts(args.idle_s, args.header_s, args.body_s, args.write_s)


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.speed) and args.speed > 0):
        raise UserError(f"--speed: must be a positive number (got {args.speed:g})")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port: must be 0-65535 (got {args.port})")
    if args.max_connections < 1:
        raise UserError(f"--max-connections: must be at least 1 (got {args.max_connections})")
    limits = timeouts(args)
    scenario = load_scenario(args.scenario)
    if args.seed is not None:
        scenario = with_overrides(scenario, seed=args.seed)
    ignored = unmodelled_live(scenario)
    if ignored:
        print(f"toolturn serve: warning: {' and '.join(ignored)} not applied: the agent under test "
              "owns its process, its rewinds and its compaction", file=sys.stderr, flush=True)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    client_dir = None if args.client_dir is None else str(Path(args.client_dir).resolve())
    tools = ClientTools({spec.name: spec for spec in scenario.tool_specs},
                        schema_inputs=args.schema_inputs or scenario.model.serve.schema_inputs,
                        client_dir=client_dir)
    if not (math.isfinite(args.give_up) and args.give_up > 0):
        raise UserError(f"--give-up: must be a positive number of seconds (got {args.give_up:g})")
    if not (math.isfinite(args.flush_every) and args.flush_every > 0):
        raise UserError(f"--flush-every: must be a positive number of seconds "
                        f"(got {args.flush_every:g})")
    folder = None if args.record is None else open_recording(Path(args.record))
    recorder = None if folder is None else Recorder(round(args.give_up * 1e9))
    server = MockServer(model, speed=args.speed, timeouts=limits,
                        max_connections=args.max_connections, strict_models=args.strict_models,
                        client_tools=tools, recorder=recorder)
    metadata = {
        "scenario": scenario.name, "scenario_file": str(args.scenario),
        "scenario_sha256": file_sha256(Path(args.scenario)), "seed": scenario.seed,
        "speed": args.speed, "client_dir": client_dir, "schema_inputs": args.schema_inputs,
        "give_up_s": args.give_up, "versions": package_versions(), "git_commit": git_commit(),
    }
    try:
        files = None if folder is None else RecordingFiles(folder, metadata)
    except OSError as error:
        raise UserError(f"--record {folder}: cannot write the recording "
                        f"({error.strerror or error})") from None
    try:
        asyncio.run(_serve(server, args.host, args.port, scenario.seed, files, args.flush_every))
    except KeyboardInterrupt:
        pass
    print("toolturn serve: stopped" + (f"; recorded in {folder}" if folder else ""),
          file=sys.stderr, flush=True)
    return EXIT_OK


async def _serve(server: MockServer, host: str, port: int, seed: int,
                 files: RecordingFiles | None, flush_s: float) -> None:
    try:
        await server.start(host, port)
    except OSError as error:
        raise UserError(f"--host {host} --port {port}: cannot listen: {error.strerror}") from None
    print(
        f"toolturn serve: listening on {server.base_url} (model {server.model.name}, seed {seed}, "
        f"speed {server.speed:g})",
        file=sys.stderr,
        flush=True,
    )
    task = asyncio.current_task()
    assert task is not None
    # SIGTERM stops the server as Ctrl-C does: what was answered is flushed, nothing is lost.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    flusher = None
    if files is not None and server.recorder is not None:
        flusher = asyncio.create_task(
            flush_every(server.recorder, files, server.clock_ns, log_to_stderr, flush_s))
    try:
        await server.serve_forever()
    except asyncio.CancelledError:
        pass  # SIGTERM or Ctrl-C: stop serving, then flush below
    finally:
        if flusher is not None:
            flusher.cancel()
        await server.close()
        if files is not None and server.recorder is not None:
            try:
                flush(server.recorder, files, None)
            except OSError as error:
                raise UserError(f"--record {files.folder}: cannot write the recording "
                                f"({error.strerror or error})") from None
