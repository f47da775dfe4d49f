"""`sim serve SCENARIO`: the scenario's mock model as an Anthropic-compatible HTTP server.

    $ sim serve scenarios/default.toml --port 8765 --speed 10
    sim serve: listening on http://127.0.0.1:8765 (model claude-sonnet-4-5, seed 20261130,
    speed 10)

Point a client at it (`base_url="http://127.0.0.1:8765"`, any API key, `max_retries=0` to see
every fault). One line per request goes to stderr. Ctrl-C stops it (exit status 0).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from typing import Any

from sim.errors import UserError
from sim.model.model import MockModel
from sim.model.tool_inputs import tool_inputs
from sim.scenario.loader import load_scenario, with_overrides
from sim.wire.server import DEFAULT_HOST, DEFAULT_PORT, MockServer

EXIT_OK = 0


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the scenario's mock model over HTTP/SSE for real clients",
        description="Serve the scenario's mock model as an Anthropic-compatible POST "
        "/v1/messages (streaming and not), with its latencies and faults, on loopback.",
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on "
                        f"(default {DEFAULT_HOST})")
    parser.add_argument("-p", "--port", type=int, default=DEFAULT_PORT,
                        help=f"port to listen on; 0 picks a free one (default {DEFAULT_PORT})")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="divide every delay by this: 10 is ten times faster (default 1)")
    parser.add_argument("-s", "--seed", type=int, default=None,
                        help="root seed of the model's draws (default: the scenario's)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.speed) and args.speed > 0):
        raise UserError(f"--speed: must be a positive number (got {args.speed:g})")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port: must be 0-65535 (got {args.port})")
    scenario = load_scenario(args.scenario)
    if args.seed is not None:
        scenario = with_overrides(scenario, seed=args.seed)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    server = MockServer(model, speed=args.speed)
    try:
        asyncio.run(_serve(server, args.host, args.port, scenario.seed))
    except KeyboardInterrupt:
        print("sim serve: stopped", file=sys.stderr, flush=True)
    return EXIT_OK


async def _serve(server: MockServer, host: str, port: int, seed: int) -> None:
    try:
        await server.start(host, port)
    except OSError as error:
        raise UserError(f"--host {host} --port {port}: cannot listen: {error.strerror}") from None
    print(
        f"sim serve: listening on {server.base_url} (model {server.model.name}, seed {seed}, "
        f"speed {server.speed:g})",
        file=sys.stderr,
        flush=True,
    )
    try:
        await server.serve_forever()
    finally:
        await server.close()
