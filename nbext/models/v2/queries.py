"""The query of REST v2's billing calls, checked before a call is sent."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator, model_validator

from .._fields import QueryModel, UtcDatetime
from ..enums import BucketSize


class BillingQuery(QueryModel):
    """The period and bucket size every v2 billing call takes (query parameters)."""

    start_time: UtcDatetime | None = None
    end_time: UtcDatetime | None = None
    bucket_size: BucketSize | None = None
    last_n: int | None = None

    @field_validator("last_n", mode="before")
    @classmethod
    def _whole_from_one(cls, value: Any) -> Any:
        whole = isinstance(value, int) and not isinstance(value, bool)
        if value is not None and not (whole and value >= 1):
            raise ValueError(f"must be a whole number from 1, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_period_in_order(self) -> Any:
        if self.last_n is not None and (self.start_time or self.end_time):
            raise ValueError("last_n: give last_n or start_time/end_time, not both")
        if self.start_time and self.end_time and self.start_time > self.end_time:
            raise ValueError(
                f"startTime ({self.start_time.isoformat()}) must not be after "
                f"endTime ({self.end_time.isoformat()})"
            )
        return self
