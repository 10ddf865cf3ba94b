public import CameraKit
public import UnleashedProtocol

extension FailureReason {
    /// What each status a module answers with (PROTOCOL.md §4.2) means to the camera API.
    static let byStatus: [StatusCode: FailureReason] = [
        .busy: .busy, .invalidArgument: .invalidArgument, .notSupported: .notSupported, .cameraOff: .cameraOff,
        .cardFull: .cardFull, .cameraNotAttached: .cameraNotAttached, .internalError: .internalError,
    ]

    /// The reason a module's status gives; a status this version does not know keeps its text.
    public init(_ status: StatusCode) {
        self = Self.byStatus[status] ?? .other(status.description)
    }
}

extension CameraError {
    /// Sorts a session failure into the case a caller acts on, in words without wire codes.
    public init(_ error: SessionError) {
        switch error {
        case .refused(let opcode, let status, let message): self = .refused(opcode.description, FailureReason(status), message: message)
        case .timedOut(let opcode, let after, _): self = .timedOut(opcode.description, after: after)
        case .disconnected(let reason): self = .notConnected(reason)
        case .versionMismatch: self = .device(DeviceFailure(.versionMismatch, error.description))
        case .invalidRequest: self = .device(DeviceFailure(.invalidRequest, error.description))
        case .transport: self = .device(DeviceFailure(.link, error.description))
        }
    }
}
