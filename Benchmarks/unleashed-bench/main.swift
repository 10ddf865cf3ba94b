// Codec throughput: messages per second for encode + fragment and for reassemble + decode, for a
// set-setting request, a status response and a storage status event at ATT MTU 23 and 247, side by
// side in one run.
//
// Usage: unleashed-bench [--json] [--seconds S]   (build with -c release; `make bench`)

import CameraKit
import Foundation
import UnleashedProtocol

struct Case {
    let name: String
    let message: Message
}

let cases = [
    Case(name: "setSetting request", message: Message(.request(.setSetting), id: 42, fields: Fields {
        $0.setting = .shutterSpeed
        $0.value = .shutterSpeed(ShutterSpeed(seconds: 1, per: 250)!)
    })),
    Case(name: "getStatus response", message: Message(.response(.getStatus, .ok), id: 43, fields: Fields {
        $0.moduleBattery = 97
        $0.cameraBattery = 64
        $0.storageState = .ok
        $0.shotsRemaining = 1874
        $0.cameraPower = .on
        $0.exposureMode = .manual
        $0.meteredEV = ExposureStops(twentyFourths: 11 * 24 + 8)
        $0.busy = false
        $0.shotCounter = 266
    })),
    Case(name: "storage event", message: Message(.event(.storage), id: 44, fields: Fields {
        $0.storageState = .ok
        $0.shotsRemaining = 1873
    })),
]

let arguments = CommandLine.arguments
let printJSON = arguments.contains("--json")
let secondsPerRun = arguments.firstIndex(of: "--seconds").flatMap { Double(arguments[$0 + 1]) } ?? 0.4
let runs = 5
nonisolated(unsafe) var sink = 0

/// Messages per second of `operation`, the median of `runs` timed runs of about `secondsPerRun`.
func throughput(_ operation: () throws -> Void) rethrows -> (median: Double, low: Double, high: Double) {
    let clock = ContinuousClock()
    var batch = 1
    while clock.measure({ for _ in 0..<batch { try? operation() } }) < .milliseconds(20) { batch *= 2 }
    var rates: [Double] = []
    for _ in 0..<runs {
        var done = 0
        let start = clock.now
        while start.duration(to: clock.now) < .seconds(secondsPerRun) {
            for _ in 0..<batch { try operation() }
            done += batch
        }
        let elapsed = start.duration(to: clock.now)
        rates.append(Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18))
    }
    rates.sort()
    return (rates[runs / 2], rates[0], rates[runs - 1])
}

var rows: [[String: Any]] = []
let dialect = UnleashedV1()
for benchmarkCase in cases {
    for mtu in [23, 247] {
        let packets = try dialect.packets(for: benchmarkCase.message, mtu: mtu)
        let encode = try throughput {
            sink &+= try dialect.packets(for: benchmarkCase.message, mtu: mtu).count
        }
        var receiver = try dialect.makeReceiver(mtu: mtu)
        let decode = throughput {
            for packet in packets {
                if receiver.receive(packet).message != nil { sink &+= 1 }
            }
        }
        let bytes = try benchmarkCase.message.encoded().count
        rows.append([
            "message": benchmarkCase.name, "mtu": mtu, "bytes": bytes, "packets": packets.count,
            "encodeFragmentPerSecond": encode.median.rounded(), "encodeLow": encode.low.rounded(), "encodeHigh": encode.high.rounded(),
            "reassembleDecodePerSecond": decode.median.rounded(), "decodeLow": decode.low.rounded(), "decodeHigh": decode.high.rounded(),
        ])
    }
}
precondition(sink > 0)

if printJSON {
    let data = try JSONSerialization.data(withJSONObject: ["runs": runs, "secondsPerRun": secondsPerRun, "results": rows], options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} else {
    func rate(_ value: Any?) -> String {
        let number = value as? Double ?? 0
        return number >= 1e6 ? String(format: "%.2f M", number / 1e6) : String(format: "%.0f k", number / 1e3)
    }
    print("Codec throughput, messages per second (median of \(runs) runs of \(secondsPerRun) s; range in brackets)\n")
    print("| message | MTU | bytes | packets | encode + fragment | reassemble + decode |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows {
        print("| \(row["message"]!) | \(row["mtu"]!) | \(row["bytes"]!) | \(row["packets"]!) | "
            + "\(rate(row["encodeFragmentPerSecond"])) [\(rate(row["encodeLow"]))–\(rate(row["encodeHigh"]))] | "
            + "\(rate(row["reassembleDecodePerSecond"])) [\(rate(row["decodeLow"]))–\(rate(row["decodeHigh"]))] |")
    }
}
