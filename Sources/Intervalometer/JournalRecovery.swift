import Foundation

/// Frame records the journal could not take (its disk full, an I/O error), kept in a file of
/// JSON lines so that no frame taken goes unrecorded; a resumed run adds them to the journal.
///
/// The first place is beside the journal. When that disk is the full one, the runtime
/// directory (`$XDG_RUNTIME_DIR`, memory) and then the temporary directory are tried: the run's
/// end names the file written.
public enum JournalRecovery {
    /// The recovery file's candidate places for `run` of the journal at `journalPath`, most
    /// preferred first.
    public static func files(journalPath: String, run: Int64) -> [String] {
        files(journalPath: journalPath, run: run, environment: ProcessInfo.processInfo.environment)
    }

    static func files(journalPath: String, run: Int64, environment: [String: String]) -> [String] {
        let beside = "\(journalPath).run-\(run).recovery.jsonl"
        // Elsewhere the name carries the journal's whole path, so that two journals' files differ.
        let absolute = URL(fileURLWithPath: journalPath).standardizedFileURL.path
        let name = absolute.replacingOccurrences(of: "/", with: "%") + ".run-\(run).recovery.jsonl"
        var folders: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { folders.append("\(runtime)/unleashed") }
        folders.append(NSTemporaryDirectory() + "unleashed-\(getuid())")
        return [beside] + folders.map { "\($0)/\(name)" }
    }

    /// Appends `records` to the first of `files` that takes them, synced; returns that file,
    /// or nil when none could be written.
    public static func write(_ records: [FrameRecord], to files: [String]) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = Data()
        for record in records {
            guard let line = try? encoder.encode(record) else { continue }
            data.append(line)
            data.append(0x0A)
        }
        for file in files where append(data, to: file) { return file }
        return nil
    }

    /// The records kept for a run in any of `files`, in the order they were written.
    /// Lines that cannot be read (a file cut off by a crash) are left out.
    public static func records(in files: [String]) -> [FrameRecord] {
        let decoder = JSONDecoder()
        var records: [FrameRecord] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            for line in data.split(separator: 0x0A) {
                if let record = try? decoder.decode(FrameRecord.self, from: Data(line)) { records.append(record) }
            }
        }
        return records
    }

    /// Removes the files, once their records are in the journal.
    public static func remove(_ files: [String]) {
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }

    private static func append(_ data: Data, to file: String) -> Bool {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: folder) {
            guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])) != nil else { return false }
        }
        let descriptor = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let start = lseek(descriptor, 0, SEEK_END)
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, fsync(descriptor) == 0 else {
            // A partial line would make the file unreadable past it: take it back.
            if start >= 0 { _ = ftruncate(descriptor, start) }
            return false
        }
        return true
    }
}
