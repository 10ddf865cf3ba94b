import CameraKit
import CameraProtocols
import CameraRemote
import Foundation
import Intervalometer
import SimulatedCameras
import Testing
import UnleashedTestSupport
import UnleashedKit

/// The GoPro driver against the simulated GoPro, in memory, on short timings. Limits on waits
/// are generous (a loaded machine can starve the tests for seconds); only failures reach them.
@Suite(.serialized) struct GoProDriverTests {
    static let fastBody = GoProBody.Timing(boot: .milliseconds(60), capture: .milliseconds(15), autoPowerDown: .seconds(5))
    static let fastDriver = GoProDriver(keepAliveInterval: .seconds(1), pollInterval: .milliseconds(5), captureTimeout: .seconds(2))
    static let policy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), jitter: 0)
    static let timing = RemoteTiming(scanTimeout: .milliseconds(200), stepTimeout: .seconds(3), handshakeTimeout: .seconds(20))

    static func open(_ body: GoProBody, driver: GoProDriver = fastDriver) async throws -> BLECamera {
        try await BLECamera.open(name: "GoPro 0001", provider: InMemoryCameraProvider(body: body), driver: driver,
                                    policy: policy, timing: timing, readyTimeout: .seconds(30))
    }

    static func shutters(_ body: GoProBody) async -> Int {
        await body.requests.filter { if case .setShutter(true) = $0 { true } else { false } }.count
    }

    @Test("connecting polls Get Hardware Info until the camera has booted, claims control and names the model")
    func handshake() async throws {
        let body = GoProBody(timing: GoProBody.Timing(boot: .seconds(3600), capture: .milliseconds(15)))
        await body.sleep()
        await body.wake()
        let opening = Task { try await Self.open(body) }
        _ = await eventually(every: .milliseconds(5)) { await body.requests.count >= 3 }
        #expect(await body.requests.allSatisfy { $0 == .getHardwareInfo }, "nothing but the readiness check while the camera boots")
        await body.finishBooting()
        let camera = try await opening.value
        defer { Task { await camera.close() } }
        #expect(camera.identity.cameraModel == "HERO12 Black")
        #expect(camera.identity.capabilities == [.shoot, .video, .setTime])
        let requests = await body.requests
        #expect(requests.filter { $0 == .getHardwareInfo }.count >= 3)
        #expect(await body.control == .externalControl)
        #expect(requests.contains(.pairingFinished(clientName: "unleashed")))
        #expect(await body.pairedClientName == "unleashed", "the camera left its pairing screen")
        #expect(requests.contains(.registerStatusUpdates([.busy, .encoding, .batteryPercent, .presetGroup])))
        let claim = try #require(requests.firstIndex(of: .setCameraControl(.externalControl)))
        #expect(requests[..<claim].allSatisfy { $0 == .getHardwareInfo }, "nothing is sent before the camera is ready")
    }

    @Test("a shot waits for the camera to go busy and encoding and back; the picture is counted by then")
    func shoot() async throws {
        let body = GoProBody(presetGroup: .video, timing: GoProBody.Timing(boot: .zero, capture: .milliseconds(80)))
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        let shot = try await camera.shoot()
        // The body counts a picture at its capture's end (80 ms after the press): counted already
        // when the shot returns, or the shot returned before the capture ended.
        #expect(await body.picturesTaken == 1, "returned before the capture ended")
        #expect(shot.counter == 1)
        #expect(await body.presetGroup == .photo, "a shot in the video group switches to photos first")
        let (videos, recording) = (await body.videosRecorded, await body.recording)
        #expect(videos == 0 && !recording)
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 2)
    }

    @Test("video loads the video presets, records until stopped, and waits for the file to be written")
    func video() async throws {
        let body = GoProBody(timing: Self.fastBody)
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        try await camera.startVideo()
        #expect(await body.presetGroup == .video)
        let (recording, encoding) = (await body.recording, await body.encoding)
        #expect(recording && encoding)
        await #expect(throws: CameraError.self) { try await camera.shoot() }
        #expect(await Self.shutters(body) == 1, "a shot while recording is refused before the shutter")
        _ = try await camera.stopVideo()
        #expect(await body.videosRecorded == 1)
        let (stillRecording, busy) = (await body.recording, await body.busy)
        #expect(!stillRecording && !busy)
        #expect(await body.picturesTaken == 0)
    }

    @Test("time sync sets the camera's local date and time: the instant moved by its UTC offset")
    func setTime() async throws {
        let body = GoProBody(timing: Self.fastBody)
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        // 2023-01-31T03:04:05Z
        try await camera.setTime(WallTime(unixMilliseconds: 1_675_134_245_000, utcOffsetMinutes: 90))
        #expect(await body.dateTime == (try GoPro.DateTime(year: 2023, month: 1, day: 31, hour: 4, minute: 34, second: 5)))
        #expect(try GoProDriver.localDateTime(WallTime(unixMilliseconds: 1_675_134_245_000, utcOffsetMinutes: -240))
            == GoPro.DateTime(year: 2023, month: 1, day: 30, hour: 23, minute: 4, second: 5))
    }

    @Test("focus, bulb and geotag are refused before a byte is written, naming what a GoPro offers")
    func unsupported() async throws {
        let body = GoProBody(timing: Self.fastBody)
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        let before = await body.requests.count
        let attempts: [(String, () async throws -> Void)] = [
            ("focus", { _ = try await camera.focus(hold: false) }),
            ("bulb", { _ = try await camera.bulb(.seconds(1)) }),
            ("geotag", { try await camera.geotag(GeoPosition(latitude: 46, longitude: 7, fixTime: 0)) }),
        ]
        for (operation, attempt) in attempts {
            do {
                try await attempt()
                Issue.record("\(operation) was accepted")
            } catch {
                #expect("\(error)".contains("\(operation) is not offered by a GoPro camera's Bluetooth remote; it offers: shoot, video, time sync"))
            }
        }
        #expect(await body.requests.count == before, "the body saw no write")
    }

    @Test("a camera held busy (in its menus) is waited for, then the shot is refused naming the menus; status 1 reads the same")
    func busyRefusal() async throws {
        let body = GoProBody(timing: Self.fastBody)
        let driver = GoProDriver(keepAliveInterval: .seconds(1), pollInterval: .milliseconds(5), captureTimeout: .milliseconds(100))
        let camera = try await Self.open(body, driver: driver)
        defer { Task { await camera.close() } }
        await body.setBusy(true)
        do {
            _ = try await camera.shoot()
            Issue.record("shot while busy")
        } catch {
            #expect(error.kind == .busy)
            #expect("\(error)".contains("menus"))
        }
        #expect(await Self.shutters(body) == 0, "no shutter is pressed while the camera is busy")
        await body.setBusy(false)
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 1)

        let refused = GoPro.Notification.command(GoPro.CommandResponse(id: 0x01, status: .error))
        #expect(throws: CameraError.self) { try GoProDriver.check(refused, during: "shoot") }
        do {
            try GoProDriver.check(refused, during: "shoot")
        } catch {
            #expect(error.kind == .busy && "\(error)".contains("status 1"))
        }
    }

    @Test("after the camera sleeps the connection retries; once it wakes, it reconnects and shoots")
    func reconnectAfterSleep() async throws {
        let body = GoProBody(timing: Self.fastBody)
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        _ = try await camera.shoot()
        await body.sleep()
        _ = await eventually(every: .milliseconds(5)) { await camera.connectionState != .ready }
        #expect(await camera.connectionState != .ready)
        await #expect(throws: CameraError.self) { try await camera.shoot() }
        // An attempt made while the camera sleeps has failed: the connection retries.
        #expect(await eventually { await RemoteBodyChecks.retried(camera) }, "no attempt failed while the camera slept")
        await body.wake()
        try await camera.waitUntilReady(timeout: .seconds(30))
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 2)
        #expect(await body.control == .externalControl, "control is claimed again on the new connection")
    }

    @Test("the keep-alive keeps the camera awake; without it the camera powers down and drops the link")
    func keepAlive() async throws {
        let timing = GoProBody.Timing(boot: .zero, capture: .milliseconds(10), autoPowerDown: .milliseconds(600))
        let kept = GoProBody(timing: timing)
        let keeping = try await Self.open(kept, driver: GoProDriver(keepAliveInterval: .milliseconds(40), pollInterval: .milliseconds(5)))
        let left = GoProBody(timing: timing)
        let leaving = try await Self.open(left, driver: GoProDriver(keepAliveInterval: nil, pollInterval: .milliseconds(5)))
        // Until the camera left alone has powered down, and the kept one has had 20 keep-alives
        // (so more than its 600 ms limit has passed since it was opened, before the other).
        try await poll("the camera without keep-alive to power down, the other to have 20 keep-alives") {
            let (powerDowns, keepAlives) = (await left.autoPowerDowns, await kept.keepAlivesReceived)
            return powerDowns >= 1 && keepAlives >= 20
        }
        #expect(await kept.autoPowerDowns == 0)
        #expect(await keeping.connectionState == .ready)
        #expect(await left.autoPowerDowns >= 1, "a driver without keep-alive loses the camera")
        #expect(await left.keepAlivesReceived == 0)
        await keeping.close()
        await leaving.close()
    }

    @Test("a 20-frame time-lapse 50 ms apart takes every frame on schedule")
    func timelapse() async throws {
        let body = GoProBody(timing: GoProBody.Timing(boot: .zero, capture: .milliseconds(5)))
        let camera = try await Self.open(body)
        defer { Task { await camera.close() } }
        let run = Timelapse(plan: RunPlan(intervalMs: 50, stop: .frames(20), overrun: .burst), camera: camera, journal: MemoryJournal(),
                            clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let seen = Task {
            var records: [FrameRecord] = []
            for await record in run.records { records.append(record) }
            return records
        }
        let ending = try await run.start(cameraName: "GoPro 0001")
        let records = await seen.value
        #expect(ending.state == .finished, "\(ending.reason)")
        #expect(records.count == 20)
        #expect(records.allSatisfy { $0.outcome == .taken })
        #expect(records.map(\.scheduledMs) == records.indices.map { records[0].scheduledMs + Int64($0) * 50 })
        #expect(await body.picturesTaken == 20)
    }

    @Test("the body advertises FEA6 and GoPro's company data; pairing mode and the model ID show in it")
    func advertisement() async throws {
        let body = GoProBody(address: "C0:CA:4E:00:12:34")
        #expect(await body.advertisement().name == "GoPro 1234")
        #expect(GoPro.recognize(await body.advertisement())?.pairing == .closed)
        await body.setPairingMode(true)
        let advertised = await body.advertisement()
        #expect(CameraAdvertisement.recognize(advertised)?.pairing == .open)
        #expect(try GoPro.Advertisement(manufacturerData: try #require(advertised.manufacturerData[GoPro.companyID])).modelID == 62)
        #expect(SimulatedCameraCatalog.body(of: .gopro, address: "C0:CA:4E:00:00:01").brand == .gopro)
    }
}
