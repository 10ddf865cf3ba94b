public import CameraKit
public import JSON
import UnleashedKit
import UnleashedProtocol

// The JSON forms of the Camera API's values, for the daemon's control API and its clients.
//
// Each value reads as a person would want it (camelCase keys, enums by name, durations with their
// unit in the key, setting values as their text) and carries enough to be rebuilt exactly (a
// setting value's wire number, a duration to the nanosecond), so that a value that crosses the API
// is the value that was sent: a client prints what it would print talking to the camera itself.

extension JSONValue {
    /// An integer, or `null` when there is none: the daemon writes its documents with these too.
    public static func optional(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
    /// A string, or `null` when there is none.
    public static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// An `Int` as a JSON integer.
    public static func int(_ value: Int) -> JSONValue { .integer(Int64(value)) }

    /// An unsigned 64-bit number: an integer where JSON's signed integers reach, digits beyond.
    static func unsigned(_ value: UInt64) -> JSONValue {
        Int64(exactly: value).map(JSONValue.integer) ?? .string(String(value))
    }

    /// A duration in milliseconds: whole when it is, otherwise with the fraction (to the nanosecond).
    public static func milliseconds(_ duration: Duration) -> JSONValue {
        let (seconds, attoseconds) = duration.components
        if attoseconds % 1_000_000_000_000_000 == 0 {
            return .integer(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
        return .number(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }

    /// A duration in seconds: whole when it is, otherwise with the fraction.
    public static func seconds(_ duration: Duration) -> JSONValue {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return .integer(seconds) }
        return .number(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// The object's members with `extra` added.
    public func merging(_ extra: [String: JSONValue]) -> JSONValue {
        guard case .object(var members) = self else { return self }
        for (key, value) in extra { members[key] = value }
        return .object(members)
    }
}

extension OpenEnumeration {
    /// The value's name, or `unknown(7)` for a value this version does not know.
    var jsonName: JSONValue { .string(description) }
}

// MARK: - Names

/// Why `name` is none of `names`.
private func notOneOf(_ name: String, _ names: [String]) -> String {
    "'\(name)' is not one of \(names.joined(separator: ", "))"
}

extension JSONReadable where Self: OpenEnumeration & WireEnumeration {
    /// A value by its name; `unknown(7)` for one this version does not know. The code of an
    /// unknown value is the one the module sent, so the module protocol's table names it where
    /// it can: `unknown(1)` reads as the value that code stands for.
    init(reading decoder: any Decoder) throws {
        self = try decoder.named({ name in
            if let known = Self(name: name) { return known }
            guard name.hasPrefix("unknown("), name.hasSuffix(")"), let code = UInt8(name.dropFirst(8).dropLast()) else { return nil }
            return Self(wireCode: code)
        }, otherwise: { notOneOf($0, Self.known.compactMap(\.name)) })
    }
}

extension JSONReadable where Self: RawRepresentable<String>, Self: CaseIterable {
    /// A value by its name.
    init(reading decoder: any Decoder) throws {
        self = try decoder.named(Self.init(rawValue:), otherwise: { notOneOf($0, Self.allCases.map(\.rawValue)) })
    }
}

extension StorageState: JSONReadable {}
extension CameraPower: JSONReadable {}
extension ExposureMode: JSONReadable {}
extension FocusResult: JSONReadable {}
extension ConnectionPhase: JSONReadable {}
extension DeviceFailure.Kind: JSONReadable {}

extension SettingID: JSONReadable {
    /// The name people type (`shutter-speed`); `setting-66`, by the module's code, for one this
    /// version does not know.
    init(reading decoder: any Decoder) throws {
        self = try decoder.named({ name in
            if let known = SettingID(userName: name) { return known }
            return name.hasPrefix("setting-") ? UInt8(name.dropFirst(8)).map(SettingID.init(wireCode:)) : nil
        }, otherwise: { "there is no setting called '\($0)'" })
    }
}

extension ExposureStops: JSONReadable {
    /// Stops in their text form (`+1 1/3`).
    init(reading decoder: any Decoder) throws {
        self = try decoder.named(ExposureStops.init(text:), otherwise: { "'\($0)' is not a number of stops like +1 1/3" })
    }
}

extension Capabilities: JSONReadable {
    /// The one capability a name (`shoot`) stands for; an identity lists them.
    init(reading decoder: any Decoder) throws {
        self = try decoder.named({ name in Self.known.first { $0.1 == name }?.0 }, otherwise: { "'\($0)' is not a capability" })
    }
}

// MARK: - Identity and status

extension CameraIdentity: JSONReadable {
    /// `{"name", "firmwareVersion", "protocolVersion", "capabilities": ["shoot", …], "cameraModel",
    /// "backend"}` (`backend` as `status --json` names it, with `brand` for `ble`); capabilities
    /// this version has no name for go in `otherCapabilityBits`, a bit for each by the device's
    /// number for it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "name": .string(name),
            "firmwareVersion": .optional(firmwareVersion),
            "protocolVersion": .optional(protocolVersion.map { Int($0) }),
            "capabilities": .array(capabilities.names.map(JSONValue.string)),
            "cameraModel": .optional(cameraModel),
        ]
        switch link {
        case .module: members["backend"] = "unleashed"
        case .tethered: members["backend"] = "gphoto2"
        case .ownRemote(let brand):
            members["backend"] = "ble"
            members["brand"] = .string(brand)
        }
        let other = capabilities.unknownCodes.reduce(0) { $0 | 1 << $1 }
        if other != 0 { members["otherCapabilityBits"] = .int(other) }
        return .object(members)
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "identity")
    }

    private enum Member: String, CodingKey {
        case name, firmwareVersion, protocolVersion, capabilities, cameraModel, otherCapabilityBits, backend, brand
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        var capabilities = Capabilities(try members.decode([Capabilities].self, forKey: .capabilities))
        if let other = try members.decodeIfPresent(UInt32.self, forKey: .otherCapabilityBits) {
            for code in 0..<32 where other & (1 << UInt32(code)) != 0 { capabilities.insert(.unknown(code)) }
        }
        self.init(
            name: try members.decode(String.self, forKey: .name),
            firmwareVersion: try members.decodeIfPresent(String.self, forKey: .firmwareVersion),
            protocolVersion: try members.decodeIfPresent(UInt8.self, forKey: .protocolVersion),
            capabilities: capabilities,
            cameraModel: try members.decodeIfPresent(String.self, forKey: .cameraModel),
            // A daemon from before `backend` was written drives modules only.
            link: try Self.link(members))
    }

    private static func link(_ members: KeyedDecodingContainer<Member>) throws -> Link {
        switch try members.decodeIfPresent(String.self, forKey: .backend) {
        case nil, "unleashed": return .module
        case "gphoto2": return .tethered
        case "ble":
            guard let brand = try members.decodeIfPresent(String.self, forKey: .brand) else {
                throw DecodingError.dataCorruptedError(forKey: .brand, in: members,
                                                       debugDescription: "a camera on its own Bluetooth remote (backend ble) names its brand")
            }
            return .ownRemote(brand: brand)
        case let other?:
            throw DecodingError.dataCorruptedError(forKey: .backend, in: members, debugDescription: "'\(other)' is not a backend: unleashed, gphoto2 or ble")
        }
    }
}

extension ConnectionFailure: JSONReadable {
    /// `{"kind": "gaveUp", "attempts": 3, "lastError": "…"}` and the like.
    var json: JSONValue {
        switch self {
        case .notFound: ["kind": "notFound"]
        case .notAModule(let reason): ["kind": "notAModule", "reason": .string(reason)]
        case .incompatible(let reason): ["kind": "incompatible", "reason": .string(reason)]
        case .gaveUp(let attempts, let lastError):
            ["kind": "gaveUp", "attempts": .int(attempts), "lastError": .string(lastError)]
        }
    }

    private enum Member: String, CodingKey {
        case kind, reason, attempts, lastError
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        switch try members.decode(String.self, forKey: .kind) {
        case "notFound": self = .notFound
        case "notAModule": self = .notAModule(try members.decode(String.self, forKey: .reason))
        case "incompatible": self = .incompatible(try members.decode(String.self, forKey: .reason))
        case "gaveUp":
            self = .gaveUp(attempts: try members.decode(Int.self, forKey: .attempts), lastError: try members.decode(String.self, forKey: .lastError))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: members, debugDescription: "'\(other)' is not a connection failure")
        }
    }
}

extension ConnectionState: JSONReadable {
    /// `{"connection": "<phase>", "connectionDetail": "<in words>"}`, plus `reconnectAttempt` and
    /// `reconnectDelayMs` while reconnecting and `failure` once failed. The same members appear in
    /// a status and in a `connection` event.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "connection": .string(phase.rawValue), "connectionDetail": .string(description),
        ]
        switch self {
        case .reconnecting(let attempt, let delay):
            members["reconnectAttempt"] = .int(attempt)
            members["reconnectDelayMs"] = .milliseconds(delay)
        case .failed(let failure):
            members["failure"] = failure.json
        default: break
        }
        return .object(members)
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "connection")
    }

    private enum Member: String, CodingKey {
        case connection, reconnectAttempt, reconnectDelayMs, failure
    }

    /// Reads the members of ``json`` from an object that may hold others too.
    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        switch try members.decode(ConnectionPhase.self, forKey: .connection) {
        case .idle: self = .idle
        case .scanning: self = .scanning
        case .connecting: self = .connecting
        case .resolvingServices: self = .resolvingServices
        case .handshaking: self = .handshaking
        case .ready: self = .ready
        case .disconnecting: self = .disconnecting
        case .reconnecting:
            self = .reconnecting(attempt: try members.decode(Int.self, forKey: .reconnectAttempt),
                                 nextDelay: try members.decode(Milliseconds.self, forKey: .reconnectDelayMs).duration)
        case .failed: self = .failed(try members.decode(ConnectionFailure.self, forKey: .failure))
        }
    }
}

extension CameraStatus: JSONReadable {
    /// Every field of the snapshot; the connection both as its phase, for programs, and in words.
    public var json: JSONValue {
        connection.json.merging([
            "moduleBattery": .optional(moduleBattery),
            "cameraBattery": .optional(cameraBattery),
            "storage": storage?.jsonName ?? .null,
            "shotsRemaining": .optional(shotsRemaining),
            "cameraPower": cameraPower.jsonName,
            "exposureMode": exposureMode?.jsonName ?? .null,
            "meteredEV": .optional(meteredEV?.text),
            "busy": .bool(busy),
            "shotCounter": .int(shotCounter),
        ])
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "status")
    }

    private enum Member: String, CodingKey {
        case moduleBattery, cameraBattery, storage, shotsRemaining, cameraPower, exposureMode, meteredEV, busy, shotCounter
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        self.init(
            connection: try ConnectionState(reading: decoder),
            moduleBattery: try members.decodeIfPresent(Int.self, forKey: .moduleBattery),
            cameraBattery: try members.decodeIfPresent(Int.self, forKey: .cameraBattery),
            storage: try members.decodeIfPresent(StorageState.self, forKey: .storage),
            shotsRemaining: try members.decodeIfPresent(Int.self, forKey: .shotsRemaining),
            cameraPower: try members.decode(CameraPower.self, forKey: .cameraPower),
            exposureMode: try members.decodeIfPresent(ExposureMode.self, forKey: .exposureMode),
            meteredEV: try members.decodeIfPresent(ExposureStops.self, forKey: .meteredEV),
            busy: try members.decode(Bool.self, forKey: .busy),
            shotCounter: try members.decode(Int.self, forKey: .shotCounter))
    }
}

// MARK: - Settings

extension SettingValue: JSONReadable {
    /// `{"setting": "shutter-speed", "value": "1/125", "raw": 1048701}`: the setting by the name
    /// people type, the value as the camera shows it, and its wire number, which rebuilds it exactly.
    public var json: JSONValue {
        ["setting": .string(setting.userName), "value": .string(text), "raw": .integer(Int64(wireValue))]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "value")
    }

    /// The members of a value and of a descriptor, which is a value with more.
    fileprivate enum Member: String, CodingKey {
        case setting, raw, readOnly, choices
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        try self.init(members, setting: try members.decode(SettingID.self, forKey: .setting))
    }

    /// A value whose setting the surrounding document names: only its wire number is read.
    fileprivate init(_ members: KeyedDecodingContainer<Member>, setting: SettingID) throws {
        guard let value = SettingValue(setting: setting, wireValue: try members.decode(UInt32.self, forKey: .raw)) else {
            throw DecodingError.dataCorruptedError(forKey: .raw, in: members,
                                                   debugDescription: "not " + English.withArticle("\(setting.displayName) value"))
        }
        self = value
    }

    /// The value without its setting, for lists of one setting's values.
    var choiceJSON: JSONValue { ["value": .string(text), "raw": .integer(Int64(wireValue))] }
}

extension SettingDescriptor: JSONReadable {
    /// `{"setting", "value", "raw", "readOnly", "choices": [{"value", "raw"}, …]}`.
    public var json: JSONValue {
        value.json.merging([
            "setting": .string(setting.userName),
            "readOnly": .bool(readOnly),
            "choices": .array(choices.map(\.choiceJSON)),
        ])
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "setting")
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: SettingValue.Member.self)
        let setting = try members.decode(SettingID.self, forKey: .setting)
        var choices: [SettingValue] = []
        var elements = try members.nestedUnkeyedContainer(forKey: .choices)
        while !elements.isAtEnd {
            choices.append(try SettingValue(elements.nestedContainer(keyedBy: SettingValue.Member.self), setting: setting))
        }
        self.init(setting: setting, value: try SettingValue(members, setting: setting), choices: choices,
                  readOnly: try members.decode(Bool.self, forKey: .readOnly))
    }
}

// MARK: - Results of operations

extension FocusResult {
    /// `{"result": "acquired"}`.
    public var json: JSONValue { ["result": jsonName] }

    private struct Answer: Decodable {
        var result: Readable<FocusResult>
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        self = try Answer(answer: json, root: "focus").result.value
    }
}

extension Shot: JSONReadable {
    /// `{"counter", "latencyMs", "cameraTime", "confirmedByCounter", "confirmed"}`, and
    /// `"resent"` when a request of the shot was sent again.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "counter": .int(counter), "latencyMs": .milliseconds(latency),
            "cameraTime": cameraTime.map(JSONValue.unsigned) ?? .null, "confirmedByCounter": .bool(confirmedByCounter),
            "confirmed": .bool(confirmed),
        ]
        if resent > 0 { members["resent"] = .int(resent) }
        return .object(members)
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "shot")
    }

    private struct Members: Decodable {
        var counter: Int
        var latencyMs: Milliseconds
        var cameraTime: Unsigned?
        var confirmedByCounter: Bool
        var resent: Int?
        var confirmed: Bool?
    }

    init(reading decoder: any Decoder) throws {
        let members = try Members(from: decoder)
        self.init(counter: members.counter, latency: members.latencyMs.duration, cameraTime: members.cameraTime?.value,
                  confirmedByCounter: members.confirmedByCounter, resent: members.resent ?? 0,
                  // Absent from a daemon older than the member: its shots were all confirmed.
                  confirmed: members.confirmed ?? true)
    }
}

extension BulbExposure.Ending: JSONReadable {
    init(reading decoder: any Decoder) throws {
        self = try decoder.named(Self.init(rawValue:), otherwise: { "'\($0)' is not deadline or stoppedEarly" })
    }
}

extension BulbExposure: JSONReadable {
    /// `{"shot": {…}, "exposedMs", "ending": "deadline" | "stoppedEarly"}`.
    public var json: JSONValue {
        ["shot": shot.json, "exposedMs": exposed.map(JSONValue.milliseconds) ?? .null, "ending": .string(ending.rawValue)]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "bulb")
    }

    private enum Member: String, CodingKey {
        case shot, exposedMs, ending
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        self.init(shot: try members.decode(Shot.self, forKey: .shot),
                  exposed: try members.decodeIfPresent(Milliseconds.self, forKey: .exposedMs)?.duration,
                  ending: try members.decode(Ending.self, forKey: .ending))
    }
}

extension WallTime {
    /// `{"unixMilliseconds", "utcOffsetMinutes"}`.
    public var json: JSONValue {
        ["unixMilliseconds": .unsigned(unixMilliseconds), "utcOffsetMinutes": .int(utcOffsetMinutes)]
    }

    private struct Members: Decodable {
        var unixMilliseconds: UInt64
        var utcOffsetMinutes: Int
    }

    /// Reads what ``json`` writes, strictly (it is ``API/setTime``'s body); what does not fit
    /// is named by its path, an instant past the module's clock (``latestUnixMilliseconds``) too.
    public init(json: JSONValue) throws(JSONShapeError) {
        let members = try StrictJSONDecoder().decode(Members.self, from: json)
        guard members.unixMilliseconds <= Self.latestUnixMilliseconds else {
            throw JSONShapeError(path: "unixMilliseconds", problem: "must be Unix milliseconds, a whole number from 0 to \(Self.latestUnixMilliseconds)")
        }
        self.init(unixMilliseconds: members.unixMilliseconds, utcOffsetMinutes: members.utcOffsetMinutes)
    }
}

extension GeoPosition {
    /// `{"latitude", "longitude", "altitudeMetres", "fixUnixMilliseconds"}`, degrees north and east.
    public var json: JSONValue {
        [
            "latitude": .number(latitude), "longitude": .number(longitude),
            "altitudeMetres": altitude.map(JSONValue.number) ?? .null, "fixUnixMilliseconds": .unsigned(fixTime),
        ]
    }

    private struct Members: Decodable {
        var latitude: Double
        var longitude: Double
        var altitudeMetres: Double?
        var fixUnixMilliseconds: UInt64
    }

    /// Reads what ``json`` writes, strictly (it is ``API/geotag``'s body); what does not fit is
    /// named by its path, a fix time past the module's clock (``WallTime/latestUnixMilliseconds``) too.
    public init(json: JSONValue) throws(JSONShapeError) {
        let members = try StrictJSONDecoder().decode(Members.self, from: json)
        guard members.fixUnixMilliseconds <= WallTime.latestUnixMilliseconds else {
            throw JSONShapeError(path: "fixUnixMilliseconds",
                                 problem: "must be Unix milliseconds, a whole number from 0 to \(WallTime.latestUnixMilliseconds)")
        }
        self.init(latitude: members.latitude, longitude: members.longitude, altitude: members.altitudeMetres,
                  fixTime: members.fixUnixMilliseconds)
    }
}

extension SavedFile: JSONReadable {
    /// `{"path", "bytes", "cameraPath", "frame", "shotCounter"}`.
    public var json: JSONValue {
        [
            "path": .string(path), "bytes": .int(bytes), "cameraPath": .string(cameraPath),
            "frame": .optional(frame), "shotCounter": .int(shotCounter),
        ]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "file")
    }

    private struct Members: Decodable {
        var path: String
        var bytes: Int
        var cameraPath: String
        var frame: Int?
        var shotCounter: Int
    }

    init(reading decoder: any Decoder) throws {
        let members = try Members(from: decoder)
        self.init(path: members.path, bytes: members.bytes, cameraPath: members.cameraPath, frame: members.frame,
                  shotCounter: members.shotCounter)
    }
}

extension DeviceFailure: JSONReadable {
    /// `{"kind": "busy", "message": "…"}`.
    public var json: JSONValue { ["kind": .string(kind.rawValue), "message": .string(message)] }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "failure")
    }

    private enum Member: String, CodingKey {
        case kind, message
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        self.init(try members.decode(Kind.self, forKey: .kind), try members.decode(String.self, forKey: .message))
    }
}

// MARK: - Events

extension CameraEvent: JSONReadable {
    /// The event's name, as a Server-Sent Event names it: `shotCompleted`, `settingChanged`.
    public var jsonName: String {
        switch self {
        case .connection: "connection"
        case .shotCompleted: "shotCompleted"
        case .settingChanged: "settingChanged"
        case .battery: "battery"
        case .storage: "storage"
        case .cameraPower: "cameraPower"
        case .busy: "busy"
        case .meteredEV: "meteredEV"
        case .bulbDeadlineFired: "bulbDeadlineFired"
        case .error: "error"
        case .missedEvents: "missedEvents"
        case .fileSaved: "fileSaved"
        case .fileNotSaved: "fileNotSaved"
        }
    }

    /// The event's fields, without its name.
    public var jsonFields: [String: JSONValue] {
        switch self {
        case .connection(let state): state.json.objectValue ?? [:]
        case .shotCompleted(let counter, let cameraTime):
            ["counter": .int(counter), "cameraTime": cameraTime.map(JSONValue.unsigned) ?? .null]
        case .settingChanged(let value): value.json.objectValue ?? [:]
        case .battery(let module, let camera): ["moduleBattery": .int(module), "cameraBattery": .optional(camera)]
        case .storage(let state, let shotsRemaining): ["storage": state.jsonName, "shotsRemaining": .optional(shotsRemaining)]
        case .cameraPower(let power): ["cameraPower": power.jsonName]
        case .busy(let busy): ["busy": .bool(busy)]
        case .meteredEV(let stops): ["meteredEV": .string(stops.text)]
        case .bulbDeadlineFired(let duration): ["seconds": .seconds(duration)]
        case .error(let status, let message): ["status": .string(status.description), "message": .optional(message)]
        case .missedEvents(let count): ["count": .int(count)]
        case .fileSaved(let file): file.json.objectValue ?? [:]
        case .fileNotSaved(let cameraPath, let reason): ["cameraPath": .string(cameraPath), "reason": .string(reason)]
        }
    }

    /// `{"event": "<name>", …fields}`.
    public var json: JSONValue { .object(jsonFields.merging(["event": .string(jsonName)]) { _, name in name }) }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "event")
    }

    /// The event named `name` (a Server-Sent Event's `event:`) with the fields of `fields` (its
    /// `data:`): the event whose ``json`` is the fields and the name.
    public init(name: String, fields: JSONValue) throws(JSONShapeError) {
        try self.init(answer: fields.merging(["event": .string(name)]), root: name)
    }

    private enum Member: String, CodingKey {
        case event, counter, cameraTime, moduleBattery, cameraBattery, storage, shotsRemaining, cameraPower, busy, meteredEV, seconds,
             status, message, count, cameraPath, reason
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        switch try members.decode(String.self, forKey: .event) {
        case "connection": self = .connection(try ConnectionState(reading: decoder))
        case "shotCompleted":
            self = .shotCompleted(counter: try members.decode(Int.self, forKey: .counter),
                                  cameraTime: try members.decodeIfPresent(Unsigned.self, forKey: .cameraTime)?.value)
        case "settingChanged": self = .settingChanged(try SettingValue(reading: decoder))
        case "battery":
            self = .battery(module: try members.decode(Int.self, forKey: .moduleBattery),
                            camera: try members.decodeIfPresent(Int.self, forKey: .cameraBattery))
        case "storage":
            self = .storage(try members.decode(StorageState.self, forKey: .storage),
                            shotsRemaining: try members.decodeIfPresent(Int.self, forKey: .shotsRemaining))
        case "cameraPower": self = .cameraPower(try members.decode(CameraPower.self, forKey: .cameraPower))
        case "busy": self = .busy(try members.decode(Bool.self, forKey: .busy))
        case "meteredEV": self = .meteredEV(try members.decode(ExposureStops.self, forKey: .meteredEV))
        case "bulbDeadlineFired": self = .bulbDeadlineFired(try members.decode(Seconds.self, forKey: .seconds).duration)
        case "error":
            self = .error(FailureReason(name: try members.decode(String.self, forKey: .status)),
                          message: try members.decodeIfPresent(String.self, forKey: .message))
        case "missedEvents": self = .missedEvents(try members.decode(Int.self, forKey: .count))
        case "fileSaved": self = .fileSaved(try SavedFile(reading: decoder))
        case "fileNotSaved":
            self = .fileNotSaved(cameraPath: try members.decode(String.self, forKey: .cameraPath),
                                 reason: try members.decode(String.self, forKey: .reason))
        case let name:
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(name)' is not a camera event"))
        }
    }
}

// MARK: - Errors

extension CameraError: JSONReadable {
    /// `{"case": "<case name>", …its values}`: everything needed to rebuild the error, so that a
    /// client rethrows the error the camera threw and prints the same words.
    public var json: JSONValue {
        switch self {
        case .unknownSetting(let name): ["case": "unknownSetting", "name": .string(name)]
        case .unreadableValue(let setting, let text):
            ["case": "unreadableValue", "setting": .string(setting.userName), "text": .string(text)]
        case .settingNotOffered(let setting): ["case": "settingNotOffered", "setting": .string(setting.userName)]
        case .readOnly(let setting): ["case": "readOnly", "setting": .string(setting.userName)]
        case .valueNotOffered(let value, let nearest, let offered):
            [
                "case": "valueNotOffered", "value": value.json,
                "nearest": .array(nearest.map(\.json)), "offered": .array(offered.map(\.json)),
            ]
        case .invalidArgument(let why): ["case": "invalidArgument", "reason": .string(why)]
        case .unsupported(let what): ["case": "unsupported", "what": .string(what)]
        case .focusFailed: ["case": "focusFailed"]
        case .notInBulbMode(let current): ["case": "notInBulbMode", "current": current?.json ?? .null]
        case .refused(let operation, let reason, let message):
            ["case": "refused", "opcode": .string(operation), "status": .string(reason.description), "message": .optional(message)]
        case .timedOut(let operation, let after): ["case": "timedOut", "opcode": .string(operation), "afterMs": .milliseconds(after)]
        case .shotNotReported(let after): ["case": "shotNotReported", "afterMs": .milliseconds(after)]
        case .notConnected(let why): ["case": "notConnected", "reason": .string(why)]
        case .cancelled: ["case": "cancelled"]
        case .device(let failure): ["case": "device", "failure": failure.json]
        }
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "error")
    }

    private enum Member: String, CodingKey {
        case `case`, name, setting, text, value, nearest, offered, reason, what, current, opcode, status, message, afterMs, failure
    }

    init(reading decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Member.self)
        switch try members.decode(String.self, forKey: .case) {
        case "unknownSetting": self = .unknownSetting(try members.decode(String.self, forKey: .name))
        case "unreadableValue":
            self = .unreadableValue(try members.decode(SettingID.self, forKey: .setting), try members.decode(String.self, forKey: .text))
        case "settingNotOffered": self = .settingNotOffered(try members.decode(SettingID.self, forKey: .setting))
        case "readOnly": self = .readOnly(try members.decode(SettingID.self, forKey: .setting))
        case "valueNotOffered":
            self = .valueNotOffered(try members.decode(SettingValue.self, forKey: .value),
                                    nearest: try members.decode([SettingValue].self, forKey: .nearest),
                                    offered: try members.decode([SettingValue].self, forKey: .offered))
        case "invalidArgument": self = .invalidArgument(try members.decode(String.self, forKey: .reason))
        case "unsupported": self = .unsupported(try members.decode(String.self, forKey: .what))
        case "focusFailed": self = .focusFailed
        case "notInBulbMode": self = .notInBulbMode(current: try members.decodeIfPresent(SettingValue.self, forKey: .current))
        case "refused":
            self = .refused(try members.decode(String.self, forKey: .opcode), FailureReason(name: try members.decode(String.self, forKey: .status)),
                            message: try members.decodeIfPresent(String.self, forKey: .message))
        case "timedOut":
            self = .timedOut(try members.decode(String.self, forKey: .opcode), after: try members.decode(Milliseconds.self, forKey: .afterMs).duration)
        case "shotNotReported": self = .shotNotReported(after: try members.decode(Milliseconds.self, forKey: .afterMs).duration)
        case "notConnected": self = .notConnected(try members.decode(String.self, forKey: .reason))
        case "cancelled": self = .cancelled
        case "device": self = .device(try members.decode(DeviceFailure.self, forKey: .failure))
        case let other: throw DecodingError.dataCorruptedError(forKey: .case, in: members, debugDescription: "'\(other)' is not a camera error")
        }
    }
}
