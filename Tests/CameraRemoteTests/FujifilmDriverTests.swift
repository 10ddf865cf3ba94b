import CameraKit
import CameraProtocols
import CameraRemote
import Foundation
import Intervalometer
import SimulatedCameras
import Testing
import UnleashedTestSupport
import UnleashedKit

/// Opening a driver against a simulated body with the short retry delays a test can afford.
/// The time limits stay generous: they only run out when something is wrong, and a loaded test
/// machine can starve a healthy connection for seconds.
enum FastRemote {
    static let policy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), maximumAttempts: 3)
    static let timing = RemoteTiming(scanTimeout: .seconds(20), stepTimeout: .seconds(10), handshakeTimeout: .seconds(30))
    static let readyTimeout = Duration.seconds(60)

    static func open(_ body: any SimulatedCameraBody, driver: any CameraRemoteDriver,
                     clock: any Clock<Duration> = ContinuousClock()) async throws -> BLECamera {
        try await BLECamera.open(name: body.address, provider: InMemoryCameraProvider(body: body), driver: driver,
                                    policy: policy, timing: timing, clock: clock, readyTimeout: readyTimeout)
    }

    /// Shoots, puts the body to sleep (a shot then fails), wakes it, and shoots again once the
    /// connection is back: two pictures in all.
    static func shootAcrossASleep(_ camera: BLECamera, _ body: any SimulatedCameraBody) async throws {
        _ = try await camera.shoot()
        await body.sleep()
        await #expect(throws: CameraError.self) { _ = try await camera.shoot() }
        // An attempt made while the camera sleeps has failed: the connection retries.
        #expect(await eventually { await RemoteBodyChecks.retried(camera) }, "no attempt failed while the camera slept")
        await body.wake()
        try await camera.waitUntilReady(timeout: readyTimeout)
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 2)
    }

    /// Runs a 20-frame time-lapse 50 ms apart on `camera`; returns its records.
    static func timelapse(_ camera: BLECamera) async throws -> [FrameRecord] {
        let run = Timelapse(plan: RunPlan(intervalMs: 50, stop: .frames(20), overrun: .burst), camera: camera, journal: MemoryJournal(),
                            clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let seen = Task {
            var records: [FrameRecord] = []
            for await record in run.records { records.append(record) }
            return records
        }
        let ending = try await run.start(cameraName: camera.identity.name)
        #expect(ending.state == .finished, "\(ending.reason)")
        return await seen.value
    }

    /// Checks that 20 frames were taken, each scheduled 50 ms after the one before.
    static func expectOnSchedule(_ records: [FrameRecord]) {
        #expect(records.count == 20)
        #expect(records.allSatisfy { $0.outcome == .taken }, "\(records.filter { $0.outcome != .taken }.map { "\($0.frame): \($0.error ?? "")" })")
        let starts = records.map(\.scheduledMs)
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 == 50 }, "\(starts)")
    }
}

@Suite(.serialized) struct FujifilmDriverTests {
    static let token: [UInt8] = [0x1A, 0x2B, 0x3C, 0x4D]
    static let serial: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55]

    func basic(pairingOpen: Bool = true) -> FujifilmBody {
        FujifilmBody(generation: .basic(token: Self.token), pairingOpen: pairingOpen)
    }

    func secure() -> FujifilmBody {
        FujifilmBody(model: "X-E5", generation: .secure(serial: Self.serial))
    }

    @Test func basicHandshakeRegistersAndAShotIsTaken() async throws {
        let body = basic()
        let camera = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        #expect(await body.registeredRemotes == ["unleashed"])
        let shot = try await camera.shoot()
        #expect(shot.counter == 1)
        #expect(await body.picturesTaken == 1)
        let writes = await body.writes.suffix(4)
        #expect(writes.map(\.value) == [[0x01, 0x00], [0x02, 0x00], [0x01, 0x00], [0x00, 0x00]])
        #expect(writes.allSatisfy { $0.characteristic == Fujifilm.shutter })
        #expect(await body.buttons == .release)
        await camera.close()
    }

    @Test func secureHandshakeAcknowledgesTheStatusAndSetsTheSyncInterval() async throws {
        let body = secure()
        #expect(body.requiresBond)
        let camera = try await FastRemote.open(body, driver: FujifilmDriver(generation: .secure(serial: Self.serial)))
        #expect(await body.syncInterval == .standard)
        let pairing = await body.writes.prefix(2)
        #expect(pairing.map(\.characteristic) == [Fujifilm.secureStatus, Fujifilm.secureRemoteName])
        #expect(pairing.first?.value == [0xB4, 0x12, 0x00, 0x20])
        // furble subscribes to notification 3 among the required ones; so does the driver.
        #expect(FujifilmDriver(generation: .secure(serial: Self.serial)).subscriptions.contains(Fujifilm.secureThirdNotification))
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 1)
        await camera.close()
    }

    @Test func focusBulbAndGeotagReachTheCamera() async throws {
        let body = basic()
        let driver = FujifilmDriver(generation: .basic(token: Self.token), focusTime: .milliseconds(10))
        // The bulb is timed on a clock that moves only when the test moves it.
        let clock = RunClock()
        let camera = try await FastRemote.open(body, driver: driver, clock: clock)
        #expect(try await camera.focus(hold: true) == .acquired)
        #expect(await body.buttons == .focus)
        try await camera.release()
        #expect(await body.buttons == .release)
        // Without hold the driver lets go after its focus time: the clock goes that far, no further.
        _ = try await clock.flowing(until: clock.now.advanced(by: .milliseconds(10))) { try await camera.focus(hold: false) }
        #expect(await body.buttons == .release)

        let bulb = try await clock.flowing(until: clock.now.advanced(by: .milliseconds(60))) { try await camera.bulb(.milliseconds(60)) }
        #expect(bulb.exposed == .milliseconds(60))
        #expect(await body.picturesTaken == 1)
        #expect(await body.buttons == .release)

        let position = GeoPosition(latitude: 35.6586, longitude: 139.7454, altitude: 333, fixTime: 1_752_469_567_000)
        try await camera.geotag(position)
        #expect(await body.lastFix == Fujifilm.GeotagFix(latitudeE7: 356_586_000, longitudeE7: 1_397_454_000, altitudeMetres: 333,
                                                         time: Fujifilm.UTCTime(year: 2025, month: 7, day: 14, hour: 5, minute: 6, second: 7)))
        await camera.close()
    }

    @Test func theDriverFollowsTheAdvertisedGeneration() async throws {
        let secureBody = secure()
        let recognized = try #require(Fujifilm.recognize(await secureBody.advertisement()))
        #expect(FujifilmDriver(recognized: recognized)?.generation == .secure(serial: Self.serial))
        let basicCamera = try #require(Fujifilm.recognize(await basic().advertisement()))
        #expect(FujifilmDriver(recognized: basicCamera)?.generation == .basic(token: Self.token))
        let closed = try #require(Fujifilm.recognize(await basic(pairingOpen: false).advertisement()))
        #expect(FujifilmDriver(recognized: closed) == nil)
    }

    @Test func positionRequestsBecomeSignals() {
        let driver = FujifilmDriver(generation: .basic(token: Self.token))
        #expect(driver.events(from: [0x01, 0x00], on: Fujifilm.geotagRequest) == [.positionRequested])
        #expect(driver.events(from: [0x02, 0x00], on: Fujifilm.configured).isEmpty)
        #expect(driver.events(from: [0xFF], on: Fujifilm.geotagRequest).isEmpty)
    }

    @Test func videoIsRefusedBeforeAnyWriteNamingWhatItOffers() async throws {
        let body = basic()
        let camera = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        let before = await body.writeCount
        await #expect(throws: CameraError.self) { try await camera.startVideo() }
        do {
            try await camera.startVideo()
        } catch {
            #expect(error.description == "video is not offered by a Fujifilm camera's Bluetooth remote; it offers: shoot, focus, bulb, geotag")
        }
        await #expect(throws: CameraError.self) { try await camera.setTime(WallTime(unixMilliseconds: 0, utcOffsetMinutes: 0)) }
        #expect(await body.writeCount == before)
        await camera.close()
    }

    @Test func aWrongTokenIsRefusedNamingTheMenuItem() async throws {
        let body = basic()
        do {
            _ = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: [9, 9, 9, 9])))
            Issue.record("a camera with another token accepted the remote")
        } catch {
            #expect("\(error)".contains("Pairing Registration"), "\(error)")
            #expect("\(error)".contains("refused this remote"), "\(error)")
        }
        #expect(await body.registeredRemotes.isEmpty)
    }

    @Test func aClosedRegistrationRefusesANewRemoteButNotAKnownOne() async throws {
        let body = basic()
        let known = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        await known.close()
        await body.setPairingMode(false)
        #expect(Fujifilm.recognize(await body.advertisement())?.pairing == .closed)
        await #expect(throws: CameraError.self) {
            _ = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token), remoteName: "stranger"))
        }
        let again = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        _ = try await again.shoot()
        #expect(await body.picturesTaken == 1)
        await again.close()
    }

    @Test func aCameraThatSleepsIsRegainedAndShootsAgain() async throws {
        let body = basic()
        let camera = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        try await FastRemote.shootAcrossASleep(camera, body)
        await camera.close()
    }

    @Test func aTwentyFrameTimelapseKeepsItsSchedule() async throws {
        let body = basic()
        let camera = try await FastRemote.open(body, driver: FujifilmDriver(generation: .basic(token: Self.token)))
        let records = try await FastRemote.timelapse(camera)
        FastRemote.expectOnSchedule(records)
        #expect(await body.picturesTaken == 20)
        await camera.close()
    }

    @Test func theCatalogMakesAFujifilmBody() async throws {
        let body = SimulatedCameraCatalog.body(of: .fujifilm, address: "C0:CA:4E:00:00:01")
        #expect(body.brand == .fujifilm)
        let advertisement = await body.advertisement()
        #expect(Fujifilm.recognize(advertisement)?.pairing == .open)
    }
}
