"""A fixed sequence of ``/v1`` and ``/v2`` management requests, and every answer to it.

Why: the management domain is being moved from v1's shape to v2's, with ``/v1`` becoming
an adapter over it. v1 must keep answering exactly as before, byte for byte, and v2 too.
This module drives the same requests every time (templates, endpoints, pods with their
start/stop/restart/reset and v2 actions, volumes and registry auths they use, bad bodies
and edge cases, on both interfaces and across them) against an emulator on a fake clock,
and records each answer: status, content type and the body's exact text.

The answers were recorded once on the code before the move (``corpus.json``);
``test_corpus.py`` replays the sequence and requires the same answers. The fixture also
keeps the SQLite rows that run left behind and the answers of an emulator restarted on
them, so a database written by the recorded code must still load and serve the same.

Ids are random in the emulator. The run seeds ``secrets`` (so a run is repeatable), and
the recorded text has every id replaced by ``<id:N>``, numbered by first appearance, so
the answers do not depend on the order in which ids are drawn. Generated passwords are
replaced by ``<secret>``.

Record again (only on purpose, when an answer is meant to change)::

    .venv/bin/python -m tests.emulator.management.corpus
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import secrets
import sqlite3
import string
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

from nbext.emulator import Emulator, FakeClock, create_app

FIXTURE = Path(__file__).with_name("corpus.json")
KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
AUTH = {"Authorization": f"Bearer {KEY}"}
GPU = "NVIDIA A40"


@dataclass
class Step:
    """One request (``method`` and ``path``), or a move of the clock (``advance``).

    ``path`` and string values of ``body`` may name earlier answers' ids as ``{name}``;
    ``save`` names this answer's ``id`` for later steps. ``raw`` is sent as the body's
    bytes, as given (a body that is not JSON).
    """

    method: str = ""
    path: str = ""
    body: Any = None
    save: str | None = None
    raw: str | None = None
    advance: float = 0.0


def req(method: str, path: str, body: Any = None, save: str | None = None) -> Step:
    return Step(method, path, body, save)


def raw(method: str, path: str, text: str) -> Step:
    return Step(method, path, raw=text)


def wait(seconds: float) -> Step:
    return Step(advance=seconds)


def listings() -> list[Step]:
    """Every listing of the records this corpus touches, on both interfaces."""
    return [
        req("GET", "/v1/templates?includeEndpointBoundTemplates=true"),
        req("GET", "/v1/endpoints?includeTemplate=true"),
        req("GET", "/v1/pods?includeMachine=true&includeNetworkVolume=true"),
        req("GET", "/v1/networkvolumes"),
        req("GET", "/v1/containerregistryauth"),
        req("GET", "/v2/templates"),
        req("GET", "/v2/serverless"),
        req("GET", "/v2/pods"),
        req("GET", "/v2/network-volumes"),
    ]


def shared_records() -> list[Step]:
    return [
        req(
            "POST",
            "/v1/containerregistryauth",
            {"name": "auth-1", "username": "me", "password": "pw-secret-1"},
            "a1",
        ),
        req(
            "POST",
            "/v1/networkvolumes",
            {"name": "vol-1", "size": 20, "dataCenterId": "EU-RO-1"},
            "vol1",
        ),
        req(
            "POST",
            "/v2/network-volumes",
            {"name": "vol-2", "size": 30, "dataCenter": "EU-RO-1"},
            "vol2",
        ),
        req(
            "PUT",
            "/v2/account/ssh-keys",
            {"keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHx me@host"]},
        ),
    ]


def v1_templates() -> list[Step]:
    full = {
        "name": "t-full",
        "imageName": "repo/img:2",
        "category": "CPU",
        "containerDiskInGb": 12,
        "containerRegistryAuthId": "{a1}",
        "dockerEntrypoint": ["/bin/sh", "-c"],
        "dockerStartCmd": ["python", "-c", "print('hi there')"],
        "env": {"A": "1", "B": "two words"},
        "isPublic": True,
        "ports": ["8888/http", "22/tcp", "9000/http"],
        "readme": "# Full\nall fields",
        "volumeInGb": 5,
        "volumeMountPath": "/data",
    }
    return [
        req("POST", "/v1/templates", {"name": "t-one", "imageName": "img:1"}, "t1"),
        req("POST", "/v1/templates", full, "t2"),
        req(
            "POST",
            "/v1/templates",
            {
                "name": "t-sls",
                "imageName": "echo",
                "isServerless": True,
                "containerDiskInGb": 10,
                "volumeInGb": 0,
            },
            "t3",
        ),
        req(
            "POST",
            "/v1/templates",
            {"name": "t-sls-2", "imageName": "echo", "isServerless": True, "env": {"K": "v"}},
            "t4",
        ),
        # refusals
        req("POST", "/v1/templates", {"name": "t-one", "imageName": "img:1"}),
        req("POST", "/v1/templates", {"name": "no-image"}),
        req("POST", "/v1/templates", {"name": "bad-1", "imageName": "i", "colour": "red"}),
        req(
            "POST",
            "/v1/templates",
            {"name": "bad-2", "imageName": "i", "containerRegistryAuthId": "nope"},
        ),
        req(
            "POST",
            "/v1/templates",
            {"name": "bad-3", "imageName": "i", "volumeMountPath": "relative"},
        ),
        req("POST", "/v1/templates", {"name": "bad-4", "imageName": "i", "containerDiskInGb": 0}),
        req("POST", "/v1/templates", {"name": "bad-5", "imageName": "i", "ports": ["nope"]}),
        req("POST", "/v1/templates", {"name": " ", "imageName": "i"}),
        req("POST", "/v1/templates", {"name": "bad-6", "imageName": "i", "category": "TPU"}),
        req("POST", "/v1/templates", ["not", "an", "object"]),
        raw("POST", "/v1/templates", "{not json"),
        # reads
        req("GET", "/v1/templates"),
        req("GET", "/v1/templates?includeRunpodTemplates=true"),
        req("GET", "/v1/templates?includePublicTemplates=true&includeEndpointBoundTemplates=true"),
        req("GET", "/v1/templates?includeRunpodTemplates=maybe"),
        req("GET", "/v1/templates/{t1}"),
        req("GET", "/v1/templates/{t2}?includeRunpodTemplates=true"),
        req("GET", "/v1/templates/demo-echo"),
        req("GET", "/v1/templates/nosuchtemplate"),
        # changes
        req("PATCH", "/v1/templates/{t1}", {"name": "t-one-renamed", "env": {"X": "y"}}),
        req(
            "POST",
            "/v1/templates/{t2}/update",
            {"dockerStartCmd": ["bash", "-lc", "run it"], "ports": []},
        ),
        req("PATCH", "/v1/templates/{t2}", {"volumeInGb": 25, "readme": ""}),
        req("PATCH", "/v1/templates/{t1}", {"name": "t-full"}),
        req("PATCH", "/v1/templates/{t1}", {"isServerless": True}),
        req("PATCH", "/v1/templates/{t1}", {"category": "CPU"}),
        req("PATCH", "/v1/templates/{t1}", {"containerRegistryAuthId": "nope"}),
        req("PATCH", "/v1/templates/{t1}", {"containerRegistryAuthId": None}),
        req("PATCH", "/v1/templates/demo-echo", {"name": "mine"}),
        req("PATCH", "/v1/templates/nosuchtemplate", {"name": "mine"}),
        req("PATCH", "/v1/templates/{t1}", {}),
        req("DELETE", "/v1/templates/demo-echo"),
        req("DELETE", "/v1/templates/nosuchtemplate"),
    ]


def v2_templates() -> list[Step]:
    return [
        req(
            "POST",
            "/v2/templates",
            {
                "name": "vt-one",
                "image": "img:v2",
                "args": "python -u handler.py --x 'a b'",
                "env": {"V": "2"},
                "ports": ["8888/http"],
                "startSsh": False,
                "mounts": {"persistent": {"size": 20, "path": "/data"}},
                "registry": "{a1}",
            },
            "vt1",
        ),
        req(
            "POST",
            "/v2/templates",
            {"name": "vt-sls", "image": "echo", "serverless": True, "category": "CPU", "disk": 15},
            "vt2",
        ),
        req("POST", "/v2/templates", {"name": "vt-min", "image": "img"}, "vt3"),
        # refusals
        req("POST", "/v2/templates", {"image": "img"}),
        req("POST", "/v2/templates", {"name": "x", "image": "img", "colour": "red"}),
        req("POST", "/v2/templates", {"name": "x", "image": "img", "args": "unbalanced 'quote"}),
        req("POST", "/v2/templates", {"name": "vt-one", "image": "img"}),
        req("POST", "/v2/templates", {"name": "x", "image": "img", "registry": "nope"}),
        req("POST", "/v2/templates", {"name": "x", "image": "img", "disk": 0}),
        req(
            "POST",
            "/v2/templates",
            {"name": "x", "image": "img", "mounts": {"persistent": {"size": 5, "path": "/w"}}},
        ),
        raw("POST", "/v2/templates", ""),
        raw("POST", "/v2/templates", "[1, 2]"),
        # reads, across the interfaces
        req("GET", "/v2/templates"),
        req("GET", "/v2/templates/{vt1}"),
        req("GET", "/v2/templates/{t1}"),
        req("GET", "/v2/templates/{t2}"),
        req("GET", "/v2/templates/{t3}"),
        req("GET", "/v2/templates/demo-echo"),
        req("GET", "/v2/templates/nosuchtemplate"),
        req("GET", "/v2/catalog/templates"),
        req("GET", "/v1/templates/{vt1}"),
        req("GET", "/v1/templates/{vt2}"),
        # changes
        req(
            "PATCH",
            "/v2/templates/{vt1}",
            {"image": "img:v3", "startJupyter": False, "public": True},
        ),
        req("PATCH", "/v2/templates/{vt1}", {"args": "", "env": {}, "mounts": {}}),
        req("PATCH", "/v2/templates/{t1}", {"args": "a 'b c'", "allowedCudaVersions": ["12.4"]}),
        req("PATCH", "/v2/templates/{vt2}", {"serverless": False}),
        req(
            "PATCH",
            "/v2/templates/{vt2}",
            {"serverless": True, "category": "CPU", "name": "vt-sls-b"},
        ),
        req("PATCH", "/v2/templates/{vt2}", {"category": "NVIDIA"}),
        req("PATCH", "/v2/templates/demo-echo", {"name": "mine"}),
        req("PATCH", "/v2/templates/nosuchtemplate", {"name": "mine"}),
        req("PATCH", "/v2/templates/{vt1}", {"name": "t-full"}),
        req("PATCH", "/v2/templates/{vt1}", {"colour": "red"}),
        req("GET", "/v1/templates/{vt1}"),
        req("GET", "/v1/templates/{t1}"),
        req("PATCH", "/v1/templates/{vt1}", {"dockerStartCmd": ["x"], "volumeInGb": 3}),
        req("GET", "/v2/templates/{vt1}"),
        req("DELETE", "/v2/templates/demo-echo"),
        req("DELETE", "/v2/templates/nosuchtemplate"),
        req("DELETE", "/v2/templates/{vt3}"),
        req("GET", "/v1/templates/{vt3}"),
    ]


def v1_endpoints() -> list[Step]:
    return [
        req(
            "POST",
            "/v1/endpoints",
            {"name": "ep-one", "templateId": "{t3}", "gpuTypeIds": [GPU], "workersMax": 2},
            "e1",
        ),
        req(
            "POST",
            "/v1/endpoints",
            {
                "name": "ep-cpu",
                "templateId": "{t4}",
                "computeType": "CPU",
                "cpuFlavorIds": ["cpu3c"],
                "vcpuCount": 4,
                "scalerType": "REQUEST_COUNT",
                "scalerValue": 3,
                "idleTimeout": 30,
                "executionTimeoutMs": 120000,
                "flashboot": True,
                "networkVolumeId": "{vol1}",
                "dataCenterIds": ["EU-RO-1"],
            },
            "e2",
        ),
        req(
            "POST",
            "/v1/endpoints",
            {"templateId": "{vt2}", "allowedCudaVersions": ["12.4", "12.6"]},
            "e3",
        ),
        # refusals
        req("POST", "/v1/endpoints", {"name": "x"}),
        req("POST", "/v1/endpoints", {"name": "x", "templateId": "{t1}"}),
        req("POST", "/v1/endpoints", {"name": "x", "templateId": "nosuchtemplate"}),
        req(
            "POST",
            "/v1/endpoints",
            {"name": "x", "templateId": "{t3}", "gpuTypeIds": ["NVIDIA Q9"]},
        ),
        req(
            "POST",
            "/v1/endpoints",
            {"name": "x", "templateId": "{t3}", "workersMin": 3, "workersMax": 1},
        ),
        req("POST", "/v1/endpoints", {"name": "x", "templateId": "{t3}", "idleTimeout": 0}),
        req(
            "POST", "/v1/endpoints", {"name": "x", "templateId": "{t3}", "networkVolumeId": "nope"}
        ),
        req(
            "POST",
            "/v1/endpoints",
            {
                "name": "x",
                "templateId": "{t3}",
                "minCudaVersion": "12.4",
                "allowedCudaVersions": ["12.6"],
            },
        ),
        req("POST", "/v1/endpoints", {"name": "x", "templateId": "{t3}", "computeType": "CPU"}),
        # reads
        req("GET", "/v1/endpoints"),
        req("GET", "/v1/endpoints?includeTemplate=true&includeWorkers=true"),
        req("GET", "/v1/endpoints/{e1}"),
        req("GET", "/v1/endpoints/{e2}?includeTemplate=true"),
        req("GET", "/v1/endpoints/nosuchendpoint"),
        req("GET", "/v1/templates"),
        req("GET", "/v1/templates?includeEndpointBoundTemplates=true"),
        # changes
        req("PATCH", "/v1/endpoints/{e1}", {"workersMax": 3, "name": "ep-one-b"}),
        req(
            "POST", "/v1/endpoints/{e2}/update", {"templateId": "{t3}", "scalerType": "QUEUE_DELAY"}
        ),
        req("PATCH", "/v1/endpoints/{e1}", {"workersMin": 5}),
        req("PATCH", "/v1/endpoints/{e1}", {"templateId": "{t1}"}),
        req("PATCH", "/v1/endpoints/{e1}", {"colour": "red"}),
        req("PATCH", "/v1/endpoints/nosuchendpoint", {"name": "x"}),
        req("PATCH", "/v1/templates/{t3}", {"imageName": "echo:2", "env": {"NEW": "1"}}),
        req("DELETE", "/v1/templates/{t3}"),
        req("GET", "/v1/endpoints/{e1}?includeTemplate=true"),
        req("GET", "/v2/serverless/{e1}"),
        req("GET", "/v2/serverless/{e2}"),
        req("GET", "/v2/serverless/{e3}"),
        req("GET", "/v2/templates/{t3}"),
        req("DELETE", "/v1/networkvolumes/{vol1}"),
    ]


def v2_endpoints() -> list[Step]:
    queue = {"type": "QUEUE_DELAY", "queueDelay": 4}
    return [
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "vep-one",
                "type": "QUEUE",
                "image": "echo",
                "scaling": queue,
                "gpu": {"pools": ["AMPERE_48"], "count": 1},
                "workers": {"min": 0, "max": 2, "idleTimeout": 9},
                "flashboot": "FLASHBOOT",
                "env": {"E": "1"},
                "timeout": 60000,
            },
            "ve1",
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "vep-cpu",
                "type": "QUEUE",
                "templateId": "{vt2}",
                "env": {"B": "body"},
                "scaling": {"type": "REQUEST_COUNT", "requestCount": 3},
                "cpu": [{"id": "cpu3c", "vcpuCount": 4}],
            },
            "ve2",
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "vep-pools",
                "type": "QUEUE",
                "image": "echo",
                "scaling": {"type": "QUEUE_DELAY", "queueDelay": 2.5},
                "gpu": {
                    "pools": ["AMPERE_48", "ADA_24"],
                    "excludedTypes": ["NVIDIA A40"],
                    "count": 2,
                },
                "flashboot": "PRIORITY_FLASHBOOT",
            },
            "ve3",
        ),
        # refusals
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "QUEUE",
                "image": "echo",
                "scaling": queue,
                "gpu": {"pools": ["AMPERE_48"]},
                "cpu": [{"id": "cpu3c", "vcpuCount": 2}],
            },
        ),
        req(
            "POST",
            "/v2/serverless",
            {"name": "x", "type": "QUEUE", "image": "echo", "scaling": queue},
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "LOAD_BALANCER",
                "image": "echo",
                "scaling": queue,
                "gpu": {"pools": ["AMPERE_48"]},
            },
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "QUEUE",
                "image": "echo",
                "scaling": {"type": "REQUEST_COUNT", "requestCount": 2},
                "workers": {"idleTimeout": 5},
                "gpu": {"pools": ["AMPERE_48"]},
            },
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "QUEUE",
                "image": "echo",
                "scaling": queue,
                "gpu": {"pools": ["AMPERE_48"], "excludedTypes": ["NVIDIA H100 80GB HBM3"]},
            },
        ),
        req(
            "POST",
            "/v2/serverless",
            {"name": "x", "type": "QUEUE", "scaling": queue, "gpu": {"pools": ["AMPERE_48"]}},
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "QUEUE",
                "templateId": "nosuchtemplate",
                "scaling": queue,
                "gpu": {"pools": ["AMPERE_48"]},
            },
        ),
        req(
            "POST",
            "/v2/serverless",
            {
                "name": "x",
                "type": "QUEUE",
                "image": "echo",
                "scaling": queue,
                "gpu": {
                    "pools": ["AMPERE_48"],
                    "minCudaVersion": "12.4",
                    "allowedCudaVersions": ["12.6"],
                },
            },
        ),
        # reads, across the interfaces
        req("GET", "/v2/serverless"),
        req("GET", "/v2/serverless/{ve1}"),
        req("GET", "/v2/serverless/{ve2}"),
        req("GET", "/v2/serverless/{ve3}"),
        req("GET", "/v2/serverless/nosuchendpoint"),
        req("GET", "/v1/endpoints/{ve1}?includeTemplate=true"),
        req("GET", "/v1/endpoints/{ve2}"),
        req("GET", "/v1/endpoints/{ve3}"),
        req("GET", "/v1/templates?includeEndpointBoundTemplates=true"),
        req("GET", "/v2/templates"),
        req("GET", "/v2/serverless/{ve1}/releases"),
        # changes
        wait(60),
        req("PATCH", "/v2/serverless/{ve1}", {"image": "echo:2", "workers": {"min": 1, "max": 3}}),
        req(
            "PATCH",
            "/v2/serverless/{ve2}",
            {"env": {"C": "c"}, "scaling": {"type": "QUEUE_DELAY", "queueDelay": 7}},
        ),
        req("PATCH", "/v2/serverless/{e1}", {"name": "ep-one-v2", "flashboot": "FLASHBOOT"}),
        req(
            "PATCH",
            "/v2/serverless/{ve3}",
            {"gpu": {"pools": ["ADA_24"]}, "cpu": [{"id": "cpu3c", "vcpuCount": 2}]},
        ),
        req("PATCH", "/v2/serverless/{ve3}", {"colour": "red"}),
        req("PATCH", "/v2/serverless/nosuchendpoint", {"name": "x"}),
        req("GET", "/v2/serverless/{ve1}/releases"),
        req("GET", "/v2/serverless/{ve1}"),
        req("GET", "/v1/endpoints/{ve1}?includeTemplate=true"),
        req("GET", "/v1/endpoints/{e1}?includeTemplate=true"),
        req("PATCH", "/v1/endpoints/{ve2}", {"workersMax": 4, "idleTimeout": 20}),
        req("GET", "/v2/serverless/{ve2}"),
        # deletes, each through the other interface
        req("DELETE", "/v1/endpoints/{ve3}"),
        req("DELETE", "/v2/serverless/{e3}"),
        req("DELETE", "/v2/serverless/nosuchendpoint"),
        req("DELETE", "/v1/endpoints/nosuchendpoint"),
        req("GET", "/v1/templates?includeEndpointBoundTemplates=true"),
        req("GET", "/v2/templates"),
    ]


def v1_pods() -> list[Step]:
    return [
        req("POST", "/v1/pods", {"name": "p-one", "imageName": "img", "gpuTypeIds": [GPU]}, "p1"),
        req(
            "POST",
            "/v1/pods",
            {
                "name": "p-cpu",
                "imageName": "img",
                "computeType": "CPU",
                "cpuFlavorIds": ["cpu3c"],
                "vcpuCount": 4,
                "networkVolumeId": "{vol2}",
                "dataCenterIds": ["EU-RO-1"],
                "env": {"E": "1"},
                "ports": ["8888/http"],
                "volumeInGb": 0,
            },
            "p2",
        ),
        req(
            "POST",
            "/v1/pods",
            {
                "name": "p-tpl",
                "templateId": "{t2}",
                "gpuTypeIds": [GPU],
                "gpuCount": 2,
                "cloudType": "COMMUNITY",
            },
            "p3",
        ),
        req(
            "POST",
            "/v1/pods",
            {
                "imageName": "img",
                "interruptible": True,
                "dockerStartCmd": ["sleep", "infinity"],
                "volumeInGb": 15,
            },
            "p4",
        ),
        # refusals
        req("POST", "/v1/pods", {"name": "x"}),
        req("POST", "/v1/pods", {"imageName": "img", "gpuTypeIds": ["NVIDIA Q9"]}),
        req("POST", "/v1/pods", {"imageName": "img", "gpuCount": 0}),
        req("POST", "/v1/pods", {"imageName": "img", "networkVolumeId": "nope"}),
        req("POST", "/v1/pods", {"imageName": "img", "templateId": "nosuchtemplate"}),
        req("POST", "/v1/pods", {"imageName": "img", "colour": "red"}),
        req("POST", "/v1/pods", {"imageName": "img", "computeType": "CPU", "gpuTypeIds": [GPU]}),
        # reads
        req("GET", "/v1/pods"),
        req("GET", "/v1/pods?computeType=GPU&includeMachine=true"),
        req("GET", "/v1/pods?includeNetworkVolume=true&includeTemplate=true"),
        req("GET", "/v1/pods?name=p-one"),
        req("GET", "/v1/pods?computeType=TPU"),
        req("GET", "/v1/pods/{p1}?includeMachine=true"),
        req("GET", "/v1/pods/{p2}?includeNetworkVolume=true"),
        req("GET", "/v1/pods/{p3}?includeTemplate=true"),
        req("GET", "/v1/pods/nosuchpod"),
        req("GET", "/v2/pods/{p1}"),
        req("GET", "/v2/pods/{p2}"),
        wait(4),
        req("GET", "/v2/pods/{p3}"),
        wait(6),
        req("GET", "/v2/pods/{p4}"),
        # life cycle
        req("POST", "/v1/pods/{p1}/stop"),
        req("POST", "/v1/pods/{p1}/stop"),
        req("GET", "/v2/pods/{p1}"),
        wait(30),
        req("POST", "/v1/pods/{p1}/start"),
        req("POST", "/v1/pods/{p1}/start"),
        wait(2),
        req("GET", "/v2/pods/{p1}"),
        req("POST", "/v1/pods/{p1}/restart"),
        req("POST", "/v1/pods/{p3}/reset"),
        req("POST", "/v1/pods/nosuchpod/stop"),
        req("GET", "/v1/pods/{p1}"),
        req("GET", "/v1/pods/{p3}"),
        # changes
        req("PATCH", "/v1/pods/{p1}", {"imageName": "img:2", "env": {"N": "1"}}),
        req(
            "POST",
            "/v1/pods/{p2}/update",
            {"containerDiskInGb": 60, "ports": ["8888/http", "22/tcp"]},
        ),
        req("PATCH", "/v1/pods/{p1}", {"name": "p-one-b"}),
        req("PATCH", "/v1/pods/{p1}", {"colour": "red"}),
        req("PATCH", "/v1/pods/{p1}", {"volumeInGb": 1}),
        req("PATCH", "/v1/pods/nosuchpod", {"imageName": "x"}),
        req("GET", "/v2/pods/{p1}"),
        req("GET", "/v2/pods/{p2}"),
        req("DELETE", "/v1/networkvolumes/{vol2}"),
        req("DELETE", "/v1/templates/{t2}"),
        req("DELETE", "/v1/containerregistryauth/{a1}"),
        req("DELETE", "/v1/pods/{p4}"),
        req("DELETE", "/v1/pods/{p4}"),
    ]


def v2_pods() -> list[Step]:
    return [
        req(
            "POST",
            "/v2/pods",
            {
                "name": "vp-one",
                "image": "img",
                "gpu": {"id": GPU, "count": 1},
                "ports": ["8888/http", "22/tcp"],
            },
            "vp1",
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "vp-cpu",
                "image": "img",
                "cpu": {"id": "cpu3c", "vcpuCount": 2},
                "env": {"JUPYTER_PASSWORD": "mine"},
                "startJupyter": True,
                "startSsh": False,
            },
            "vp2",
        ),
        req(
            "POST", "/v2/pods", {"name": "vp-tpl", "templateId": "{vt1}", "gpu": {"id": GPU}}, "vp3"
        ),
        req(
            "POST",
            "/v2/pods",
            {
                "name": "vp-plain",
                "image": "img",
                "gpu": {"id": GPU},
                "startJupyter": False,
                "startSsh": False,
                "args": "sleep 9",
            },
            "vp4",
        ),
        # refusals
        req(
            "POST",
            "/v2/pods",
            {
                "name": "x",
                "image": "img",
                "gpu": {"id": GPU},
                "cpu": {"id": "cpu3c", "vcpuCount": 2},
            },
        ),
        req("POST", "/v2/pods", {"name": "x", "image": "img"}),
        req("POST", "/v2/pods", {"name": "x", "gpu": {"id": GPU}}),
        req("POST", "/v2/pods", {"name": "x", "image": "img", "gpu": {"id": GPU, "count": 0}}),
        req("POST", "/v2/pods", {"name": "x", "image": "img", "gpu": {"id": "NVIDIA Q9"}}),
        req("POST", "/v2/pods", {"name": "x", "image": "img", "gpu": {"id": GPU}, "colour": "red"}),
        req("POST", "/v2/pods", {"name": "x", "templateId": "nosuchtemplate", "gpu": {"id": GPU}}),
        req(
            "POST",
            "/v2/pods",
            {"name": "x", "image": "img", "gpu": {"id": GPU}, "args": "bad 'quote"},
        ),
        # reads
        req("GET", "/v2/pods"),
        req("GET", "/v2/pods/{vp1}"),
        req("GET", "/v2/pods/{vp2}"),
        req("GET", "/v2/pods/{vp3}"),
        req("GET", "/v2/pods/nosuchpod"),
        req("GET", "/v1/pods/{vp1}?includeMachine=true&includeTemplate=true"),
        req("GET", "/v1/pods/{vp3}"),
        wait(10),
        req("GET", "/v2/pods/{vp1}"),
        # actions
        req("POST", "/v2/pods/{vp1}/action", {"action": "stop"}),
        req("POST", "/v2/pods/{vp1}/action", {"action": "stop"}),
        req("POST", "/v2/pods/{vp1}/action", {"action": "restart"}),
        req("GET", "/v1/pods/{vp1}"),
        req("POST", "/v2/pods/{vp1}/action", {"action": "start"}),
        req("GET", "/v2/pods/{vp1}"),
        wait(6),
        req("POST", "/v2/pods/{vp1}/action", {"action": "restart"}),
        req("POST", "/v2/pods/{vp1}/action", {"action": "dance"}),
        req("POST", "/v2/pods/{vp1}/action", {}),
        req("POST", "/v2/pods/nosuchpod/action", {"action": "stop"}),
        req("PATCH", "/v2/pods/{vp4}", {"locked": True}),
        req("POST", "/v2/pods/{vp4}/action", {"action": "stop"}),
        req("POST", "/v1/pods/{vp4}/stop"),
        req("PATCH", "/v2/pods/{vp4}", {"locked": False, "name": "vp-plain-b"}),
        # changes
        req("PATCH", "/v2/pods/{vp2}", {"image": "img"}),
        req("PATCH", "/v2/pods/{vp2}", {"env": {"Z": "z"}, "args": "python run.py"}),
        req("PATCH", "/v2/pods/{vp3}", {"mounts": {"persistent": {"size": 40, "path": "/big"}}}),
        req("PATCH", "/v2/pods/{p1}", {"name": "p-one-v2"}),
        req("PATCH", "/v2/pods/{vp1}", {"colour": "red"}),
        req("PATCH", "/v2/pods/{vp1}", {"args": "bad 'quote"}),
        req("PATCH", "/v2/pods/nosuchpod", {"name": "x"}),
        req("GET", "/v1/pods/{vp2}"),
        req("GET", "/v1/pods/{vp3}"),
        req("GET", "/v1/pods/{p1}"),
        req("POST", "/v1/pods/{vp2}/stop"),
        req("GET", "/v2/pods/{vp2}"),
        req("POST", "/v1/pods/{vp3}/reset"),
        req("GET", "/v2/pods/{vp3}"),
        req("POST", "/v2/pods/{p2}/action", {"action": "stop"}),
        req("GET", "/v1/pods/{p2}"),
        # deletes, each through the other interface
        req("POST", "/v2/pods/{vp4}/action", {"action": "terminate"}),
        req("DELETE", "/v1/pods/{vp2}"),
        req("DELETE", "/v2/pods/{p3}"),
        req("DELETE", "/v2/pods/nosuchpod"),
        req("GET", "/v2/pods/{vp4}"),
    ]


def steps() -> list[Step]:
    """The whole corpus, in order: it builds on what each part made."""
    return [
        *shared_records(),
        *v1_templates(),
        *v2_templates(),
        *listings(),
        *v1_endpoints(),
        *v2_endpoints(),
        *listings(),
        *v1_pods(),
        *v2_pods(),
        *listings(),
        wait(3600),
        *listings(),
    ]


RESTORED = [
    *(s.path for s in listings()),
    "/v1/templates?includeRunpodTemplates=true&includeEndpointBoundTemplates=true",
    "/v1/pods?includeTemplate=true",
]
"""What an emulator restarted on the corpus's database is asked."""


# ---- running --------------------------------------------------------------------------------


@contextmanager
def seeded(seed: int = 23) -> Iterator[None]:
    """``secrets`` draws from one seeded generator while the corpus runs: ids, ports and
    addresses repeat."""
    rng = random.Random(seed)

    def token_urlsafe(n: int = 32) -> str:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    def token_hex(n: int = 32) -> str:
        return rng.randbytes(n).hex()

    with (
        mock.patch.object(secrets, "choice", rng.choice),
        mock.patch.object(secrets, "randbelow", rng.randrange),
        mock.patch.object(secrets, "token_urlsafe", token_urlsafe),
        mock.patch.object(secrets, "token_hex", token_hex),
    ):
        yield


_ID = re.compile(r"^(deleg_|rel_)?[a-z0-9]{10,25}$")
_SECRET_KEYS = {"JUPYTER_PASSWORD"}


@dataclass
class Normaliser:
    """Ids to ``<id:N>`` in order of first appearance; generated secrets to ``<secret>``."""

    ids: dict[str, str] = field(default_factory=dict)

    def learn(self, value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self.learn(v, k)
        elif isinstance(value, list):
            for v in value:
                self.learn(v, key)
        elif isinstance(value, str) and self._is_id(key, value):
            self.ids[value] = f"<id:{len(self.ids) + 1}>"

    def _is_id(self, key: str, value: str) -> bool:
        named = key == "id" or key.endswith(("Id", "Ids"))
        return named and bool(_ID.match(value)) and value not in self.ids

    def text(self, body: str) -> str:
        for real, placeholder in self.ids.items():
            body = body.replace(real, placeholder)
        for key in _SECRET_KEYS:
            body = re.sub(rf'("{key}":\s*")[^"]*(")', r"\1<secret>\2", body)
        return body


def _fill(value: Any, saved: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**saved) if "{" in value else value
    if isinstance(value, dict):
        return {k: _fill(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, saved) for v in value]
    return value


def answer(r: httpx.Response, text: str) -> dict[str, Any]:
    return {"status": r.status_code, "type": r.headers.get("content-type"), "body": text}


async def run(
    emu: Emulator, client: httpx.AsyncClient, sequence: list[Step] | None = None
) -> list[dict[str, Any]]:
    """Every step (of ``sequence``, or the corpus's) against ``emu``; the answers,
    normalised, each with its request."""
    saved: dict[str, str] = {}
    names = Normaliser()
    out: list[dict[str, Any]] = []
    for step in steps() if sequence is None else sequence:
        if step.advance:
            await emu.advance_async(step.advance)
            out.append({"advance": step.advance})
            continue
        path = _fill(step.path, saved)
        if step.raw is not None:
            r = await client.request(step.method, path, content=step.raw)
        elif step.body is not None:
            r = await client.request(step.method, path, json=_fill(step.body, saved))
        else:
            r = await client.request(step.method, path)
        data = r.json() if r.content and "json" in r.headers.get("content-type", "") else None
        names.learn(data)
        if step.save is not None and isinstance(data, dict) and "id" in data:
            saved[step.save] = data["id"]
        out.append({"request": f"{step.method} {step.path}", **answer(r, names.text(r.text))})
    return out


def client_for(emu: Emulator) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(emu)), base_url="http://emulator", headers=AUTH
    )


async def restored(
    rows: list[list[Any]], db: Path, now: float, paths: list[str] = RESTORED
) -> list[dict[str, Any]]:
    """An emulator started on a database holding ``rows``: its answers to ``paths``."""
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, key TEXT NOT NULL, "
            "data TEXT NOT NULL, PRIMARY KEY (kind, key))"
        )
        con.executemany(
            "INSERT INTO records (kind, key, data) VALUES (?, ?, ?)",
            [(kind, key, json.dumps(data, separators=(",", ":"))) for kind, key, data in rows],
        )
    emu = Emulator(KEY, clock=FakeClock(now), db=db)
    emu.bind()
    try:
        async with client_for(emu) as client:
            answers = []
            for path in paths:
                r = await client.get(path)
                answers.append({"request": f"GET {path}", **answer(r, r.text)})
            return answers
    finally:
        emu.jobs.reset()
        await emu.aclose()
        emu.close()


def stored_rows(db: Path) -> list[list[Any]]:
    """Every row of a database, in order."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT kind, key, data FROM records ORDER BY rowid").fetchall()
    return [[kind, key, json.loads(data)] for kind, key, data in rows]


async def record(sequence: list[Step] | None = None, paths: list[str] = RESTORED) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "corpus.db"
        with seeded():
            emu = Emulator(KEY, clock=FakeClock(), db=db, demo_images=True)
            emu.bind()
            try:
                async with client_for(emu) as client:
                    exchanges = await run(emu, client, sequence)
                now = emu.clock.now()
            finally:
                emu.jobs.reset()
                await emu.aclose()
                emu.close()
        rows = stored_rows(db)
        again = await restored(rows, Path(tmp) / "restored.db", now, paths)
    return {"exchanges": exchanges, "stored": {"now": now, "rows": rows, "answers": again}}


if __name__ == "__main__":
    corpus = asyncio.run(record())
    FIXTURE.write_text(json.dumps(corpus, indent=1, ensure_ascii=False) + "\n")
    print(f"{FIXTURE}: {len(corpus['exchanges'])} exchanges, {FIXTURE.stat().st_size} bytes")
