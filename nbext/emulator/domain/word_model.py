"""A bigram word model over ``demo_llm_corpus.txt``: the ``llm`` demo's words
(docs/architecture.md#the-demo-images)."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from functools import cache
from importlib.resources import files

_WORD = re.compile(r"[A-Za-z']+|[.,:]")
_SENTENCE_END = "."


@cache
def _chain() -> tuple[dict[str, Counter[str]], tuple[str, ...]]:
    """Successor counts per word, and the words that start a sentence."""
    text = files(__package__).joinpath("demo_llm_corpus.txt").read_text(encoding="utf-8")
    words = _WORD.findall(text)
    successors: dict[str, Counter[str]] = {}
    starts: list[str] = [words[0]]
    for current, following in itertools.pairwise(words):
        successors.setdefault(current.lower(), Counter())[following] += 1
        if current == _SENTENCE_END and following[0].isupper():
            starts.append(following)
    return successors, tuple(dict.fromkeys(starts))


def topic(prompt: str) -> str | None:
    """The longest word of ``prompt`` that the text knows, to start from (None: none)."""
    successors, _ = _chain()
    known = [w for w in _WORD.findall(prompt) if w.lower() in successors and len(w) > 3]
    return max(known, key=len) if known else None


def sentence(rng: random.Random, temperature: float, start: str | None = None) -> str:
    """One sentence of at most 30 words, begun with ``start`` where the text allows.
    ``temperature`` 0 takes the most frequent successor (ties: the first seen), higher
    flattens the counts as sampling does; a step already taken is avoided while another
    is possible, so a greedy walk does not circle through the same words."""
    successors, starts = _chain()
    word = start if start is not None and start.lower() in successors else rng.choice(starts)
    out = [word[0].upper() + word[1:]]
    taken: set[tuple[str, str]] = set()
    for _ in range(30):
        counts = successors.get(word.lower())
        if not counts:
            break
        fresh = Counter({w: n for w, n in counts.items() if (word, w) not in taken})
        previous, word = word, _pick(fresh or counts, rng, temperature)
        taken.add((previous, word))
        if word == _SENTENCE_END:
            break
        out.append(word)
    return " ".join(out).replace(" ,", ",").replace(" :", ":") + "."


def _pick(counts: Counter[str], rng: random.Random, temperature: float) -> str:
    if temperature <= 0:
        return counts.most_common(1)[0][0]
    words = list(counts)
    weights = [counts[w] ** (1.0 / temperature) for w in words]
    return rng.choices(words, weights=weights)[0]


def text_pieces(text: str) -> list[str]:
    """Word-like pieces (leading white space kept, trailing white space on the last one)
    that join back into ``text`` exactly."""
    return re.findall(r"\s*\S+(?:\s+\Z)?|\s+\Z", text)
