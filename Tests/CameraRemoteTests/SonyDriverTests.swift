import CameraKit
import CameraProtocols
import CameraRemote
import GATT
import SimulatedCameras
import Testing
import UnleashedKit
import UnleashedTestSupport

/// The Sony driver against a simulated Sony body, in memory, through ``BLECamera``.
@Suite struct SonyDriverTests {
    private static let london = Sony.TimeZoneOffsets(utcOffsetMinutes: 0, daylightSavingMinutes: 60)

    private func open(_ body: SonyBody, focusTimeout: Duration = .seconds(10),
                      timing: RemoteTiming = RemoteBodyChecks.timing, clock: any Clock<Duration> = ContinuousClock()) async throws -> BLECamera {
        let driver = SonyDriver(focusTimeout: focusTimeout, timeZone: { _ in Self.london })
        return try await BLECamera.open(
            name: "a7", provider: InMemoryCameraProvider(body: body, connectDelay: .milliseconds(1)), driver: driver,
            policy: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), jitter: 0),
            timing: timing, clock: clock, readyTimeout: .seconds(30))
    }

    @Test func connectsReadsTheModelAndShootsConfirmedByTheShutterReport() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        #expect(camera.identity.cameraModel == "ILCE-7M3")
        #expect(camera.identity.capabilities == [.shoot, .focus, .bulb, .video, .geotag])
        let shot = try await camera.shoot()
        #expect(shot.counter == 1)
        #expect(await body.picturesTaken == 1)
        #expect(await body.commands == Sony.pressShutter + Sony.releaseShutter)
        await camera.close()
    }

    @Test func aShotTheCameraDoesNotReportFailsAndLetsGo() async throws {
        let body = SonyBody()
        await body.setShutterReleases(false)
        var timing = RemoteBodyChecks.timing
        timing.stepTimeout = .milliseconds(200)
        let camera = try await open(body, timing: timing)
        await #expect(throws: CameraError.shotNotReported(after: .milliseconds(200))) { _ = try await camera.shoot() }
        #expect(await body.commands == Sony.pressShutter + Sony.releaseShutter)
        await camera.close()
    }

    @Test func statusNotificationsBecomeSignals() {
        let driver = SonyDriver()
        #expect(driver.events(from: [0x02, 0x3F, 0x20], on: Sony.status) == [.focus(true)])
        #expect(driver.events(from: [0x02, 0xA0, 0x20], on: Sony.status) == [.shutterActive(true)])
        #expect(driver.events(from: [0x02, 0xD5, 0x00], on: Sony.status) == [.recording(false)])
        #expect(driver.events(from: [0x02, 0x99, 0x20], on: Sony.status).isEmpty)
        #expect(driver.events(from: [0x02, 0x3F, 0x20], on: Sony.command).isEmpty)
    }

    @Test func focusReportsAcquiredHoldsAndReleases() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        #expect(try await camera.focus(hold: false) == .acquired)
        #expect(await body.commands == [.press(.halfPress), .release(.halfPress)])
        #expect(try await camera.focus(hold: true) == .acquired)
        #expect(await body.commands.last == .press(.halfPress))
        try await camera.release()
        #expect(await body.commands.last == .release(.halfPress))
        #expect(await body.picturesTaken == 0)
        await camera.close()
    }

    @Test func focusWithoutAReportFailsAndLetsGo() async throws {
        let body = SonyBody()
        await body.setFocusFinds(false)
        let camera = try await open(body, focusTimeout: .milliseconds(100))
        #expect(try await camera.focus(hold: true) == .failed)
        #expect(await body.commands == [.press(.halfPress), .release(.halfPress)])
        await camera.close()
    }

    @Test func bulbHoldsTheFullPress() async throws {
        let body = SonyBody()
        // The exposure is timed on a clock that moves only when the test moves it.
        let clock = RunClock()
        let camera = try await open(body, clock: clock)
        let exposure = try await clock.flowing(until: clock.now.advanced(by: .milliseconds(120))) { try await camera.bulb(.milliseconds(120)) }
        #expect(exposure.ending == .deadline)
        #expect(exposure.exposed == .milliseconds(120))
        #expect(await body.picturesTaken == 1)
        #expect(await body.commands == Sony.pressShutter + Sony.releaseShutter)
        await camera.close()
    }

    @Test func videoTogglesRecordingConfirmedByTheCamera() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        try await camera.startVideo()
        #expect(await body.recording)
        _ = try await camera.stopVideo()
        #expect(await !body.recording)
        #expect(await body.commands == [.press(.record), .release(.record), .press(.record), .release(.record)])
        await camera.close()
    }

    @Test func geotagWritesTheFixWithTheTimeZone() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        try await camera.geotag(GeoPosition(latitude: 51.5007, longitude: -0.1246, altitude: 30, fixTime: 1_795_610_096_000))
        let fix = try #require(await body.lastFix)
        #expect(fix == Sony.LocationFix(latitudeE7: 515_007_000, longitudeE7: -1_246_000,
                                        time: Sony.UTCTime(year: 2026, month: 11, day: 25, hour: 12, minute: 34, second: 56),
                                        timeZone: Self.london))
        await camera.close()

        // A body whose location format takes no time zone gets the 91-byte fix.
        let older = SonyBody(takesTimeZone: false)
        let second = try await open(older)
        try await second.geotag(GeoPosition(latitude: 1, longitude: 2, fixTime: 0))
        #expect(await older.lastFix?.timeZone == nil)
        #expect(await older.lastFix?.latitudeE7 == 10_000_000)
        await second.close()
    }

    @Test func whatTheRemoteLacksIsRefusedBeforeAnyWrite() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        let error = await #expect(throws: CameraError.self) {
            try await camera.setTime(WallTime(unixMilliseconds: 0, utcOffsetMinutes: 0))
        }
        #expect(error?.description == "time sync is not offered by a Sony camera's Bluetooth remote; it offers: shoot, focus, bulb, video, geotag")
        await #expect(throws: CameraError.self) { try await camera.value(of: .iso) }
        #expect(await body.writeCount == 0)
        await camera.close()
    }

    @Test func remoteSettingOffIsExplainedByItsMenuItem() async throws {
        let body = SonyBody()
        await body.setRemoteEnabled(false)
        let camera = try await open(body)
        let error = await #expect(throws: CameraError.self) { try await camera.shoot() }
        let message = error?.description ?? ""
        #expect(message.contains("MENU → Network → Bluetooth Rmt Ctrl → On"), "\(message)")
        #expect(message.contains("paired"))
        #expect(await body.picturesTaken == 0)

        await body.setRemoteEnabled(true)
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 1)
        await camera.close()
    }

    /// The camera drops the link on a code it does not know (which is why the driver sends only
    /// the codes of ``Sony/Button``).
    @Test func bodyDropsTheLinkOnAnInvalidCommand() async throws {
        let body = SonyBody()
        let link = try await InMemoryCameraProvider(body: body).connect()
        #expect(await body.isLinked)
        try await link.write(Sony.ButtonCommand.press(.halfPress).bytes, to: Sony.command, withResponse: true)
        await #expect(throws: GATTError.self) { try await link.write([0x01, 0x10], to: Sony.command, withResponse: true) }
        var ended = false
        for await event in link.events {
            if case .disconnected = event { ended = true }
        }
        #expect(ended)
        #expect(await !body.isLinked)
    }

    @Test func reconnectsAfterTheCameraSleepsAndWakes() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        try await RemoteBodyChecks.reconnectsAfterSleep(camera, body)
        await camera.close()
    }

    @Test func aTwentyFrameTimelapseRunsOnSchedule() async throws {
        let body = SonyBody()
        let camera = try await open(body)
        try await RemoteBodyChecks.twentyFrameTimelapse(camera, body)
        await camera.close()
    }
}
