"""The management interfaces' behaviour (``/v1`` and ``/v2``): resources, rules, billing.

Framework-free like the rest of the domain; ``facade.Management`` is the entry point.
This package's face hands nothing on: an area importing a sibling module
(``from . import catalog``) must not import the façade, which imports every area.
"""
