"""Billing history: what pods, endpoints and network volumes cost, per time bucket.

A query names a period (``startTime`` to ``endTime``), a ``bucketSize`` and, for pods and
endpoints, a ``grouping``; each record is one bucket of one group, ``time`` being the
start of its bucket.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ._base import WireModel
from ._fields import QueryModel, UtcDatetime, WireDatetime
from .enums import BucketSize, DataCenterId, EndpointBillingGrouping, GpuTypeId, PodBillingGrouping


class BillingRecord(WireModel):
    """One bucket of one group of pod or endpoint spending."""

    time: WireDatetime | None = None
    amount: float | None = None
    time_billed_ms: int | None = Field(default=None, alias="timeBilledMs")
    disk_space_billed_gb: int | None = Field(default=None, alias="diskSpaceBilledGb")
    pod_id: str | None = Field(default=None, alias="podId")
    endpoint_id: str | None = Field(default=None, alias="endpointId")
    gpu_type_id: str | None = Field(default=None, alias="gpuTypeId")


class NetworkVolumeBillingRecord(WireModel):
    """One bucket of network volume storage spending."""

    time: WireDatetime | None = None
    amount: float | None = None
    disk_space_billed_gb: int | None = Field(default=None, alias="diskSpaceBilledGb")
    high_performance_storage_amount: float | None = Field(
        default=None, alias="highPerformanceStorageAmount"
    )
    high_performance_storage_disk_space_billed_gb: int | None = Field(
        default=None, alias="highPerformanceStorageDiskSpaceBilledGb"
    )


class BillingQuery(QueryModel):
    """The period and bucket size every billing operation takes (query parameters).

    Left out, ``endTime`` is now and ``startTime`` the beginning of the account's history.
    """

    start_time: UtcDatetime | None = Field(default=None, alias="startTime")
    end_time: UtcDatetime | None = Field(default=None, alias="endTime")
    bucket_size: BucketSize = Field(default=BucketSize.DAY, alias="bucketSize")

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
    pod_id: str | None = Field(default=None, alias="podId")
    gpu_type_id: GpuTypeId | None = Field(default=None, alias="gpuTypeId")


class EndpointBillingQuery(BillingQuery):
    """Query of ``GET /billing/endpoints``; list filters match any of their values."""

    grouping: EndpointBillingGrouping = EndpointBillingGrouping.ENDPOINT_ID
    endpoint_id: str | None = Field(default=None, alias="endpointId")
    gpu_type_id: list[GpuTypeId] | None = Field(default=None, alias="gpuTypeId")
    data_center_id: list[DataCenterId] | None = Field(default=None, alias="dataCenterId")
    image_name: str | None = Field(default=None, alias="imageName")
    template_id: str | None = Field(default=None, alias="templateId")


class NetworkVolumeBillingQuery(BillingQuery):
    """Query of ``GET /billing/networkvolumes``: period and bucket size only."""
