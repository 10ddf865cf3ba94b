public import CameraKit
public import CameraProtocols
import Foundation
public import GATT

/// Drives a GoPro (HERO9 Black and later) through Open GoPro over Bluetooth LE: shutter, video
/// and the camera's clock. A GoPro has no focus, no bulb and takes no position over BLE, so
/// those are refused.
///
/// Each connection subscribes to the four response characteristics (the camera forgets them),
/// polls Get Hardware Info until it succeeds (the camera's readiness), claims external control,
/// says pairing is finished and registers for the busy, encoding, battery and preset-group
/// statuses. A keep-alive goes to
/// the settings characteristic every ``keepAliveInterval`` or the camera powers itself down.
///
/// Commands other than queries wait until status 8 (busy) and 10 (encoding) are both 0. A shot
/// is confirmed by the shutter command's success followed by both statuses back at 0: the
/// camera goes busy and encoding while it writes the photo, so they clear only once it is taken.
public struct GoProDriver: CameraRemoteDriver {
    public var remoteProtocol: any CameraRemoteProtocol.Type { GoPro.self }
    public var capabilities: Capabilities { [.shoot, .video, .setTime] }
    /// The camera's status says when it is done with the capture.
    public var confirmsShots: Bool { true }
    public var subscriptions: [GATTCharacteristicID] { GoPro.responseCharacteristics }
    /// 3 s, as Open GoPro asks: HERO11 bodies powered down with 30 s.
    public let keepAliveInterval: Duration?
    /// How often the readiness check and the busy/encoding polls ask again.
    public let pollInterval: Duration
    /// How long a camera may stay busy before an operation (or after a shot) before it counts
    /// as stuck (or the shot as unconfirmed).
    public let captureTimeout: Duration

    public init(keepAliveInterval: Duration? = .seconds(3), pollInterval: Duration = .milliseconds(100),
                captureTimeout: Duration = .seconds(10)) {
        self.keepAliveInterval = keepAliveInterval
        self.pollInterval = pollInterval
        self.captureTimeout = captureTimeout
    }

    /// The statuses the driver follows: pushed after registration, polled around commands.
    static let followed: [GoPro.StatusID] = [.busy, .encoding, .batteryPercent, .presetGroup]

    public func makeAssembler(for characteristic: GATTCharacteristicID) -> (any MessageAssembler)? {
        GoPro.responseCharacteristics.contains(characteristic) ? GoProMessageAssembler() : nil
    }

    // MARK: - Connection

    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        let info = try await waitForReadiness(remote)
        try await claimControl(remote)
        try await finishPairing(remote)
        let registered = try await exchange(.registerStatusUpdates(Self.followed), remote, for: "registering for status updates")
        try Self.check(registered, during: "registering for status updates")
        return info?.modelName.isEmpty == false ? info?.modelName : nil
    }

    /// Polls Get Hardware Info until it succeeds; its answer names the model (nil when the
    /// camera's answer cannot be read, which does not stop it being ready).
    private func waitForReadiness(_ remote: RemoteContext) async throws(CameraError) -> GoPro.HardwareInfo? {
        while true {
            do {
                if case .command(let response) = try await exchange(.getHardwareInfo, remote, for: "the readiness check"),
                   response.status == .success {
                    return try? GoPro.HardwareInfo(payload: response.payload)
                }
            } catch .timedOut {
                // A camera still booting may not answer at all; ask again.
            }
            try await remote.sleep(for: pollInterval)
        }
    }

    /// Claims external control. Cameras whose firmware lacks the request (HERO9 and HERO10 on
    /// older firmware) answer "not supported" or nothing; they take commands without it.
    private func claimControl(_ remote: RemoteContext) async throws(CameraError) {
        let answer: GoPro.Notification
        do {
            answer = try await exchange(.setCameraControl(.externalControl), remote, for: "claiming control")
        } catch .timedOut {
            return
        }
        guard case .protobuf(let message) = answer, let result = try? message.result() else {
            throw .device(DeviceFailure(.failed, "the GoPro answered the control claim with " + GoPro.hex(answer.message)))
        }
        guard result == .success || result == .notSupported else {
            throw .device(DeviceFailure(.busy, "the GoPro did not give this computer control (\(result)); "
                + "leave the camera's menus and try again"))
        }
    }

    /// Tells the camera pairing is done, so that it leaves its pairing screen, as GoPro's own
    /// SDK does on every connection (`set_pairing_complete` in `WirelessGoPro._open_ble`). Its
    /// answer does not matter, nor its absence: a camera silent to it takes commands anyway.
    /// Every Open GoPro camera has GP-0091, where it is written.
    private func finishPairing(_ remote: RemoteContext) async throws(CameraError) {
        do {
            _ = try await exchange(.pairingFinished(clientName: Self.clientName), remote, for: "finishing pairing")
        } catch .timedOut {
            return
        }
    }

    /// The name the camera is given for this computer when pairing finishes.
    static let clientName = "unleashed"

    public func keepAlive(_ remote: RemoteContext) async throws(CameraError) {
        // Any answer proves the camera is there; only silence means the link is lost.
        _ = try await exchange(.keepAlive, remote, for: "the keep-alive")
    }

    public func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal] {
        guard characteristic == GoPro.queryResponse,
              case .query(let response)? = try? GoPro.Notification(message: message, on: characteristic),
              response.status == .success else { return [] }
        let inVideo = response.value(of: .presetGroup).map { $0 == Int(GoPro.PresetGroup.video.rawValue) }
        return response.values.compactMap { value -> RemoteSignal? in
            guard let number = value.integer else { return nil }
            switch value.id {
            case .busy: return .busy(number != 0)
            // Encoding is recording in the video group, writing a photo otherwise; a push of it
            // alone does not say which.
            case .encoding: return inVideo == true ? .recording(number != 0) : .shutterActive(number != 0)
            case .batteryPercent: return .battery(number)
            default: return nil
            }
        }
    }

    // MARK: - Operations

    /// Takes a photo: loads the photo presets if the camera is in another group, presses the
    /// shutter, and returns once the camera is idle again (the photo written).
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        try await prepare(remote, group: .photo, for: "shoot")
        try Self.check(try await exchange(.setShutter(true), remote, for: "shoot"), during: "shoot")
        guard try await poll(remote, for: "shoot", until: { !$0.busy && !$0.encoding }) else {
            throw .shotNotReported(after: captureTimeout)
        }
    }

    /// Starts a video: loads the video presets if needed, presses the shutter and waits for
    /// the camera to report encoding.
    public func startVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await prepare(remote, group: .video, for: "video")
        try Self.check(try await exchange(.setShutter(true), remote, for: "video"), during: "video")
        guard try await poll(remote, for: "video", until: { $0.encoding }) else {
            throw .device(DeviceFailure(.timedOut, "the GoPro accepted the shutter but did not start recording within \(captureTimeout)"))
        }
    }

    /// Stops the video and waits until the camera has finished writing it.
    public func stopVideo(_ remote: RemoteContext) async throws(CameraError) {
        try Self.check(try await exchange(.setShutter(false), remote, for: "stopping the video"), during: "stopping the video")
        guard try await poll(remote, for: "stopping the video", until: { !$0.busy && !$0.encoding }) else {
            throw .device(DeviceFailure(.timedOut, "the GoPro did not finish the video within \(captureTimeout)"))
        }
    }

    /// Sets the camera's clock to the local time `time` names (Set Date Time has no zone).
    public func setTime(_ remote: RemoteContext, _ time: WallTime) async throws(CameraError) {
        let local = try Self.localDateTime(time)
        guard try await poll(remote, for: "time sync", until: { !$0.busy && !$0.encoding }) else {
            throw stuck("time sync")
        }
        try Self.check(try await exchange(.setDateTime(local), remote, for: "time sync"), during: "time sync")
    }

    // MARK: - Steps

    /// What the followed statuses say now.
    struct CameraState: Hashable, Sendable {
        var busy: Bool
        var encoding: Bool
        var presetGroup: Int?
    }

    /// Waits until the camera is idle, then loads `group` unless it is the active one.
    private func prepare(_ remote: RemoteContext, group: GoPro.PresetGroup, for operation: String) async throws(CameraError) {
        var state = try await status(remote, for: operation)
        if state.encoding, state.presetGroup == Int(GoPro.PresetGroup.video.rawValue) {
            throw .device(DeviceFailure(.busy, "the GoPro is recording a video; stop it before \(operation == "video" ? "starting another" : operation)"))
        }
        if state.busy || state.encoding {
            guard try await poll(remote, for: operation, until: { !$0.busy && !$0.encoding }) else { throw stuck(operation) }
            state = try await status(remote, for: operation)
        }
        guard state.presetGroup != Int(group.rawValue) else { return }
        let loading = "switching the GoPro to its \(group) presets"
        try Self.check(try await exchange(.loadPresetGroup(group), remote, for: loading), during: loading)
    }

    private func stuck(_ operation: String) -> CameraError {
        .device(DeviceFailure(.busy, "the GoPro stayed busy for \(captureTimeout) before \(operation); "
            + "leave its menus or wait for it to finish what it is doing"))
    }

    /// Asks for the followed statuses until `done` holds; false after ``captureTimeout``.
    private func poll(_ remote: RemoteContext, for operation: String,
                      until done: (CameraState) -> Bool) async throws(CameraError) -> Bool {
        let attempts = max(1, Int((captureTimeout / pollInterval).rounded(.up)))
        for attempt in 0...attempts {
            if attempt > 0 { try await remote.sleep(for: pollInterval) }
            if done(try await status(remote, for: operation)) { return true }
        }
        return false
    }

    private func status(_ remote: RemoteContext, for operation: String) async throws(CameraError) -> CameraState {
        let answer = try await exchange(.getStatuses(Self.followed), remote, for: operation)
        guard case .query(let response) = answer, response.status == .success else {
            throw .device(DeviceFailure(.failed, "the GoPro did not report its status for \(operation): " + GoPro.hex(answer.message)))
        }
        return CameraState(busy: (response.value(of: .busy) ?? 0) != 0, encoding: (response.value(of: .encoding) ?? 0) != 0,
                           presetGroup: response.value(of: .presetGroup))
    }

    /// Writes `request`'s packets and returns the message that answers it.
    private func exchange(_ request: GoPro.Request, _ remote: RemoteContext, for operation: String) async throws(CameraError) -> GoPro.Notification {
        let packets: [[UInt8]]
        do {
            packets = try request.packets()
        } catch {
            throw .device(DeviceFailure(.invalidRequest, "\(operation): \(error)"))
        }
        let sent = request.message
        let answers: @Sendable ([UInt8]) -> Bool = { message in
            guard let first = message.first, let id = sent.first else { return false }
            if let protobuf = request.protobufID {
                return message.count >= 2 && GoPro.ProtobufID(feature: first, action: message[1]) == protobuf.response
            }
            return first == id
        }
        let expectation = await remote.expect(request.responseCharacteristic, where: answers)
        do {
            for packet in packets {
                try await remote.write(packet, to: request.characteristic, for: operation)
            }
        } catch {
            await expectation.cancel()
            throw error
        }
        let message = try await expectation.wait(for: operation)
        do {
            return try GoPro.Notification(message: message, on: request.responseCharacteristic)
        } catch {
            throw .device(DeviceFailure(.failed, "the GoPro's answer to \(operation) could not be read: \(error)"))
        }
    }

    /// Throws unless `answer` is a TLV response with status 0, in words naming `operation`.
    public static func check(_ answer: GoPro.Notification, during operation: String) throws(CameraError) {
        let status: GoPro.ResultStatus
        switch answer {
        case .command(let response), .setting(let response): status = response.status
        case .query(let response): status = response.status
        case .protobuf(let message):
            throw .device(DeviceFailure(.failed, "the GoPro answered \(operation) with " + GoPro.hex(message.message)))
        }
        switch status {
        case .success: return
        case .error:
            throw .device(DeviceFailure(.busy, "the GoPro refused \(operation): it is busy, encoding or in a menu (status 1); "
                + "leave its menus and try again"))
        default:
            throw .device(DeviceFailure(.failed, "the GoPro refused \(operation): \(status)"))
        }
    }

    /// The camera-local date and time `time` names: its instant moved by its UTC offset.
    public static func localDateTime(_ time: WallTime) throws(CameraError) -> GoPro.DateTime {
        let local = CalendarTime(local: time)
        guard (1...Int(UInt16.max)).contains(local.year),
              let dateTime = try? GoPro.DateTime(year: UInt16(local.year), month: UInt8(local.month), day: UInt8(local.day),
                                                 hour: UInt8(local.hour), minute: UInt8(local.minute), second: UInt8(local.second)) else {
            throw .invalidArgument("a GoPro cannot be set to \(time.unixMilliseconds) ms after 1970")
        }
        return dateTime
    }
}

/// Joins a GoPro's notification packets into messages (``GoPro/Reassembler``) for a
/// connection's inbox.
public struct GoProMessageAssembler: MessageAssembler {
    private var reassembler = GoPro.Reassembler()

    public init() {}

    public mutating func accept(_ packet: [UInt8]) throws(MalformedMessage) -> [UInt8]? {
        try reassembler.accept(packet)
    }
}
