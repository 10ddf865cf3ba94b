#!/usr/bin/env python3
"""Turns golden vectors into libFuzzer seeds.

  fuzz-seeds.py VECTORS_DIR OUT_DIR        protocol v1 vectors, in the input layout of
                                           Tests/Fuzz/Targets/ProtocolFuzz.swift
  fuzz-seeds.py --camera BRAND.json OUT_DIR  a camera brand's from-camera vectors, as raw bytes
"""
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


def protocol_seeds(vectors_dir, out):
    count = 0
    for path in sorted(pathlib.Path(vectors_dir).glob("*.json")):
        for vector in json.loads(path.read_text())["vectors"]:
            (out / f"{path.stem}-{vector['name']}").write_bytes(seed(vector))
            count += 1
    return count


def camera_seeds(path, out):
    count = 0
    for index, vector in enumerate(json.loads(pathlib.Path(path).read_text())["vectors"]):
        if vector["direction"] == "from-camera":
            (out / f"vector-{index}").write_bytes(bytes.fromhex(vector["hex"].replace(" ", "")))
            count += 1
    return count


def main(arguments):
    if arguments[0] == "--camera":
        source, out_dir = arguments[1], arguments[2]
        out = pathlib.Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        count = camera_seeds(source, out)
    else:
        source, out_dir = arguments[0], arguments[1]
        out = pathlib.Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        count = protocol_seeds(source, out)
    print(f"fuzz-seeds: {count} seeds from {source}")


if __name__ == "__main__":
    main(sys.argv[1:])
