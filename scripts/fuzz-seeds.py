#!/usr/bin/env python3
"""Turns the golden vectors into libFuzzer seeds in the input layout of Tests/Fuzz/ProtocolFuzzer.swift."""
import json
import pathlib
import sys


def seed(vector):
    selector = max(0, min(255, (vector["mtu"] - 23) // 2))
    body = bytearray([selector])
    for packet in vector["packets"]:
        raw = bytes.fromhex(packet)
        body += len(raw).to_bytes(2, "big") + raw
    return bytes(body)


def main(vectors_dir, out_dir):
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in sorted(pathlib.Path(vectors_dir).glob("*.json")):
        for vector in json.loads(path.read_text())["vectors"]:
            (out / f"{path.stem}-{vector['name']}").write_bytes(seed(vector))
            count += 1
    print(f"fuzz-seeds: {count} seeds from {vectors_dir}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
