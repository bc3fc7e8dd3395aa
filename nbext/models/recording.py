"""Recordings: what a client did with a service, as a JSON Lines file (docs/behaviour.md).

The client writes them (``Client.record``) and the emulator serves them (``--replay``);
the two never import each other, so the format lives here. Line 1 is the header, each
next line one call. Long base64 strings go to files named by their digest in a folder
beside the recording, so it stays small enough to read and diff.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

VERSION = 1
MEDIA_MIN_CHARS = 4096
"""Strings at least this long that are base64 (maybe a ``data:`` URI) go to the folder."""
_DATA_URI = re.compile(r"^data:[\w.+-]+/[\w.+-]+(;[\w=.+-]+)*;base64,")
_JOB_KEYS = {"endpoint": str, "inputDigest": str, "status": str, "stream": list, "timeline": list}
KINDS: dict[Any, dict[str, Any]] = {
    "job": _JOB_KEYS,
    "http": {**_JOB_KEYS, "httpStatus": int, "headers": dict},
}
"""Each kind of call, and the keys its line must have: a job (its ``input`` the job's),
or a load-balancing request (its ``input`` ``{"method", "path", "body"}``)."""


class RecordingError(ValueError):
    """A recording that cannot be served: unreadable, a newer format, a damaged line."""


class Recording(NamedTuple):
    header: dict[str, Any]
    calls: list[dict[str, Any]]


def digest(value: Any) -> str:
    """``sha256:...`` of ``value`` as canonical JSON (sorted keys, no spaces): equal inputs,
    however their keys were ordered, have one digest."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def text_of(data: bytes) -> str | dict[str, str]:
    """A request's or an answer's bytes as text when they are UTF-8, else
    ``{"base64": ...}``: exact either way."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def bytes_of(text: str | dict[str, str]) -> bytes:
    """``text_of``'s bytes back."""
    return text.encode() if isinstance(text, str) else base64.b64decode(text["base64"])


def media_dir(path: Path) -> Path:
    """The folder beside ``path`` that holds its media: ``class.jsonl.media``."""
    return path.with_name(path.name + ".media")


def write(path: Path, header: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    """Write the recording at once (a temporary file renamed), so a reader never meets a
    half-written one."""
    lines = [json.dumps({"nbextRecording": VERSION, **header}, ensure_ascii=False)]
    lines += [json.dumps(_compact(call, path), ensure_ascii=False) for call in calls]
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)


def read(path: Path) -> Recording:
    """The recording at ``path``, every line checked before any is served; a
    ``RecordingError`` naming the file and line else."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"recording {path}: cannot be read: {exc}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise RecordingError(f"recording {path}: empty (line 1 should be its header)")
    header = _line(path, 1, lines[0])
    version = header.get("nbextRecording")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordingError(f"recording {path}: line 1 is not an nbext recording's header")
    if version > VERSION:
        raise RecordingError(
            f"recording {path} is format version {version}; this nbext reads {VERSION}: "
            "upgrade nbext to replay it"
        )
    calls = [_call(path, number, line) for number, line in enumerate(lines[1:], start=2)]
    return Recording(header, calls)


def _line(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordingError(
            f"recording {path}, line {number}: not valid JSON ({exc.msg} at column "
            f"{exc.colno}): the file is damaged or was cut short"
        ) from None
    if not isinstance(value, dict):
        raise RecordingError(f"recording {path}, line {number}: not a JSON object")
    return value


def _call(path: Path, number: int, line: str) -> dict[str, Any]:
    call = _line(path, number, line)
    keys = KINDS.get(call.get("kind"))
    if keys is None:
        raise RecordingError(
            f"recording {path}, line {number}: kind {call.get('kind')!r} is not one this "
            f"nbext replays ({', '.join(KINDS)})"
        )
    for key, kind in keys.items():
        if not isinstance(call.get(key), kind):
            raise RecordingError(
                f"recording {path}, line {number}: {key!r} is missing or not a {kind.__name__}"
            )
    try:
        expanded: dict[str, Any] = _expand(call, path)
    except (OSError, ValueError) as exc:
        raise RecordingError(f"recording {path}, line {number}: {exc}") from None
    if digest(expanded.get("input")) != expanded["inputDigest"]:
        raise RecordingError(f"recording {path}, line {number}: input does not match inputDigest")
    return expanded


def _compact(value: Any, path: Path) -> Any:
    if isinstance(value, dict):
        return {k: _compact(v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v, path) for v in value]
    if not isinstance(value, str) or len(value) < MEDIA_MIN_CHARS:
        return value
    prefix = match.group(0) if (match := _DATA_URI.match(value)) else ""
    try:
        data = base64.b64decode(value[len(prefix) :], validate=True)
    except (binascii.Error, ValueError):
        return value
    if prefix + base64.b64encode(data).decode() != value:
        return value  # kept as it is: the folder must give back the very same text
    name = hashlib.sha256(data).hexdigest()
    folder = media_dir(path)
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    return {"$media": f"sha256:{name}", "prefix": prefix}


def _expand(value: Any, path: Path) -> Any:
    if isinstance(value, list):
        return [_expand(v, path) for v in value]
    if not isinstance(value, dict):
        return value
    if "$media" not in value:
        return {k: _expand(v, path) for k, v in value.items()}
    name = str(value["$media"]).removeprefix("sha256:")
    file = media_dir(path) / name
    try:
        data = file.read_bytes()
    except OSError:
        raise ValueError(f"media {file} is missing (keep the folder beside the file)") from None
    if hashlib.sha256(data).hexdigest() != name:
        raise ValueError(f"media {file} does not match its digest")
    return str(value.get("prefix", "")) + base64.b64encode(data).decode()
