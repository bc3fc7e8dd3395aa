"""The management interface's behaviour (``/v1``): resources, simulation and billing.

Framework-free like the rest of the domain; ``Management`` is the entry point.
"""

from .facade import Management

__all__ = ["Management"]
