// Exposure ramps through a modelled sky (52.5° N, 13.4° E; the simulator's Daylight): a June
// sunset, a December sunset and a December sunrise, three hours each at 10 s intervals, on a
// simulated mirrorless body at f/2.8 up to ISO 6400 with a 2 s gap. Side by side for each
// scene: a fixed exposure, a threshold ramp (a third of a stop whenever the last picture leaves
// ±20 % of the wanted brightness), a PID controller on the rate of exposure change with
// Timelapse+ VIEW's published tuning (`PIDRateRamp`, applied in thirds of a stop) and the ramp
// engine, all fed the same meter readings. Per run: the picture's brightness error
// against the wanted brightness (p95, max), the largest change of brightness from one picture
// to the next (all pictures, and between pictures both timed in bulb), the number of setting
// changes and of black or blown frames.
//
// Usage: unleashed-ramp-bench [--json]   (`make bench-ramp`)

import Foundation
import Intervalometer
import JSON
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

let printJSON = CommandLine.arguments.contains("--json")
let scenes = [
    ("June sunset", "2026-06-21T18:30:00Z"),
    ("December sunset", "2026-12-21T13:30:00Z"),
    ("December sunrise", "2026-12-21T05:00:00Z"),
]
let limits = RampRehearsal.limits(profile: .nikonLike, maxISO: 6400, apertures: ["f/2.8"], gap: .seconds(2))

var rows: [(scene: String, method: RampRehearsal.Method, quality: RampQuality)] = []
for (name, start) in scenes {
    guard let date = ISO8601DateFormatter().date(from: start) else { fatalError("bad scene time \(start)") }
    let sky = Daylight(latitude: 52.5, longitude: 13.4, startUnixSeconds: date.timeIntervalSince1970)
    let rehearsal = RampRehearsal(sky: sky, limits: limits, interval: .seconds(10), length: .seconds(3 * 3600))
    for method in RampRehearsal.Method.allCases {
        rows.append((name, method, RampQuality(rehearsal.run(method))))
    }
}

if printJSON {
    let entries: [JSONValue] = rows.map { row in
        let q = row.quality
        return [
            "scene": .string(row.scene), "method": .string(row.method.rawValue), "frames": .integer(Int64(q.frames)),
            "p95ErrorEV": .number(q.p95Error), "maxErrorEV": .number(q.maxError), "largestJumpEV": .number(q.largestJump),
            "largestBulbJumpEV": q.largestBulbJump.map(JSONValue.number) ?? .null,
            "settingChanges": .integer(Int64(q.settingChanges)), "clippedFrames": .integer(Int64(q.clipped)),
        ]
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(JSONValue.array(entries)), as: UTF8.self))
} else {
    print("Brightness of each picture against the brightness wanted, in EV; 3 h at 10 s per scene, f/2.8, ISO 100-6400, 2 s gap")
    func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
    print("scene              method            frames  p95 error  max error  largest jump  bulb jump  changes  clipped")
    for row in rows {
        let q = row.quality
        print(row.scene.padding(toLength: 19, withPad: " ", startingAt: 0) + row.method.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
              + column(String(q.frames), 8) + column(String(format: "%.3f", q.p95Error), 11) + column(String(format: "%.3f", q.maxError), 11)
              + column(String(format: "%.3f", q.largestJump), 14) + column(q.largestBulbJump.map { String(format: "%.3f", $0) } ?? "-", 11)
              + column(String(q.settingChanges), 9) + column(String(q.clipped), 9))
    }
}
