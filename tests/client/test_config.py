"""Configuration: arguments, then the environment, then ~/.runpod/config.toml, then defaults."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from nbext.client import AsyncClient, Client, ConfigError, load_config, mask
from nbext.client._config import (
    DEFAULT_BASE_URL,
    DEFAULT_SERVERLESS_URL,
    REST_V1_BASE_URL,
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
    assert config.management_api == "v2"
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
        '[default]\napi_key = "from-file-key-0000"\nrest_base_url = "http://file/v1"\n'
        'endpoint_base_url = "http://file/v2"\n',
    )
    assert load_config().serverless_url == "http://file/v2"
    assert load_config().base_url == "http://file/v1"
    monkeypatch.setenv("RUNPOD_API_KEY", "from-env-key-00000")
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", "http://env/v2/")
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://env/v1")
    config = load_config()
    assert config.api_key is not None and config.api_key.reveal() == "from-env-key-00000"
    assert config.key_source == "RUNPOD_API_KEY"
    assert config.serverless_url == "http://env/v2" and config.base_url == "http://env/v1"
    config = load_config(
        "from-arg-key-00000", serverless_url="http://arg/v2", base_url="http://arg/v1"
    )
    assert config.api_key is not None and config.api_key.reveal() == "from-arg-key-00000"
    assert (config.serverless_url, config.base_url) == ("http://arg/v2", "http://arg/v1")


def test_the_sdk_graphql_host_variable_never_moves_nbext(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """runpod-python reads RUNPOD_API_BASE_URL as its GraphQL host; nbext has no use for it."""
    for sdk_value in ("https://api.runpod.io", "http://127.0.0.1:9/", "http://proxy/runpod"):
        monkeypatch.setenv("RUNPOD_API_BASE_URL", sdk_value)
        config = load_config("k" * 20)
        assert config.base_url == DEFAULT_BASE_URL
        assert config.serverless_url == DEFAULT_SERVERLESS_URL
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://127.0.0.1:8000/v1")
    assert load_config("k" * 20).base_url == "http://127.0.0.1:8000/v1"


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
    assert "export RUNPOD_REST_BASE_URL=http://127.0.0.1:8000/v1" in message
    with pytest.raises(ConfigError, match="RUNPOD_REST_BASE_URL"):
        Client("k" * 20)
    # said explicitly, nothing is refused: the argument or our own variable wins
    assert load_config("k" * 20, base_url="http://a/v1").base_url == "http://a/v1"
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://b/v1")
    assert load_config("k" * 20).base_url == "http://b/v1"


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


def test_the_management_interface_is_v2_unless_v1_is_asked_for_by_name(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REST v2 whatever the base URL looks like (a path ending in /v1, a trailing slash, a
    prefix, a proxy): only ``management_api`` or ``RUNPOD_MANAGEMENT_API`` choose the
    frozen v1, never a guess from the URL."""
    for url in ("http://127.0.0.1:8000/v1/", "https://proxy.example/runpod", REST_V1_BASE_URL):
        assert load_config("k" * 20, base_url=url).management_api == "v2"
    assert load_config("k" * 20).management_api == "v2"
    v1 = load_config("k" * 20, management_api="v1")
    assert (v1.management_api, v1.base_url) == ("v1", REST_V1_BASE_URL)  # its own default
    assert "management_api='v1'" in repr(v1)
    monkeypatch.setenv("RUNPOD_MANAGEMENT_API", "v1")
    assert load_config("k" * 20, base_url="http://x/v2").management_api == "v1"
    assert load_config("k" * 20, management_api="v2").management_api == "v2"  # argument first
    monkeypatch.setenv("RUNPOD_MANAGEMENT_API", "v3")
    with pytest.raises(ConfigError, match=r"management_api must be 'v2' .* or 'v1', got 'v3'"):
        load_config("k" * 20)
    monkeypatch.delenv("RUNPOD_MANAGEMENT_API")
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
