"""How students' phones reach a class poll: the join URL and its QR code (issue #11 point 2).

A teacher usually opens the app as ``http://127.0.0.1:8501`` or ``localhost``: a link built from
that Host header reaches no phone.  :func:`join_url` picks the address a phone can open — the
Host the teacher's browser used when that is already a network address, else this machine's
LAN address when the app listens beyond loopback — and says when there is none (the app then
listens on loopback only: start it with ``AMP_ADDRESS=0.0.0.0``).  :func:`qr_png` renders the
URL as a QR code locally (``segno``, no external service).
"""

from __future__ import annotations

import io
import ipaddress
import socket
from dataclasses import dataclass

__all__ = ["JoinLink", "is_loopback", "join_url", "lan_address", "qr_png"]

#: Hosts that name this machine to itself only.
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


@dataclass(frozen=True)
class JoinLink:
    """The student URL and whether a phone on the same network can open it (``why`` says why not)."""

    url: str
    reachable: bool
    why: str = ""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, without port) names this machine only."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_host(host: str) -> tuple[str, str]:
    """``("name", ":port")`` of a Host header value (IPv6 in brackets kept whole)."""
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1], host[end + 1 :]
    name, sep, port = host.rpartition(":")
    return (name, sep + port) if sep and port.isdigit() else (host, "")


def join_url(query: str, *, host: str | None, server_address: str | None, port: int,
             lan: str | None) -> JoinLink:
    """The URL a student opens for ``query`` (``?poll=CODE``).

    ``host`` is the Host header of the teacher's request, ``server_address`` the address the app
    listens on (``0.0.0.0``/``::`` = every interface; empty = Streamlit's default, every
    interface), ``port`` its port and ``lan`` this machine's LAN address (:func:`lan_address`).
    """
    if host and not is_loopback(_split_host(host)[0]):
        return JoinLink(f"http://{host}/{query}", True)
    listens_beyond_loopback = not server_address or not is_loopback(server_address)
    if listens_beyond_loopback and lan:
        shown = f"[{lan}]" if ":" in lan else lan
        return JoinLink(f"http://{shown}:{port}/{query}", True)
    local = f"http://{host}/{query}" if host else query
    if not listens_beyond_loopback:
        return JoinLink(local, False, "the app listens on this computer only (loopback); start it with "
                                      "AMP_ADDRESS=0.0.0.0 bash run.sh app so that phones on the same network can join")
    return JoinLink(local, False, "this computer has no network address that phones could reach")


def lan_address() -> str | None:
    """This machine's address on its local network (the source address of a route outwards;
    nothing is sent), or ``None`` when it has none."""
    for family, probe in ((socket.AF_INET, ("10.255.255.255", 1)), (socket.AF_INET6, ("fd00::1", 1))):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect(probe)
                address = str(s.getsockname()[0])
        except OSError:
            continue
        if not is_loopback(address) and not address.startswith(("0.", "::")):
            return address
    return None


def qr_png(url: str, *, scale: int = 10) -> bytes:
    """The QR code of ``url`` as a PNG (error correction M, a 4-module quiet zone), rendered
    locally; ``scale`` pixels per module (10 gives ~330 px for a typical poll link: readable
    from the back of a room when shown at full width on a projector)."""
    import segno  # late: optional dependency (segno, the app extra; the library does not need it)

    buffer = io.BytesIO()
    segno.make(url, error="m", micro=False).save(buffer, kind="png", scale=scale, border=4)
    return buffer.getvalue()
