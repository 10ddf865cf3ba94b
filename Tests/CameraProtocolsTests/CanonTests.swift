import CameraKit
import CameraProtocols
import Testing
import UnleashedTestSupport

@Suite struct CanonTests {
    let file: GoldenVectorFile

    init() throws {
        file = try GoldenVectorFile.load("canon")
    }

    @Test(arguments: [
        ("remote-shutter-press", Canon.RemoteControl.shutterPress), ("remote-all-released", .allReleased),
        ("remote-focus-press", .focusPress), ("remote-movie-press", .moviePress), ("remote-movie-released", .movieReleased),
        ("remote-two-second-press", Canon.RemoteControl(buttons: .release, mode: .twoSecond)),
        ("remote-tele-press", Canon.RemoteControl(buttons: .tele, mode: .immediate)),
        ("remote-wide-press", Canon.RemoteControl(buttons: .wide, mode: .immediate)),
    ])
    func remoteControl(name: String, control: Canon.RemoteControl) throws {
        let vector = try file.vector(name)
        #expect(vector.characteristic == Canon.remoteControl.characteristic)
        #expect(control.bytes == vector.bytes)
        #expect(try Canon.RemoteControl(decoding: vector.bytes) == control)
    }

    @Test func remoteIdentify() throws {
        let vector = try file.vector("remote-identify")
        #expect(vector.characteristic == Canon.remotePairing.characteristic)
        #expect(Canon.RemoteIdentify(name: "unleashed").bytes == vector.bytes)
        #expect(try Canon.RemoteIdentify(decoding: vector.bytes).name == "unleashed")
        // Non-ASCII is dropped and a long name shortened to one write.
        #expect(Canon.RemoteIdentify(name: "Zoë's très long remote name").name == "Zo's trs long remot")
        #expect(throws: MalformedMessage.self) { try Canon.RemoteIdentify(decoding: [0x03]) }
        #expect(throws: MalformedMessage.self) { try Canon.RemoteIdentify(decoding: [0x03, 0x07]) }
    }

    @Test(arguments: [
        ("smart-announce", Canon.SmartIdentify.announce(name: "unleashed")),
        ("smart-identity", .identity(Array(0x10...0x1F))), ("smart-nickname", .nickname("unleashed")),
        ("smart-device-type", .deviceType(Canon.SmartIdentify.androidDevice)), ("smart-finish", .finish),
    ])
    func smartHandshake(name: String, message: Canon.SmartIdentify) throws {
        let vector = try file.vector(name)
        #expect(vector.characteristic == message.characteristic.characteristic)
        #expect(message.bytes == vector.bytes)
        #expect(try Canon.SmartIdentify(decoding: vector.bytes, on: message.characteristic) == message)
    }

    @Test func smartAnswersAndCommands() throws {
        #expect(try Canon.PairingAnswer(decoding: file.bytes("smart-pairing-accepted")) == .accepted)
        #expect(try Canon.PairingAnswer(decoding: file.bytes("smart-pairing-rejected")) == .rejected)
        #expect(Canon.SessionCommand.shooting.bytes == (try file.bytes("smart-session-shooting")))
        #expect(Canon.SessionCommand.playback.bytes == (try file.bytes("smart-session-playback")))
        let buttons: [(String, Canon.SmartShutter)] = [("smart-shutter-press", .press), ("smart-shutter-release", .release),
                                                       ("smart-video-start", .startVideo), ("smart-video-stop", .stopVideo)]
        for (name, button) in buttons {
            #expect(button.bytes == (try file.bytes(name)), "\(name)")
            #expect(try Canon.SmartShutter(decoding: file.bytes(name)) == button)
            #expect(try file.vector(name).characteristic == Canon.shootingButtons.characteristic)
        }
        let states: [(String, Canon.ShootingState)] = [("smart-state-focus-acquired", .focusAcquired), ("smart-state-idle", .idle),
                                                       ("smart-state-recording", .recording), ("smart-state-camera-button", .cameraButton)]
        for (name, state) in states {
            #expect(try Canon.ShootingState(decoding: file.bytes(name)) == state, "\(name)")
            #expect(state.bytes == (try file.bytes(name)))
        }
        #expect(try Canon.LocationState(decoding: file.bytes("geo-setup")) == .setup)
        #expect(try Canon.LocationState(decoding: file.bytes("geo-wanted")) == .wanted)
        #expect(Canon.locationAcknowledge == (try file.bytes("geo-acknowledge")))
    }

    @Test func geoFixes() throws {
        let north = Canon.GeoFix(GeoPosition(latitude: 35.6586, longitude: 139.7454, altitude: 40, fixTime: 1_795_610_096_000))
        #expect(north.bytes == (try file.bytes("geo-fix-north-east")))
        #expect(try Canon.GeoFix(decoding: file.bytes("geo-fix-north-east")) == north)
        let south = Canon.GeoFix(GeoPosition(latitude: -22.9519, longitude: -43.2105, altitude: -5.5, fixTime: 1_795_610_096_999))
        let bytes = try file.bytes("geo-fix-south-west")
        #expect(south.bytes == bytes)
        #expect(Array(bytes[0...1]) == [0x04, UInt8(ascii: "S")] && bytes[6] == UInt8(ascii: "W") && bytes[11] == UInt8(ascii: "-"))
        #expect(try Canon.GeoFix(decoding: bytes) == south)
        #expect(south.unixSeconds == 1_795_610_096)
    }

    @Test func recognisesTheRemoteServiceAsAnOpenPairingScreen() {
        let pairing = CameraAdvertisement.recognize(AdvertisementData(name: "EOS R6", serviceUUIDs: [Canon.remoteService]))
        #expect(pairing?.brand == .canon && pairing?.pairing == .open && pairing?.model == "EOS R6")
        #expect(pairing?.howToPair.contains("MENU → Wireless settings → Bluetooth function → Remote") == true)
        let smart = Canon.recognize(AdvertisementData(name: "EOS RP", serviceUUIDs: [Canon.handshakeService.uppercased()]))
        #expect(smart?.pairing == .closed && smart?.howToPair.contains("smartphone") == true)
        #expect(Canon.recognize(AdvertisementData(name: "EOS R6")) == nil)
    }

    /// Every vector in the file is read by a decoder and comes back to the same bytes.
    @Test func everyVectorIsDecoded() throws {
        for vector in file.vectors {
            let bytes = vector.bytes
            let again: [UInt8]
            switch vector.characteristic {
            case Canon.remotePairing.characteristic: again = try Canon.RemoteIdentify(decoding: bytes).bytes
            case Canon.remoteControl.characteristic: again = try Canon.RemoteControl(decoding: bytes).bytes
            case Canon.handshakeName.characteristic where vector.direction == "from-camera": again = try Canon.PairingAnswer(decoding: bytes).bytes
            case Canon.handshakeName.characteristic: again = try Canon.SmartIdentify(decoding: bytes, on: Canon.handshakeName).bytes
            case Canon.handshakeControl.characteristic: again = try Canon.SmartIdentify(decoding: bytes, on: Canon.handshakeControl).bytes
            case Canon.sessionCommand.characteristic: again = try Canon.SessionCommand(decoding: bytes).bytes
            case Canon.shootingButtons.characteristic: again = try Canon.SmartShutter(decoding: bytes).bytes
            case Canon.shootingState.characteristic: again = try Canon.ShootingState(decoding: bytes).bytes
            case Canon.locationStatus.characteristic: again = try Canon.LocationState(decoding: bytes).bytes
            case Canon.locationData.characteristic where bytes == Canon.locationAcknowledge: again = bytes
            case Canon.locationData.characteristic: again = try Canon.GeoFix(decoding: bytes).bytes
            default:
                Issue.record("\(vector.name): no decoder for \(vector.characteristic ?? "-")")
                continue
            }
            #expect(again == bytes, "\(vector.name)")
        }
    }

    @Test func malformedInputIsAnErrorNotACrash() throws {
        #expect(throws: MalformedMessage.self) { try Canon.RemoteControl(decoding: []) }
        #expect(throws: MalformedMessage.self) { try Canon.RemoteControl(decoding: [0x8C, 0x00]) }
        #expect(throws: MalformedMessage.self) { try Canon.RemoteControl(decoding: [0x81]) }
        #expect(throws: MalformedMessage.self) { try Canon.PairingAnswer(decoding: [0x01]) }
        #expect(throws: MalformedMessage.self) { try Canon.ShootingState(decoding: [0x01, 0x02]) }
        #expect(throws: MalformedMessage.self) { try Canon.LocationState(decoding: []) }
        #expect(throws: MalformedMessage.self) { try Canon.GeoFix(decoding: [0x04] + [UInt8](repeating: 0, count: 19)) }
        #expect(throws: MalformedMessage.self) { try Canon.SmartIdentify(decoding: [0x03, 0x01], on: Canon.handshakeControl) }
        #expect(throws: MalformedMessage.self) { try Canon.SmartIdentify(decoding: [0x01], on: Canon.remoteControl) }

        for first in 0...255 {
            _ = try? Canon.RemoteControl(decoding: [UInt8(first)])
            for second in 0...255 {
                let pair = [UInt8(first), UInt8(second)]
                _ = try? Canon.SmartShutter(decoding: pair)
                _ = try? Canon.ShootingState(decoding: [0x01] + pair)
                _ = try? Canon.SmartIdentify(decoding: pair, on: Canon.handshakeControl)
            }
        }
        var random = try TestSeed.forTest().generator()
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = try? Canon.RemoteIdentify(decoding: bytes)
            _ = try? Canon.PairingAnswer(decoding: bytes)
            _ = try? Canon.SessionCommand(decoding: bytes)
            _ = try? Canon.LocationState(decoding: bytes)
            _ = try? Canon.SmartIdentify(decoding: bytes, on: Canon.handshakeName)
            _ = try? Canon.GeoFix(decoding: bytes)
            var fix = Array((bytes + [UInt8](repeating: 0, count: 20)).prefix(20))
            (fix[0], fix[1], fix[6], fix[11]) = (0x04, UInt8(ascii: "N"), UInt8(ascii: "W"), UInt8(ascii: "+"))
            _ = try? Canon.GeoFix(decoding: fix)
        }
    }
}
