public import CameraProtocols
public import GATT

/// A simulated Nikon camera in remote (ML-L7) mode.
///
/// While pairing it advertises its service alone and pairs with whichever remote identifies
/// itself; after that it leaves pairing and advertises the paired remote's device ID, and it
/// ignores the handshake of any other remote (no answer, as the camera does). Each button press
/// in shutter mode takes a picture. Button writes before the handshake, or with the camera's
/// remote switch off, are refused with ATT "write not permitted".
///
/// It serves the remote mode's whole published table (``Nikon/services``). No source gives a
/// value for R1 or R2 (2080, 2086) or says what W1 (2082) takes: every read is refused with ATT
/// "read not permitted", and writes to W1 with "write not permitted".
public actor NikonBody: BasicsBackedBody {
    public nonisolated let brand = CameraBrand.nikon
    public nonisolated let model: String
    public nonisolated let address: String
    public nonisolated var services: [GATTServiceLayout] { Nikon.services }
    public nonisolated var requiresBond: Bool { Nikon.requiresBond }

    private enum Stage { case waiting, acknowledged, ready }

    public var basics: BodyBasics
    /// The bytes the camera sends at stage 4.
    private let serial: [UInt8]
    private var stage = Stage.waiting
    private var pressed = false
    /// The remote this camera answers.
    public private(set) var pairedRemote: Nikon.DeviceID?

    /// - Parameters:
    ///   - pairedRemote: the remote it paired with before; with pairing closed it answers only this one.
    ///   - serial: up to 8 ASCII bytes it sends at the handshake's last stage.
    public init(address: String = "C0:CA:4E:00:00:05", model: String = "Z 6_3", pairedRemote: Nikon.DeviceID? = nil,
                pairingOpen: Bool = true, serial: String = "3012345") {
        self.address = address
        self.model = model
        self.pairedRemote = pairedRemote
        let bytes = Array(serial.utf8.prefix(8))
        self.serial = bytes + Array(repeating: 0, count: 8 - bytes.count)
        basics = BodyBasics(pairingOpen: pairingOpen)
    }


    public func advertisement() -> AdvertisementData {
        guard !basics.pairingOpen, let pairedRemote else { return AdvertisementData(name: model, serviceUUIDs: [Nikon.service]) }
        return AdvertisementData(name: model, serviceUUIDs: [Nikon.service],
                                 manufacturerData: [Nikon.companyID: Nikon.manufacturerData(waitingFor: pairedRemote)])
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        basics.record(value, to: characteristic)
        switch characteristic {
        case Nikon.pairing:
            let message: Nikon.PairingMessage
            do { message = try Nikon.PairingMessage(decoding: value) } catch { throw .invalidAttributeValueLength }
            answer(message)
        case Nikon.shutter:
            guard stage == .ready, basics.remoteEnabled else { throw .writeNotPermitted }
            let button: Nikon.RemoteButton
            do { button = try Nikon.RemoteButton(decoding: value) } catch { throw .writeNotPermitted }
            if button.mode == .shutter && button.pressed && !pressed { basics.picturesTaken += 1 }
            pressed = button.pressed
        default:
            throw .writeNotPermitted
        }
    }

    /// Moves the handshake on, or says nothing to a message out of turn or from a stranger.
    private func answer(_ message: Nikon.PairingMessage) {
        switch (message, stage) {
        case (.identify(let remote, _), _):
            guard basics.pairingOpen || remote == pairedRemote else { return }
            pairedRemote = remote
            stage = .acknowledged
            basics.send(Nikon.PairingMessage.acknowledge.bytes, on: Nikon.pairing)
        case (.confirm, .acknowledged):
            stage = .ready
            basics.pairingOpen = false
            basics.send(Nikon.PairingMessage.serial(serial).bytes, on: Nikon.pairing)
        default:
            break
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        throw .readNotPermitted
    }

    public func linkStarted() {
        stage = .waiting
    }

    public func linkEnded() {
        pressed = false
    }
}
