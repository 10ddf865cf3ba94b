// Time-lapse timing over the libgphoto2 backend: how late each slot's shot command goes out
// against its deadline, for a run of the intervalometer engine on
//   1. the module backend (the in-process simulated module and camera),
//   2. the libgphoto2 backend driving `unleashed-sim ptpip` (a separate process) through the real
//      libgphoto2, pictures left on the card,
//   3. the same with every picture downloaded to a folder between frames,
// side by side in one run, with the same simulated body (nikon-z: its shutter lag and write time).
// Also prints, per scenario, the time from the trigger to the camera's report (shot latency), the
// pictures downloaded, the frames journalled with a metered EV, and over libgphoto2 how long
// reading a picture's thumbnail for that EV takes (50 more pictures after the run).
//
// Usage: unleashed-gphoto2-bench [--frames N] [--interval-ms MS]
//        (build both with -c release; `make bench-gphoto2`)

import CameraKit
import Foundation
import GPhoto2
import Intervalometer
import UnleashedKit
import UnleashedSimulator
import UnleashedTestSupport

let arguments = CommandLine.arguments
func option(_ name: String) -> Int? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } }
let frames = option("--frames") ?? 200
let intervalMs = option("--interval-ms") ?? 500

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-gphoto2-bench: \(message)\n".utf8))
    exit(1)
}

guard frames >= 2, intervalMs >= 50 else { fail("usage: unleashed-gphoto2-bench [--frames N (2 or more)] [--interval-ms MS (50 or more)]") }

/// What one scenario measured.
struct Measurement {
    let scenario: String
    /// Per slot, from its deadline to the shot command going out, in microseconds.
    let lateness: [Int64]
    /// Per shot, from the command to the camera's report, in microseconds.
    let shotLatency: [Int64]
    let taken: Int
    let notTaken: Int
    let downloaded: Int
    /// Frames journalled with a metered EV.
    let metered: Int
    /// Per picture, how long reading the scene's EV from it took, in microseconds (libgphoto2 only).
    var meteringTime: [Int64] = []
}

/// Nearest rank, as the run journal's summary computes it.
func percentile(_ values: [Int64], _ percent: Int) -> Int64 {
    RunSummary.percentile(percent, of: values.sorted()) ?? 0
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gphoto2-bench-\(UUID())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
// libgphoto2 keeps its settings under $HOME; the benchmark leaves the user's alone.
setenv("HOME", scratch.path, 1)
defer { try? FileManager.default.removeItem(at: scratch) }

/// Runs `frames` slots at `intervalMs` on `camera` and reads the lateness back from the journal.
func timelapse(_ scenario: String, on camera: any Camera, downloads: Bool) async throws -> Measurement {
    let journal = try SQLiteJournal(path: scratch.appendingPathComponent("\(UUID()).sqlite").path)
    let run = Timelapse(plan: RunPlan(intervalMs: Int64(intervalMs), stop: .frames(frames)), camera: camera, journal: journal,
                        clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
    let ending = try await run.start(cameraName: "bench")
    let saved = await camera.settle()
    let records = try journal.frames(of: ending.run.id)
    let shotLatency = records.compactMap { record -> Int64? in
        guard let sent = record.sentMs, let completed = record.completedMs else { return nil }
        return (completed - sent) * 1000
    }
    return Measurement(scenario: scenario, lateness: records.compactMap(\.latenessMicros), shotLatency: shotLatency,
                       taken: records.count(where: { $0.outcome == .taken }), notTaken: records.count(where: { $0.outcome != .taken }),
                       downloaded: downloads ? saved : 0, metered: records.count(where: { $0.meteredEV != nil }))
}

func moduleBackend() async throws -> Measurement {
    guard var profile = CameraProfile.named("nikon-z") else { fail("the nikon-z profile is missing") }
    profile.cardCapacity = UInt32(max(frames * 2, 10_000))
    let demo = try await Demo.start(stateFile: nil, options: DemoOptions(profile: profile))
    let measured = try await timelapse("module (in-process simulator)", on: demo.camera, downloads: false)
    try await demo.finish()
    return measured
}

func tetheredBackend(download: Bool) async throws -> Measurement {
    let simPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed-sim").path
    let (sim, first) = try await launchReadingFirstLine(simPath, ["ptpip", "--port", "0", "--profile", "nikon-z",
                                                            "--card-capacity", "\(max(frames * 2, 10_000))"])
    defer { kill(sim.processIdentifier, SIGKILL) }
    guard let port = first.split(separator: ":").last.flatMap({ Int($0.filter(\.isNumber)) }) else {
        fail("unleashed-sim ptpip did not start (build it: swift build -c release --static-swift-stdlib --product unleashed-sim); it printed: \(first)")
    }
    let folder = scratch.appendingPathComponent("downloads-\(UUID())")
    let camera = try await GPhoto2Camera.open(port: "ptpip:127.0.0.1:\(port)",
                                              downloads: download ? DownloadPolicy(folder: folder.path) : nil)
    var measured = try await timelapse(download ? "libgphoto2, downloading each picture" : "libgphoto2, pictures left on the card",
                                       on: camera, downloads: download)
    for _ in 0..<50 {
        _ = try await camera.shoot()
        let started = ContinuousClock.now
        guard await camera.lastMeteredEV != nil else { fail("no metered EV from the picture's thumbnail") }
        measured.meteringTime.append(started.duration(to: .now).wholeMicroseconds)
    }
    await camera.close()
    return measured
}

func row(_ m: Measurement) -> String {
    func ms(_ micros: Int64) -> String { String(format: "%.3f", Double(micros) / 1000) }
    let metering = m.meteringTime.isEmpty ? "—" : "\(ms(percentile(m.meteringTime, 50))) / \(ms(percentile(m.meteringTime, 99)))"
    return "| \(m.scenario) | \(m.taken) | \(m.notTaken) | \(ms(percentile(m.lateness, 50))) | \(ms(percentile(m.lateness, 99))) | "
        + "\(ms(m.lateness.max() ?? 0)) | \(ms(percentile(m.shotLatency, 50))) | \(ms(percentile(m.shotLatency, 99))) | \(m.downloaded) | "
        + "\(m.metered) | \(metering) |"
}

print("Time-lapse over each backend: \(frames) frames at \(intervalMs) ms, simulated body nikon-z, release build")
print("| backend | taken | not taken | lateness p50 ms | p99 ms | max ms | shot latency p50 ms | p99 ms | downloaded | metered | thumbnail read p50 / p99 ms |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
do {
    print(row(try await moduleBackend()))
    print(row(try await tetheredBackend(download: false)))
    print(row(try await tetheredBackend(download: true)))
} catch {
    fail("\(error)")
}
