"""What the emulated cloud offers and what it costs: GPU types, CPU flavours, data
centres, at prices a test can multiply by hand (docs/architecture.md#management-areas)."""

from __future__ import annotations

from dataclasses import dataclass

from nbext.models import CloudType, CpuFlavorId, DataCenterId, GpuTypeId

SERVERLESS_MARKUP = 1.6
"""Serverless workers cost this much more per second than a pod's GPU-second."""
VOLUME_PRICE_PER_GB_MONTH = 0.07
SECONDS_PER_MONTH = 30 * 86_400
"""Storage is priced per GB-month; a month is 30 days."""
DEFAULT_GPU_TYPE = GpuTypeId.GEFORCE_RTX_4090
DEFAULT_CPU_FLAVOR = CpuFlavorId.CPU3C
DATA_CENTERS_DEFAULT = DataCenterId.EU_RO_1
"""Where workers of an endpoint run that lists no data centre (the reference's first)."""
USER_ID = "user_2nbextEmulatorLocalUser00"
"""The one account of the emulator: the owner of everything it creates."""


@dataclass(frozen=True)
class GpuOffer:
    """One GPU type: display name, memory per GPU, and on-demand Secure Cloud price."""

    id: str
    display_name: str
    memory_gb: int
    secure_price: float

    @property
    def community_price(self) -> float:
        return round(self.secure_price * 0.8, 2)

    @property
    def secure_spot_price(self) -> float:
        return round(self.secure_price * 0.5, 2)

    @property
    def community_spot_price(self) -> float:
        return round(self.secure_price * 0.4, 2)

    def hourly(self, cloud: str, interruptible: bool) -> float:
        """The price of one GPU-hour of a pod on ``cloud``, spot if ``interruptible``."""
        if cloud == CloudType.COMMUNITY:
            return self.community_spot_price if interruptible else self.community_price
        return self.secure_spot_price if interruptible else self.secure_price

    @property
    def serverless_price(self) -> float:
        """The serverless list price of one GPU-hour as published: billing charges this
        rounded figure, so the client's estimate from the catalog is what is billed."""
        return round(self.secure_price * SERVERLESS_MARKUP, 2)

    @property
    def serverless_per_second(self) -> float:
        """The price of one GPU-second of a serverless worker."""
        return self.serverless_price / 3600

    def wire(self, count: int | None = None) -> dict[str, object]:
        """The reference's GPU type object (``Pod.gpu``, ``Machine.gpuType``)."""
        view: dict[str, object] = {
            "id": self.id,
            "displayName": self.display_name,
            "securePrice": self.secure_price,
            "communityPrice": self.community_price,
            "oneWeekPrice": round(self.secure_price * 0.95, 2),
            "oneMonthPrice": round(self.secure_price * 0.9, 2),
            "threeMonthPrice": round(self.secure_price * 0.85, 2),
            "sixMonthPrice": round(self.secure_price * 0.8, 2),
            "secureSpotPrice": self.secure_spot_price,
            "communitySpotPrice": self.community_spot_price,
        }
        if count is not None:
            view["count"] = count
        return view


@dataclass(frozen=True)
class CpuOffer:
    """One CPU flavour: memory per vCPU and the price of one vCPU-hour."""

    id: str
    display_name: str
    memory_per_vcpu_gb: int
    price_per_vcpu: float

    @property
    def serverless_price_per_vcpu(self) -> float:
        """The serverless list price of one vCPU-hour, as the catalog publishes it."""
        return round(self.price_per_vcpu * SERVERLESS_MARKUP, 4)

    @property
    def serverless_per_vcpu_second(self) -> float:
        return self.serverless_price_per_vcpu / 3600


@dataclass(frozen=True)
class DataCenterInfo:
    id: str
    location: str
    country: str


G = GpuTypeId
_GPUS: list[tuple[GpuTypeId, str, int, float]] = [
    (G.GEFORCE_RTX_4090, "RTX 4090", 24, 0.69),
    (G.A40, "A40", 48, 0.40),
    (G.RTX_A5000, "RTX A5000", 24, 0.27),
    (G.GEFORCE_RTX_5090, "RTX 5090", 32, 0.94),
    (G.H100_80GB_HBM3, "H100 SXM", 80, 2.69),
    (G.GEFORCE_RTX_3090, "RTX 3090", 24, 0.46),
    (G.RTX_A4500, "RTX A4500", 20, 0.25),
    (G.L40S, "L40S", 48, 0.86),
    (G.H200, "H200 SXM", 141, 3.59),
    (G.L4, "L4", 24, 0.43),
    (G.RTX_6000_ADA_GENERATION, "RTX 6000 Ada", 48, 0.77),
    (G.A100_SXM4_80GB, "A100 SXM", 80, 1.74),
    (G.RTX_4000_ADA_GENERATION, "RTX 4000 Ada", 20, 0.26),
    (G.RTX_A6000, "RTX A6000", 48, 0.49),
    (G.A100_80GB_PCIE, "A100 PCIe", 80, 1.64),
    (G.RTX_2000_ADA_GENERATION, "RTX 2000 Ada", 16, 0.24),
    (G.RTX_A4000, "RTX A4000", 16, 0.25),
    (G.RTX_PRO_6000_BLACKWELL_SERVER_EDITION, "RTX PRO 6000", 96, 1.79),
    (G.H100_PCIE, "H100 PCIe", 80, 2.39),
    (G.H100_NVL, "H100 NVL", 94, 2.79),
    (G.L40, "L40", 48, 0.99),
    (G.B200, "B200", 180, 5.99),
    (G.GEFORCE_RTX_3080_TI, "RTX 3080 Ti", 12, 0.20),
    (G.RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION, "RTX PRO 6000 WK", 96, 1.69),
    (G.GEFORCE_RTX_3080, "RTX 3080", 10, 0.17),
    (G.GEFORCE_RTX_3070, "RTX 3070", 8, 0.13),
    (G.AMD_INSTINCT_MI300X_OAM, "MI300X", 192, 2.49),
    (G.GEFORCE_RTX_4080_SUPER, "RTX 4080 SUPER", 16, 0.30),
    (G.TESLA_V100_PCIE_16GB, "Tesla V100", 16, 0.29),
    (G.TESLA_V100_SXM2_32GB, "V100 SXM2 32GB", 32, 0.39),
    (G.RTX_5000_ADA_GENERATION, "RTX 5000 Ada", 32, 0.45),
    (G.GEFORCE_RTX_4070_TI, "RTX 4070 Ti", 12, 0.22),
    (G.RTX_4000_SFF_ADA_GENERATION, "RTX 4000 Ada SFF", 20, 0.26),
    (G.GEFORCE_RTX_3090_TI, "RTX 3090 Ti", 24, 0.27),
    (G.RTX_A2000, "RTX A2000", 12, 0.12),
    (G.GEFORCE_RTX_4080, "RTX 4080", 16, 0.28),
    (G.A30, "A30", 24, 0.22),
    (G.GEFORCE_RTX_5080, "RTX 5080", 16, 0.35),
    (G.TESLA_V100_FHHL_16GB, "V100 FHHL", 16, 0.29),
    (G.H200_NVL, "H200 NVL", 141, 3.39),
    (G.TESLA_V100_SXM2_16GB, "V100 SXM2", 16, 0.29),
    (G.RTX_PRO_6000_BLACKWELL_MAX_Q_WORKSTATION_EDITION, "RTX PRO 6000 MaxQ", 96, 1.59),
    (G.A5000_ADA, "A5000 Ada", 32, 0.45),
    (G.TESLA_V100_PCIE_32GB, "V100 PCIe 32GB", 32, 0.35),
    (G.TESLA_T4, "Tesla T4", 16, 0.14),
    (G.RTX_A30, "RTX A30", 24, 0.22),
]
GPUS: dict[str, GpuOffer] = {g.value: GpuOffer(g.value, name, mem, p) for g, name, mem, p in _GPUS}
"""Each type once, by the one id v2's catalog names it by."""
ALIASES: dict[str, str] = {
    G.RTX_A4500_DOUBLE_SPACE: G.RTX_A4500,
    G.A30_DOUBLE_SPACE: G.A30,
    G.GEFORCE_RTX_3080TI: G.GEFORCE_RTX_3080_TI,
}
"""Other spellings v1's reference accepts for a type (a doubled space, "3080TI"): the
same offer, never listed again."""

C = CpuFlavorId
CPUS: dict[str, CpuOffer] = {
    c.value: CpuOffer(c.value, name, mem, price)
    for c, name, mem, price in [
        (C.CPU3C, "Compute-Optimized (3rd gen)", 2, 0.030),
        (C.CPU3G, "General Purpose (3rd gen)", 4, 0.040),
        (C.CPU3M, "Memory-Optimized (3rd gen)", 8, 0.050),
        (C.CPU5C, "Compute-Optimized (5th gen)", 2, 0.035),
        (C.CPU5G, "General Purpose (5th gen)", 4, 0.045),
        (C.CPU5M, "Memory-Optimized (5th gen)", 8, 0.055),
    ]
}

D = DataCenterId
DATA_CENTERS: dict[str, DataCenterInfo] = {
    d.value: DataCenterInfo(d.value, location, country)
    for d, location, country in [
        (D.EU_RO_1, "Romania", "RO"),
        (D.CA_MTL_1, "Canada (Montreal)", "CA"),
        (D.EU_SE_1, "Sweden", "SE"),
        (D.US_IL_1, "United States (Illinois)", "US"),
        (D.EUR_IS_1, "Iceland", "IS"),
        (D.EU_CZ_1, "Czech Republic", "CZ"),
        (D.US_TX_3, "United States (Texas)", "US"),
        (D.EUR_IS_2, "Iceland", "IS"),
        (D.US_KS_2, "United States (Kansas)", "US"),
        (D.US_GA_2, "United States (Georgia)", "US"),
        (D.US_WA_1, "United States (Washington)", "US"),
        (D.US_TX_1, "United States (Texas)", "US"),
        (D.CA_MTL_3, "Canada (Montreal)", "CA"),
        (D.EU_NL_1, "Netherlands", "NL"),
        (D.US_TX_4, "United States (Texas)", "US"),
        (D.US_CA_2, "United States (California)", "US"),
        (D.US_NC_1, "United States (North Carolina)", "US"),
        (D.OC_AU_1, "Australia", "AU"),
        (D.US_DE_1, "United States (Delaware)", "US"),
        (D.EUR_IS_3, "Iceland", "IS"),
        (D.CA_MTL_2, "Canada (Montreal)", "CA"),
        (D.AP_JP_1, "Japan", "JP"),
        (D.EUR_NO_1, "Norway", "NO"),
        (D.EU_FR_1, "France", "FR"),
        (D.US_KS_3, "United States (Kansas)", "US"),
        (D.US_GA_1, "United States (Georgia)", "US"),
    ]
}


def gpu(gpu_type_id: str) -> GpuOffer:
    """The offer for a GPU type (or an alias of one); the input models only let known
    ids through."""
    return GPUS[ALIASES.get(gpu_type_id, gpu_type_id)]


def cpu(flavor_id: str) -> CpuOffer:
    return CPUS[flavor_id]
