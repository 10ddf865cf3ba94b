public import CameraKit
import Foundation

/// What to do with the pictures a camera takes: copy each to `folder` under a name made from
/// `template`, and leave it on the card unless `deleteFromCamera`.
public struct DownloadPolicy: Hashable, Sendable {
    public var folder: String
    public var template: FilenameTemplate
    /// Deletes each picture from the camera once it is safely written here.
    public var deleteFromCamera: Bool

    public init(folder: String, template: FilenameTemplate = .default, deleteFromCamera: Bool = false) {
        self.folder = folder
        self.template = template
        self.deleteFromCamera = deleteFromCamera
    }
}

/// Writes downloaded pictures without ever replacing a file.
enum PictureWriter {
    /// Writes `data` into `folder` as `name`, or `name-2`, `name-3`... when taken; returns the path.
    /// The bytes go to a temporary file first and are linked into place, so a reader never sees
    /// half a picture and an existing file is never overwritten, even by a racing writer.
    static func write(_ data: Data, folder: String, name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = (folder as NSString).appendingPathComponent(".\(name).\(UUID().uuidString).part")
        try data.write(to: URL(fileURLWithPath: temporary))
        defer { unlink(temporary) }
        let dot = name.lastIndex(of: ".")
        let base = dot.map { String(name[..<$0]) } ?? name
        let suffix = dot.map { String(name[$0...]) } ?? ""
        for attempt in 1...10_000 {
            let candidate = attempt == 1 ? name : "\(base)-\(attempt)\(suffix)"
            let path = (folder as NSString).appendingPathComponent(candidate)
            if link(temporary, path) == 0 { return path }
            guard errno == EEXIST else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                    NSLocalizedDescriptionKey: "could not write \(path): \(String(cString: strerror(errno)))"])
            }
        }
        throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: name])
    }
}
