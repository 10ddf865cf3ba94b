public import CameraProtocols
public import SimulatedCameras
import UnleashedKit

extension FakeBlueZ {
    /// Where a simulated camera's body comes from: a brand's body in ``SimulatedCameraCatalog``,
    /// or any body a test makes.
    public struct CameraSource: Sendable {
        /// What the camera is called in logs and errors: the brand's name, or the test's.
        public let name: String
        let make: @Sendable (String) -> any SimulatedCameraBody

        /// A body of its own, made at the address the fake gives it.
        public init(name: String, body: @escaping @Sendable (_ address: String) -> any SimulatedCameraBody) {
            self.name = name
            make = body
        }

        /// The catalogue's body of `brand`.
        public static func brand(_ brand: CameraBrand) -> CameraSource {
            CameraSource(name: brand.displayName) { SimulatedCameraCatalog.body(of: brand, address: $0) }
        }

        /// The catalogue's body of the brand named `text` (`gopro`, `sony`, ...), as
        /// `unleashed-sim bluez --camera` takes it.
        ///
        /// - Throws: ``FakeBlueZError/invalidConfiguration(_:)`` naming the brands there are.
        public static func brand(named text: String) throws(FakeBlueZError) -> CameraSource {
            guard let brand = CameraBrand(rawValue: text.lowercased()) else {
                throw .invalidConfiguration("no camera brand '\(text)'; there are: \(CameraBrand.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return Self.brand(brand)
        }
    }
}

/// One simulated camera in range of the fake adapters: its body, and what pairing with it asks.
struct SimulatedCamera: Sendable {
    let index: Int
    let body: any SimulatedCameraBody
    /// The six digits pairing shows or asks for in `confirm` and `passkey` mode.
    let passkey: UInt32

    var address: String { body.address }
    /// A strong signal, weakening with the index, a little stronger than the modules'.
    var baseRSSI: Int { -48 - 5 * index }

    static func make(_ configuration: FakeBlueZ.Configuration) -> [SimulatedCamera] {
        var passkeys = SplitMix64(seed: configuration.seed ^ 0x4341_4D45)
        var cameras: [SimulatedCamera] = []
        for (index, source) in configuration.cameras.enumerated() {
            let body = source.make(SimulatedCameraCatalog.address(index: index))
            cameras.append(SimulatedCamera(index: index, body: body, passkey: UInt32(passkeys.next() % 1_000_000)))
        }
        return cameras
    }
}

/// What the fake last heard a camera advertise, fetched from its actor before each round of
/// advertisements and after each control call that changes it.
struct CameraSighting: Sendable {
    let advertisement: AdvertisementData
    /// False while it sleeps or is out of range: it sends no advertisements and takes no connection.
    let advertising: Bool
}
