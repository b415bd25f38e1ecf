"""The on-disk format of a saved FAISS index: the FAISS payload, then a JSON header, then a trailer.

A saved index is derived data that the store trusts only when it can prove what it reflects: the
header names the database (its uuid) and the change counter the index was saved at, and carries the
payload's length and CRC32, so a truncated, bit-flipped, foreign or half-written file is detected
and rebuilt from SQLite instead of silently serving wrong results. Files are written to a temporary
name, fsynced and renamed, so readers only ever see a complete file.

Layout: [faiss.write_index payload][header JSON][8-byte little-endian header length][MAGIC]
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
import zlib
from pathlib import Path
from typing import Any

import faiss

__all__ = ["MAGIC", "orphan_temps", "read_index_file", "remove_orphan_temps", "write_index_file"]

logger = logging.getLogger("rbdspy.memory.store")  # reported with the store's messages

MAGIC = b"RBDSPY-FAISS-v1\n"  # 16 bytes
_TRAILER = 8 + len(MAGIC)


# The temporary name write_index_file uses: .<file>.<pid>.<random>.tmp
_TEMP = re.compile(r"^\.(?P<name>index\.[\w-]+\.faiss)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def orphan_temps(directory: Path) -> list[Path]:
    """The temporary files of index saves whose writer died before renaming them (a kill mid-save
    leaves one). A temporary file of a process that is still running is not an orphan: it may be
    saving right now."""
    return sorted(
        path
        for path in directory.glob(".index.*.tmp")
        if (match := _TEMP.match(path.name)) is not None and not _alive(int(match["pid"]))
    )


def remove_orphan_temps(directory: Path) -> list[Path]:
    """Deletes `orphan_temps(directory)` (nothing else would ever remove them); returns them."""
    removed = []
    for path in orphan_temps(directory):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:  # another opener removed it first
            continue
    if removed:
        logger.info("Removed %d temporary file(s) of interrupted index saves in %s.", len(removed), directory)
    return removed


def write_index_file(path: Path, index: faiss.Index, header: dict[str, Any]) -> None:
    """Atomically write `index` to `path` with `header` (plus dim, ntotal, payload length, CRC)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    state = {"len": 0, "crc": 0}
    try:
        with open(tmp, "wb") as f:

            def write(chunk: bytes) -> int:
                state["len"] += len(chunk)
                state["crc"] = zlib.crc32(chunk, state["crc"])
                return f.write(chunk)

            faiss.write_index(index, faiss.PyCallbackIOWriter(write))
            full = {
                **header,
                "dim": index.d,
                "ntotal": index.ntotal,
                "payload_len": state["len"],
                "crc32": state["crc"],
            }
            encoded = json.dumps(full).encode()
            f.write(encoded)
            f.write(len(encoded).to_bytes(8, "little") + MAGIC)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_index_file(path: Path) -> tuple[faiss.Index, dict[str, Any]] | None:
    """(index, header) from `path`; None when the file is missing or fails any check (logged)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size < _TRAILER:
                raise ValueError("file too short")
            f.seek(size - _TRAILER)
            tail = f.read(_TRAILER)
            if tail[8:] != MAGIC:
                raise ValueError("no rbdspy index trailer")
            header_len = int.from_bytes(tail[:8], "little")
            if not 0 < header_len <= size - _TRAILER:
                raise ValueError("bad trailer length")
            f.seek(size - _TRAILER - header_len)
            header = json.loads(f.read(header_len))
            payload_len = int(header["payload_len"])
            if payload_len != size - _TRAILER - header_len:
                raise ValueError("payload length does not match the file size")
            f.seek(0)
            state = {"left": payload_len, "crc": 0}

            def read(n: int) -> bytes:
                chunk = f.read(min(n, state["left"]))
                state["left"] -= len(chunk)
                state["crc"] = zlib.crc32(chunk, state["crc"])
                return chunk

            index = faiss.read_index(faiss.PyCallbackIOReader(read))
            if state["left"] != 0 or state["crc"] != header["crc32"]:
                raise ValueError("payload checksum mismatch")
            if index.ntotal != header["ntotal"] or index.d != header["dim"]:
                raise ValueError("index shape does not match its header")
        return index, header
    except FileNotFoundError:
        return None
    except Exception as exc:  # a damaged derived file is rebuilt, never fatal
        logger.warning("Ignoring unreadable index file %s (%s); it will be rebuilt from SQLite.", path, exc)
        return None
