public import Foundation
import Synchronization

/// One run of `unleashed-sim`, its output collected as it comes.
public final class SimulatorProcess: Sendable {
    /// The built binary (``Built/sim``).
    public static let binary = Built.sim

    private let process: Process
    private let state = Observed(State())

    /// What the process printed, and its end once its output has been read to the end.
    private struct State: Sendable {
        var output = ""
        var errors = ""
        /// Set once the process has exited and what it wrote has been read.
        var exitStatus: Int32?
    }

    public init(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw FixtureError("\(Self.binary.path) is missing: run swift build first")
        }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        self.process = process
        let outputReader = PipeCollector(output) { [state] chunk in state.update { $0.output += String(decoding: chunk, as: UTF8.self) } }
        let errorsReader = PipeCollector(errors) { [state] chunk in state.update { $0.errors += String(decoding: chunk, as: UTF8.self) } }
        process.terminationHandler = { [state] process in
            outputReader.drain()
            errorsReader.drain()
            state.update { $0.exitStatus = process.terminationStatus }
        }
        try ChildProcesses.run(process)
    }

    deinit {
        if process.isRunning { process.interrupt() }
    }

    public var pid: Int32 { process.processIdentifier }
    public var output: String { state.value.output }
    public var errors: String { state.value.errors }

    /// Waits until stdout has printed `text`; fails if the process ends without printing it.
    public func waitForOutput(_ text: String, timeout: Duration = .seconds(60)) async throws {
        let seen = try await state.wait("unleashed-sim to print \(text.debugDescription)", timeout: timeout) {
            $0.output.contains(text) || $0.exitStatus != nil
        }
        guard seen.output.contains(text) else {
            throw FixtureError("unleashed-sim did not print \(text.debugDescription); stderr: \(seen.errors)")
        }
    }

    /// Waits for the process to end, with all it printed read; its exit status.
    public func exitStatus() async -> Int32 {
        let ended = try? await state.wait("unleashed-sim to end", timeout: .seconds(120)) { $0.exitStatus != nil }
        return ended?.exitStatus ?? -1
    }

    /// Sends SIGTERM and waits for the process to end.
    public func terminate() async -> Int32 {
        process.terminate()
        return await exitStatus()
    }

    public static func sixDigits(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
