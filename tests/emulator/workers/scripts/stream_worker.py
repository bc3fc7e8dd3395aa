"""Generator handlers: a sync one with return_aggregate_stream, chunks gated by files."""

import os
import time

import runpod


def handler(job):
    gate = job["input"].get("gate")
    for i in range(job["input"].get("n", 3)):
        if gate:  # the test lets each chunk go after it saw the previous one
            while not os.path.exists(f"{gate}.{i}"):
                time.sleep(0.01)
        if job["input"].get("fail_at") == i:
            raise RuntimeError("generator broke")
        yield {"i": i}


if __name__ == "__main__":
    runpod.serverless.start(
        {"handler": handler, "return_aggregate_stream": os.environ.get("AGGREGATE") != "0"}
    )
