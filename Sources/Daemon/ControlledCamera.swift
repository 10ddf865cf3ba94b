public import UnleashedKit

/// What the control API needs from a camera the daemon holds. Kept this small so that the API
/// can be exercised with a stand-in instead of a whole ``Camera`` backend.
public protocol ControlledCamera: Sendable {
    /// What clients call the camera; unique among the cameras the daemon holds.
    var name: String { get }

    /// The state of the camera and its link now.
    func status() async throws(CameraError) -> CameraStatus

    /// A new subscription to the camera's events, starting now; it ends when the camera closes.
    func events() async -> AsyncStream<CameraEvent>
}

/// Any ``Camera`` backend offered to the control API under a name.
public struct HeldCamera: ControlledCamera {
    public let name: String
    public let camera: any Camera

    /// Names the camera as its backend does (``CameraIdentity/name``) unless `name` is given.
    public init(_ camera: any Camera, name: String? = nil) {
        self.camera = camera
        self.name = name ?? camera.identity.name
    }

    public func status() async throws(CameraError) -> CameraStatus {
        try await camera.status()
    }

    public func events() async -> AsyncStream<CameraEvent> {
        await camera.events()
    }
}
