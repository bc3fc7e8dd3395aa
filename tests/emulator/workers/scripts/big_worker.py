"""A worker whose result, or second streamed chunk (env STREAM=1), is as large as asked."""

import os

import runpod


def plain(job):
    return {"blob": "x" * job["input"]["size"]}


def streamed(job):
    yield "first"
    yield "x" * job["input"]["size"]
    yield "never"


if __name__ == "__main__":
    handler = streamed if os.environ.get("STREAM") == "1" else plain
    runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
