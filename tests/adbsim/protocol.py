"""The adb transport protocol, device side: message framing, shell v2 packets, sync requests.

A message is a 24-byte little-endian header ``command, arg0, arg1, data_length, data_check, magic`` with
``magic = command ^ 0xFFFFFFFF`` and ``data_check`` the byte sum of the payload (ignored by peers of
protocol version >= 0x01000001, still sent here), followed by the payload (AOSP
``system/core/adb/protocol.txt``). Shell v2 packets are ``id:u8, length:u32le, data`` with ids 0 stdin,
1 stdout, 2 stderr, 3 exit, 4 close-stdin, 5 window-size.
"""

from __future__ import annotations

import socket
import struct


def _cmd(name: bytes) -> int:
    return struct.unpack("<I", name)[0]


A_CNXN = _cmd(b"CNXN")
A_AUTH = _cmd(b"AUTH")
A_OPEN = _cmd(b"OPEN")
A_OKAY = _cmd(b"OKAY")
A_CLSE = _cmd(b"CLSE")
A_WRTE = _cmd(b"WRTE")
A_VERSION = 0x01000001
MAX_PAYLOAD = 256 * 1024
HEADER = struct.Struct("<6I")

SHELL_STDIN, SHELL_STDOUT, SHELL_STDERR, SHELL_EXIT = 0, 1, 2, 3


def pack(command: int, arg0: int, arg1: int, data: bytes = b"") -> bytes:
    """One framed message."""
    check = sum(data) & 0xFFFFFFFF
    return HEADER.pack(command, arg0, arg1, len(data), check, command ^ 0xFFFFFFFF) + data


def _read_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("peer closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(sock: socket.socket) -> tuple[int, int, int, bytes]:
    """``(command, arg0, arg1, payload)``.

    Raises:
        ConnectionError: the peer closed, or the header's magic is wrong.
    """
    command, arg0, arg1, length, _check, magic = HEADER.unpack(_read_exact(sock, HEADER.size))
    if magic != command ^ 0xFFFFFFFF:
        raise ConnectionError(f"bad magic in header of command {command:#x}")
    return command, arg0, arg1, _read_exact(sock, length) if length else b""


def shell_packet(kind: int, data: bytes) -> bytes:
    """One shell v2 packet."""
    return struct.pack("<BI", kind, len(data)) + data


def sync_reply(tag: bytes, payload: bytes = b"", *, arg: int | None = None) -> bytes:
    """A sync reply: ``tag + u32 (length of payload, or arg) + payload``."""
    return tag + struct.pack("<I", len(payload) if arg is None else arg) + payload
