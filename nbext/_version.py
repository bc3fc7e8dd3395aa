"""nbext's version, in a module of its own: the local service and the kernels that join it
compare it without importing the package's face (which loads the client)."""

__version__ = "0.1.0"
