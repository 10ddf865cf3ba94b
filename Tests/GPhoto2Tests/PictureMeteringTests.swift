import CameraKit
import Foundation
@testable import GPhoto2
import Intervalometer
@testable import PTPIPCamera
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// The libgphoto2 backend meters by its pictures: each thumbnail, read through the real
/// libgphoto2 from the simulated PTP/IP camera, against the settings it was taken at.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PictureMeteringTests {
    @Test("a picture's thumbnail gives the scene's EV, whatever exposure it was taken at")
    func metersTheSceneFromThumbnails() async throws {
        let sim = try await SimulatedCamera.start(scene: .constant(ExposureStops(twentyFourths: 9 * 24)))
        #expect(sim.camera.identity.capabilities.contains(.meteredEV))
        #expect(await sim.camera.lastMeteredEV == nil, "no picture yet, so no reading")
        // EV 9 at f/8, ISO 100 is 1/8 s; two stops either side stays on the picture.
        for text in ["1/30", "1/8", "1/2"] {
            let speed = try #require(ShutterSpeed(text: text))
            _ = try await sim.camera.set(.shutterSpeed(speed))
            _ = try await sim.camera.shoot()
            let reading = try #require(await sim.camera.lastMeteredEV)
            #expect(abs(reading.stops - 9) < 0.2, "at \(text): \(reading.stops)")
            #expect(try await sim.camera.status().meteredEV == reading)
        }
        await sim.stop()
    }

    @Test("a picture deleted after its download is metered first")
    func metersBeforeDeleting() async throws {
        let policy = DownloadPolicy(folder: temporaryFolder(), deleteFromCamera: true)
        let sim = try await SimulatedCamera.start(downloads: policy, scene: .constant(ExposureStops(twentyFourths: 11 * 24)))
        _ = await sim.camera.lastMeteredEV
        _ = try await sim.camera.shoot()
        #expect(await sim.camera.settle() == 1)
        #expect(await sim.server.files().isEmpty, "the picture left the camera")
        let reading = try #require(await sim.camera.lastMeteredEV)
        #expect(abs(reading.stops - 11) < 0.2, "\(reading.stops)")
        await sim.stop()
    }

    @Test("the meter reads the median, not the mean, and says nothing of what is not a JPEG")
    func meterReadsTheMedian() throws {
        // Three stops under, with a white band along the bottom (frame 65535: every block lit)
        // that would pull a mean up by more than a stop.
        let picture = try #require(FrameRenderer.jpeg(frameNumber: 65535, exposureStops: -3))
        let stops = try #require(PictureMeter.brightness(jpeg: Data(picture)))
        #expect(abs(stops - -3) < 0.2, "\(stops)")
        #expect(PictureMeter.brightness(jpeg: Data("not a picture".utf8)) == nil)
        #expect(PictureMeter.brightness(jpeg: Data()) == nil)
    }

    /// A run started from a far wrong exposure: its first pictures are blown out or nearly black,
    /// whose readings only bound the light.
    @Test("a ramp that starts from a clipped picture finds the light within a few frames", arguments: [
        (12, "1s"),  // six stops over: blown out
        (6, "1/8000"),  // thirteen stops under: nearly black
    ])
    func startsFromAClippedPicture(_ start: (sceneEV: Int32, shutter: String)) async throws {
        let clock = RunClock()
        let brightness = Mutex<[Double]>([])
        let sim = try await SimulatedCamera.start(timeScale: 0.001, scene: .constant(ExposureStops(twentyFourths: start.sceneEV * 24))) { event in
            if case .capture(_, _, let stops) = event { brightness.withLock { $0.append(stops) } }
        }
        _ = try await sim.camera.set(.shutterSpeed(try #require(ShutterSpeed(text: start.shutter))))
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(20), exposure: .ramp(plan: RampPlan(maxISO: 6400, apertures: ["f/8"], gapMs: 2000)))
        let run = Timelapse(plan: plan, camera: sim.camera, journal: MemoryJournal(), clock: clock, wallClock: { 1_700_000_000_000 })
        let ending = try await clock.flowing { try await run.start(cameraName: "ptpip") }
        await sim.stop()
        #expect(ending.state == .finished, "\(ending.reason)")
        let pictures = brightness.withLock { $0 }
        #expect(pictures.count == 20)
        let firstReadable = pictures.firstIndex { $0 > -5 && $0 < 2.5 } ?? pictures.count
        #expect(firstReadable <= 5, "readable from frame \(firstReadable + 1): \(pictures.prefix(8))")
        #expect(pictures.dropFirst(firstReadable).allSatisfy { $0 > -5 && $0 < 2.5 }, "\(pictures)")
        #expect(abs((pictures.last ?? 9) - (start.sceneEV >= 10 ? 0 : -1.3 * Double(10 - start.sceneEV) / 12)) < 0.3,
                "settled at the brightness wanted: \(pictures.suffix(3))")
    }

    /// An hour and a half of a December sunset at 52.5° N, a frame every 10 s on the test clock;
    /// the scene follows the run's clock, the pictures and their thumbnails go through libgphoto2.
    /// The camera starts on auto ISO, whose pictures say nothing of the light.
    @Test("a ramped run over libgphoto2 follows a sunset by the pictures' thumbnails")
    func rampedRunOverLibgphoto2() async throws {
        let clock = RunClock()
        let origin = clock.now
        let unix = try #require(ISO8601DateFormatter().date(from: "2026-12-21T14:15:00Z")).timeIntervalSince1970
        let sky = Daylight(latitude: 52.5, longitude: 13.4, startUnixSeconds: unix)
        let scene = SceneLight { _ in
            ExposureStops(twentyFourths: Int32((sky.ev(at: origin.duration(to: clock.now)) * 24).rounded()))
        }
        let brightness = Mutex<[Double]>([])
        let sim = try await SimulatedCamera.start(timeScale: 0.001, scene: scene) { event in
            if case .capture(_, _, let stops) = event { brightness.withLock { $0.append(stops) } }
        }
        // Auto ISO leaves a picture's exposure unknown: the metering frame sets the lowest ISO first.
        #expect(try await sim.camera.set(.iso(.auto)) == .iso(.auto))
        let frameCount = 541
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(frameCount),
                           exposure: .ramp(plan: RampPlan(maxISO: 6400, apertures: ["f/2.8"], gapMs: 2000)))
        let run = Timelapse(plan: plan, camera: sim.camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
        let ending = try await clock.flowing { try await run.start(cameraName: "ptpip") }
        await sim.stop()
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.count == frameCount && frames.allSatisfy { $0.outcome == .taken },
                "\(frames.filter { $0.outcome != .taken }.prefix(3))")
        #expect(frames.first?.exposure == "a metering frame at the camera's settings with ISO 100" && frames.first?.ramp == nil,
                "the first picture, at the camera's settings, gives the first reading: \(frames.first?.exposure ?? "none")")
        let ramps = frames.dropFirst().compactMap(\.ramp)
        #expect(ramps.count == frameCount - 1, "every later frame carries what the ramp decided")
        let pictures = brightness.withLock { $0 }
        #expect(pictures.count == frameCount)
        for (index, stops) in pictures.enumerated() {
            #expect(stops > -5 && stops < 2.5, "frame \(index + 1) came out \(stops) stops from mid-grey")
        }
        // The first ramped frame corrects the metering frame; from then on the light moves smoothly.
        for (index, (before, after)) in zip(pictures.dropFirst(2), pictures.dropFirst(3)).enumerated() {
            #expect(abs(after - before) <= 1.0 / 3 + 0.05, "a jump of \(after - before) at frame \(index + 4): \(frames[index + 2].exposure ?? "") \(before) -> \(frames[index + 3].exposure ?? "") \(after) \(String(describing: frames[index + 3].ramp))")
        }
        let evs = ramps.map(\.targetEV)
        #expect((evs.first ?? 0) - (evs.last ?? 0) > 8, "the exposure followed the light down: \(evs.first ?? 0) to \(evs.last ?? 0)")
        for (index, ramp) in ramps.enumerated() {
            // The reading comes from the picture before, taken one interval earlier.
            let truth = sky.ev(at: .seconds(10 * index))
            #expect(abs(ramp.sceneEV - truth) < 0.5, "frame \(index + 2): read \(ramp.sceneEV), the sky was \(truth)")
        }
        for frame in frames.dropFirst() {
            // "SHUTTER ISO N f/N", as the ramp records it.
            let parts = (frame.exposure ?? "").split(separator: " ").map(String.init)
            let shutter = try #require(parts.first.flatMap(ShutterSpeed.init(text:)), "\(frame.exposure ?? "none")")
            let iso = try #require(parts.count == 4 ? ISOSpeed(text: parts[2]) : nil, "\(frame.exposure ?? "none")")
            #expect(shutter.seconds <= 8 && iso.rawValue <= 6400 && parts[3] == "f/2.8", "\(frame.exposure ?? "none")")
        }
    }
}
