public import CameraKit
public import Foundation

/// The pictures each camera's backend copied to the daemon's disk as it took them
/// (``CameraEvent/fileSaved(_:)``: a camera on USB or PTP/IP with `[downloads]`), the newest
/// ``capacity`` per camera, and their thumbnails for the web app.
///
/// A client names a picture by its file name among these, never by a path, so nothing else on
/// the disk can be asked for. Thumbnails are made on first request, off the actor, and the
/// newest ``thumbnailCapacity`` are kept in memory.
public actor SavedPictures {
    /// One picture the daemon saved.
    public struct Picture: Sendable, Equatable {
        /// The file's name in the downloads folder: how clients name it.
        public var name: String
        public var file: SavedFile
        public var saved: Date
    }

    /// Why a thumbnail cannot be had.
    public enum ThumbnailError: Error, Sendable, Equatable, CustomStringConvertible {
        case unknown(camera: String, name: String)
        case notJPEG(String)
        case unreadable(String, reason: String)

        public var description: String {
            switch self {
            case .unknown(let camera, let name):
                "camera \(camera) has no saved picture '\(name)' among its newest \(SavedPictures.capacity); list them at /v1/cameras/\(camera)/pictures"
            case .notJPEG(let name): "\(name) is not a JPEG (a raw file?); thumbnails are made from JPEG pictures"
            case .unreadable(let name, let reason): "the picture \(name) cannot be read: \(reason)"
            }
        }
    }

    /// How many pictures are listed per camera.
    public static let capacity = 100
    /// How many thumbnails are kept in memory.
    static let thumbnailCapacity = 64
    /// The width a thumbnail is made at least as wide as (libjpeg scales by eighths only).
    static let thumbnailWidth = 320

    private var pictures: [String: [Picture]] = [:]
    private var thumbnails: [String: Data] = [:]
    private var thumbnailOrder: [String] = []
    private var followers: [String: Task<Void, Never>] = [:]
    private let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date = Date.init) {
        self.now = now
    }

    /// Follows a camera's events for its saved files, from now until its events end.
    public func follow(_ entry: CameraRegistry.Entry) async {
        let events = await entry.camera.events()
        let name = entry.name
        followers[name]?.cancel()
        followers[name] = Task { [weak self] in
            for await event in events {
                guard case .fileSaved(let file) = event else { continue }
                await self?.saved(file, camera: name)
            }
        }
    }

    /// Records a saved file of `camera`.
    func saved(_ file: SavedFile, camera: String) {
        let picture = Picture(name: (file.path as NSString).lastPathComponent, file: file, saved: now())
        var list = pictures[camera, default: []]
        list.removeAll { $0.name == picture.name }
        list.append(picture)
        if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        pictures[camera] = list
    }

    /// The camera's saved pictures, newest first.
    public func list(camera: String) -> [Picture] {
        (pictures[camera] ?? []).reversed()
    }

    /// A JPEG at least ``thumbnailWidth`` pixels wide (or the picture's own width) of the saved
    /// picture `name` of `camera`.
    public func thumbnail(camera: String, name: String) async throws(ThumbnailError) -> Data {
        guard let picture = pictures[camera]?.last(where: { $0.name == name }) else { throw .unknown(camera: camera, name: name) }
        let key = picture.file.path
        if let cached = thumbnails[key] { return cached }
        let suffix = (name as NSString).pathExtension.lowercased()
        guard ["jpg", "jpeg"].contains(suffix) else { throw .notJPEG(name) }
        let path = picture.file.path
        let made = await Task.detached { () -> Result<Data, ThumbnailError> in
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                return .failure(.unreadable(name, reason: error.localizedDescription))
            }
            guard let thumbnail = JPEGThumbnail.make(from: data, atLeast: Self.thumbnailWidth) else {
                return .failure(.unreadable(name, reason: "libjpeg could not decode it"))
            }
            return .success(thumbnail)
        }.value
        let thumbnail = try made.get()
        // Two requests may have made it at once; it is kept once.
        if thumbnails.updateValue(thumbnail, forKey: key) == nil { thumbnailOrder.append(key) }
        if thumbnailOrder.count > Self.thumbnailCapacity { thumbnails[thumbnailOrder.removeFirst()] = nil }
        return thumbnail
    }
}
