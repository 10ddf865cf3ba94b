import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// Three hosts, each `unleashed daemon` in a network namespace of its own with a simulated
/// camera, and one mosquitto they reach over veth links: what `unleashed fleet` does to a rig.
@Suite("a rig across three hosts through a broker", .serialized, .timeLimit(.minutes(5)))
struct FleetTests {
    @Test("a shot at one time on every host, a fleet time-lapse of 20 slots through the broker's loss, the state caught up after, and a fleet stop")
    func fleet() async throws {
        let rig = try await FleetRig(hosts: 3)
        do {
            try await exercise(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    private func exercise(_ rig: FleetRig) async throws {
        if !rig.network.isolated {
            // Said in the test's output, as the issue asks: the hosts share this network then.
            print("FleetTests: network namespaces refused (\(rig.network.refusal ?? "?")); the hosts are processes on loopback")
        }
        try await rig.waitUntilOnline()

        // A shot at one instant, 1.5 s ahead: every host fires its camera then.
        let shot = try await rig.fleet(["shoot", "--at", "+1500ms", "--wait", "5s"])
        #expect(shot.status == 0, "\(shot.stdout) \(shot.stderr)")
        let answers = try #require(shot.json?["hosts"] as? [[String: Any]], "\(shot.stdout)")
        #expect(answers.map { $0["node"] as? String } == ["host1", "host2", "host3"])
        for answer in answers {
            #expect(answer["accepted"] as? Bool == true)
            #expect((answer["clock"] as? [String: Any])?["synchronised"] is Bool)
            let shots = answer["shots"] as? [[String: Any]] ?? []
            #expect(shots.count == 1 && shots.allSatisfy { $0["ok"] as? Bool == true }, "\(answer)")
        }

        // A time-lapse of 20 slots at 500 ms, starting together in 2 s.
        let started = try await rig.fleet(["timelapse", "--interval", "500ms", "--frames", "20", "--start", "+2s"])
        #expect(started.status == 0, "\(started.stdout) \(started.stderr)")
        let jobs = try #require(started.json?["hosts"] as? [[String: Any]], "\(started.stdout)")
        #expect(jobs.count == 3 && jobs.allSatisfy { $0["accepted"] as? Bool == true && $0["job"] is Int }, "\(jobs)")
        let startText = jobs.first?["start"] as? String ?? ""
        let start = try #require(FleetRig.date(startText), "\(jobs)")

        // The broker dies a few frames into the run and comes back a few frames later: the runs
        // go on without it (each host's frames counted from the host, not through the broker).
        let ids = jobs.map { $0["job"] as? Int ?? 0 }
        try await rig.waitForTaken(ids, atLeast: 4)
        rig.broker.stop()
        try await rig.waitForTaken(ids, atLeast: 10)
        try await rig.broker.start()

        // Each host journalled every slot, on the shared schedule.
        for (index, host) in rig.network.hosts.enumerated() {
            let job = try await rig.waitForJob(on: index, id: jobs[index]["job"] as? Int ?? 0)
            let summary = job["summary"] as? [String: Any] ?? [:]
            #expect(job["state"] as? String == "finished", "\(host.name): \(job)")
            #expect(summary["taken"] as? Int == 20, "\(host.name): \(summary)")
            // t0 on each host's clock is the fleet's start (the same clock here: one kernel).
            let t0 = try #require(FleetRig.date(job["t0"] as? String ?? ""), "\(job)")
            #expect(FleetRig.milliseconds(t0) == FleetRig.milliseconds(start), "\(host.name): t0 \(t0) against \(start)")
        }

        // The broker lost everything retained; the hosts publish it again on reconnecting, each
        // after its own reconnection backoff: read until every host's state is back.
        try await rig.waitForBroker("every host's finished run back on the broker") { hosts in
            rig.network.hosts.allSatisfy { host in
                let state = hosts[host.name] as? [String: Any]
                let run = ((state?["cameras"] as? [String: Any])?["cam"] as? [String: Any])?["run"] as? [String: Any]
                return state?["availability"] as? String == "online" && run?["frames"] as? Int == 20 && run?["running"] as? Bool == false
            }
        }

        // A time-lapse with no end, stopped on every host by one command.
        let endless = try await rig.fleet(["timelapse", "--interval", "300ms", "--start", "+1s"])
        let endlessJobs = try #require(endless.json?["hosts"] as? [[String: Any]], "\(endless.stdout)")
        #expect(endlessJobs.count == 3, "\(endless.stdout)")
        try await rig.waitForTaken(endlessJobs.map { $0["job"] as? Int ?? 0 }, atLeast: 1)
        let stop = try await rig.fleet(["stop"])
        #expect(stop.status == 0, "\(stop.stdout) \(stop.stderr)")
        let stopped = try #require(stop.json?["hosts"] as? [[String: Any]], "\(stop.stdout)")
        #expect(stopped.map { $0["node"] as? String } == ["host1", "host2", "host3"])
        for (index, answer) in stopped.enumerated() {
            let jobs = (answer["stopped"] as? [[String: Any]] ?? []).map { $0["job"] as? Int }
            #expect(jobs == [endlessJobs[index]["job"] as? Int], "\(answer)")
            let job = try await rig.waitForJob(on: index, id: endlessJobs[index]["job"] as? Int ?? 0)
            #expect(job["state"] as? String == "finished" && ((job["summary"] as? [String: Any])?["taken"] as? Int ?? 0) >= 1, "\(job)")
        }
    }
}

/// The broker, the hosts' network, and one daemon per host with a simulated camera named `cam`.
final class FleetRig: Sendable {
    let network: NetworkHosts
    let broker: Broker
    let directory: URL
    private let daemons = Mutex<[Process]>([])

    init(hosts count: Int) async throws {
        network = NetworkHosts(count: count)
        broker = try await Broker(listeningOn: network.brokerAddresses)
        directory = URL(fileURLWithPath: "/tmp/uf-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The fleet command's own configuration: the broker on loopback.
        try "[mqtt]\nbroker = \"mqtt://127.0.0.1:\(broker.port)\"\n".write(to: directory.appendingPathComponent("fleet.toml"), atomically: true, encoding: .utf8)
        for host in network.hosts {
            let folder = directory.appendingPathComponent(host.name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let config = folder.appendingPathComponent("unleashed.toml")
            try """
                [daemon]
                socket = "\(folder.path)/control.sock"
                journal = "\(folder.path)/journal.sqlite"

                [[modules]]
                name = "cam"
                address = "F0:5E:D0:00:00:01"

                [mqtt]
                broker = "mqtt://\(host.brokerHost):\(broker.port)"
                node = "\(host.name)"
                """.write(to: config, atomically: true, encoding: .utf8)
            let (executable, arguments) = network.command(on: host, Built.unleashed.path, ["--demo", "daemon", "--config", config.path])
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = environment(for: host)
            let log = folder.appendingPathComponent("daemon.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            try ChildProcesses.run(process)
            daemons.withLock { $0.append(process) }
        }
    }

    /// Stops the daemons as systemd would (SIGTERM, all at once), then the broker.
    func stop() async {
        let running = daemons.withLock { $0 }.filter(\.isRunning)
        for process in running { kill(process.processIdentifier, SIGTERM) }
        for process in running { await process.exited(within: .seconds(20)) }
        broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func environment(for host: NetworkHosts.Host) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        let folder = directory.appendingPathComponent(host.name).path
        environment["UNLEASHED_DEMO_STATE"] = folder + "/demo.json"
        environment["XDG_STATE_HOME"] = folder + "/state"
        environment["XDG_CONFIG_HOME"] = folder + "/config"
        environment["UNLEASHED_SOCKET"] = folder + "/control.sock"
        environment["UNLEASHED_DEMO"] = nil
        return environment
    }

    /// `unleashed fleet ARGUMENTS --json` with the fleet's configuration, from this host.
    func fleet(_ arguments: [String]) async throws -> CommandResult {
        try await runProgram(Built.unleashed, ["fleet"] + arguments + ["--json", "--config", directory.appendingPathComponent("fleet.toml").path],
                             environment: ProcessInfo.processInfo.environment)
    }

    /// Waits until every host's daemon says it is online on the broker with its camera's state.
    func waitUntilOnline(timeout: Duration = .seconds(60)) async throws {
        try await waitForBroker("every host online", timeout: timeout) { hosts in
            self.network.hosts.allSatisfy { host in
                let state = hosts[host.name] as? [String: Any]
                return state?["availability"] as? String == "online" && (state?["cameras"] as? [String: Any])?["cam"] != nil
            }
        }
    }

    /// Reads `unleashed fleet status` until what the broker holds of the hosts satisfies
    /// `isDone`: each host's state is on the broker, read by a command, so it is polled.
    func waitForBroker(_ what: String, timeout: Duration = .seconds(60), until isDone: @escaping @Sendable ([String: Any]) -> Bool) async throws {
        let last = Mutex("")
        do {
            try await poll(what, timeout: timeout, every: .milliseconds(300)) {
                let status = try await fleet(["status"])
                last.withLock { $0 = status.stdout + status.stderr }
                guard let hosts = status.json else { return false }
                return isDone(hosts)
            }
        } catch {
            Issue.record("\(what): not so within \(timeout): \(last.withLock { $0 })\n\(logs)")
            throw error
        }
    }

    /// The job `id` on host `index` as `unleashed jobs --json` reports it now, from that host
    /// (its own daemon, not the broker).
    func job(on index: Int, id: Int) async throws -> [String: Any]? {
        var environment = environment(for: network.hosts[index])
        environment["UNLEASHED_DEMO_STATE"] = nil
        let listing = try await runProgram(Built.unleashed, ["--json", "jobs"], environment: environment)
        return (listing.json?["jobs"] as? [[String: Any]] ?? []).first { $0["id"] as? Int == id }
    }

    /// The job `id` on host `index` once it has ended.
    func waitForJob(on index: Int, id: Int, timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        // The job is the host's daemon's, read by a command: polled.
        let ended = try await eventually(every: .milliseconds(300), giveUpAfter: timeout) {
            guard let job = try await job(on: index, id: id) else { return false }
            last = job
            return job["state"] as? String != "running" && job["state"] as? String != "waiting"
        }
        guard ended else {
            Issue.record("job \(id) on \(network.hosts[index].name) did not end: \(last)\n\(logs)")
            throw CancellationError()
        }
        return last
    }

    /// Waits until each host's job (`ids`, by host) has taken at least `count` frames.
    func waitForTaken(_ ids: [Int], atLeast count: Int) async throws {
        for (index, id) in ids.enumerated() {
            let reached = try await eventually(every: .milliseconds(100)) {
                ((try await job(on: index, id: id)?["summary"] as? [String: Any])?["taken"] as? Int ?? 0) >= count
            }
            guard reached else {
                Issue.record("job \(id) on \(network.hosts[index].name) did not reach \(count) frames\n\(logs)")
                throw CancellationError()
            }
        }
    }

    var logs: String {
        network.hosts.map { host in
            let log = directory.appendingPathComponent(host.name).appendingPathComponent("daemon.log")
            return "\(host.name): " + ((try? String(contentsOf: log, encoding: .utf8)) ?? "")
        }.joined(separator: "\n")
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))) ?? (try? Date(text, strategy: .iso8601))
    }
}
