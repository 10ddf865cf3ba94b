import Foundation
import Testing
import UnleashedTestSupport

/// libgphoto2's own virtual camera: a PTP camera simulated inside libgphoto2's vusb port driver,
/// in a libgphoto2 built from Debian's source with it (`scripts/build-libgphoto2-vcamera`, which
/// `make check-long` runs first). Someone else's simulator of a USB camera, where the other
/// tethered tests drive this project's PTP/IP simulator.
///
/// The vusb driver answers for the `usb:` ports and finds no device by USB ids on them, so
/// libgphoto2 detects nothing there: the camera is reached only by naming its model, which is
/// what `--camera-model` is for. A model whose USB ids are 0 (the generic "USB PTP Class
/// Camera") matches the ids vusb reads for a `usb:` port (vusb.c, `gp_port_vusb_find_device_lib`).
///
/// The suite runs when `UNLEASHED_VCAMERA` names that build's folder (`make check-long` sets
/// it); without a finished build there, it fails rather than pass without having run.
@Suite("unleashed over libgphoto2's virtual camera (vusb)", .serialized, .timeLimit(.minutes(5)),
       .enabled(if: VirtualCamera.folder != nil, "UNLEASHED_VCAMERA is not set: make check-long runs this suite"))
struct VirtualCameraTests {
    @Test("a camera libgphoto2 does not detect is opened by its model: status names it")
    func status() async throws {
        let camera = try VirtualCamera()
        let detected = try await camera.run(["--backend", "gphoto2", "cameras", "--json"])
        #expect(detected.status == 0, "\(detected.stderr)")
        #expect(detected.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "vusb is not detected: \(detected.stdout)")

        let result = try await camera.unleashed("status", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let body = try #require(result.json?["camera"] as? [String: Any], "\(result.stdout)")
        #expect(body["model"] as? String == "VC", "the model the virtual camera reports (vcamera.c): \(body)")
        #expect(body["battery"] is Int, "\(body)")

        let listed = try await camera.unleashed("cameras", "--json")
        #expect(listed.status == 0, "\(listed.stderr)")
        let cameras = listed.stdout.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [[String: Any]]
        #expect(cameras?.count == 1 && cameras?.first?["port"] as? String == "usb:", "the named model is opened and listed: \(listed.stdout)")
    }

    @Test("settings list shows what the virtual camera offers, and a setting is changed")
    func settings() async throws {
        let camera = try VirtualCamera()
        let list = try await camera.unleashed("settings", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        let listed = try #require(list.stdout.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [[String: Any]],
                                  "\(list.stdout)")
        let names = Set(listed.compactMap { $0["setting"] as? String })
        #expect(names.isSuperset(of: ["aperture", "exposure-compensation"]), "\(names)")

        let set = try await camera.unleashed("settings", "set", "aperture", "f/4")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "aperture set to f/4\n", "\(set.stdout)")

        let all = try await camera.unleashed("settings", "list", "--all")
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.contains("/main/"), "\(all.stdout)")
    }

    @Test("a shot is downloaded to a folder: the virtual camera's copy of its first JPEG")
    func shootAndDownload() async throws {
        let camera = try VirtualCamera()
        let folder = camera.directory.appendingPathComponent("pictures")
        let result = try await camera.unleashed("--download", folder.path, "shoot", "--json")
        #expect(result.status == 0, "\(result.stderr)\(result.stdout)")
        let downloaded = try result.savedPicture()
        #expect(try camera.pictures().contains(downloaded), "the camera's capture is a copy of one of its pictures")
    }

    @Test("a short time-lapse takes and downloads every frame")
    func timelapse() async throws {
        let camera = try VirtualCamera()
        let folder = camera.directory.appendingPathComponent("frames")
        let run = try await camera.unleashed("--download", folder.path, "--filename", "tl_%F.%C", "timelapse",
                                             "--interval", "2s", "--frames", "3", "--overrun", "defer", "--json")
        #expect(run.status == 0, "\(run.stderr)\(run.stdout)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0["outcome"] as? String == "taken" }, "\(frames)\n\(run.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == (1...3).map { String(format: "tl_%04d.jpg", $0) }, "\(names)")
    }

    @Test("a model libgphoto2 does not know is refused with the closest it knows, as text and as JSON")
    func unknownModel() async throws {
        let camera = try VirtualCamera(model: "Nikon D750")
        let text = try await camera.unleashed("status")
        #expect(text.status == 64, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.contains("knows no camera model 'Nikon D750'"), "\(text.stderr)")
        #expect(text.stderr.contains("'Nikon DSC D750'"), "\(text.stderr)")
        let json = try await camera.unleashed("status", "--json")
        #expect(json.status == 64)
        let error = try #require(json.json?["error"] as? [String: Any], "\(json.stdout)")
        #expect(error["code"] as? String == "invalidArgument", "\(error)")
    }
}

/// libgphoto2 built with its virtual camera (.build/libgphoto2-vcamera), and the environment
/// that makes `unleashed` load it instead of the system's: LD_LIBRARY_PATH, CAMLIBS and IOLIBS
/// as the build script wrote them, its own HOME (libgphoto2 keeps its settings there).
final class VirtualCamera: Sendable {
    /// The build's folder, from `UNLEASHED_VCAMERA` (relative to the repository).
    static var folder: URL? {
        guard let path = ProcessInfo.processInfo.environment["UNLEASHED_VCAMERA"], !path.isEmpty else { return nil }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : repository.appendingPathComponent(path)
    }

    let directory: URL
    let model: String
    private let libraries: [String: String]
    private let pictureFolder: URL

    init(model: String = "USB PTP Class Camera") throws {
        let folder = try #require(Self.folder)
        let environmentFile = folder.appendingPathComponent("environment")
        let pictures = folder.appendingPathComponent("install/.pictures")
        guard let written = try? String(contentsOf: environmentFile, encoding: .utf8),
              let picturePath = try? String(contentsOf: pictures, encoding: .utf8) else {
            throw FixtureError("no finished libgphoto2 build with its virtual camera in \(folder.path) "
                + "(no environment or install/.pictures there): run scripts/build-libgphoto2-vcamera")
        }
        libraries = Dictionary(written.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        }, uniquingKeysWith: { $1 })
        pictureFolder = URL(fileURLWithPath: picturePath.trimmingCharacters(in: .whitespacesAndNewlines))
        self.model = model
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-vcamera-\(UUID())")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The JPEGs the virtual camera shows, as the build script put them in its folder.
    func pictures() throws -> [Data] {
        let dcim = pictureFolder.appendingPathComponent("DCIM/100VCAM")
        return try FileManager.default.contentsOfDirectory(atPath: dcim.path).map { try Data(contentsOf: dcim.appendingPathComponent($0)) }
    }

    var environment: [String: String] {
        tetheredCommandEnvironment(in: directory).merging(libraries) { _, library in library }
    }

    /// Runs `unleashed --backend gphoto2 --camera-model MODEL ARGUMENTS` (the port left to be usb:).
    func unleashed(_ arguments: String...) async throws -> CommandResult {
        try await run(["--backend", "gphoto2", "--camera-model", model] + arguments)
    }

    /// Runs `unleashed ARGUMENTS` with the virtual camera's libgphoto2.
    func run(_ arguments: [String]) async throws -> CommandResult {
        try await runProgram(Built.unleashed, arguments, environment: environment)
    }
}
