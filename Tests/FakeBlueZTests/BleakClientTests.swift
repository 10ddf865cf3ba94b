import CameraProtocols
import Foundation
import SimulatedCameras
import Testing
import UnleashedTestSupport

/// The fake seen by a client written by others: bleak (PyPI, installed by scripts/setup), whose
/// BlueZ backend leans on details the project's own client does not (fd passing for the MTU,
/// the `Connected` signals around an aborted connection).
@Suite("bleak against the fake org.bluez", .timeLimit(.minutes(1)))
struct BleakClientTests {
    /// Connects through aborted attempts, reads the MTU (bleak's AcquireWrite), subscribes,
    /// writes and waits for the notification, then connects again through an outage. Prints one
    /// line per step.
    static let script = #"""
        import asyncio, sys, time
        from bleak import BleakClient, BleakScanner
        from dbus_fast import BusType, Message, MessageType
        from dbus_fast.aio import MessageBus

        ADDRESS, COMMAND, STATUS = sys.argv[1:4]

        async def lose_link(milliseconds):
            bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
            reply = await bus.call(Message(destination="org.unleashed.Simulator", path="/org/unleashed/Simulator",
                                           interface="org.unleashed.Simulator1", member="LoseLink",
                                           signature="su", body=[ADDRESS, milliseconds]))
            bus.disconnect()
            assert reply.message_type == MessageType.METHOD_RETURN, reply.body

        async def connect(device):
            start = time.monotonic()
            client = BleakClient(device, timeout=20)
            await client.connect()
            return client, time.monotonic() - start

        async def main():
            device = await BleakScanner.find_device_by_address(ADDRESS, timeout=20)
            assert device is not None, "the camera was not found"
            client, took = await connect(device)
            print(f"connected {took:.2f}", flush=True)
            await client._backend._acquire_mtu()
            print(f"mtu {client.mtu_size}", flush=True)
            notified = asyncio.get_running_loop().create_future()
            def on_value(_, data):
                if not notified.done():
                    notified.set_result(bytes(data))
            await client.start_notify(STATUS, on_value)
            await client.write_gatt_char(COMMAND, b"\x01\x07", response=True)
            print(f"notified {(await asyncio.wait_for(notified, 10)).hex()}", flush=True)
            await client.disconnect()
            await lose_link(3000)
            client, took = await connect(device)
            print(f"reconnected {took:.2f}", flush=True)
            await client.disconnect()

        asyncio.run(main())
        """#

    @Test("bleak connects through two aborted attempts, reads the MTU, writes, is notified, and reconnects through an outage")
    func bleakRoundTrip() async throws {
        let rig = try await CameraDeviceTests.rig { $0.faults.connectAborts = 2 }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fakebluez-bleak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("client.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let client = try await PythonClient.run(script: script.path, [SimulatedCameraCatalog.address(index: 0),
                                                TestCameraBody.command.characteristic, TestCameraBody.status.characteristic],
                                                bus: rig.bus.address, within: .seconds(50))
        let lines = client.output.split(separator: "\n").map(String.init)
        #expect(client.status == 0, "bleak's client failed (scripts/setup installs bleak): \(client.errors)")
        let steps = Dictionary(lines.compactMap { line -> (String, String)? in
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }) { first, _ in first }
        // Each abort is retried as soon as bleak hears Connected=false: no wait for its timeout.
        #expect((steps["connected"].flatMap(Double.init) ?? .infinity) < 10, "\(lines)")
        #expect(steps["mtu"] == "247")
        #expect(steps["notified"] == "ac0107")
        // Out of range for 3 s: attempts fail at the 2 s page timeout and are retried at once.
        #expect((steps["reconnected"].flatMap(Double.init) ?? .infinity) < 15, "\(lines)")
        #expect(await rig.fake.statistics["connectAborts"] == 2)
        #expect(try await CameraDeviceTests.body(rig).written == [[0x01, 0x07]])
        await rig.stop()
    }
}
