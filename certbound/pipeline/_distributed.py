"""Farm a model's matrices out to a Dask cluster (optional extra ``certbound[dask]``).

Each task of :func:`certbound.pipeline._streaming.plan_tasks` (the recipe:
model path, layer, matrix types, and the digests of records a resumed run
already has) is submitted to a Dask worker, which opens the checkpoint at the
same path itself and reads only that task's tensors (memory-mapped), so no
arrays travel from the client; records travel back and are stored as each
task completes. The workers must see the model at the same path (a shared
or identically laid out file system) and run the same certbound version.

``address`` is a scheduler address (``tcp://host:8786``) or ``"local"`` for a
:class:`distributed.LocalCluster` of worker *processes* with one thread each
(the kernel holds the GIL in its Arb parts, so threads would not help; Dask's
nannies already start workers with one BLAS thread).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Iterator, Sequence

from certbound._errors import OptionError

from ._streaming import (
    MatrixOutcome,
    MatrixTask,
    MemoryRecordStore,
    ModelSource,
    OutcomeCollector,
    run_task,
    with_known,
)

__all__ = ["dask_client", "run_dask"]


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise OptionError("`dask` needs the optional Dask packages: pip install 'certbound[dask]'") from None
    return distributed


@contextlib.contextmanager
def dask_client(address: str, *, n_workers: int = 2) -> Iterator[Any]:
    """A :class:`distributed.Client` for ``address``, closed (with its local cluster) on exit.

    ``"local"`` starts a ``LocalCluster`` of ``n_workers`` processes with one
    thread each and no dashboard; any other string is a scheduler address.

    Parameters
    ----------
    address : str
        ``"local"`` or a scheduler address (``"tcp://host:8786"``).
    n_workers : int
        Worker processes of a local cluster.

    Yields
    ------
    distributed.Client
        The connected client.

    Raises
    ------
    certbound.OptionError
        Without the optional Dask packages (``certbound[dask]``).
    ConnectionError
        When the scheduler cannot be reached.
    """
    distributed = _import_distributed()
    if address == "local":
        if n_workers < 1:
            raise ValueError(f"a local Dask cluster needs at least one worker, not {n_workers}")
        with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                distributed.Client(cluster) as client:
            yield client
        return
    try:
        client = distributed.Client(address)  # connect timeout: dask config distributed.comm.timeouts.connect
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(f"cannot reach the Dask scheduler at {address!r} ({exc})") from None
    with client:
        yield client


def run_dask(address: str, source: ModelSource, tasks: Sequence[MatrixTask],
             certify: Callable[[Any], dict[str, Any]], store: MemoryRecordStore, *, n_workers: int = 2,
             on_matrix: Callable[[MatrixOutcome], None] | None = None) -> list[MatrixOutcome]:
    """Run the tasks on a Dask cluster; each finished task's records are stored as it arrives.

    Returns the outcomes in report order. On the first failing task the
    others are cancelled and its exception is raised (records stored so far
    stay in the store, so a resumed run continues from them). ``certify``
    must be picklable by reference (a module-level function or a
    ``functools.partial`` of one) and importable on the workers.

    Parameters
    ----------
    address : str
        ``"local"`` or a scheduler address.
    source : ModelSource
        How each worker opens the model (the same path on every machine).
    tasks : sequence of MatrixTask
        The plan.
    certify : callable
        ``certify(theory_matrix) -> record dict``.
    store : MemoryRecordStore or RecordStore
        Where records go.
    n_workers : int
        Worker processes of a local cluster.
    on_matrix : callable, optional
        Called with each outcome as its task arrives.

    Returns
    -------
    list of MatrixOutcome
        The outcomes in report order.
    """
    distributed = _import_distributed()
    collector = OutcomeCollector(store, on_matrix)
    tasks = with_known(tasks, store.known())
    with dask_client(address, n_workers=n_workers) as client:
        futures = [client.submit(run_task, source, t, certify, pure=False) for t in tasks]
        try:
            for fut in distributed.as_completed(futures):
                try:
                    result = fut.result()
                except FileNotFoundError as exc:
                    raise FileNotFoundError(f"a Dask worker cannot open the model: {exc} (every worker must "
                                            f"see {source.path} at the same path)") from None
                collector.add(*result)
                fut.release()
        except BaseException:
            client.cancel(futures)
            raise
    return collector.ordered(tasks)
