public import GATT

extension GoPro {
    /// TLV commands, written to ``GoPro/command``.
    public enum CommandID: UInt8, CaseIterable, Hashable, Sendable {
        case setShutter = 0x01
        case sleep = 0x05
        case setDateTime = 0x0D
        case getDateTime = 0x0E
        /// Date and time with the UTC offset and daylight saving (GoPro's SDK sets it on opening).
        case setLocalDateTime = 0x0F
        case getHardwareInfo = 0x3C
        case loadPresetGroup = 0x3E
        /// "Set Analytics" in the ID table: tells the camera a third-party client is connected
        /// (GoPro's SDK sends it on opening, as `set_third_party_client_info`).
        case setThirdPartyClientInfo = 0x50
        case getOpenGoProVersion = 0x51
    }

    /// Settings, written to ``GoPro/settings``. Only those this project sends or its tests cite.
    public enum SettingID: UInt8, CaseIterable, Hashable, Sendable {
        case videoResolution = 0x02
        case framesPerSecond = 0x03
        /// The LED setting; its special value 0x42 is the keep-alive.
        case led = 0x5B
    }

    /// Queries, written to ``GoPro/query``; the answer on ``GoPro/queryResponse`` starts with
    /// the same ID, and an asynchronous push with the register ID | 0x80.
    public enum QueryID: UInt8, CaseIterable, Hashable, Sendable {
        case getSettingValues = 0x12
        case getStatusValues = 0x13
        case registerSettingUpdates = 0x52
        case registerStatusUpdates = 0x53
        case unregisterSettingUpdates = 0x72
        case unregisterStatusUpdates = 0x73
        case settingUpdate = 0x92
        case statusUpdate = 0x93
    }

    /// A camera status: what a query asks for and a push reports.
    public struct StatusID: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 1 while the camera cannot take commands (other than queries).
        public static let busy = StatusID(rawValue: 8)
        /// 1 while it encodes: recording a video, or writing a photo.
        public static let encoding = StatusID(rawValue: 10)
        /// The internal battery's charge, percent.
        public static let batteryPercent = StatusID(rawValue: 70)
        /// 1 once fully booted and ready.
        public static let ready = StatusID(rawValue: 82)
        /// The active ``PresetGroup``'s ID.
        public static let presetGroup = StatusID(rawValue: 96)
    }

    /// The groups of presets a camera switches between; the shutter records a video in the
    /// video group and takes a photo in the photo group.
    public enum PresetGroup: UInt16, CaseIterable, Hashable, Sendable {
        case video = 1000
        case photo = 1001
        case timelapse = 1002
    }

    /// Who drives the camera (`EnumCameraControlStatus`): a client claims external control so
    /// that the camera leaves its menus to it.
    public enum CameraControl: UInt8, CaseIterable, Hashable, Sendable {
        case idle = 0
        case control = 1
        case externalControl = 2
    }

    /// The status byte of a TLV response.
    public enum ResultStatus: Hashable, Sendable, CustomStringConvertible {
        case success
        /// The camera could not: busy, encoding, or in a menu.
        case error
        case invalidParameter
        /// 3–255, reserved.
        case reserved(UInt8)

        public init(_ byte: UInt8) {
            switch byte {
            case 0: self = .success
            case 1: self = .error
            case 2: self = .invalidParameter
            default: self = .reserved(byte)
            }
        }

        public var byte: UInt8 {
            switch self {
            case .success: 0
            case .error: 1
            case .invalidParameter: 2
            case .reserved(let byte): byte
            }
        }

        public var description: String {
            switch self {
            case .success: "success"
            case .error: "error (status 1: the camera is busy, encoding or in a menu)"
            case .invalidParameter: "invalid parameter (status 2)"
            case .reserved(let byte): "status \(byte)"
            }
        }
    }

    /// `ResponseGeneric.result`, the outcome of a protobuf request.
    public enum GenericResult: UInt64, CaseIterable, Hashable, Sendable {
        case unknown = 0, success, illFormed, notSupported, argumentOutOfBounds, argumentInvalid, resourceNotAvailable
    }

    /// A local date and time on the camera's clock (Set Date Time, command 0x0D): 7 bytes,
    /// year big-endian.
    public struct DateTime: Hashable, Sendable, CustomStringConvertible {
        public var year: UInt16
        public var month: UInt8
        public var day: UInt8
        public var hour: UInt8
        public var minute: UInt8
        public var second: UInt8

        /// Throws for a field out of its calendar range.
        public init(year: UInt16, month: UInt8, day: UInt8, hour: UInt8, minute: UInt8, second: UInt8) throws(MalformedMessage) {
            guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
                throw MalformedMessage(.gopro, "no such date and time: \(year)-\(month)-\(day) \(hour):\(minute):\(second)")
            }
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }

        public init(bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 7 else { throw MalformedMessage(.gopro, "a date and time has 7 bytes, not \(bytes.count)") }
            try self.init(year: UInt16(bytes[0]) << 8 | UInt16(bytes[1]), month: bytes[2], day: bytes[3],
                          hour: bytes[4], minute: bytes[5], second: bytes[6])
        }

        public var bytes: [UInt8] { [UInt8(year >> 8), UInt8(year & 0xFF), month, day, hour, minute, second] }

        public var description: String {
            func two(_ value: UInt8) -> String { String(value).leftPadded(to: 2) }
            return String(year).leftPadded(to: 4) + "-\(two(month))-\(two(day)) \(two(hour)):\(two(minute)):\(two(second))"
        }
    }

    /// Names a protobuf message: its feature and action bytes.
    public struct ProtobufID: Hashable, Sendable {
        public var feature: UInt8
        public var action: UInt8
        public init(feature: UInt8, action: UInt8) {
            self.feature = feature
            self.action = action
        }

        /// Set Camera Control Status.
        public static let setCameraControl = ProtobufID(feature: 0xF1, action: 0x69)
        /// Its response: the request's action | 0x80.
        public static let setCameraControlResponse = ProtobufID(feature: 0xF1, action: 0xE9)
        /// Get Last Captured Media's response.
        public static let lastCapturedMediaResponse = ProtobufID(feature: 0xF5, action: 0xED)
        /// Set Pairing State (`RequestPairingFinish`) on ``GoPro/networkManagementCommand``: the
        /// client tells the camera pairing is done, so that it leaves its pairing screen.
        public static let pairingFinished = ProtobufID(feature: 0x03, action: 0x01)
        /// Its response, a `ResponseGeneric`.
        public static let pairingFinishedResponse = ProtobufID(feature: 0x03, action: 0x81)
        /// Get COHN Status (`RequestGetCOHNStatus`), a query, optionally registering for changes.
        public static let getCOHNStatus = ProtobufID(feature: 0xF5, action: 0x6F)
        /// Its answer and every later push, `NotifyCOHNStatus`.
        public static let cohnStatus = ProtobufID(feature: 0xF5, action: 0xEF)

        /// The protobuf messages a camera sends that this codec knows: answers and pushes only. A
        /// notification whose first two bytes are one of them is protobuf; anything else is TLV
        /// (Open GoPro's demultiplexing rule; GoPro's SDK keeps camera-to-client IDs alone too,
        /// `validResponseProtobufIds` in `parsers/response.py`). With a request's ID here, a
        /// setting 0x03 refused with status 1 (`03 01`) would read as "pairing finished". IDs: the
        /// ID tables of gopro/OpenGoPro `docs/ble/protocol/id_tables`.
        public static let fromCamera: Set<ProtobufID> = [setCameraControlResponse, lastCapturedMediaResponse,
                                                         pairingFinishedResponse, cohnStatus]

        public var isResponse: Bool { action & 0x80 != 0 }

        /// The ID of a request's response: the same feature, the action | 0x80.
        public var response: ProtobufID { ProtobufID(feature: feature, action: action | 0x80) }
    }

    /// What a client sends: each request knows its characteristic and its message bytes
    /// (before packetising).
    public enum Request: Hashable, Sendable {
        /// Shutter on (take a photo, start a video) or off (stop a video).
        case setShutter(Bool)
        case sleep
        case setDateTime(DateTime)
        /// Answers once the camera is ready for BLE control: the readiness poll.
        case getHardwareInfo
        case loadPresetGroup(PresetGroup)
        case getOpenGoProVersion
        case setSetting(SettingID, UInt8)
        /// Setting 0x5B = 0x42, every 3 s, or the camera powers down.
        case keepAlive
        case getStatuses([StatusID])
        /// Registers for pushes of these statuses; the response carries their values now.
        case registerStatusUpdates([StatusID])
        case setCameraControl(CameraControl)
        /// Set Local Date Time: the date and time, the UTC offset in minutes, daylight saving.
        case setLocalDateTime(DateTime, utcOffsetMinutes: Int16, daylightSaving: Bool)
        /// Set Analytics (0x50): the client says it is a third-party one.
        case setThirdPartyClientInfo
        /// Pairing finished (result SUCCESS), with the client's name.
        case pairingFinished(clientName: String)
        /// Get COHN Status, registering for its changes or not.
        case getCOHNStatus(register: Bool)

        /// The protobuf message it is, nil for a TLV one.
        public var protobufID: ProtobufID? {
            switch self {
            case .setCameraControl: .setCameraControl
            case .pairingFinished: .pairingFinished
            case .getCOHNStatus: .getCOHNStatus
            default: nil
            }
        }

        /// The value Set LED takes to mean "keep alive".
        public static let keepAliveValue: UInt8 = 0x42

        /// Where the request is written.
        public var characteristic: GATTCharacteristicID {
            switch self {
            case .setSetting, .keepAlive: GoPro.settings
            case .getStatuses, .registerStatusUpdates, .getCOHNStatus: GoPro.query
            case .pairingFinished: GoPro.networkManagementCommand
            default: GoPro.command
            }
        }

        /// Where its response is notified.
        public var responseCharacteristic: GATTCharacteristicID {
            switch self {
            case .setSetting, .keepAlive: GoPro.settingsResponse
            case .getStatuses, .registerStatusUpdates, .getCOHNStatus: GoPro.queryResponse
            case .pairingFinished: GoPro.networkManagementResponse
            default: GoPro.commandResponse
            }
        }

        /// The message, without packet headers.
        public var message: [UInt8] {
            switch self {
            case .setShutter(let on): Self.tlv(.setShutter, [on ? 1 : 0])
            case .sleep: [CommandID.sleep.rawValue]
            case .setDateTime(let time): Self.tlv(.setDateTime, time.bytes)
            case .getHardwareInfo: [CommandID.getHardwareInfo.rawValue]
            case .loadPresetGroup(let group): Self.tlv(.loadPresetGroup, [UInt8(group.rawValue >> 8), UInt8(group.rawValue & 0xFF)])
            case .getOpenGoProVersion: [CommandID.getOpenGoProVersion.rawValue]
            case .setSetting(let setting, let value): [setting.rawValue, 1, value]
            case .keepAlive: [SettingID.led.rawValue, 1, Self.keepAliveValue]
            case .getStatuses(let ids): [QueryID.getStatusValues.rawValue] + ids.map(\.rawValue)
            case .registerStatusUpdates(let ids): [QueryID.registerStatusUpdates.rawValue] + ids.map(\.rawValue)
            case .setCameraControl(let control):
                ProtobufMessage(id: .setCameraControl, body: Protobuf.varintField(1, UInt64(control.rawValue))).message
            case .setLocalDateTime(let time, let offset, let daylightSaving):
                // One parameter of 10 bytes, as GoPro's SDK builds it (DateTimeByteParserBuilder).
                Self.tlv(.setLocalDateTime, time.bytes + [UInt8(truncatingIfNeeded: offset >> 8), UInt8(truncatingIfNeeded: offset),
                                                          daylightSaving ? 1 : 0])
            case .setThirdPartyClientInfo: [CommandID.setThirdPartyClientInfo.rawValue]
            case .pairingFinished(let name):
                ProtobufMessage(id: .pairingFinished, body: Protobuf.varintField(1, 0) + Protobuf.bytesField(2, Array(name.utf8))).message
            case .getCOHNStatus(let register):
                ProtobufMessage(id: .getCOHNStatus, body: Protobuf.varintField(1, register ? 1 : 0)).message
            }
        }

        /// The message's packets, each written as one GATT write.
        public func packets(_ fragmenter: Fragmenter = Fragmenter()) throws(MalformedMessage) -> [[UInt8]] {
            try fragmenter.packets(for: message)
        }

        private static func tlv(_ command: CommandID, _ value: [UInt8]) -> [UInt8] {
            [command.rawValue, UInt8(value.count)] + value
        }

        /// Reads a request from its message, as the camera does.
        public init(message: [UInt8], on characteristic: GATTCharacteristicID) throws(MalformedMessage) {
            guard let id = message.first else { throw MalformedMessage(.gopro, "an empty request") }
            switch characteristic {
            case GoPro.command:
                if message.count >= 2, ProtobufID(feature: message[0], action: message[1]) == .setCameraControl {
                    let fields = try Protobuf.Fields(Array(message.dropFirst(2))).varints
                    guard let raw = fields[1], let control = CameraControl(rawValue: UInt8(truncatingIfNeeded: raw)), raw <= 0xFF else {
                        throw MalformedMessage(.gopro, "Set Camera Control without a known control status")
                    }
                    self = .setCameraControl(control)
                    return
                }
                guard let command = CommandID(rawValue: id) else { throw MalformedMessage(.gopro, "unknown command " + GoPro.hex([id])) }
                let parameters = try Self.parameters(Array(message.dropFirst()))
                switch (command, parameters.count) {
                case (.setShutter, 1) where parameters[0].count == 1 && parameters[0][0] <= 1:
                    self = .setShutter(parameters[0][0] == 1)
                case (.sleep, 0): self = .sleep
                case (.setDateTime, 1): self = .setDateTime(try DateTime(bytes: parameters[0]))
                case (.getHardwareInfo, 0): self = .getHardwareInfo
                case (.getOpenGoProVersion, 0): self = .getOpenGoProVersion
                case (.setThirdPartyClientInfo, 0): self = .setThirdPartyClientInfo
                case (.setLocalDateTime, 1) where parameters[0].count == 10:
                    let bytes = parameters[0]
                    self = .setLocalDateTime(try DateTime(bytes: Array(bytes[0..<7])),
                                             utcOffsetMinutes: Int16(bitPattern: UInt16(bytes[7]) << 8 | UInt16(bytes[8])),
                                             daylightSaving: bytes[9] != 0)
                case (.loadPresetGroup, 1) where parameters[0].count == 2:
                    guard let group = PresetGroup(rawValue: UInt16(parameters[0][0]) << 8 | UInt16(parameters[0][1])) else {
                        throw MalformedMessage(.gopro, "unknown preset group " + GoPro.hex(parameters[0]))
                    }
                    self = .loadPresetGroup(group)
                default:
                    throw MalformedMessage(.gopro, "command \(command) with parameters " + GoPro.hex(Array(message.dropFirst())))
                }
            case GoPro.settings:
                guard message.count == 3, message[1] == 1, let setting = SettingID(rawValue: id) else {
                    throw MalformedMessage(.gopro, "a setting write this codec does not know: " + GoPro.hex(message))
                }
                self = setting == .led && message[2] == Self.keepAliveValue ? .keepAlive : .setSetting(setting, message[2])
            case GoPro.query:
                if message.count >= 2, ProtobufID(feature: message[0], action: message[1]) == .getCOHNStatus {
                    self = .getCOHNStatus(register: try Protobuf.Fields(Array(message.dropFirst(2))).varints[1] ?? 0 != 0)
                    return
                }
                let ids = message.dropFirst().map(StatusID.init(rawValue:))
                switch QueryID(rawValue: id) {
                case .getStatusValues: self = .getStatuses(ids)
                case .registerStatusUpdates: self = .registerStatusUpdates(ids)
                default: throw MalformedMessage(.gopro, "a query this codec does not send: " + GoPro.hex(message))
                }
            case GoPro.networkManagementCommand:
                guard message.count >= 2, ProtobufID(feature: message[0], action: message[1]) == .pairingFinished else {
                    throw MalformedMessage(.gopro, "a network management request this codec does not know: " + GoPro.hex(message))
                }
                let fields = try Protobuf.Fields(Array(message.dropFirst(2)))
                // RequestPairingFinish: result (required, 0 SUCCESS) and phoneName (required).
                guard fields.varints[1] == 0, let name = fields.bytes[2] else {
                    throw MalformedMessage(.gopro, "a pairing-finished request without success and a name: " + GoPro.hex(message))
                }
                self = .pairingFinished(clientName: String(decoding: name, as: UTF8.self))
            default:
                throw MalformedMessage(.gopro, "\(characteristic) takes no requests")
            }
        }

        /// `[len][value]…` until the end.
        static func parameters(_ bytes: [UInt8]) throws(MalformedMessage) -> [[UInt8]] {
            var values: [[UInt8]] = []
            var index = 0
            while index < bytes.count {
                let length = Int(bytes[index])
                guard index + 1 + length <= bytes.count else {
                    throw MalformedMessage(.gopro, "a parameter of \(length) bytes where \(bytes.count - index - 1) remain")
                }
                values.append(Array(bytes[(index + 1)..<(index + 1 + length)]))
                index += 1 + length
            }
            return values
        }
    }

    /// A TLV response on ``GoPro/commandResponse`` or ``GoPro/settingsResponse``:
    /// `[id][status][payload…]`.
    public struct CommandResponse: Hashable, Sendable {
        /// The command or setting ID it answers.
        public var id: UInt8
        public var status: ResultStatus
        public var payload: [UInt8]

        public init(id: UInt8, status: ResultStatus, payload: [UInt8] = []) {
            self.id = id
            self.status = status
            self.payload = payload
        }

        public init(message: [UInt8]) throws(MalformedMessage) {
            guard message.count >= 2 else { throw MalformedMessage(.gopro, "a response of \(message.count) bytes has no status") }
            self.init(id: message[0], status: ResultStatus(message[1]), payload: Array(message.dropFirst(2)))
        }

        public var message: [UInt8] { [id, status.byte] + payload }

        /// The payload read as `[len][value]…` (Get Hardware Info, Get Open GoPro Version).
        public func fields() throws(MalformedMessage) -> [[UInt8]] {
            try Request.parameters(payload)
        }
    }

    /// One status or setting in a query response: its ID and its value's bytes.
    public struct StatusValue: Hashable, Sendable {
        public var id: StatusID
        public var value: [UInt8]

        public init(id: StatusID, value: [UInt8]) {
            self.id = id
            self.value = value
        }

        /// A value of `count` bytes (1, 2 or 4) holding `integer`, big-endian.
        public init(id: StatusID, integer: Int, count: Int = 1) {
            self.init(id: id, value: (0..<count).reversed().map { UInt8(truncatingIfNeeded: integer >> (8 * $0)) })
        }

        /// The value as a big-endian signed integer of 1 to 4 bytes (statuses such as SD status
        /// use -1); nil for any other size.
        public var integer: Int? {
            guard (1...4).contains(value.count) else { return nil }
            let unsigned = value.reduce(0) { $0 << 8 | Int($1) }
            let bits = 8 * value.count
            return unsigned >= 1 << (bits - 1) ? unsigned - (1 << bits) : unsigned
        }
    }

    /// A query response or push on ``GoPro/queryResponse``: `[query][status]` then
    /// `[id][len][value]…`.
    public struct QueryResponse: Hashable, Sendable {
        /// The query it answers, or a push's ID (0x92, 0x93).
        public var queryID: UInt8
        public var status: ResultStatus
        public var values: [StatusValue]

        public init(queryID: UInt8, status: ResultStatus = .success, values: [StatusValue]) {
            self.queryID = queryID
            self.status = status
            self.values = values
        }

        public init(message: [UInt8]) throws(MalformedMessage) {
            guard message.count >= 2 else { throw MalformedMessage(.gopro, "a query response of \(message.count) bytes has no status") }
            var values: [StatusValue] = []
            var index = 2
            while index < message.count {
                guard index + 2 <= message.count else { throw MalformedMessage(.gopro, "a status value cut short after its ID") }
                let length = Int(message[index + 1])
                guard index + 2 + length <= message.count else {
                    throw MalformedMessage(.gopro, "status \(message[index]) claims \(length) bytes where \(message.count - index - 2) remain")
                }
                values.append(StatusValue(id: StatusID(rawValue: message[index]), value: Array(message[(index + 2)..<(index + 2 + length)])))
                index += 2 + length
            }
            self.init(queryID: message[0], status: ResultStatus(message[1]), values: values)
        }

        public var message: [UInt8] {
            [queryID, status.byte] + values.flatMap { [$0.id.rawValue, UInt8(truncatingIfNeeded: $0.value.count)] + $0.value }
        }

        /// Whether the camera sent it unasked (a registered status or setting changed).
        public var isPush: Bool { queryID == QueryID.statusUpdate.rawValue || queryID == QueryID.settingUpdate.rawValue }

        /// The integer value of `status`, when the response carries it.
        public func value(of status: StatusID) -> Int? {
            values.last { $0.id == status }?.integer
        }
    }

    /// A protobuf message: `[feature][action][protobuf bytes]`.
    public struct ProtobufMessage: Hashable, Sendable {
        public var id: ProtobufID
        public var body: [UInt8]

        public init(id: ProtobufID, body: [UInt8]) {
            self.id = id
            self.body = body
        }

        /// A `ResponseGeneric` with `result`.
        public init(id: ProtobufID, result: GenericResult) {
            self.init(id: id, body: Protobuf.varintField(1, result.rawValue))
        }

        public var message: [UInt8] { [id.feature, id.action] + body }

        /// Field 1 of a response read as `ResponseGeneric.result`; throws when the body is not
        /// protobuf or lacks it.
        public func result() throws(MalformedMessage) -> GenericResult {
            guard let raw = try Protobuf.Fields(body).varints[1] else { throw MalformedMessage(.gopro, "a protobuf response without a result") }
            return GenericResult(rawValue: raw) ?? .unknown
        }
    }

    /// `NotifyCOHNStatus` (Camera on the Home Network), the answer to Get COHN Status and its
    /// pushes: fields 1 `status` (0 unprovisioned, 1 provisioned), 2 `state`
    /// (`EnumCOHNNetworkState`) and 6 `enabled`; the credentials' fields are left out while it is
    /// unprovisioned. Field numbers: `open_gopro/models/proto/cohn_pb2.py` of GoPro's SDK.
    public struct COHNStatus: Hashable, Sendable {
        /// Whether the camera has been given a home network (status 1, COHN_PROVISIONED).
        public var provisioned: Bool
        /// `EnumCOHNNetworkState`: 0 Init, 1 Error, 2 Exit, 5 Idle, 27 NetworkConnected,
        /// 28 NetworkDisconnected, 29 ConnectingToNetwork, 30 Invalid.
        public var networkState: UInt64
        /// Whether the camera joins its home network when it can.
        public var enabled: Bool

        public init(provisioned: Bool, networkState: UInt64, enabled: Bool) {
            self.provisioned = provisioned
            self.networkState = networkState
            self.enabled = enabled
        }

        /// Reads a message's body (after feature and action); a field left out reads as 0 or
        /// false, as protobuf's defaults. Throws for bytes that are not protobuf.
        public init(body: [UInt8]) throws(MalformedMessage) {
            let fields = try Protobuf.Fields(body).varints
            self.init(provisioned: fields[1] == 1, networkState: fields[2] ?? 0, enabled: fields[6] == 1)
        }

        /// The whole message, feature and action first.
        public var message: [UInt8] {
            ProtobufMessage(id: .cohnStatus, body: Protobuf.varintField(1, provisioned ? 1 : 0)
                + Protobuf.varintField(2, networkState) + Protobuf.varintField(6, enabled ? 1 : 0)).message
        }
    }

    /// Whatever the camera notifies, read by the characteristic it came on.
    public enum Notification: Hashable, Sendable {
        case command(CommandResponse)
        case setting(CommandResponse)
        case query(QueryResponse)
        case protobuf(ProtobufMessage)

        /// Reads one whole message (after reassembly) notified on `characteristic`.
        public init(message: [UInt8], on characteristic: GATTCharacteristicID) throws(MalformedMessage) {
            if message.count >= 2, case let id = ProtobufID(feature: message[0], action: message[1]), ProtobufID.fromCamera.contains(id) {
                self = .protobuf(ProtobufMessage(id: id, body: Array(message.dropFirst(2))))
                return
            }
            switch characteristic {
            case GoPro.commandResponse: self = .command(try CommandResponse(message: message))
            case GoPro.settingsResponse: self = .setting(try CommandResponse(message: message))
            case GoPro.queryResponse: self = .query(try QueryResponse(message: message))
            default: throw MalformedMessage(.gopro, "\(characteristic) is not a GoPro response characteristic")
            }
        }

        public var message: [UInt8] {
            switch self {
            case .command(let response), .setting(let response): response.message
            case .query(let response): response.message
            case .protobuf(let message): message.message
            }
        }
    }

    /// The answer to Get Hardware Info: length-prefixed fields. The third, after the model's
    /// name, is the board type in 4 bytes: GoPro's SDK reads it so (`get_hardware_info` in
    /// `open_gopro/api/ble_commands.py`, `"board_type" / Hex(Int32ub)`), and a shorter field
    /// there misplaces every field after it for that reader.
    public struct HardwareInfo: Hashable, Sendable {
        public var modelNumber: UInt32
        /// `HERO12 Black`.
        public var modelName: String
        /// 4 bytes, whose meaning is not published.
        public var boardType: UInt32
        public var firmwareVersion: String
        public var serialNumber: String
        public var accessPointSSID: String
        public var accessPointMAC: String

        public init(modelNumber: UInt32, modelName: String, boardType: UInt32 = 0, firmwareVersion: String, serialNumber: String,
                    accessPointSSID: String = "", accessPointMAC: String = "") {
            self.modelNumber = modelNumber
            self.modelName = modelName
            self.boardType = boardType
            self.firmwareVersion = firmwareVersion
            self.serialNumber = serialNumber
            self.accessPointSSID = accessPointSSID
            self.accessPointMAC = accessPointMAC
        }

        /// Reads the fields of a successful response's payload; the access point's fields may
        /// be missing.
        public init(payload: [UInt8]) throws(MalformedMessage) {
            let fields = try Request.parameters(payload)
            guard fields.count >= 5 else { throw MalformedMessage(.gopro, "hardware info has \(fields.count) fields, fewer than 5") }
            guard fields[0].count <= 4 else { throw MalformedMessage(.gopro, "a model number of \(fields[0].count) bytes") }
            guard fields[2].count <= 4 else { throw MalformedMessage(.gopro, "a board type of \(fields[2].count) bytes") }
            func text(_ index: Int) -> String { index < fields.count ? String(decoding: fields[index], as: UTF8.self) : "" }
            self.init(modelNumber: fields[0].reduce(0) { $0 << 8 | UInt32($1) }, modelName: text(1),
                      boardType: fields[2].reduce(0) { $0 << 8 | UInt32($1) }, firmwareVersion: text(3),
                      serialNumber: text(4), accessPointSSID: text(5), accessPointMAC: text(6))
        }

        /// The payload (the model number and the board type in 4 bytes each).
        public var payload: [UInt8] {
            func fourBytes(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
            return [fourBytes(modelNumber), Array(modelName.utf8), fourBytes(boardType), Array(firmwareVersion.utf8), Array(serialNumber.utf8),
                    Array(accessPointSSID.utf8), Array(accessPointMAC.utf8)]
                .flatMap { field in [UInt8(min(field.count, 255))] + field.prefix(255) }
        }
    }

    /// The version of Open GoPro a camera speaks (Get Open GoPro Version).
    public struct Version: Hashable, Sendable {
        public var major: UInt8
        public var minor: UInt8

        public init(response: CommandResponse) throws(MalformedMessage) {
            let fields = try response.fields()
            guard fields.count == 2, fields[0].count == 1, fields[1].count == 1 else {
                throw MalformedMessage(.gopro, "an Open GoPro version is two 1-byte fields, not " + GoPro.hex(response.payload))
            }
            major = fields[0][0]
            minor = fields[1][0]
        }
    }

    /// The little protobuf this protocol needs: messages of varint fields, other wire types
    /// skipped.
    enum Protobuf {
        static func varintField(_ number: UInt64, _ value: UInt64) -> [UInt8] {
            varint(number << 3) + varint(value)
        }

        static func varint(_ value: UInt64) -> [UInt8] {
            var bytes: [UInt8] = []
            var rest = value
            repeat {
                let low = UInt8(rest & 0x7F)
                rest >>= 7
                bytes.append(rest == 0 ? low : low | 0x80)
            } while rest != 0
            return bytes
        }

        static func bytesField(_ number: UInt64, _ value: [UInt8]) -> [UInt8] {
            varint(number << 3 | 2) + varint(UInt64(value.count)) + value
        }

        /// A message's varint and length-delimited fields by number (the last wins); fixed-size
        /// fields skipped.
        struct Fields {
            var varints: [UInt64: UInt64] = [:]
            var bytes: [UInt64: [UInt8]] = [:]

            /// Throws for malformed bytes.
            init(_ message: [UInt8]) throws(MalformedMessage) {
                var index = 0
                func readVarint() throws(MalformedMessage) -> UInt64 {
                    var value: UInt64 = 0
                    var shift: UInt64 = 0
                    while index < message.count {
                        let byte = message[index]
                        index += 1
                        guard shift < 64 else { throw MalformedMessage(.gopro, "a protobuf varint longer than 64 bits") }
                        value |= UInt64(byte & 0x7F) << shift
                        if byte & 0x80 == 0 { return value }
                        shift += 7
                    }
                    throw MalformedMessage(.gopro, "a protobuf varint cut short")
                }
                while index < message.count {
                    let key = try readVarint()
                    switch key & 0x07 {
                    case 0: varints[key >> 3] = try readVarint()
                    case 1, 5:
                        let size = key & 0x07 == 1 ? 8 : 4
                        guard index + size <= message.count else { throw MalformedMessage(.gopro, "a protobuf fixed field cut short") }
                        index += size
                    case 2:
                        let length = try readVarint()
                        guard length <= UInt64(message.count - index) else { throw MalformedMessage(.gopro, "a protobuf field cut short") }
                        bytes[key >> 3] = Array(message[index..<(index + Int(length))])
                        index += Int(length)
                    default:
                        throw MalformedMessage(.gopro, "protobuf wire type \(key & 0x07) is not read here")
                    }
                }
            }
        }
    }
}
