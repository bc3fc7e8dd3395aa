"""Each request goes to its own URL, query included: a job call's query from its
parameters, a management call's from its path."""

from __future__ import annotations

import httpx

from nbext import Client

KEY = "rpa_URLS0000000000000000000000000000000000000"


def answer(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/pods"):
        return httpx.Response(200, json={"pods": []})
    if request.url.path.endswith("/health"):
        return httpx.Response(200, json={"jobs": {}, "workers": {}})
    return httpx.Response(200, json={"id": "j1", "status": "COMPLETED", "output": 1})


def test_requests_keep_their_own_url_and_query_when_urls_are_reused() -> None:
    sent: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return answer(request)

    with Client(
        KEY,
        serverless_url="http://svc.test/v2",
        base_url="http://rest.test/v2",
        transport=httpx.MockTransport(record),
    ) as client:
        echo, other = client.endpoint("echo"), client.endpoint("other")
        echo.run_sync({"i": 1}, wait=2)
        echo.run_sync({"i": 2}, wait=2)
        echo.run_sync({"i": 3}, wait=3)
        other.run_sync({"i": 4}, wait=2)
        echo.job("a").status()
        echo.job("b").status()
        echo.health()
        for k in range(20):
            echo.job(f"j{k}").status()
        echo.run_sync({"i": 5}, wait=2)
        client.pods.list()  # a management call carries its query in its path
        client.pods.list(include_cluster_pods=True)
    assert sent[-2:] == [
        "http://rest.test/v2/pods",
        "http://rest.test/v2/pods?includeClusterPods=true",
    ]
    del sent[-2:]
    assert sent[:7] == [
        "http://svc.test/v2/echo/runsync?wait=2000",
        "http://svc.test/v2/echo/runsync?wait=2000",
        "http://svc.test/v2/echo/runsync?wait=3000",
        "http://svc.test/v2/other/runsync?wait=2000",
        "http://svc.test/v2/echo/status/a",
        "http://svc.test/v2/echo/status/b",
        "http://svc.test/v2/echo/health",
    ]
    assert sent[7:-1] == [f"http://svc.test/v2/echo/status/j{k}" for k in range(20)]
    assert sent[-1] == "http://svc.test/v2/echo/runsync?wait=2000"
