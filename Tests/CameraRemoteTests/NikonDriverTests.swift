import CameraKit
import CameraProtocols
import CameraRemote
import SimulatedCameras
import Testing

@Suite(.serialized) struct NikonDriverTests {
    static let remote = try! Nikon.DeviceID(bytes: [0x01, 0xA0, 0xDD, 0x0A])

    @Test func theHandshakePairsAndAShotIsTaken() async throws {
        let body = NikonBody()
        #expect(Nikon.recognize(await body.advertisement())?.pairing == .open)
        let camera = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote, nonce: 0xDEF8_2FD1))
        #expect(await body.pairedRemote == Self.remote)
        let handshake = await body.writes.map(\.value)
        #expect(handshake == [Nikon.PairingMessage.identify(Self.remote, nonce: 0xDEF8_2FD1).bytes, Nikon.PairingMessage.confirm.bytes])
        #expect(handshake.first == [0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x01, 0xA0, 0xDD, 0x0A, 0xDE, 0xF8, 0x2F, 0xD1])
        // Paired, the camera now advertises the remote it waits for.
        let advertised = try #require(Nikon.recognize(await body.advertisement()))
        #expect(advertised.pairing == .closed)
        #expect(advertised.token == Self.remote.bytes)

        let shot = try await camera.shoot()
        #expect(shot.counter == 1)
        #expect(await body.picturesTaken == 1)
        #expect(await body.writes.suffix(2).map(\.value) == [[0x02, 0x02], [0x02, 0x00]])
        await camera.close()
    }

    @Test func theDefaultRemoteIDStartsWithOne() {
        #expect(NikonDriver().deviceID == .standard)
        #expect(NikonDriver().deviceID.bytes.first == 0x01)
    }

    @Test(arguments: ["focus", "bulb", "geotag", "video"])
    func whatTheRemoteLacksIsRefusedBeforeAnyWrite(operation: String) async throws {
        let body = NikonBody()
        let camera = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote))
        let before = await body.writeCount
        do {
            switch operation {
            case "focus": _ = try await camera.focus(hold: false)
            case "bulb": _ = try await camera.bulb(.milliseconds(10))
            case "geotag": try await camera.geotag(GeoPosition(latitude: 1, longitude: 2, fixTime: 0))
            default: try await camera.startVideo()
            }
            Issue.record("\(operation) was not refused")
        } catch {
            #expect(error.description == "\(operation) is not offered by a Nikon camera's Bluetooth remote; it offers: shoot")
        }
        #expect(await body.writeCount == before)
        await camera.close()
    }

    @Test func aCameraPairedWithAnotherRemoteIgnoresThisOne() async throws {
        let other = try Nikon.DeviceID(bytes: [0x01, 0xAE, 0xD6, 0xB7])
        let body = NikonBody(pairedRemote: other, pairingOpen: false)
        do {
            _ = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote, answerTimeout: .milliseconds(300)))
            Issue.record("a camera paired with another remote answered")
        } catch {
            #expect("\(error)".contains("paired with another remote"), "\(error)")
            #expect("\(error)".contains("01a0dd0a"), "\(error)")
            #expect("\(error)".contains("Connect to remote"), "\(error)")
        }
        #expect(await body.pairedRemote == other)
        #expect(await body.picturesTaken == 0)
        // The remote it knows is answered.
        let known = try await FastRemote.open(body, driver: NikonDriver(deviceID: other))
        _ = try await known.shoot()
        #expect(await body.picturesTaken == 1)
        await known.close()
    }

    @Test func theRemoteSwitchOffRefusesTheButton() async throws {
        let body = NikonBody()
        let camera = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote))
        await body.setRemoteEnabled(false)
        await #expect(throws: CameraError.self) { _ = try await camera.shoot() }
        #expect(await body.picturesTaken == 0)
        await camera.close()
    }

    @Test func aCameraThatSleepsIsRegainedAndShootsAgain() async throws {
        let body = NikonBody()
        let camera = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote))
        try await FastRemote.shootAcrossASleep(camera, body)
        // It reconnected as the remote it paired with, with pairing closed.
        #expect(await body.pairedRemote == Self.remote)
        await camera.close()
    }

    @Test func aTwentyFrameTimelapseKeepsItsSchedule() async throws {
        let body = NikonBody()
        let camera = try await FastRemote.open(body, driver: NikonDriver(deviceID: Self.remote))
        let records = try await FastRemote.timelapse(camera)
        FastRemote.expectOnSchedule(records)
        #expect(await body.picturesTaken == 20)
        await camera.close()
    }

    @Test func theCatalogMakesANikonBody() {
        #expect(SimulatedCameraCatalog.body(of: .nikon, address: "C0:CA:4E:00:00:02").brand == .nikon)
    }
}
