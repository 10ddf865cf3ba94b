import Foundation
import UnleashedKit
public import UnleashedProtocol

/// A simulated Unleashed module with a simulated camera attached, speaking protocol version 1
/// over an ``InMemoryLink`` exactly as a module would over the radio: packets in, packets out.
public actor VirtualModule {
    /// What the module reports about itself.
    public let info: ModuleInfo
    /// The camera as it is now.
    public private(set) var camera: VirtualCamera
    /// Percent.
    public private(set) var moduleBattery: UInt8 = 100

    private let clock: any Clock<Duration>
    private let uptime: @Sendable () -> Duration
    private let utcNow: @Sendable () -> UInt64
    private var cameraClockOffset: Int64 = 0
    private var port: InMemoryLink.Peripheral?
    private var reassembler: Reassembler?
    private var saidHello = false
    private var eventSequence: UInt16 = 0
    private var recentResponses: [(id: UInt16, packets: [[UInt8]])] = []
    private var exposureInProgress = false
    /// The open bulb exposure: when it opened (module uptime) and the task that closes it at
    /// its deadline.
    private var bulb: (openedAt: Duration, deadline: Task<Void, Never>)?
    /// Module uptime when video recording started; nil when not recording.
    private var recordingSince: Duration?
    private var serving: Task<Void, Never>?

    /// Requests answered from the cache of recent responses instead of being run again.
    public private(set) var repeatedRequests = 0

    static let capabilities: Capabilities = [
        .shoot, .focus, .bulb, .video, .readSettings, .writeSettings, .meteredEV, .geotag, .setTime,
    ]
    static let responseCacheSize = 16

    /// A module with `camera` attached.
    ///
    /// - Parameters:
    ///   - clock: drives shutter lag and every other delay; tests pass a manual clock.
    ///   - utcNow: the wall clock the camera's clock starts from, in Unix milliseconds.
    public init(
        camera: VirtualCamera,
        serialNumber: String = "SIM0001",
        clock: any Clock<Duration> = ContinuousClock(),
        utcNow: @escaping @Sendable () -> UInt64 = VirtualModule.systemTime
    ) {
        self.camera = camera
        self.clock = clock
        self.utcNow = utcNow
        self.uptime = stopwatch(clock)
        info = ModuleInfo(protocolVersions: 1...1, firmwareVersion: "1.0.0", hardwareRevision: "SIM", serialNumber: serialNumber)
    }

    /// The host's wall clock in Unix milliseconds.
    public static let systemTime: @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Serves one connection until the link goes down.
    public func serve(_ peripheral: InMemoryLink.Peripheral) {
        serving?.cancel()
        port = peripheral
        reassembler = try? Reassembler(mtu: peripheral.mtu)
        saidHello = false
        eventSequence = 0
        recentResponses = []
        // The task holds the module strongly: like hardware, it runs while the link is up,
        // whether or not anyone else keeps a reference to it.
        serving = Task {
            for await event in peripheral.writes {
                guard case .packet(let packet) = event else { break }
                self.receive(packet)
            }
            self.linkDown()
        }
    }

    /// Sets the light the camera meters, and tells the client if it changed.
    public func setSceneEV(_ ev: ExposureStops) {
        guard ev != camera.sceneEV else { return }
        camera.sceneEV = ev
        emit(.meteredEV, Fields { $0.meteredEV = ev })
    }

    // MARK: - Receiving

    private func receive(_ packet: [UInt8]) {
        guard var reassembler else { return }
        let step = reassembler.receive(packet)
        self.reassembler = reassembler
        guard let bytes = step.message else { return }
        do throws(MessageDecodingError) {
            let message = try Message(decoding: bytes)
            guard case .request(let opcode) = message.kind else { return }
            answer(message.id, opcode: opcode, fields: message.fields)
        } catch {
            answerUndecodable(bytes, error)
        }
    }

    /// A request whose envelope is readable but whose fields are not gets `invalidArgument`.
    private func answerUndecodable(_ bytes: [UInt8], _ error: MessageDecodingError) {
        guard bytes.count >= 4, bytes[0] == 0x01 else { return }
        let id = UInt16(bytes[1]) << 8 | UInt16(bytes[2])
        guard id != 0 else { return }
        respond(id, .response(Opcode(rawValue: bytes[3]), .invalidArgument), Fields { $0.errorMessage = String(describing: error) })
    }

    private func answer(_ id: UInt16, opcode: Opcode, fields: Fields) {
        if let cached = recentResponses.first(where: { $0.id == id }) {
            repeatedRequests += 1
            try? port?.notify(cached.packets)
            return
        }
        let (status, reply) = saidHello || opcode == .hello
            ? perform(opcode, fields)
            : (.notSupported, Fields { $0.errorMessage = "say hello first" })
        respond(id, .response(opcode, status), reply)
        if status == .ok { afterSuccess(opcode, fields) }
    }

    private func respond(_ id: UInt16, _ kind: Message.Kind, _ fields: Fields) {
        guard let port, let packets = try? UnleashedV1().packets(for: Message(kind, id: id, fields: fields), mtu: port.mtu) else {
            return
        }
        recentResponses.append((id, packets))
        if recentResponses.count > Self.responseCacheSize { recentResponses.removeFirst() }
        try? port.notify(packets)
    }

    private func emit(_ code: EventCode, _ fields: Fields) {
        guard let port, saidHello,
              let packets = try? UnleashedV1().packets(for: Message(.event(code), id: eventSequence, fields: fields), mtu: port.mtu)
        else { return }
        eventSequence &+= 1
        try? port.notify(packets)
    }

    private func linkDown() {
        port = nil
        saidHello = false
        // The module closes an open bulb exposure when the link drops (PROTOCOL.md §7.7).
        if bulb != nil { closeBulb(atDeadline: false) }
    }

    // MARK: - Operations

    private typealias Outcome = (StatusCode, Fields)

    private static func refuse(_ status: StatusCode, _ message: String) -> Outcome {
        (status, Fields { $0.errorMessage = message })
    }

    private func perform(_ opcode: Opcode, _ request: Fields) -> Outcome {
        switch opcode {
        case .hello: hello(request)
        case .keepAlive: (.ok, Fields { $0.uptime = UInt32(clamping: uptime().wholeMilliseconds) })
        case .getStatus: (.ok, statusFields())
        case .listSettings: cameraReady() ?? (.ok, Fields { $0.descriptors = camera.descriptors })
        case .getSetting: cameraReady() ?? getSetting(request.setting!)
        case .setSetting: cameraReady() ?? setSetting(request.value!)
        case .halfPress: cameraReady() ?? halfPress()
        case .shoot: cameraReady() ?? shoot()
        case .release, .geotag: cameraReady() ?? (.ok, Fields())
        case .bulbStart: cameraReady() ?? bulbStart(request.duration!)
        case .bulbEnd: bulbEnd()
        case .videoStart: cameraReady() ?? videoStart()
        case .videoStop: videoStop()
        case .setTime: setTime(request)
        default: Self.refuse(.notSupported, "\(opcode) is not supported by this module")
        }
    }

    private func hello(_ request: Fields) -> Outcome {
        let wanted = request.minProtocolVersion!...request.maxProtocolVersion!
        guard wanted.overlaps(info.protocolVersions) else {
            return (.notSupported, Fields {
                $0.minProtocolVersion = info.protocolVersions.lowerBound
                $0.maxProtocolVersion = info.protocolVersions.upperBound
                $0.errorMessage = "no common protocol version"
            })
        }
        saidHello = true
        eventSequence = 0
        return (.ok, Fields {
            $0.protocolVersion = min(wanted.upperBound, info.protocolVersions.upperBound)
            $0.firmwareVersion = info.firmwareVersion
            $0.capabilities = Self.capabilities
            $0.cameraModel = camera.profile.model
        })
    }

    private func statusFields() -> Fields {
        let on = camera.power == .on
        return Fields {
            $0.moduleBattery = moduleBattery
            $0.cameraPower = camera.power
            $0.busy = exposureInProgress || bulb != nil || recordingSince != nil
            $0.shotCounter = camera.shotCounter
            if on {
                $0.cameraBattery = camera.battery
                $0.storageState = camera.storageState
                $0.shotsRemaining = camera.shotsRemaining
                $0.exposureMode = camera.exposureMode
                $0.meteredEV = camera.sceneEV
            }
        }
    }

    private func cameraReady() -> Outcome? {
        camera.power == .on ? nil : Self.refuse(.cameraOff, "the camera is \(camera.power)")
    }

    private func getSetting(_ setting: SettingID) -> Outcome {
        guard let value = camera.settings[setting] else {
            return Self.refuse(.notSupported, "the camera has no \(setting) setting")
        }
        return (.ok, Fields {
            $0.setting = setting
            $0.value = value
        })
    }

    private func setSetting(_ value: SettingValue) -> Outcome {
        do throws(VirtualCamera.SettingRefusal) {
            try camera.apply(value)
        } catch .noSuchSetting {
            return Self.refuse(.notSupported, "the camera has no \(value.setting) setting")
        } catch {
            return Self.refuse(.invalidArgument, "\(value.setting) \(value.text) is not offered")
        }
        return (.ok, Fields {
            $0.setting = value.setting
            $0.value = value
        })
    }

    private func halfPress() -> Outcome {
        let manual = camera.settings[.focusMode] == .focusMode(.manual)
        return (.ok, Fields { $0.focusResult = manual ? .manualFocus : .acquired })
    }

    private func shoot() -> Outcome {
        if exposureInProgress || bulb != nil { return Self.refuse(.busy, "a shot is in progress") }
        if recordingSince != nil { return Self.refuse(.busy, "the camera is recording video") }
        if camera.shotsRemaining == 0 { return Self.refuse(.cardFull, "the memory card is full") }
        guard let exposure = camera.exposureTime else {
            return Self.refuse(.invalidArgument, "the shutter speed is bulb: use bulbStart")
        }
        exposureInProgress = true
        let delay = camera.profile.shutterLag + exposure
        let clock = clock
        Task { [weak self] in
            try? await clock.sleep(for: delay)
            await self?.completeShot()
        }
        return (.ok, Fields())
    }

    private func bulbStart(_ milliseconds: UInt32) -> Outcome {
        if exposureInProgress || bulb != nil { return Self.refuse(.busy, "a shot is in progress") }
        if recordingSince != nil { return Self.refuse(.busy, "the camera is recording video") }
        guard camera.exposureMode == .bulb else {
            return Self.refuse(.invalidArgument, "the shutter speed is not bulb")
        }
        guard milliseconds >= 1 else { return Self.refuse(.invalidArgument, "a bulb exposure lasts at least 1 ms") }
        if camera.shotsRemaining == 0 { return Self.refuse(.cardFull, "the memory card is full") }
        let clock = clock
        let deadline = Task { [weak self] in
            guard (try? await clock.sleep(for: .milliseconds(Int64(milliseconds)))) != nil else { return }
            await self?.closeBulb(atDeadline: true)
        }
        bulb = (uptime(), deadline)
        return (.ok, Fields())
    }

    private func bulbEnd() -> Outcome {
        guard bulb != nil else { return Self.refuse(.invalidArgument, "no bulb exposure is open") }
        let length = closeBulb(atDeadline: false)
        return (.ok, Fields { $0.duration = UInt32(clamping: length.wholeMilliseconds) })
    }

    /// Closes the open bulb exposure: the picture is taken, whoever asked.
    @discardableResult
    private func closeBulb(atDeadline: Bool) -> Duration {
        guard let open = bulb else { return .zero }
        bulb = nil
        open.deadline.cancel()
        let length = uptime() - open.openedAt
        if atDeadline {
            emit(.bulbDeadlineFired, Fields { $0.duration = UInt32(clamping: length.wholeMilliseconds) })
        }
        completeShot()
        return length
    }

    /// Whether a bulb exposure is open now (for tests: it must always end).
    public var bulbOpen: Bool { bulb != nil }

    private func videoStart() -> Outcome {
        if recordingSince != nil { return Self.refuse(.busy, "already recording") }
        if exposureInProgress || bulb != nil { return Self.refuse(.busy, "a shot is in progress") }
        recordingSince = uptime()
        return (.ok, Fields())
    }

    private func videoStop() -> Outcome {
        guard let since = recordingSince else { return Self.refuse(.invalidArgument, "the camera is not recording") }
        recordingSince = nil
        return (.ok, Fields { $0.duration = UInt32(clamping: (uptime() - since).wholeMilliseconds) })
    }

    /// How long the camera has been recording video, or nil when it is not.
    public var recordingElapsed: Duration? { recordingSince.map { uptime() - $0 } }

    /// Puts the camera back into recording, as if it started `elapsed` ago: demo mode keeps a
    /// recording going between runs of the command-line tool.
    public func resumeRecording(startedAgo elapsed: Duration) {
        recordingSince = uptime() - elapsed
    }

    private func setTime(_ request: Fields) -> Outcome {
        cameraClockOffset = Int64(bitPattern: request.utcTime!) - Int64(bitPattern: utcNow())
        return (.ok, Fields())
    }

    /// Events that follow a successful request.
    private func afterSuccess(_ opcode: Opcode, _ request: Fields) {
        switch opcode {
        case .setSetting:
            emit(.settingChanged, Fields {
                $0.setting = request.setting
                $0.value = request.value
            })
        case .shoot, .bulbStart, .videoStart:
            emit(.busy, Fields { $0.busy = true })
        case .videoStop:
            emit(.busy, Fields { $0.busy = false })
        default:
            break
        }
    }

    private func completeShot() {
        exposureInProgress = false
        camera.shotCounter &+= 1
        camera.shotsRemaining = camera.shotsRemaining > 0 ? camera.shotsRemaining - 1 : 0
        emit(.shotCompleted, Fields {
            $0.shotCounter = camera.shotCounter
            $0.cameraTime = UInt64(bitPattern: Int64(bitPattern: utcNow()) &+ cameraClockOffset)
        })
        emit(.storage, Fields {
            $0.storageState = camera.storageState
            $0.shotsRemaining = camera.shotsRemaining
        })
        emit(.busy, Fields { $0.busy = false })
    }
}
