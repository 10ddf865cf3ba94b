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
