"""``nbext.models`` names REST v2's records; REST v1's live in ``nbext.models.v1``, for
the emulator's ``/v1`` alone (the service retired v1 on 2026-11-15)."""

from __future__ import annotations

import pytest

import nbext.models as m
from nbext.models import v1, v2

BOTH = ("BillingQuery", "BillingRecord", "CpuType", "DataCenter", "Endpoint", "GpuType")
BOTH += ("NetworkVolume", "Pod", "PodStatus", "Template")


@pytest.mark.parametrize("name", BOTH)
def test_a_name_both_versions_have_is_v2s(name: str) -> None:
    assert getattr(m, name) is getattr(v2, name) is not getattr(v1, name)
    assert name in m.__all__


def test_v2s_billing_query_is_its_own() -> None:
    """v2 reads a period as ``lastN`` buckets too, and has no v1 grouping."""
    query = m.BillingQuery.model_validate({"last_n": 3, "bucket_size": "week"})
    assert query.to_params() == [("bucketSize", "week"), ("lastN", "3")]
    assert "grouping" not in m.BillingQuery.model_fields
    assert "last_n" not in v1.BillingQuery.model_fields
