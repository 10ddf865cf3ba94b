import Foundation
import NIOCore
@testable import PTPIPCamera
import Testing
import UnleashedSimulator

/// The simulated camera as a PTP/IP client sees it, through a raw client written from the spec.
@Suite("PTP/IP camera simulator", .timeLimit(.minutes(1)))
struct PTPIPCameraServerTests {
    static let fast = 0.01

    /// A server on a free port, stopped when `body` ends.
    func withServer(cardCapacity: Int? = nil, faults: PTPIPFaultPlan = PTPIPFaultPlan(), maximumPacketSize: Int = 1 << 20,
                    _ body: (PTPIPCameraServer) async throws -> Void) async throws {
        let options = PTPIPCameraOptions(profile: .nikonLike, cardCapacity: cardCapacity, faults: faults, timeScale: Self.fast,
                                         maximumPacketSize: maximumPacketSize)
        let server = try await PTPIPCameraServer.start(port: 0, options: options)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Connects, opens session 1 and checks it opened.
    func openSession(_ server: PTPIPCameraServer) async throws -> RawPTPIPClient {
        let client = try await RawPTPIPClient(port: server.port)
        #expect(try await client.call(0x1002, [1]).code == 0x2001)
        return client
    }

    @Test("the handshake names the camera, and GetDeviceInfo keeps libgphoto2 on its generic path")
    func handshakeAndDeviceInfo() async throws {
        try await withServer { server in
            let command = try Socket(port: server.port)
            try command.send(packet: 1, RawPTPIPClient.guid + RawPTPIPClient.utf16z("host") + RawPTPIPClient.le32(0x0001_0000))
            let ack = try await command.receive()
            #expect(ack.type == 2)
            let nameUnits = stride(from: 20, to: ack.payload.count - 5, by: 2).map { RawPTPIPClient.u16(ack.payload, $0) }
            #expect(String(decoding: nameUnits.prefix { $0 != 0 }, as: UTF16.self) == "Unleashed Simulator")
            command.close()

            let client = try await RawPTPIPClient(port: server.port)
            defer { client.close() }
            #expect(try await client.call(0x1004).code == 0x2003, "storage before OpenSession: SessionNotOpen")
            let info = try await client.call(0x1001)
            #expect(info.code == 0x2001)
            let data = try #require(info.data)
            #expect(RawPTPIPClient.u32(data, 2) == 0, "no vendor extension")
            var offset = RawPTPIPClient.ptpString(data, 8).1 + 2
            let operationCount = Int(RawPTPIPClient.u32(data, offset))
            let operations = (0..<operationCount).map { RawPTPIPClient.u16(data, offset + 4 + $0 * 2) }
            #expect(operations.contains(0x100E) && operations.contains(0x1016))
            offset += 4 + operationCount * 2
            for _ in 0..<4 { offset += 4 + Int(RawPTPIPClient.u32(data, offset)) * 2 }
            let (manufacturer, afterManufacturer) = RawPTPIPClient.ptpString(data, offset)
            #expect(manufacturer == "Unleashed Simulator")
            #expect(RawPTPIPClient.ptpString(data, afterManufacturer).0 == CameraProfile.nikonLike.model)

            #expect(try await client.call(0x1002, [1]).code == 0x2001)
            #expect(try await client.call(0x1002, [1]).code == 0x201E, "second OpenSession: SessionAlreadyOpen")
            let storages = try #require(try await client.call(0x1004).data)
            #expect(storages == RawPTPIPClient.le32(1) + RawPTPIPClient.le32(0x0001_0001))
            #expect(try await client.call(0x9999).code == 0x2005, "unknown operation: OperationNotSupported")
            #expect(try await client.call(0x1003).code == 0x2001)
            #expect(await server.stats().sessionsOpened == 1)
            #expect(await server.stats().sessionsClosed == 1)
        }
    }

    @Test("ISO is offered from the profile's ladder; an offered value sticks, others are refused")
    func propertyGetAndSet() async throws {
        try await withServer { server in
            let client = try await openSession(server)
            defer { client.close() }
            let description = try #require(try await client.call(0x1014, [0x500F]).data)
            #expect(RawPTPIPClient.u16(description, 2) == 0x0004, "UINT16")
            #expect(description[4] == 1, "read-write")
            #expect(RawPTPIPClient.u16(description, 7) == 100, "current: the profile's default")
            #expect(description[9] == 2, "an enumeration")
            let offered = (0..<Int(RawPTPIPClient.u16(description, 10))).map { RawPTPIPClient.u16(description, 12 + $0 * 2) }
            #expect(offered.first == 0xFFFF, "auto first")
            #expect(offered.contains(51200))

            #expect(try await client.call(0x1016, [0x500F], data: RawPTPIPClient.le16(400)).code == 0x2001)
            #expect(try await client.call(0x1015, [0x500F]).data == RawPTPIPClient.le16(400))
            #expect(try await client.call(0x1016, [0x500F], data: RawPTPIPClient.le16(401)).code == 0x201C)
            #expect(try await client.call(0x1016, [0x500F], data: [1]).code == 0x201B, "one byte for a UINT16: InvalidDevicePropFormat")
            #expect(try await client.call(0x1015, [0x500F]).data == RawPTPIPClient.le16(400))
            #expect(try await client.call(0x1016, [0x5001], data: [50]).code == 0x200F, "battery is read-only")
            #expect(try await client.call(0x1015, [0xD123]).code == 0x200A)
            let compensation = try #require(try await client.call(0x1014, [0x5010]).data)
            #expect(RawPTPIPClient.u16(compensation, 2) == 0x0003, "INT16")
        }
    }

    @Test("a capture raises ObjectAdded then CaptureComplete, and GetObject returns the JPEG on the card")
    func capture() async throws {
        try await withServer { server in
            let client = try await openSession(server)
            defer { client.close() }
            let trigger = try await client.call(0x100E, [0, 0])
            #expect(trigger.code == 0x2001)
            let added = try await client.nextEvent()
            #expect(added.code == 0x4002)
            let complete = try await client.nextEvent()
            #expect(complete.code == 0x400D)
            let handle = try #require(added.parameters.first)
            let info = try #require(try await client.call(0x1008, [handle]).data)
            #expect(RawPTPIPClient.u16(info, 4) == 0x3801)
            let object = try await client.call(0x1009, [handle])
            let bytes = try #require(object.data)
            #expect(Array(bytes.prefix(2)) == [0xFF, 0xD8])
            #expect(Int(RawPTPIPClient.u32(info, 8)) == bytes.count)
            let files = await server.files()
            #expect(files.map(\.name) == ["IMG_0001.JPG"])
            #expect(files.first?.bytes == bytes)
            let stats = await server.stats()
            #expect(stats.captures == 1 && stats.objectsDownloaded == 1)

            #expect(try await client.call(0x100E).code == 0x2001)
            _ = try await client.nextEvent()
            _ = try await client.nextEvent()
            let second = await server.files()
            #expect(second.count == 2 && second[1].bytes != second[0].bytes, "every frame differs")
            #expect(try await client.call(0x100B, [handle]).code == 0x2001)
            #expect(await server.files().map(\.name) == ["IMG_0002.JPG"])
        }
    }

    @Test("open capture records a clip: TerminateOpenCapture names its transaction, and an AVI lands on the card")
    func movie() async throws {
        try await withServer { server in
            let client = try await openSession(server)
            defer { client.close() }
            #expect(try await client.call(0x101C, [0, 0]).code == 0x2001)
            let started: UInt32 = 2  // OpenSession was transaction 1
            #expect(try await client.call(0x100E).code == 0x2019, "no still while recording")
            #expect(try await client.nextEvent().code == 0x400D, "the refused still is over")
            #expect(try await client.call(0x1018, [started + 40]).code == 0x2004)
            #expect(try await client.call(0x1018, [started]).code == 0x2001)
            let added = try await client.nextEvent()
            #expect(added.code == 0x4002)
            #expect(try await client.nextEvent().code == 0x400D)
            let handle = try #require(added.parameters.first)
            let info = try #require(try await client.call(0x1008, [handle]).data)
            #expect(RawPTPIPClient.u16(info, 4) == 0x300A)
            let bytes = try #require(try await client.call(0x1009, [handle]).data)
            #expect(Array(bytes.prefix(4)) == Array("RIFF".utf8) && Array(bytes[8..<12]) == Array("AVI ".utf8))
            #expect(await server.files().map(\.name) == ["MOV_0001.AVI"])
        }
    }

    @Test("a picture's brightness follows ISO, shutter, aperture and compensation")
    func brightnessFollowsExposure() throws {
        var properties = DeviceProperties(profile: .nikonLike, batteryPercent: 100)
        #expect(properties.exposureStops() == 0, "the default 1/125 s at f/8, ISO 100 exposes the scene correctly")
        #expect(abs(properties.exposureStops(sceneEV: 10) - (10 - DeviceProperties.referenceSceneEV)) < 1e-9)
        var iso = ByteBuffer()
        iso.writeInteger(UInt16(400), endianness: .little)
        #expect(properties.set(PTPProperty.exposureIndex, from: iso) == .changed)
        #expect(abs(properties.exposureStops() - 2) < 0.01)
        func meanLevel(_ stops: Double) -> Double {
            let pixels = FrameRenderer.rgbPixels(frameNumber: 1, exposureStops: stops)
            return Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        }
        #expect(meanLevel(-2) < meanLevel(0))
        #expect(meanLevel(0) < meanLevel(2))
        #expect(FrameRenderer.rgbPixels(frameNumber: 1, exposureStops: 0) != FrameRenderer.rgbPixels(frameNumber: 2, exposureStops: 0))
    }

    @Test("a full card refuses InitiateCapture with StoreFull, raises StoreFull, and reports no free space")
    func cardFills() async throws {
        try await withServer(cardCapacity: 1) { server in
            let client = try await openSession(server)
            defer { client.close() }
            #expect(try await client.call(0x100E).code == 0x2001)
            #expect(try await client.nextEvent().code == 0x4002)
            #expect(try await client.nextEvent().code == 0x400D)
            #expect(try await client.nextEvent().code == 0x400A, "the capture that fills the card raises StoreFull")
            #expect(try await client.call(0x100E).code == 0x200C)
            #expect(try await client.nextEvent().code == 0x400A)
            let storage = try #require(try await client.call(0x1005, [0x0001_0001]).data)
            #expect(RawPTPIPClient.u64(storage, 14) == 0, "free bytes")
            #expect(RawPTPIPClient.u32(storage, 22) == 0, "free images")
            #expect(await server.stats().refusedFull == 1)
        }
    }

    @Test("busy=1 refuses every capture with DeviceBusy")
    func busyFault() async throws {
        try await withServer(faults: PTPIPFaultPlan(busy: 1)) { server in
            let client = try await openSession(server)
            defer { client.close() }
            #expect(try await client.call(0x100E).code == 0x2019)
            #expect(try await client.nextEvent().code == 0x400D, "the refused capture is over")
            #expect(await server.stats().refusedBusy == 1)
            #expect(await server.files().isEmpty)
        }
    }

    @Test("unplug drops both connections and refuses new ones until replug")
    func unplug() async throws {
        try await withServer { server in
            let client = try await openSession(server)
            await server.unplug()
            #expect(await client.command.isClosedByPeer())
            #expect(await client.events.isClosedByPeer())
            await #expect(throws: (any Error).self) { try await RawPTPIPClient(port: server.port) }
            await server.replug()
            let again = try await openSession(server)
            again.close()
            client.close()
        }
    }

    @Test("a malformed or oversized packet closes that connection; the camera keeps serving others")
    func malformedPackets() async throws {
        try await withServer(maximumPacketSize: 4096) { server in
            let bystander = try await openSession(server)
            defer { bystander.close() }
            for garbage in [RawPTPIPClient.le32(4) + RawPTPIPClient.le32(1), RawPTPIPClient.le32(1 << 30) + RawPTPIPClient.le32(6),
                            RawPTPIPClient.le32(8) + RawPTPIPClient.le32(99)] {
                let socket = try Socket(port: server.port)
                try socket.send(garbage)
                #expect(await socket.isClosedByPeer(), "\(garbage)")
            }
            let truncated = try await RawPTPIPClient(port: server.port)
            try truncated.command.send(packet: 6, [1, 0])
            #expect(await truncated.command.isClosedByPeer(), "an Operation Request too short for its fields")
            #expect(await truncated.events.isClosedByPeer(), "the event connection goes with its command connection")
            truncated.close()
            let badEvent = try Socket(port: server.port)
            try badEvent.send(packet: 3, RawPTPIPClient.le32(999))
            #expect(try await badEvent.receive().type == 5, "an event connection for no command connection: Init Fail")
            #expect(try await bystander.call(0x1004).code == 0x2001)
            #expect(await server.stats().protocolErrors == 4)
        }
    }

    @Test("fault plans: busy and repeated unplugs read; unknown items are named")
    func faultPlans() throws {
        let plan = try PTPIPFaultPlan(parsing: "busy=0.25,unplug=5s@30s,unplug=1s@2m")
        #expect(plan.busy == 0.25)
        #expect(plan.unplugs == [.init(at: .seconds(30), length: .seconds(5)), .init(at: .seconds(120), length: .seconds(1))])
        #expect(throws: FaultPlanError(item: "jam=1", expected: "busy=PROBABILITY or unplug=DURATION@TIME")) {
            try PTPIPFaultPlan(parsing: "jam=1")
        }
        #expect(throws: FaultPlanError.self) { try PTPIPFaultPlan(parsing: "busy=2") }
        #expect(throws: FaultPlanError.self) { try PTPIPFaultPlan(parsing: "unplug=5s") }
    }
}
