import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import UnleashedApp
import UnleashedKit

/// Prints the pictures a camera copies to this computer as they arrive, until its event stream
/// ends (the camera closed, every download done).
struct SavedFileReport {
    /// Whether each file gets a line of text; JSON always gets one line per file.
    enum TextLines {
        case eachFile
        /// One line at the end with the count (a time-lapse's live display owns the terminal).
        case summary
    }

    private let listening: Task<Void, Never>

    init(_ events: AsyncStream<CameraEvent>, options: GlobalOptions, text: TextLines) {
        listening = Task {
            var saved = 0
            var folder: String?
            for await event in events {
                switch event {
                case .fileSaved(let file):
                    saved += 1
                    folder = folder ?? URL(fileURLWithPath: file.path).deletingLastPathComponent().path
                    if options.json {
                        Output.line(Output.json(["saved": .object(file.json)]))
                    } else if text == .eachFile {
                        Output.line("Saved \(file.path) (\(file.bytes) bytes)")
                    }
                case .fileNotSaved(let cameraPath, let reason):
                    if options.json {
                        Output.line(Output.json(["notSaved": ["cameraPath": .string(cameraPath), "reason": .string(reason)]]))
                    } else {
                        Output.note("warning: could not save \(cameraPath) (\(reason)); it is still on the camera")
                    }
                default:
                    continue
                }
            }
            if !options.json, text == .summary, saved > 0, let folder {
                Output.line("\(saved) picture\(saved == 1 ? "" : "s") saved in \(folder)")
            }
        }
    }

    /// Returns once every file has been reported.
    func done() async { await listening.value }
}

struct CamerasCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras",
        abstract: "List the cameras libgphoto2 finds, for --backend gphoto2.",
        discussion: """
            USB cameras are found by libgphoto2's auto-detection: the camera must be on, in its \
            PTP / PC-remote USB mode, and not held by another program (on desktops the gvfs \
            volume monitor often grabs it; see docs/usb-cameras.md). Cameras on the network are \
            not detected: name one with --port ptpip:HOST and it is opened and listed. Prints \
            MODEL and PORT per camera; pass the port to other commands with --port. An empty \
            list is not an error (exit status 0).
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let port = options.port
        let listed = try await options.reporting { () async throws(CameraFailure) in try await CameraDetection.list(port: port) }
        options.emit(.array(listed.map { ["model": .string($0.model), "port": .string($0.port)] })) {
            listed.map { $0.model.padding(toLength: 32, withPad: " ", startingAt: 0) + " " + $0.port }.joined(separator: "\n")
        }
        if listed.isEmpty && !options.json {
            Output.note("No camera found. Check that it is on, in PTP/PC mode, and that no other program holds it "
                + "(docs/usb-cameras.md).")
        }
    }
}
