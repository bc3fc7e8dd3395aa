"""Sending webhooks over HTTP: a small connection pool per receiver, and the opt-in guard.

A pool per receiver, because httpcore scans every connection of a pool as each request
starts or ends: one slow receiver's connections slowed every webhook. The guard
(docs/behaviour.md#webhooks) checks every address the host resolves to, at each attempt.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .domain.webhooks import NotSent, Refused, receiver_of

TIMEOUT = 10.0
"""Seconds a receiver has to connect, take the body and answer (the service's figure)."""
KEEP_ALIVE = 8
"""Idle connections kept per receiver: httpcore scans every idle one once per idle one as
each request starts or ends, which with a few dozen was the emulator's main cost."""
MAX_RECEIVERS = 32
"""Receivers whose connections are kept open; beyond it, idle ones are closed."""

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
"""Cloud metadata services (AWS, GCP and Azure share the first; ECS tasks; AWS over IPv6;
Alibaba Cloud)."""


def forbidden(address: str) -> bool:
    """Whether the guard refuses ``address`` (an IP address as text)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # fe80::1%eth0
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_link_local or ip in METADATA_ADDRESSES


async def guard_webhook(url: str) -> None:
    """``Refused`` when ``url``'s host is, or resolves to, a forbidden address."""
    host = urlsplit(url).hostname or ""
    try:
        addresses = [host] if _is_ip(host) else await _resolve(host)
    except OSError:
        return  # unresolvable: the attempt itself fails, saying so
    for address in addresses:
        if forbidden(address):
            raise Refused(
                f"{host} is {address}, a link-local or cloud metadata address, and the "
                "emulator's webhook guard (--webhook-guard) refuses those"
            )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


async def _resolve(host: str) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class WebhookSender:
    """``send(url, body) -> HTTP status`` for the dispatcher, one pool per receiver."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self._pools: OrderedDict[str, _Pool] = OrderedDict()
        """Receiver -> its pool, least recently used first."""

    async def __call__(self, url: str, body: dict[str, Any]) -> int:
        pool = self._pool(receiver_of(url))
        pool.in_flight += 1
        try:
            response = await pool.client.post(url, json=body)
        except httpx.PoolTimeout as exc:  # never with pool=None; if ever, not an attempt
            raise NotSent(str(exc)) from None
        finally:
            pool.in_flight -= 1
        return response.status_code

    def _pool(self, key: str) -> _Pool:
        pool = self._pools.get(key)
        if pool is not None:
            self._pools.move_to_end(key)
            return pool
        # The pool's wait for a connection has no timeout: the dispatcher never has
        # more attempts in flight to a receiver than the pool has connections.
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(TIMEOUT, pool=None),
            limits=httpx.Limits(
                max_connections=self.concurrency, max_keepalive_connections=KEEP_ALIVE
            ),
        )
        pool = self._pools[key] = _Pool(client)
        for old, old_pool in list(self._pools.items()):
            if len(self._pools) <= MAX_RECEIVERS:
                break
            if old_pool.in_flight == 0 and old != key:
                del self._pools[old]
                asyncio.get_running_loop().create_task(old_pool.client.aclose())
        return pool

    async def aclose(self) -> None:
        pools = list(self._pools.values())
        self._pools.clear()
        for pool in pools:
            await pool.client.aclose()


@dataclass
class _Pool:
    client: httpx.AsyncClient
    in_flight: int = 0
