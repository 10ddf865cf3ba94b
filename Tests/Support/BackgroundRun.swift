public import Foundation
import Synchronization

/// A built binary running in the background, its standard output read line by line as it
/// comes, so that a test can act in the middle of a run (signal it, kill it). Waits are for what
/// it prints and for its end, each woken by the pipe or the exit itself.
public final class BackgroundRun: Sendable {
    /// What the process has printed so far, and whether it has ended.
    public struct Printed: Sendable {
        /// Complete lines of standard output.
        public var output: [String] = []
        public var errors: String = ""
        /// The exit status (128 + n when killed by signal n), once the process has exited and
        /// what it wrote has been read.
        public var exitStatus: Int32?

        /// The JSON objects printed so far.
        public var objects: [[String: Any]] {
            output.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }

        /// Frame records printed so far.
        public var frames: [[String: Any]] { objects.filter { $0["frame"] != nil } }
    }

    private let process = Process()
    private let printed = Observed(Printed())

    /// Starts `executable` with `arguments` and exactly `environment`.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let pending = Mutex(Data())
        let outputReader = PipeCollector(out) { [printed] chunk in
            let complete: [String] = pending.withLock { buffer in
                buffer.append(chunk)
                guard let end = buffer.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
                let text = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return text.split(separator: "\n").map(String.init)
            }
            if !complete.isEmpty { printed.update { $0.output += complete } }
        }
        let errorsReader = PipeCollector(err) { [printed] chunk in
            let text = String(decoding: chunk, as: UTF8.self)
            printed.update { $0.errors += text }
        }
        process.terminationHandler = { [printed] process in
            outputReader.drain()
            errorsReader.drain()
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            printed.update { $0.exitStatus = status }
        }
        try ChildProcesses.run(process)
    }

    public var pid: Int32 { process.processIdentifier }
    public var output: [String] { printed.value.output }
    public var errors: String { printed.value.errors }

    /// The JSON objects printed so far.
    public var objects: [[String: Any]] { printed.value.objects }

    /// Frame records printed so far.
    public var frames: [[String: Any]] { printed.value.frames }

    /// Waits until `condition` holds on what was printed; fails if the process ends first (with
    /// all it printed read) or nothing happens within `timeout`.
    public func waitFor(_ what: String, timeout: Duration = .seconds(60),
                        _ condition: @escaping @Sendable (Printed) -> Bool) async throws {
        let seen = try await printed.wait(what, timeout: timeout) { condition($0) || $0.exitStatus != nil }
        guard condition(seen) else { throw RunWaitError(what: what, output: seen.output, errors: seen.errors) }
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end, with all it printed read, and returns its exit status
    /// (128 + n when killed by n).
    public func exitStatus(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let ended = try await printed.wait("the process to end", timeout: timeout) { $0.exitStatus != nil }
        return ended.exitStatus ?? -1
    }
}

private struct RunWaitError: Error, CustomStringConvertible {
    let what: String, output: [String], errors: String
    var description: String { "gave up waiting for \(what); stdout: \(output), stderr: \(errors)" }
}

