import CGPhoto2
public import CameraKit
import Foundation
import UnleashedKit

/// A camera reached through libgphoto2: on USB, or over the network with PTP/IP.
///
/// The libgphoto2 session is opened once and kept: reopening costs a second or more per call on
/// real cameras. Every libgphoto2 call runs on one dedicated thread (this actor's executor),
/// because libgphoto2 is neither thread-safe nor non-blocking. Pictures are taken with
/// `gp_camera_trigger_capture` and confirmed by the camera's file-added event; downloads (when
/// a ``DownloadPolicy`` is given) run between operations, so they never delay the next trigger
/// by more than one file.
///
/// When the camera goes away (unplugged, switched off), the failing operation reports it and
/// the next one tries once to open the camera again, so a run picks up when it comes back.
///
/// libgphoto2 has no light reading that works across cameras, so ``lastMeteredEV`` is worked
/// out from the last picture: how bright its thumbnail came out, and the shutter speed (or bulb
/// time), ISO and aperture it was taken at.
public actor GPhoto2Camera: CameraKit.Camera {
    public nonisolated let identity: CameraIdentity
    private let session: Session
    private let downloads: DownloadPolicy?

    /// The port the camera was opened on, e.g. `usb:001,004` or `ptpip:192.168.1.20`.
    public nonisolated let port: String

    public nonisolated var unownedExecutor: UnownedSerialExecutor { OwnerThread.shared.asUnownedSerialExecutor() }

    /// How long after the exposure time a picture may take to be reported.
    static let shotReportGrace: Duration = .seconds(10)
    /// How long one `gp_camera_wait_for_event` call may block, so cancellation is seen quickly.
    static let eventSlice: Int32 = 100

    private let hub = CameraEventHub()
    /// Pictures taken in this session.
    private var pictures = 0
    private var lastFrame: Int?
    private var pending: [PendingFile] = []
    private var downloader: Task<Void, Never>?
    /// Why the session was lost, until it is opened again.
    private var lost: GPhoto2Error?
    private var closing = false
    /// Pictures reported saved or not saved so far (``settle()``).
    private var reportedFiles = 0
    private var exposure: Duration
    private var videoStarted: ContinuousClock.Instant?
    /// The shutter speed, ISO and aperture as last read or set, for metering by pictures.
    private var lightSettings: [SettingID: SettingValue] = [:]
    /// The last picture taken, and what it says about the light once read.
    private var lastPicture: MeteredPicture?
    /// Set once someone asked for a reading: from then on a picture is metered before its
    /// download, after which some cameras (and a delete after download) take it off the card.
    private var meteringWanted = false

    /// The scene's EV at ISO 100 that the last picture shows, read from its thumbnail; nil before
    /// the first picture, when a setting was on auto, or when the camera gives no thumbnail and
    /// the picture is not a JPEG.
    public var lastMeteredEV: ExposureStops? {
        meteringWanted = true
        return meterLastPicture()
    }

    /// A picture whose light can be read: where it is on the camera and the EV it was exposed at.
    private struct MeteredPicture {
        var folder: String
        var name: String
        /// The JPEG of a RAW+JPEG pair, reported after the RAW: read whole if the RAW has no
        /// thumbnail.
        var jpegName: String?
        var exposureEV: Double?
        var reading: ExposureStops?
        /// Reads that failed (a camera still writing the file, a busy moment): it is tried again
        /// at the next request, up to ``GPhoto2Camera/meteringAttempts``.
        var failedReads = 0
    }

    /// How many times a picture's light is tried before the picture is given up on.
    static let meteringAttempts = 3

    /// A lost camera is tried once more here: schedulers ask this before each slot and skip
    /// the slot when it is false, so this is where a run notices that the camera is back.
    public var isReady: Bool {
        if lost != nil, !closing { _ = try? ensureOpen() }
        return !closing && lost == nil
    }

    private struct PendingFile {
        var folder: String
        var name: String
        var shot: Int
        var frame: Int?
        var time: Date
        var cameraPath: String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }
    }

    private init(session: Session, widgets: [Widget], downloads: DownloadPolicy?) {
        self.session = session
        self.downloads = downloads
        port = session.port
        exposure = Self.exposureTime(in: widgets) ?? .zero
        lightSettings = Self.lightSettings(in: widgets)
        let value = { (name: String) in widgets.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 } }
        identity = CameraIdentity(
            name: port, firmwareVersion: value("deviceversion"),
            capabilities: Self.capabilities(widgets: widgets, operations: session.operations),
            cameraModel: value("cameramodel") ?? value("model") ?? session.model, link: .tethered)
    }

    /// Opens the camera on `port` and keeps the session until ``close()``.
    ///
    /// - Parameters:
    ///   - port: `usb:BUS,DEV`, `ptpip:HOST[:PORT]`, or nil / `usb:` for the first camera on USB.
    ///   - model: libgphoto2's name for the camera's model (`gphoto2 --list-cameras`), to open a
    ///     camera that detection does not find as that model; nil detects it (or, on `ptpip:`,
    ///     takes it for a generic PTP/IP camera).
    ///   - downloads: where to copy each picture taken; nil leaves pictures on the camera only.
    public static func open(port: String?, model: String? = nil, downloads: DownloadPolicy? = nil) async throws(CameraError) -> GPhoto2Camera {
        if let port, !(port.isEmpty || port == "usb" || port.hasPrefix("usb:") || port.hasPrefix("ptpip:")) {
            throw .invalidArgument("'\(port)' is not a camera port; write usb:, usb:BUS,DEV or ptpip:HOST[:PORT]")
        }
        if let model, model.trimmingCharacters(in: .whitespaces).isEmpty {
            throw .invalidArgument("the camera model is empty; `gphoto2 --list-cameras` lists the models libgphoto2 knows")
        }
        // libgphoto2's PTP/IP driver writes to its sockets with write(2): a camera that went away
        // would raise SIGPIPE and end the process instead of failing the call.
        signal(SIGPIPE, SIG_IGN)
        let opened = await OwnerThread.shared.perform {
            Result { () throws(CameraError) -> (Session, [Widget]) in
                let known = try model.map { name throws(CameraError) in try knownModel(name) }
                do throws(GPhoto2Error) {
                    let session = try Session.open(port: port, model: known)
                    // Some drivers offer no configuration; the camera can still shoot.
                    return (session, (try? session.widgets()) ?? [])
                } catch {
                    throw CameraError(error)
                }
            }
        }
        switch opened {
        case .success(let (session, widgets)): return GPhoto2Camera(session: session, widgets: widgets, downloads: downloads)
        case .failure(let error): throw error
        }
    }

    /// libgphoto2's name for `model`; a model no driver of this libgphoto2 knows is refused with
    /// the names it knows that are most like it. On the owner thread.
    private static func knownModel(_ model: String) throws(CameraError) -> String {
        let closest: [String]
        do throws(GPhoto2Error) {
            if let known = try KnownModels.lookUp(model) { return known }
            closest = KnownModels.closest(to: model, among: try KnownModels.all())
        } catch {
            throw CameraError(error)
        }
        let suggestion = closest.isEmpty ? "" : "; the closest it knows: " + closest.map { "'\($0)'" }.joined(separator: ", ")
        throw .invalidArgument("libgphoto2 \(KnownModels.libraryVersion) knows no camera model '\(model)'\(suggestion) "
            + "(`gphoto2 --list-cameras` lists them all)")
    }

    deinit {
        let session = session
        OwnerThread.shared.submit { session.disconnect() }
    }

    private static func capabilities(widgets: [Widget], operations: CameraOperation) -> Capabilities {
        let names = Set(widgets.map(\.name))
        var capabilities: Capabilities = []
        let captures = GP_OPERATION_TRIGGER_CAPTURE.rawValue | GP_OPERATION_CAPTURE_IMAGE.rawValue
        if operations.rawValue & captures != 0 { capabilities.insert(.shoot) }
        if !widgets.isEmpty { capabilities.insert(.readSettings) }
        if SettingWidgets.names.contains(where: { SettingWidgets.widget(for: $0.setting, in: widgets).map { !$0.readOnly } ?? false }) {
            capabilities.insert(.writeSettings)
        }
        if names.contains("bulb") { capabilities.insert(.bulb) }
        // The values may be on auto now; the ramp sets them itself.
        if lightSettingIDs.allSatisfy({ SettingWidgets.widget(for: $0, in: widgets) != nil }) { capabilities.insert(.meteredEV) }
        if names.contains("movie") || names.contains("movierecordtarget") { capabilities.insert(.video) }
        if names.contains("autofocusdrive") { capabilities.insert(.focus) }
        if clockWidget(in: widgets) != nil { capabilities.insert(.setTime) }
        return capabilities
    }

    private static func exposureTime(in widgets: [Widget]) -> Duration? {
        guard let widget = SettingWidgets.widget(for: .shutterSpeed, in: widgets), let text = widget.value else { return nil }
        return SettingWidgets.value(fromChoice: text, for: .shutterSpeed).flatMap(exposureTime(of:))
    }

    /// The settings that decide how much light a picture gets.
    private static let lightSettingIDs: [SettingID] = [.shutterSpeed, .iso, .aperture]

    private static func lightSettings(in widgets: [Widget]) -> [SettingID: SettingValue] {
        var settings: [SettingID: SettingValue] = [:]
        for setting in lightSettingIDs {
            guard let text = SettingWidgets.widget(for: setting, in: widgets)?.value,
                  let value = SettingWidgets.value(fromChoice: text, for: setting) else { continue }
            settings[setting] = value
        }
        return settings
    }

    /// The EV at ISO 100 a picture taken now is exposed at (`bulb`: for that long); nil when a
    /// setting is unknown or on auto.
    private func exposureEV(bulb: Duration? = nil) -> Double? {
        ExposureValue.ev100(of: lightSettings, bulbSeconds: bulb?.seconds)
    }

    /// Reads the last picture's light: from its thumbnail, or from a JPEG of it read whole when
    /// the camera keeps no thumbnail. A reading is kept; a failed read is tried again later.
    private func meterLastPicture() -> ExposureStops? {
        guard var picture = lastPicture else { return nil }
        guard picture.reading == nil, picture.failedReads < Self.meteringAttempts, lost == nil,
              let exposureEV = picture.exposureEV else { return picture.reading }
        var brightness = (try? attempt { () throws(GPhoto2Error) in
            try session.download(folder: picture.folder, name: picture.name, preview: true)
        }).flatMap(PictureMeter.brightness(jpeg:))
        let jpeg = [picture.name, picture.jpegName].compactMap { $0 }.first { Self.isJPEG($0) }
        if brightness == nil, lost == nil, let jpeg {
            brightness = (try? attempt { () throws(GPhoto2Error) in
                try session.download(folder: picture.folder, name: jpeg)
            }).flatMap(PictureMeter.brightness(jpeg:))
        }
        if let brightness {
            picture.reading = ExposureStops(twentyFourths: Int32(((exposureEV + brightness) * 24).rounded()))
        } else {
            picture.failedReads += 1
        }
        lastPicture = picture
        return picture.reading
    }

    private static func isJPEG(_ name: String) -> Bool {
        let lowercased = name.lowercased()
        return lowercased.hasSuffix(".jpg") || lowercased.hasSuffix(".jpeg")
    }

    /// How long the shutter stays open at `value`, when it is a timed shutter speed.
    private static func exposureTime(of value: SettingValue) -> Duration? {
        guard case .shutterSpeed(let speed) = value, !speed.isBulb else { return nil }
        return .milliseconds(Int64(speed.seconds * 1000))
    }

    // MARK: - Events

    public func events() -> AsyncStream<CameraEvent> {
        hub.subscribe()
    }

    private func emit(_ event: CameraEvent) {
        switch event {
        case .fileSaved, .fileNotSaved: reportedFiles += 1
        default: break
        }
        hub.yield(event)
    }

    // MARK: - Session upkeep

    /// Fails when closed; reopens the camera once when the session was lost.
    private func ensureOpen() throws(CameraError) {
        guard !closing else { throw .device(DeviceFailure(.disconnected, "the camera connection was closed")) }
        try reopenIfLost()
    }

    private func reopenIfLost() throws(CameraError) {
        guard lost != nil else { return }
        do {
            try session.reconnect()
        } catch {
            throw .device(DeviceFailure(.disconnected, "the camera is gone: \(error.description)"))
        }
        lost = nil
        emit(.connection(.ready))
        startDownloads()
    }

    /// Runs libgphoto2 work, marking the session lost when the failure broke it.
    private func attempt<T>(_ body: () throws(GPhoto2Error) -> T) throws(CameraError) -> T {
        do {
            return try body()
        } catch {
            var failure = error
            // PTP/IP reports a dropped connection as a generic PTP error, not an I/O error; a
            // camera that no longer answers a harmless request is gone.
            if failure.kind == .failed, !session.answers() {
                failure = GPhoto2Error(code: GP_ERROR_IO, action: error.action, detail: error.detail ?? error.codeText)
            }
            if failure.losesSession, lost == nil {
                lost = failure
                session.disconnect()
                emit(.connection(.reconnecting(attempt: 1, nextDelay: .zero)))
            }
            throw CameraError(failure)
        }
    }

    // MARK: - Status and settings

    public func status() async throws(CameraError) -> CameraStatus {
        let widgets = try readWidgets()
        var storage: (state: StorageState, picturesLeft: Int?)?
        do {
            storage = try attempt { () throws(GPhoto2Error) in try session.storage() }
        } catch {
            // Not every driver reports storage; only a camera that went away fails the status.
            if lost != nil { throw error }
        }
        let battery = widgets.first { $0.name == "batterylevel" }?.value.flatMap(Self.percentage)
        return CameraStatus(
            connection: .ready, moduleBattery: nil, cameraBattery: battery, storage: storage?.state,
            shotsRemaining: storage?.picturesLeft, cameraPower: .on, exposureMode: nil, meteredEV: lastPicture?.reading,
            busy: false, shotCounter: pictures)
    }

    /// Reads "75%", "75" or "75 %" as 75.
    static func percentage(_ text: String) -> Int? {
        let digits = text.trimmingCharacters(in: .whitespaces).prefix { $0.isASCII && $0.isNumber }
        guard let value = Int(digits), (0...100).contains(value) else { return nil }
        return value
    }

    public func settings() async throws(CameraError) -> [SettingDescriptor] {
        let widgets = try readWidgets()
        return SettingWidgets.names.compactMap { entry in
            SettingWidgets.widget(for: entry.setting, in: widgets).flatMap { SettingWidgets.descriptor(entry.setting, from: $0) }
        }
    }

    /// The control carrying `setting` and its typed state.
    private func settingWidget(_ setting: SettingID) throws(CameraError) -> (Widget, SettingDescriptor) {
        let widgets = try readWidgets()
        guard let widget = SettingWidgets.widget(for: setting, in: widgets) else { throw .settingNotOffered(setting) }
        guard let descriptor = SettingWidgets.descriptor(setting, from: widget) else {
            throw .device(DeviceFailure(.failed, "the camera's \(setting.displayName) is '\(widget.value ?? "")', which is not a "
                + "value this program reads; use `unleashed settings get \(widget.path)` instead"))
        }
        return (widget, descriptor)
    }

    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        try settingWidget(setting).1.value
    }

    /// - Throws: ``CameraError/valueNotOffered(_:nearest:offered:)`` naming the nearest offered
    ///   values when the camera does not offer `value`; nothing is sent then.
    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        let (widget, descriptor) = try settingWidget(value.setting)
        guard !descriptor.readOnly else { throw .readOnly(value.setting) }
        guard let choice = SettingWidgets.choice(for: value, in: widget) else {
            throw .valueNotOffered(value, nearest: value.nearest(among: descriptor.choices), offered: descriptor.choices)
        }
        let written = try attempt { () throws(GPhoto2Error) in try session.write(.text(choice), to: widget) }
        let inEffect = written.value.flatMap { SettingWidgets.value(fromChoice: $0, for: value.setting) } ?? value
        remember(inEffect)
        emit(.settingChanged(inEffect))
        return inEffect
    }

    // MARK: - Raw controls

    /// Every control the camera offers, with its value and choices now.
    public func widgets() async throws(CameraError) -> [Widget] {
        try readWidgets()
    }

    /// The configuration tree now; the shutter speed in it is remembered for the next shot's wait.
    private func readWidgets() throws(CameraError) -> [Widget] {
        try ensureOpen()
        let widgets = try attempt { () throws(GPhoto2Error) in try session.widgets() }
        exposure = Self.exposureTime(in: widgets) ?? exposure
        lightSettings = Self.lightSettings(in: widgets)
        return widgets
    }

    /// Keeps a setting just changed for the next shot's wait and its metering.
    private func remember(_ value: SettingValue) {
        exposure = Self.exposureTime(of: value) ?? exposure
        if Self.lightSettingIDs.contains(value.setting) { lightSettings[value.setting] = value }
    }

    /// One control, by full path (`/main/imgsettings/iso`) or name (`iso`).
    public func widget(_ pathOrName: String) async throws(CameraError) -> Widget {
        guard let found = try readWidgets().first(where: { $0.isNamed(pathOrName) }) else {
            throw .invalidArgument("the camera has no control '\(pathOrName)'; `unleashed settings list --all` shows them all")
        }
        return found
    }

    /// Sets one control from text (a choice, a number, `1`/`0` for switches, `now` for dates);
    /// returns it as the camera has it afterwards.
    public func setWidget(_ pathOrName: String, to text: String) async throws(CameraError) -> Widget {
        let widget = try await widget(pathOrName)
        guard !widget.readOnly else {
            throw .invalidArgument("\(widget.path) is read-only on this camera")
        }
        let value = try WidgetAccess.encode(text, for: widget)
        let written = try attempt { () throws(GPhoto2Error) in try session.write(value, to: widget) }
        if let setting = SettingWidgets.setting(carriedBy: widget, among: [widget]),
           let typed = written.value.flatMap({ SettingWidgets.value(fromChoice: $0, for: setting) }) {
            remember(typed)
            emit(.settingChanged(typed))
        }
        return written
    }

    /// Sets a control the backend itself drives (bulb, movie, focus, clock).
    @discardableResult
    private func drive(_ widget: Widget, _ value: WidgetAccess.Value) throws(CameraError) -> Widget {
        try attempt { () throws(GPhoto2Error) in try session.write(value, to: widget) }
    }

    // MARK: - Capture

    /// How many times a trigger refused as busy is sent again. Busy means nothing was done, so
    /// a retry is safe; cameras say it while still writing the previous picture.
    static let busyRetries = 3

    public func shoot() async throws(CameraError) -> Shot {
        try ensureOpen()
        collectEvents()
        var retries = Self.busyRetries
        while true {
            let started = ContinuousClock.now
            do {
                try attempt { () throws(GPhoto2Error) in try session.triggerCapture() }
                return try awaitPicture(since: started, within: exposure + Self.shotReportGrace, exposureEV: exposureEV())
            } catch .device(let failure) where failure.kind == .busy && retries > 0 && !Task.isCancelled {
                retries -= 1
                collectEvents(waiting: 200)
            }
        }
    }

    /// Waits for the camera to report the picture just triggered, exposed at `exposureEV`; queues
    /// its file.
    private func awaitPicture(since started: ContinuousClock.Instant, within limit: Duration, exposureEV: Double?) throws(CameraError) -> Shot {
        let number = pictures + 1
        let frame = CaptureContext.frame
        while started.duration(to: .now) < limit {
            guard !Task.isCancelled else { throw .cancelled }
            let event = try attempt { () throws(GPhoto2Error) in try session.nextEvent(milliseconds: Self.eventSlice) }
            if event == .storeFull { throw CameraError(GPhoto2Error(code: GP_ERROR_NO_SPACE, action: "take a picture")) }
            guard case .fileAdded(let folder, let name) = event else { continue }
            let latency = started.duration(to: .now)
            pictures = number
            lastFrame = frame
            lastPicture = MeteredPicture(folder: folder, name: name, exposureEV: exposureEV)
            queue(PendingFile(folder: folder, name: name, shot: number, frame: frame, time: Date()))
            emit(.shotCompleted(counter: number, cameraTime: nil))
            startDownloads()
            return Shot(counter: number, latency: latency)
        }
        throw .shotNotReported(after: limit)
    }

    /// Takes in the events waiting now (files that came late, e.g. the JPEG of a RAW+JPEG pair),
    /// waiting at most `milliseconds` for each next one.
    private func collectEvents(waiting milliseconds: Int32 = 1) {
        guard lost == nil else { return }
        for _ in 0..<100 {
            guard let event = try? attempt({ () throws(GPhoto2Error) in try session.nextEvent(milliseconds: milliseconds) }) else { return }
            switch event {
            case .timeout: return
            case .fileAdded(let folder, let name): queueLate(folder: folder, name: name)
            case .captureComplete, .storeFull, .other: continue
            }
        }
    }

    private func queue(_ file: PendingFile) {
        guard downloads != nil else { return }
        pending.append(file)
    }

    /// Queues a file that arrived after its shot was reported; it belongs to the last shot.
    private func queueLate(folder: String, name: String) {
        if lastPicture?.folder == folder, Self.isJPEG(name) { lastPicture?.jpegName = name }
        queue(PendingFile(folder: folder, name: name, shot: pictures, frame: lastFrame, time: Date()))
    }

    public func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        guard duration >= .milliseconds(1), duration <= .seconds(86_400) else {
            throw .invalidArgument("a bulb exposure lasts from 1 ms to 24 h")
        }
        let widgets = try readWidgets()
        guard let bulb = widgets.first(where: { $0.name == "bulb" }) else {
            throw .notSupported("bulb exposures are", because: "libgphoto2 offers no 'bulb' control for it")
        }
        if let shutter = SettingWidgets.widget(for: .shutterSpeed, in: widgets),
           let current = shutter.value.flatMap({ SettingWidgets.value(fromChoice: $0, for: .shutterSpeed) }),
           current != .shutterSpeed(.bulb),
           shutter.choices.contains(where: { SettingWidgets.value(fromChoice: $0, for: .shutterSpeed) == .shutterSpeed(.bulb) }) {
            throw .notInBulbMode(current: current)
        }
        collectEvents()
        let started = ContinuousClock.now
        do {
            try drive(bulb, .integer(1))
        } catch .device(let failure) where failure.kind == .unsupported {
            throw .notSupported("bulb exposures are", because: "it refuses libgphoto2's 'bulb' control (\(failure.message))")
        }
        var ending = BulbExposure.Ending.deadline
        var failure: CameraError?
        while started.duration(to: .now) < duration {
            if Task.isCancelled { ending = .stoppedEarly; break }
            let left = duration - started.duration(to: .now)
            let slice = min(Self.eventSlice, Int32(max(1, left.wholeMilliseconds)))
            do {
                if case .fileAdded(let folder, let name) = try attempt({ () throws(GPhoto2Error) in try session.nextEvent(milliseconds: slice) }) {
                    queueLate(folder: folder, name: name)
                }
            } catch {
                failure = error
                break
            }
        }
        // Close the shutter however the wait ended.
        do {
            try ensureOpen()
            try drive(bulb, .integer(0))
        } catch {
            throw failure ?? error
        }
        let exposed = started.duration(to: .now)
        if let failure { throw failure }
        let shot = try awaitPicture(since: started, within: exposed + Self.shotReportGrace, exposureEV: exposureEV(bulb: exposed))
        return BulbExposure(shot: shot, exposed: exposed, ending: ending)
    }

    // MARK: - Other operations

    public func focus(hold: Bool) async throws(CameraError) -> FocusResult {
        guard let drive = try readWidgets().first(where: { $0.name == "autofocusdrive" }) else {
            throw .notSupported("autofocus is", because: "libgphoto2 offers no 'autofocusdrive' control for it")
        }
        try self.drive(drive, .integer(1))
        return .acquired
    }

    /// Nothing is held: ``focus(hold:)`` drives focus once and lets go.
    public func release() async throws(CameraError) {}

    public func startVideo() async throws(CameraError) {
        try record(true)
        videoStarted = .now
    }

    public func stopVideo() async throws(CameraError) -> Duration {
        try record(false)
        defer { videoStarted = nil }
        return videoStarted.map { $0.duration(to: .now) } ?? .zero
    }

    /// Starts or stops recording with the generic `movie` switch, or Canon's record target
    /// ("Card" records, "None" stops; the body must be in movie mode, `eosmoviemode`).
    private func record(_ on: Bool) throws(CameraError) {
        let widgets = try readWidgets()
        let named = { (name: String) in widgets.first { $0.name == name } }
        if let movie = named("movie") {
            try drive(movie, .integer(on ? 1 : 0))
            return
        }
        let target = on ? "card" : "none"
        guard let recordTarget = named("movierecordtarget"),
              let choice = recordTarget.choices.first(where: { $0.lowercased() == target }) else {
            throw .notSupported("video recording is", because: "libgphoto2 offers no 'movie' or 'movierecordtarget' control for it")
        }
        if on, let movieMode = named("eosmoviemode") { try drive(movieMode, .integer(1)) }
        try drive(recordTarget, .text(choice))
    }

    /// The control that sets the camera's clock: a date, or a switch that copies this computer's.
    private static func clockWidget(in widgets: [Widget]) -> Widget? {
        widgets.first { $0.name == "datetime" && $0.kind == .date && !$0.readOnly }
            ?? widgets.first { ($0.name == "syncdatetime" || $0.name == "syncdatetimeutc") && $0.kind == .toggle }
    }

    public func setTime(_ time: WallTime) async throws(CameraError) {
        guard let clock = Self.clockWidget(in: try readWidgets()) else {
            throw .notSupported("setting the clock is", because: "libgphoto2 offers no 'datetime' or 'syncdatetime' control for it")
        }
        if clock.kind == .date {
            try drive(clock, .integer(Int32(clamping: time.unixMilliseconds / 1000)))
        } else {
            try drive(clock, .integer(1))
        }
    }

    public func geotag(_ position: GeoPosition) async throws(CameraError) {
        throw .notSupported("geotags are", because: "libgphoto2 has no way to send a position to a camera")
    }

    // MARK: - Downloads

    private func startDownloads() {
        guard downloads != nil, downloader == nil, !pending.isEmpty, lost == nil, !closing else { return }
        downloader = Task { await self.downloadPending() }
    }

    /// Saves queued files one at a time, letting any waiting operation (the next trigger) go
    /// first before each file.
    private func downloadPending() async {
        while lost == nil {
            await Task.yield()
            collectEvents()
            guard lost == nil, !pending.isEmpty else { break }
            save(pending.removeFirst())
        }
        downloader = nil
    }

    private func save(_ file: PendingFile) {
        guard let downloads else { return }
        // Some cameras take a picture off the card once it has been downloaded.
        if meteringWanted, lastPicture?.folder == file.folder, lastPicture?.name == file.name { _ = meterLastPicture() }
        let data: Data
        do {
            data = try attempt { () throws(GPhoto2Error) in try session.download(folder: file.folder, name: file.name) }
        } catch {
            if lost != nil {
                pending.insert(file, at: 0)  // fetched when the camera is back
            } else {
                emit(.fileNotSaved(cameraPath: file.cameraPath, reason: error.description))
            }
            return
        }
        let name = downloads.template.fileName(frame: file.frame, counter: file.shot, time: file.time, cameraFileName: file.name)
        let path: String
        do {
            path = try PictureWriter.write(data, folder: downloads.folder, name: name)
        } catch {
            emit(.fileNotSaved(cameraPath: file.cameraPath, reason: "could not write it to \(downloads.folder): \(error.localizedDescription)"))
            return
        }
        if downloads.deleteFromCamera {
            _ = try? attempt { () throws(GPhoto2Error) in try session.delete(folder: file.folder, name: file.name) }
        }
        emit(.fileSaved(SavedFile(path: path, bytes: data.count, cameraPath: file.cameraPath, frame: file.frame, shotCounter: file.shot)))
    }

    /// Saves the pictures still waiting to be downloaded (while the camera is there), and
    /// returns how many pictures have been reported saved or not saved so far.
    public func settle() async -> Int {
        if let downloader { await downloader.value }
        collectEvents()
        while lost == nil, !pending.isEmpty { save(pending.removeFirst()) }
        return reportedFiles
    }

    // MARK: - Closing

    /// Saves every picture still to be downloaded (opening the camera again once if it was
    /// lost), then ends the session.
    public func close() async {
        guard !closing else { return }
        closing = true
        if let downloader { await downloader.value }
        collectEvents()
        if !pending.isEmpty { _ = try? reopenIfLost() }
        while lost == nil, !pending.isEmpty { save(pending.removeFirst()) }
        for file in pending {
            emit(.fileNotSaved(cameraPath: file.cameraPath, reason: "the camera was gone when the connection closed; the picture is still on the camera"))
        }
        pending = []
        session.disconnect()
        emit(.connection(.idle))
        hub.finish()
    }
}

/// Finding cameras, for `unleashed cameras`.
public enum GPhoto2Detection {
    /// The cameras libgphoto2 finds now. Network (PTP/IP) cameras are not found this way; open
    /// them by address.
    public static func detect() async throws(CameraError) -> [DetectedCamera] {
        let found = await OwnerThread.shared.perform {
            Result { () throws(GPhoto2Error) -> [DetectedCamera] in try Session.autodetect() }
        }
        do { return try found.get() } catch { throw CameraError(error) }
    }
}
