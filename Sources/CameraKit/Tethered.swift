/// A failure a backend reported below the camera API (libgphoto2, a module's link or protocol, a
/// daemon), already worded for the person who asked; ``kind`` gives its code and its
/// ``CameraError/Kind``.
public struct DeviceFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, CaseIterable, Hashable, Sendable {
        /// The camera is busy with something else; trying again later may work.
        case busy
        case cardFull
        /// The camera was not found, or went away (unplugged, switched off).
        case disconnected
        case timedOut
        /// This camera model cannot do it.
        case unsupported
        /// The system refused access to the camera (permissions, another program holds it).
        case permissionDenied
        /// The camera refused to pair (not in pairing mode, or it said no).
        case pairingRefused
        /// Anything else the camera or its driver reported.
        case failed
        /// The link to a module failed in a way that fits no other kind.
        case link
        /// The module speaks no protocol version this client speaks.
        case versionMismatch
        /// A request could not even be encoded: a bug on this side.
        case invalidRequest

        /// The stable code scripts go by.
        public var code: String {
            switch self {
            case .disconnected: "notConnected"
            case .failed: "camera"
            default: rawValue
            }
        }

        /// How the failure counts for exit and HTTP statuses.
        public var errorKind: CameraError.Kind {
            switch self {
            case .busy: .busy
            case .cardFull, .unsupported, .pairingRefused: .refused
            case .permissionDenied: .permission
            case .disconnected, .timedOut, .failed, .link, .versionMismatch: .unavailable
            case .invalidRequest: .internal
            }
        }
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// A picture copied from the camera to this computer.
public struct SavedFile: Hashable, Sendable {
    /// Where it was written.
    public var path: String
    public var bytes: Int
    /// The file's name and folder on the camera.
    public var cameraPath: String
    /// The run's frame it belongs to, when a run took it (see ``CaptureContext``).
    public var frame: Int?
    /// The shot it came from (``Shot/counter``).
    public var shotCounter: Int

    public init(path: String, bytes: Int, cameraPath: String, frame: Int?, shotCounter: Int) {
        self.path = path
        self.bytes = bytes
        self.cameraPath = cameraPath
        self.frame = frame
        self.shotCounter = shotCounter
    }
}

/// What the code that asks for a picture knows about it and the camera does not: the run's
/// frame number. A backend that names files after the frame reads it while shooting.
public enum CaptureContext {
    /// The frame of the run being shot, set by the intervalometer around each slot's commands.
    @TaskLocal public static var frame: Int?
}
