"""The reference's enumerations both management versions share, as ``StrEnum`` so members
compare equal to their strings; values from the service's OpenAPI description.

Response models accept values outside these lists (a newer service may add GPU types);
input models do not, so a typo is refused before it is sent.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class GpuTypeId(enum.StrEnum):
    """GPU types a pod or serverless worker can rent; two carry a doubled space
    (``"NVIDIA  A30"``), as the reference lists them and the service accepts them."""

    GEFORCE_RTX_4090 = "NVIDIA GeForce RTX 4090"
    A40 = "NVIDIA A40"
    RTX_A5000 = "NVIDIA RTX A5000"
    GEFORCE_RTX_5090 = "NVIDIA GeForce RTX 5090"
    H100_80GB_HBM3 = "NVIDIA H100 80GB HBM3"
    GEFORCE_RTX_3090 = "NVIDIA GeForce RTX 3090"
    RTX_A4500 = "NVIDIA RTX A4500"
    L40S = "NVIDIA L40S"
    H200 = "NVIDIA H200"
    L4 = "NVIDIA L4"
    RTX_6000_ADA_GENERATION = "NVIDIA RTX 6000 Ada Generation"
    A100_SXM4_80GB = "NVIDIA A100-SXM4-80GB"
    RTX_4000_ADA_GENERATION = "NVIDIA RTX 4000 Ada Generation"
    RTX_A6000 = "NVIDIA RTX A6000"
    A100_80GB_PCIE = "NVIDIA A100 80GB PCIe"
    RTX_2000_ADA_GENERATION = "NVIDIA RTX 2000 Ada Generation"
    RTX_A4000 = "NVIDIA RTX A4000"
    RTX_PRO_6000_BLACKWELL_SERVER_EDITION = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    H100_PCIE = "NVIDIA H100 PCIe"
    H100_NVL = "NVIDIA H100 NVL"
    L40 = "NVIDIA L40"
    B200 = "NVIDIA B200"
    GEFORCE_RTX_3080_TI = "NVIDIA GeForce RTX 3080 Ti"
    RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    GEFORCE_RTX_3080 = "NVIDIA GeForce RTX 3080"
    GEFORCE_RTX_3070 = "NVIDIA GeForce RTX 3070"
    AMD_INSTINCT_MI300X_OAM = "AMD Instinct MI300X OAM"
    GEFORCE_RTX_4080_SUPER = "NVIDIA GeForce RTX 4080 SUPER"
    TESLA_V100_PCIE_16GB = "Tesla V100-PCIE-16GB"
    TESLA_V100_SXM2_32GB = "Tesla V100-SXM2-32GB"
    RTX_5000_ADA_GENERATION = "NVIDIA RTX 5000 Ada Generation"
    GEFORCE_RTX_4070_TI = "NVIDIA GeForce RTX 4070 Ti"
    RTX_4000_SFF_ADA_GENERATION = "NVIDIA RTX 4000 SFF Ada Generation"
    GEFORCE_RTX_3090_TI = "NVIDIA GeForce RTX 3090 Ti"
    RTX_A2000 = "NVIDIA RTX A2000"
    GEFORCE_RTX_4080 = "NVIDIA GeForce RTX 4080"
    A30 = "NVIDIA A30"
    GEFORCE_RTX_5080 = "NVIDIA GeForce RTX 5080"
    TESLA_V100_FHHL_16GB = "Tesla V100-FHHL-16GB"
    H200_NVL = "NVIDIA H200 NVL"
    TESLA_V100_SXM2_16GB = "Tesla V100-SXM2-16GB"
    RTX_PRO_6000_BLACKWELL_MAX_Q_WORKSTATION_EDITION = (
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"
    )
    A5000_ADA = "NVIDIA A5000 Ada"
    TESLA_V100_PCIE_32GB = "Tesla V100-PCIE-32GB"
    RTX_A4500_DOUBLE_SPACE = "NVIDIA  RTX A4500"
    A30_DOUBLE_SPACE = "NVIDIA  A30"
    GEFORCE_RTX_3080TI = "NVIDIA GeForce RTX 3080TI"
    TESLA_T4 = "Tesla T4"
    RTX_A30 = "NVIDIA RTX A30"


class DataCenterId(enum.StrEnum):
    """The service's data centres (region-country-number)."""

    EU_RO_1 = "EU-RO-1"
    CA_MTL_1 = "CA-MTL-1"
    EU_SE_1 = "EU-SE-1"
    US_IL_1 = "US-IL-1"
    EUR_IS_1 = "EUR-IS-1"
    EU_CZ_1 = "EU-CZ-1"
    US_TX_3 = "US-TX-3"
    EUR_IS_2 = "EUR-IS-2"
    US_KS_2 = "US-KS-2"
    US_GA_2 = "US-GA-2"
    US_WA_1 = "US-WA-1"
    US_TX_1 = "US-TX-1"
    CA_MTL_3 = "CA-MTL-3"
    EU_NL_1 = "EU-NL-1"
    US_TX_4 = "US-TX-4"
    US_CA_2 = "US-CA-2"
    US_NC_1 = "US-NC-1"
    OC_AU_1 = "OC-AU-1"
    US_DE_1 = "US-DE-1"
    EUR_IS_3 = "EUR-IS-3"
    CA_MTL_2 = "CA-MTL-2"
    AP_JP_1 = "AP-JP-1"
    EUR_NO_1 = "EUR-NO-1"
    EU_FR_1 = "EU-FR-1"
    US_KS_3 = "US-KS-3"
    US_GA_1 = "US-GA-1"


class CudaVersion(enum.StrEnum):
    """CUDA versions a pod or worker may require (``allowedCudaVersions``, ``minCudaVersion``)."""

    V13_0 = "13.0"
    V12_9 = "12.9"
    V12_8 = "12.8"
    V12_7 = "12.7"
    V12_6 = "12.6"
    V12_5 = "12.5"
    V12_4 = "12.4"
    V12_3 = "12.3"
    V12_2 = "12.2"
    V12_1 = "12.1"
    V12_0 = "12.0"
    V11_8 = "11.8"


class CpuFlavorId(enum.StrEnum):
    """CPU flavours of CPU pods; serverless endpoints offer the ``c`` and ``g`` ones only."""

    CPU3C = "cpu3c"
    CPU3G = "cpu3g"
    CPU3M = "cpu3m"
    CPU5C = "cpu5c"
    CPU5G = "cpu5g"
    CPU5M = "cpu5m"


class CloudType(enum.StrEnum):
    """Secure Cloud (the service's data centres) or Community Cloud (hosts of the community)."""

    SECURE = "SECURE"
    COMMUNITY = "COMMUNITY"


class TemplateCategory(enum.StrEnum):
    """The compute category a template is filed under."""

    NVIDIA = "NVIDIA"
    AMD = "AMD"
    CPU = "CPU"


class BucketSize(enum.StrEnum):
    """The length of one billing record's period."""

    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"


SCENARIOS: Mapping[str, Mapping[str, float]] = {
    "cold-start": {"seconds": 10.0},
    "crash-loop": {},
    "throttled": {"seconds": 30.0},
    "flaky": {"fraction": 0.3, "seed": 0.0},
    "slow-stream": {"seconds": 2.0},
}
"""The emulator's teaching scenarios and their parameters' defaults: the one list its
scenarios are made from (``nbext/emulator/domain/scenarios.py``) and help texts name."""
