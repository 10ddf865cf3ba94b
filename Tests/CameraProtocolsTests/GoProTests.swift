import CameraProtocols
import GATT
import Testing
import UnleashedTestSupport

@Suite struct GoProTests {
    let file: GoldenVectorFile

    init() throws {
        file = try GoldenVectorFile.load("gopro")
    }

    static let date = try! GoPro.DateTime(year: 2023, month: 1, day: 31, hour: 3, minute: 4, second: 5)

    /// The typed request behind each to-camera vector, and the header form it was sent with.
    static let requests: [String: (GoPro.Request, GoPro.HeaderForm?)] = [
        "shutter on": (.setShutter(true), nil),
        "shutter off": (.setShutter(false), nil),
        "shutter on, extended header": (.setShutter(true), .extended13),
        "keep alive": (.keepAlive, nil),
        "set resolution 1080": (.setSetting(.videoResolution, 9), nil),
        "set fps 240": (.setSetting(.framesPerSecond, 0), nil),
        "load video preset group": (.loadPresetGroup(.video), nil),
        "load photo preset group": (.loadPresetGroup(.photo), nil),
        "get open gopro version": (.getOpenGoProVersion, nil),
        "get hardware info": (.getHardwareInfo, nil),
        "get encoding status": (.getStatuses([.encoding]), nil),
        "claim control": (.setCameraControl(.externalControl), nil),
        "set date time": (.setDateTime(date), nil),
        "pairing finished": (.pairingFinished(clientName: "phoneName"), .extended13),
        "third-party client": (.setThirdPartyClientInfo, .extended13),
        "set local date time": (.setLocalDateTime(try! GoPro.DateTime(year: 2026, month: 11, day: 29, hour: 14, minute: 41, second: 51),
                                                  utcOffsetMinutes: 0, daylightSaving: false), .extended13),
        "get cohn status, registering": (.getCOHNStatus(register: true), .extended13),
    ]

    /// What each from-camera vector reads as.
    static let notifications: [String: GoPro.Notification] = [
        "shutter response": .command(GoPro.CommandResponse(id: 0x01, status: .success)),
        "keep alive response": .setting(GoPro.CommandResponse(id: 0x5B, status: .success)),
        "set setting response": .setting(GoPro.CommandResponse(id: 0x02, status: .success)),
        "set setting refused": .setting(GoPro.CommandResponse(id: 0x02, status: .invalidParameter)),
        "open gopro version response": .command(GoPro.CommandResponse(id: 0x51, status: .success, payload: [1, 2, 1, 0])),
        "sleep response": .command(GoPro.CommandResponse(id: 0x05, status: .success)),
        "encoding status response": .query(GoPro.QueryResponse(queryID: 0x13, values: [GoPro.StatusValue(id: .encoding, integer: 0)])),
        "encoding push": .query(GoPro.QueryResponse(queryID: 0x93, values: [GoPro.StatusValue(id: .encoding, integer: 1)])),
        "not encoding push": .query(GoPro.QueryResponse(queryID: 0x93, values: [GoPro.StatusValue(id: .encoding, integer: 0)])),
        "busy push": .query(GoPro.QueryResponse(queryID: 0x93, values: [GoPro.StatusValue(id: .busy, integer: 1)])),
        "not busy push": .query(GoPro.QueryResponse(queryID: 0x93, values: [GoPro.StatusValue(id: .busy, integer: 0)])),
        "register busy response": .query(GoPro.QueryResponse(queryID: 0x53, values: [GoPro.StatusValue(id: .busy, integer: 1)])),
        "claim control response": .protobuf(GoPro.ProtobufMessage(id: .setCameraControlResponse, result: .success)),
        "local date time response": .command(GoPro.CommandResponse(id: 0x10, status: .success,
                                                                   payload: [0x0A] + date.bytes + [0xFF, 0x88, 0x01])),
        "pairing finished response": .protobuf(GoPro.ProtobufMessage(id: .pairingFinishedResponse, result: .success)),
        "cohn status, unprovisioned": .protobuf(GoPro.ProtobufMessage(id: .cohnStatus,
                                                                      body: Array(GoPro.COHNStatus(provisioned: false, networkState: 5, enabled: false).message.dropFirst(2)))),
    ]

    /// Splits a capture into 20-byte packets and joins them, as a link delivers them.
    static func reassemble(_ bytes: [UInt8]) throws -> [UInt8] {
        var reassembler = GoPro.Reassembler()
        var message: [UInt8]?
        for start in stride(from: 0, to: bytes.count, by: GoPro.packetSize) {
            #expect(message == nil, "a message completed before its last packet")
            message = try reassembler.accept(Array(bytes[start..<min(bytes.count, start + GoPro.packetSize)]))
        }
        return try #require(message)
    }

    /// The vector's characteristic, in whichever service of the GATT table holds it.
    static func characteristic(_ vector: GoldenVectorFile.Vector) throws -> GATTCharacteristicID {
        let uuid = try #require(vector.characteristic)
        let service = try #require(GoPro.services.first { $0.characteristics.contains { $0.uuid == uuid } }, "\(uuid) is in no service")
        return GATTCharacteristicID(service: service.uuid, characteristic: uuid)
    }

    @Test func everyToCameraVectorEncodesAndDecodes() throws {
        for vector in file.vectors where vector.direction == "to-camera" {
            let (request, form) = try #require(Self.requests[vector.name], "no request for '\(vector.name)'")
            #expect(try request.packets(GoPro.Fragmenter(form: form)).flatMap { $0 } == vector.bytes, "\(vector.name)")
            #expect(request.characteristic == (try Self.characteristic(vector)), "\(vector.name)")
            let message = try Self.reassemble(vector.bytes)
            #expect(try GoPro.Request(message: message, on: request.characteristic) == request, "\(vector.name)")
        }
    }

    @Test func everyFromCameraVectorDecodes() throws {
        for vector in file.vectors where vector.direction == "from-camera" && vector.characteristic != nil {
            let message = try Self.reassemble(vector.bytes)
            let notification = try GoPro.Notification(message: message, on: try Self.characteristic(vector))
            #expect(notification.message == message, "\(vector.name) re-encodes")
            if let expected = Self.notifications[vector.name] {
                #expect(notification == expected, "\(vector.name)")
            }
        }
        let version = try GoPro.Version(response: GoPro.CommandResponse(message: try Self.reassemble(file.bytes("open gopro version response"))))
        #expect((version.major, version.minor) == (2, 0))
        let dateField = try #require(try GoPro.CommandResponse(message: try Self.reassemble(file.bytes("local date time response"))).fields().first)
        #expect(try GoPro.DateTime(bytes: Array(dateField.prefix(7))) == Self.date)
        #expect(GoPro.StatusValue(id: .presetGroup, value: Array(dateField[7...8])).integer == -120, "the UTC offset is signed")
        #expect(try GoPro.ProtobufMessage(id: .setCameraControlResponse, body: [0x08, 0x01]).result() == .success)
    }

    /// The 391-byte capture: 20 packets whose continuation counters wrap, joined into a
    /// 370-byte status response; fragmenting the message again gives the same bytes.
    @Test func multiPacketStatusResponse() throws {
        let capture = try file.bytes("get all statuses response")
        let message = try Self.reassemble(capture)
        #expect(message.count == 370)
        let response = try GoPro.QueryResponse(message: message)
        #expect(response.queryID == GoPro.QueryID.getStatusValues.rawValue && response.status == .success)
        #expect(response.value(of: .busy) == 0 && response.value(of: .encoding) == 0)
        #expect(response.value(of: .batteryPercent) == 53)
        #expect(response.value(of: .ready) == 1)
        #expect(response.value(of: .presetGroup) == Int(GoPro.PresetGroup.video.rawValue))
        #expect(try GoPro.Fragmenter(form: .extended13).packets(for: message).flatMap { $0 } == capture)
    }

    @Test func advertisement() throws {
        let bytes = try file.bytes("advertisement manufacturer data")
        let parsed = try GoPro.Advertisement(manufacturerData: bytes)
        #expect(parsed.schemaVersion == 2 && parsed.status == [.processorAwake] && parsed.modelID == 65)
        #expect(parsed.capabilities == 0x23 && parsed.mediaOffloadStatus == 0x0F)
        #expect(parsed.manufacturerData == bytes)

        let closed = AdvertisementData(name: "GoPro 1234", serviceUUIDs: ["FEA6"], manufacturerData: [0x02F2: bytes])
        let camera = try #require(CameraAdvertisement.recognize(closed))
        #expect(camera.brand == .gopro && camera.pairing == .closed)
        #expect(camera.howToPair.contains("Connect Device"))
        var pairing = parsed
        pairing.status.insert(.pairing)
        #expect(GoPro.recognize(AdvertisementData(manufacturerData: [0x02F2: pairing.manufacturerData]))?.pairing == .open)
        #expect(GoPro.recognize(AdvertisementData(serviceUUIDs: ["fea6"]))?.pairing == .unknown)
        #expect(GoPro.recognize(AdvertisementData(name: "GoPro 1234")) == nil, "a name alone is not enough")
        #expect(GoPro.recognize(AdvertisementData(manufacturerData: [0xF202: bytes])) == nil, "the company ID is 0x02F2 read little-endian")
    }

    @Test func hardwareInfoRoundTrips() throws {
        let info = GoPro.HardwareInfo(modelNumber: 62, modelName: "HERO12 Black", firmwareVersion: "H23.01.01.99.56",
                                      serialNumber: "C3501324500001", accessPointSSID: "GP24500001", accessPointMAC: "0000")
        let response = GoPro.CommandResponse(id: GoPro.CommandID.getHardwareInfo.rawValue, status: .success, payload: info.payload)
        let packets = try GoPro.Fragmenter().packets(for: response.message)
        #expect(packets.count > 1 && packets.allSatisfy { $0.count <= GoPro.packetSize })
        guard case .command(let read) = try GoPro.Notification(message: try Self.reassemble(packets.flatMap { $0 }), on: GoPro.commandResponse) else {
            Issue.record("not a command response")
            return
        }
        #expect(try GoPro.HardwareInfo(payload: read.payload) == info)
        // GoPro's SDK reads a 4-byte board type after the model's name, and every field after it
        // from there: model number (1 + 4), name (1 + 12), then the board type's length byte.
        #expect(info.payload[5 + 13] == 4)
        #expect(throws: MalformedMessage.self) { try GoPro.HardwareInfo(payload: [4, 0, 0, 0, 62]) }
    }

    /// Messages of every length split into packets of at most 20 bytes, counters counting
    /// 0…F and wrapping, and join back into the same message.
    @Test func fragmentsJoinBack() throws {
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        for length in Array(0...300) + [8191, 8192, 20_000] {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let form: GoPro.HeaderForm = length > 8191 ? .extended16 : .extended13
            for fragmenter in [GoPro.Fragmenter(), GoPro.Fragmenter(form: form)] {
                guard length <= 8191 || fragmenter.form != nil else {
                    #expect(throws: MalformedMessage.self) { try fragmenter.packets(for: message) }
                    continue
                }
                let packets = try fragmenter.packets(for: message)
                #expect(packets.allSatisfy { $0.count <= GoPro.packetSize })
                for (index, packet) in packets.enumerated().dropFirst() {
                    #expect(packet[0] == 0x80 | UInt8((index - 1) % 16))
                }
                var reassembler = GoPro.Reassembler()
                let joined = try packets.map { try reassembler.accept($0) }
                #expect(joined.dropLast().allSatisfy { $0 == nil }, "\(length) bytes, \(seed)")
                #expect(joined.last == message, "\(length) bytes, \(seed)")
            }
        }
    }

    @Test func receiverAcceptsAnyContinuationCounter() throws {
        let packets = try GoPro.Fragmenter().packets(for: Array(0..<50))
        var reassembler = GoPro.Reassembler()
        var result: [UInt8]?
        for packet in packets {
            var sent = packet
            if sent[0] & 0x80 != 0 { sent[0] = 0x80 }
            result = try reassembler.accept(sent)
        }
        #expect(result == Array(0..<50))
    }

    @Test func brokenFramingIsATypedError() throws {
        var reassembler = GoPro.Reassembler()
        #expect(throws: MalformedMessage.self) { try reassembler.accept([]) }
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x80, 1, 2]) }
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x60, 1]) }
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x21]) }
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x40, 0x01]) }
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x02, 1, 2, 3]) }
        #expect(!reassembler.isAssembling)
        _ = try reassembler.accept([0x20, 0x20] + Array(repeating: 1, count: 18))
        #expect(reassembler.isAssembling)
        #expect(throws: MalformedMessage.self) { try reassembler.accept([0x80] + Array(repeating: 1, count: 19)) }
        #expect(!reassembler.isAssembling, "a broken message is dropped")
        #expect(throws: MalformedMessage.self) { try GoPro.QueryResponse(message: [0x13, 0x00, 0x0A, 0x04, 0x00]) }
        #expect(throws: MalformedMessage.self) { try GoPro.CommandResponse(message: [0x01]) }
        #expect(throws: MalformedMessage.self) { try GoPro.DateTime(bytes: [0x07, 0xE7, 13, 1, 0, 0, 0]) }
        #expect(throws: MalformedMessage.self) { try GoPro.Request(message: [0x01, 0x01, 0x07], on: GoPro.command) }
        #expect(throws: MalformedMessage.self) { try GoPro.ProtobufMessage(id: .setCameraControlResponse, body: [0x08, 0xFF]).result() }
    }

    /// What GoPro's SDK sends while opening reads back as it was meant, with the signs and flags
    /// the captured vectors leave at zero.
    @Test func openingRequestsRoundTrip() throws {
        let requests: [GoPro.Request] = [
            .setLocalDateTime(Self.date, utcOffsetMinutes: -120, daylightSaving: true),
            .setLocalDateTime(Self.date, utcOffsetMinutes: 330, daylightSaving: false),
            .pairingFinished(clientName: "unleashed on a Pi"),
            .getCOHNStatus(register: false),
        ]
        for request in requests {
            #expect(try GoPro.Request(message: request.message, on: request.characteristic) == request, "\(request)")
        }
        #expect(GoPro.Request.setLocalDateTime(Self.date, utcOffsetMinutes: -120, daylightSaving: true).message.suffix(3) == [0xFF, 0x88, 0x01])
        let status = GoPro.COHNStatus(provisioned: true, networkState: 27, enabled: true)
        #expect(try GoPro.COHNStatus(body: Array(status.message.dropFirst(2))) == status)
        // A pairing-finished that reports failure, or names no client, is not the SDK's message.
        #expect(throws: MalformedMessage.self) { try GoPro.Request(message: [0x03, 0x01, 0x08, 0x01], on: GoPro.networkManagementCommand) }
        #expect(throws: MalformedMessage.self) { try GoPro.Request(message: [0x03, 0x01, 0x08, 0x00], on: GoPro.networkManagementCommand) }
        #expect(throws: MalformedMessage.self) { try GoPro.Request(message: [0x0F, 0x07] + Self.date.bytes, on: GoPro.command) }
        // A request's protobuf ID in an answer is TLV: setting 0x03 refused with status 1 is
        // `03 01`, the bytes of "pairing finished".
        #expect(try GoPro.Notification(message: [0x03, 0x01], on: GoPro.settingsResponse)
            == .setting(GoPro.CommandResponse(id: 0x03, status: .error)))
        #expect(try GoPro.Notification(message: [0xF1, 0x69], on: GoPro.commandResponse)
            == .command(GoPro.CommandResponse(id: 0xF1, status: .reserved(0x69))))
    }

    /// Random bytes from the radio never trap: every parser throws or returns.
    @Test func randomBytesNeverCrash() throws {
        var generator = try TestSeed.forTest().generator()
        var reassembler = GoPro.Reassembler()
        let characteristics = GoPro.responseCharacteristics
            + [GoPro.command, GoPro.settings, GoPro.query, GoPro.networkManagementCommand, GoPro.networkManagementResponse]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...24, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count > 1, Bool.random(using: &generator) { bytes[1] = [0x13, 0x93, 0xE9, 0x3C, 0x6F, 0x01].randomElement(using: &generator)! }
            _ = try? reassembler.accept(bytes)
            for characteristic in characteristics {
                _ = try? GoPro.Notification(message: bytes, on: characteristic)
                _ = try? GoPro.Request(message: bytes, on: characteristic)
            }
            _ = try? GoPro.Advertisement(manufacturerData: bytes)
            _ = try? GoPro.HardwareInfo(payload: bytes)
            _ = try? GoPro.DateTime(bytes: bytes)
            _ = try? GoPro.ProtobufMessage(id: .setCameraControlResponse, body: bytes).result()
            _ = try? GoPro.COHNStatus(body: bytes)
            _ = GoPro.StatusValue(id: .busy, value: bytes).integer
        }
    }
}
