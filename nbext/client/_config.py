"""Where the client's settings come from (docs/behaviour.md#configuration), and how the
API key is kept out of sight."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import ConfigError

DEFAULT_BASE_URL = "https://api.runpod.io/v2"
"""The management interface: REST v2, the service's current one (the OpenAPI's server)."""
DEFAULT_SERVERLESS_URL = "https://api.runpod.ai/v2"
ENV_API_KEY = "RUNPOD_API_KEY"
ENV_BASE_URL = "RUNPOD_REST_BASE_URL"
ENV_SERVERLESS_URL = "RUNPOD_ENDPOINT_BASE_URL"
ENV_SDK_GRAPHQL_URL = "RUNPOD_API_BASE_URL"
"""runpod-python's GraphQL host; nbext uses no GraphQL and never sends anything there."""
DEFAULT_CONFIG_FILE = Path("~/.runpod/config.toml")
DEFAULT_PROFILE = "default"


def mask(key: str) -> str:
    """``rpa_…3F2C``: enough to tell keys apart, never enough to use one; a short key
    shows at most a quarter of itself (docs/behaviour.md#authentication)."""
    if len(key) >= 16:
        return f"{key[:4]}…{key[-4:]}"
    shown = len(key) // 4
    return "…" + (key[-shown:] if shown else "")


class Secret:
    """An API key that prints as its mask: in reprs, f-strings, logs and tracebacks.

    Only ``reveal()`` gives the key, and only the Authorization header calls it.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError("the API key must be a non-empty string")
        self._value = value.strip()

    def reveal(self) -> str:
        return self._value

    @property
    def masked(self) -> str:
        return mask(self._value)

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the key replaced by its mask."""
        return text.replace(self._value, self.masked) if self._value in text else text

    def __repr__(self) -> str:
        return f"Secret({self.masked!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is not pickled, so the key never lands on disk by accident")


@dataclass(frozen=True)
class ClientConfig:
    """The resolved settings, and where the key came from (for ``repr`` and 401 hints)."""

    api_key: Secret | None
    base_url: str
    serverless_url: str
    key_source: str | None = None

    @property
    def masked_key(self) -> str | None:
        return self.api_key.masked if self.api_key else None

    def __repr__(self) -> str:
        return (
            f"ClientConfig(api_key={self.masked_key!r}, key_source={self.key_source!r}, "
            f"base_url={self.base_url!r}, serverless_url={self.serverless_url!r})"
        )


def read_profile(path: Path, profile: str) -> dict[str, Any]:
    """The ``[profile]`` table of a config.toml, or ``{}`` when the file or table is absent."""
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path} could not be read as TOML: {exc}") from None
    table = data.get(profile, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{profile}] must be a table")
    return table


def _url(value: str, what: str) -> str:
    value = value.strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ConfigError(f"{what} must be an http:// or https:// URL, got {value[:80]!r}")
    return value


def _refuse_rest_url_in_sdk_variable(value: str) -> None:
    """Refuse a REST base under the SDK's GraphQL variable (docs/behaviour.md#configuration)."""
    value = value.strip()
    if "://" in value and value.rstrip("/").endswith(("/v1", "/v2")):
        v2 = value.rstrip("/").removesuffix("/v1").removesuffix("/v2") + "/v2"
        raise ConfigError(
            f"{ENV_SDK_GRAPHQL_URL}={value[:80]} looks like a management base URL, but that "
            f"variable is runpod-python's GraphQL host; nbext reads {ENV_BASE_URL}, and "
            f"speaks REST v2: export {ENV_BASE_URL}={v2[:80]}"
        )


def load_config(
    api_key: str | Secret | None = None,
    *,
    base_url: str | None = None,
    serverless_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: str | os.PathLike[str] | None = None,
    profile: str = DEFAULT_PROFILE,
    require_key: bool = False,
) -> ClientConfig:
    """Resolve the settings: arguments, environment, ``~/.runpod/config.toml``, defaults.

    The notebook layer calls this with ``require_key=False`` to decide between the real
    service and a local emulator; ``Client`` calls it with ``require_key=True``.
    """
    env = os.environ if environ is None else environ
    path = Path(config_file) if config_file is not None else DEFAULT_CONFIG_FILE.expanduser()
    file_values: dict[str, Any] | None = None

    def from_file(name: str) -> str | None:
        nonlocal file_values
        if file_values is None:
            file_values = read_profile(path, profile)
        value = file_values.get(name)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{path}: [{profile}] {name} must be a string")
        return value

    key: Secret | None = None
    source: str | None = None
    if isinstance(api_key, Secret):
        key, source = api_key, "argument"
    elif api_key:
        key, source = Secret(api_key), "argument"
    elif env.get(ENV_API_KEY, "").strip():
        key, source = Secret(env[ENV_API_KEY]), ENV_API_KEY
    elif file_key := from_file("api_key"):
        key, source = Secret(file_key), f"{path} [{profile}]"
    if key is None and require_key:
        raise ConfigError(
            f"no API key: pass api_key=..., set {ENV_API_KEY}, or run the service's "
            f"`runpod config` to write {DEFAULT_CONFIG_FILE}; for a local emulator "
            "instead, use `with nbext.local_client() as client:`"
        )

    base = base_url or env.get(ENV_BASE_URL, "").strip()
    if not base:
        _refuse_rest_url_in_sdk_variable(env.get(ENV_SDK_GRAPHQL_URL, ""))
    base = _url(base or from_file("rest_base_url") or DEFAULT_BASE_URL, "base_url")
    if base.endswith("/v1"):
        raise ConfigError(
            f"base_url {base[:80]} is REST v1, which the service retired on 2026-11-15; "
            "nbext speaks REST v2: use the same address ending in /v2"
        )
    serverless = (
        serverless_url
        or env.get(ENV_SERVERLESS_URL, "").strip()
        or from_file("endpoint_base_url")
        or DEFAULT_SERVERLESS_URL
    )
    return ClientConfig(
        api_key=key,
        base_url=base,
        serverless_url=_url(serverless, "serverless_url"),
        key_source=source,
    )
