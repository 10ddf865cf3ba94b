"""GoPro's own Python SDK (open-gopro, pinned in scripts/setup) driving a simulated GoPro.

Run by Tests/FakeBlueZTests/OpenGoProSDKTests.swift with DBUS_SYSTEM_BUS_ADDRESS set to a private
bus where the fake bluetoothd serves the simulated camera, and `bluetoothctl` (Debian's bluez
package, with no bluetoothd started) on PATH: the SDK pairs through it on Linux.

The SDK runs unchanged, over BLE only. Its Wi-Fi side is set aside the way its constructor offers:
`interfaces={BLE}` and, as the Wi-Fi driver it builds regardless, one for a host with no Wi-Fi.

Prints one JSON object a line, {"step": ..., ...}, for the test to read.

Usage: python open_gopro_session.py TARGET [WORKDIR]
  TARGET   the last four characters of the camera's serial number (its name is "GoPro TARGET"),
           or "" for the first GoPro found
  WORKDIR  a folder for the SDK's files (its COHN database, its pexpect log); by default a
           temporary one, removed at the end
"""

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from open_gopro import WirelessGoPro
from open_gopro.models import proto
from open_gopro.models.constants import StatusId, Toggle
from open_gopro.network.wifi import SsidState, WifiController


class NoWifi(WifiController):
    """The Wi-Fi driver of a host without Wi-Fi: no interfaces, and every connection refused."""

    def __init__(self, interface: Optional[str] = None, password: Optional[str] = None) -> None:
        super().__init__(interface, password)

    async def connect(self, ssid: str, password: str, timeout: float = 15) -> bool:
        return False

    async def disconnect(self) -> bool:
        return True

    def current(self) -> tuple[Optional[str], SsidState]:
        return None, SsidState.DISCONNECTED

    def available_interfaces(self) -> list[str]:
        return []

    def power(self, power: bool) -> bool:
        return not power

    @property
    def is_on(self) -> bool:
        return False


def report(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}, default=str), flush=True)


async def main(target: str, workdir: Path) -> None:
    encoding: list[int] = []
    changed = asyncio.Event()

    async def on_update(update: Any, value: Any) -> None:
        if update == StatusId.ENCODING:
            encoding.append(int(value))
            changed.set()

    async def encoding_until(seen: Any) -> None:
        """Returns once what the pushes brought satisfies `seen` (they may all be in already)."""
        while not seen(encoding):
            changed.clear()
            await changed.wait()

    gopro = WirelessGoPro(target or None, interfaces={WirelessGoPro.Interface.BLE}, wifi_adapter=NoWifi,
                          cohn_db=workdir / "cohn_db.json")
    # retries=2 is one attempt: the SDK scans range(1, retries) times.
    await gopro.open(timeout=20, retries=2)
    try:
        version = (await gopro.ble_command.get_open_gopro_api_version()).data
        report("opened", version=version, identifier=gopro.identifier)

        info = await gopro.ble_command.get_hardware_info()
        report("hardware info", ok=info.ok, model=info.data.model_name, serial=info.data.serial_number,
               firmware=info.data.firmware_version)

        statuses = await gopro.ble_command.get_camera_statuses()
        battery = await gopro.ble_status.internal_battery_percentage.get_value()
        report("statuses", ok=statuses.ok, count=len(statuses.data), battery=battery.data,
               busy=statuses.data.get(StatusId.BUSY), encoding=statuses.data.get(StatusId.ENCODING))

        # As the SDK's own photo demo does before the shutter (over BLE here, not HTTP).
        preset = await gopro.ble_command.load_preset_group(group=proto.EnumPresetGroup.PRESET_GROUP_ID_PHOTO)
        report("photo preset group", ok=preset.ok)
        # What its maintenance task sends every 3 s, sent now rather than waited for.
        report("keep alive", ok=await gopro.keep_alive())

        # The SDK registered for busy and encoding while opening (its readiness tracking); this
        # listener hears the updates that registration brings.
        gopro.register_update(on_update, StatusId.ENCODING)
        shutter = await gopro.ble_command.set_shutter(shutter=Toggle.ENABLE)
        await asyncio.wait_for(encoding_until(lambda values: 1 in values), 10)
        await asyncio.wait_for(encoding_until(lambda values: values[-1] == 0), 10)
        report("shutter", ok=shutter.ok, encoding=encoding)
    finally:
        await gopro.close()
    report("closed")


def run(target: str, workdir: str) -> None:
    tempfile.tempdir = workdir
    os.chdir(workdir)
    asyncio.run(main(target, Path(workdir)))


if __name__ == "__main__":
    if len(sys.argv) > 2:
        run(sys.argv[1], sys.argv[2])
    else:
        with tempfile.TemporaryDirectory(prefix="open-gopro-") as folder:
            run(sys.argv[1], folder)
