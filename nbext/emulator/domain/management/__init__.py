"""The management interfaces' behaviour (``/v1`` and ``/v2``): resources, rules, billing.

Framework-free like the rest of the domain; ``Management`` is the entry point.
"""

from .facade import Management

__all__ = ["Management"]
