"""``budget_usd``: a cap on what the jobs a client starts may cost, and the tally behind it.

Every job the client starts (``run``, ``run_sync``, each ``map`` input, ``retry``) is
noted; when the client sees it end, what its cost is made of is kept (execution time,
``output.cost``), and priced when the next submission asks (``_cost``). A submission is
refused, before anything is sent, once the tally has reached the cap: ``BudgetExceeded``,
one line saying what was spent of what. The cost of a job is known only once it has
ended, so jobs still running when the cap is reached go on, and can take the spend past
it by what they cost; a map that reaches the cap stops submitting and cancels the jobs it
has in flight (``_map``), so that overrun is what had already run.

A ``Budget`` is shared by assigning it (``async_client.budget = client.budget``): the
notebook's blocking and async clients count against one cap. A client's ``Spending``
holds its budget and its prices and is what its flows tell of the jobs they start and
see (``_flows.JobHooks``), so the flows know nothing of either.
(docs/behaviour.md#budget)
"""

from __future__ import annotations

import math
import threading

from nbext.models import JobResult

from ._cost import Ended, JobCost, Price, Prices, Unpriced, job_cost, reported_cost, usd_text
from ._errors import BudgetExceeded
from ._flows import Context, Flow


def checked_budget(value: object) -> float | None:
    """``value`` as a cap in dollars (None: no cap); anything else is a one-line ValueError."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value >= 0)
    ):
        raise ValueError(
            f"budget_usd must be a number of dollars >= 0, or None for no cap; got {value!r}"
        )
    return float(value)


class Budget:
    """What the jobs started through the clients holding this have cost, and the cap.

    ``budget_usd`` (None: no cap) may be changed at any time; ``spent_usd`` is the cost
    of the jobs seen to end so far (a reported cost at once, an estimate once priced: by
    the next submission under a cap, or ``job.cost()``); ``costs`` each
    priced job's latest cost, by id; ``unpriced`` the ids of jobs whose cost is unknown.
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
        self.batches: set[str] = set()
        """The batches started through the clients holding this budget."""

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
        """A state the client read: a job it started has ended, so it has a cost."""
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
