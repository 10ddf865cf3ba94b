import CameraKit
import CameraProtocols
import CameraRemote
import SimulatedCameras
import Testing
import UnleashedKit

/// The Canon remote-mode driver against a simulated Canon body, in memory, through ``BLECamera``.
@Suite struct CanonDriverTests {
    private func open(_ body: CanonBody, remoteName: String = "unleashed", attempts: Int? = nil) async throws -> BLECamera {
        try await BLECamera.open(
            name: "r6", provider: InMemoryCameraProvider(body: body, connectDelay: .milliseconds(1)),
            driver: CanonDriver(remoteName: remoteName, pressTime: .milliseconds(5)),
            policy: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), jitter: 0, maximumAttempts: attempts),
            timing: RemoteBodyChecks.timing, readyTimeout: .seconds(30))
    }

    @Test func pairsOnTheRemotePairingScreenAndShoots() async throws {
        let body = CanonBody(pairedRemotes: [], pairingOpen: true)
        #expect(Canon.recognize(await body.advertisement())?.pairing == .open)
        let camera = try await open(body, remoteName: "studio")
        #expect(await body.knownRemotes == ["studio"])
        #expect(await body.advertisement().serviceUUIDs.isEmpty, "the pairing screen closes once paired")
        #expect(camera.identity.capabilities == [.shoot, .focus, .video])
        let shot = try await camera.shoot()
        #expect(shot.counter == 1)
        #expect(await body.picturesTaken == 1)
        #expect(await body.controls == [.shutterPress, .allReleased])
        await camera.close()
    }

    @Test func anUnknownRemoteIsToldHowToPair() async throws {
        let body = CanonBody(pairedRemotes: [])
        let error = await #expect(throws: CameraError.self) { _ = try await open(body, attempts: 1) }
        let message = error?.description ?? ""
        #expect(message.contains("MENU → Wireless settings → Bluetooth function → Remote"), "\(message)")
        #expect(await body.picturesTaken == 0)
    }

    @Test func focusHoldsAndReleasesWithoutAPicture() async throws {
        let body = CanonBody()
        let camera = try await open(body)
        #expect(try await camera.focus(hold: true) == .acquired)
        #expect(await body.focusing)
        try await camera.release()
        #expect(await !body.focusing)
        #expect(try await camera.focus(hold: false) == .acquired)
        #expect(await body.controls == [.focusPress, .allReleased, .focusPress, .allReleased])
        #expect(await body.picturesTaken == 0)
        await camera.close()
    }

    @Test func videoIsTheReleaseInMovieMode() async throws {
        let body = CanonBody()
        let camera = try await open(body)
        try await camera.startVideo()
        #expect(await body.recording)
        _ = try await camera.stopVideo()
        #expect(await !body.recording)
        #expect(await body.controls == [.moviePress, .movieReleased, .moviePress, .movieReleased])
        #expect(await body.picturesTaken == 0)
        await camera.close()
    }

    @Test func geotagAndBulbAreRefusedBeforeAnyWrite() async throws {
        let body = CanonBody()
        let camera = try await open(body)
        let writesAfterHandshake = await body.writeCount
        let geotag = await #expect(throws: CameraError.self) {
            try await camera.geotag(GeoPosition(latitude: 1, longitude: 2, fixTime: 0))
        }
        #expect(geotag?.description == "geotag is not offered by a Canon camera's Bluetooth remote; it offers: shoot, focus, video "
            + "(geotags need the camera's smartphone pairing (smart-device mode); in Remote mode it takes no position)")
        let bulb = await #expect(throws: CameraError.self) { _ = try await camera.bulb(.seconds(1)) }
        #expect(bulb?.description.contains("it offers: shoot, focus, video") == true)
        #expect(await body.writeCount == writesAfterHandshake)
        await camera.close()
    }

    /// The limit of remote mode: with the drive mode not Remote/Timed the camera takes nothing,
    /// and the shot still returns, since the camera reports nothing either way.
    @Test func aDriveModeNotRemoteTakesNothingUnnoticed() async throws {
        let body = CanonBody()
        await body.setRemoteEnabled(false)
        let camera = try await open(body)
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 0)
        #expect(await body.controls == [.shutterPress, .allReleased])
        await camera.close()
    }

    @Test func reconnectsAfterTheCameraSleepsAndWakes() async throws {
        let body = CanonBody()
        let camera = try await open(body)
        try await RemoteBodyChecks.reconnectsAfterSleep(camera, body)
        await camera.close()
    }

    @Test func aTwentyFrameTimelapseRunsOnSchedule() async throws {
        let body = CanonBody()
        let camera = try await open(body)
        try await RemoteBodyChecks.twentyFrameTimelapse(camera, body)
        await camera.close()
    }
}

/// The Canon smart-device driver against a simulated camera in smart-device mode.
@Suite struct CanonSmartDriverTests {
    private func open(_ body: CanonSmartBody, pairingTimeout: Duration = .seconds(20), attempts: Int? = nil) async throws -> BLECamera {
        try await BLECamera.open(
            name: "rp", provider: InMemoryCameraProvider(body: body, connectDelay: .milliseconds(1)),
            driver: CanonSmartDriver(pairingTimeout: pairingTimeout),
            policy: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), jitter: 0, maximumAttempts: attempts),
            timing: RemoteBodyChecks.timing, readyTimeout: .seconds(30))
    }

    @Test func pairsWhenThePersonConfirmsAndShootsConfirmed() async throws {
        let body = CanonSmartBody()
        #expect(Canon.recognize(await body.advertisement())?.brand == .canon)
        let camera = try await open(body)
        #expect(await body.pairedClients == [CanonSmartDriver.defaultClientID])
        #expect(camera.identity.capabilities == [.shoot, .video, .geotag])
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 1)
        await camera.close()
    }

    @Test func aDeclinedPairingIsReported() async throws {
        let body = CanonSmartBody(pairingOpen: false)
        let error = await #expect(throws: CameraError.self) { _ = try await open(body, attempts: 1) }
        #expect(error?.description.contains("declined") == true, "\(error?.description ?? "")")
    }

    @Test func aFailedAutofocusIsReportedAsSuch() async throws {
        let body = CanonSmartBody()
        await body.setFocusFinds(false)
        let camera = try await open(body)
        await #expect(throws: CameraError.focusFailed) { _ = try await camera.shoot() }
        #expect(await body.picturesTaken == 0)
        await camera.close()
    }

    @Test func videoAndGeotag() async throws {
        let body = CanonSmartBody(knownClients: [CanonSmartDriver.defaultClientID], pairingOpen: false)
        let camera = try await open(body)
        try await camera.startVideo()
        #expect(await body.recording)
        _ = try await camera.stopVideo()
        #expect(await !body.recording)
        try await camera.geotag(GeoPosition(latitude: 35.6586, longitude: 139.7454, altitude: 40, fixTime: 1_795_610_096_000))
        #expect(await body.lastFix == Canon.GeoFix(latitude: 35.6586, longitude: 139.7454, elevation: 40, unixSeconds: 1_795_610_096))
        let focus = await #expect(throws: CameraError.self) { _ = try await camera.focus(hold: false) }
        #expect(focus?.description.contains("it offers: shoot, video, geotag") == true)
        await camera.close()
    }

    @Test func reconnectsAfterTheCameraSleepsAndWakes() async throws {
        let body = CanonSmartBody()
        let camera = try await open(body)
        try await RemoteBodyChecks.reconnectsAfterSleep(camera, body)
        await camera.close()
    }
}

