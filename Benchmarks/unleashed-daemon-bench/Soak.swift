import DaemonClient
import Foundation
import Intervalometer
import UnleashedTestSupport

/// `--soak`: the daemon under a steady load for a long time, and what it holds as the load
/// goes on. One job takes a slot every 200 ms on the module, 10 clients follow
/// `GET /v1/events`, 5 poll `GET /v1/status` every 200 ms; every `sampleSeconds` the daemon's
/// resident memory (all and anonymous), open descriptors and threads are read from /proc. The
/// verdict is the slope of resident memory over the second half (the first is warm-up: caches
/// filling, the allocator finding its size) and whether descriptors ended where the second half
/// began (a client's connection open at the moment of a sample shows as one more).
@MainActor
struct Soak {
    let bench: BenchDaemon
    let minutes: Int
    let sampleSeconds: Int

    static let intervalMs: Int64 = 200
    static let followers = 10
    static let pollers = 5

    struct Sample {
        var seconds: Int
        var frames: Int
        var usage: ProcessUsage
    }

    func run() async throws {
        let daemon = try await bench.start()
        let pid = daemon.processIdentifier
        let client = DaemonClient(socketPath: bench.socket)
        let duration = minutes * 60
        let slots = duration * 1000 / Int(Self.intervalMs)
        // More slots than the soak lasts: the job is still running at every sample, and stopped at the end.
        let job = try await client.startJob(RunPlan(intervalMs: Self.intervalMs, stop: .frames(slots + 600), overrun: .burst)).id
        var clients: [Process] = []
        for index in 0..<(Self.pollers + Self.followers) {
            let process = Process()
            process.executableURL = Curl.executable
            // The pollers keep one connection each; the followers' streams are thrown away (an
            // hour of them would fill /tmp), and each follower must still be connected at the end.
            process.arguments = index < Self.pollers
                ? ["-s", "-o", "/dev/null", "--rate", "5/s", "--unix-socket", bench.socket,
                   "http://localhost/v1/status?n=[1-\(duration * 5 + 600)]"]
                : ["-sN", "-o", "/dev/null", "--unix-socket", bench.socket, "http://localhost/v1/events"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ChildProcesses.run(process)
            clients.append(process)
        }

        print("soak: \(minutes) min, a job of slots every \(Self.intervalMs) ms, \(Self.followers) event followers, "
            + "\(Self.pollers) status pollers; a sample every \(sampleSeconds) s")
        print(" minute  frames  RSS KiB  anon KiB  fds  threads")
        let start = ContinuousClock.now
        var samples: [Sample] = []
        func sample() async {
            let seconds = Int((ContinuousClock.now - start).components.seconds)
            let frames = (try? await client.job(job).summary.taken) ?? -1
            let usage = ProcessUsage(pid)
            samples.append(Sample(seconds: seconds, frames: frames, usage: usage))
            print(String(format: "%7.1f  %6d  %7d  %8d  %3d  %7d", Double(seconds) / 60, frames, usage.rssKiB,
                         usage.anonymousKiB, usage.descriptors, usage.threads))
            fflush(nil)
        }
        await sample()
        while ContinuousClock.now - start < .seconds(duration) {
            try await Task.sleep(until: min(start + .seconds((samples.count) * sampleSeconds), start + .seconds(duration)))
            await sample()
        }

        let connected = clients.filter(\.isRunning).count
        for process in clients where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let ended = try await client.stopJob(job)
        bench.stop(daemon)

        let secondHalf = samples.filter { $0.seconds * 2 >= duration }
        let rssSlope = Self.slopePerMinute(secondHalf.map { (Double($0.seconds), Double($0.usage.rssKiB)) })
        let anonymousSlope = Self.slopePerMinute(secondHalf.map { (Double($0.seconds), Double($0.usage.anonymousKiB)) })
        let descriptors = Set(secondHalf.map(\.usage.descriptors)).sorted()
        let threads = Set(secondHalf.map(\.usage.threads)).sorted()
        let first = samples.first!.usage, last = samples.last!.usage
        print("""

            job \(job): \(ended.summary.taken) taken, \(ended.summary.failed) failed, \(ended.summary.skipped) skipped; \
            \(connected)/\(clients.count) clients still connected at the end
            RSS \(first.rssKiB) -> \(last.rssKiB) KiB (anonymous \(first.anonymousKiB) -> \(last.anonymousKiB) KiB)
            second half (\(secondHalf.count) samples): RSS \(String(format: "%+.1f", rssSlope)) KiB/min, \
            anonymous \(String(format: "%+.1f", anonymousSlope)) KiB/min
            descriptors in the second half: \(secondHalf.first!.usage.descriptors) at its start, \(last.descriptors) at the end \
            (\(descriptors.map(String.init).joined(separator: ", ")) between: \(last.descriptors <= secondHalf.first!.usage.descriptors ? "flat" : "growing")); \
            threads: \(threads.map(String.init).joined(separator: ", "))
            """)
    }

    /// The least-squares slope of `points` (seconds, KiB), per minute.
    static func slopePerMinute(_ points: [(Double, Double)]) -> Double {
        guard points.count > 1 else { return 0 }
        let n = Double(points.count)
        let meanX = points.map(\.0).reduce(0, +) / n
        let meanY = points.map(\.1).reduce(0, +) / n
        let covariance = points.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +)
        let variance = points.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
        return variance == 0 ? 0 : covariance / variance * 60
    }
}
