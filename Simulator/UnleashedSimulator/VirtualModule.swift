public import CameraKit
import Foundation
import UnleashedKit
public import UnleashedProtocol

/// A simulated Unleashed module with a simulated camera attached, speaking protocol version 1
/// over an ``InMemoryLink`` exactly as a module would over the radio: packets in, packets out.
///
/// Everything that takes time (shutter lag, exposures, the buffer draining, focus, waking,
/// bulb deadlines, battery drain, standby, the meter) runs on one timeline of alarms on the
/// injected clock, each handled at the instant it was due. A run on a test clock with the same
/// requests therefore produces the same responses, events and timings every time.
public actor VirtualModule {
    /// What the module reports about itself.
    public let info: ModuleInfo
    /// The camera as it is now.
    public private(set) var camera: VirtualCamera
    /// Percent.
    public private(set) var moduleBattery: UInt8 = 100
    /// Requests answered from the cache of recent responses instead of being run again.
    public private(set) var repeatedRequests = 0
    /// Messages taken in whole, readable or not: tests wait on it to know a request has arrived
    /// before they move a test clock on.
    private(set) var messagesReceived = 0

    private let clock: any Clock<Duration>
    /// Time since the module was made; every alarm is an instant on this timeline.
    private let now: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void
    private let utcNow: @Sendable () -> UInt64
    /// When the module last started (or will have started, while booting).
    private var bootedAt: Duration = .zero
    /// How fast the module's own timer runs against the clock, as a crystal's error does:
    /// 1 + parts per million / 10⁶.
    private let timerRate: Double
    /// Told of every shutter press, with how late the module got to it (see ``observePresses(_:)``).
    private var pressObserver: (@Sendable (Duration) -> Void)?

    // The connection (PROTOCOL.md §4, §9.2).
    private var port: InMemoryLink.Peripheral?
    private var reassembler: Reassembler?
    private var saidHello = false
    private var eventSequence: UInt16 = 0
    private var recentResponses: [(id: UInt16, packets: [[UInt8]])] = []
    /// Requests taken but not answered yet: waiting for the camera to wake or to focus.
    private var pending: [UInt16: PendingRequest] = [:]
    private var serving: Task<Void, Never>?

    // What the camera is doing.
    private var exposing = false
    /// Pictures taken but not yet written to the card.
    private var buffered = 0
    /// When the open bulb exposure opened.
    private var bulbOpenedAt: Duration?
    /// When video recording started; nil when not recording.
    private var recordingSince: Duration?
    private var focusing = false
    private var halfPressHeld = false
    /// Until then a camera that was just woken is still coming up.
    private var awakeAt: Duration = .zero
    /// The last busy state the client was told of.
    private var reportedBusy = false
    /// A setting the request being answered changed, to announce after its response.
    private var settingToAnnounce: SettingValue?

    // The camera's battery, in millionths of a percent, exact as of `chargeAt`.
    private var charge: Int64
    private var chargeAt: Duration = .zero

    // The meter (PROTOCOL.md §8: a change of 1/24 stop, at most 4 events a second).
    private var scene: SceneLight
    private var sceneSince: Duration = .zero
    private var reportedEV: ExposureStops?
    private var lastMeterEvent: Duration?

    // Refused commands, a fault for testing clients.
    private var random: SplitMix64
    private var busyRefusals = 0.0

    // The alarms: each at most once, run in order of due time, then of setting.
    private var alarms: [Alarm: (due: Duration, order: Int)] = [:]
    private var alarmsSet = 0
    private var armedFor: Duration?
    private var alarmTask: Task<Void, Never>?

    static let capabilities: Capabilities = [
        .shoot, .focus, .bulb, .video, .readSettings, .writeSettings, .meteredEV, .geotag, .setTime, .scheduledFire,
    ]
    /// The furthest ahead a scheduled shot may be (PROTOCOL.md §9.6).
    static let longestFireLead: Duration = .seconds(2)
    static let responseCacheSize = 16
    /// The meter sends at most four readings a second (PROTOCOL.md §8).
    static let meterInterval: Duration = .milliseconds(250)
    static let microPercent = 1_000_000.0

    private enum Alarm: Hashable {
        case exposureEnd, pictureWritten, bulbDeadline, autoPowerOff, meterSample, batteryStep
        case request(UInt16)
    }

    private enum PendingRequest {
        /// Run the request when the alarm fires (the camera is awake by then).
        case run(Opcode, Fields)
        /// Send this outcome when the alarm fires (focus has locked by then).
        case answer(Opcode, Outcome, Fields)
    }

    private typealias Outcome = (StatusCode, Fields)

    /// What a request comes to: an answer now, an answer later, or running it again later.
    private enum Step {
        case done(Outcome)
        case answer(Outcome, at: Duration)
        case rerun(at: Duration)
    }

    /// A module with `camera` attached.
    ///
    /// - Parameters:
    ///   - clock: drives shutter lag and every other delay; tests pass a manual clock.
    ///   - utcNow: the wall clock the camera's clock starts from, in Unix milliseconds.
    ///   - scene: the light the camera meters; by default the camera's `sceneEV`, constant.
    ///   - seed: makes refused commands (``setBusyRefusals(_:)``) repeatable.
    ///   - timerDriftPPM: how far the module's own timer (`uptimeMicros`, scheduled shots) runs
    ///     fast (positive) or slow against `clock`, in parts per million, as real crystals do.
    public init(
        camera: VirtualCamera,
        serialNumber: String = "SIM0001",
        clock: any Clock<Duration> = ContinuousClock(),
        utcNow: @escaping @Sendable () -> UInt64 = VirtualModule.systemTime,
        scene: SceneLight? = nil,
        seed: UInt64 = 0,
        timerDriftPPM: Double = 0
    ) {
        self.camera = camera
        timerRate = 1 + timerDriftPPM / 1_000_000
        self.clock = clock
        self.utcNow = utcNow
        (now, sleepUntil) = elapsedTime(on: clock)
        charge = Int64(camera.battery) * Int64(Self.microPercent)
        self.scene = scene ?? .constant(camera.sceneEV)
        random = SplitMix64(seed: seed)
        info = ModuleInfo(protocolVersions: 1...1, firmwareVersion: "1.0.0", hardwareRevision: "SIM", serialNumber: serialNumber)
    }

    /// The host's wall clock in Unix milliseconds.
    public static let systemTime: @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Serves one connection until the link goes down. A module that is still starting cannot
    /// take a connection: the link drops at once.
    public func serve(_ peripheral: InMemoryLink.Peripheral) {
        start()
        guard bootRemaining == .zero else {
            peripheral.shared.disconnect(reason: "the module is starting")
            return
        }
        serving?.cancel()
        if let port, port !== peripheral { linkDown(port) }
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
            self.linkDown(peripheral)
        }
    }

    // MARK: - Controls for tests and demo mode

    /// Sets the light the camera meters to a constant; the client hears of a change.
    public func setSceneEV(_ ev: ExposureStops) {
        setScene(.constant(ev))
    }

    /// Sets the light the camera meters from now on; its time starts now.
    public func setScene(_ light: SceneLight) {
        start()
        scene = light
        sceneSince = now()
        meter(at: sceneSince)
        rearm()
    }

    /// Switches the camera on or off, or sends it to standby, as its owner would. An `off`
    /// camera answers every request that needs it with `cameraOff`.
    public func setCameraPower(_ power: CameraPower) {
        start()
        changePower(to: power, at: now())
        rearm()
    }

    /// Calls `observer` at every shutter press (a shot or the start of a bulb exposure) with how
    /// long after the press's instant on the timeline the module handled it: zero on a test
    /// clock, the wake-up delay of the host on a real one. Benchmarks use it to place presses.
    public func observePresses(_ observer: @escaping @Sendable (Duration) -> Void) {
        pressObserver = observer
    }

    /// Makes each camera command (see PROTOCOL.md §9.5) answer `busy` with this probability, drawn
    /// from the module's seed, as a camera does that is busy with something the module cannot see.
    public func setBusyRefusals(_ probability: Double) {
        busyRefusals = min(max(probability, 0), 1)
    }

    /// Restarts the module: the link drops, and the module forgets the connection, its response
    /// cache and its event numbering. It cannot be reached for `bootTime`. The camera keeps its
    /// settings, card and shot counter; an open bulb exposure closes as the module lets go of
    /// the shutter button.
    public func reboot(bootTime: Duration = .milliseconds(1500)) {
        start()
        let time = now()
        serving?.cancel()
        if let port {
            linkDown(port)
            port.shared.disconnect(reason: "the module restarted")
        }
        letGo(at: time)
        recentResponses = []
        eventSequence = 0
        bootedAt = time + bootTime
        rearm()
    }

    /// How long until the module has finished starting (zero when it is up).
    public var bootRemaining: Duration { max(.zero, bootedAt - now()) }

    /// Whether a bulb exposure is open now (for tests: it must always end).
    public var bulbOpen: Bool { bulbOpenedAt != nil }

    /// How long the camera has been recording video, or nil when it is not.
    public var recordingElapsed: Duration? { recordingSince.map { now() - $0 } }

    /// Puts the camera back into recording, as if it started `elapsed` ago: demo mode keeps a
    /// recording going between runs of the command-line tool.
    public func resumeRecording(startedAgo elapsed: Duration) {
        start()
        let time = now()
        accrueBattery(at: time)
        recordingSince = time - elapsed
        scheduleBatteryStep(at: time)
        reportedBusy = cameraBusy
        rearm()
    }

    // MARK: - Receiving

    private func receive(_ packet: [UInt8]) {
        guard var reassembler else { return }
        let step = reassembler.receive(packet)
        self.reassembler = reassembler
        guard let bytes = step.message else { return }
        messagesReceived += 1
        do throws(MessageDecodingError) {
            let message = try Message(decoding: bytes)
            guard case .request(let opcode) = message.kind else { return }
            answer(message.id, opcode: opcode, fields: message.fields)
        } catch {
            answerUndecodable(bytes, error)
        }
        rearm()
    }

    /// A request whose envelope is readable but whose fields are not gets `invalidArgument`, with
    /// or without a hello before it, and is not run: a `hello` that cannot be read changes nothing
    /// (PROTOCOL.md §10). The message starts with the error's name in §10.
    private func answerUndecodable(_ bytes: [UInt8], _ error: MessageDecodingError) {
        guard bytes.count >= 4, bytes[0] == 0x01 else { return }
        let id = UInt16(bytes[1]) << 8 | UInt16(bytes[2])
        guard id != 0 else { return }
        respond(id, .response(Opcode(rawValue: bytes[3]), .invalidArgument), Fields { $0.errorMessage = "\(error.name): \(error)" })
    }

    private func answer(_ id: UInt16, opcode: Opcode, fields: Fields) {
        // A hello starts a new client session (PROTOCOL.md §7.1): the ids of earlier requests,
        // perhaps another program's on a link it left up, are not repeats any more.
        if opcode == .hello { recentResponses = [] }
        if let cached = recentResponses.first(where: { $0.id == id }) {
            repeatedRequests += 1
            try? port?.notify(cached.packets)
            return
        }
        if pending[id] != nil {
            // Still running: the one response comes when it is done (PROTOCOL.md §9.5).
            repeatedRequests += 1
            return
        }
        guard saidHello || opcode == .hello else {
            respond(id, .response(opcode, .notSupported), Fields { $0.errorMessage = "say hello first" })
            return
        }
        run(id, opcode, fields, at: now())
    }

    private func run(_ id: UInt16, _ opcode: Opcode, _ fields: Fields, at time: Duration) {
        switch perform(opcode, fields, at: time) {
        case .done(let outcome):
            finish(id, opcode, outcome, fields, at: time)
        case .answer(let outcome, let due):
            pending[id] = .answer(opcode, outcome, fields)
            setAlarm(.request(id), at: due)
        case .rerun(let due):
            pending[id] = .run(opcode, fields)
            setAlarm(.request(id), at: due)
        }
    }

    private func finish(_ id: UInt16, _ opcode: Opcode, _ outcome: Outcome, _ request: Fields, at time: Duration) {
        pending[id] = nil
        respond(id, .response(opcode, outcome.0), outcome.1)
        if outcome.0 == .ok { afterSuccess(opcode, request, at: time) }
        updateBusy()
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

    /// The link to `peripheral` is gone: requests in progress are dropped and the module lets
    /// go of every button, which closes an open bulb exposure (PROTOCOL.md §7.7, §9.5).
    private func linkDown(_ peripheral: InMemoryLink.Peripheral) {
        guard port === peripheral else { return }
        port = nil
        saidHello = false
        letGo(at: now())
        rearm()
    }

    /// Drops the requests in progress and releases every button, which closes an open bulb
    /// exposure: what a module does when its connection ends or it restarts.
    private func letGo(at time: Duration) {
        for id in pending.keys { alarms[.request(id)] = nil }
        pending = [:]
        focusing = false
        halfPressHeld = false
        if bulbOpenedAt != nil { closeBulb(at: time, atDeadline: false) }
    }

    // MARK: - Operations

    private static func refuse(_ status: StatusCode, _ message: String) -> Outcome {
        (status, Fields { $0.errorMessage = message })
    }

    /// Operations that ask the camera to do something, which a busy camera may refuse.
    private static let cameraCommands: Set<Opcode> = [.setSetting, .halfPress, .shoot, .bulbStart, .videoStart]
    /// Operations that need the camera awake.
    private static let needsCamera: Set<Opcode> = cameraCommands.union([.listSettings, .getSetting, .setTime, .geotag])

    private func perform(_ opcode: Opcode, _ request: Fields, at time: Duration) -> Step {
        if Self.needsCamera.contains(opcode) {
            if let step = cameraGate(at: time) { return step }
            resetIdle(at: time)
            if opcode == .shoot, let fireAt = request.fireAt, let step = schedule(fireAt, at: time) { return step }
            if Self.cameraCommands.contains(opcode), busyRefusals > 0, random.nextUnit() < busyRefusals {
                return .done(Self.refuse(.busy, "the camera is busy"))
            }
        }
        switch opcode {
        case .hello: return .done(hello(request, at: time))
        case .keepAlive:
            return .done((.ok, Fields {
                $0.uptime = UInt32(clamping: (time - bootedAt).wholeMilliseconds)
                $0.uptimeMicros = timerMicros(at: time)
            }))
        case .getStatus: return .done((.ok, statusFields(at: time)))
        case .listSettings: return .done((.ok, Fields { $0.descriptors = camera.descriptors }))
        case .getSetting: return .done(getSetting(request.setting!))
        case .setSetting: return .done(setSetting(request.value!))
        case .halfPress: return halfPress(at: time)
        case .shoot:
            var outcome = shoot(at: time)
            if outcome.0 == .ok, request.fireAt != nil { outcome.1.uptimeMicros = timerMicros(at: time) }
            return .done(outcome)
        case .release:
            halfPressHeld = false
            return .done((.ok, Fields()))
        case .bulbStart: return .done(bulbStart(request.duration!, at: time))
        case .bulbEnd: return .done(bulbEnd(at: time))
        case .videoStart: return .done(videoStart(at: time))
        case .videoStop: return .done(videoStop(at: time))
        case .setTime:
            camera.clockOffset = Int64(clamping: request.utcTime!) - Int64(clamping: utcNow())
            camera.utcOffset = request.utcOffset!
            return .done((.ok, Fields()))
        case .geotag:
            camera.geotag = VirtualCamera.Geotag(latitude: request.latitude!, longitude: request.longitude!,
                                                 altitude: request.altitude, utcTime: request.utcTime!)
            return .done((.ok, Fields()))
        default:
            let name = opcode.name.map { "\($0) is" } ?? "opcode 0x\(String(opcode.rawValue, radix: 16)) is unknown,"
            return .done(Self.refuse(.notSupported, "\(name) not supported by this module"))
        }
    }

    // MARK: - The module's timer (PROTOCOL.md §9.6)

    /// The module's timer at `time`: microseconds since it started, at its own rate.
    private func timerMicros(at time: Duration) -> UInt64 {
        UInt64(max(0, ((time - bootedAt).inSeconds * 1e6 * timerRate).rounded()))
    }

    /// The instant on the timeline at which the module's timer reads `micros`.
    private func time(atTimerMicros micros: UInt64) -> Duration {
        bootedAt + .nanoseconds(Int64((Double(micros) * 1000 / timerRate).rounded()))
    }

    /// Nil when a scheduled shot is due now (or overdue); otherwise waits for it, or refuses a
    /// time too far ahead.
    private func schedule(_ fireAt: UInt64, at time: Duration) -> Step? {
        let due = self.time(atTimerMicros: fireAt)
        if due - time > Self.longestFireLead {
            return .done(Self.refuse(.invalidArgument, "fireAt is more than \(Self.longestFireLead.shortDescription) ahead of the module's clock"))
        }
        return due > time ? .rerun(at: due) : nil
    }

    /// Nil when the camera can take a request now. A sleeping camera is woken, as a half-press
    /// wakes it, and the request runs once it is up; an `off` camera refuses.
    private func cameraGate(at time: Duration) -> Step? {
        if camera.power == .sleeping {
            awakeAt = time + camera.profile.wakeTime
            changePower(to: .on, at: time)
        }
        guard camera.power == .on else { return .done(Self.refuse(.cameraOff, "the camera is \(camera.power)")) }
        return time < awakeAt ? .rerun(at: awakeAt) : nil
    }

    private func hello(_ request: Fields, at time: Duration) -> Outcome {
        let wanted = request.minProtocolVersion!...request.maxProtocolVersion!
        guard wanted.overlaps(info.protocolVersions) else {
            // No version is agreed, so there is no session: the connection is back where it was
            // before any hello (PROTOCOL.md §7.1).
            saidHello = false
            eventSequence = 0
            return (.notSupported, Fields {
                $0.minProtocolVersion = info.protocolVersions.lowerBound
                $0.maxProtocolVersion = info.protocolVersions.upperBound
                $0.errorMessage = "no common protocol version"
            })
        }
        saidHello = true
        eventSequence = 0
        reportedEV = camera.power == .on ? reading(at: time) : nil
        return (.ok, Fields {
            $0.protocolVersion = min(wanted.upperBound, info.protocolVersions.upperBound)
            $0.firmwareVersion = info.firmwareVersion
            $0.capabilities = Self.capabilities
            $0.cameraModel = camera.profile.model
        })
    }

    private func statusFields(at time: Duration) -> Fields {
        let on = camera.power == .on
        return Fields {
            $0.moduleBattery = moduleBattery
            $0.cameraPower = camera.power
            $0.busy = cameraBusy
            $0.shotCounter = camera.shotCounter
            if on {
                $0.cameraBattery = camera.battery
                $0.storageState = camera.storageState
                $0.shotsRemaining = camera.shotsRemaining
                $0.exposureMode = camera.exposureMode
                $0.meteredEV = reading(at: time)
            }
        }
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
        let changes = camera.settings[value.setting] != value
        do throws(VirtualCamera.SettingRefusal) {
            try camera.apply(value)
        } catch .noSuchSetting {
            return Self.refuse(.notSupported, "the camera has no \(value.setting) setting")
        } catch {
            return Self.refuse(.invalidArgument, "\(value.setting) \(value.text) is not offered")
        }
        // Setting the value already in effect succeeds but changes nothing, so it is not
        // announced (PROTOCOL.md §7.5).
        if changes { settingToAnnounce = value }
        return (.ok, Fields {
            $0.setting = value.setting
            $0.value = value
        })
    }

    private func halfPress(at time: Duration) -> Step {
        if focusing { return .done(Self.refuse(.busy, "the camera is focusing")) }
        if camera.settings[.focusMode] == .focusMode(.manual) {
            return .done((.ok, Fields { $0.focusResult = .manualFocus }))
        }
        focusing = true
        return .answer((.ok, Fields { $0.focusResult = .acquired }), at: time + camera.profile.focusTime)
    }

    /// Why the camera cannot start a picture or a clip now, if it cannot.
    private func captureRefusal() -> Outcome? {
        if exposing || bulbOpenedAt != nil { return Self.refuse(.busy, "a shot is in progress") }
        if recordingSince != nil { return Self.refuse(.busy, "the camera is recording video") }
        if focusing { return Self.refuse(.busy, "the camera is focusing") }
        if buffered >= camera.profile.bufferDepth { return Self.refuse(.busy, "the buffer is full") }
        if camera.shotsRemaining == 0 { return Self.refuse(.cardFull, "the memory card is full") }
        return nil
    }

    private func shoot(at time: Duration) -> Outcome {
        if let refusal = captureRefusal() { return refusal }
        guard let exposure = camera.exposureTime else {
            return Self.refuse(.invalidArgument, "the shutter speed is bulb: use bulbStart")
        }
        exposing = true
        setAlarm(.exposureEnd, at: time + camera.profile.shutterLag + exposure)
        pressObserver?(now() - time)
        return (.ok, Fields())
    }

    private func bulbStart(_ milliseconds: UInt32, at time: Duration) -> Outcome {
        if let refusal = captureRefusal() { return refusal }
        guard camera.exposureMode == .bulb else { return Self.refuse(.invalidArgument, "the shutter speed is not bulb") }
        guard milliseconds >= 1 else { return Self.refuse(.invalidArgument, "a bulb exposure lasts at least 1 ms") }
        bulbOpenedAt = time
        pressObserver?(now() - time)
        setAlarm(.bulbDeadline, at: time + .milliseconds(Int64(milliseconds)))
        return (.ok, Fields())
    }

    private func bulbEnd(at time: Duration) -> Outcome {
        guard bulbOpenedAt != nil else { return Self.refuse(.invalidArgument, "no bulb exposure is open") }
        let length = closeBulb(at: time, atDeadline: false)
        return (.ok, Fields { $0.duration = UInt32(clamping: length.wholeMilliseconds) })
    }

    /// Closes the open bulb exposure: the picture is taken, whoever asked.
    @discardableResult
    private func closeBulb(at time: Duration, atDeadline: Bool) -> Duration {
        guard let openedAt = bulbOpenedAt else { return .zero }
        bulbOpenedAt = nil
        alarms[.bulbDeadline] = nil
        let length = time - openedAt
        if atDeadline {
            emit(.bulbDeadlineFired, Fields { $0.duration = UInt32(clamping: length.wholeMilliseconds) })
        }
        completeShot(at: time)
        return length
    }

    private func videoStart(at time: Duration) -> Outcome {
        if recordingSince != nil { return Self.refuse(.busy, "already recording") }
        if let refusal = captureRefusal() { return refusal }
        accrueBattery(at: time)
        recordingSince = time
        scheduleBatteryStep(at: time)
        return (.ok, Fields())
    }

    private func videoStop(at time: Duration) -> Outcome {
        guard let since = recordingSince else { return Self.refuse(.invalidArgument, "the camera is not recording") }
        accrueBattery(at: time)
        recordingSince = nil
        scheduleBatteryStep(at: time)
        resetIdle(at: time)
        return (.ok, Fields { $0.duration = UInt32(clamping: (time - since).wholeMilliseconds) })
    }

    /// Events and state that follow a successful request.
    private func afterSuccess(_ opcode: Opcode, _ request: Fields, at time: Duration) {
        defer { settingToAnnounce = nil }
        switch opcode {
        case .setSetting:
            if let value = settingToAnnounce {
                emit(.settingChanged, Fields {
                    $0.setting = value.setting
                    $0.value = value
                })
            }
        case .halfPress:
            focusing = false
            halfPressHeld = request.hold ?? false
            resetIdle(at: time)
        default:
            break
        }
    }

    // MARK: - The camera over time

    /// The camera cannot take a shot now (`busy` in PROTOCOL.md §5.2).
    private var cameraBusy: Bool {
        exposing || bulbOpenedAt != nil || recordingSince != nil || buffered >= camera.profile.bufferDepth
    }

    private func updateBusy() {
        guard cameraBusy != reportedBusy else { return }
        reportedBusy = cameraBusy
        emit(.busy, Fields { $0.busy = reportedBusy })
    }

    private func completeShot(at time: Duration) {
        exposing = false
        camera.shotCounter &+= 1
        camera.shotsRemaining = camera.shotsRemaining > 0 ? camera.shotsRemaining - 1 : 0
        buffered += 1
        if alarms[.pictureWritten] == nil { setAlarm(.pictureWritten, at: time + camera.profile.writeTime) }
        emit(.shotCompleted, Fields {
            $0.shotCounter = camera.shotCounter
            $0.cameraTime = camera.cameraTime(atUTC: utcNow())
        })
        emit(.storage, Fields {
            $0.storageState = camera.storageState
            $0.shotsRemaining = camera.shotsRemaining
        })
        drainBattery(camera.profile.batteryDrain.perShot, at: time)
        resetIdle(at: time)
        updateBusy()
    }

    private func changePower(to power: CameraPower, at time: Duration) {
        guard power != camera.power else { return }
        accrueBattery(at: time)
        if power != .on {
            // A camera switched off or going to standby ends what it was doing: the open bulb
            // exposure becomes a picture, the clip is saved.
            if bulbOpenedAt != nil { closeBulb(at: time, atDeadline: false) }
            recordingSince = nil
            halfPressHeld = false
            alarms[.autoPowerOff] = nil
            alarms[.meterSample] = nil
        }
        camera.power = power
        emit(.cameraPower, Fields { $0.cameraPower = power })
        if power == .on {
            resetIdle(at: time)
            meter(at: time)
        }
        scheduleBatteryStep(at: time)
        updateBusy()
    }

    /// Starts the camera's standby timer again: a camera sleeps after its idle delay.
    private func resetIdle(at time: Duration) {
        guard camera.power == .on else { return }
        setAlarm(.autoPowerOff, at: time + camera.profile.autoPowerOff)
    }

    /// Whether the camera is doing anything that keeps it from going to standby.
    private var cameraActive: Bool {
        exposing || bulbOpenedAt != nil || recordingSince != nil || buffered > 0 || focusing || halfPressHeld
    }

    // MARK: Battery

    /// Percent of a full charge per second now: idle drain while on, more while recording.
    private var drainPerSecond: Double {
        let drain = camera.profile.batteryDrain
        var percent = camera.power == .on ? drain.perIdleHour / 3600 : 0
        if recordingSince != nil { percent += drain.perVideoMinute / 60 }
        return percent * Self.microPercent
    }

    private func accrueBattery(at time: Duration) {
        let elapsed = time - chargeAt
        guard elapsed > .zero else { return }
        chargeAt = time
        charge = max(0, charge - Int64((drainPerSecond * elapsed.inSeconds).rounded()))
    }

    private func drainBattery(_ percent: Double, at time: Duration) {
        accrueBattery(at: time)
        charge = max(0, charge - Int64((percent * Self.microPercent).rounded()))
        batteryChanged(at: time)
    }

    /// Reports a level that moved by a whole percent; an empty battery switches the camera off.
    private func batteryChanged(at time: Duration) {
        let level = batteryLevel
        if level != camera.battery {
            camera.battery = level
            emit(.battery, Fields {
                $0.moduleBattery = moduleBattery
                $0.cameraBattery = level
            })
        }
        if level == 0, camera.power != .off { changePower(to: .off, at: time) }
        scheduleBatteryStep(at: time)
    }

    /// Wakes the module when the level will next drop by a whole percent.
    private func scheduleBatteryStep(at time: Duration) {
        let rate = drainPerSecond
        let level = batteryLevel
        guard rate > 0, level > 0 else {
            alarms[.batteryStep] = nil
            return
        }
        let seconds = (Double(charge) - Double(level - 1) * Self.microPercent) / rate
        setAlarm(.batteryStep, at: time + .nanoseconds(Int64((seconds * 1e9).rounded())))
    }

    /// The level in whole percent, rounded up as cameras show it; a millionth of a percent of
    /// slack absorbs the rounding of drain over time.
    private var batteryLevel: UInt8 {
        UInt8(clamping: (max(charge - 1, 0) + 999_999) / 1_000_000)
    }

    // MARK: Meter

    private func reading(at time: Duration) -> ExposureStops {
        scene.ev(at: time - sceneSince)
    }

    /// Reads the meter and tells the client of a change, no more often than four times a
    /// second; looks again while the light is changing and the camera is on.
    private func meter(at time: Duration) {
        guard camera.power == .on else { return }
        let ev = reading(at: time)
        camera.sceneEV = ev
        if saidHello, ev != reportedEV {
            if let last = lastMeterEvent, time - last < Self.meterInterval {
                setAlarm(.meterSample, at: last + Self.meterInterval)
                return
            }
            reportedEV = ev
            lastMeterEvent = time
            emit(.meteredEV, Fields { $0.meteredEV = ev })
        }
        if !scene.isConstant { setAlarm(.meterSample, at: time + Self.meterInterval) }
    }

    // MARK: - Alarms

    private func setAlarm(_ alarm: Alarm, at due: Duration) {
        alarmsSet += 1
        alarms[alarm] = (due, alarmsSet)
    }

    private var nextAlarm: (alarm: Alarm, due: Duration)? {
        alarms.min { ($0.value.due, $0.value.order) < ($1.value.due, $1.value.order) }.map { ($0.key, $0.value.due) }
    }

    /// Makes sure a task wakes the module for its earliest alarm; every entry point that may
    /// have set or cleared alarms ends here.
    private func rearm() {
        let due = nextAlarm?.due
        guard due != armedFor || alarmTask == nil && due != nil else { return }
        alarmTask?.cancel()
        armedFor = due
        guard let due else {
            alarmTask = nil
            return
        }
        let sleepUntil = sleepUntil
        alarmTask = Task { [weak self] in
            guard (try? await sleepUntil(due)) != nil else { return }
            await self?.ring()
        }
    }

    /// Handles every alarm that is due, each at the instant it was due.
    private func ring() {
        armedFor = nil
        alarmTask = nil
        let time = now()
        while let (alarm, due) = nextAlarm, due <= time {
            alarms[alarm] = nil
            handle(alarm, at: due)
        }
        rearm()
    }

    /// Handles whatever is due by now on the clock, without waiting for the alarm task: tests
    /// call it after moving a test clock on, so that what follows sees the module caught up.
    func settle() {
        ring()
    }

    private func handle(_ alarm: Alarm, at time: Duration) {
        switch alarm {
        case .exposureEnd:
            completeShot(at: time)
        case .pictureWritten:
            buffered = max(0, buffered - 1)
            if buffered > 0 { setAlarm(.pictureWritten, at: time + camera.profile.writeTime) }
            resetIdle(at: time)
            updateBusy()
        case .bulbDeadline:
            closeBulb(at: time, atDeadline: true)
        case .autoPowerOff:
            if cameraActive {
                resetIdle(at: time)
            } else {
                changePower(to: .sleeping, at: time)
            }
        case .meterSample:
            meter(at: time)
        case .batteryStep:
            accrueBattery(at: time)
            batteryChanged(at: time)
        case .request(let id):
            switch pending.removeValue(forKey: id) {
            case .run(let opcode, let fields)?: run(id, opcode, fields, at: time)
            case .answer(let opcode, let outcome, let fields)?: finish(id, opcode, outcome, fields, at: time)
            case nil: break
            }
        }
    }

    /// Starts the camera's timers the first time anything happens: a new module's camera is
    /// on and idle, so it drains and will go to standby.
    private func start() {
        guard !started else { return }
        started = true
        let time = now()
        resetIdle(at: time)
        scheduleBatteryStep(at: time)
        meter(at: time)
    }

    private var started = false
}

/// The time since now on `clock`, and a sleep until a given time since now: deadlines are
/// instants, so a late wake-up never shifts the next one.
func elapsedTime<C: Clock<Duration>>(on clock: C) -> (@Sendable () -> Duration, @Sendable (Duration) async throws -> Void) {
    let start = clock.now
    return ({ start.duration(to: clock.now) }, { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) })
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var inSeconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
