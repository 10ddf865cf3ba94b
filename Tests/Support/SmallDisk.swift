import Foundation

/// A small tmpfs mounted for one test: a disk that fills up. Mounting needs root, which tests
/// and CI have; a refusal fails the test loudly rather than skipping it.
public struct SmallDisk: Sendable {
    public let directory: String

    public init(megabytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("small-disk-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let mount = try runSync("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory])
        guard mount.status == 0 else {
            throw DiskError("mounting a \(megabytes) MB tmpfs at \(directory) was refused (\(mount.stderr)); "
                + "this test needs root (as `make test` and CI run)")
        }
    }

    /// Fills the disk with a file of its own; returns that file.
    public func fill() -> String {
        let filler = directory + "/filler"
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        return filler
    }

    public func remove() {
        _ = try? runSync("/bin/umount", ["-l", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }
}

private struct DiskError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@discardableResult
private func runSync(_ program: String, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let err = Pipe()
    process.standardError = err
    try ChildProcesses.run(process)
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
}

