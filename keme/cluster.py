"""Distributed runs on Ray: one connection per command, tasks in a reserved set of CPUs, results in order.

`keme synth --workers N` and `keme eval --workers N` hand their units of work (a persona; a system and a
persona) to Ray tasks. Without an address, a local Ray is started on this machine with N CPUs; with one
(`--ray-address`), the command joins that cluster and reserves N CPUs of it (a placement group: at most N
tasks of the run at once; N defaults to the cluster's CPUs). A process that is connected to Ray already
(a test, a notebook) keeps its connection.

Ray is an optional extra (`pip install -e '.[ray]'`), imported only here and only when asked for.

The driver takes results in the order it submitted the tasks, so it writes what they return the way a
sequential run writes it. A KemeError raised in a task is raised again in the driver as it was (its
message, never a Ray traceback), the first one in submission order, as a sequential run would meet it; any
other exception of a task is raised again too (the CLI reports it as an internal error). A worker that
dies (killed, out of memory) is retried by Ray; when it keeps dying, the run stops with a KemeError.
"""

from __future__ import annotations

import importlib
import logging
import os
import pickle
import socket
from collections.abc import Callable, Iterator
from typing import Any

from keme.errors import KemeError

MISSING = "--workers needs Ray: pip install -e '.[ray]'"
OBJECT_STORE_BYTES = 512 * 2**20  # a local Ray's shared memory: results are a few MB a persona-year
READY_TIMEOUT_S = 120  # how long to wait for the cluster to grant the CPUs asked for
# bench/workers.py sets a dict here to count the pickled bytes shipped: "put" (objects put once, read by
# tasks), "sent" (task arguments besides those), "returned" (task results), "largest" (one result)
SHIPPED: dict[str, int] | None = None


def _count(kind: str, value: Any) -> None:
    if SHIPPED is None:
        return
    from ray import cloudpickle

    size = len(cloudpickle.dumps(value))
    SHIPPED[kind] = SHIPPED.get(kind, 0) + size
    if kind == "returned":
        SHIPPED["largest"] = max(SHIPPED.get("largest", 0), size)


def wanted(workers: int | None, address: str | None) -> bool:
    """Whether these options ask for Ray: more than one worker, or a cluster to join."""
    return address is not None or (workers or 1) > 1


def node() -> str:
    """The Ray node this process runs on (the driver's, or a worker's)."""
    import ray

    return ray.get_runtime_context().get_node_id()


def host() -> str:
    return socket.gethostname()


def require_ray():
    """The ray module; a KemeError saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise KemeError(MISSING) from None
    return ray


def _load(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(name)


def _run(fn: Callable[..., Any], *args: Any) -> Any:
    """A task's body. A KemeError whose own class does not survive pickling leaves the worker as a plain
    KemeError with the same message."""
    try:
        return fn(*args)
    except KemeError as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - any failure to round-trip: keep the message
            raise KemeError(str(exc)) from None
        raise


def _chain(exc: BaseException | None) -> str:
    """The messages of an exception and of those it was raised from."""
    seen = []
    while exc is not None and len(seen) < 10:
        seen.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return " | ".join(seen)


class Cluster:
    """A Ray connection with `workers` CPUs reserved for one command; use it as a context manager.

    `submit` starts a task, `result` / `results` wait for it; tasks still running when the block is left
    (after an error) are cancelled, and the reservation is released.
    """

    def __init__(self, workers: int | None, address: str | None = None):
        self.ray = require_ray()
        self.address = address
        self._connect(workers)
        total = int(self.ray.cluster_resources().get("CPU", 0))
        self.workers = workers or total
        if self.workers > total:
            where = f"the Ray cluster at {address}" if address else "the Ray this process is connected to"
            raise KemeError(f"--workers {self.workers}: {where} has {total} CPUs")
        self.group = self._reserve()
        self.task = self.ray.remote(_run)
        self.pending: list[Any] = []

    def _connect(self, workers: int | None) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        logging.getLogger("ray").setLevel(logging.ERROR)  # Ray's start-up notices are not the command's
        quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
        try:
            if self.address is None:
                ray.init(
                    address="local",
                    num_cpus=workers or 1,
                    include_dashboard=False,
                    object_store_memory=OBJECT_STORE_BYTES,
                    # Ray runs its workers at nice 15 (here they are the run, not a background) and ends a
                    # worker idle for 1 s (the next stage's task would pay its 2-3 s of imports again)
                    _system_config={"worker_niceness": 0, "idle_worker_killing_time_threshold_ms": 600_000},
                    **quiet,
                )
            else:
                # a remote worker does not inherit this shell: pass on keme's settings (KEME_LLM_CACHE, ...)
                env = {k: v for k, v in os.environ.items() if k.startswith("KEME_")}
                ray.init(address=self.address, runtime_env={"env_vars": env}, **quiet)
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError, ...
            where = f"join the Ray cluster at {self.address}" if self.address else "start a local Ray"
            hint = ""
            if "AuthToken" in _chain(exc) and os.environ.get("RAY_AUTH_MODE") != "token":
                hint = (
                    "; the cluster asks for a token (`ray start` turns token authentication on): run with "
                    "RAY_AUTH_MODE=token and the cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN"
                )
            raise KemeError(f"cannot {where}: {type(exc).__name__}: {exc}{hint}") from None

    def _reserve(self):
        from ray.util.placement_group import placement_group

        group = placement_group([{"CPU": 1}] * self.workers, strategy="SPREAD")
        try:
            self.ray.get(group.ready(), timeout=READY_TIMEOUT_S)
        except self.ray.exceptions.GetTimeoutError:
            self._release(group)
            raise KemeError(
                f"--workers {self.workers}: the Ray cluster did not grant {self.workers} CPUs in "
                f"{READY_TIMEOUT_S} s (others are in use); ask for fewer workers"
            ) from None
        return group

    def _release(self, group) -> None:
        from ray.util.placement_group import remove_placement_group

        try:
            remove_placement_group(group)
        except Exception:  # noqa: BLE001 - the connection may be gone already; nothing is left to free
            pass

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        for ref in self.pending:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - finished meanwhile, or the connection is gone
                pass
        self.pending.clear()
        self._release(self.group)

    # ------------------------------------------------------------ tasks
    def put(self, value: Any) -> Any:
        """`value` in the object store once, for every task that takes it (a reference)."""
        _count("put", value)
        return self.ray.put(value)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Start `fn(*args)` as a task on one reserved CPU; `fn` must be a module-level function."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        strategy = PlacementGroupSchedulingStrategy(self.group)
        _count("sent", [a for a in args if not isinstance(a, self.ray.ObjectRef)])
        ref = self.task.options(num_cpus=1, scheduling_strategy=strategy).remote(fn, *args)
        self.pending.append(ref)
        return ref

    def preload(self, *modules: str) -> None:
        """Import `modules` in every worker once it is free (behind the tasks submitted so far), so that a
        later stage's first task does not wait for its imports (seconds for keme's)."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        for bundle in range(self.workers):
            strategy = PlacementGroupSchedulingStrategy(self.group, placement_group_bundle_index=bundle)
            self.task.options(num_cpus=1, scheduling_strategy=strategy).remote(_load, modules)

    def result(self, ref: Any, what: str) -> Any:
        """The task's result; its error raised again as the task raised it (`what` names the work, for a
        worker that died)."""
        ray = self.ray
        try:
            value = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, BaseException):
                raise cause from None
            raise KemeError(f"{what} failed in a Ray worker: {exc}") from None
        except ray.exceptions.RayError as exc:  # the worker or its node died, retries exhausted
            raise KemeError(
                f"the Ray worker running {what} died ({type(exc).__name__}); run the same command again to "
                "resume"
            ) from None
        if ref in self.pending:
            self.pending.remove(ref)
        _count("returned", value)
        return value

    def results(self, refs: list[Any], what: Callable[[int], str]) -> Iterator[Any]:
        """The tasks' results in the order of `refs`."""
        for index, ref in enumerate(refs):
            yield self.result(ref, what(index))
