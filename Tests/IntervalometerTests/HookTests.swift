import CameraKit
import Foundation
import Intervalometer
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedTestSupport

/// A hook script in a folder of its own.
private struct HookScript {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID())")
    let path: String

    init(_ body: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("hook.sh").path
        let source = directory.appendingPathComponent("hook.source").path
        try ("#!/bin/sh\n" + body + "\n").write(toFile: source, atomically: false, encoding: .utf8)
        // The hook is written by a child, `install`, never by this process: a child that another
        // test spawns meanwhile would inherit a descriptor open for writing on it, and until that
        // child execs, running the hook fails with ETXTBSY ("could not run hook", seen once in a
        // run of the whole suite).
        let install = Process()
        install.executableURL = URL(fileURLWithPath: "/usr/bin/install")
        install.arguments = ["-m", "755", source, path]
        try ChildProcesses.run(install)
        install.waitUntilExit()
        guard install.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Whether the script has touched `"$0.name"` (a file next to itself): how a test learns
    /// how far a hook got, since it cannot see the hook's exit.
    func touched(_ name: String) -> Bool { FileManager.default.fileExists(atPath: "\(path).\(name)") }
}

/// Whether a process whose command line contains `marker` still runs.
private func processRuns(marked marker: String) -> Bool {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.contains { entry in
        guard Int(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return false }
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(marker)
    }
}

@Suite("Hooks: time limits, interrupts, checks and delays", .serialized)
struct HookTests {
    // A hook that was cut short has touched "began" and not "ended": the verdict of these tests
    // is how far the script got, never how long the call took. The time limits of the first two
    // are seconds, not milliseconds, so that even a loaded machine's shell has begun (and set
    // its trap) before the limit: what they test is the kill, not a race with the start.

    @Test("a hook still running at its time limit is killed, and the call returns")
    func timeout() async throws {
        // The hook's own child (a sleep of a length no other process has: this process's id is
        // unique among the running ones) must end with it.
        let marker = "sleep 61.\(getpid())"
        let script = try HookScript("touch \"$0.began\"\n\(marker)\ntouch \"$0.ended\"")
        defer { script.remove() }
        let hooks = HookRunner(program: script.path, timeout: .seconds(2))
        let status = await hooks.run(.initialize, frame: nil, environment: [:])
        #expect(status == nil, "no exit status: the hook was killed")
        #expect(script.touched("began"), "the hook ran")
        #expect(!script.touched("ended"), "the hook was killed before its sleep ended")
        #expect(await eventually { !processRuns(marked: marker) }, "the hook's own child was never killed")
    }

    @Test("a hook that ignores SIGTERM is killed all the same")
    func stubbornHook() async throws {
        // The ignored SIGTERM is inherited by the sleep too: only the SIGKILL that follows ends it.
        let script = try HookScript("trap '' TERM\ntouch \"$0.began\"\nsleep 30\ntouch \"$0.ended\"")
        defer { script.remove() }
        let hooks = HookRunner(program: script.path, timeout: .seconds(2))
        let status = await hooks.run(.start, frame: nil, environment: [:])
        #expect(status == nil)
        #expect(script.touched("began"), "the hook ran")
        #expect(!script.touched("ended"), "the hook ran to its end instead of being killed")
    }

    @Test("interrupting the runner ends a waiting hook at once")
    func interrupt() async throws {
        let script = try HookScript("touch \"$0.began\"\nsleep 60\ntouch \"$0.ended\"")
        defer { script.remove() }
        // A time limit far beyond the hook's minute: only the interrupt can end it early.
        let hooks = HookRunner(program: script.path, timeout: .seconds(3600))
        let interrupter = Task {
            let began = await eventually { script.touched("began") }
            hooks.interrupt()
            return began
        }
        let status = await hooks.run(.stop, frame: nil, environment: [:])
        #expect(await interrupter.value, "the hook never began")
        #expect(status == nil, "no exit status: the hook was killed")
        #expect(!script.touched("ended"), "the hook ran to its end: the interrupt did not end it")
    }

    @Test("a run stopped while its init hook runs stops at once, before it begins")
    func stopDuringInit() async throws {
        let script = try HookScript("[ \"$ACTION\" = init ] && { touch \"$0.began\"; sleep 60; touch \"$0.ended\"; }\nexit 0")
        defer { script.remove() }
        let journal = MemoryJournal()
        // A time limit far beyond the hook's minute: only the stop can end it early.
        let run = Timelapse(plan: RunPlan(intervalMs: 100, stop: .frames(3), hook: script.path),
                            camera: ScriptedCamera(clock: ContinuousClock()), journal: journal, clock: ContinuousClock(),
                            wallClock: { 0 }, hooks: HookRunner(program: script.path, timeout: .seconds(3600)))
        let stopper = Task {
            let began = await eventually { script.touched("began") }
            await run.stop(reason: "stopped by Ctrl-C")
            return began
        }
        await #expect(throws: TimelapseError.stoppedBeforeStart("stopped by Ctrl-C")) { _ = try await run.start(cameraName: "scripted") }
        #expect(await stopper.value, "the init hook never began")
        #expect(!script.touched("ended"), "the init hook ran to its end: the stop did not end it")
        #expect(try journal.runs().isEmpty)
    }

    @Test("a hook's path is checked: absolute, a file, executable")
    func pathCheck() throws {
        let script = try HookScript("exit 0")
        defer { script.remove() }
        #expect(HookRunner.problem(with: script.path) == nil)
        #expect(HookRunner.problem(with: "hook.sh")?.contains("absolute") == true)
        #expect(HookRunner.problem(with: script.directory.path)?.contains("not a file") == true)
        #expect(HookRunner.problem(with: script.directory.path + "/missing") != nil)
        chmod(script.path, 0o644)
        #expect(HookRunner.problem(with: script.path)?.contains("executable") == true)
    }

    @Test("slots a slow start hook cost are recorded as its, not as a busy camera's")
    func slowStartHook() async throws {
        let script = try HookScript("[ \"$ACTION\" = start ] && sleep 0.6\nexit 0")
        defer { script.remove() }
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 100, stop: .frames(10), hook: script.path)
        let run = Timelapse(plan: plan, camera: ScriptedCamera(clock: ContinuousClock()), journal: journal, clock: ContinuousClock(),
                            wallClock: { Int64(Date().timeIntervalSince1970 * 1000) }, hooks: plan.hookRunner)
        let ending = try await run.start(cameraName: "scripted")
        let frames = try journal.frames(of: ending.run.id)
        let skipped = frames.filter { $0.outcome == .skipped }
        #expect(skipped.count >= 3)
        #expect(skipped.allSatisfy { $0.error?.contains("start hook") == true }, "\(skipped.map(\.error))")
        #expect(!frames.contains { $0.error?.contains("busy") == true })
    }
}

/// A camera whose link goes down while one picture is being taken: that picture comes back
/// only after the link has, much later than the interval.
private actor DroppingCamera: Camera {
    nonisolated let identity = CameraIdentity(name: "dropping", capabilities: [.shoot], cameraModel: "dropping")
    private var sinks: [AsyncStream<CameraEvent>.Continuation] = []
    private var shots = 0
    let dropAt: Int
    let trouble: Trouble
    /// The run's clock, on which the trouble lasts its second.
    let clock: RunClock

    /// What happens to the picture at `dropAt`: the link goes down for a second, or the link
    /// loses answers and the picture's requests are sent again, taking a second.
    enum Trouble {
        case linkOutage
        case resentRequests(Int)
    }

    init(dropAt: Int, trouble: Trouble = .linkOutage, clock: RunClock) {
        self.dropAt = dropAt
        self.trouble = trouble
        self.clock = clock
    }

    func events() -> AsyncStream<CameraEvent> {
        let (stream, sink) = AsyncStream.makeStream(of: CameraEvent.self)
        sinks.append(sink)
        return stream
    }
    func status() async throws(CameraError) -> CameraStatus {
        CameraStatus(connection: .ready, moduleBattery: 100, cameraBattery: 100, storage: .ok, shotsRemaining: 1000,
                     cameraPower: .on, exposureMode: .manual, meteredEV: nil, busy: false, shotCounter: shots)
    }
    func settings() async throws(CameraError) -> [SettingDescriptor] { [] }
    func value(of setting: SettingID) async throws(CameraError) -> SettingValue { throw .unsupported("settings") }
    func set(_ value: SettingValue) async throws(CameraError) -> SettingValue { value }
    func focus(hold: Bool) async throws(CameraError) -> FocusResult { .acquired }
    func release() async throws(CameraError) {}
    func shoot() async throws(CameraError) -> Shot {
        shots += 1
        guard shots == dropAt else { return Shot(counter: shots, latency: .zero) }
        switch trouble {
        case .linkOutage:
            for sink in sinks { sink.yield(.connection(.reconnecting(attempt: 1, nextDelay: .milliseconds(100)))) }
            try? await clock.sleep(for: .seconds(1))
            for sink in sinks { sink.yield(.connection(.ready)) }
            return Shot(counter: shots, latency: .zero)
        case .resentRequests(let count):
            try? await clock.sleep(for: .seconds(1))
            return Shot(counter: shots, latency: .seconds(1), resent: count)
        }
    }
    func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure { throw .unsupported("bulb") }
    func startVideo() async throws(CameraError) { throw .unsupported("video") }
    func stopVideo() async throws(CameraError) -> Duration { throw .unsupported("video") }
    func setTime(_ time: WallTime) async throws(CameraError) {}
    func geotag(_ position: GeoPosition) async throws(CameraError) {}
    func close() async {}
    var isReady: Bool { true }
    var lastMeteredEV: ExposureStops? { nil }
}

@Suite("Skip reasons", .timeLimit(.minutes(2)))
struct SkipReasonTests {
    @Test("slots lost to a link outage say so, not that the camera was busy")
    func linkOutage() async throws {
        try await Self.skipped(after: .linkOutage, readAs: { "the link to the camera was lost during frame \($0)" })
    }

    @Test("slots lost to a shot whose requests were sent again say so, not that the camera was busy")
    func resentRequests() async throws {
        try await Self.skipped(after: .resentRequests(2),
                               readAs: { "requests of frame \($0) were sent again after lost answers (2 times), and it ran past the next slot" })
    }

    /// Runs at 100 ms until the picture after the camera's third is taken, and checks the reason
    /// of the slots passed over between them.
    private static func skipped(after trouble: DroppingCamera.Trouble, readAs reason: (Int) -> String) async throws {
        let journal = MemoryJournal()
        let clock = RunClock()
        let run = Timelapse(plan: RunPlan(intervalMs: 100, stop: .never), camera: DroppingCamera(dropAt: 3, trouble: trouble, clock: clock),
                            journal: journal, clock: clock, wallClock: clock.wallClock)
        // The run goes on until the picture after the outage is taken.
        let stopper = Task {
            var taken = 0
            for await record in run.records where record.outcome == .taken {
                taken += 1
                if taken == 4 { break }
            }
            await run.stop(reason: "seen enough")
        }
        // A run that never took four pictures is ended by the suite's time limit.
        let ending = try await clock.flowing { try await run.start(cameraName: "dropping") }
        await stopper.value
        // The outage comes with the camera's third picture; the slots passed over between that
        // frame and the next one taken were lost to it (a loaded machine may delay which frame
        // that is, and pass over others before it as a busy camera would).
        let frames = try journal.frames(of: ending.run.id)
        let taken = frames.filter { $0.outcome == .taken }.map(\.frame)
        let dropped = try #require(taken.count >= 4 ? taken[2] : nil, "\(frames.map { "\($0.frame) \($0.outcome) sent \($0.sentMs ?? -1) done \($0.completedMs ?? -1) \($0.error ?? "")" })")
        let skipped = frames.filter { $0.outcome == .skipped && $0.frame > dropped && $0.frame < taken[3] }
        #expect(skipped.count >= 2)
        #expect(skipped.allSatisfy { $0.error == reason(dropped) }, "\(skipped.map(\.error))")
    }
}
