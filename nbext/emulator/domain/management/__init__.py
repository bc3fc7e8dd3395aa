"""The management interfaces' behaviour (``/v1`` and ``/v2``), framework-free. An area
importing a sibling (``from . import catalog``) must not import the façade, which imports
every area (docs/architecture.md#management-in-the-emulator)."""
