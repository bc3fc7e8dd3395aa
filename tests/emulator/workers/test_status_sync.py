"""``/status-sync/{id}?wait=``, as the JS SDK's runSync and statusSync call it."""

from __future__ import annotations

import time

from .conftest import Served


def test_status_sync_waits_for_the_end_and_answers_the_status_shape(served: Served) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="js", workers={"min": 1, "max": 1})
    job = served.run(ep, {"x": 7})
    deadline = time.monotonic() + 60
    while True:  # the JS SDK's loop: ask again while the job has not ended
        body = served.http.get(f"/v2/{ep}/status-sync/{job}", params={"wait": 2000}).json()
        if body["status"] == "COMPLETED" or time.monotonic() > deadline:
            break
        assert body["status"] in ("IN_QUEUE", "IN_PROGRESS") and body["id"] == job
    assert set(body) == {"id", "status", "delayTime", "executionTime", "output", "workerId"}
    assert body["output"]["echo"] == {"x": 7}
    bad = served.http.get(f"/v2/{ep}/status-sync/{job}", params={"wait": "soon"})
    assert bad.status_code == 400 and "wait must be an integer" in bad.json()["error"]
    missing = served.http.get(f"/v2/{ep}/status-sync/no-such-job")
    assert missing.status_code == 404
