import Foundation

extension FrameRecord {
    /// The CSV columns of ``SQLiteJournal/csv(of:)``, one per field, in snake case for the
    /// tools that read them.
    public static let csvHeader = [
        "frame", "part", "scheduled_ms", "sent_ms", "completed_ms", "lateness_us", "outcome", "error", "exposure",
        "metered_ev", "shot_counter", "camera", "command_spread_us", "completion_spread_us",
        "ramp_target_ev", "ramp_scene_ev", "ramp_residual_ev", "ramp_rate_ev_per_hour", "interval_ms",
    ]

    /// The record's fields in ``csvHeader`` order, empty where a field has no value.
    public var csvFields: [String] {
        [
            String(frame), String(part), String(scheduledMs), text(sentMs), text(completedMs), text(latenessMicros),
            outcome.rawValue, error ?? "", exposure ?? "", meteredEV ?? "", text(shotCounter), camera ?? "",
            text(commandSpreadMicros), text(completionSpreadMicros),
            stops(ramp?.targetEV), stops(ramp?.sceneEV), stops(ramp?.residualEV), stops(ramp?.rate), text(ramp?.intervalMs),
        ]
    }

    /// The first line of a run's CSV: ``csvHeader``, with its line end.
    public static var csvHeaderLine: String { CSV.line(csvHeader) }

    /// The record as one line of a run's CSV, with its line end: the whole file is
    /// ``csvHeaderLine`` and then each record's line in journal order, so that it can be
    /// written a page of records at a time as well as at once.
    public var csvLine: String { CSV.line(csvFields) }

    private func stops(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "" }

    private func text(_ value: (some BinaryInteger)?) -> String { value.map { String($0) } ?? "" }
}

/// RFC 4180 fields: error messages come from cameras and operating systems and may hold any text.
enum CSV {
    /// `fields` as one line: each quoted as it needs, separated by commas, ended by CRLF.
    static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// `field`, quoted (with its quotes doubled) when it holds a comma, a quote or a line break.
    static func field(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
