import CompressNIO
import Foundation
import NIOCore

/// The web app's files, embedded in the binary at build time, each also gzip-compressed once at
/// start so that a phone on a weak link downloads the smaller form.
struct WebAssets: Sendable {
    struct Asset: Sendable {
        let contentType: String
        let plain: ByteBuffer
        let gzipped: ByteBuffer?
        /// A strong validator from the content, so a phone that has the file asks and gets 304.
        let etag: String
    }

    /// By the path the page asks for.
    let byPath: [String: Asset]

    init() {
        var assets: [String: Asset] = [:]
        for (path, type, bytes) in Self.embedded {
            let plain = ByteBuffer(bytes: bytes)
            var input = plain
            let gzipped = try? input.compress(with: .gzip())
            assets[path] = Asset(contentType: type, plain: plain,
                                 gzipped: gzipped.flatMap { $0.readableBytes < plain.readableBytes ? $0 : nil },
                                 etag: "\"\(Self.fingerprint(bytes))\"")
        }
        byPath = assets
    }

    /// Every file the page is made of, with its type.
    private static let embedded: [(String, String, [UInt8])] = [
        ("/", "text/html; charset=utf-8", PackageResources.index_html),
        ("/app.js", "text/javascript; charset=utf-8", PackageResources.app_js),
        ("/app.css", "text/css; charset=utf-8", PackageResources.app_css),
        ("/icon.svg", "image/svg+xml", PackageResources.icon_svg),
        ("/manifest.webmanifest", "application/manifest+json", PackageResources.manifest_webmanifest),
    ]

    /// The page's total size as served gzip-compressed (or plain where that is smaller): what a
    /// phone downloads on its first visit.
    var compressedSize: Int { byPath.values.reduce(0) { $0 + ($1.gzipped ?? $1.plain).readableBytes } }

    /// FNV-1a over the bytes: the validator only needs to change when the content does.
    private static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
