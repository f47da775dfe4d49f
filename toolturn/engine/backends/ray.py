"""The `ray` backend: `ray.init()` with `jobs` CPUs, or the cluster at `--address`; the `ray`
extra. Its progress channel: a Ray queue actor (`ray.util.queue.Queue`)."""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from toolturn.engine.backends.channel import Channel
from toolturn.engine.backends.missing import missing
from toolturn.errors import UserError

__all__ = ["ray_executor"]


class _RayExecutor(concurrent.futures.Executor):
    """`submit` as a Ray remote call; its ObjectRef's `future()` is the Future."""

    def __init__(self, ray: Any) -> None:
        self._ray = ray
        self._remotes: dict[Callable[..., Any], Any] = {}

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        remote = self._remotes.get(fn)
        if remote is None:
            remote = self._remotes[fn] = self._ray.remote(max_retries=0)(fn)
        future: concurrent.futures.Future[Any] = remote.remote(*args, **kwargs).future()
        return future


@contextmanager
def ray_executor(
    jobs: int, address: str | None
) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    try:
        import ray
        from ray.util.queue import Queue
    except ImportError:
        raise missing("ray", "ray") from None
    if address is None:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    else:
        try:
            ray.init(address=address, log_to_driver=False)
        except ConnectionError as error:  # the address, not the disk (as Dask's)
            raise UserError(
                f"--address {address}: cannot reach the Ray cluster ({error})"
            ) from None
    try:
        # An actor of its own: needs no CPU of the ones the tasks use.
        inbox = Queue(actor_options={"num_cpus": 0})

        def drain() -> list[list[int]]:
            waiting = inbox.qsize()
            return list(inbox.get_nowait_batch(waiting)) if waiting else []

        yield _RayExecutor(ray), Channel(functools.partial(_ray_send, inbox), drain)
    finally:
        ray.shutdown()


def _ray_send(inbox: Any, message: list[int]) -> None:
    """In a Ray task: onto the run's queue actor (it never fills: no bound)."""
    inbox.put_nowait(message)
