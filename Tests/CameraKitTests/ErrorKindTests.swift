import CameraKit
import Foundation
import Testing

/// The kind of a camera error decides the CLI's exit status and the daemon's HTTP status, through
/// two tables; these tests hold the tables to the statuses the documentation promises.
@Suite("Camera error kinds and their statuses")
struct ErrorKindTests {
    static let iso800 = SettingValue.iso(ISOSpeed(800)!)

    /// One error of every case, every failure reason and every device failure kind.
    static let errors: [CameraError] = [
        .unknownSetting("zoom"), .unreadableValue(.iso, "loud"), .invalidArgument("no"),
        .settingNotOffered(.aperture), .readOnly(.aperture), .valueNotOffered(iso800, nearest: [], offered: []),
        .notInBulbMode(current: nil), .focusFailed, .unsupported("video"),
        .timedOut("shoot", after: .seconds(3)), .shotNotReported(after: .seconds(2)), .notConnected("gone"), .cancelled,
    ] + [
        FailureReason.busy, .invalidArgument, .notSupported, .cameraOff, .cardFull, .cameraNotAttached, .internalError,
        .other("unknown(119)"),
    ].map { CameraError.refused("shoot", $0, message: nil) }
        + DeviceFailure.Kind.allCases.map { CameraError.device(DeviceFailure($0, "words")) }

    @Test("every kind has an exit status and an HTTP status, and every kind is some error's")
    func tablesAreTotal() {
        for kind in CameraError.Kind.allCases {
            #expect(CameraError.exitStatuses[kind] != nil, "no exit status for \(kind)")
            #expect(CameraError.httpStatuses[kind] != nil, "no HTTP status for \(kind)")
        }
        #expect(Set(Self.errors.map(\.kind)) == Set(CameraError.Kind.allCases))
    }

    @Test("errors are sorted into the kind a caller acts on")
    func kinds() {
        #expect(CameraError.refused("shoot", .busy, message: nil).kind == .busy)
        #expect(CameraError.refused("shoot", .cardFull, message: nil).kind == .refused)
        #expect(CameraError.device(DeviceFailure(.busy, "x")).kind == .busy)
        #expect(CameraError.device(DeviceFailure(.permissionDenied, "x")).kind == .permission)
        #expect(CameraError.device(DeviceFailure(.invalidRequest, "x")).kind == .internal)
        #expect(CameraError.timedOut("shoot", after: .seconds(1)).kind == .unavailable)
        #expect(CameraError.unreadableValue(.iso, "x").kind == .usage)
        #expect(CameraError.cancelled.kind == .cancelled)
    }

    @Test("the exit statuses are those of the user guide's table, code by code")
    func exitStatusesMatchTheUserGuide() throws {
        let documented = try Self.statusesByCode(in: "docs/user-guide.md", after: "## Errors and exit statuses") { cells in
            (Int(cells[0]), cells[2])
        }
        try Self.check(documented, status: { Int($0.exitStatus) })
    }

    @Test("the HTTP statuses are those of the daemon guide's table, code by code")
    func httpStatusesMatchTheDaemonGuide() throws {
        let documented = try Self.statusesByCode(in: "docs/daemon.md", after: "A camera's refusal answers with a status") { cells in
            (Int(cells[1]), cells[0])
        }
        try Self.check(documented, status: \.httpStatusCode)
    }

    /// Every error whose code the table lists has a status the table gives that code (a code can
    /// sit in two rows: `invalidArgument` is the caller's mistake or the module's refusal), and
    /// every kind is checked through at least one documented code.
    static func check(_ documented: [String: Set<Int>], status: (CameraError) -> Int) throws {
        var checkedKinds: Set<CameraError.Kind> = []
        for error in errors {
            guard let statuses = documented[error.code] else { continue }
            #expect(statuses.contains(status(error)), "\(error.code) (\(error.kind)) gives \(status(error)), documented \(statuses.sorted())")
            checkedKinds.insert(error.kind)
        }
        #expect(checkedKinds == Set(CameraError.Kind.allCases), "kinds without a documented code: \(Set(CameraError.Kind.allCases).subtracting(checkedKinds))")
    }

    /// Reads the first Markdown table after `heading`: the status of each row and the codes in
    /// backticks of its code column, as `row` picks them out of the cells.
    static func statusesByCode(in path: String, after heading: String, row: ([String]) -> (Int?, String)) throws -> [String: Set<Int>] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appending(path: path), encoding: .utf8)
        let start = try #require(text.range(of: heading))
        var statuses: [String: Set<Int>] = [:]
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else {
                if inTable { break } else { continue }
            }
            inTable = true
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { continue }
            let (status, codes) = row(Array(cells))
            guard let status else { continue }
            for code in codes.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter({ $0.offset % 2 == 1 }).map({ String($0.element) }) {
                statuses[code, default: []].insert(status)
            }
        }
        #expect(!statuses.isEmpty, "no status table after '\(heading)' in \(path)")
        return statuses
    }
}
