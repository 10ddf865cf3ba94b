import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// A simulated tethered camera (`unleashed-sim ptpip`) on a loopback port of its own, and the
/// environment that points `unleashed --backend gphoto2` at it through the real libgphoto2.
final class SimulatedTetheredCamera: Sendable {
    let directory: URL
    /// Where the simulator mirrors its memory card.
    let card: URL
    private let arguments: [String]
    private let state = Shared()

    private final class Shared: Sendable {
        let value = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { value.withLock { body(&$0) } }
    }

    private struct State {
        var process: Process?
        var port = 0
        /// Every JSON line the simulators printed, across restarts.
        var lines: [[String: any Sendable]] = []
    }

    /// Starts the simulator; `arguments` go to `unleashed-sim ptpip` (`--card-capacity 3` etc.).
    init(_ arguments: [String] = []) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-tether-\(UUID())")
        card = directory.appendingPathComponent("card")
        try FileManager.default.createDirectory(at: card, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
        self.arguments = arguments
        try await start(port: 0)
    }

    deinit {
        if let process = state.withLock({ $0.process }) { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    var port: Int { state.withLock { $0.port } }

    /// `ptpip:127.0.0.1:PORT`, as libgphoto2 takes it.
    var portString: String { "ptpip:127.0.0.1:\(port)" }

    /// Starts the simulator on `port` (0: any free port), and returns once it accepts connections.
    func start(port: Int) async throws {
        let process = Process()
        process.executableURL = Built.sim
        process.arguments = ["ptpip", "--port", "\(port)", "--card", card.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        let log = directory.appendingPathComponent("sim-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try ChildProcesses.run(process)
        state.withLock { $0.process = process }
        let (listening, announce) = AsyncStream.makeStream(of: Int.self)
        let state = state
        Thread.detachNewThread {
            var buffered = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffered.append(chunk)
                while let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffered[buffered.startIndex..<newline]
                    buffered = Data(buffered[buffered.index(after: newline)...])
                    guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { continue }
                    if let address = object["listening"] as? String, let bound = address.split(separator: ":").last.flatMap({ Int($0) }) {
                        announce.yield(bound)
                    }
                    let sendable = object.compactMapValues { value -> (any Sendable)? in
                        switch value {
                        case let text as String: text
                        case let number as Int: number
                        case let number as Double: number
                        default: nil
                        }
                    }
                    state.withLock { $0.lines.append(sendable) }
                }
            }
            announce.finish()
        }
        for await bound in listening {
            state.withLock { $0.port = bound }
            return
        }
        throw FixtureError("unleashed-sim ptpip did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// Kills the simulator at once, as a camera that is unplugged or switched off.
    func pullThePlug() {
        guard let process = state.withLock({ $0.process }) else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The simulator's event lines named `event` so far.
    func events(_ event: String) -> [[String: any Sendable]] {
        state.withLock { $0.lines.filter { $0["event"] as? String == event } }
    }

    /// Waits until the simulator has printed `count` event lines named `event`.
    func waitForEvents(_ event: String, count: Int, timeout: Duration = .seconds(60)) async throws {
        try await poll("\(count) '\(event)' events", timeout: timeout) { events(event).count >= count }
    }

    /// The files on the simulated card, by name.
    func cardFiles() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: card.path) {
            files[name] = try Data(contentsOf: card.appendingPathComponent(name))
        }
        return files
    }

    var environment: [String: String] { tetheredCommandEnvironment(in: directory) }

    /// Runs `unleashed --backend gphoto2 --port ptpip:127.0.0.1:PORT ARGUMENTS`.
    func unleashed(_ arguments: [String]) async throws -> CommandResult {
        try await runProgram(Built.unleashed, ["--backend", "gphoto2", "--port", portString] + arguments, environment: environment)
    }

    func unleashed(_ arguments: String...) async throws -> CommandResult {
        try await unleashed(arguments)
    }
}

/// The environment of an `unleashed` command driving a tethered camera from a test: its own HOME
/// (libgphoto2 keeps settings there), state and journal in `directory`, and no demo mode or
/// backend from whoever runs the tests.
func tetheredCommandEnvironment(in directory: URL) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = directory.appendingPathComponent("home").path
    environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
    environment["UNLEASHED_JOURNAL"] = directory.appendingPathComponent("journal.sqlite").path
    environment["UNLEASHED_DEMO"] = nil
    environment["UNLEASHED_BACKEND"] = nil
    return environment
}

extension CommandResult {
    /// The first picture a `--download FOLDER ... --json` command reports saved, as read from
    /// the folder: a JPEG of the size reported.
    func savedPicture(sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
        let saved = try #require(jsonLines.compactMap { $0["saved"] as? [String: Any] }.first, "\(stdout)\(stderr)",
                                 sourceLocation: sourceLocation)
        let path = try #require(saved["path"] as? String, sourceLocation: sourceLocation)
        let downloaded = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(downloaded.starts(with: [0xFF, 0xD8]), "a JPEG", sourceLocation: sourceLocation)
        #expect(saved["bytes"] as? Int == downloaded.count, sourceLocation: sourceLocation)
        return downloaded
    }
}
