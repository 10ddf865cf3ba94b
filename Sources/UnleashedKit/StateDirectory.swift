public import Foundation

/// Where unleashed keeps state that should outlive a reboot but is not a document (the run
/// journal, the demo camera, the remembered module): `$XDG_STATE_HOME/unleashed`, else
/// `~/.local/state/unleashed`, as the XDG base directory specification places such state.
public func unleashedStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
    let stateHome = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory())
            .appendingPathComponent(".local/state")
    return stateHome.appendingPathComponent("unleashed")
}

/// The control socket of the system daemon.
public let unleashedSystemSocketPath = "/run/unleashed/control.sock"

/// The control socket of one user's daemon, `$XDG_RUNTIME_DIR/unleashed/control.sock` (the
/// system daemon's when there is no runtime directory). The daemon listens there by default and
/// the CLI looks there, so both take it from here.
public func unleashedUserSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    return runtime.map { "\($0)/unleashed/control.sock" } ?? unleashedSystemSocketPath
}
