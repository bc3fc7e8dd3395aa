"""The sync and async job handles and management resources are made from one set of
operations, by one mechanism: the twins accept the same arguments, say the same thing in
help(), and differ only in what they hand back (awaited, or an async iterator), down to
what a type checker sees."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import nbext.client as nc
from nbext.client import AsyncEndpoint, AsyncJob, Endpoint, Job

RESOURCES = [
    "Billing",
    "Catalog",
    "Clusters",
    "Endpoints",
    "NetworkVolumes",
    "Pods",
    "RegistryAuths",
    "RegistryDelegations",
    "SshKeys",
    "Templates",
]
PAIRS = [(Endpoint, AsyncEndpoint), (Job, AsyncJob), (nc.Batch, nc.AsyncBatch)] + [
    (getattr(nc, name), getattr(nc, f"Async{name}")) for name in RESOURCES
]
ROOT = Path(__file__).resolve().parents[2]


def public_methods(cls: type) -> dict[str, Any]:
    return {
        name: getattr(cls, name)
        for name in dir(cls)
        if not name.startswith("_") and inspect.isfunction(getattr(cls, name))
    }


NO_REQUEST = {"job"}
"""Methods that only make a handle: neither twin waits for anything (``openai()`` reads
the endpoint's record, once per client, so its async twin is awaited)."""
SHARED: set[str] = set()
"""Methods both twins inherit from one base (the same function, so twins by construction)."""


def async_twin_of(name: str, annotation: str) -> str:
    """What the async twin of a sync method with this return type returns."""
    annotation = re.sub(r"\b(Job|Batch)\b", r"Async\1", annotation)
    if name in NO_REQUEST:
        return annotation
    if annotation == "MapResults":  # an iterator class of its own, with ``abandoned``
        return "AsyncMapResults"
    for sync, twin in (
        ("Generator[", "AsyncGenerator["),
        ("Iterator[", "AsyncIterator["),
    ):
        if annotation.startswith(sync):
            return twin + annotation.removeprefix(sync).replace(", None, None]", ", None]")
    return f"Awaitable[{annotation}]"


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_twins_have_the_same_methods_signatures_and_help(sync: type, async_: type) -> None:
    sync_methods, async_methods = public_methods(sync), public_methods(async_)
    assert sorted(sync_methods) == sorted(async_methods) and len(sync_methods) >= 3
    for name, method in sync_methods.items():
        twin = async_methods[name]
        sync_sig, async_sig = inspect.signature(method), inspect.signature(twin)
        assert sync_sig.parameters == async_sig.parameters, name
        assert next(iter(sync_sig.parameters)) == "self", name
        assert not {"ctx", "api", "state"} & set(sync_sig.parameters), name  # what it is about
        assert async_sig.return_annotation == async_twin_of(name, sync_sig.return_annotation), name
        assert method.__doc__ and method.__doc__ == twin.__doc__, name
        if name in SHARED:
            assert method is twin, name
            continue
        assert method.__name__ == name and method.__qualname__ == f"{sync.__name__}.{name}"
        assert twin.__qualname__ == f"{async_.__name__}.{name}"
        awaited = async_sig.return_annotation.startswith("Awaitable[")
        assert inspect.iscoroutinefunction(twin) == awaited, name
        assert not inspect.iscoroutinefunction(method), name
        assert (
            name in (help_text := pydoc_text(sync)) and method.__doc__.split("\n")[0] in help_text
        )


def pydoc_text(cls: type) -> str:
    import pydoc

    return pydoc.render_doc(cls, renderer=pydoc.plaintext)


TYPED = """
from collections.abc import AsyncGenerator, Generator
from typing import Any, assert_type

from nbext.client import AsyncBatch, AsyncClient, AsyncJob, AsyncMapResults, Batch, Client
from nbext.client import Job, MapResults
from nbext.models import CancelResult, Health, JobResult, PurgeResult, StreamChunk
from nbext.models.batches import BatchRecord, BatchRequest
from nbext.models.v2 import GpuType, LogEvent, Pod, RequestUrls, Template


def sync(client: Client) -> None:
    endpoint = client.endpoint("e")
    job = endpoint.run({"x": 1}, ttl=5)
    assert_type(job, Job)
    assert_type(endpoint.job("j"), Job)
    assert_type(endpoint.run_sync({"x": 1}, wait=2), JobResult)
    assert_type(endpoint.health(), Health)
    assert_type(endpoint.purge_queue(), PurgeResult)
    assert_type(endpoint.map([{"x": 1}], concurrency=2), MapResults)
    batch = endpoint.batch([{"x": 1}], finalize=False)
    assert_type(batch, Batch)
    assert_type(endpoint.get_batch("b"), Batch)
    assert_type(endpoint.batches(), list[BatchRecord])
    assert_type(batch.results(), list[BatchRequest])
    assert_type(batch.wait(5, progress=print), BatchRecord)
    assert_type(job.status(), JobResult)
    assert_type(job.wait(5, raise_on_failure=False), JobResult)
    assert_type(job.stream(timeout=1), Generator[Any, None, None])
    assert_type(job.stream_chunks(), Generator[StreamChunk, None, None])
    assert_type(job.stream_batches(), Generator[list[StreamChunk], None, None])
    assert_type(job.cancel(), CancelResult)
    assert_type(job.retry(), Job)
    assert_type(client.templates.get("t"), Template)
    assert_type(client.pods.list(include_cluster_pods=True), list[Pod])
    assert_type(client.pods.delete("p"), None)
    assert_type(client.endpoints.get("e").request_urls, RequestUrls | None)
    assert_type(client.catalog.gpus(), list[GpuType])
    assert_type(client.pods.logs("p", tail=5), list[LogEvent])
    assert_type(client.pods.follow_logs("p"), Generator[LogEvent, None, None])


async def awaited(client: AsyncClient) -> None:
    endpoint = client.endpoint("e")
    job = await endpoint.run({"x": 1}, ttl=5)
    assert_type(job, AsyncJob)
    assert_type(endpoint.job("j"), AsyncJob)
    assert_type(await endpoint.run_sync({"x": 1}, wait=2), JobResult)
    assert_type(await endpoint.health(), Health)
    assert_type(await endpoint.purge_queue(), PurgeResult)
    assert_type(endpoint.map([{"x": 1}]), AsyncMapResults)
    batch = await endpoint.batch([{"x": 1}], finalize=False)
    assert_type(batch, AsyncBatch)
    assert_type(await endpoint.get_batch("b"), AsyncBatch)
    assert_type(await endpoint.batches(), list[BatchRecord])
    assert_type(await batch.results(), list[BatchRequest])
    assert_type(await batch.wait(5, progress=print), BatchRecord)
    assert_type(await job.status(), JobResult)
    assert_type(await job.wait(5, raise_on_failure=False), JobResult)
    assert_type(job.stream(timeout=1), AsyncGenerator[Any, None])
    assert_type(job.stream_chunks(), AsyncGenerator[StreamChunk, None])
    assert_type(job.stream_batches(), AsyncGenerator[list[StreamChunk], None])
    assert_type(await job.cancel(), CancelResult)
    assert_type(await job.retry(), AsyncJob)
    assert_type(await client.templates.get("t"), Template)
    assert_type(await client.pods.list(include_cluster_pods=True), list[Pod])
    assert_type(await client.catalog.gpus(), list[GpuType])
    assert_type(await client.pods.logs("p", tail=5), list[LogEvent])
    assert_type(client.pods.follow_logs("p"), AsyncGenerator[LogEvent, None])


def refused(client: Client) -> None:
    client.endpoint("e").run({"x": 1}, wait=2)  # E: run takes no wait
    client.endpoint("e").job(3)  # E: an id is a string
    client.templates.get("t", tail=5)  # E: get takes no tail
    client.pods.logs(7)  # E: a pod id is a string
    client.templates.create(name="t", image_name="i")  # E: REST v1's keyword (runs, warns)
"""


def test_a_type_checker_sees_each_twin_return_what_it_does(tmp_path: Path) -> None:
    program = tmp_path / "handles.py"
    program.write_text(textwrap.dedent(TYPED))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(program)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    expected = [n for n, line in enumerate(TYPED.splitlines(), 1) if "# E:" in line]
    assert [int(line.split(":")[1]) for line in errors] == expected, result.stdout
