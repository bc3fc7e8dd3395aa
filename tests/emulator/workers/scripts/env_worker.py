"""A worker that shows everything it was given: its environment, printed and returned.

This is what a careless or hostile script does with secrets it inherits; the emulator
must give it none (docs/workers.md, "The worker's environment").
"""

import json
import os

import runpod

print("environment at start: " + json.dumps(dict(os.environ), sort_keys=True), flush=True)


def handler(job):
    print("environment in a job: " + json.dumps(dict(os.environ), sort_keys=True), flush=True)
    return dict(os.environ)


runpod.serverless.start({"handler": handler})
