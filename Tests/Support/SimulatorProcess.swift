public import Foundation
import Synchronization

/// One run of `unleashed-sim`, its output collected as it comes.
public final class SimulatorProcess: Sendable {
    /// The built binary: $UNLEASHED_SIM_BIN, else `unleashed-sim` next to the test bundle.
    public static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["UNLEASHED_SIM_BIN"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed-sim")
    }()

    private let process: Process
    private let shared = Shared()

    /// What the pipe and termination handlers fill in.
    private final class Shared: Sendable {
        let collected = Mutex<(output: String, errors: String)>(("", ""))
        let exit = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))
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
        output.fileHandleForReading.readabilityHandler = { [shared] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            shared.collected.withLock { $0.output += text }
        }
        errors.fileHandleForReading.readabilityHandler = { [shared] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            shared.collected.withLock { $0.errors += text }
        }
        process.terminationHandler = { [shared] process in
            let waiters = shared.exit.withLock { state in
                state.status = process.terminationStatus
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: process.terminationStatus) }
        }
        try ChildProcesses.run(process)
    }

    deinit {
        if process.isRunning { process.interrupt() }
    }

    public var pid: Int32 { process.processIdentifier }
    public var output: String { shared.collected.withLock { $0.output } }
    public var errors: String { shared.collected.withLock { $0.errors } }

    /// Waits until stdout has printed `text`.
    public func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !output.contains(text) {
            guard ContinuousClock.now < deadline, process.isRunning || output.contains(text) else {
                throw FixtureError("unleashed-sim did not print \(text.debugDescription); stderr: \(errors)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for the process to end; its exit status. Output still in the pipes is read first.
    public func exitStatus() async -> Int32 {
        let status = await withCheckedContinuation { continuation in
            let known = shared.exit.withLock { state in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status
            }
            if let known { continuation.resume(returning: known) }
        }
        try? await Task.sleep(for: .milliseconds(50))
        return status
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
