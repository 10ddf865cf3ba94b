import CameraKit
public import Foundation
import UnleashedKit

/// The module `unleashed connect` chose, remembered for the commands after it.
public struct RememberedModule: Codable, Hashable, Sendable {
    public var address: String
    public var name: String?
    public var adapter: String?

    public init(address: String, name: String?, adapter: String?) {
        self.address = address
        self.name = name
        self.adapter = adapter
    }

    /// `$XDG_STATE_HOME/unleashed/module.json`, else `~/.local/state/unleashed/module.json`.
    public static var file: URL {
        unleashedStateDirectory().appendingPathComponent("module.json")
    }

    public static func load(from file: URL = file) -> RememberedModule? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONDecoder().decode(RememberedModule.self, from: data)
    }

    public func save(to file: URL = file) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: file, options: .atomic)
    }

    public static func forget(at file: URL = file) {
        try? FileManager.default.removeItem(at: file)
    }
}
