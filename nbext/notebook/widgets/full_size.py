"""The live "show full size" control under a job whose pictures the notebook keeps small.

Past the media limits a saved notebook keeps a thumbnail (or a placeholder) of a large
picture, and its static output says how to get the full file from Python. While the
kernel that ran the job lives, the full picture is still in its memory: this control
shows it on demand, from that memory (nothing is fetched again), in a widget whose
state a saved notebook does not keep. Only "keep in the notebook" writes the full
pictures into the cell's saved output, replacing the control: the user asked for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from nbext import media

from ..ipython import Handle, show_updatable
from ..static import Rendering, reduced_media
from .plain import PlainTextForm

OFFERED = True
"""Whether jobs offer the control (``RunpodMagics.media_full_size_control`` sets it)."""


class FullSizeControl(PlainTextForm, widgets.VBox):  # type: ignore[misc]
    """One "show full size" button per picture kept small; the full picture below it."""

    def __init__(self, items: Sequence[media.Media]) -> None:
        self.items = list(items)
        self.handle: Handle | None = None
        """The control's own output, replaced by the full pictures on "keep"."""
        self.shown: list[bool] = [False] * len(self.items)
        self.kept = False
        self.buttons = [
            widgets.Button(
                description=_label("show", item),
                tooltip=f"{item.label}: {item.describe()}, from the kernel's memory",
                icon="expand",
                layout=widgets.Layout(width="auto"),
            )
            for item in self.items
        ]
        self.views = [widgets.HTML(layout=widgets.Layout(display="none")) for _ in self.items]
        self.keep_button = widgets.Button(
            description="keep full size in the notebook",
            tooltip="store the pictures shown at full size in the saved notebook",
            icon="save",
            layout=widgets.Layout(width="auto", display="none"),
        )
        for index, button in enumerate(self.buttons):
            button.on_click(lambda _button, index=index: self.toggle(index))
        self.keep_button.on_click(lambda _button: self.keep())
        rows: list[widgets.Widget] = []
        for button, view in zip(self.buttons, self.views, strict=True):
            rows += [button, view]
        # flex-start: each button as wide as its words, not the width of the cell
        super().__init__([*rows, self.keep_button], layout=widgets.Layout(align_items="flex-start"))
        self.add_class("nbext-full-size")

    def toggle(self, index: int) -> None:
        """Show the full picture ``index`` (or hide it again: it leaves the page's memory)."""
        if self.kept:
            return
        item, view, button = self.items[index], self.views[index], self.buttons[index]
        self.shown[index] = not self.shown[index]
        if self.shown[index]:
            view.value = media.full_size_html(item)
            view.layout.display = None
            button.description, button.icon = _label("hide", item), "compress"
        else:
            view.value = ""
            view.layout.display = "none"
            button.description, button.icon = _label("show", item), "expand"
        self.keep_button.layout.display = None if any(self.shown) else "none"

    def keep(self) -> None:
        """Store the pictures shown at full size in the saved notebook, in place of the
        control (which then closes: there is nothing left to ask)."""
        kept = [item for item, shown in zip(self.items, self.shown, strict=True) if shown]
        if self.kept or not kept:
            return
        self.kept = True
        if self.handle is not None:
            self.handle.update(kept_rendering(kept))
        self.close()

    def plain_text(self) -> str:
        what = ", ".join(f"{item.label} ({item.describe()})" for item in self.items)
        return (
            f"kept small in the notebook: {what}; while the kernel that ran the job lives, "
            "this control's buttons show them at full size"
        )

    def __repr__(self) -> str:
        return f"FullSizeControl({', '.join(item.label for item in self.items)})"


def _label(verb: str, item: media.Media) -> str:
    """``show full size: images[0]``; a sound or a video is shown "in full" (its player)."""
    what = "full size" if item.kind == "image" else "in full"
    return f"{verb} {what}: {item.label}"


def kept_rendering(items: Sequence[media.Media]) -> Rendering:
    """The full pictures as the saved notebook keeps them once the user asked to."""
    body = "".join(media.full_size_html(item) for item in items)
    html = (
        '<div class="nbext-media nbext-full-size-kept" style="display:flex;flex-wrap:wrap;'
        f'gap:8px;align-items:flex-start">{body}</div>'
    )
    labels = ", ".join(item.label for item in items)
    return Rendering(html, f"full size kept in the notebook: {labels}")


def offer_full_size(output: Any) -> FullSizeControl | None:
    """Show the control under a job's panel when its output has pictures the saved
    notebook keeps small; None (nothing shown) when it has none or the control is off."""
    items = reduced_media(output) if OFFERED else []
    if not items:
        return None
    control = FullSizeControl(items)
    control.handle = show_updatable(control)
    return control
