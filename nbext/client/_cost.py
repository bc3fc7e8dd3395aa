"""What a job cost: the service's own figure where it gives one, else an estimate.

A job's cost is its execution time x its endpoint's serverless price per GPU-second x
the GPUs per worker, the price from the catalog (``/v2/catalog/gpus``, ``price.serverless``
per GPU-hour) for the endpoint's GPU type. The service's public endpoints put what a
job cost in its output (``output.cost``); where they do, that figure is the cost, and
the record says which of the two it is. Queueing, cold starts and idle workers are
billed by the service per worker, not per job, so no job's cost includes them
(docs/behaviour.md#what-a-job-costs).

An endpoint's price takes two calls (the endpoint, the catalog); ``Prices`` keeps each
endpoint's (and the catalog) for the client's life, so pricing a thousand jobs of one
endpoint asks once. A price that could not be read (a REST v1 client has no catalog; a
CPU endpoint; an endpoint that is not this account's) is kept as unknown, with the
reason, and not asked again.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from nbext.models import JobResult
from nbext.models.v2 import GpuType

from ._errors import ConnectionError, NbextError, RateLimited, ServerError, Timeout
from ._flows import Context, Flow
from ._resources.catalog import gpus as catalog_gpus
from ._resources.endpoints import get as get_endpoint
from ._resources.rest import V2

PASSING = (ConnectionError, Timeout, ServerError, RateLimited)
"""Failures that say nothing lasting about the price: asked again, after ``ASK_AGAIN_S``."""
ASK_AGAIN_S = 60.0
"""Seconds before a price the service did not give is asked for again (so a management
interface that is down does not slow every submission under a budget)."""
PRICE_CALL_TIMEOUT = 10.0
"""Seconds a price's calls may take, retries included: a price is worth a try, not a wait."""
CostSource = Literal["reported", "estimate"]
"""``reported``: the service's ``output.cost``; ``estimate``: computed from the catalog."""


@dataclass(frozen=True)
class Price:
    """What one second of one worker of an endpoint costs, and what that is made of."""

    endpoint_id: str
    gpu_type_id: str
    gpus: int
    """GPUs per worker."""
    usd_per_gpu_hour: float
    """The catalog's serverless list price of one GPU of the type, per hour."""

    @property
    def usd_per_second(self) -> float:
        """One worker executing for a second: the GPU's price per second x ``gpus``."""
        return self.usd_per_gpu_hour / 3600 * self.gpus


@dataclass(frozen=True)
class Unpriced:
    """An endpoint whose price could not be read, and why (one line)."""

    endpoint_id: str
    reason: str
    passing: bool = False
    """The service did not answer (a connection error, 5xx, 429): ask again next time."""


@dataclass(frozen=True)
class JobCost:
    """What one finished job cost: ``usd``, and whether the service said so
    (``source == "reported"``, its ``output.cost``) or it is an ``estimate`` from the
    catalog (``price`` and ``execution_s`` then say how it was made)."""

    job_id: str
    usd: float
    source: CostSource
    execution_s: float | None = None
    price: Price | None = None

    @property
    def estimate(self) -> bool:
        return self.source == "estimate"

    def __str__(self) -> str:
        amount = usd_text(self.usd)
        if self.price is None or self.execution_s is None:
            return f"{amount} (reported by the service)"
        p = self.price
        gpus = f"{p.gpus} x " if p.gpus != 1 else ""
        return (
            f"{amount} (estimate: {self.execution_s:g} s x {gpus}{p.gpu_type_id} "
            f"at ${p.usd_per_gpu_hour:g}/h)"
        )


def usd_text(amount: float) -> str:
    """Dollars to the precision a job's cost needs: cents, or 3 significant digits below one."""
    if amount >= 1 or amount == 0:
        return f"${amount:,.2f}"
    return f"${amount:.3g}" if amount >= 0.0001 else f"${amount:.2e}"


def reported_cost(result: JobResult) -> float | None:
    """``output.cost`` when the output is an object carrying a finite number >= 0 there."""
    output = result.output
    if not isinstance(output, Mapping):
        return None
    value = output.get("cost")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True)
class Ended:
    """What a job's cost is made of, kept from its final state (not its whole output)."""

    job_id: str
    endpoint_id: str
    execution_ms: int
    reported: float | None

    @classmethod
    def of(cls, endpoint_id: str, result: JobResult) -> Ended:
        execution = result.execution_time or 0
        return cls(result.id, endpoint_id, execution, reported_cost(result))

    def cost(self, price: Price | Unpriced | None) -> JobCost | None:
        """The service's figure, else the estimate at ``price``; None with neither."""
        if self.reported is not None:
            return JobCost(self.job_id, self.reported, "reported")
        if not isinstance(price, Price):
            return None
        seconds = self.execution_ms / 1000
        return JobCost(self.job_id, seconds * price.usd_per_second, "estimate", seconds, price)


def job_cost(endpoint_id: str, result: JobResult, price: Price | Unpriced | None) -> JobCost | None:
    """The cost of a job that has ended (None while it has not, or when neither the
    service's figure nor the endpoint's price is known)."""
    if not result.status.is_final:
        return None
    return Ended.of(endpoint_id, result).cost(price)


def _price(ctx: Context, api: V2, endpoint_id: str, gpus: list[GpuType]) -> Flow[Price | Unpriced]:
    endpoint = yield from get_endpoint(ctx, api, endpoint_id)
    if endpoint.cpu:
        return Unpriced(endpoint_id, "a CPU endpoint; only GPU endpoints are priced")
    pools = endpoint.gpu.pools if endpoint.gpu is not None else []
    excluded = set(endpoint.gpu.excluded_types or ()) if endpoint.gpu is not None else set()
    types = [g for pool in pools for g in gpus if g.pool == pool and g.id not in excluded]
    if not types:
        return Unpriced(endpoint_id, "the endpoint names no GPU pool the catalog has")
    hourly = types[0].price.get("serverless")
    if hourly is None:
        return Unpriced(endpoint_id, f"the catalog has no serverless price for {types[0].id!r}")
    count = endpoint.gpu.count if endpoint.gpu is not None else 1
    return Price(endpoint_id, types[0].id, count or 1, float(hourly))


class Prices:
    """Each endpoint's price, read once per client (the catalog too), or why it is unknown.

    A worker of an endpoint gets the first GPU type its pools allow, in the catalog's
    order (as the emulator places it); that one prices the endpoint's jobs.
    """

    def __init__(self, api: V2) -> None:
        self._api = api
        self._known: dict[str, Price | Unpriced] = {}
        self._catalog: list[GpuType] | None = None
        self._failed: dict[str, tuple[float, Unpriced]] = {}
        """When a price was last not given for lack of an answer, and that answer."""
        self._lock = threading.Lock()

    def known(self, endpoint_id: str) -> Price | Unpriced | None:
        """The price already read (or found unknown), without asking."""
        with self._lock:
            return self._known.get(endpoint_id)

    def of(self, ctx: Context, endpoint_id: str) -> Flow[Price | Unpriced]:
        """The endpoint's price: read the first time, then from memory. Its calls are not
        retried and take at most ``PRICE_CALL_TIMEOUT``; when they fail for lack of an
        answer, the price is not asked for again for ``ASK_AGAIN_S``."""
        found = self.known(endpoint_id)
        if found is not None:
            return found
        with self._lock:
            failed = self._failed.get(endpoint_id)
        if failed is not None and ctx.now() - failed[0] < ASK_AGAIN_S:
            return failed[1]
        quick = replace(
            ctx,
            policy=replace(ctx.policy, max_retries=0),
            call_timeout=min(ctx.call_timeout, PRICE_CALL_TIMEOUT),
        )
        try:
            if self._catalog is None:
                self._catalog = yield from catalog_gpus(quick, self._api)
            found = yield from _price(quick, self._api, endpoint_id, self._catalog)
        except PASSING as exc:
            unknown = Unpriced(endpoint_id, exc.reason, passing=True)
            with self._lock:
                self._failed[endpoint_id] = (ctx.now(), unknown)
            return unknown
        except NbextError as exc:
            found = Unpriced(endpoint_id, exc.reason)
        with self._lock:
            self._known[endpoint_id] = found
        return found
