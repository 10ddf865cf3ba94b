import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// One simulated Unleashed module in range of the fake adapters: the module itself, the radio
/// that links to it, and what it advertises.
struct SimulatedModule: Sendable {
    let index: Int
    let module: VirtualModule
    let radio: SimulatedRadio
    let info: ModuleInfo
    /// The six digits pairing shows or asks for in `confirm` and `passkey` mode.
    let passkey: UInt32

    /// `F0:5E:D0:00:00:01` for the first: a random static address (top bits set), as modules use.
    var address: String { "F0:5E:D0:00:" + Self.hex(UInt8(truncatingIfNeeded: (index + 1) >> 8)) + ":" + Self.hex(UInt8(truncatingIfNeeded: index + 1)) }
    var serialNumber: String { info.serialNumber }
    /// `Unleashed 0001`: the advertised name ends with the last four characters of the serial (PROTOCOL.md §2).
    var name: String { "Unleashed " + String(serialNumber.suffix(4)) }
    var passkeyText: String { Self.zeroPadded(Int(passkey), width: 6) }

    /// A strong signal that weakens with the module's index, so that modules are told apart.
    var baseRSSI: Int { -52 - 6 * index }

    static func make(_ configuration: FakeBlueZ.Configuration) async -> [SimulatedModule] {
        var passkeys = SplitMix64(seed: configuration.seed ^ 0x5041_5353)
        var modules: [SimulatedModule] = []
        for index in 0..<configuration.modules {
            let module = VirtualModule(camera: VirtualCamera(profile: configuration.profileOverrides[index] ?? configuration.profile),
                                       serialNumber: "SIM" + zeroPadded(index + 1, width: 4),
                                       seed: configuration.seed &+ UInt64(index),
                                       timerDriftPPM: configuration.timerDriftPPM[index] ?? 0)
            let radio = SimulatedRadio(module: module, mtu: configuration.mtu, seed: configuration.seed &+ UInt64(index))
            modules.append(SimulatedModule(index: index, module: module, radio: radio, info: await module.info,
                                           passkey: UInt32(passkeys.next() % 1_000_000)))
        }
        return modules
    }

    static func zeroPadded(_ number: Int, width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// The Device Information service's strings (PROTOCOL.md §1).
    var deviceInformation: [(uuid: String, value: String)] {
        [
            (GATTDatabase.uuid16(0x2A29), "Foolography"),
            (GATTDatabase.uuid16(0x2A24), "Unleashed Simulated"),
            (GATTDatabase.uuid16(0x2A25), info.serialNumber),
            (GATTDatabase.uuid16(0x2A26), info.firmwareVersion),
            (GATTDatabase.uuid16(0x2A27), info.hardwareRevision),
        ]
    }
}
