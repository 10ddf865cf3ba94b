public import CameraKit
public import JSON
import UnleashedKit

/// How `unleashed shoot` reports a picture: a line of text, or a JSON object with `--json`.
/// One implementation for the full program and the quick one (``QuickShoot``), so that both print
/// the same.
public enum ShotReport {
    /// How many pictures one `unleashed shoot --count` may take.
    public static let counts = 1...10_000

    public static func json(_ shot: Shot) -> JSONValue {
        var json: [String: JSONValue] = [
            "counter": .integer(Int64(shot.counter)),
            "latencyMs": .integer(shot.latency.wholeMilliseconds),
        ]
        json["cameraTime"] = shot.cameraTime.map { .string(LocalTime.timestamp($0)) }
        if shot.confirmedByCounter { json["confirmedByCounter"] = .bool(true) }
        json["confirmed"] = .bool(shot.confirmed)
        return .object(json)
    }

    public static func text(_ shot: Shot) -> String {
        guard shot.confirmed else {
            // Nothing came back but the link's acknowledgement: say no more than that.
            return "Shot \(shot.counter) sent, not confirmed: this camera's remote does not report pictures "
                + "(the trigger was written in \(shot.latency.wholeMilliseconds) ms)"
        }
        return "Shot \(shot.counter) taken, reported \(shot.latency.wholeMilliseconds) ms after the trigger"
            + (shot.cameraTime.map { " (camera time \(LocalTime.timestamp($0)))" } ?? "")
            + (shot.confirmedByCounter ? " (report lost; confirmed from the shot counter)" : "")
    }

    /// Takes `count` pictures one after another, each as soon as the camera is ready, and hands
    /// each to `report` as it is taken. A failure stops the series; a cancelled task stops it
    /// before the next picture.
    public static func series(of count: Int, on camera: any Camera,
                              report: (Shot) -> Void) async throws(CameraError) {
        try await series(of: count, cancelled: .cancelled, shoot: { _ throws(CameraError) in try await camera.shoot() }, report: report)
    }

    /// The same with `shoot` taking the picture of each index from 0, and `cancelled` the
    /// failure a cancelled task stops with.
    public static func series<Failure: Error>(of count: Int, cancelled: Failure,
                                              shoot: (Int) async throws(Failure) -> Shot,
                                              report: (Shot) -> Void) async throws(Failure) {
        for index in 0..<count {
            if Task.isCancelled { throw cancelled }
            report(try await shoot(index))
        }
    }
}
