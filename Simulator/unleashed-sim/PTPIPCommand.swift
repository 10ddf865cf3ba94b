import ArgumentParser
import CameraKit
import ProcessSignals
import Foundation
import PTPIPCamera
import UnleashedKit
import UnleashedSimulator

/// `unleashed-sim ptpip`: a simulated tethered camera speaking PTP/IP, for libgphoto2's `ptpip:` port.
struct PTPIPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ptpip",
        abstract: "Serves a simulated camera over PTP/IP, the protocol libgphoto2's ptpip: port speaks.",
        discussion: """
            A simulation, not a real camera: standard PTP operations, ISO, shutter speed, aperture, exposure \
            compensation, white balance, battery level and date/time as device properties, captures that store \
            small JPEGs (each its own thumbnail) on a card that fills, and movies (open capture) stored as small \
            Motion JPEG AVIs. A picture is as bright as the scene and the settings make it: a constant scene, or \
            with --sky the light of a clear sky at a place, which exposure ramps meter from the thumbnails.

            Prints {"listening":"HOST:PORT"} on stdout once it accepts connections, then one JSON object per \
            line for each connection, session, capture, download and refusal. Logs to stderr and runs until \
            SIGTERM or SIGINT. libgphoto2 sends the event connection to port 15740 unless told otherwise, so \
            name the port twice when it is not 15740:

              unleashed-sim ptpip --port 5000 &
              gphoto2 --camera "PTP/IP Camera" --port ptpip:127.0.0.1:5000:5000 --summary

            Fault plan items (comma-separated): busy=PROBABILITY (InitiateCapture and SetDevicePropValue \
            answer DeviceBusy), unplug=DURATION@AFTER (the camera disappears for DURATION, AFTER the start; \
            may repeat). Durations: 250ms, 3s, 1m.
            """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port (0: any free port, printed on the first line).")
    var port = 15740

    @Option(help: ArgumentHelp("The camera body: \(CameraProfile.all.map(\.id).joined(separator: ", ")).", valueName: "id"))
    var profile = CameraProfile.all[0].id

    @Option(help: "Makes the busy fault repeatable.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Pictures the card holds. Default: the profile's.", valueName: "n"))
    var cardCapacity: Int?

    @Option(help: ArgumentHelp("Also write every captured picture into this directory.", valueName: "dir"))
    var card: String?

    @Option(help: ArgumentHelp("What goes wrong, and when (see below). Default: nothing.", valueName: "plan"), transform: Self.faultPlan)
    var faults = PTPIPFaultPlan()

    @Option(help: ArgumentHelp("Multiplies shutter lag, exposure and write times (0.01: a hundred times faster).", valueName: "x"))
    var timeScale = 1.0

    // Read unconditionally: a place in the southern or western hemisphere starts with a minus.
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Pictures follow a clear sky at this place, from now or the given moment: LAT,LON[,TIME], e.g. "
            + "52.5,13.4,2026-06-21T19:00:00Z. Default: a constant scene. For trying --ramp auto over libgphoto2.",
        valueName: "place"), transform: Self.sky)
    var sky: Daylight?

    static func sky(_ text: String) throws -> Daylight {
        do {
            return try Daylight(parsing: text)
        } catch {
            throw ValidationError("--sky: \(error)")
        }
    }

    static func faultPlan(_ text: String) throws -> PTPIPFaultPlan {
        do {
            return try PTPIPFaultPlan(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        guard CameraProfile.named(profile) != nil else {
            throw ValidationError("no camera profile '\(profile)'; there are: \(CameraProfile.all.map(\.id).joined(separator: ", "))")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard cardCapacity.map({ $0 >= 0 }) ?? true else { throw ValidationError("--card-capacity must not be negative") }
        guard timeScale >= 0, timeScale.isFinite else { throw ValidationError("--time-scale must be 0 or more") }
    }

    func run() async throws {
        let log: @Sendable (String) -> Void = { line in
            FileHandle.standardError.write(Data("unleashed-sim: \(line)\n".utf8))
        }
        let cardDirectory = card.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let cardDirectory {
            try FileManager.default.createDirectory(at: cardDirectory, withIntermediateDirectories: true)
        }
        let options = PTPIPCameraOptions(
            profile: CameraProfile.named(profile) ?? CameraProfile.all[0], seed: seed, cardCapacity: cardCapacity, faults: faults,
            timeScale: timeScale, scene: sky?.sceneLight, log: log,
            onEvent: { event in
                if case .capture(let file, let bytes, _) = event, let cardDirectory {
                    do {
                        try Data(bytes).write(to: cardDirectory.appendingPathComponent(file))
                    } catch {
                        log("cannot write \(file) to \(cardDirectory.path): \(error)")
                    }
                }
                Self.printLine(event.jsonLine)
            })
        let server: PTPIPCameraServer
        do {
            server = try await PTPIPCameraServer.start(host: host, port: port, options: options)
        } catch {
            log("cannot listen on \(host):\(port): \(error)")
            throw ExitCode(EX_UNAVAILABLE)
        }
        let (stopRequests, stopRequested) = AsyncStream<Void>.makeStream()
        // Watched before the line that says the camera listens: a SIGTERM sent as soon as it is
        // read (a test done with the camera at once) is never ignored and lost.
        let signals = SignalWatch([SIGTERM: { stopRequested.yield() }, SIGINT: { stopRequested.yield() }])
        defer { signals.disarm() }
        Self.printLine(#"{"listening":"\#(host):\#(server.port)"}"#)
        for await _ in stopRequests { break }
        await server.stop()
        log("stopped")
    }

    /// Written unbuffered: whoever started the simulator reads the lines as they come.
    private static func printLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

}
