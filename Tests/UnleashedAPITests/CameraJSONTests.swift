import CameraKit
import Foundation
import JSON
import Testing
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The Camera API's values cross the daemon's API as JSON: each must come back as it went.
@Suite("Camera values as JSON")
struct CameraJSONTests {
    /// Through text too, as a socket carries it: integers that were doubles, doubles that are whole.
    static func throughText(_ value: JSONValue) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    static let iso800 = SettingValue(setting: .iso, text: "800")!
    static let iso1000 = SettingValue(setting: .iso, text: "1000")!
    static let speed = SettingValue(setting: .shutterSpeed, text: "1/125")!
    static let bulb = SettingValue.shutterSpeed(.bulb)
    static let values: [SettingValue] = [
        iso800, .iso(.auto), speed, bulb, SettingValue(setting: .shutterSpeed, text: "30\"")!,
        SettingValue(setting: .aperture, text: "f/5.6")!, SettingValue(setting: .exposureCompensation, text: "-1 1/3")!,
        .whiteBalance(.kelvin), .driveMode(.selfTimer2s), .focusMode(.continuousAF), .imageFormat(.rawPlusJPEG),
        .other(setting: .unknown(0x42), code: 7),
    ]

    static let connections: [ConnectionState] = [
        .idle, .scanning, .connecting, .resolvingServices, .handshaking, .ready, .disconnecting,
        .reconnecting(attempt: 3, nextDelay: .milliseconds(1500)),
        .reconnecting(attempt: 1, nextDelay: .nanoseconds(123_456_789)),
        .failed(.notFound), .failed(.notAModule("no service")), .failed(.incompatible("v9")),
        .failed(.gaveUp(attempts: 4, lastError: "page timeout")),
    ]

    static let shot = Shot(counter: 12, latency: .nanoseconds(84_123_456), cameraTime: UInt64.max, confirmedByCounter: true)

    static let errors: [CameraError] = [
        .unknownSetting("zoom"), .unreadableValue(.iso, "loud"), .settingNotOffered(.aperture), .readOnly(.aperture),
        .valueNotOffered(iso800, nearest: [iso1000], offered: [iso1000, .iso(.auto)]),
        .valueNotOffered(.whiteBalance(.kelvin), nearest: [], offered: [.whiteBalance(.auto)]),
        .invalidArgument("a bulb exposure lasts from 1 ms to 24 h"), .unsupported("video recording"), .focusFailed,
        .notInBulbMode(current: speed), .notInBulbMode(current: nil),
        .refused("shoot", .busy, message: nil), .refused("setSetting", .invalidArgument, message: "no"),
        .refused("shoot", FailureReason(StatusCode(rawValue: 0x77)), message: nil),
        .timedOut("bulbStart", after: .seconds(3)), .shotNotReported(after: .milliseconds(2500)),
        .notConnected("out of range"), .cancelled,
        CameraError(SessionError.timedOut(.hello, after: .seconds(3))), CameraError(SessionError.refused(.hello, .notSupported, message: "x")),
        CameraError(SessionError.versionMismatch(module: 2...3, client: 1...1)), CameraError(SessionError.disconnected(reason: "gone")),
        CameraError(SessionError.invalidRequest(.invalidMTU(12))), CameraError(SessionError.invalidRequest(.messageTooLong(length: 9000, limit: 512))),
        CameraError(SessionError.invalidRequest(.missingField("id"))), CameraError(SessionError.invalidRequest(.unexpectedField("x"))),
        CameraError(SessionError.invalidRequest(.invalidValue(field: "duration", reason: "too long"))),
        CameraError(SessionError.invalidRequest(.invalidJSON("bad"))),
        CameraError(SessionError.transport(.notConnected)), CameraError(SessionError.transport(.packetTooLarge(size: 600, limit: 509))),
        CameraError(SessionError.transport(.failed("adapter gone"))),
        .device(DeviceFailure(.busy, "busy")), .device(DeviceFailure(.cardFull, "full")),
        .device(DeviceFailure(.disconnected, "unplugged")), .device(DeviceFailure(.timedOut, "slow")),
        .device(DeviceFailure(.unsupported, "no")), .device(DeviceFailure(.permissionDenied, "held")),
        .device(DeviceFailure(.failed, "odd")), .device(DeviceFailure(.link, "lost")),
    ]

    static let events: [CameraEvent] = connections.map(CameraEvent.connection) + [
        .shotCompleted(counter: 4, cameraTime: 123), .shotCompleted(counter: 5, cameraTime: nil),
        .settingChanged(speed), .battery(module: 80, camera: nil), .battery(module: 80, camera: 55),
        .storage(.full, shotsRemaining: 0), .storage(.unknown(9), shotsRemaining: nil),
        .cameraPower(.sleeping), .busy(true), .meteredEV(ExposureStops(twentyFourths: 251)),
        .bulbDeadlineFired(.milliseconds(2003)), .bulbDeadlineFired(.nanoseconds(1_999_999_999)),
        .error(.cardFull, message: "card"), .error(.internalError, message: nil), .missedEvents(3),
        .fileSaved(SavedFile(path: "/p/a.jpg", bytes: 1234, cameraPath: "/DCIM/a.jpg", frame: 7, shotCounter: 9)),
        .fileSaved(SavedFile(path: "/p/b.jpg", bytes: 1, cameraPath: "/DCIM/b.jpg", frame: nil, shotCounter: 10)),
        .fileNotSaved(cameraPath: "/DCIM/c.jpg", reason: "disk full"),
    ]

    @Test("every camera error comes back as itself, with the same words and code")
    func errorsRoundTrip() throws {
        for error in Self.errors {
            let decoded = try CameraError(json: try Self.throughText(error.json))
            #expect(decoded == error)
            #expect(decoded.description == error.description)
            #expect(decoded.code == error.code)
        }
    }

    @Test("every event comes back as itself, from its whole form and from a name with fields")
    func eventsRoundTrip() throws {
        for event in Self.events {
            #expect(try CameraEvent(json: try Self.throughText(event.json)) == event)
            #expect(try CameraEvent(name: event.jsonName, fields: try Self.throughText(.object(event.jsonFields))) == event)
        }
    }

    @Test("connection states, setting values and descriptors round-trip")
    func statesAndSettings() throws {
        for state in Self.connections { #expect(try ConnectionState(json: try Self.throughText(state.json)) == state) }
        for value in Self.values { #expect(try SettingValue(json: try Self.throughText(value.json)) == value) }
        let descriptor = SettingDescriptor(setting: .iso, value: Self.iso800, choices: [.iso(.auto), Self.iso800, Self.iso1000],
                                           readOnly: true)
        #expect(try SettingDescriptor(json: try Self.throughText(descriptor.json)) == descriptor)
        #expect(Self.speed.json == ["setting": "shutter-speed", "value": "1/125", "raw": .integer(Int64(Self.speed.wireValue))])
    }

    @Test("results of operations round-trip")
    func results() throws {
        for result in [FocusResult.acquired, .failed, .manualFocus, .unknown(40)] {
            #expect(try FocusResult(json: try Self.throughText(result.json)) == result)
        }
        #expect(try Shot(json: try Self.throughText(Self.shot.json)) == Self.shot)
        for exposure in [
            BulbExposure(shot: Self.shot, exposed: .milliseconds(2000), ending: .deadline),
            BulbExposure(shot: Shot(counter: 1, latency: .seconds(2)), exposed: nil, ending: .stoppedEarly),
        ] {
            #expect(try BulbExposure(json: try Self.throughText(exposure.json)) == exposure)
        }
        let time = WallTime(unixMilliseconds: 1_763_900_000_123, utcOffsetMinutes: -330)
        #expect(try WallTime(json: try Self.throughText(time.json)) == time)
        for position in [
            GeoPosition(latitude: 47.3769, longitude: 8.5417, altitude: 408.25, fixTime: 1_763_900_000_000),
            GeoPosition(latitude: -90, longitude: 180, altitude: nil, fixTime: 0),
        ] {
            #expect(try GeoPosition(json: try Self.throughText(position.json)) == position)
        }
        let identity = CameraIdentity(name: "UL-1234", firmwareVersion: "1.2.0", protocolVersion: 1,
                                      capabilities: [.shoot, .bulb, .unknown(20)], cameraModel: "X-T5")
        #expect(try CameraIdentity(json: try Self.throughText(identity.json)) == identity)
        #expect(identity.json["capabilities"] == ["shoot", "bulb"] && identity.json["otherCapabilityBits"] == .int(1 << 20),
                "a capability without a name goes out as its device's bit")
        let bare = CameraIdentity(name: "cam", capabilities: [], cameraModel: nil)
        #expect(try CameraIdentity(json: try Self.throughText(bare.json)) == bare)
        // What drives the camera crosses too, so that a client shows a daemon's camera as its own.
        for link: CameraIdentity.Link in [.module, .tethered, .ownRemote(brand: "gopro")] {
            let linked = CameraIdentity(name: "cam", capabilities: [.shoot], cameraModel: "m", link: link)
            #expect(try CameraIdentity(json: try Self.throughText(linked.json)) == linked)
        }
        #expect(CameraIdentity(name: "usb:", capabilities: [], cameraModel: nil, link: .tethered).json["backend"] == "gphoto2")
        func without(_ key: String, _ json: JSONValue) -> JSONValue {
            guard case .object(var members) = json else { return json }
            members[key] = nil
            return .object(members)
        }
        #expect(try CameraIdentity(json: without("backend", bare.json)).link == .module, "a daemon from before the field drove modules only")
        let sony = CameraIdentity(name: "cam", capabilities: [], cameraModel: nil, link: .ownRemote(brand: "sony")).json
        #expect(throws: JSONShapeError.self) { try CameraIdentity(json: without("brand", sony)) }
    }

    @Test("the values a demo camera gives round-trip", .timeLimit(.minutes(1)))
    func fromDemo() async throws {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let camera = demo.camera
        #expect(try CameraIdentity(json: try Self.throughText(camera.identity.json)) == camera.identity)
        let status = try await camera.status()
        #expect(try CameraStatus(json: try Self.throughText(status.json)) == status)
        let settings = try await camera.settings()
        #expect(!settings.isEmpty)
        for descriptor in settings {
            #expect(try SettingDescriptor(json: try Self.throughText(descriptor.json)) == descriptor)
            let value = try await camera.value(of: descriptor.setting)
            #expect(try SettingValue(json: try Self.throughText(value.json)) == value)
        }
        let shot = try await camera.shoot()
        #expect(try Shot(json: try Self.throughText(shot.json)) == shot)
        _ = try await camera.set(.shutterSpeed(.bulb))
        let exposure = try await camera.bulb(.milliseconds(50))
        #expect(try BulbExposure(json: try Self.throughText(exposure.json)) == exposure)
        let after = try await camera.status()
        #expect(try CameraStatus(json: try Self.throughText(after.json)) == after)
        try await demo.finish()
    }

    @Test("a document of the wrong shape is refused, naming where and what")
    func shapeErrors() throws {
        let status = CameraStatus(connection: .ready, moduleBattery: 80, cameraBattery: nil, storage: .ok, shotsRemaining: 10,
                                  cameraPower: .on, exposureMode: .manual, meteredEV: .zero, busy: false, shotCounter: 3)
        guard case .object(var members) = status.json else { Issue.record("not an object"); return }
        members["shotCounter"] = "three"
        let wholeNumber = "expected a whole number from \(Int.min) to \(Int.max)"
        #expect(throws: JSONShapeError(path: "status.shotCounter", problem: wholeNumber)) {
            try CameraStatus(json: .object(members))
        }
        #expect(JSONShapeError(path: "status.shotCounter", problem: wholeNumber).description == "status.shotCounter: \(wholeNumber)")
        members["shotCounter"] = nil
        #expect(throws: JSONShapeError(path: "status.shotCounter", problem: "missing")) { try CameraStatus(json: .object(members)) }
        #expect(throws: JSONShapeError(path: "status", problem: "expected an object")) { try CameraStatus(json: [1, 2]) }

        var descriptor = SettingDescriptor(setting: .iso, value: Self.iso800, choices: [Self.iso800, Self.iso1000]).json
        guard case .object(var fields) = descriptor else { return }
        fields["choices"] = [Self.iso800.json, ["value": "x", "raw": "many"]]
        descriptor = .object(fields)
        #expect(throws: JSONShapeError(path: "setting.choices[1].raw", problem: "expected a whole number from 0 to 4294967295")) {
            try SettingDescriptor(json: descriptor)
        }
        #expect(throws: JSONShapeError(path: "value.setting", problem: "there is no setting called 'zoom'")) {
            try SettingValue(json: ["setting": "zoom", "value": "1", "raw": 1])
        }
        #expect(throws: JSONShapeError(path: "value.raw", problem: "not a shutter speed value")) {
            try SettingValue(json: ["setting": "shutter-speed", "value": "1", "raw": 3])
        }
        #expect(throws: JSONShapeError(path: "error.case", problem: "'oops' is not a camera error")) {
            try CameraError(json: ["case": "oops"])
        }
        #expect(throws: JSONShapeError(path: "error.value.raw", problem: "missing")) {
            try CameraError(json: ["case": "valueNotOffered", "value": ["setting": "iso"], "nearest": [], "offered": []])
        }
        #expect(throws: JSONShapeError(path: "bulb.shot.latencyMs", problem: "expected a number")) {
            try BulbExposure(json: ["shot": ["counter": 1, "latencyMs": true, "confirmedByCounter": false], "ending": "deadline"])
        }
        #expect(throws: JSONShapeError(path: "event.cameraPower", problem: "'dim' is not one of off, on, sleeping")) {
            try CameraEvent(json: ["event": "cameraPower", "cameraPower": "dim"])
        }
        // A request's body (API/setTime): its members bare, as the route answers them.
        #expect(throws: JSONShapeError(path: "utcOffsetMinutes", problem: "missing")) {
            try WallTime(json: ["unixMilliseconds": 1])
        }
        #expect(throws: JSONShapeError(path: "unixMilliseconds", problem: "expected a whole number from 0 to 18446744073709551615")) {
            try WallTime(json: ["unixMilliseconds": -1, "utcOffsetMinutes": 0])
        }
        #expect(throws: JSONShapeError(path: "unixMilliseconds", problem: "must be Unix milliseconds, a whole number from 0 to 9007199254740991")) {
            try WallTime(json: ["unixMilliseconds": 9_007_199_254_740_992, "utcOffsetMinutes": 0])
        }
    }

    @Test("codes are the ones scripts already know")
    func codes() {
        #expect(CameraError.refused("shoot", .busy, message: nil).code == "busy")
        #expect(CameraError.refused("shoot", .cardFull, message: nil).code == "cardFull")
        #expect(CameraError.refused("shoot", FailureReason(StatusCode(rawValue: 0x77)), message: nil).code == "refused")
        #expect(CameraError(SessionError.transport(.notConnected)).code == "link")
        #expect(CameraError(SessionError.disconnected(reason: "x")).code == "notConnected")
        #expect(CameraError(SessionError.versionMismatch(module: 2...3, client: 1...1)).code == "versionMismatch")
        #expect(CameraError(SessionError.invalidRequest(.invalidMTU(12))).code == "invalidRequest")
        #expect(CameraError.device(DeviceFailure(.disconnected, "x")).code == "notConnected")
        #expect(CameraError.valueNotOffered(Self.iso800, nearest: [], offered: []).code == "valueNotOffered")
    }
}
