import CameraProtocols
import GATT
import Testing
import UnleashedTestSupport

@Suite struct NikonTests {
    let vectors: GoldenVectorFile

    init() throws {
        vectors = try GoldenVectorFile.load("nikon")
    }

    @Test func vectorsNameTheCamerasCharacteristics() {
        let known = Set(Nikon.services.flatMap(\.identifiers).map(\.characteristic))
        for vector in vectors.vectors {
            if let characteristic = vector.characteristic {
                #expect(known.contains(BluetoothUUID.normalized(characteristic)), "\(vector.name)")
            }
        }
    }

    @Test(arguments: [("stage1-issue-235", [0x01, 0xA0, 0xDD, 0x0A] as [UInt8], UInt32(0xDEF8_2FD1)),
                      ("stage1-issue-209", [0x01, 0xAE, 0xD6, 0xB7], 0x8DF3_6C03)])
    func identifyEncodesAndDecodes(name: String, device: [UInt8], nonce: UInt32) throws {
        let bytes = try vectors.bytes(name)
        let message = Nikon.PairingMessage.identify(try Nikon.DeviceID(bytes: device), nonce: nonce)
        #expect(message.bytes == bytes)
        #expect(try Nikon.PairingMessage(decoding: bytes) == message)
        #expect(try Nikon.Indication.parse(bytes, on: Nikon.pairing) == .pairing(message))
    }

    @Test func theCamerasStagesAndTheConfirmationDecode() throws {
        #expect(try Nikon.PairingMessage(decoding: vectors.bytes("stage2-issue-209")) == .acknowledge)
        #expect(Nikon.PairingMessage.acknowledge.bytes == (try vectors.bytes("stage2-issue-209")))
        #expect(Nikon.PairingMessage.confirm.bytes == (try vectors.bytes("stage3-issue-209")))
        #expect(try Nikon.PairingMessage(decoding: vectors.bytes("stage3-issue-209")) == .confirm)
        let coolpix = try Nikon.PairingMessage(decoding: vectors.bytes("stage4-coolpix"))
        #expect(coolpix == .serial(Array(repeating: 0, count: 8)))
        #expect(coolpix.serialText == "")
        // A Z6III's stage 4 carries ASCII (furble issue 209 decodes "-177492").
        let z6 = [0x04] + Array(repeating: 0, count: 8) + Array("-177492".utf8) + [0x00]
        #expect(try Nikon.PairingMessage(decoding: z6).serialText == "-177492")
        #expect(Nikon.PairingMessage.serial(Array(z6[9...])).bytes == z6)
    }

    @Test func smartphoneStagesAndOddLengthsAreRefused() {
        // Stage 2 of a smartphone pairing carries a timestamp and hashes: not remote mode.
        var smart = [UInt8](repeating: 0, count: 17)
        smart[0] = 2
        smart[3] = 0x5A
        #expect(throws: MalformedMessage.self) { try Nikon.PairingMessage(decoding: smart) }
        #expect(throws: MalformedMessage.length(.nikon, of: "pairing message", expected: 17, got: 16)) {
            try Nikon.PairingMessage(decoding: Array(repeating: 0, count: 16))
        }
        #expect(throws: MalformedMessage.self) { try Nikon.PairingMessage(decoding: [0x05] + Array(repeating: 0, count: 16)) }
    }

    @Test func buttonsEncodeAndDecode() throws {
        #expect(Nikon.RemoteButton.press.bytes == (try vectors.bytes("shutter-press")))
        #expect(Nikon.RemoteButton.release.bytes == (try vectors.bytes("shutter-release")))
        #expect(try Nikon.RemoteButton(decoding: vectors.bytes("shutter-press")) == .press)
        #expect(try Nikon.RemoteButton(decoding: [0x05, 0x02]) == Nikon.RemoteButton(mode: .playback, pressed: true))
        #expect(throws: MalformedMessage.self) { try Nikon.RemoteButton(decoding: [0x02, 0x01]) }
        #expect(throws: MalformedMessage.self) { try Nikon.RemoteButton(decoding: [0x02]) }
    }

    @Test func advertisementsSayWhetherTheCameraIsPairing() throws {
        let pairing = AdvertisementData(name: "Z 6_3", serviceUUIDs: [Nikon.service])
        #expect(Nikon.recognize(pairing) == RecognizedCamera(brand: .nikon, model: "Z 6_3", pairing: .open, howToPair: Nikon.howToPair))
        let data = try vectors.bytes("advertisement-waiting-for-remote")
        #expect(data.prefix(2) == [0x99, 0x03])
        let waiting = AdvertisementData(name: "Z 6_3", serviceUUIDs: [Nikon.service], manufacturerData: [Nikon.companyID: Array(data.dropFirst(2))])
        let camera = try #require(Nikon.recognize(waiting))
        #expect(camera.pairing == .closed)
        #expect(camera.token == [0x01, 0xA0, 0xDD, 0x0A])
        #expect(Nikon.manufacturerData(waitingFor: try Nikon.DeviceID(bytes: camera.token)) == Array(data.dropFirst(2)))
        #expect(CameraAdvertisement.recognize(waiting)?.brand == .nikon)
        #expect(Nikon.recognize(AdvertisementData(name: "Z 6_3", manufacturerData: [Nikon.companyID: Array(data.dropFirst(2))])) == nil)
        #expect(Nikon.recognize(AdvertisementData(serviceUUIDs: [Nikon.service], manufacturerData: [Nikon.companyID: [1]]))?.pairing == .unknown)
    }

    @Test func deviceIDsStartWithOne() throws {
        #expect(Nikon.DeviceID.standard.bytes.first == 0x01)
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        for _ in 0..<100 { #expect(Nikon.DeviceID.random(using: &generator).bytes.first == 0x01, "\(seed)") }
        #expect(try Nikon.DeviceID(bytes: [0x01, 0xA0, 0xDD, 0x0A]).description == "01a0dd0a")
        #expect(throws: MalformedMessage.self) { try Nikon.DeviceID(bytes: [0x01]) }
    }

    /// Bytes from the radio never trap a parser, and whatever decodes encodes back to itself.
    @Test func randomBytesNeverTrap() throws {
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        for round in 0..<3000 {
            let length = round % 3 == 0 ? 17 : Int.random(in: 0...40, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length == 17 { bytes[0] = UInt8(round % 6) }
            for characteristic in [Nikon.pairing, Nikon.remoteIndication, Nikon.shutter] {
                _ = try? Nikon.Indication.parse(bytes, on: characteristic)
            }
            if let message = try? Nikon.PairingMessage(decoding: bytes) { #expect(message.bytes == bytes, "\(seed)") }
            if let button = try? Nikon.RemoteButton(decoding: bytes) { #expect(button.bytes == bytes, "\(seed)") }
            _ = Nikon.recognize(AdvertisementData(serviceUUIDs: [Nikon.service], manufacturerData: [Nikon.companyID: bytes]))
        }
    }
}
