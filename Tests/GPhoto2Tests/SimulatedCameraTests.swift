import CameraKit
import Foundation
import GPhoto2
import PTPIPCamera
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// libgphoto2 remembers the last camera in `$HOME/.gphoto/settings`; tests must not read or
/// write the user's. `HOME` is process-wide, so it is set once, before the first libgphoto2 call.
enum TestHome {
    static let path: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gphoto2-tests-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        setenv("HOME", path, 1)
        return path
    }()
}

/// The simulated PTP/IP camera and the backend opened on it through the real libgphoto2.
struct SimulatedCamera {
    let server: PTPIPCameraServer
    let camera: GPhoto2Camera

    static func start(cardCapacity: Int? = nil, faults: PTPIPFaultPlan = PTPIPFaultPlan(), downloads: DownloadPolicy? = nil,
                      timeScale: Double = 0.01, scene: SceneLight? = nil,
                      onEvent: @escaping @Sendable (PTPIPCameraEvent) -> Void = { _ in }) async throws -> SimulatedCamera {
        _ = TestHome.path
        let options = PTPIPCameraOptions(cardCapacity: cardCapacity, faults: faults, timeScale: timeScale, scene: scene, onEvent: onEvent)
        let server = try await PTPIPCameraServer.start(port: 0, options: options)
        do {
            let camera = try await GPhoto2Camera.open(port: "ptpip:127.0.0.1:\(server.port)", downloads: downloads)
            return SimulatedCamera(server: server, camera: camera)
        } catch {
            await server.stop()
            throw error
        }
    }

    func stop() async {
        await camera.close()
        await server.stop()
    }
}

func deviceKind(_ error: any Error) -> DeviceFailure.Kind? {
    guard case .device(let failure)? = error as? CameraError else { return nil }
    return failure.kind
}

func temporaryFolder() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("gphoto2-downloads-\(UUID().uuidString)").path
}

@Suite(.serialized, .timeLimit(.minutes(2)))
struct SimulatedCameraTests {
    @Test func opensAndReadsStatusAndTypedSettings() async throws {
        let sim = try await SimulatedCamera.start()
        let status = try await sim.camera.status()
        #expect(status.connection == .ready)
        #expect(status.shotCounter == 0)
        #expect(status.cameraBattery == 100)
        #expect(status.storage == .ok)
        #expect((status.shotsRemaining ?? 0) > 0)
        #expect(sim.camera.identity.cameraModel?.isEmpty == false)
        let settings = try await sim.camera.settings()
        let names = Set(settings.map(\.setting))
        #expect(names.isSuperset(of: [.iso, .shutterSpeed, .aperture]), "\(settings)")
        for descriptor in settings { #expect(!descriptor.choices.isEmpty, "\(descriptor.setting)") }
        #expect(sim.camera.identity.capabilities.contains(.shoot))
        #expect(sim.camera.port.hasPrefix("ptpip:127.0.0.1:"))
        await sim.stop()
    }

    @Test func setsISOAndReadsItBack() async throws {
        let sim = try await SimulatedCamera.start()
        let iso = try #require(try await sim.camera.settings().first { $0.setting == .iso })
        let other = try #require(iso.choices.last { $0 != iso.value })
        #expect(try await sim.camera.set(other) == other)
        #expect(try await sim.camera.value(of: .iso) == other)
        await sim.stop()
    }

    @Test func refusesAValueTheCameraDoesNotOffer() async throws {
        let sim = try await SimulatedCamera.start()
        let wanted = SettingValue.iso(try #require(ISOSpeed(3)))
        await #expect {
            _ = try await sim.camera.set(wanted)
        } throws: { error in
            guard case .valueNotOffered(let value, let nearest, let offered)? = error as? CameraError else { return false }
            return value == wanted && !nearest.isEmpty && !offered.isEmpty
        }
        await sim.stop()
    }

    @Test func shootsFiveFramesAndDownloadsThemNamedByFrame() async throws {
        let folder = temporaryFolder()
        let policy = DownloadPolicy(folder: folder, template: try FilenameTemplate(parsing: "%F.%C"))
        let sim = try await SimulatedCamera.start(downloads: policy)
        let events = await sim.camera.events()
        var latencies: [Duration] = []
        for frame in 11...15 {
            let shot = try await CaptureContext.$frame.withValue(frame) { try await sim.camera.shoot() }
            #expect(shot.counter == frame - 10)
            latencies.append(shot.latency)
        }
        await sim.camera.close()
        var saved: [SavedFile] = []
        for await event in events {
            if case .fileSaved(let file) = event { saved.append(file) }
            if case .fileNotSaved(let path, let reason) = event { Issue.record("not saved: \(path): \(reason)") }
        }
        #expect(saved.map(\.frame) == [11, 12, 13, 14, 15])
        let onCamera = await sim.server.files()
        #expect(onCamera.count == 5)
        for (file, original) in zip(saved, onCamera) {
            #expect((file.path as NSString).lastPathComponent == String(format: "%04d.jpg", file.frame ?? 0))
            #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == Data(original.bytes))
        }
        #expect(await sim.server.stats().sessionsOpened == 1)
        print("shoot latency against the simulator:", latencies.map { $0.formatted(.units(allowed: [.milliseconds])) })
        await sim.server.stop()
    }

    @Test func keepsOneSessionOverManyOperations() async throws {
        let sim = try await SimulatedCamera.start()
        for _ in 0..<3 {
            _ = try await sim.camera.status()
            _ = try await sim.camera.settings()
            _ = try await sim.camera.shoot()
            _ = try await sim.camera.widgets()
        }
        #expect(await sim.server.stats().sessionsOpened == 1)
        await sim.stop()
    }

    @Test func aFullCardIsReportedAsSuch() async throws {
        let sim = try await SimulatedCamera.start(cardCapacity: 2)
        _ = try await sim.camera.shoot()
        _ = try await sim.camera.shoot()
        await #expect { _ = try await sim.camera.shoot() } throws: { deviceKind($0) == .cardFull }
        await sim.stop()
    }

    @Test func anUnpluggedCameraIsReportedGoneAndPickedUpWhenBack() async throws {
        let sim = try await SimulatedCamera.start()
        let events = await sim.camera.events()
        _ = try await sim.camera.shoot()
        await sim.server.unplug()
        await #expect { _ = try await sim.camera.status() } throws: { deviceKind($0) == .disconnected }
        #expect(await sim.camera.isReady == false)
        await #expect { _ = try await sim.camera.shoot() } throws: { deviceKind($0) == .disconnected }
        await sim.server.replug()
        #expect(await sim.camera.isReady, "asking is what reopens the camera before a run's next slot")
        let shot = try await sim.camera.shoot()
        #expect(shot.counter == 2)
        #expect(await sim.server.stats().sessionsOpened == 2)
        await sim.stop()
        var states: [ConnectionState] = []
        for await event in events { if case .connection(let state) = event { states.append(state) } }
        #expect(states.first == .reconnecting(attempt: 1, nextDelay: .zero))
        #expect(states.contains(.ready))
    }

    @Test func readsAndSetsAControlByPath() async throws {
        let sim = try await SimulatedCamera.start()
        let widgets = try await sim.camera.widgets()
        let iso = try #require(widgets.first { $0.name == "iso" })
        #expect(iso.path.hasPrefix("/main/"))
        #expect(try await sim.camera.widget(iso.path) == iso)
        let choice = try #require(iso.choices.first { $0 != iso.value })
        let written = try await sim.camera.setWidget(iso.path, to: choice)
        #expect(written.value == choice)
        await #expect { _ = try await sim.camera.widget("/main/nosuch") } throws: { error in
            if case .invalidArgument? = error as? CameraError { return true }
            return false
        }
        await sim.stop()
    }

    @Test func aCameraThatStaysBusyIsReportedAsBusy() async throws {
        let sim = try await SimulatedCamera.start(faults: PTPIPFaultPlan(busy: 1))
        await #expect { _ = try await sim.camera.shoot() } throws: { deviceKind($0) == .busy }
        #expect(await sim.camera.isReady)
        await sim.stop()
    }

    @Test func aBusyTriggerIsSentAgain() async throws {
        let sim = try await SimulatedCamera.start(faults: PTPIPFaultPlan(busy: 0.5))
        for expected in 1...6 { #expect(try await sim.camera.shoot().counter == expected) }
        #expect(await sim.server.stats().refusedBusy > 0)
        await sim.stop()
    }

    @Test func operationsTheCameraLacksSaySo() async throws {
        let sim = try await SimulatedCamera.start()
        await #expect { _ = try await sim.camera.focus(hold: false) } throws: { deviceKind($0) == .unsupported }
        await #expect {
            try await sim.camera.geotag(GeoPosition(latitude: 1, longitude: 2, fixTime: 0))
        } throws: { deviceKind($0) == .unsupported }
        #expect(!sim.camera.identity.capabilities.contains(.focus))
        await sim.stop()
    }

    @Test func videoThroughTheMovieControl() async throws {
        let sim = try await SimulatedCamera.start()
        #expect(sim.camera.identity.capabilities.contains(.video), "the simulated camera offers open capture, libgphoto2's 'movie'")
        try await sim.camera.startVideo()
        let length = try await sim.camera.stopVideo()
        // The length runs from the start's answer to the stop's: both went through the camera.
        #expect(length > .zero)
        await sim.stop()
    }

    @Test func setsTheCameraClock() async throws {
        let sim = try await SimulatedCamera.start()
        let now = UInt64(Date().timeIntervalSince1970) * 1000
        try await sim.camera.setTime(WallTime(unixMilliseconds: now, utcOffsetMinutes: 0))
        let clock = try await sim.camera.widget("datetime")
        let seconds = try #require(clock.value.flatMap { Int($0) })
        #expect(abs(seconds - Int(now / 1000)) <= 2)
        await sim.stop()
    }

    @Test func bulbOnACameraThatRefusesItSaysSo() async throws {
        let sim = try await SimulatedCamera.start()
        await #expect { _ = try await sim.camera.bulb(.milliseconds(200)) } throws: { error in
            guard case .device(let failure)? = error as? CameraError else { return false }
            return failure.kind == .unsupported && failure.message.hasPrefix("bulb exposures are not supported by this camera")
        }
        _ = try await sim.camera.shoot()
        await sim.stop()
    }

    @Test func deletesFromTheCameraOnlyAfterSaving() async throws {
        let folder = temporaryFolder()
        let sim = try await SimulatedCamera.start(downloads: DownloadPolicy(folder: folder, deleteFromCamera: true))
        let taken = [try await sim.camera.shoot(), try await sim.camera.shoot()]
        #expect(taken.map(\.counter) == [1, 2])
        await sim.camera.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 2)
        #expect(await sim.server.files().isEmpty)
        await sim.server.stop()
    }

    @Test func everyPictureIsAccountedForWhenTheCameraGoesAwayBeforeClosing() async throws {
        let folder = temporaryFolder()
        let sim = try await SimulatedCamera.start(downloads: DownloadPolicy(folder: folder))
        let events = await sim.camera.events()
        for _ in 0..<3 { _ = try await sim.camera.shoot() }
        await sim.server.unplug()
        await sim.camera.close()
        var saved: [String] = [], notSaved: [String] = []
        for await event in events {
            if case .fileSaved(let file) = event { saved.append(file.cameraPath) }
            if case .fileNotSaved(let path, _) = event { notSaved.append(path) }
        }
        #expect(saved.count + notSaved.count == 3)
        #expect(Set(saved).isDisjoint(with: notSaved))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).count == saved.count)
        await sim.server.stop()
    }

    @Test func aShotOnAnUnpluggedCameraReportsItGone() async throws {
        let sim = try await SimulatedCamera.start()
        _ = try await sim.camera.shoot()
        await sim.server.unplug()
        await #expect { _ = try await sim.camera.shoot() } throws: { error in
            guard case .device(let failure)? = error as? CameraError else { return false }
            return failure.kind == .disconnected && failure.message.hasPrefix("the camera is gone")
        }
        await sim.server.replug()
        #expect(try await sim.camera.shoot().counter == 2)
        await sim.stop()
    }
}
