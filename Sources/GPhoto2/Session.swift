import CGPhoto2
import CameraKit
import Foundation
import JSON

/// A camera found on a port.
public struct DetectedCamera: Hashable, Sendable {
    /// libgphoto2's name for the model, e.g. "Canon EOS 80D".
    public var model: String
    /// The port to open it on, e.g. `usb:001,004`.
    public var port: String

    public init(model: String, port: String) {
        self.model = model
        self.port = port
    }
}

/// Something a camera reported through `gp_camera_wait_for_event`.
enum DeviceEvent: Hashable, Sendable {
    case timeout
    case fileAdded(folder: String, name: String)
    case captureComplete
    /// The card filled up (PTP's StoreFull event, which libgphoto2 passes on as unknown).
    case storeFull
    case other
}

/// The message libgphoto2 last reported through a context, kept to explain the next failure.
private final class ContextMessages {
    var last: String?
}

/// The driver and port lists, loaded once per process: loading reads every driver from disk.
private enum DriverLists {
    nonisolated(unsafe) static var abilities: OpaquePointer?
    nonisolated(unsafe) static var ports: OpaquePointer?

    static func load(_ context: OpaquePointer) throws(GPhoto2Error) -> (abilities: OpaquePointer, ports: OpaquePointer) {
        if let abilities, let ports { return (abilities, ports) }
        var abilitiesList: OpaquePointer?
        var portList: OpaquePointer?
        let action = "load libgphoto2's camera drivers"
        try check(gp_abilities_list_new(&abilitiesList), action)
        try check(gp_abilities_list_load(abilitiesList, context), action)
        try check(gp_port_info_list_new(&portList), action)
        try check(gp_port_info_list_load(portList), action)
        guard let abilitiesList, let portList else { throw GPhoto2Error(code: GP_ERROR_LIBRARY, action: action) }
        (abilities, ports) = (abilitiesList, portList)
        return (abilitiesList, portList)
    }

    private static func check(_ result: Int32, _ action: String) throws(GPhoto2Error) {
        if result < GP_OK { throw GPhoto2Error(code: result, action: action) }
    }
}

/// The camera models libgphoto2's drivers know, by the names `gphoto2 --list-cameras` prints.
enum KnownModels {
    /// libgphoto2's own spelling of `name` (which it matches ignoring case), or nil when none of
    /// its drivers knows it.
    static func lookUp(_ name: String) throws(GPhoto2Error) -> String? {
        let abilities = try list()
        let index = gp_abilities_list_lookup_model(abilities, name)
        guard index >= GP_OK else { return nil }
        var found = CameraAbilities()
        guard gp_abilities_list_get_abilities(abilities, index, &found) == GP_OK else { return nil }
        return cString(found.model)
    }

    /// Every model's name, in libgphoto2's order.
    static func all() throws(GPhoto2Error) -> [String] {
        let abilities = try list()
        return (0..<max(0, gp_abilities_list_count(abilities))).compactMap { index in
            var entry = CameraAbilities()
            guard gp_abilities_list_get_abilities(abilities, index, &entry) == GP_OK else { return nil }
            return cString(entry.model)
        }
    }

    /// The names among `models` most like `name`: those holding each of its words (ignoring
    /// case and punctuation), else those within a few edits of it; at most `limit`, closest first.
    static func closest(to name: String, among models: [String], limit: Int = 5) -> [String] {
        // libgphoto2 keeps a model's name in 128 bytes (CameraAbilities.model): nothing is like
        // a longer one, and comparing it with every model would take long.
        guard name.utf8.count < 128 else { return [] }
        let words = Self.words(name)
        let scored = models.map { (model: $0, distance: editDistance(name.lowercased(), $0.lowercased())) }
        let holdingWords = words.isEmpty ? [] : scored.filter { candidate in
            let theirs = Self.words(candidate.model).joined(separator: " ")
            return words.allSatisfy { theirs.contains($0) }
        }
        let near = holdingWords.isEmpty ? scored.filter { $0.distance <= max(2, name.count / 3) } : holdingWords
        return near.sorted { ($0.distance, $0.model) < ($1.distance, $1.model) }.prefix(limit).map(\.model)
    }

    private static func list() throws(GPhoto2Error) -> OpaquePointer {
        assert(OwnerThread.shared.isCurrent, "libgphoto2 must only be called on its owner thread")
        let context: OpaquePointer = gp_context_new()
        defer { gp_context_unref(context) }
        return try DriverLists.load(context).abilities
    }

    private static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// libgphoto2's version, as `gphoto2 --version` shows it (`2.5.30`).
    static var libraryVersion: String {
        gp_library_version(GP_VERSION_SHORT)?.pointee.map { String(cString: $0) } ?? "?"
    }
}

/// libgphoto2's handle on one camera, opened on a fixed model and port, and reopened in place
/// when the camera comes back. Used on the owner thread only.
final class Session: @unchecked Sendable {
    let model: String
    /// The port now: a USB camera gets a new device number each time it is plugged in.
    private(set) var port: String
    private(set) var operations = GP_OPERATION_NONE
    private let context: OpaquePointer
    private let messages = ContextMessages()
    private var camera: UnsafeMutablePointer<CGPhoto2.Camera>?

    private init(model: String, port: String) {
        self.model = model
        self.port = port
        context = gp_context_new()
        gp_context_set_error_func(context, { _, text, data in
            guard let text, let data else { return }
            Unmanaged<ContextMessages>.fromOpaque(data).takeUnretainedValue().last = String(cString: text)
        }, Unmanaged.passUnretained(messages).toOpaque())
    }

    deinit {
        disconnect()
        gp_context_unref(context)
    }

    static let noCameraMessage = "no camera found on USB; check the cable, that the camera is on and in PTP/PC mode, "
        + "and that no other program (gvfs, a photo app) holds it — see docs/usb-cameras.md"

    /// Opens the camera on `port`: `usb:BUS,DEV`, `ptpip:HOST[:PORT]`, or nil / `usb:` for the
    /// first camera found on USB. A `model` (libgphoto2's own name for it, ``KnownModels``) is
    /// opened as that model on the port, the way to reach a camera that detection does not find.
    static func open(port requested: String?, model named: String? = nil) throws(GPhoto2Error) -> Session {
        let wanted = requested?.trimmingCharacters(in: .whitespaces) ?? ""
        let model: String, port: String
        if let named {
            // As gp_camera_init does for a camera it detected itself: the model's abilities and the
            // port are set on the camera; a USB port without a device number is then searched by
            // the model's USB ids, else by the PTP interface class (libgphoto2/gphoto2-camera.c).
            let usb = wanted.isEmpty || wanted == "usb" || wanted == "usb:"
            (model, port) = (named, usb ? "usb:" : wanted.hasPrefix("ptpip:") ? withEventPort(wanted) : wanted)
        } else if wanted.hasPrefix("ptpip:") {
            // Network cameras are not found by detection; libgphoto2 drives them as this model.
            (model, port) = ("PTP/IP Camera", withEventPort(wanted))
        } else {
            let specific = wanted.hasPrefix("usb:") && wanted.count > 4 ? wanted : nil
            let found = try autodetect().filter { camera in
                specific.map { camera.port == $0 } ?? camera.port.hasPrefix("usb:")
            }
            guard let first = found.first else {
                let message = specific.map { "no camera found on \($0); `unleashed cameras` lists the cameras found" }
                throw GPhoto2Error(code: GP_ERROR_MODEL_NOT_FOUND, action: "find a camera",
                                   explanation: message ?? noCameraMessage)
            }
            (model, port) = (first.model, first.port)
        }
        let session = Session(model: model, port: port)
        try session.connect()
        return session
    }

    /// libgphoto2 opens the PTP/IP event connection on 15740 unless the path names a second
    /// port; a camera given one other port (`ptpip:HOST:PORT`) serves both connections on it.
    static func withEventPort(_ path: String) -> String {
        let address = path.dropFirst("ptpip:".count).split(separator: ":", omittingEmptySubsequences: false)
        guard address.count == 2, let port = Int(address[1]), port != 15740 else { return path }
        return "\(path):\(port)"
    }

    /// The cameras libgphoto2 finds on USB (and other ports it can probe).
    static func autodetect() throws(GPhoto2Error) -> [DetectedCamera] {
        assert(OwnerThread.shared.isCurrent, "libgphoto2 must only be called on its owner thread")
        let context = gp_context_new()
        defer { gp_context_unref(context) }
        var list: OpaquePointer?
        guard gp_list_new(&list) == GP_OK, let list else { throw GPhoto2Error(code: GP_ERROR_NO_MEMORY, action: "look for cameras") }
        defer { gp_list_free(list) }
        let count = gp_camera_autodetect(list, context)
        guard count >= GP_OK else { throw GPhoto2Error(code: count, action: "look for cameras") }
        return (0..<gp_list_count(list)).compactMap { index in
            var name: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
            guard gp_list_get_name(list, index, &name) == GP_OK, gp_list_get_value(list, index, &value) == GP_OK,
                  let name, let value else { return nil }
            return DetectedCamera(model: String(cString: name), port: String(cString: value))
        }
    }

    /// Sets up the driver and port for the model and starts the PTP session.
    func connect() throws(GPhoto2Error) {
        assert(OwnerThread.shared.isCurrent, "libgphoto2 must only be called on its owner thread")
        disconnect()
        let action = "open the camera on \(port)"
        let lists = try DriverLists.load(context)
        let modelIndex = gp_abilities_list_lookup_model(lists.abilities, model)
        guard modelIndex >= GP_OK else {
            throw GPhoto2Error(code: modelIndex, action: action,
                               explanation: "libgphoto2 has no driver for the camera model '\(model)'")
        }
        var abilities = CameraAbilities()
        try check(gp_abilities_list_get_abilities(lists.abilities, modelIndex, &abilities), action)
        let portIndex = gp_port_info_list_lookup_path(lists.ports, port)
        guard portIndex >= GP_OK else {
            throw GPhoto2Error(code: portIndex, action: action,
                               explanation: "libgphoto2 cannot open the port '\(port)'; is its port driver installed?")
        }
        var info: GPPortInfo?
        try check(gp_port_info_list_get_info(lists.ports, portIndex, &info), action)
        var handle: UnsafeMutablePointer<CGPhoto2.Camera>?
        try check(gp_camera_new(&handle), action)
        guard let handle else { throw GPhoto2Error(code: GP_ERROR_NO_MEMORY, action: action) }
        do throws(GPhoto2Error) {
            try check(gp_camera_set_abilities(handle, abilities), action)
            try check(gp_camera_set_port_info(handle, info), action)
            let result = guardingStandardInput { gp_camera_init(handle, context) }
            if result == GP_ERROR_IO_USB_FIND || result == GP_ERROR_BAD_PARAMETERS, port.hasPrefix("usb:") {
                // gp_camera_init looks on a USB port for the model's USB ids, then for its
                // interface class (libgphoto2/gphoto2-camera.c). libusb1 fails the first with "Bad
                // parameters" for a model whose vendor id is 0 (the generic PTP class camera), and
                // the second likewise for a model with no class (libgphoto2_port/libusb1/libusb1.c,
                // `if (!idvendor)` and `C_PARAMS (class)`): either way no such camera is there.
                throw GPhoto2Error(code: GP_ERROR_IO_USB_FIND, action: action, explanation: "no camera found on \(port) as '\(model)'; "
                    + "check the cable, that the camera is on and in PTP/PC mode, and that no other program holds it "
                    + "— see docs/usb-cameras.md")
            }
            if result < GP_OK {
                // The port's own message says why it could not be opened ("Access denied").
                let portMessage = handle.pointee.port.flatMap { gp_port_get_error($0) }.map { String(cString: $0) }
                    .flatMap { $0 == "No error description available" ? nil : $0 }
                throw GPhoto2Error(code: result, action: action, detail: [messages.last, portMessage]
                    .compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "; ").nilIfEmpty)
            }
        } catch {
            gp_camera_unref(handle)
            throw error
        }
        operations = abilities.operations
        camera = handle
    }

    /// Opens the camera again after it went away. A USB camera plugged back in has a new
    /// device number, so when its old port fails it is looked for by model.
    func reconnect() throws(GPhoto2Error) {
        do {
            try connect()
        } catch where port.hasPrefix("usb:") {
            guard let moved = try? Self.autodetect().first(where: { $0.model == model && $0.port.hasPrefix("usb:") }),
                  moved.port != port else { throw error }
            port = moved.port
            try connect()
        }
    }

    /// Ends the PTP session and releases the port; harmless when not connected.
    func disconnect() {
        guard let camera else { return }
        assert(OwnerThread.shared.isCurrent, "libgphoto2 must only be called on its owner thread")
        guardingStandardInput {
            gp_camera_exit(camera, context)
            gp_camera_unref(camera)
        }
        self.camera = nil
    }

    /// libgphoto2 2.5.30 closes file descriptor 0 whenever a PTP/IP session ends (the unused
    /// third socket of its PTP/IP state is left 0 and closed with the other two). Closing this
    /// process's standard input is bad enough; once 0 is reused for a socket, the next session
    /// end closes someone else's connection. So fd 0 is saved around the calls that can end a
    /// PTP/IP session and put back afterwards, but only into a free fd 0: another thread may have
    /// been given 0 (a socket, a pipe) while it was closed, and that descriptor stays its own.
    private func guardingStandardInput<T>(_ body: () -> T) -> T {
        guard port.hasPrefix("ptpip:") else { return body() }
        let saved = dup(0)
        let result = body()
        if saved >= 0 {
            // F_DUPFD takes the lowest free number: 0 when it is still free, else another
            // number, which is closed again, leaving fd 0 to whoever holds it now.
            let restored = fcntl(saved, F_DUPFD, 0)
            if restored > 0 { close(restored) }
            close(saved)
        }
        return result
    }

    private func check(_ result: Int32, _ action: String) throws(GPhoto2Error) {
        guard result < GP_OK else { return }
        throw GPhoto2Error(code: result, action: action, detail: messages.last)
    }

    /// Makes one call on the open camera; `action` says what it does, for the error.
    @discardableResult
    func call(_ action: String, _ body: (UnsafeMutablePointer<CGPhoto2.Camera>, OpaquePointer) -> Int32) throws(GPhoto2Error) -> Int32 {
        assert(OwnerThread.shared.isCurrent, "libgphoto2 must only be called on its owner thread")
        guard let camera else { throw GPhoto2Error(code: GP_ERROR_IO, action: action, detail: "the camera is not open") }
        messages.last = nil
        let result = body(camera, context)
        try check(result, action)
        return result
    }

    // MARK: - Configuration

    /// Every control in the camera's configuration tree.
    func widgets() throws(GPhoto2Error) -> [Widget] {
        var root: OpaquePointer?
        try call("read the camera's settings") { gp_camera_get_config($0, &root, $1) }
        guard let root else { return [] }
        defer { gp_widget_free(root) }
        return WidgetAccess.leaves(of: root).map(\.widget)
    }

    /// Sends `value` to the control `widget`, then reads back what the camera kept.
    func write(_ value: WidgetAccess.Value, to widget: Widget) throws(GPhoto2Error) -> Widget {
        let action = "set \(widget.name)"
        var node: OpaquePointer?
        try call(action) { gp_camera_get_single_config($0, widget.name, &node, $1) }
        guard let node else { throw GPhoto2Error(code: GP_ERROR_BAD_PARAMETERS, action: action) }
        defer { gp_widget_free(node) }
        try check(WidgetAccess.assign(value, to: node), action)
        try call(action) { gp_camera_set_single_config($0, widget.name, node, $1) }
        return try read(widget)
    }

    /// The control's state now.
    func read(_ widget: Widget) throws(GPhoto2Error) -> Widget {
        var node: OpaquePointer?
        try call("read \(widget.name)") { gp_camera_get_single_config($0, widget.name, &node, $1) }
        guard let node else { return widget }
        defer { gp_widget_free(node) }
        return WidgetAccess.describe(node, path: widget.path)
    }

    // MARK: - Capture and files

    func triggerCapture() throws(GPhoto2Error) {
        try call("take a picture") { gp_camera_trigger_capture($0, $1) }
    }

    /// The next event, waiting at most `milliseconds`.
    func nextEvent(milliseconds: Int32) throws(GPhoto2Error) -> DeviceEvent {
        var type = GP_EVENT_UNKNOWN
        var data: UnsafeMutableRawPointer?
        try call("wait for the camera") { gp_camera_wait_for_event($0, milliseconds, &type, &data, $1) }
        defer { free(data) }
        switch type {
        case GP_EVENT_TIMEOUT:
            return .timeout
        case GP_EVENT_CAPTURE_COMPLETE:
            return .captureComplete
        case GP_EVENT_UNKNOWN:
            // Generic PTP drivers describe events they do not handle as "PTP Event 400a, Param1 ...".
            let text = data.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
            return text.lowercased().contains("event 400a") ? .storeFull : .other
        case GP_EVENT_FILE_ADDED:
            guard let path = data?.assumingMemoryBound(to: CameraFilePath.self).pointee else { return .other }
            return .fileAdded(folder: cString(path.folder), name: cString(path.name))
        default:
            return .other
        }
    }

    /// The file's bytes, or with `preview` its thumbnail (a small JPEG most cameras keep, RAW
    /// files included).
    func download(folder: String, name: String, preview: Bool = false) throws(GPhoto2Error) -> Data {
        let action = preview ? "read the thumbnail of \(folder)/\(name)" : "download \(folder)/\(name)"
        var file: OpaquePointer?
        try check(gp_file_new(&file), action)
        defer { gp_file_unref(file) }
        let type = preview ? GP_FILE_TYPE_PREVIEW : GP_FILE_TYPE_NORMAL
        try call(action) { gp_camera_file_get($0, folder, name, type, file, $1) }
        var bytes: UnsafePointer<CChar>?
        var size: UInt = 0
        try check(gp_file_get_data_and_size(file, &bytes, &size), action)
        guard let bytes else { return Data() }
        return Data(bytes: bytes, count: Int(size))
    }

    func delete(folder: String, name: String) throws(GPhoto2Error) {
        try call("delete \(folder)/\(name) from the camera") { gp_camera_file_delete($0, folder, name, $1) }
    }

    /// Whether the camera still answers a request that changes nothing.
    func answers() -> Bool {
        var infos: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        guard let camera else { return false }
        let result = gp_camera_get_storageinfo(camera, &infos, &count, context)
        free(infos)
        return result >= GP_OK || result == GP_ERROR_NOT_SUPPORTED
    }

    /// The first storage's state and how many more pictures fit, as the camera guesses.
    func storage() throws(GPhoto2Error) -> (state: StorageState, picturesLeft: Int?) {
        var infos: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        try call("read the memory card's state") { gp_camera_get_storageinfo($0, &infos, &count, $1) }
        defer { free(infos) }
        guard let infos, count > 0 else { return (.noCard, nil) }
        let info = infos.pointee
        let has = { (field: CameraStorageInfoFields) in info.fields.rawValue & field.rawValue != 0 }
        let left = has(GP_STORAGEINFO_FREESPACEIMAGES) ? Int(info.freeimages) : nil
        let full = left == 0 || (has(GP_STORAGEINFO_FREESPACEKBYTES) && info.freekbytes == 0)
        let readOnly = has(GP_STORAGEINFO_ACCESS) && info.access != GP_STORAGEINFO_AC_READWRITE
        return (full ? .full : readOnly ? .readOnly : .ok, left)
    }

}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// The text of a fixed-size C character array that libgphoto2 fills (a model's name, a path),
/// up to its first NUL.
func cString<T>(_ characters: T) -> String {
    withUnsafeBytes(of: characters) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}
