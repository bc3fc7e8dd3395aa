"""The catalog as v2 describes it: serverless pools, regions, availability (varying
deterministically), CUDA versions (docs/architecture.md#management-areas)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from . import catalog

POOL_OF_NAME = {
    "RTX 4090": "ADA_24",
    "L40": "ADA_48_PRO",
    "L40S": "ADA_48_PRO",
    "RTX 6000 Ada": "ADA_48_PRO",
    "H100 SXM": "ADA_80_PRO",
    "H100 PCIe": "ADA_80_PRO",
    "H100 NVL": "ADA_80_PRO",
    "RTX 5090": "ADA_32_PRO",
    "RTX 5000 Ada": "ADA_32_PRO",
}
"""Types whose pool is not simply the one for their memory size."""
POOLS_BY_MEMORY = [
    (16, "AMPERE_16"),
    (24, "AMPERE_24"),
    (32, "ADA_32_PRO"),
    (48, "AMPERE_48"),
    (80, "AMPERE_80"),
    (96, "BLACKWELL_96"),
    (141, "HOPPER_141"),
    (10_000, "BLACKWELL_180"),
]
LEVELS = ("NONE", "LOW", "MEDIUM", "HIGH")
CUDA_VERSIONS = ("11.8", "12.0", "12.1", "12.2", "12.4", "12.6", "12.8", "12.9", "13.0")
"""What the emulator's GPU hosts run, oldest first."""


def cuda_order(version: str) -> tuple[int, ...]:
    """A CUDA version as it sorts ("12.10" after "12.9"; "" first)."""
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def pool_of(gpu_id: str) -> str:
    offer = catalog.gpu(gpu_id)
    named = POOL_OF_NAME.get(offer.display_name)
    if named:
        return named
    return next(pool for limit, pool in POOLS_BY_MEMORY if offer.memory_gb <= limit)


def pools() -> dict[str, list[str]]:
    """Pool id -> its GPU type ids, in catalog order."""
    found: dict[str, list[str]] = {}
    for gpu_id in catalog.GPUS:
        found.setdefault(pool_of(gpu_id), []).append(gpu_id)
    return found


def manufacturer(gpu_id: str) -> str:
    return "AMD" if "AMD" in gpu_id else "NVIDIA"


def availability(resource: str, data_center: str) -> str:
    """NONE..HIGH for a GPU type or CPU flavour in a data centre (stable across runs)."""
    h = zlib.crc32(f"{resource}@{data_center}".encode()) % 10
    return LEVELS[0] if h == 0 else LEVELS[1] if h <= 2 else LEVELS[2] if h <= 5 else LEVELS[3]


def overall(levels: list[str]) -> str:
    return max(levels, key=LEVELS.index, default="NONE")


def max_count(gpu_id: str) -> int:
    """GPUs in the largest machine of the type: 8 for data-centre cards, else 4 or 2."""
    memory = catalog.gpu(gpu_id).memory_gb
    return 8 if memory >= 40 else 4 if memory >= 20 else 2


@dataclass(frozen=True)
class Place:
    region: str
    compliance: tuple[str, ...]
    global_network: bool
    high_performance: bool


REGION_OF_COUNTRY = {
    "US": "NORTH_AMERICA",
    "CA": "NORTH_AMERICA",
    "AU": "OCEANIA",
    "JP": "ASIA",
}


def place(data_center: str) -> Place:
    info = catalog.DATA_CENTERS[data_center]
    region = REGION_OF_COUNTRY.get(info.country, "EUROPE")
    compliance = ["ISO_IEC_27001", "SOC_2_TYPE_2"]
    if region == "EUROPE":
        compliance.insert(0, "GDPR")
    if info.country in ("SE", "IS", "NO"):
        compliance.append("RENEWABLE")
    h = zlib.crc32(data_center.encode())
    return Place(region, tuple(compliance), h % 2 == 0, h % 3 == 0)
