import Foundation
import JSON
public import UnleashedKit

/// A test seam, not a setting: `UNLEASHED_TEST_HOST_CLOCK` names a JSON file that plays the
/// host's clock for the daemon, so that a test launching the binary (the browser tests) can give
/// it a host whose clock is wrong without setting the real one.
///
/// `{"synchronised": false, "wallClockErrorMs": -7200000}`: what the kernel's discipline says,
/// and how far the daemon's readings of the wall clock are off the real one (negative: behind;
/// optional, 0). Read once, at start; the monotonic clock stays the real one.
public enum HostClockTestSeam {
    /// The environment variable that names the file.
    public static let variable = "UNLEASHED_TEST_HOST_CLOCK"

    /// The most `wallClockErrorMs` may be, either way: a century.
    static let largestErrorMs: Int64 = 36_525 * 86_400_000

    /// Why the file plays no clock.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The file's members.
    struct File: Decodable {
        var synchronised: Bool
        var wallClockErrorMs: Int64?
    }

    /// The host's clock as the file named in `environment` plays it, or nil when the variable
    /// is not set (the system's clock, as always). A file that cannot be read, or says anything
    /// else, is an error: a test that meant to play the clock must not run on the real one.
    public static func source(environment: [String: String]) throws(Failure) -> HostClockSource? {
        guard let path = environment[variable], !path.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "\(variable): cannot read \(path)")
        }
        let file: File
        do throws(JSONShapeError) {
            file = try StrictJSONDecoder().decode(File.self, from: data)
        } catch {
            throw Failure(description: "\(variable) \(path): \(error.description); write it like "
                + #"{"synchronised": false, "wallClockErrorMs": -7200000}"#)
        }
        let error = file.wallClockErrorMs ?? 0
        guard error.magnitude <= largestErrorMs.magnitude else {
            throw Failure(description: "\(variable) \(path): wallClockErrorMs: at most a century either way")
        }
        let system = HostClockSource.system
        let discipline = ClockDiscipline(synchronised: file.synchronised, estimatedError: .zero, maximumError: .zero)
        return HostClockSource(wallClockMs: { system.wallClockMs() + error }, monotonic: system.monotonic, discipline: { discipline })
    }
}
