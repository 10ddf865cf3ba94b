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

/// A JSON value and where it sits, so that every decoding failure names its path.
struct JSONCursor {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    func fail(_ problem: String) -> JSONShapeError { JSONShapeError(path: path, problem: problem) }

    func object() throws(JSONShapeError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw fail("expected an object") }
        return members
    }

    /// The member `key`, which must be present (null counts as present).
    func member(_ key: String) throws(JSONShapeError) -> JSONCursor {
        guard let found = try object()[key] else { throw JSONShapeError(path: "\(path).\(key)", problem: "missing") }
        return JSONCursor(found, path: "\(path).\(key)")
    }

    /// The member `key`, or nil when it is absent or null.
    func optional(_ key: String) throws(JSONShapeError) -> JSONCursor? {
        guard let found = try object()[key], found != .null else { return nil }
        return JSONCursor(found, path: "\(path).\(key)")
    }

    func string() throws(JSONShapeError) -> String {
        guard case .string(let text) = value else { throw fail("expected a string") }
        return text
    }

    func bool() throws(JSONShapeError) -> Bool {
        guard case .bool(let flag) = value else { throw fail("expected true or false") }
        return flag
    }

    func int64() throws(JSONShapeError) -> Int64 {
        guard let number = value.integerValue else { throw fail("expected an integer") }
        return number
    }

    func int() throws(JSONShapeError) -> Int {
        guard let number = Int(exactly: try int64()) else { throw fail("expected an integer") }
        return number
    }

    /// An integer in `T`'s range.
    func integer<T: FixedWidthInteger>(_: T.Type) throws(JSONShapeError) -> T {
        if case .string(let digits) = value, let number = T(digits) { return number }
        guard let number = T(exactly: try int64()) else { throw fail("expected an integer from \(T.min) to \(T.max)") }
        return number
    }

    func double() throws(JSONShapeError) -> Double {
        switch value {
        case .number(let number): return number
        case .integer(let number): return Double(number)
        default: throw fail("expected a number")
        }
    }

    func array() throws(JSONShapeError) -> [JSONCursor] {
        guard case .array(let elements) = value else { throw fail("expected an array") }
        return elements.enumerated().map { JSONCursor($0.element, path: "\(path)[\($0.offset)]") }
    }

    /// A named value of a wire enumeration; `unknown(7)` for one this version does not know.
    func wire<T: WireEnumeration>(_: T.Type) throws(JSONShapeError) -> T {
        let name = try string()
        if let known = T(name: name) { return known }
        if name.hasPrefix("unknown("), name.hasSuffix(")"), let raw = UInt8(name.dropFirst(8).dropLast()) {
            return T(rawValue: raw)
        }
        throw fail("'\(name)' is not one of \(T.known.map(\.1).joined(separator: ", "))")
    }

    /// A duration written as milliseconds, possibly fractional.
    func milliseconds() throws(JSONShapeError) -> Duration {
        let number = try double()
        guard number.isFinite, abs(number) < 9e12 else { throw fail("expected milliseconds") }
        if case .integer(let whole) = value { return .milliseconds(whole) }
        return .nanoseconds(Int64((number * 1_000_000).rounded()))
    }

    /// A duration written as seconds, possibly fractional.
    func seconds() throws(JSONShapeError) -> Duration {
        let number = try double()
        guard number.isFinite, abs(number) < 9e9 else { throw fail("expected seconds") }
        if case .integer(let whole) = value { return .seconds(whole) }
        return .nanoseconds(Int64((number * 1_000_000_000).rounded()))
    }

    func setting() throws(JSONShapeError) -> SettingID {
        let name = try string()
        if let known = SettingID(userName: name) { return known }
        if name.hasPrefix("setting-"), let raw = UInt8(name.dropFirst(8)) { return SettingID(rawValue: raw) }
        throw fail("there is no setting called '\(name)'")
    }
}

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

extension WireEnumeration {
    /// The value's name, or `unknown(7)` for a value this version does not know.
    var jsonName: JSONValue { .string(description) }
}

// MARK: - Identity and status

extension CameraIdentity {
    /// `{"name", "firmwareVersion", "protocolVersion", "capabilities": ["shoot", …], "cameraModel"}`;
    /// capability bits this version has no name for go in `otherCapabilityBits`.
    public var json: JSONValue {
        let named = Capabilities.known.reduce(into: Capabilities()) { $0.formUnion($1.0) }
        var members: [String: JSONValue] = [
            "name": .string(name),
            "firmwareVersion": .optional(firmwareVersion),
            "protocolVersion": .optional(protocolVersion.map { Int($0) }),
            "capabilities": .array(capabilities.names.map(JSONValue.string)),
            "cameraModel": .optional(cameraModel),
        ]
        let other = capabilities.subtracting(named).rawValue
        if other != 0 { members["otherCapabilityBits"] = .int(Int(other)) }
        return .object(members)
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(JSONCursor(json, path: "identity"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        var capabilities = Capabilities()
        for element in try cursor.member("capabilities").array() {
            let name = try element.string()
            guard let known = Capabilities.known.first(where: { $0.1 == name }) else {
                throw element.fail("'\(name)' is not a capability")
            }
            capabilities.insert(known.0)
        }
        if let other = try cursor.optional("otherCapabilityBits") {
            capabilities.formUnion(Capabilities(rawValue: try other.integer(UInt32.self)))
        }
        self.init(
            name: try cursor.member("name").string(),
            firmwareVersion: try cursor.optional("firmwareVersion")?.string(),
            protocolVersion: try cursor.optional("protocolVersion")?.integer(UInt8.self),
            capabilities: capabilities,
            cameraModel: try cursor.optional("cameraModel")?.string())
    }
}

extension ConnectionFailure {
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

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        let kind = cursor.path + ".kind"
        switch try cursor.member("kind").string() {
        case "notFound": self = .notFound
        case "notAModule": self = .notAModule(try cursor.member("reason").string())
        case "incompatible": self = .incompatible(try cursor.member("reason").string())
        case "gaveUp":
            self = .gaveUp(attempts: try cursor.member("attempts").int(), lastError: try cursor.member("lastError").string())
        case let other: throw JSONShapeError(path: kind, problem: "'\(other)' is not a connection failure")
        }
    }
}

extension ConnectionState {
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
        try self.init(JSONCursor(json, path: "connection"))
    }

    /// Reads the members of ``json`` from an object that may hold others too.
    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        let phaseCursor = try cursor.member("connection")
        let name = try phaseCursor.string()
        guard let phase = ConnectionPhase(rawValue: name) else {
            throw phaseCursor.fail("'\(name)' is not one of \(ConnectionPhase.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch phase {
        case .idle: self = .idle
        case .scanning: self = .scanning
        case .connecting: self = .connecting
        case .resolvingServices: self = .resolvingServices
        case .handshaking: self = .handshaking
        case .ready: self = .ready
        case .disconnecting: self = .disconnecting
        case .reconnecting:
            self = .reconnecting(attempt: try cursor.member("reconnectAttempt").int(),
                                 nextDelay: try cursor.member("reconnectDelayMs").milliseconds())
        case .failed: self = .failed(try ConnectionFailure(cursor.member("failure")))
        }
    }
}

extension CameraStatus {
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
        try self.init(JSONCursor(json, path: "status"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        self.init(
            connection: try ConnectionState(cursor),
            moduleBattery: try cursor.optional("moduleBattery")?.int(),
            cameraBattery: try cursor.optional("cameraBattery")?.int(),
            storage: try cursor.optional("storage")?.wire(StorageState.self),
            shotsRemaining: try cursor.optional("shotsRemaining")?.int(),
            cameraPower: try cursor.member("cameraPower").wire(CameraPower.self),
            exposureMode: try cursor.optional("exposureMode")?.wire(ExposureMode.self),
            meteredEV: try cursor.optional("meteredEV")?.stops(),
            busy: try cursor.member("busy").bool(),
            shotCounter: try cursor.member("shotCounter").int())
    }
}

extension JSONCursor {
    /// Exposure stops in their text form (`+1 1/3`).
    func stops() throws(JSONShapeError) -> ExposureStops {
        let text = try string()
        guard let stops = ExposureStops(text: text) else { throw fail("'\(text)' is not a number of stops like +1 1/3") }
        return stops
    }
}

// MARK: - Settings

extension SettingValue {
    /// `{"setting": "shutter-speed", "value": "1/125", "raw": 1048701}`: the setting by the name
    /// people type, the value as the camera shows it, and its wire number, which rebuilds it exactly.
    public var json: JSONValue {
        ["setting": .string(setting.userName), "value": .string(text), "raw": .integer(Int64(rawValue))]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(JSONCursor(json, path: "value"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        try self.init(cursor, setting: try cursor.member("setting").setting())
    }

    /// A value whose setting the surrounding document names.
    init(_ cursor: JSONCursor, setting: SettingID) throws(JSONShapeError) {
        let raw = try cursor.member("raw")
        guard let value = SettingValue(setting: setting, rawValue: try raw.integer(UInt32.self)) else {
            throw raw.fail("not " + English.withArticle("\(setting.displayName) value"))
        }
        self = value
    }

    /// The value without its setting, for lists of one setting's values.
    var choiceJSON: JSONValue { ["value": .string(text), "raw": .integer(Int64(rawValue))] }
}

extension SettingDescriptor {
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
        try self.init(JSONCursor(json, path: "setting"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        let setting = try cursor.member("setting").setting()
        var choices: [SettingValue] = []
        for element in try cursor.member("choices").array() { choices.append(try SettingValue(element, setting: setting)) }
        self.init(setting: setting, value: try SettingValue(cursor, setting: setting), choices: choices,
                  readOnly: try cursor.member("readOnly").bool())
    }
}

// MARK: - Results of operations

extension FocusResult {
    /// `{"result": "acquired"}`.
    public var json: JSONValue { ["result": jsonName] }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        self = try JSONCursor(json, path: "focus").member("result").wire(FocusResult.self)
    }
}

extension Shot {
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
        try self.init(JSONCursor(json, path: "shot"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        self.init(counter: try cursor.member("counter").int(), latency: try cursor.member("latencyMs").milliseconds(),
                  cameraTime: try cursor.optional("cameraTime")?.integer(UInt64.self),
                  confirmedByCounter: try cursor.member("confirmedByCounter").bool(),
                  resent: try cursor.optional("resent")?.int() ?? 0,
                  // Absent from a daemon older than the member: its shots were all confirmed.
                  confirmed: try cursor.optional("confirmed")?.bool() ?? true)
    }
}

extension BulbExposure {
    /// `{"shot": {…}, "exposedMs", "ending": "deadline" | "stoppedEarly"}`.
    public var json: JSONValue {
        ["shot": shot.json, "exposedMs": exposed.map(JSONValue.milliseconds) ?? .null, "ending": .string(ending.rawValue)]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "bulb")
        let endingCursor = try cursor.member("ending")
        let name = try endingCursor.string()
        guard let ending = Ending(rawValue: name) else { throw endingCursor.fail("'\(name)' is not deadline or stoppedEarly") }
        self.init(shot: try Shot(cursor.member("shot")), exposed: try cursor.optional("exposedMs")?.milliseconds(), ending: ending)
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

extension SavedFile {
    /// `{"path", "bytes", "cameraPath", "frame", "shotCounter"}`.
    public var json: JSONValue {
        [
            "path": .string(path), "bytes": .int(bytes), "cameraPath": .string(cameraPath),
            "frame": .optional(frame), "shotCounter": .int(shotCounter),
        ]
    }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(JSONCursor(json, path: "file"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        self.init(path: try cursor.member("path").string(), bytes: try cursor.member("bytes").int(),
                  cameraPath: try cursor.member("cameraPath").string(), frame: try cursor.optional("frame")?.int(),
                  shotCounter: try cursor.member("shotCounter").int())
    }
}

extension DeviceFailure {
    /// `{"kind": "busy", "message": "…"}`.
    public var json: JSONValue { ["kind": .string(kind.rawValue), "message": .string(message)] }

    /// Reads what ``json`` writes; what does not fit is named by its path.
    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(JSONCursor(json, path: "failure"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        let kindCursor = try cursor.member("kind")
        let name = try kindCursor.string()
        guard let kind = Kind(rawValue: name) else { throw kindCursor.fail("'\(name)' is not a device failure kind") }
        self.init(kind, try cursor.member("message").string())
    }
}

// MARK: - Events

extension CameraEvent {
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
        let cursor = JSONCursor(json, path: "event")
        try self.init(name: try cursor.member("event").string(), fields: cursor)
    }

    /// The event named `name` (a Server-Sent Event's `event:`) with the fields of `fields` (its `data:`).
    public init(name: String, fields: JSONValue) throws(JSONShapeError) {
        try self.init(name: name, fields: JSONCursor(fields, path: name))
    }

    init(name: String, fields cursor: JSONCursor) throws(JSONShapeError) {
        switch name {
        case "connection": self = .connection(try ConnectionState(cursor))
        case "shotCompleted":
            self = .shotCompleted(counter: try cursor.member("counter").int(),
                                  cameraTime: try cursor.optional("cameraTime")?.integer(UInt64.self))
        case "settingChanged": self = .settingChanged(try SettingValue(cursor))
        case "battery":
            self = .battery(module: try cursor.member("moduleBattery").int(), camera: try cursor.optional("cameraBattery")?.int())
        case "storage":
            self = .storage(try cursor.member("storage").wire(StorageState.self),
                            shotsRemaining: try cursor.optional("shotsRemaining")?.int())
        case "cameraPower": self = .cameraPower(try cursor.member("cameraPower").wire(CameraPower.self))
        case "busy": self = .busy(try cursor.member("busy").bool())
        case "meteredEV": self = .meteredEV(try cursor.member("meteredEV").stops())
        case "bulbDeadlineFired": self = .bulbDeadlineFired(try cursor.member("seconds").seconds())
        case "error":
            self = .error(FailureReason(name: try cursor.member("status").string()), message: try cursor.optional("message")?.string())
        case "missedEvents": self = .missedEvents(try cursor.member("count").int())
        case "fileSaved": self = .fileSaved(try SavedFile(cursor))
        case "fileNotSaved":
            self = .fileNotSaved(cameraPath: try cursor.member("cameraPath").string(), reason: try cursor.member("reason").string())
        default: throw JSONShapeError(path: cursor.path, problem: "'\(name)' is not a camera event")
        }
    }
}

// MARK: - Errors

extension CameraError {
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
        try self.init(JSONCursor(json, path: "error"))
    }

    init(_ cursor: JSONCursor) throws(JSONShapeError) {
        let caseCursor = try cursor.member("case")
        switch try caseCursor.string() {
        case "unknownSetting": self = .unknownSetting(try cursor.member("name").string())
        case "unreadableValue": self = .unreadableValue(try cursor.member("setting").setting(), try cursor.member("text").string())
        case "settingNotOffered": self = .settingNotOffered(try cursor.member("setting").setting())
        case "readOnly": self = .readOnly(try cursor.member("setting").setting())
        case "valueNotOffered":
            var nearest: [SettingValue] = []
            for element in try cursor.member("nearest").array() { nearest.append(try SettingValue(element)) }
            var offered: [SettingValue] = []
            for element in try cursor.member("offered").array() { offered.append(try SettingValue(element)) }
            self = .valueNotOffered(try SettingValue(cursor.member("value")), nearest: nearest, offered: offered)
        case "invalidArgument": self = .invalidArgument(try cursor.member("reason").string())
        case "unsupported": self = .unsupported(try cursor.member("what").string())
        case "focusFailed": self = .focusFailed
        case "notInBulbMode": self = .notInBulbMode(current: try cursor.optional("current").map { (current) throws(JSONShapeError) in try SettingValue(current) })
        case "refused":
            self = .refused(try cursor.member("opcode").string(), FailureReason(name: try cursor.member("status").string()),
                            message: try cursor.optional("message")?.string())
        case "timedOut":
            self = .timedOut(try cursor.member("opcode").string(), after: try cursor.member("afterMs").milliseconds())
        case "shotNotReported": self = .shotNotReported(after: try cursor.member("afterMs").milliseconds())
        case "notConnected": self = .notConnected(try cursor.member("reason").string())
        case "cancelled": self = .cancelled
        case "device": self = .device(try DeviceFailure(cursor.member("failure")))
        case let other: throw caseCursor.fail("'\(other)' is not a camera error")
        }
    }
}
