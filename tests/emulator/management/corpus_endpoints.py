"""More endpoint requests for the corpus machinery (``corpus.py``), in a fixture of their own.

Why: endpoint records move from v1's shape to v2's, and a few of v1's details are ones
v2 cannot say back exactly. These steps pin each of them on the code before the move,
so the move keeps them: an unknown field a v1 update kept and shows, the order of v1's
``gpuTypeIds``, an idle timeout under REQUEST_COUNT scaling (which v2 refuses to be
given), v1's split of ``networkVolumeId``/``networkVolumeIds``, the template's env
copied at creation and on each change, v1's flashboot flag beside v2's modes, and the
workers listed by both interfaces. A fixture separate from ``corpus.json`` so that the
pods' move can pin its own without the two recordings meeting.

Record again (only on purpose, when an answer is meant to change)::

    .venv/bin/python -m tests.emulator.management.corpus_endpoints
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from .corpus import GPU, Step, record, req, wait

FIXTURE = Path(__file__).with_name("corpus_endpoints.json")


def steps() -> list[Step]:
    queue = {"type": "QUEUE_DELAY", "queueDelay": 4}
    return [
        req(
            "POST",
            "/v1/networkvolumes",
            {"name": "v-a", "size": 10, "dataCenterId": "EU-RO-1"},
            "va",
        ),
        req(
            "POST",
            "/v1/networkvolumes",
            {"name": "v-b", "size": 10, "dataCenterId": "EU-RO-1"},
            "vb",
        ),
        req(
            "POST",
            "/v1/templates",
            {"name": "s-env", "imageName": "echo", "isServerless": True, "env": {"T": "1"}},
            "t1",
        ),
        req(
            "POST",
            "/v1/templates",
            {"name": "s-two", "imageName": "echo", "isServerless": True},
            "t2",
        ),
        # v1's details
        req(
            "POST",
            "/v1/endpoints",
            {
                "name": "order",
                "templateId": "{t1}",
                "gpuTypeIds": ["NVIDIA L40S", GPU, "NVIDIA GeForce RTX 4090"],
                "gpuCount": 2,
                "networkVolumeIds": ["{va}"],
                "minCudaVersion": "12.4",
            },
            "e1",
        ),
        req(
            "POST",
            "/v1/endpoints",
            {
                "name": "rc",
                "templateId": "{t2}",
                "scalerType": "REQUEST_COUNT",
                "scalerValue": 2,
                "idleTimeout": 45,
                "networkVolumeId": "{va}",
                "networkVolumeIds": ["{va}", "{vb}"],
                "flashboot": False,
                "executionTimeoutMs": 300000,
            },
            "e2",
        ),
        req(
            "POST",
            "/v1/endpoints",
            {
                "name": "cpu",
                "templateId": "{t1}",
                "computeType": "CPU",
                "cpuFlavorIds": ["cpu5c", "cpu3c"],
                "vcpuCount": 8,
                "workersMin": 1,
                "workersMax": 2,
            },
            "e3",
        ),
        req("GET", "/v1/endpoints/{e1}"),
        req("GET", "/v2/serverless/{e1}"),
        req("GET", "/v2/serverless/{e2}"),
        req("GET", "/v2/serverless/{e3}"),
        req("PATCH", "/v1/endpoints/{e1}", {"colour": "red"}),
        req("PATCH", "/v1/endpoints/{e1}", {"flashboot": True}),
        req("GET", "/v1/endpoints/{e1}"),
        req("PATCH", "/v1/endpoints/{e1}", {"size": 3}),
        req("PATCH", "/v1/endpoints/{e1}", {"colour": "blue"}),
        req("PATCH", "/v1/endpoints/{e1}", {"flashboot": False}),
        req("GET", "/v1/endpoints/{e1}?includeTemplate=true"),
        req("GET", "/v2/serverless/{e1}"),
        req("PATCH", "/v1/endpoints/{e1}", {"gpuTypeIds": [GPU, "NVIDIA L40S"], "gpuCount": 1}),
        req("GET", "/v2/serverless/{e1}"),
        req("PATCH", "/v1/endpoints/{e1}", {"networkVolumeId": "{vb}"}),
        req("GET", "/v1/endpoints/{e1}"),
        req("GET", "/v2/serverless/{e1}"),
        req("PATCH", "/v1/endpoints/{e3}", {"cpuFlavorIds": ["cpu3g"], "vcpuCount": 4}),
        req("PATCH", "/v1/endpoints/{e3}", {"vcpuCount": 2}),
        req("GET", "/v2/serverless/{e3}"),
        req("PATCH", "/v1/endpoints/{e2}", {"scalerValue": 5}),
        req("PATCH", "/v2/serverless/{e2}", {"workers": {"idleTimeout": 9}}),
        req(
            "PATCH", "/v2/serverless/{e2}", {"scaling": {"type": "QUEUE_DELAY", "queueDelay": 0.5}}
        ),
        req("GET", "/v1/endpoints/{e2}"),
        req("GET", "/v2/serverless/{e2}"),
        req("PATCH", "/v1/endpoints/{e2}", {"scalerValue": 6}),
        req("PATCH", "/v1/endpoints/{e2}", {"idleTimeout": 12}),
        req("GET", "/v2/serverless/{e2}"),
        req("PATCH", "/v2/serverless/{e2}", {"networkVolumes": ["{vb}", "{va}"]}),
        req("GET", "/v1/endpoints/{e2}"),
        req("PATCH", "/v2/serverless/{e2}", {"networkVolumes": []}),
        req("GET", "/v1/endpoints/{e2}"),
        # the template's env, copied at creation and on each change
        req("PATCH", "/v1/templates/{t1}", {"env": {"T": "2", "U": "3"}}),
        req("GET", "/v1/endpoints/{e1}"),
        req("GET", "/v1/endpoints/{e3}?includeTemplate=true"),
        req("PATCH", "/v1/endpoints/{e1}", {"templateId": "{t2}"}),
        req("GET", "/v1/endpoints/{e1}"),
        req("PATCH", "/v1/endpoints/{e1}", {"templateId": "{t2}", "name": "same"}),
        # v2's details, read through v1
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "v2-pri",
                "type": "QUEUE",
                "image": "echo",
                "scaling": {"type": "QUEUE_DELAY", "queueDelay": 0.5},
                "gpu": {"pools": ["ADA_24", "AMPERE_48"], "count": 1, "minCudaVersion": "12.4"},
                "workers": {"min": 0, "max": 1},
                "flashboot": "PRIORITY_FLASHBOOT",
                "networkVolumes": ["{vb}", "{va}"],
                "dataCenterIds": ["EU-RO-1"],
            },
            "ve1",
        ),
        req("GET", "/v1/endpoints/{ve1}?includeTemplate=true"),
        req("PATCH", "/v1/endpoints/{ve1}", {"flashboot": True}),
        req("GET", "/v2/serverless/{ve1}"),
        req("PATCH", "/v2/serverless/{ve1}", {"gpu": {"minCudaVersion": ""}}),
        req("GET", "/v1/endpoints/{ve1}"),
        req(
            "PATCH", "/v2/serverless/{ve1}", {"gpu": {"count": 2, "allowedCudaVersions": ["12.6"]}}
        ),
        req("GET", "/v1/endpoints/{ve1}"),
        req(
            "PATCH",
            "/v2/serverless/{ve1}",
            {"scaling": {"type": "REQUEST_COUNT", "requestCount": 7}},
        ),
        req("GET", "/v1/endpoints/{ve1}"),
        req("PATCH", "/v2/serverless/{ve1}", {"timeout": 5000, "dataCenterIds": ["US-TX-3"]}),
        req("GET", "/v1/endpoints/{ve1}"),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "v2-cpu",
                "type": "QUEUE",
                "image": "echo",
                "scaling": queue,
                "cpu": [{"id": "cpu3c", "vcpuCount": 2}, {"id": "cpu5c", "vcpuCount": 4}],
            },
            "ve2",
        ),
        req("GET", "/v1/endpoints/{ve2}"),
        req("GET", "/v2/serverless/{ve2}"),
        # workers, on both interfaces
        wait(30),
        req("GET", "/v1/endpoints/{e3}?includeWorkers=true"),
        req("GET", "/v2/serverless/{e3}/workers"),
        req("GET", "/v1/pods?includeWorkers=true"),
        req("GET", "/v2/serverless/{e1}/workers"),
        req("GET", "/v2/serverless/{ve1}/releases"),
        req("GET", "/v1/endpoints?includeTemplate=true&includeWorkers=true"),
        req("GET", "/v2/serverless"),
        req("DELETE", "/v1/endpoints/{ve2}"),
        req("GET", "/v1/templates?includeEndpointBoundTemplates=true"),
    ]


RESTORED = [
    "/v1/endpoints?includeTemplate=true",
    "/v2/serverless",
    "/v1/templates?includeEndpointBoundTemplates=true",
]


if __name__ == "__main__":
    corpus = asyncio.run(record(steps(), RESTORED))
    FIXTURE.write_text(json.dumps(corpus, indent=1, ensure_ascii=False) + "\n")
    print(f"{FIXTURE}: {len(corpus['exchanges'])} exchanges, {FIXTURE.stat().st_size} bytes")
