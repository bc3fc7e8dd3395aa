"""What "the guide reads the same" means, in one place for every front end (issue 25).

A guide read in JupyterLab, Notebook 7, JupyterLab without the widget manager, after save
and reopen, in nbconvert's HTML and in a terminal IPython must show a reader the same key
facts under the same cells: a job's final state and output, the streamed text, a
map's counts, the tables' rows, and each picture and player. ``KEY_TEXT`` lists them
per guide, by a piece of each cell's source; every front end is checked against the same
list, so a fact missing in one of them fails there and names the cell.

What must never show: a widget's repr or a renderer's failure where a panel should be
(``UNREADABLE``), raw HTML in a terminal (``RAW_HTML``), and, in a page, an output that
shows nothing at all (``BLANK_OUTPUTS``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

GUIDES = ("01-quickstart.ipynb", "07-images-and-audio.ipynb", "08-chat-with-an-llm.ipynb")

KEY_TEXT: dict[str, dict[str, tuple[str, ...]]] = {
    "01-quickstart.ipynb": {
        "%load_ext nbext": ("local service",),
        "%%runpod_job echo -o reply": ("COMPLETED", "hello from my first job"),
        "print(reply)": ("'hello from my first job'",),
        "%%runpod_job stream-text --stream": ("COMPLETED", "so an idle endpoint costs nothing."),
        "%runpod health echo": ("echo health", "completed"),
        "%runpod templates -o templates": ("text-to-speech", "showing 7 of 15 columns"),
        "%runpod help": ("logout", "billing"),
        'client.endpoint("echo").run_sync': (
            "COMPLETED {'question': 'what is 6 x 7?', 'answer': 42}",
        ),
    },
    "07-images-and-audio.ipynb": {
        "%%runpod_job image-gen -o art": ("COMPLETED", "PNG 512×512"),
        "found = nbext.media.find(art)": ("images[0]", "PNG 512×512"),
        "print(picture.mime": ("image/png 512 × 512",),
        "%runpod map image-gen prompts": ("6/6", "COMPLETED 6", "an alien planet"),
        'sweep[["prompt"': ("an alien planet", "COMPLETED"),
        "%%runpod_job image-gen --stream": ("COMPLETED", '"step": 12'),
        "print(len(steps)": ("12 chunks", "PNG 512×512"),
        "%%runpod_job text-to-speech": ("COMPLETED", "WAV 5.8 s"),
        "nbext.media.find(speech)": ("WAV 5.8 s",),
    },
    "08-chat-with-an-llm.ipynb": {
        "%%runpod_chat llm --system": ("COMPLETED", "A demo answer from nbext's word model"),
        "-o short_answer": ("COMPLETED", "A demo answer from nbext's word model"),
        "len(short_answer.split())": ("True",),
        "print(list(history": ("['system', 'user', 'assistant', 'user', 'assistant']",),
        "model = llm.models.list()": ("nbext-demo-word-model",),
        "print(answer.choices": ("length 30",),
        "runs = run_many": ("4/4", "COMPLETED 4", "What is a seed?"),
        'print((runs["state"]': ("True [24, 24, 24, 24]",),
    },
}
"""Per guide: a piece of a cell's source (found in exactly one cell) -> what its output
must show, in every front end."""

MEDIA: dict[str, dict[str, str]] = {
    "07-images-and-audio.ipynb": {
        "%%runpod_job image-gen -o art": "img",
        "found = nbext.media.find(art)": "img",
        "thumbnail = picture": "img",
        "%%runpod_job text-to-speech": "audio",
        "nbext.media.find(speech)": "audio",
    },
}
"""Per guide: cells whose output must hold a picture or a player (pages only)."""

UNREADABLE = re.compile(
    r"Could not render content|Error displaying widget|Loading widget|"
    r"\b(?:VBox|HBox|Box|Output|Button|HTML|Label|IntProgress|FloatProgress)\("
)
"""A widget's ``text/plain`` repr, or a front end's failure to draw a widget."""

RAW_HTML = re.compile(r"<(?:div|span|table|style|script|details|pre)\b", re.IGNORECASE)
"""HTML markup printed as text (a terminal shows ``text/plain`` only)."""

BLANK_OUTPUTS = """(root) => {
    const blank = [];
    const cells = document.querySelectorAll(`${root} .jp-Cell`);
    cells.forEach((cell, index) => {
        for (const output of cell.querySelectorAll('.jp-OutputArea-output')) {
            const media = output.querySelector('img, svg, audio, video, canvas');
            const tall = output.getBoundingClientRect().height > 8;
            if (tall && !media && !output.innerText.trim()) blank.push(index);
        }
    });
    return blank;
}"""
"""The indexes of cells with an output that takes room on the page but shows neither
text nor media (an emptied output, such as a Cancel button's once the job ended, takes
none and is not a blank)."""


def code_sources(path: Path) -> list[str]:
    """Each cell's source, by index, with Markdown cells as "" (their prose quotes code)."""
    cells = nbformat.read(path, as_version=4).cells
    return [cell.source if cell.cell_type == "code" else "" for cell in cells]


def cell_of(sources: list[str], piece: str) -> int:
    """The index of the one cell whose source holds ``piece``."""
    found = [index for index, source in enumerate(sources) if piece in source]
    assert len(found) == 1, f"{piece!r} is in cells {found}, not in exactly one"
    return found[0]


def missing_text(guide: str, sources: list[str], shown: dict[int, str]) -> list[str]:
    """Each key fact of ``guide`` that a cell's shown output (by index) lacks."""
    missing = []
    for piece, texts in KEY_TEXT[guide].items():
        output = shown.get(cell_of(sources, piece), "")
        missing += [f"{piece!r} lacks {text!r}" for text in texts if text not in output]
    return missing
