public import Foundation

/// What a finished command printed and returned.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Each stdout line parsed as a JSON object (`--json` prints one per line or one in all).
    public var jsonLines: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    public var json: [String: Any]? { jsonLines.first }
}

/// Runs a program to its end without blocking a thread of the cooperative pool (a test that
/// waits synchronously can starve the in-process parts of other tests on a 2-core machine).
public func runProgram(_ executable: URL, _ arguments: [String], environment: [String: String]) async throws -> CommandResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let (exited, exit) = AsyncStream.makeStream(of: Int32.self)
    process.terminationHandler = { exit.yield($0.terminationStatus); exit.finish() }
    try ChildProcesses.run(process)
    async let stdout = readToEnd(out.fileHandleForReading)
    async let stderr = readToEnd(err.fileHandleForReading)
    var status: Int32 = -1
    for await code in exited { status = code }
    return CommandResult(status: status, stdout: await stdout, stderr: await stderr)
}

/// Reads on a thread of its own: Dispatch's global queues share their few threads with Swift
/// concurrency, so a read blocked there for the length of a command starves every async test.
private func readToEnd(_ handle: FileHandle) async -> String {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self))
        }
    }
}

