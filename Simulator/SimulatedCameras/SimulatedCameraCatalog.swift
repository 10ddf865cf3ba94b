public import CameraProtocols

/// The simulated body of each brand, for `unleashed-sim bluez --camera BRAND` and
/// `--demo-camera BRAND`.
public enum SimulatedCameraCatalog {
    /// A new body of `brand` at `address`.
    public static func body(of brand: CameraBrand, address: String) -> any SimulatedCameraBody {
        switch brand {
        case .gopro: GoProBody(address: address)
        case .sony: SonyBody(address: address)
        case .canon: CanonBody(address: address)
        case .fujifilm: FujifilmBody(address: address)
        case .nikon: NikonBody(address: address)
        }
    }

    /// An address for the `index`th simulated camera (from 0): a random static address, as
    /// cameras use, distinct from the simulated modules' `F0:5E:D0:…`.
    public static func address(index: Int) -> String {
        let low = index + 1
        return "C0:CA:4E:00:" + hex(UInt8(truncatingIfNeeded: low >> 8)) + ":" + hex(UInt8(truncatingIfNeeded: low))
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
