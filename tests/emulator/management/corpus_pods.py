"""More pod requests than ``corpus.py`` makes, and every answer to them (``corpus_pods.json``).

Why: pods are being moved from v1's shape to v2's, and the main corpus leaves some of what
v1 showed of a pod unpinned: the choice among several ``gpuTypeIds``, a locked pod under
v1's start/stop/restart/reset and updates, v1's list filters, the include flags, what
billing and the logs read off a pod, interruptible and community pods, CUDA versions, a
pod made from a template. Recorded on the code before the move, replayed by
``test_corpus.py`` with the same machinery (its own fixture, so the two recordings never
have to be merged).

Record again (only on purpose, when an answer is meant to change)::

    .venv/bin/python -m tests.emulator.management.corpus_pods
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from .corpus import GPU, RESTORED, Step, listings, raw, req, shared_records, wait

FIXTURE = Path(__file__).with_name("corpus_pods.json")
__all__ = ["FIXTURE", "RESTORED", "steps"]
OTHER_GPU = "NVIDIA GeForce RTX 4090"


def templates() -> list[Step]:
    return [
        req(
            "POST",
            "/v1/templates",
            {
                "name": "pt-v1",
                "imageName": "repo/pod:1",
                "dockerEntrypoint": ["/bin/sh", "-c"],
                "dockerStartCmd": ["python", "serve.py"],
                "env": {"T": "1", "SHARED": "template"},
                "ports": ["8888/http", "22/tcp"],
                "containerDiskInGb": 30,
                "volumeInGb": 7,
                "volumeMountPath": "/tpl",
                "containerRegistryAuthId": "{a1}",
            },
            "pt1",
        ),
        req(
            "POST",
            "/v2/templates",
            {
                "name": "pt-v2",
                "image": "repo/pod:2",
                "args": "bash -lc 'run me'",
                "env": {"U": "2"},
                "ports": ["22/tcp"],
                "allowedCudaVersions": ["12.4"],
                "mounts": {"persistent": {"size": 12, "path": "/v2tpl"}},
            },
            "pt2",
        ),
        req("POST", "/v1/templates", {"name": "pt-sls", "imageName": "echo", "isServerless": True}),
    ]


def v1_pods() -> list[Step]:
    return [
        req(
            "POST",
            "/v1/pods",
            {"name": "order", "imageName": "img", "gpuTypeIds": [OTHER_GPU, GPU], "gpuCount": 3},
            "q1",
        ),
        req(
            "POST",
            "/v1/pods",
            {
                "name": "locked",
                "imageName": "img",
                "locked": True,
                "cloudType": "COMMUNITY",
                "minVCPUPerGPU": 12,
                "minRAMPerGPU": 40,
                "ports": ["22/tcp", "8080/tcp", "8888/http"],
                "globalNetworking": True,
                "allowedCudaVersions": ["12.6", "12.4"],
            },
            "q2",
        ),
        req(
            "POST",
            "/v1/pods",
            {
                "name": "from-tpl",
                "templateId": "{pt1}",
                "env": {"SHARED": "pod", "P": "1"},
                "dockerEntrypoint": [],
                "countryCodes": ["ro"],
                "dataCenterIds": ["US-TX-3", "EU-RO-1"],
            },
            "q3",
        ),
        req(
            "POST",
            "/v1/pods",
            {"name": "from-v2-tpl", "templateId": "{pt2}", "volumeInGb": None},
            "q4",
        ),
        req(
            "POST",
            "/v1/pods",
            {
                "name": "cpu-plain",
                "imageName": "img",
                "computeType": "CPU",
                "vcpuCount": 8,
                "containerDiskInGb": None,
                "volumeMountPath": "/data",
            },
            "q5",
        ),
        req(
            "POST",
            "/v1/pods",
            {"name": "on-vol", "imageName": "img", "networkVolumeId": "{vol1}"},
            "q6",
        ),
        # refusals
        req(
            "POST",
            "/v1/pods",
            {"imageName": "img", "networkVolumeId": "{vol1}", "dataCenterIds": ["US-TX-3"]},
        ),
        req("POST", "/v1/pods", {"imageName": "img", "countryCodes": ["zz"]}),
        req("POST", "/v1/pods", {"imageName": "img", "dataCenterIds": []}),
        req("POST", "/v1/pods", {"imageName": "img", "containerRegistryAuthId": "nope"}),
        req("POST", "/v1/pods", {"imageName": "img", "vcpuCount": 0}),
        req("POST", "/v1/pods", {"imageName": " "}),
        req("POST", "/v1/pods", {"imageName": "img", "ports": ["nope"]}),
        req("POST", "/v1/pods", {"imageName": "img", "volumeMountPath": "relative"}),
        req("POST", "/v1/pods", {"imageName": "img", "env": {"A": 1}}),
        req("POST", "/v1/pods", {"templateId": "demo-echo"}),
        raw("POST", "/v1/pods", "{not json"),
        req("POST", "/v1/pods", ["a", "list"]),
        # reads and filters
        req("GET", "/v1/pods?gpuTypeId=" + OTHER_GPU.replace(" ", "%20")),
        req("GET", "/v1/pods?desiredStatus=RUNNING&computeType=CPU"),
        req("GET", "/v1/pods?dataCenterId=EU-RO-1"),
        req("GET", "/v1/pods?imageName=repo/pod:1"),
        req("GET", "/v1/pods?templateId={pt1}&includeTemplate=true"),
        req("GET", "/v1/pods?networkVolumeId={vol1}&includeNetworkVolume=true"),
        req("GET", "/v1/pods?cpuFlavorId=cpu3c"),
        req("GET", "/v1/pods?id={q2}&includeMachine=true&includeSavingsPlans=true"),
        req("GET", "/v1/pods?includeWorkers=true"),
        req("GET", "/v1/pods?desiredStatus=SLEEPING"),
        req("GET", "/v1/pods/{q2}?includeMachine=true&includeSavingsPlans=true"),
        req("GET", "/v1/pods/{q4}?includeTemplate=true"),
        req("GET", "/v1/pods/nosuchpod?includeWorkers=true"),
        req("GET", "/v2/pods/{q1}"),
        req("GET", "/v2/pods/{q2}"),
        req("GET", "/v2/pods/{q3}"),
        req("GET", "/v2/pods/{q4}"),
        req("GET", "/v2/pods/{q5}"),
        req("GET", "/v2/pods/{q6}"),
        # a locked pod under v1
        req("POST", "/v1/pods/{q2}/stop"),
        req("POST", "/v1/pods/{q2}/reset"),
        req("PATCH", "/v1/pods/{q2}", {"imageName": "img:2"}),
        req("POST", "/v1/pods/{q2}/restart"),
        req("POST", "/v1/pods/{q2}/start"),
        req("PATCH", "/v1/pods/{q2}", {"name": "still-locked"}),
        req("PATCH", "/v1/pods/{q2}", {"locked": False, "containerDiskInGb": 80, "env": {}}),
        req("POST", "/v1/pods/{q2}/stop"),
        req("GET", "/v1/pods?desiredStatus=EXITED"),
        req("PATCH", "/v1/pods/{q2}", {"dockerStartCmd": ["run"], "dockerEntrypoint": ["sh"]}),
        req("GET", "/v2/pods/{q2}"),
        req("POST", "/v1/pods/{q2}/reset"),
        req("GET", "/v1/pods/{q2}"),
        wait(20),
        # updates v1 lets through, and those it refuses
        req("PATCH", "/v1/pods/{q1}", {"containerRegistryAuthId": "{a1}", "volumeMountPath": "/v"}),
        req("PATCH", "/v1/pods/{q1}", {"containerRegistryAuthId": "nope"}),
        req("PATCH", "/v1/pods/{q1}", {"globalNetworking": True, "ports": ["22/tcp"]}),
        req("PATCH", "/v1/pods/{q1}", {"locked": True}),
        req("PATCH", "/v1/pods/{q1}", {"imageName": None}),
        req("POST", "/v1/pods/{q1}/update", {}),
        req("GET", "/v2/pods/{q1}"),
        req("GET", "/v2/pods"),
    ]


def v2_pods() -> list[Step]:
    return [
        req(
            "POST",
            "/v2/pods",
            {
                "name": "v2-full",
                "templateId": "{pt1}",
                "gpu": {"id": GPU, "count": 2, "minCudaVersion": "12.9"},
                "cloud": "COMMUNITY",
                "dataCenterIds": ["EU-RO-1"],
                "globalNetworking": True,
                "env": {"SHARED": "v2"},
            },
            "w1",
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "v2-vol",
                "image": "img",
                "cpu": {"id": "cpu3c", "vcpuCount": 4},
                "mounts": {"network": [{"volumeId": "{vol2}", "path": "/net"}]},
                "registry": "{a1}",
                "disk": 25,
            },
            "w2",
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "v2-cuda",
                "image": "img",
                "gpu": {"id": GPU, "allowedCudaVersions": ["12.6"]},
            },
            "w3",
        ),
        req(
            "POST", "/v2/pods", {"name": "v2-tpl2", "templateId": "{pt2}", "gpu": {"id": GPU}}, "w4"
        ),
        req("PATCH", "/v2/pods/{w1}", {"locked": True}),
        # refusals
        req("POST", "/v2/pods", {"name": "x", "image": "img", "gpu": {"id": GPU}, "locked": True}),
        req("POST", "/v2/pods", {"name": "x", "templateId": "demo-echo", "gpu": {"id": GPU}}),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "cpu": {"id": "cpu3c", "vcpuCount": 2},
                "mounts": {"persistent": {"size": 20, "path": "/p"}},
            },
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU},
                "mounts": {
                    "network": [
                        {"volumeId": "{vol1}", "path": "/a"},
                        {"volumeId": "{vol2}", "path": "/b"},
                    ]
                },
            },
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU},
                "mounts": {
                    "network": [{"volumeId": "{vol1}", "path": "/a"}],
                    "persistent": {"size": 20, "path": "/p"},
                },
            },
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU, "minCudaVersion": "12.4", "allowedCudaVersions": ["12.6"]},
            },
        ),
        req(
            "POST", "/v2/pods", {"name": "x", "image": "img", "gpu": {"id": GPU}, "registry": "no"}
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU},
                "mounts": {"network": [{"volumeId": "nope", "path": "/a"}]},
            },
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU},
                "dataCenterIds": ["US-TX-3"],
                "mounts": {"network": [{"volumeId": "{vol1}", "path": "/a"}]},
            },
        ),
        # reads
        req("GET", "/v1/pods/{w1}?includeMachine=true&includeTemplate=true"),
        req("GET", "/v1/pods/{w2}?includeNetworkVolume=true"),
        req("GET", "/v1/pods/{w3}"),
        req("GET", "/v1/pods/{w4}"),
        req("GET", "/v2/pods/{w1}"),
        req("GET", "/v2/pods/{w3}"),
        wait(9),
        req("GET", "/v2/pods/{w2}"),
        req("GET", "/v2/pods/{w2}/logs"),
        req("GET", "/v2/pods/{q1}/logs"),
        # changes
        req("PATCH", "/v2/pods/{w1}", {"image": "img:9"}),
        req("PATCH", "/v2/pods/{w1}", {"locked": False, "templateId": "{pt2}"}),
        req("PATCH", "/v2/pods/{w2}", {"mounts": {"network": []}}),
        req(
            "PATCH",
            "/v2/pods/{w2}",
            {"mounts": {"network": [{"volumeId": "{vol2}", "path": "/n"}]}},
        ),
        req("PATCH", "/v2/pods/{w2}", {"registry": None, "ports": ["7000/tcp"], "disk": 30}),
        req("PATCH", "/v2/pods/{w3}", {"mounts": {}, "globalNetworking": True}),
        req("PATCH", "/v2/pods/{w3}", {"templateId": "demo-echo"}),
        req("PATCH", "/v2/pods/{w4}", {"gpu": {"id": OTHER_GPU}}),
        req("GET", "/v1/pods/{w1}"),
        req("GET", "/v1/pods/{w2}"),
        req("GET", "/v1/pods/{w3}"),
        # actions across the interfaces
        req("POST", "/v2/pods/{w3}/action", {"action": "stop"}),
        req("POST", "/v1/pods/{w3}/restart"),
        req("GET", "/v2/pods/{w3}"),
        req("POST", "/v2/pods/{q5}/action", {"action": "restart"}),
        req("POST", "/v2/pods/{q2}/action", {"action": "start"}),
        req("GET", "/v1/pods/{q5}"),
        wait(7),
        req("GET", "/v2/pods"),
    ]


def billing() -> list[Step]:
    return [
        wait(3600),
        req("GET", "/v1/billing/pods?bucketSize=hour"),
        req("GET", "/v1/billing/pods?grouping=podId&bucketSize=day"),
        req("GET", "/v1/billing/pods?podId={q1}"),
        req("GET", "/v1/billing/pods?gpuTypeId=" + OTHER_GPU.replace(" ", "%20")),
        req("GET", "/v2/billing/pods"),
        req("GET", "/v2/billing/pods?grouping=podId"),
        req("GET", "/v2/billing"),
        req("DELETE", "/v1/pods/{q1}"),
        req("DELETE", "/v2/pods/{w1}"),
        req("GET", "/v1/billing/pods?grouping=podId&bucketSize=day"),
    ]


def steps() -> list[Step]:
    """The pods corpus, in order: it builds on what each part made."""
    return [
        *shared_records(),
        *templates(),
        *v1_pods(),
        *v2_pods(),
        *listings(),
        *billing(),
        *listings(),
    ]


if __name__ == "__main__":
    from .corpus import record

    recorded = asyncio.run(record(steps()))
    FIXTURE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    print(f"{FIXTURE}: {len(recorded['exchanges'])} exchanges, {FIXTURE.stat().st_size} bytes")
