"""``%runpod gpus``: the catalog as a DataFrame, filtered and sorted, through REST v2."""

from __future__ import annotations

import pandas as pd
import pytest

from nbext.notebook.display.specs import GPUS

from .conftest import Notebook
from .test_job_magic import usage_error


def test_the_catalog_is_a_dataframe_cheapest_first(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("%runpod gpus -o gpus")
    gpus: pd.DataFrame = nb.shell.user_ns["gpus"]
    assert list(gpus.columns[: len(GPUS.names)]) == GPUS.names
    assert len(gpus) > 5 and gpus["id"].is_unique
    assert gpus["name"].is_unique  # each type once: "NVIDIA  A30" is "NVIDIA A30" again
    assert not gpus["id"].str.contains("  ").any()
    assert gpus["secure_usd_hr"].is_monotonic_increasing
    assert str(gpus["memory_gb"].dtype) == "Int64" and (gpus["memory_gb"] > 0).all()
    assert (gpus["serverless_usd_hr"] > gpus["secure_usd_hr"]).all()
    assert (gpus["max_count"] >= 1).all()
    shown = str(nb.displays[-1]["data"]["text/plain"])
    assert "secure_usd_hr" in shown and "pool" not in shown  # the useful few columns
    assert "--all shows every column" in capsys.readouterr().out


def test_filters_by_memory_availability_and_price(nb: Notebook) -> None:
    nb.run("%runpod gpus -o every")
    every: pd.DataFrame = nb.shell.user_ns["every"]
    nb.run("%runpod gpus --min-vram 24 --available -o big")
    big: pd.DataFrame = nb.shell.user_ns["big"]
    assert 0 < len(big) < len(every)
    assert (big["memory_gb"] >= 24).all()
    assert big["availability"].notna().all() and (big["availability"] != "NONE").all()
    assert set(every.loc[every["memory_gb"] >= 24, "id"]) >= set(big["id"])
    nb.run("%runpod gpus --max-price 1.5 -o cheap")
    cheap: pd.DataFrame = nb.shell.user_ns["cheap"]
    cheaper = every[["secure_usd_hr", "community_usd_hr"]].min(axis=1)
    assert 0 < len(cheap) < len(every)
    assert set(cheap["id"]) == set(every.loc[cheaper <= 1.5, "id"])
    nb.run("%runpod gpus --cloud community -o community")
    assert nb.shell.user_ns["community"]["community_usd_hr"].is_monotonic_increasing


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod gpus --min-vram 0", "--min-vram must be more than 0, got 0"),
        ("%runpod gpus --min-vram lots", "--min-vram must be a whole number, got 'lots'"),
        ("%runpod gpus --max-price -1", "--max-price must be more than 0, got -1"),
        ("%runpod gpus --max-price nan", "--max-price must be more than 0, got nan"),
        ("%runpod gpus --cloud moon", "argument --cloud: invalid choice: 'moon'"),
        ("%runpod gpus -o class", "-o 'class': not a valid Python variable name"),
    ],
)
def test_mistakes_are_one_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    assert expected in usage_error(nb, line, capsys)


def test_help_lists_the_new_subcommands(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("%runpod help")
    listing = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in listing]
    assert names[-3:] == ["billing", "gpus", "logs"]  # the account's records come last
    assert names[names.index("local") + 1] == "emulator"  # the local service's two together
    nb.run("%runpod help gpus")
    assert "--min-vram GB" in capsys.readouterr().out
    nb.run("%runpod help logs")
    text = capsys.readouterr().out
    assert text.startswith("usage: %runpod logs") and "--follow" in text and "--stop" in text
