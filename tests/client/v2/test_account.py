"""SSH keys, instant clusters and ECR delegations through the client, four ways."""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

import pytest

from nbext.client import BadRequest, NotFound
from nbext.models.v2 import Cluster, EcrDelegation, Pod

from .conftest import GPU, V2Harness

pytestmark = pytest.mark.anyio

ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@laptop"
RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 ci@runner"
ARN = "arn:aws:ecr:us-east-2:418399314813:repository/team/app:v1"


async def test_ssh_keys_set_add_remove(v2: V2Harness) -> None:
    keys = v2.client.ssh_keys
    assert await v2.call(keys.list) == []
    assert await v2.call(keys.set, [ED + "\n"]) == [ED]  # as read from a .pub file
    assert await v2.call(keys.add, RSA) == [ED, RSA]
    assert await v2.call(keys.add, RSA) == [ED, RSA]  # already there: not twice
    assert await v2.call(keys.remove, ED.rsplit(" ", 1)[0] + " other comment") == [RSA]
    assert await v2.call(keys.list) == [RSA]
    pod = await v2.pod(startSsh=True)
    assert pod["env"]["PUBLIC_KEY"] == RSA  # what pods started with SSH receive
    assert await v2.call(keys.set, []) == []


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("ssh-ed25519", "key 0 is not a public key line"),
        ("hello world", "'hello world'"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n", "is a private key (not shown)"),
    ],
)
async def test_a_malformed_key_is_refused_and_nothing_changes(
    v2: V2Harness, key: str, fragment: str
) -> None:
    await v2.call(v2.client.ssh_keys.set, [ED])
    for method in (v2.client.ssh_keys.add, v2.client.ssh_keys.remove):
        with pytest.raises(BadRequest) as caught:
            await v2.call(method, key)
        message = str(caught.value)
        assert fragment in message and "nothing was sent" in message and "\n" not in message
        assert "b3BlbnNzaC1rZXk" not in message
    with pytest.raises(BadRequest, match=r"key 1 is (a private|not a public) key"):
        await v2.call(v2.client.ssh_keys.set, [RSA, key])
    with pytest.raises(BadRequest, match="keys must be a list of strings, got str"):
        await v2.call(v2.client.ssh_keys.set, RSA)
    assert await v2.call(v2.client.ssh_keys.list) == [ED]


async def test_a_cluster_from_create_to_delete(v2: V2Harness) -> None:
    c = v2.client.clusters
    made = await v2.call(
        c.create,
        name="train",
        type="slurm",
        gpu_type_id=GPU,
        gpu_count_per_pod=2,
        pod_count=3,
        image="img",
        env={"A": "1"},
    )
    assert isinstance(made, Cluster) and made.type == "SLURM" and made.name == "train"
    assert [x.id for x in await v2.call(c.list)] == [made.id]
    members = await v2.call(c.pods, made.id)
    assert len(members) == 3 and all(isinstance(p, Pod) for p in members)
    assert [p.cluster.rank for p in members if p.cluster] == [0, 1, 2]
    assert (await v2.call(c.update, made.id, name="renamed")).name == "renamed"
    assert (await v2.call(c.get, made.id)).name == "renamed"
    await v2.call(c.delete, made.id)
    assert await v2.call(c.list) == []
    with pytest.raises(NotFound, match="cluster"):
        await v2.call(c.get, made.id)


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"pod_count": 1}, "pod_count must be a whole number >= 2, got 1"),
        ({"pod_count": 251}, "pod_count must be at most 250"),
        ({"gpu_count_per_pod": 0}, "gpu_count_per_pod must be a whole number >= 1"),
        ({"type": "MPI"}, "type must be one of APPLICATION, TRAINING, SLURM, RAY"),
        ({"name": " "}, "name must be a non-empty string"),
        ({"gpu_type_id": ""}, "gpu_type_id must be a non-empty string"),
        ({"extra_body": {"name": "x"}}, "extra_body repeats name"),
    ],
)
async def test_bad_cluster_input_is_refused_before_sending(
    v2: V2Harness, kw: dict[str, object], fragment: str
) -> None:
    args = {"name": "c", "type": "TRAINING", "gpu_type_id": GPU, "gpu_count_per_pod": 1}
    with pytest.raises(BadRequest) as caught:
        await v2.call(v2.client.clusters.create, **{**args, "pod_count": 2, **kw})
    assert fragment in str(caught.value) and caught.value.sent is False
    assert await v2.call(v2.client.clusters.list) == []


async def test_a_cluster_takes_any_mapping_and_sequence_its_keywords_are_typed_as(
    v2: V2Harness,
) -> None:
    made = await v2.call(
        v2.client.clusters.create,
        name="c",
        type="TRAINING",
        gpu_type_id=GPU,
        gpu_count_per_pod=1,
        pod_count=2,
        image="img",
        env=MappingProxyType({"A": "1"}),
        ports=deque(["8888/http"]),
    )
    members = await v2.call(v2.client.clusters.pods, made.id)
    assert [(p.env, p.ports) for p in members] == [({"A": "1"}, ["8888/http"])] * 2


async def test_the_service_refuses_what_only_it_knows(v2: V2Harness) -> None:
    with pytest.raises(BadRequest, match="unknown GPU type"):
        await v2.call(
            v2.client.clusters.create,
            name="c",
            type="RAY",
            gpu_type_id="NVIDIA Abacus",
            gpu_count_per_pod=1,
            pod_count=2,
            image="img",
        )


async def test_registry_delegations(v2: V2Harness) -> None:
    d = v2.client.registry_delegations
    made = await v2.call(d.create, ARN, name="team")
    assert isinstance(made, EcrDelegation)
    assert (made.repository, made.tag, made.aws_region) == ("team/app", "v1", "us-east-2")
    assert [x.id for x in await v2.call(d.list)] == [made.id]
    await v2.call(d.delete, made.id)
    assert await v2.call(d.list) == []
    with pytest.raises(NotFound):
        await v2.call(d.delete, made.id)
    with pytest.raises(BadRequest, match="resource must be an ECR repository ARN"):
        await v2.call(d.create, "docker.io/library/python")
