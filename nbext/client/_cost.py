"""What a job cost (the service's own figure, else an estimate), and ``budget_usd``, a cap on it
(docs/behaviour.md#what-a-job-costs, docs/architecture.md#cost-and-budget)."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from nbext.models import JobResult
from nbext.models.v2 import GpuType

from ._errors import BudgetExceeded, ConnectionError, NbextError, RateLimited, ServerError, Timeout
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
    """Dollars to the precision a job's cost needs: cents, or 3 significant digits below
    one, written out as money is (``$0.00000153``, never ``1.53e-06``)."""
    if amount >= 1 or amount == 0:
        return f"${amount:,.2f}"
    return f"${amount:.{2 - math.floor(math.log10(amount))}f}".rstrip("0")


def _dollars(value: object) -> float | None:
    """``value`` as dollars when it is a finite number >= 0 (a bool is not), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def reported_cost(result: JobResult) -> float | None:
    """``output.cost`` when the output is an object carrying a finite number >= 0 there."""
    output = result.output
    return _dollars(output.get("cost")) if isinstance(output, Mapping) else None


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
    """None while the job has not ended, or when its cost cannot be known."""
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
    """Each endpoint's price, read once per client (the catalog too), or why it is unknown:
    the first GPU type its pools allow, in the catalog's order (as the emulator places it)."""

    def __init__(self, api: V2) -> None:
        self._api = api
        self._known: dict[str, Price | Unpriced] = {}
        self._catalog: list[GpuType] | None = None
        self._failed: dict[str, tuple[float, Unpriced]] = {}
        """When a price was last not given for lack of an answer, and that answer."""
        self._lock = threading.Lock()

    def of(self, ctx: Context, endpoint_id: str) -> Flow[Price | Unpriced]:
        """The endpoint's price: read the first time (without retries, within
        ``PRICE_CALL_TIMEOUT``), then from memory."""
        with self._lock:
            found, failed = self._known.get(endpoint_id), self._failed.get(endpoint_id)
        if found is not None:
            return found
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


def checked_budget(value: object) -> float | None:
    """``value`` as a cap in dollars (None: no cap); anything else is a one-line ValueError."""
    cap = _dollars(value)
    if cap is None and value is not None:
        raise ValueError(
            f"budget_usd must be a number of dollars >= 0, or None for no cap; got {value!r}"
        )
    return cap


class Budget:
    """What the jobs started through the clients holding this have cost, and the cap.

    ``spent_usd`` counts the jobs seen to end so far: a reported cost at once, an
    estimate once priced (by the next submission under a cap, or ``job.cost()``).
    Thread-safe: a sync map counts from its own thread.
    """

    def __init__(self, budget_usd: float | None = None) -> None:
        self._cap = checked_budget(budget_usd)
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}
        """Jobs started and not yet seen to end: id -> endpoint id."""
        self._ended: list[Ended] = []
        """Ended, not yet priced."""
        self._costs: dict[str, JobCost] = {}
        self._unpriced: dict[str, Unpriced] = {}
        self._earlier = 0.0
        """What earlier runs of retried jobs cost."""
        self._endpoints: dict[str, str] = {}
        """Every job started: id -> endpoint id (what a batch's estimate is made of)."""
        self.batches: dict[str, int] = {}
        """The batches started through the clients holding this budget: id -> requests."""

    @property
    def budget_usd(self) -> float | None:
        return self._cap

    @budget_usd.setter
    def budget_usd(self, value: float | None) -> None:
        self._cap = checked_budget(value)

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._earlier + sum(c.usd for c in self._costs.values())

    @property
    def costs(self) -> dict[str, JobCost]:
        with self._lock:
            return dict(self._costs)

    @property
    def unpriced(self) -> list[str]:
        with self._lock:
            return list(self._unpriced)

    def describe(self) -> str:
        """``$0.0315 of budget_usd=0.05`` (or ``, no cap``), and the jobs of unknown cost."""
        cap = ", no cap" if self._cap is None else f" of budget_usd={self._cap:g}"
        unknown = len(self.unpriced)
        more = f"; {unknown} job(s) of unknown cost" if unknown else ""
        return f"{usd_text(self.spent_usd)}{cap}{more}"

    def __repr__(self) -> str:
        return f"Budget(spent {self.describe()})"

    # ---- told by the client ---------------------------------------------------------------

    def started(self, endpoint_id: str, job_id: str) -> None:
        """The client submitted ``job_id`` (or queued it again: a retry is a new run)."""
        with self._lock:
            earlier = self._costs.pop(job_id, None)
            if earlier is not None:
                self._earlier += earlier.usd
            self._unpriced.pop(job_id, None)
            self._running[job_id] = self._endpoints[job_id] = endpoint_id

    def mean_cost(self, endpoint_id: str) -> tuple[float, int] | None:
        """The mean cost of the jobs of ``endpoint_id`` priced so far, and how many."""
        with self._lock:
            usd = [c.usd for i, c in self._costs.items() if self._endpoints.get(i) == endpoint_id]
        return (sum(usd) / len(usd), len(usd)) if usd else None

    def batch_request(self, endpoint_id: str, result: JobResult) -> None:
        """A request of one of ``batches`` read ended: counted once, however many handles
        of its batch read it."""
        with self._lock:
            if result.id in self._endpoints:
                return
        self.started(endpoint_id, result.id)
        self.seen(result)

    def seen(self, result: JobResult) -> None:
        """A job it started that has ended has a cost."""
        if not result.status.is_final:
            return
        with self._lock:
            endpoint_id = self._running.pop(result.id, None)
            if endpoint_id is None:
                return
            ended = Ended.of(endpoint_id, result)
            reported = ended.cost(None)  # the service's own figure needs no price
            if reported is not None:
                self._costs[result.id] = reported
            else:
                self._ended.append(ended)

    def priced(self, cost: JobCost) -> None:
        """A cost worked out elsewhere (``job.cost()``) for a job seen to end: counted now."""
        with self._lock:
            waiting = [e for e in self._ended if e.job_id == cost.job_id]
            if waiting:
                self._ended.remove(waiting[0])
                self._costs[cost.job_id] = cost

    def price(self, ctx: Context, prices: Prices) -> Flow[None]:
        """Price the jobs seen to end since the last time (each endpoint's price is read
        once); one whose price the service did not give now waits for the next time."""
        with self._lock:
            ended, self._ended = self._ended, []
        for i, job in enumerate(ended):
            price: Price | Unpriced | None = None
            try:
                if job.reported is None:
                    price = yield from prices.of(ctx, job.endpoint_id)
            except BaseException:
                with self._lock:
                    self._ended.extend(ended[i:])
                raise
            cost = job.cost(price)
            with self._lock:
                if cost is not None:
                    self._costs[job.job_id] = cost
                elif isinstance(price, Unpriced) and price.passing:
                    self._ended.append(job)
                elif isinstance(price, Unpriced):
                    self._unpriced[job.job_id] = price


class Spending:
    """A client's budget and prices: told of every job it starts and sees, asked before
    each submission (``_flows.JobHooks``), and what prices a job that has ended."""

    def __init__(self, budget: Budget, prices: Prices) -> None:
        self.budget = budget
        self.prices = prices

    def started(self, endpoint_id: str, job_id: str) -> None:
        self.budget.started(endpoint_id, job_id)

    def seen(self, result: JobResult) -> None:
        self.budget.seen(result)

    def admit(self, ctx: Context, endpoint_id: str) -> Flow[None]:
        """Refuse a submission to ``endpoint_id`` once the budget is spent."""
        budget = self.budget
        if budget.budget_usd is None:
            return
        yield from budget.price(ctx, self.prices)
        cap, spent, unpriced = budget.budget_usd, budget.spent_usd, len(budget.unpriced)
        if spent < cap:
            return
        uncounted = f"; {unpriced} job(s) of unknown cost not counted" if unpriced else ""
        raise BudgetExceeded(
            f"budget reached: jobs started from this client cost {usd_text(spent)} of "
            f"budget_usd={cap:g}{uncounted}; not submitting to endpoint {endpoint_id!r} "
            "(raise budget_usd to go on)",
            budget_usd=cap,
            spent_usd=spent,
            unpriced=unpriced,
            endpoint_id=endpoint_id,
        )

    def admit_batch(self, ctx: Context, endpoint_id: str, count: int) -> Flow[None]:
        """Refuse a batch of ``count`` inputs once the budget is spent, or when ``count``
        times the mean cost of the endpoint's jobs priced so far exceeds what is left
        (with none priced yet there is no estimate: refused only once spent)."""
        yield from self.admit(ctx, endpoint_id)
        cap, mean = self.budget.budget_usd, self.budget.mean_cost(endpoint_id)
        if cap is None or mean is None:
            return
        (each, jobs), left = mean, cap - self.budget.spent_usd
        if count * each <= left:
            return
        raise BudgetExceeded(
            f"batch of {count} inputs to endpoint {endpoint_id!r} not sent: its estimate, "
            f"{usd_text(count * each)} ({count} x {usd_text(each)}, the mean of {jobs} of its "
            f"jobs), exceeds the {usd_text(left)} left of budget_usd={cap:g} (raise "
            "budget_usd, or send fewer inputs)",
            budget_usd=cap,
            spent_usd=self.budget.spent_usd,
            unpriced=len(self.budget.unpriced),
            endpoint_id=endpoint_id,
        )

    def cost(self, ctx: Context, endpoint_id: str, result: JobResult) -> Flow[JobCost | None]:
        """What a job of ``endpoint_id`` that has ended cost (``Endpoint.cost``), counted
        in the budget once known."""
        price: Price | Unpriced | None = None
        if result.status.is_final and reported_cost(result) is None:
            price = yield from self.prices.of(ctx, endpoint_id)
        cost = job_cost(endpoint_id, result, price)
        if cost is not None:
            self.budget.priced(cost)
        return cost
