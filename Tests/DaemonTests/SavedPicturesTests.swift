import CameraKit
import Foundation
import Testing
@testable import Daemon

/// The pictures a camera's backend saved, as the API lists them and makes their thumbnails.
@Suite("saved pictures and their thumbnails")
struct SavedPicturesTests {
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("saved-pictures-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A JPEG of `width` × `height` grey pixels.
    static func jpeg(width: Int, height: Int) throws -> Data {
        try #require(JPEGThumbnail.encode([UInt8](repeating: 128, count: width * height * 3), width: Int32(width), height: Int32(height)))
    }

    static func file(_ path: String, counter: Int) -> SavedFile {
        SavedFile(path: path, bytes: 10, cameraPath: "/store/DCIM/\((path as NSString).lastPathComponent)", frame: nil, shotCounter: counter)
    }

    @Test("a large JPEG becomes one at least 320 px wide, decoded at an eighth at most, with its proportions")
    func thumbnail() throws {
        let small = try #require(JPEGThumbnail.make(from: try Self.jpeg(width: 2560, height: 1920), atLeast: 320))
        let size = try #require(Self.size(of: small))
        #expect(size.width == 320 && size.height == 240)
        // A picture narrower than that is kept at its size.
        let tiny = try #require(JPEGThumbnail.make(from: try Self.jpeg(width: 160, height: 120), atLeast: 320))
        #expect(Self.size(of: tiny).map { [$0.width, $0.height] } == [160, 120])
        #expect(JPEGThumbnail.make(from: Data("not a picture".utf8), atLeast: 320) == nil)
    }

    @Test("the newest 100 pictures per camera are listed, newest first; a name saved again is listed once")
    func bounded() async {
        let pictures = SavedPictures()
        for counter in 1...(SavedPictures.capacity + 5) {
            await pictures.saved(Self.file("/p/IMG_\(counter).JPG", counter: counter), camera: "a")
        }
        await pictures.saved(Self.file("/p/IMG_105.JPG", counter: 106), camera: "a")
        let listed = await pictures.list(camera: "a")
        #expect(listed.count == SavedPictures.capacity)
        #expect(listed.first?.file.shotCounter == 106)
        #expect(listed.last?.name == "IMG_6.JPG")
        #expect(await pictures.list(camera: "b").isEmpty)
    }

    @Test("only a listed picture is served; a raw file, a damaged one and one deleted since are refused with the reason")
    func refusals() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pictures = SavedPictures()
        try Self.jpeg(width: 640, height: 480).write(to: URL(fileURLWithPath: folder + "/good.jpg"))
        try Data("raw".utf8).write(to: URL(fileURLWithPath: folder + "/shot.nef"))
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: folder + "/bad.jpg"))
        for (index, name) in ["good.jpg", "shot.nef", "bad.jpg", "gone.jpg"].enumerated() {
            await pictures.saved(Self.file(folder + "/" + name, counter: index), camera: "a")
        }
        #expect(Self.size(of: try await pictures.thumbnail(camera: "a", name: "good.jpg")).map { $0.width } == 320)
        await #expect(throws: SavedPictures.ThumbnailError.unknown(camera: "a", name: "../unleashed.toml")) {
            try await pictures.thumbnail(camera: "a", name: "../unleashed.toml")
        }
        await #expect(throws: SavedPictures.ThumbnailError.unknown(camera: "b", name: "good.jpg")) {
            try await pictures.thumbnail(camera: "b", name: "good.jpg")
        }
        await #expect(throws: SavedPictures.ThumbnailError.notJPEG("shot.nef")) { try await pictures.thumbnail(camera: "a", name: "shot.nef") }
        await #expect { try await pictures.thumbnail(camera: "a", name: "bad.jpg") } throws: { error in
            "\(error)".contains("libjpeg could not decode it")
        }
        await #expect { try await pictures.thumbnail(camera: "a", name: "gone.jpg") } throws: { error in
            "\(error)".contains("cannot be read")
        }
    }

    /// A JPEG's width and height, from its frame header.
    static func size(of jpeg: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](jpeg)
        var index = 2
        while index + 8 < bytes.count {
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if [0xC0, 0xC1, 0xC2].contains(marker) {
                return (Int(bytes[index + 7]) << 8 | Int(bytes[index + 8]), Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]))
            }
            index += 2 + length
        }
        return nil
    }
}
