import CameraKit
import CameraProtocols
import Testing
import UnleashedTestSupport

@Suite struct SonyTests {
    let file: GoldenVectorFile

    init() throws {
        file = try GoldenVectorFile.load("sony")
    }

    /// Each button vector is what the encoder writes, and reads back as the same button.
    @Test(arguments: [
        ("half-press", Sony.ButtonCommand.press(.halfPress)), ("half-release", .release(.halfPress)),
        ("full-press", .press(.fullPress)), ("full-release", .release(.fullPress)),
        ("record-press", .press(.record)), ("record-release", .release(.record)),
        ("af-on-press", .press(.afOn)), ("af-on-release", .release(.afOn)),
        ("c1-press", .press(.c1)), ("c1-release", .release(.c1)),
    ])
    func buttonCommands(name: String, command: Sony.ButtonCommand) throws {
        let vector = try file.vector(name)
        #expect(vector.characteristic == Sony.command.characteristic)
        #expect(command.bytes == vector.bytes)
        #expect(try Sony.ButtonCommand(decoding: vector.bytes) == command)
    }

    /// A shot is half down, full down, full up, half up: the order the camera accepts.
    @Test func aShotPressesInOrder() throws {
        let sequence = (Sony.pressShutter + Sony.releaseShutter).map(\.bytes)
        #expect(sequence == [try file.bytes("half-press"), try file.bytes("full-press"),
                             try file.bytes("full-release"), try file.bytes("half-release")])
    }

    @Test(arguments: [
        ("focus-lost", Sony.Status.focus(acquired: false)), ("focus-acquired", .focus(acquired: true)),
        ("shutter-ready", .shutter(active: false)), ("shutter-active", .shutter(active: true)),
        ("recording-stopped", .recording(false)), ("recording-started", .recording(true)),
    ])
    func statusNotifications(name: String, status: Sony.Status) throws {
        let vector = try file.vector(name)
        #expect(vector.characteristic == Sony.status.characteristic)
        #expect(try Sony.Status(decoding: vector.bytes) == status)
        #expect(status.bytes == vector.bytes)
    }

    @Test func advertisementsSayWhetherPairingIsOpen() throws {
        let open = try Sony.Advertisement(manufacturerData: file.bytes("advertisement-pairing"))
        #expect(open.isCamera && open.protocolVersion == 0x64 && open.modelCode == 0x4531)
        #expect(open.flags.isSuperset(of: [.pairingSupported, .pairingEnabled, .locationSupported, .remoteEnabled]))
        #expect(open.bytes == (try file.bytes("advertisement-pairing")))
        let closed = try Sony.Advertisement(manufacturerData: file.bytes("advertisement-not-pairing"))
        #expect(!closed.flags.contains(.pairingEnabled) && closed.flags.contains(.remoteEnabled))

        let pairingData = try file.bytes("advertisement-pairing")
        let seen = try #require(CameraAdvertisement.recognize(AdvertisementData(name: "ILCE-7M3", manufacturerData: [0x012D: pairingData])))
        #expect(seen.brand == .sony && seen.model == "ILCE-7M3" && seen.pairing == .open)
        #expect(seen.howToPair.contains("Bluetooth Rmt Ctrl"))
        let notPairingData = try file.bytes("advertisement-not-pairing")
        let notPairing = Sony.recognize(AdvertisementData(manufacturerData: [0x012D: notPairingData]))
        #expect(notPairing?.pairing == .closed)
        // Another Sony product (type 0x0001, not a camera), and another company's data, are not recognised.
        #expect(Sony.recognize(AdvertisementData(manufacturerData: [0x012D: [0x01, 0x00, 0x64, 0x00, 0x45, 0x31, 0x22, 0xEF, 0x00]])) == nil)
        #expect(Sony.recognize(AdvertisementData(manufacturerData: [0x004C: pairingData])) == nil)
    }

    @Test func locationFixWithTimeZone() throws {
        let vector = try file.vector("location-fix-with-timezone")
        #expect(vector.characteristic == Sony.locationFix.characteristic)
        let position = GeoPosition(latitude: 51.5007, longitude: -0.1246, fixTime: 1_795_610_096_000)
        let fix = Sony.LocationFix(position, timeZone: Sony.TimeZoneOffsets(utcOffsetMinutes: 60, daylightSavingMinutes: 0))
        #expect(fix.bytes == vector.bytes)
        #expect(fix.bytes.count == 95)
        let read = try Sony.LocationFix(decoding: vector.bytes)
        #expect(read == fix)
        #expect(read.time == Sony.UTCTime(year: 2026, month: 11, day: 25, hour: 12, minute: 34, second: 56))
    }

    @Test func locationFixWithoutTimeZone() throws {
        let vector = try file.vector("location-fix-without-timezone")
        let fix = Sony.LocationFix(GeoPosition(latitude: -33.8568, longitude: 151.2153, fixTime: 1_795_610_096_000), timeZone: nil)
        #expect(fix.bytes == vector.bytes)
        #expect(try Sony.LocationFix(decoding: vector.bytes) == fix)
        #expect(fix.latitudeE7 == -338_568_000 && fix.longitudeE7 == 1_512_153_000)
    }

    @Test func locationSwitches() throws {
        #expect(Sony.locationOn == (try file.bytes("location-lock")))
        #expect(Sony.locationOn == (try file.bytes("location-enable")))
        #expect(try file.vector("location-lock").characteristic == Sony.locationLock.characteristic)
        #expect(try file.vector("location-enable").characteristic == Sony.locationEnable.characteristic)
        #expect(try Sony.LocationFormat(decoding: [0, 0, 0, 0, 0x02]).includesTimeZone)
        #expect(try !Sony.LocationFormat(decoding: [0, 0, 0, 0, 0x01]).includesTimeZone)
    }

    /// Every vector in the file is one the tests above read (none sits there unchecked).
    @Test func everyVectorIsDecoded() throws {
        for vector in file.vectors {
            let bytes = vector.bytes
            switch vector.characteristic {
            case Sony.command.characteristic: #expect(try Sony.ButtonCommand(decoding: bytes).bytes == bytes, "\(vector.name)")
            case Sony.status.characteristic: #expect(try Sony.Status(decoding: bytes).bytes == bytes, "\(vector.name)")
            case Sony.locationFix.characteristic: #expect(try Sony.LocationFix(decoding: bytes).bytes == bytes, "\(vector.name)")
            case Sony.locationLock.characteristic, Sony.locationEnable.characteristic: #expect(bytes == Sony.locationOn)
            case nil: #expect(try Sony.Advertisement(manufacturerData: bytes).bytes == bytes, "\(vector.name)")
            default: Issue.record("\(vector.name): no decoder for \(vector.characteristic ?? "-")")
            }
        }
    }

    /// Calendar arithmetic: the epoch, a leap day, the end of a century, the vectors' moment.
    @Test(arguments: [
        (UInt64(0), Sony.UTCTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0)),
        (UInt64(951_825_599_000), Sony.UTCTime(year: 2000, month: 2, day: 29, hour: 11, minute: 59, second: 59)),
        (UInt64(4_107_542_399_999), Sony.UTCTime(year: 2100, month: 2, day: 28, hour: 23, minute: 59, second: 59)),
        (UInt64(4_107_542_400_000), Sony.UTCTime(year: 2100, month: 3, day: 1, hour: 0, minute: 0, second: 0)),
        (UInt64(1_795_610_096_000), Sony.UTCTime(year: 2026, month: 11, day: 25, hour: 12, minute: 34, second: 56)),
    ])
    func utcTime(milliseconds: UInt64, expected: Sony.UTCTime) {
        #expect(Sony.UTCTime(unixMilliseconds: milliseconds) == expected)
    }

    @Test func malformedInputIsAnErrorNotACrash() throws {
        #expect(throws: MalformedMessage.self) { try Sony.Status(decoding: []) }
        #expect(throws: MalformedMessage.self) { try Sony.Status(decoding: [0x02, 0x3F]) }
        #expect(throws: MalformedMessage.self) { try Sony.Status(decoding: [0x02, 0x11, 0x20]) }
        #expect(throws: MalformedMessage.self) { try Sony.Status(decoding: [0x02, 0x3F, 0x21]) }
        #expect(throws: MalformedMessage.self) { try Sony.ButtonCommand(decoding: [0x01, 0x10]) }
        #expect(throws: MalformedMessage.self) { try Sony.ButtonCommand(decoding: [0x01]) }
        #expect(throws: MalformedMessage.self) { try Sony.Advertisement(manufacturerData: [0x03, 0x00, 0x64]) }
        #expect(throws: MalformedMessage.self) { try Sony.Advertisement(manufacturerData: [0x03, 0x00, 0x64, 0x00, 0x45, 0x31, 0x21, 0x00]) }
        #expect(throws: MalformedMessage.self) { try Sony.LocationFix(decoding: [UInt8](repeating: 0, count: 95)) }
        #expect(throws: MalformedMessage.self) { try Sony.LocationFormat(decoding: [0x00]) }

        // Every two-byte input, and every status-shaped three-byte one, parses or throws.
        for first in 0...255 {
            for second in 0...255 {
                let pair = [UInt8(first), UInt8(second)]
                _ = try? Sony.ButtonCommand(decoding: pair)
                _ = try? Sony.Status(decoding: [0x02] + pair)
                _ = try? Sony.Advertisement(manufacturerData: [0x03, 0x00, 0x64, 0x00] + pair)
            }
        }
        var random = try TestSeed.forTest().generator()
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...100, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = try? Sony.Status(decoding: bytes)
            _ = try? Sony.Advertisement(manufacturerData: bytes)
            _ = try? Sony.LocationFormat(decoding: bytes)
            _ = try? Sony.LocationFix(decoding: bytes)
            var fix = bytes + [UInt8](repeating: 0, count: max(0, 95 - bytes.count))
            fix.replaceSubrange(0..<11, with: [0x00, 0x5D, 0x08, 0x02, 0xFC, 0x03, 0x00, 0x00, 0x10, 0x10, 0x10])
            _ = try? Sony.LocationFix(decoding: Array(fix.prefix(95)))
        }
    }
}
