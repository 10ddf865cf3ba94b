import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import UnleashedApp
import UnleashedKit

struct CamerasCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras",
        abstract: "List the cameras libgphoto2 finds, for --backend gphoto2.",
        discussion: """
            USB cameras are found by libgphoto2's auto-detection: the camera must be on, in its \
            PTP / PC-remote USB mode, and not held by another program (on desktops the gvfs \
            volume monitor often grabs it; see docs/usb-cameras.md). Cameras on the network are \
            not detected: name one with --port ptpip:HOST and it is opened and listed, as is a \
            camera named with --camera-model MODEL (on --port, else usb:). Prints \
            MODEL and PORT per camera; pass the port to other commands with --port. An empty \
            list is not an error (exit status 0).
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let (port, model) = (options.port, options.cameraModel)
        let listed = try await options.reporting { () async throws(CameraFailure) in
            try await CameraDetection.list(port: port, model: model)
        }
        options.emit(.array(listed.map { ["model": .string($0.model), "port": .string($0.port)] })) {
            listed.map { $0.model.padding(toLength: 32, withPad: " ", startingAt: 0) + " " + $0.port }.joined(separator: "\n")
        }
        if listed.isEmpty && !options.json {
            Output.note("No camera found. Check that it is on, in PTP/PC mode, and that no other program holds it "
                + "(docs/usb-cameras.md).")
        }
    }
}
