"""The join link of a class poll: an address phones can open, and its QR code (issue #11 point 2)."""

from __future__ import annotations

import segno

from amp.classroom.join import is_loopback, join_url, lan_address, qr_png

Q = "?poll=K7QX2M"


def test_a_network_host_header_is_used_as_it_is() -> None:
    link = join_url(Q, host="192.168.1.20:8501", server_address="0.0.0.0", port=8501, lan="192.168.1.20")
    assert link.url == "http://192.168.1.20:8501/?poll=K7QX2M" and link.reachable
    named = join_url(Q, host="class.example:8501", server_address="0.0.0.0", port=8501, lan=None)
    assert named.url == "http://class.example:8501/?poll=K7QX2M" and named.reachable


def test_a_teacher_on_localhost_gets_the_lan_address_when_the_app_listens_on_the_network() -> None:
    for host in ("127.0.0.1:8501", "localhost:8501", "[::1]:8501"):
        link = join_url(Q, host=host, server_address="0.0.0.0", port=8501, lan="10.0.0.7")
        assert link.url == "http://10.0.0.7:8501/?poll=K7QX2M" and link.reachable, host
    v6 = join_url(Q, host="localhost:9000", server_address="::", port=9000, lan="fd12::5")
    assert v6.url == "http://[fd12::5]:9000/?poll=K7QX2M"


def test_an_app_on_loopback_only_says_how_to_open_it_to_phones() -> None:
    link = join_url(Q, host="127.0.0.1:8501", server_address="127.0.0.1", port=8501, lan="10.0.0.7")
    assert not link.reachable and link.url == "http://127.0.0.1:8501/?poll=K7QX2M"
    assert "AMP_ADDRESS=0.0.0.0" in link.why
    no_net = join_url(Q, host="localhost:8501", server_address="0.0.0.0", port=8501, lan=None)
    assert not no_net.reachable and "no network address" in no_net.why
    assert join_url(Q, host=None, server_address="127.0.0.1", port=8501, lan=None).url == Q


def test_loopback_names() -> None:
    assert all(is_loopback(h) for h in ("localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("10.0.0.7", "class.example", "0.0.0.0", "fd12::5"))


def test_lan_address_is_never_loopback() -> None:
    address = lan_address()
    assert address is None or not is_loopback(address)


def test_the_qr_code_is_a_png_of_exactly_the_url() -> None:
    url = "http://10.0.0.7:8501/?poll=K7QX2M"
    png = qr_png(url)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    expected = segno.make(url, error="m", micro=False)
    width = int.from_bytes(png[16:20], "big")  # IHDR width
    assert width == (expected.symbol_size(scale=10, border=4)[0])
    assert len(qr_png(url, scale=20)) > len(png)
    assert qr_png(url) == png  # deterministic
    assert qr_png(url + "X") != png
