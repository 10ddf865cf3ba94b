public import Foundation
import Synchronization

/// A built binary running in the background, its standard output read line by line as it
/// comes, so that a test can act in the middle of a run (signal it, kill it).
public final class BackgroundRun: Sendable {
    private let process = Process()
    private let lines = Mutex<[String]>([])
    private let stderrText = Mutex("")

    /// Starts `executable` with `arguments` and exactly `environment`.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let pending = Mutex(Data())
        out.fileHandleForReading.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            let complete: [String] = pending.withLock { buffer in
                buffer.append(chunk)
                guard let end = buffer.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
                let text = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return text.split(separator: "\n").map(String.init)
            }
            if !complete.isEmpty { lines.withLock { $0 += complete } }
        }
        err.fileHandleForReading.readabilityHandler = { [self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            stderrText.withLock { $0 += text }
        }
        try ChildProcesses.run(process)
    }

    public var pid: Int32 { process.processIdentifier }
    public var output: [String] { lines.withLock { $0 } }
    public var errors: String { stderrText.withLock { $0 } }

    /// The JSON objects printed so far.
    public var objects: [[String: Any]] {
        output.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Frame records printed so far.
    public var frames: [[String: Any]] { objects.filter { $0["frame"] != nil } }

    /// Waits until `condition` holds on what was printed, or fails after `timeout`.
    public func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: (BackgroundRun) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            if !process.isRunning {
                // Let the last output arrive before giving up.
                try await Task.sleep(for: .milliseconds(200))
                if condition(self) { return }
                throw RunWaitError(what: what, output: output, errors: errors)
            }
            guard ContinuousClock.now < deadline else { throw RunWaitError(what: what, output: output, errors: errors) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end and returns its exit status (128 + n when killed by n).
    public func exitStatus() async throws -> Int32 {
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw RunWaitError(what: "the process to end", output: output, errors: errors) }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(100))
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}

private struct RunWaitError: Error, CustomStringConvertible {
    let what: String, output: [String], errors: String
    var description: String { "gave up waiting for \(what); stdout: \(output), stderr: \(errors)" }
}

