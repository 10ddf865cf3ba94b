"""The anchor of `make bench-bluez`: the same requests as the project's client, made by bleak.

bleak (PyPI) is a widely used BLE client; on Linux it speaks to BlueZ over D-Bus (dbus-fast),
on one asyncio thread. This script connects to the simulated module behind the fake
bluetoothd, says hello, then times `--requests` setting reads exactly as the Swift benchmark
does: one WriteValue (write without response) of the Command characteristic out, one
notification of the Event characteristic back. Packets are built and read by the protocol's
independent Python implementation (Protocol/tools/make_vectors.py).

With NOTIFY `acquire`, notifications come on the socket of BlueZ's AcquireNotify (bleak's
`use_start_notify=False`) instead of StartNotify's PropertiesChanged signals, bleak's default;
bleak writes with WriteValue either way.

Prints one JSON line: round-trip samples (ms) and the process's CPU time over the timed requests.

Usage: python bleak-client.py ADDRESS REPO_ROOT REQUESTS WARMUP [start|acquire]  (DBUS_SYSTEM_BUS_ADDRESS set)
"""

import asyncio
import json
import sys
import time

from bleak import BleakClient, BleakScanner

ADDRESS, ROOT, REQUESTS, WARMUP = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
NOTIFY = sys.argv[5] if len(sys.argv) > 5 else "start"
assert NOTIFY in ("start", "acquire"), f"NOTIFY is start or acquire, not {NOTIFY}"
sys.path.insert(0, f"{ROOT}/Protocol/tools")
import make_vectors as protocol  # noqa: E402

COMMAND = "7a4e0002-c3d2-4f1b-8e5a-2b9d6f0c1e37"
EVENT = "7a4e0003-c3d2-4f1b-8e5a-2b9d6f0c1e37"
MTU = 247


async def main():
    device = await BleakScanner.find_device_by_address(ADDRESS, timeout=20)
    assert device is not None, f"{ADDRESS} was not found"
    client = BleakClient(device, timeout=20)
    await client.connect()
    receiver = protocol.Receiver(MTU)
    waiting = {}

    def on_event(_, data):
        receiver.feed(bytes(data))
        while receiver.messages:
            message = receiver.messages.pop(0)
            future = waiting.pop(message["id"], None) if message["kind"] == "response" else None
            if future is not None and not future.done():
                future.set_result(message)

    await client.start_notify(EVENT, on_event, bluez={"use_start_notify": NOTIFY == "start"})
    next_id = 0

    async def exchange(op, fields):
        nonlocal next_id
        next_id = next_id % 0xFFFF + 1
        future = asyncio.get_running_loop().create_future()
        waiting[next_id] = future
        message = protocol.encode_message(protocol.req(next_id, op, fields))
        for packet in protocol.frame_packets(message, MTU):
            await client.write_gatt_char(COMMAND, packet, response=False)
        reply = await asyncio.wait_for(future, 5)
        assert reply["status"] == "ok", reply
        return reply

    await exchange("hello", {"minProtocolVersion": 1, "maxProtocolVersion": 1, "clientName": "bleak-bench"})
    read_iso = ("getSetting", {"setting": "iso"})
    for _ in range(WARMUP):
        await exchange(*read_iso)
    samples = []
    cpu_before = time.process_time()
    for _ in range(REQUESTS):
        start = time.perf_counter()
        await exchange(*read_iso)
        samples.append((time.perf_counter() - start) * 1000)
    cpu = time.process_time() - cpu_before
    await client.disconnect()
    print(json.dumps({"samplesMs": samples, "cpuSeconds": cpu}), flush=True)


asyncio.run(main())
