import CameraProtocols
import GATT
import Testing
import UnleashedTestSupport

@Suite struct FujifilmTests {
    let vectors: GoldenVectorFile

    init() throws {
        vectors = try GoldenVectorFile.load("fujifilm")
    }

    /// Every vector names a characteristic of the camera's GATT database (or none, for an
    /// advertisement), so that a typo in either shows.
    @Test func vectorsNameTheCamerasCharacteristics() {
        let known = Set((Fujifilm.basicServices + Fujifilm.secureServices).flatMap(\.identifiers).map(\.characteristic))
        for vector in vectors.vectors {
            if let characteristic = vector.characteristic {
                #expect(known.contains(BluetoothUUID.normalized(characteristic)), "\(vector.name)")
            }
        }
    }

    @Test func buttonActionsEncodeAsTwoWritesAndDecode() throws {
        let header = try vectors.bytes("shutter-header")
        #expect(Fujifilm.ShutterAction.header == header)
        for (name, action) in [("shutter-press", Fujifilm.ShutterAction.press), ("shutter-release", .release), ("shutter-focus", .focus)] {
            let bytes = try vectors.bytes(name)
            #expect(action.writes == [header, bytes], "\(name)")
            #expect(try Fujifilm.ShutterAction(decoding: bytes) == action, "\(name)")
        }
        #expect(throws: MalformedMessage.self) { try Fujifilm.ShutterAction(decoding: [0x01]) }
        #expect(throws: MalformedMessage.self) { try Fujifilm.ShutterAction(decoding: [0x04, 0x00]) }
        #expect(throws: MalformedMessage.self) { try Fujifilm.ShutterAction(decoding: [0x02, 0x01]) }
    }

    @Test func notificationsParseOnTheirCharacteristics() throws {
        #expect(try Fujifilm.Notification.parse(vectors.bytes("registered"), on: Fujifilm.configured) == .configured)
        #expect(try Fujifilm.Notification.parse(vectors.bytes("position-request"), on: Fujifilm.geotagRequest) == .positionRequested)
        #expect(Fujifilm.Notification.configured.message.bytes == (try vectors.bytes("registered")))
        #expect(Fujifilm.Notification.positionRequested.message.characteristic == Fujifilm.geotagRequest)
        // The registration bytes on the position characteristic are not a request.
        #expect(throws: MalformedMessage.self) { try Fujifilm.Notification.parse([0x02, 0x00], on: Fujifilm.geotagRequest) }
        #expect(throws: MalformedMessage.self) { try Fujifilm.Notification.parse([0x02], on: Fujifilm.configured) }
        #expect(try Fujifilm.Notification.parse([0x09], on: Fujifilm.indication1) == nil)
    }

    @Test(arguments: [("secure-status-issue-208", "secure-status-ack-issue-208"),
                      ("secure-status-issue-216", "secure-status-ack-issue-216"),
                      ("secure-status-header-comment", "secure-status-ack-header-comment")])
    func secureStatusIsAcknowledgedWithItsLastByteSet(read: String, written: String) throws {
        let status = try Fujifilm.SecureStatus(decoding: vectors.bytes(read))
        #expect(status.acknowledgement == (try vectors.bytes(written)))
        #expect(status.isAcknowledged(by: try vectors.bytes(written)))
        #expect(!status.isAcknowledged(by: try vectors.bytes(read)))
    }

    @Test func secureStatusOfAnotherLengthIsRefused() {
        #expect(throws: MalformedMessage.length(.fujifilm, of: "pairing status", expected: 4, got: 3)) {
            try Fujifilm.SecureStatus(decoding: [0xB4, 0x12, 0x00])
        }
    }

    @Test func syncIntervalIsTenSecondsLittleEndian() throws {
        let bytes = try vectors.bytes("secure-sync-interval")
        #expect(Fujifilm.SyncInterval.standard.bytes == bytes)
        #expect(try Fujifilm.SyncInterval(decoding: bytes) == .standard)
        #expect(Fujifilm.SyncInterval(seconds: 0x1234).bytes == [0x34, 0x12])
    }

    @Test(arguments: [("geotag-tokyo", 35.6586, 139.7454, 333.0, UInt64(1_752_469_567_000)),
                      ("geotag-south-west", -33.8568, -70.6483, -12.0, UInt64(1_798_761_598_000))])
    func geotagFixEncodesAndDecodes(name: String, latitude: Double, longitude: Double, altitude: Double, time: UInt64) throws {
        let bytes = try vectors.bytes(name)
        let fix = Fujifilm.GeotagFix(latitude: latitude, longitude: longitude, altitude: altitude, fixTimeMilliseconds: time)
        #expect(fix.bytes == bytes)
        #expect(bytes.count == Fujifilm.GeotagFix.length)
        #expect(try Fujifilm.GeotagFix(decoding: bytes) == fix)
    }

    @Test func calendarDatesFollowTheGregorianRules() {
        let leapDay = Fujifilm.UTCTime(unixSeconds: 951_782_400)  // 2000-02-29 00:00:00
        #expect(leapDay == Fujifilm.UTCTime(year: 2000, month: 2, day: 29, hour: 0, minute: 0, second: 0))
        let epoch = Fujifilm.UTCTime(unixSeconds: 0)
        #expect(epoch == Fujifilm.UTCTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        let before = Fujifilm.UTCTime(unixSeconds: -1)
        #expect(before == Fujifilm.UTCTime(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59))
    }

    @Test func advertisementsGiveGenerationAndPairing() throws {
        let basic = try vectors.bytes("advertisement-basic")
        #expect(basic.prefix(2) == [0xD8, 0x04])
        let open = AdvertisementData(name: "X-T30", serviceUUIDs: [Fujifilm.basicAdvertisedServices[0]],
                                     manufacturerData: [Fujifilm.companyID: Array(basic.dropFirst(2))])
        #expect(Fujifilm.recognize(open) == RecognizedCamera(brand: .fujifilm, model: "X-T30", pairing: .open,
                                                             howToPair: Fujifilm.howToPair, token: [0x1A, 0x2B, 0x3C, 0x4D]))
        #expect(Fujifilm.generation(in: open) == .basic(token: [0x1A, 0x2B, 0x3C, 0x4D]))
        #expect(Fujifilm.manufacturerData(for: .basic(token: [0x1A, 0x2B, 0x3C, 0x4D])) == Array(basic.dropFirst(2)))

        let closedBasic = AdvertisementData(name: "X-T30", serviceUUIDs: [Fujifilm.basicAdvertisedServices[1]])
        #expect(Fujifilm.recognize(closedBasic)?.pairing == .closed)

        let secure = try vectors.bytes("advertisement-secure")
        let data = [Fujifilm.companyID: Array(secure.dropFirst(2))]
        let secureOpen = AdvertisementData(name: "X-E5", serviceUUIDs: [Fujifilm.secureAdvertisedService], manufacturerData: data)
        let secureWaiting = AdvertisementData(name: "X-E5", serviceUUIDs: [Fujifilm.securePairService], manufacturerData: data)
        #expect(Fujifilm.generation(in: secureOpen) == .secure(serial: [0x11, 0x22, 0x33, 0x44, 0x55]))
        #expect(Fujifilm.recognize(secureOpen)?.pairing == .open)
        #expect(Fujifilm.recognize(secureWaiting)?.pairing == .closed)
        #expect(Fujifilm.recognize(secureWaiting)?.token == [0x11, 0x22, 0x33, 0x44, 0x55])
        #expect(CameraAdvertisement.recognize(secureWaiting)?.brand == .fujifilm)

        #expect(Fujifilm.recognize(AdvertisementData(name: "X-T30", manufacturerData: [Fujifilm.companyID: [0x02, 0x01]])) == nil)
        #expect(Fujifilm.recognize(AdvertisementData(name: "phone", manufacturerData: [0x004C: [0x02, 1, 2, 3, 4]])) == nil)
    }

    @Test func secureDatabaseHoldsEverySubscription() {
        let secure = Set(Fujifilm.secureServices.flatMap(\.identifiers))
        for id in Fujifilm.secureRequiredNotifications + Fujifilm.secureOptionalNotifications
            + [Fujifilm.secureStatus, Fujifilm.secureRemoteName, Fujifilm.geotagSyncInterval, Fujifilm.shutter, Fujifilm.geotag,
               Fujifilm.secureThirdNotification] {
            #expect(secure.contains(id), "\(id)")
        }
        #expect(Fujifilm.secureRequiredNotifications.count + Fujifilm.secureOptionalNotifications.count + 4 == 11)
    }

    /// Bytes from the radio never trap a parser: every length up to 40, random contents.
    @Test func randomBytesNeverTrap() throws {
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        let characteristics = [Fujifilm.configured, Fujifilm.geotagRequest, Fujifilm.indication1] + Fujifilm.secureOptionalNotifications
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for characteristic in characteristics { _ = try? Fujifilm.Notification.parse(bytes, on: characteristic) }
            _ = try? Fujifilm.SecureStatus(decoding: bytes)
            _ = try? Fujifilm.SyncInterval(decoding: bytes)
            _ = try? Fujifilm.GeotagFix(decoding: bytes)
            _ = try? Fujifilm.ShutterAction(decoding: bytes)
            _ = Fujifilm.recognize(AdvertisementData(manufacturerData: [Fujifilm.companyID: bytes]))
        }
        // A decoded fix re-encodes to the same bytes.
        for _ in 0..<500 {
            var bytes = (0..<23).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes[12...15] = [0, 0, 0, 0]
            (bytes[18], bytes[19], bytes[20], bytes[21], bytes[22]) = (
                .random(in: 1...28, using: &generator), .random(in: 1...12, using: &generator), .random(in: 0...23, using: &generator),
                .random(in: 0...59, using: &generator), .random(in: 0...59, using: &generator))
            let fix = try? Fujifilm.GeotagFix(decoding: bytes)
            #expect(fix?.bytes == bytes, "\(seed)")
        }
    }
}
