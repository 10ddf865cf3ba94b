public import Foundation

/// curl against a Unix socket, as a client of the daemon would use it. Its output is read on
/// threads of its own: a read blocked on Dispatch's or Swift concurrency's few shared threads
/// would starve the server the test talks to.
public enum Curl {
    public static let executable = URL(fileURLWithPath: "/usr/bin/curl")

    /// curl's exit status when its `--max-time` ran out.
    private static let curlTimedOut: Int32 = 28

    public struct Answer: Sendable {
        public var status: Int
        public var body: String

        /// The body as a JSON object; nil unless it is one.
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        }
    }

    /// One request; `arguments` come before the URL (`-X`, `--data-binary`, …).
    public static func request(socket: String, path: String, arguments: [String] = []) async throws -> Answer {
        try await request(url: "http://localhost\(path)", arguments: ["--unix-socket", socket] + arguments)
    }

    /// One request to `url` (over TCP, unless `arguments` name a socket).
    public static func request(url: String, arguments: [String] = []) async throws -> Answer {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-s", "--max-time", "20", "-w", "\n%{http_code}"] + arguments + [url]
        let output = Pipe()
        process.standardOutput = output
        let (exited, exit) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { exit.yield($0.terminationStatus); exit.finish() }
        try ChildProcesses.run(process)
        let text = await readToEnd(output.fileHandleForReading)
        for await _ in exited {}
        let lastNewline = text.lastIndex(of: "\n") ?? text.startIndex
        return Answer(status: Int(text[lastNewline...].dropFirst()) ?? -1, body: String(text[..<lastNewline]))
    }

    /// Streams the response to a GET line by line into `body`; curl is stopped when `body`
    /// returns, and gives up by itself after `timeLimit` so that a test cannot hang. The limit
    /// is a guard, not a measure: a 10-frame stream once took over 20 s in a loaded full run.
    public static func streaming<T>(socket: String, path: String, timeLimit: Int = 120,
                             _ body: (AsyncStream<String>) async throws -> T) async throws -> T {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-sN", "--max-time", String(timeLimit), "--unix-socket", socket, "http://localhost\(path)"]
        let output = Pipe()
        process.standardOutput = output
        let (exited, exit) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { exit.yield($0.terminationStatus); exit.finish() }
        try ChildProcesses.run(process)
        let lines = readLines(output.fileHandleForReading)
        let result: Result<T, any Error>
        do { result = .success(try await body(lines)) } catch { result = .failure(error) }
        // SIGKILL: under the test runner, curl outlived terminate()'s SIGTERM until its own
        // time limit.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for await status in exited where status == curlTimedOut {
            FileHandle.standardError.write(Data("curl gave up on \(path) after its \(timeLimit) s limit\n".utf8))
        }
        return try result.get()
    }

    private static func readToEnd(_ handle: FileHandle) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self))
            }
        }
    }

    private static func readLines(_ handle: FileHandle) -> AsyncStream<String> {
        let (lines, sink) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            var pending = Data()
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    sink.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            sink.finish()
        }
        return lines
    }
}

extension Curl {
    /// Clients of the control API for load: `pollers` curl processes each asking `GET /v1/status`
    /// `polls` times at 5 a second on a connection of its own (writing each status code to its
    /// file), and `followers` following `GET /v1/events` (writing the stream to its file).
    public static func apiClients(socket: String, pollers: Int, followers: Int, polls: Int, outputs directory: URL) throws
        -> (pollers: [(Process, URL)], followers: [(Process, URL)])
    {
        var started: [(Process, URL)] = []
        for index in 0..<(pollers + followers) {
            let output = directory.appendingPathComponent("client-\(index).out")
            let process = Process()
            process.executableURL = executable
            process.arguments = index < pollers
                ? ["-s", "-o", "/dev/null", "-w", "%{http_code}\\n", "--rate", "5/s", "--unix-socket", socket,
                   "http://localhost/v1/status?n=[1-\(polls)]"]
                : ["-sN", "--unix-socket", socket, "http://localhost/v1/events"]
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try ChildProcesses.run(process)
            started.append((process, output))
        }
        return (Array(started[..<pollers]), Array(started[pollers...]))
    }
}
