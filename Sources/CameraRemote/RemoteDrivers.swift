public import CameraProtocols

/// The driver of each brand.
public enum RemoteDrivers {
    /// The driver for `brand`'s cameras; `recognized` is what the camera advertised, which some
    /// brands' pairing needs (Fujifilm's token tells its pairing generation). Nil when the
    /// advertisement lacks what the brand needs.
    public static func driver(for brand: CameraBrand, recognized: RecognizedCamera?) -> (any CameraRemoteDriver)? {
        switch brand {
        case .gopro: GoProDriver()
        case .sony: SonyDriver()
        case .canon: CanonDriver()
        case .fujifilm: recognized.flatMap { FujifilmDriver(recognized: $0) }
        case .nikon: NikonDriver()
        }
    }

    /// Why ``driver(for:recognized:)`` gave none, in words for the person holding the camera.
    public static func missingDriver(for brand: CameraBrand) -> String {
        switch brand {
        case .fujifilm:
            "the Fujifilm camera showed no pairing token in its advertisement; open its pairing registration "
                + "(MENU → Network/USB settings → Bluetooth settings → Pairing Registration) and try again"
        case .gopro, .sony, .canon, .nikon:
            "the \(brand.displayName) driver needs nothing from the advertisement"
        }
    }
}
