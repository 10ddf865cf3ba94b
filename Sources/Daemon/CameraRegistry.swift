public import CameraKit
import Foundation
import UnleashedKit

/// The cameras the daemon holds, by the names clients use. Modules from the configuration are
/// added at start; `unleashed connect` adds more while the daemon runs.
public actor CameraRegistry {
    /// A camera and where it came from.
    public struct Entry: Sendable {
        /// What clients call the camera; unique in the registry.
        public let name: String
        public let camera: any Camera
        /// The module's address, the libgphoto2 port, or "demo": for listings.
        public let source: String
        /// Reads the camera's status for the API, once for all clients.
        public let statusReader: StatusReader
    }

    private var entries: [Entry] = []
    private let added: (@Sendable (Entry) async -> Void)?
    /// Those told when a camera comes or goes (``changes()``).
    private var watchers: [UUID: AsyncStream<Void>.Continuation] = [:]

    /// - Parameter added: Told of each camera as it is added (the metrics follow its events).
    public init(added: (@Sendable (Entry) async -> Void)? = nil) {
        self.added = added
    }

    /// Holds `camera` under `name` and returns its entry; nil when that name is taken.
    @discardableResult
    public func add(_ camera: any Camera, name: String, source: String) async -> Entry? {
        guard entry(named: name) == nil else { return nil }
        let entry = Entry(name: name, camera: camera, source: source, statusReader: StatusReader(camera: camera))
        entries.append(entry)
        changed()
        await added?(entry)
        return entry
    }

    /// Lets go of the camera named `name` and returns it, for the caller to close.
    public func remove(named name: String) -> Entry? {
        guard let index = entries.firstIndex(where: { Self.matches($0, name) }) else { return nil }
        defer { changed() }
        return entries.remove(at: index)
    }

    /// An element each time a camera is added or removed from now on, for a stream that lists
    /// the cameras (the web app's) to start again with the new list.
    public func changes() -> AsyncStream<Void> {
        let (stream, watcher) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let token = UUID()
        watchers[token] = watcher
        watcher.onTermination = { [weak self] _ in
            Task { await self?.unwatch(token) }
        }
        return stream
    }

    private func unwatch(_ token: UUID) { watchers[token] = nil }

    private func changed() {
        for watcher in watchers.values { watcher.yield() }
    }

    /// Every camera, in the order they were added.
    public var all: [Entry] { entries }

    /// The camera named `name` (in any case; a module's address works too), or with no name the
    /// only camera held.
    public func camera(named name: String?) throws(CameraLookupError) -> Entry {
        if let name {
            guard let found = entry(named: name) else { throw .unknown(name, known: entries.map(\.name)) }
            return found
        }
        switch entries.count {
        case 0: throw .none
        case 1: return entries[0]
        default: throw .ambiguous(entries.map(\.name).sorted())
        }
    }

    private func entry(named name: String) -> Entry? {
        entries.first { Self.matches($0, name) }
    }

    /// A camera answers to its name and to where it is (a module's address), in any case.
    private static func matches(_ entry: Entry, _ name: String) -> Bool {
        entry.name.lowercased() == name.lowercased() || entry.source.lowercased() == name.lowercased()
    }
}

/// Why a request names no camera the daemon holds.
public enum CameraLookupError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknown(String, known: [String])
    case none
    case ambiguous([String])

    public var description: String {
        switch self {
        case .unknown(let name, let known):
            "the daemon holds no camera named '\(name)'" + (known.isEmpty ? "" : "; it holds \(known.joined(separator: ", "))")
        case .none: "the daemon holds no camera; connect one with `unleashed connect`"
        case .ambiguous(let names): "the daemon holds \(names.count) cameras (\(names.joined(separator: ", "))); name one"
        }
    }
}
