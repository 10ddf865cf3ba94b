public import CameraProtocols

/// The driver of each brand.
public enum RemoteDrivers {
    /// The driver for `brand`'s cameras, with the identity this computer presents to them;
    /// nil for a brand without a driver.
    public static func driver(for brand: CameraBrand) -> (any CameraRemoteDriver)? {
        switch brand {
        default: nil
        }
    }
}
