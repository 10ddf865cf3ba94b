import CompressNIO
import Foundation
import NIOCore

/// The web app's files, embedded in the binary at build time, each also gzip-compressed once at
/// start (scripts and stylesheets without their comment lines) so that a phone on a weak link
/// downloads the smaller form.
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

    /// A folder to read the page's files from on each request instead of the embedded ones
    /// (`UNLEASHED_WEB_ASSETS`): for working on the page, whose edits then show on a reload
    /// without a build. Only the files the page is made of are served from it.
    let folder: String?

    init(folder: String? = ProcessInfo.processInfo.environment["UNLEASHED_WEB_ASSETS"]) {
        var assets: [String: Asset] = [:]
        for (path, type, bytes) in Self.embedded {
            assets[path] = Self.asset(type: type, bytes: bytes)
        }
        assets[Self.serviceWorkerPath] = Self.asset(type: Self.javaScript, bytes: Self.serviceWorker(PackageResources.sw_js, shell: assets))
        byPath = assets
        self.folder = folder.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The file at `path`: the embedded one, or with a folder set, the folder's as it is now.
    func asset(at path: String) -> Asset? {
        guard let folder else { return byPath[path] }
        func read(_ path: String) -> [UInt8]? {
            let name = path == "/" ? "index.html" : String(path.dropFirst())
            return FileManager.default.contents(atPath: folder + "/" + name).map { [UInt8]($0) }
        }
        if path == Self.serviceWorkerPath, let worker = read(path) {
            var shell: [String: Asset] = [:]
            for (path, type, bytes) in Self.embedded { shell[path] = Self.asset(type: type, bytes: read(path) ?? bytes) }
            return Self.asset(type: Self.javaScript, bytes: Self.serviceWorker(worker, shell: shell))
        }
        guard let type = Self.embedded.first(where: { $0.0 == path })?.1, let bytes = read(path) else { return byPath[path] }
        return Self.asset(type: type, bytes: bytes)
    }

    /// Where the service worker is served: at the top, so that it may keep every file of the page.
    static let serviceWorkerPath = "/sw.js"

    /// The service worker with the page's files and their version written above it: the shell it
    /// keeps is the list the daemon serves, and a page that changes gets a worker that changes,
    /// which the browser installs in place of the old one.
    private static func serviceWorker(_ source: [UInt8], shell: [String: Asset]) -> [UInt8] {
        let paths = shell.keys.sorted()
        let version = fingerprint(Array(paths.map { "\($0) \(shell[$0]!.etag)" }.joined(separator: "\n").utf8))
        let list = paths.map { "\"\($0)\"" }.joined(separator: ", ")
        return Array("const SHELL_FILES = [\(list)];\nconst SHELL_VERSION = \"\(version)\";\n".utf8) + source
    }

    private static func asset(type: String, bytes: [UInt8]) -> Asset {
        let served = type.hasPrefix("text/javascript") || type.hasPrefix("text/css") ? withoutCommentLines(bytes) : bytes
        let plain = ByteBuffer(bytes: served)
        var input = plain
        let gzipped = try? input.compress(with: .gzip())
        return Asset(contentType: type, plain: plain,
                     gzipped: gzipped.flatMap { $0.readableBytes < plain.readableBytes ? $0 : nil },
                     etag: "\"\(fingerprint(bytes))\"")
    }

    /// Every file the page is made of, with its type: the page, its style, its ES modules (one
    /// store, the rules that feed it, a module per view), and what installs it on a phone. The
    /// service worker is served beside them, not among them: it is not part of the shell it keeps.
    private static let embedded: [(String, String, [UInt8])] = [
        ("/", "text/html; charset=utf-8", PackageResources.index_html),
        ("/app.css", "text/css; charset=utf-8", PackageResources.app_css),
        ("/icon.svg", "image/svg+xml", PackageResources.icon_svg),
        ("/icon-192.png", "image/png", PackageResources.icon_192_png),
        ("/icon-512.png", "image/png", PackageResources.icon_512_png),
        ("/manifest.webmanifest", "application/manifest+json", PackageResources.manifest_webmanifest),
        ("/app.js", javaScript, PackageResources.app_js),
        ("/api.js", javaScript, PackageResources.api_js),
        ("/clock.js", javaScript, PackageResources.clock_js),
        ("/dom.js", javaScript, PackageResources.dom_js),
        ("/exposure.js", javaScript, PackageResources.exposure_js),
        ("/format.js", javaScript, PackageResources.format_js),
        ("/grammar.js", javaScript, PackageResources.grammar_js),
        ("/live.js", javaScript, PackageResources.live_js),
        ("/model.js", javaScript, PackageResources.model_js),
        ("/plan.js", javaScript, PackageResources.plan_js),
        ("/store.js", javaScript, PackageResources.store_js),
        ("/view-cameras.js", javaScript, PackageResources.view_cameras_js),
        ("/view-chrome.js", javaScript, PackageResources.view_chrome_js),
        ("/view-jobs.js", javaScript, PackageResources.view_jobs_js),
        ("/view-photo.js", javaScript, PackageResources.view_photo_js),
        ("/view-rig.js", javaScript, PackageResources.view_rig_js),
        ("/view-settings.js", javaScript, PackageResources.view_settings_js),
        ("/view-timelapse.js", javaScript, PackageResources.view_timelapse_js),
        ("/view-video.js", javaScript, PackageResources.view_video_js),
        ("/view-browser.js", javaScript, PackageResources.view_browser_js),
        ("/field.js", javaScript, PackageResources.field_js),
        ("/histogram.js", javaScript, PackageResources.histogram_js),
        ("/graph.js", javaScript, PackageResources.graph_js),
        ("/view-onboarding.js", javaScript, PackageResources.view_onboarding_js),
        ("/view-picture.js", javaScript, PackageResources.view_picture_js),
    ]

    private static let javaScript = "text/javascript; charset=utf-8"

    /// The page's total size as served gzip-compressed (or plain where that is smaller): what a
    /// phone downloads on its first visit.
    var compressedSize: Int { byPath.values.reduce(0) { $0 + ($1.gzipped ?? $1.plain).readableBytes } }

    /// The script or stylesheet without its lines of comment: a line that starts (after its
    /// indentation) with `//`, and a block from a line that starts with `/*` to the line that
    /// ends it with `*/`. The page's files are written for the people who read them, and about
    /// a fifth of what a phone downloads was those comments. Only whole lines go, so no code
    /// and no string is touched (the page has no string that spans lines); what follows a
    /// block's `*/` on its last line stays.
    static func withoutCommentLines(_ bytes: [UInt8]) -> [UInt8] {
        var kept: [Substring] = []
        var inBlock = false
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.drop(while: { $0 == " " || $0 == "\t" })
            if inBlock || text.hasPrefix("/*") {
                guard let end = text.range(of: "*/") else {
                    inBlock = true
                    continue
                }
                inBlock = false
                let rest = text[end.upperBound...].drop(while: { $0 == " " })
                if !rest.isEmpty { kept.append(rest) }
                continue
            }
            if text.hasPrefix("//") { continue }
            kept.append(line)
        }
        return Array(kept.joined(separator: "\n").utf8)
    }

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
