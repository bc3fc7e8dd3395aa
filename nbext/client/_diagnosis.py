"""Why a job is still IN_QUEUE: the likely cause, in one line, from the endpoint's /health.

A wait that ends with the job never started says only "last seen IN_QUEUE", and the
user cannot tell a cold start from a crash loop, a fleet with no GPU free, or a queue
behind busy workers. ``/health`` counts the workers by state, which is enough to name
the likeliest cause; the first that applies wins, from the one that never ends by
itself (workers that cannot start) to the one that only needs patience.
"""

from __future__ import annotations

from nbext.models import Health


def _workers(count: int, what: str) -> str:
    return f"{count} worker{'s' if count != 1 else ''} {what}"


def why_queued(health: Health) -> str:
    """The likely reason a job of this endpoint has not started, as one line."""
    w = health.workers
    queued = health.jobs.in_queue
    if w.ready == 0 and w.unhealthy:
        return (
            f"no worker could start: {_workers(w.unhealthy, 'unhealthy')} (crashing at start "
            "or not answering; read the workers' logs)"
        )
    if w.ready == 0 and w.throttled:
        return f"no GPU free: {_workers(w.throttled, 'throttled')}, waiting for a machine"
    if w.ready == 0 and w.initializing:
        return f"cold start: {_workers(w.initializing, 'initializing')}, none ready yet"
    if w.ready == 0:
        return (
            "no worker is running or starting (is the endpoint's workersMax 0, or its image "
            "unable to start?)"
        )
    if w.idle == 0:
        ahead = f"; {queued} jobs in queue" if queued > 1 else ""
        return f"every worker is busy: {_workers(w.running, 'running')}{ahead}"
    return (
        f"{_workers(w.idle, 'idle')} yet the job waits (a lowPriority job does not start a worker)"
    )
