public import CameraProtocols
public import GATT

/// A simulated GoPro (HERO12 Black by default) speaking Open GoPro over BLE.
///
/// It boots for ``Timing/boot`` after a connection wakes it (Get Hardware Info fails until
/// then), goes busy and encoding for ``Timing/capture`` after each photo (refusing commands
/// with status 1 meanwhile), records in its video preset group, pushes the statuses a client
/// registered for, and powers itself down, dropping the link, when no keep-alive came for
/// ``Timing/autoPowerDown`` while it is not recording. Powered down it still advertises and a
/// connection wakes it, as a GoPro does; ``sleep()`` (switched off) refuses connections until
/// ``wake()``. With its remote switched off (Wireless Connections off) it does not connect.
public actor GoProBody: SimulatedCameraBody {
    /// The body's durations, short in tests.
    public struct Timing: Sendable {
        /// From a connection waking it to Get Hardware Info succeeding.
        public var boot: Duration
        /// How long a photo (or the end of a video) keeps it busy and encoding.
        public var capture: Duration
        /// Without a keep-alive for this long it powers down; nil never.
        public var autoPowerDown: Duration?

        public init(boot: Duration = .milliseconds(500), capture: Duration = .milliseconds(300),
                    autoPowerDown: Duration? = .seconds(10)) {
            self.boot = boot
            self.capture = capture
            self.autoPowerDown = autoPowerDown
        }
    }

    public nonisolated let brand = CameraBrand.gopro
    public nonisolated let model: String
    public nonisolated let address: String
    public nonisolated var services: [GATTServiceLayout] { GoPro.services }
    public nonisolated var requiresBond: Bool { true }
    /// The model ID it advertises.
    public nonisolated let modelID: UInt8
    public nonisolated let serialNumber: String
    public nonisolated let timing: Timing

    private var basics = BodyBasics(pairingOpen: false)
    private var awake = true
    private var readyAt = ContinuousClock.now
    private var lastKeepAlive = ContinuousClock.now
    private var link = 0
    private var incoming: [GATTCharacteristicID: GoPro.Reassembler] = [:]
    private var registered: Set<GoPro.StatusID> = []
    private var heldBusy = false

    private var capturing = false
    /// Status 8: busy with a capture, or held busy by ``setBusy(_:)``.
    public var busy: Bool { capturing || heldBusy }
    /// Status 10.
    public private(set) var encoding = false
    public private(set) var recording = false
    public private(set) var presetGroup: GoPro.PresetGroup
    public private(set) var control = GoPro.CameraControl.idle
    /// What Set Date Time or Set Local Date Time set last.
    public private(set) var dateTime: GoPro.DateTime?
    /// The UTC offset (minutes) and daylight saving Set Local Date Time set last.
    public private(set) var timeZone: (utcOffsetMinutes: Int16, daylightSaving: Bool)?
    /// Whether a client said it is a third-party one (Set Analytics).
    public private(set) var thirdPartyClient = false
    /// The name of the last client that finished pairing.
    public private(set) var pairedClientName: String?
    /// Whether a client registered for COHN status changes.
    public private(set) var cohnStatusRegistered = false
    /// The Wi-Fi access point (GP-0004 switches it; GP-0005 reads it).
    public private(set) var accessPointOn = false
    public private(set) var videosRecorded = 0
    public private(set) var keepAlivesReceived = 0
    /// How often it powered down for want of a keep-alive.
    public private(set) var autoPowerDowns = 0
    /// Every request it read, in order.
    public private(set) var requests: [GoPro.Request] = []
    /// Every whole message it could not read (answered "invalid parameter"), in order: what a
    /// client sent that this body does not know.
    public private(set) var unrecognized: [[UInt8]] = []
    public var batteryPercent = 87

    public init(address: String = "C0:CA:4E:00:00:01", model: String = "HERO12 Black", modelID: UInt8 = 62,
                presetGroup: GoPro.PresetGroup = .photo, timing: Timing = Timing()) {
        self.address = address
        self.model = model
        self.modelID = modelID
        self.presetGroup = presetGroup
        self.timing = timing
        let digits = address.filter(\.isHexDigit)
        serialNumber = "C3501324" + String(String(digits.suffix(6)).uppercased())
    }

    public var picturesTaken: Int { basics.picturesTaken }

    public func advertisement() -> AdvertisementData {
        var status: GoPro.Advertisement.Status = awake ? [.processorAwake] : []
        if basics.pairingOpen { status.insert(.pairing) }
        let data = GoPro.Advertisement(status: status, modelID: modelID)
        return AdvertisementData(name: "GoPro " + serialNumber.suffix(4), serviceUUIDs: [GoPro.controlService],
                                 manufacturerData: [GoPro.companyID: data.manufacturerData],
                                 serviceData: [GoPro.controlService: [0, 0, 0, 0] + Array(serialNumber.suffix(4).utf8)])
    }

    public var isConnectable: Bool { !basics.asleep && basics.remoteEnabled }

    public func connected(_ deliver: @escaping @Sendable (BodySignal) -> Void) {
        basics.connected(deliver)
        link += 1
        incoming = [:]
        registered = []
        cohnStatusRegistered = false
        lastKeepAlive = .now
        if !awake {
            awake = true
            readyAt = .now + timing.boot
        }
        watchForPowerDown(link)
    }

    public func disconnected() {
        basics.disconnected()
        forgetLink()
    }

    private func forgetLink() {
        link += 1
        control = .idle
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        switch characteristic {
        case GoPro.wifiPower:
            // GP-0004: 1 on, 0 off; the state characteristic follows.
            guard value.count == 1, value[0] <= 1 else { throw .unlikely }
            accessPointOn = value[0] == 1
            return
        case GoPro.wifiSSID, GoPro.wifiPassword:
            // Writable in the table; this body keeps its own access point's name and password.
            return
        case GoPro.command, GoPro.settings, GoPro.query, GoPro.networkManagementCommand:
            break
        default:
            throw .writeNotPermitted
        }
        var reassembler = incoming[characteristic] ?? GoPro.Reassembler()
        let whole: [UInt8]?
        do {
            whole = try reassembler.accept(value)
        } catch {
            incoming[characteristic] = nil
            throw .unlikely
        }
        incoming[characteristic] = reassembler
        if let whole { handle(whole, on: characteristic) }
    }

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case GoPro.wifiSSID: Array(accessPointSSID.utf8)
        case GoPro.wifiPassword: Array(accessPointPassword.utf8)
        case GoPro.wifiState: [accessPointOn ? 1 : 0]
        default: throw .readNotPermitted
        }
    }

    /// The access point's SSID, as Get Hardware Info and GP-0002 give it.
    private var accessPointSSID: String { "GP" + serialNumber.suffix(8) }
    /// The access point's password (GP-0003): fixed per body.
    private var accessPointPassword: String { "pass-" + serialNumber.suffix(6) }

    public func sleep() {
        basics.sleep()
        awake = false
        forgetLink()
    }

    public func wake() {
        basics.wake()
    }

    public func setPairingMode(_ open: Bool) {
        basics.pairingOpen = open
    }

    /// Wireless Connections: off, the camera drops the link and does not connect.
    public func setRemoteEnabled(_ enabled: Bool) {
        basics.remoteEnabled = enabled
        if !enabled {
            basics.dropLink("wireless connections were switched off")
            forgetLink()
        }
    }

    /// Ends the boot now, however long ``Timing/boot`` is: a test holds the camera booting with
    /// a long boot and lets it finish once it has seen the client wait.
    public func finishBooting() {
        readyAt = min(readyAt, .now)
    }

    /// Holds status 8 (someone in the camera's menus); commands are refused while it holds.
    public func setBusy(_ held: Bool) {
        change(held: held)
    }

    // MARK: - Requests

    private var isReady: Bool { ContinuousClock.now >= readyAt }
    private var refusesCommands: Bool { busy || encoding || heldBusy || !isReady }

    private func handle(_ message: [UInt8], on characteristic: GATTCharacteristicID) {
        let request: GoPro.Request
        do {
            request = try GoPro.Request(message: message, on: characteristic)
        } catch {
            unrecognized.append(message)
            let reply = switch characteristic {
            case GoPro.settings: GoPro.settingsResponse
            case GoPro.query: GoPro.queryResponse
            case GoPro.networkManagementCommand: GoPro.networkManagementResponse
            default: GoPro.commandResponse
            }
            send([message.first ?? 0, GoPro.ResultStatus.invalidParameter.byte], on: reply)
            return
        }
        requests.append(request)
        let id = request.message[0]
        switch request {
        case .getHardwareInfo:
            guard isReady else { return answer(request, .error) }
            let info = GoPro.HardwareInfo(modelNumber: UInt32(modelID), modelName: model, firmwareVersion: "H23.01.02.32.00",
                                          serialNumber: serialNumber, accessPointSSID: accessPointSSID,
                                          accessPointMAC: "0000" + serialNumber.suffix(8))
            send(GoPro.CommandResponse(id: id, status: .success, payload: info.payload).message, on: GoPro.commandResponse)
        case .getOpenGoProVersion:
            send(GoPro.CommandResponse(id: id, status: .success, payload: [1, 2, 1, 0]).message, on: GoPro.commandResponse)
        case .setCameraControl(let claimed):
            control = claimed
            send(GoPro.ProtobufMessage(id: .setCameraControlResponse, result: .success).message, on: GoPro.commandResponse)
        case .keepAlive:
            keepAlivesReceived += 1
            lastKeepAlive = .now
            answer(request, .success)
        case .getStatuses(let ids):
            send(GoPro.QueryResponse(queryID: id, values: values(of: ids)).message, on: GoPro.queryResponse)
        case .registerStatusUpdates(let ids):
            registered.formUnion(ids)
            send(GoPro.QueryResponse(queryID: id, values: values(of: ids)).message, on: GoPro.queryResponse)
        case .setShutter(false):
            guard recording else { return answer(request, .success) }
            answer(request, .success)
            recording = false
            change(capturing: true)
            finishCapture(.video)
        case .setShutter(true):
            guard !refusesCommands else { return answer(request, .error) }
            answer(request, .success)
            if presetGroup == .video {
                recording = true
                change(encoding: true)
            } else {
                change(capturing: true, encoding: true)
                finishCapture(.photo)
            }
        case .loadPresetGroup(let group):
            guard !refusesCommands else { return answer(request, .error) }
            presetGroup = group
            answer(request, .success)
            push([GoPro.StatusValue(id: .presetGroup, integer: Int(group.rawValue), count: 4)])
        case .setDateTime(let time):
            guard !refusesCommands else { return answer(request, .error) }
            dateTime = time
            answer(request, .success)
        case .setLocalDateTime(let time, let offset, let daylightSaving):
            guard !refusesCommands else { return answer(request, .error) }
            dateTime = time
            timeZone = (offset, daylightSaving)
            answer(request, .success)
        case .setThirdPartyClientInfo:
            thirdPartyClient = true
            answer(request, .success)
        case .pairingFinished(let name):
            // The camera leaves its pairing screen: it no longer advertises pairing.
            pairedClientName = name
            basics.pairingOpen = false
            send(GoPro.ProtobufMessage(id: .pairingFinishedResponse, result: .success).message, on: GoPro.networkManagementResponse)
        case .getCOHNStatus(let register):
            // Never provisioned for a home network: unprovisioned and idle.
            cohnStatusRegistered = cohnStatusRegistered || register
            send(GoPro.COHNStatus(provisioned: false, networkState: 5, enabled: false).message, on: GoPro.queryResponse)
        case .setSetting, .sleep:
            guard !refusesCommands else { return answer(request, .error) }
            answer(request, .success)
            if case .sleep = request { powerDown("the camera was told to sleep") }
        }
    }

    private func answer(_ request: GoPro.Request, _ status: GoPro.ResultStatus) {
        send(GoPro.CommandResponse(id: request.message[0], status: status).message, on: request.responseCharacteristic)
    }

    private func values(of ids: [GoPro.StatusID]) -> [GoPro.StatusValue] {
        let all: [GoPro.StatusValue] = [
            GoPro.StatusValue(id: .busy, integer: busy ? 1 : 0),
            GoPro.StatusValue(id: .encoding, integer: encoding ? 1 : 0),
            GoPro.StatusValue(id: .batteryPercent, integer: batteryPercent),
            GoPro.StatusValue(id: .ready, integer: isReady ? 1 : 0),
            GoPro.StatusValue(id: .presetGroup, integer: Int(presetGroup.rawValue), count: 4),
        ]
        return ids.isEmpty ? all : ids.compactMap { id in all.first { $0.id == id } }
    }

    /// Changes what status 8 and 10 derive from, pushing what changed to a client registered
    /// for it.
    private func change(capturing newCapturing: Bool? = nil, encoding newEncoding: Bool? = nil, held: Bool? = nil) {
        let before = (busy: busy, encoding: encoding)
        capturing = newCapturing ?? capturing
        encoding = newEncoding ?? encoding
        heldBusy = held ?? heldBusy
        var changed: [GoPro.StatusID] = []
        if busy != before.busy { changed.append(.busy) }
        if encoding != before.encoding { changed.append(.encoding) }
        push(values(of: changed))
    }

    private func push(_ values: [GoPro.StatusValue]) {
        let wanted = values.filter { registered.contains($0.id) }
        guard !wanted.isEmpty else { return }
        send(GoPro.QueryResponse(queryID: GoPro.QueryID.statusUpdate.rawValue, values: wanted).message, on: GoPro.queryResponse)
    }

    private enum Capture { case photo, video }

    /// After ``Timing/capture`` the capture ends whatever happened to the link: idle again,
    /// and the photo or video counted.
    private func finishCapture(_ capture: Capture) {
        Task { [weak self, duration = timing.capture] in
            try? await Task.sleep(for: duration)
            await self?.captured(capture)
        }
    }

    private func captured(_ capture: Capture) {
        switch capture {
        case .photo: basics.picturesTaken += 1
        case .video: videosRecorded += 1
        }
        change(capturing: false, encoding: false)
    }

    private func send(_ message: [UInt8], on characteristic: GATTCharacteristicID) {
        guard let packets = try? GoPro.Fragmenter().packets(for: message) else { return }
        for packet in packets { basics.send(packet, on: characteristic) }
    }

    // MARK: - Auto power-down

    private func watchForPowerDown(_ current: Int) {
        guard let limit = timing.autoPowerDown else { return }
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: limit / 4)
                guard let self, await self.powerDownIfIdle(current, after: limit) else { return }
            }
        }
    }

    /// Powers down when the keep-alive is overdue; returns whether to keep watching this link.
    private func powerDownIfIdle(_ current: Int, after limit: Duration) -> Bool {
        guard link == current, basics.isLinked else { return false }
        guard !encoding, ContinuousClock.now - lastKeepAlive >= limit else { return true }
        autoPowerDowns += 1
        powerDown("the camera powered down: no keep-alive for \(limit)")
        return false
    }

    private func powerDown(_ reason: String) {
        awake = false
        basics.dropLink(reason)
        forgetLink()
    }
}
