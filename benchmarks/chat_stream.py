"""Time to first token and tokens per second: ``%%runpod_chat`` against the ``openai``
package, on the same emulator endpoint, in the same run.

    .venv/bin/python benchmarks/chat_stream.py [--rounds 5] [--max-tokens 60]

One emulator served on 127.0.0.1 (real clock) with the demo ``llm`` endpoint at its
default pace (40 tokens a second, as a user meets it). Each round asks the same question
both ways:

- baseline: the official ``openai`` package, ``stream=True``, through the endpoint's
  OpenAI route (``/v2/llm/openai/v1/chat/completions``); first token = the first chunk
  with content, timed by this script;
- nbext: a ``%%runpod_chat llm --new`` cell in a real IPython shell with the extension
  loaded on a connection to the same emulator; its job goes through ``/run`` and the
  client's ``/stream`` long-polls, and the panel redraws at most ten times a second.
  Its figures are the panel's own (``%runpod chat history``).

Printed: the median of each, and nbext's over the baseline's.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import openai
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from nbext.emulator import Emulator, EmulatorServer
from nbext.notebook import Connection, load_ipython_extension

KEY = "rpa_BENCHMARK0000000000000000000000000000000"
QUESTION = "Tell me about a cold start"


def openai_round(client: openai.OpenAI, max_tokens: int) -> tuple[float, float]:
    started = time.monotonic()
    first: float | None = None
    tokens = 0
    stream = client.chat.completions.create(
        model="nbext-demo-word-model",
        messages=[{"role": "user", "content": QUESTION}],
        max_tokens=max_tokens,
        stream=True,
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            tokens += 1
            if first is None:
                first = time.monotonic() - started
    total = time.monotonic() - started
    assert first is not None
    return first, tokens / (total - first)


def chat_round(shell: InteractiveShell, magics: Any, max_tokens: int) -> tuple[float, float]:
    shell.run_cell(f"%%runpod_chat llm --new --max-tokens {max_tokens}\n{QUESTION}").raise_error()
    turn = magics.conversations["llm"].turns[-1]
    return turn.ttft_s, turn.tokens_per_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=60)
    args = parser.parse_args()

    emulator = Emulator(api_key=KEY, rate_limit=False)
    emulator.deploy("llm", endpoint_id="llm")
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.display_pub.publish = lambda *a, **k: None  # no front end: nothing to draw on
    with EmulatorServer(emulator) as server:
        connection = Connection(server=server, environ={}, config_file="/nonexistent")
        magics = load_ipython_extension(shell, connection=connection)
        url = f"{server.serverless_url}/llm/openai/v1"
        results: dict[str, list[tuple[float, float]]] = {"openai": [], "chat": []}
        with openai.OpenAI(base_url=url, api_key=KEY, timeout=60) as client:
            openai_round(client, 5)  # warm both paths once
            chat_round(shell, magics, 5)
            for _ in range(args.rounds):
                results["openai"].append(openai_round(client, args.max_tokens))
                results["chat"].append(chat_round(shell, magics, args.max_tokens))
        connection.close()
    emulator.close()

    def median(name: str, i: int) -> float:
        return statistics.median(r[i] for r in results[name])

    print(f"{args.rounds} rounds, {args.max_tokens} tokens at the demo's 40 tokens/s")
    for label, i, unit in (("time to first token", 0, "ms"), ("tokens per second", 1, "")):
        scale = 1000 if unit else 1
        base, ours = median("openai", i) * scale, median("chat", i) * scale
        print(
            f"{label}: openai package {base:.1f}{unit}, %%runpod_chat {ours:.1f}{unit}, "
            f"ratio {ours / base:.2f}"
        )


if __name__ == "__main__":
    main()
