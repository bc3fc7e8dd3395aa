"""The local service's tests: ``folders`` (tests/conftest.py) gives each its own."""
