"""A worker in the shape of the service's vLLM worker: it reads ``openai_route``.

Without ``stream`` it yields one OpenAI object; with it, strings that are already
Server-Sent Events, two events to a string, ending with ``data: [DONE]``.
"""

import json
import time

import runpod

MODEL = "tiny-echo-model"


def event(value):
    return f"data: {json.dumps(value)}\n\n"


async def handler(job):
    route = job["input"].get("openai_route")
    body = job["input"].get("openai_input") or {}
    if route == "/v1/models":
        yield {
            "object": "list",
            "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "tests"}],
        }
        return
    if route != "/v1/chat/completions":
        yield {
            "error": {
                "message": f"no route {route}",
                "type": "BadRequestError",
                "param": None,
                "code": 404,
            }
        }
        return
    if not body.get("messages"):
        yield {
            "object": "error",
            "message": "messages is required",
            "type": "BadRequestError",
            "param": "messages",
            "code": 400,
        }
        return
    words = body["messages"][-1]["content"].split()
    created = int(time.time())
    if not body.get("stream"):
        yield {
            "id": "chatcmpl-w",
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": " ".join(reversed(words))},
                }
            ],
            "usage": {
                "prompt_tokens": len(words),
                "completion_tokens": len(words),
                "total_tokens": 2 * len(words),
            },
        }
        return
    pieces = [{"role": "assistant", "content": ""}] + [
        {"content": (" " if i else "") + w} for i, w in enumerate(reversed(words))
    ]
    pieces.append({})
    events = [
        event(
            {
                "id": "chatcmpl-w",
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [{"index": 0, "delta": d, "finish_reason": "stop" if not d else None}],
            }
        )
        for d in pieces
    ] + ["data: [DONE]\n\n"]
    for i in range(0, len(events), 2):
        yield "".join(events[i : i + 2])


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
