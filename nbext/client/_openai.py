"""``endpoint.openai()``: the official ``openai`` package, set up for one endpoint.

An LLM endpoint answers OpenAI's API at ``{serverless_url}/{endpoint_id}/openai/v1``
(docs/openai.md); a load-balancing one whose server speaks it (vLLM's, say) at its
own ``{base}/v1``. Users already know the ``openai`` package, and it already handles
OpenAI's shapes, streaming and errors well, so nbext writes no OpenAI client of its own:
it hands back the package's client with the URL, the key and a timeout from this
client's settings. The package is an extra (``nbext[llm]``), imported only here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._config import ClientConfig

if TYPE_CHECKING:
    import openai

EXTRA = "nbext[llm]"


class MissingExtra(ImportError):
    """A feature needs a package that an extra of nbext installs."""


def openai_base_url(serverless_url: str, endpoint_id: str) -> str:
    """Where an endpoint's OpenAI-compatible routes are."""
    return f"{serverless_url.rstrip('/')}/{endpoint_id}/openai/v1"


def _package() -> Any:
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise MissingExtra(
            f"endpoint.openai() needs the openai package: pip install '{EXTRA}'"
        ) from None


@dataclass(frozen=True)
class OpenAIPlan:
    """What an endpoint's ``openai()`` is made of, once its record was read: the
    load-balancing base (None: a queue endpoint), the timeout, the caller's options."""

    base: str | None
    timeout: float
    options: dict[str, Any]


def _settings(config: ClientConfig, url: str, plan: OpenAIPlan) -> dict[str, Any]:
    assert config.api_key is not None  # a client is never made without one
    made = {"base_url": url, "api_key": config.api_key.reveal(), "timeout": plan.timeout}
    return {**made, **plan.options}


def sync_openai(config: ClientConfig, url: str, plan: OpenAIPlan) -> openai.OpenAI:
    """An ``openai.OpenAI`` on ``url``; the plan's options go to its constructor."""
    made: openai.OpenAI = _package().OpenAI(**_settings(config, url, plan))
    return made


def async_openai(config: ClientConfig, url: str, plan: OpenAIPlan) -> openai.AsyncOpenAI:
    """An ``openai.AsyncOpenAI`` on ``url``; the plan's options go to its constructor."""
    made: openai.AsyncOpenAI = _package().AsyncOpenAI(**_settings(config, url, plan))
    return made
