"""Configuration: arguments, then the environment, then ~/.runpod/config.toml, then defaults."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from nbext.client import AsyncClient, Client, ConfigError, load_config, mask
from nbext.client._config import (
    DEFAULT_BASE_URL,
    DEFAULT_SERVERLESS_URL,
    Secret,
)

ENV_KEYS = (
    "RUNPOD_API_KEY",
    "RUNPOD_API_BASE_URL",
    "RUNPOD_REST_BASE_URL",
    "RUNPOD_ENDPOINT_BASE_URL",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory and environment, so the user's real config never leaks in."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ENV_KEYS:
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def write_config(home: Path, text: str) -> Path:
    path = home / ".runpod" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_are_the_real_service(home: Path) -> None:
    config = load_config("k" * 20)
    assert config.base_url == DEFAULT_BASE_URL == "https://api.runpod.io/v2"
    assert config.serverless_url == DEFAULT_SERVERLESS_URL == "https://api.runpod.ai/v2"
    assert config.key_source == "argument"


def test_the_sdk_config_file_is_read(home: Path) -> None:
    # The service's CLI writes exactly this (runpod/cli/groups/config/functions.py).
    write_config(home, '[default]\napi_key = "rpa_FROMFILE000000000000000000000000000000"\n')
    config = load_config()
    assert config.api_key is not None
    assert config.api_key.reveal() == "rpa_FROMFILE000000000000000000000000000000"
    assert config.key_source is not None and "config.toml [default]" in config.key_source


def test_environment_beats_file_and_arguments_beat_both(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        home,
        '[default]\napi_key = "from-file-key-0000"\nrest_base_url = "http://file/v2"\n'
        'endpoint_base_url = "http://file/v2"\n',
    )
    assert load_config().serverless_url == "http://file/v2"
    assert load_config().base_url == "http://file/v2"
    monkeypatch.setenv("RUNPOD_API_KEY", "from-env-key-00000")
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", "http://env/v2/")
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://env/v2")
    config = load_config()
    assert config.api_key is not None and config.api_key.reveal() == "from-env-key-00000"
    assert config.key_source == "RUNPOD_API_KEY"
    assert config.serverless_url == "http://env/v2" and config.base_url == "http://env/v2"
    config = load_config(
        "from-arg-key-00000", serverless_url="http://arg/v2", base_url="http://arg/v2"
    )
    assert config.api_key is not None and config.api_key.reveal() == "from-arg-key-00000"
    assert (config.serverless_url, config.base_url) == ("http://arg/v2", "http://arg/v2")


def test_the_sdk_graphql_host_variable_never_moves_nbext(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """runpod-python reads RUNPOD_API_BASE_URL as its GraphQL host; nbext has no use for it."""
    for sdk_value in ("https://api.runpod.io", "http://127.0.0.1:9/", "http://proxy/runpod"):
        monkeypatch.setenv("RUNPOD_API_BASE_URL", sdk_value)
        config = load_config("k" * 20)
        assert config.base_url == DEFAULT_BASE_URL
        assert config.serverless_url == DEFAULT_SERVERLESS_URL
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://127.0.0.1:8000/v2")
    assert load_config("k" * 20).base_url == "http://127.0.0.1:8000/v2"


def test_a_rest_url_under_the_sdk_name_is_refused_with_the_right_name(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ignoring it would send the management calls, with the key, to the real service."""
    monkeypatch.setenv("RUNPOD_API_BASE_URL", "http://127.0.0.1:8000/v1/")
    with pytest.raises(ConfigError) as caught:
        load_config("k" * 20)
    message = str(caught.value)
    assert "\n" not in message
    assert "runpod-python's GraphQL host" in message
    assert "export RUNPOD_REST_BASE_URL=http://127.0.0.1:8000/v2" in message  # v2: v1 is retired
    with pytest.raises(ConfigError, match="RUNPOD_REST_BASE_URL"):
        Client("k" * 20)
    # said explicitly, nothing is refused: the argument or our own variable wins
    assert load_config("k" * 20, base_url="http://a/v2").base_url == "http://a/v2"
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://b/v2")
    assert load_config("k" * 20).base_url == "http://b/v2"


def test_other_profiles_and_explicit_files(home: Path) -> None:
    path = write_config(
        home, '[default]\napi_key = "a-default-key-000"\n[work]\napi_key = "a-work-key-0000000"\n'
    )
    config = load_config(config_file=path, profile="work")
    assert config.api_key is not None and config.api_key.reveal() == "a-work-key-0000000"


def test_no_key_anywhere(home: Path) -> None:
    assert load_config().api_key is None  # the notebook layer's "use the emulator" signal
    with pytest.raises(ConfigError, match="RUNPOD_API_KEY"):
        Client()
    with pytest.raises(ConfigError):
        AsyncClient()


def test_a_broken_config_file_is_a_clear_error(home: Path) -> None:
    write_config(home, "[default\napi_key = ")
    with pytest.raises(ConfigError, match="TOML"):
        load_config()
    write_config(home, "[default]\napi_key = 42\n")
    with pytest.raises(ConfigError, match="must be a string"):
        load_config()


def test_urls_are_checked(home: Path) -> None:
    with pytest.raises(ConfigError, match="serverless_url"):
        load_config("k" * 20, serverless_url="api.runpod.ai/v2")


def test_client_reads_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_ENV00000000000000000000000000000000ABCD")
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", "http://127.0.0.1:1/v2")
    with Client() as client:
        assert client.serverless_url == "http://127.0.0.1:1/v2"
        assert client.masked_key == "rpa_…ABCD"
        assert repr(client) == (
            "Client(serverless_url='http://127.0.0.1:1/v2', "
            "base_url='https://api.runpod.io/v2', api_key='rpa_…ABCD')"
        )


def test_a_rest_v1_base_url_is_refused_in_one_line(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The service retired REST v1 on 2026-11-15 and nbext speaks only v2: a base URL
    ending in /v1 (however it is given) is refused, naming the date and the fix; any
    other shape (a trailing slash, a prefix, a proxy) is REST v2's."""
    for url in ("https://proxy.example/runpod", "http://127.0.0.1:8000/v1/rest/"):
        assert load_config("k" * 20, base_url=url).base_url == url.rstrip("/")
    toml = tmp_path / "config.toml"
    toml.write_text('[default]\nrest_base_url = "https://rest.runpod.io/v1"\n')
    ways: list[tuple[dict[str, str], dict[str, Any]]] = [
        ({}, {"base_url": "http://127.0.0.1:8000/v1/"}),
        ({"RUNPOD_REST_BASE_URL": "https://api.runpod.io/v1"}, {}),
        ({}, {"config_file": toml}),
    ]
    for environ, kw in ways:
        with pytest.raises(ConfigError) as info:
            load_config("k" * 20, environ=environ, **kw)
        message = str(info.value)
        assert "REST v1, which the service retired on 2026-11-15" in message
        assert "ending in /v2" in message and "\n" not in message
    monkeypatch.setenv("RUNPOD_API_BASE_URL", "https://api.runpod.io/v2")
    with pytest.raises(
        ConfigError, match=r"export RUNPOD_REST_BASE_URL=https://api\.runpod\.io/v2"
    ):
        load_config("k" * 20)


def test_masks() -> None:
    assert mask("rpa_0123456789ABCDEF0123456789ABCDEF01233F2C") == "rpa_…3F2C"
    assert mask("test-key") == "…ey"  # a short key shows at most a quarter of itself
    assert mask("abc") == "…"
    secret = Secret("rpa_0123456789ABCDEF0123456789ABCDEF01233F2C")
    assert str(secret) == repr(secret) == "Secret('rpa_…3F2C')"
    assert f"{secret}" == "Secret('rpa_…3F2C')"
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    with pytest.raises(ConfigError):
        Secret("  ")
