"""``endpoint.openai()``: the official ``openai`` package (the extra ``nbext[llm]``, imported
only here), set up with this client's URL, key, timeout and recording hooks (docs/openai.md)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from ._config import ClientConfig

if TYPE_CHECKING:
    import openai

EXTRA = "nbext[llm]"
Hooks = dict[str, list[Callable[..., Any]]]


class MissingExtra(ImportError):
    """A feature needs a package that an extra of nbext installs."""


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


def _settings(
    config: ClientConfig, url: str, plan: OpenAIPlan, http: httpx.Client | httpx.AsyncClient
) -> dict[str, Any]:
    """The constructor's arguments; an ``http_client`` among the options replaces ours
    (its requests are then not recorded)."""
    assert config.api_key is not None  # a client is never made without one
    made = {"base_url": url, "api_key": config.api_key.reveal(), "timeout": plan.timeout}
    return {**made, "http_client": http, **plan.options}


def sync_openai(config: ClientConfig, url: str, plan: OpenAIPlan, hooks: Hooks) -> openai.OpenAI:
    """An ``openai.OpenAI`` on ``url``, its requests going through ``hooks`` (a recording
    keeps them as ``http()``'s); the plan's options go to its constructor."""
    http = httpx.Client(event_hooks=hooks, follow_redirects=True)
    made: openai.OpenAI = _package().OpenAI(**_settings(config, url, plan, http))
    return made


def async_openai(
    config: ClientConfig, url: str, plan: OpenAIPlan, hooks: Hooks
) -> openai.AsyncOpenAI:
    """``sync_openai``, as an ``openai.AsyncOpenAI``."""
    http = httpx.AsyncClient(event_hooks=hooks, follow_redirects=True)
    made: openai.AsyncOpenAI = _package().AsyncOpenAI(**_settings(config, url, plan, http))
    return made
