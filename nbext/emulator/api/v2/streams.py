"""Log lines as the reference serves them: Server-Sent Events, resumable by cursor, so a
follower holds no connection open (docs/rest-v2.md#logs)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from ...domain.management.logs import LogLine, select
from ...domain.management.records import moment

RETRY_MS = 1000
"""How long a follower waits before reconnecting for newer lines."""


def sse(request: Request, query: dict[str, Any], lines: list[LogLine]) -> Response:
    """The event stream of the lines ``query`` (source, tail, since) and the cursor select."""
    chosen = select(
        lines,
        source=query.get("source"),
        tail=int(query.get("tail", 100)),
        since=moment("since", query.get("since")),
        after=request.headers.get("last-event-id"),
    )
    parts = [f"retry: {RETRY_MS}\n\n"]
    for line in chosen:
        data = json.dumps(line.wire(), separators=(",", ":"), ensure_ascii=False)
        parts.append(f"id: {line.cursor}\ndata: {data}\n\n")
    return Response(
        "".join(parts),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
