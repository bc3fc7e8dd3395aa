"""Billing history: what pods, endpoints and network volumes cost, per time bucket (the
bucket's start is a record's ``time``)."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from .._base import WireModel
from .._fields import QueryModel, UtcDatetime, WireDatetime
from ..enums import BucketSize, DataCenterId, GpuTypeId
from .enums import EndpointBillingGrouping, PodBillingGrouping


class BillingRecord(WireModel):
    """One bucket of one group of pod or endpoint spending."""

    time: WireDatetime | None = None
    amount: float | None = None
    time_billed_ms: int | None = None
    disk_space_billed_gb: int | None = None
    pod_id: str | None = None
    endpoint_id: str | None = None
    gpu_type_id: str | None = None


class NetworkVolumeBillingRecord(WireModel):
    """One bucket of network volume storage spending."""

    time: WireDatetime | None = None
    amount: float | None = None
    disk_space_billed_gb: int | None = None
    high_performance_storage_amount: float | None = None
    high_performance_storage_disk_space_billed_gb: int | None = None


class BillingQuery(QueryModel):
    """Every billing operation's period (by default all history) and bucket size."""

    start_time: UtcDatetime | None = None
    end_time: UtcDatetime | None = None
    bucket_size: BucketSize = BucketSize.DAY

    @model_validator(mode="after")
    def _period_in_order(self) -> Any:
        if self.start_time and self.end_time and self.start_time > self.end_time:
            raise ValueError(
                f"startTime ({self.start_time.isoformat()}) must not be after "
                f"endTime ({self.end_time.isoformat()})"
            )
        return self


class PodBillingQuery(BillingQuery):
    """Query of ``GET /billing/pods``."""

    grouping: PodBillingGrouping = PodBillingGrouping.GPU_TYPE_ID
    pod_id: str | None = None
    gpu_type_id: GpuTypeId | None = None


class EndpointBillingQuery(BillingQuery):
    """Query of ``GET /billing/endpoints``; list filters match any of their values."""

    grouping: EndpointBillingGrouping = EndpointBillingGrouping.ENDPOINT_ID
    endpoint_id: str | None = None
    gpu_type_id: list[GpuTypeId] | None = None
    data_center_id: list[DataCenterId] | None = None
    image_name: str | None = None
    template_id: str | None = None


class NetworkVolumeBillingQuery(BillingQuery):
    """Query of ``GET /billing/networkvolumes``: period and bucket size only."""
