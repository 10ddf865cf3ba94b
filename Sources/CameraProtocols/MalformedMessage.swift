/// Bytes from a camera that are not a message of its protocol: a packet, notification or value
/// the codec cannot read. They come from the radio, so every parser throws this instead of
/// trusting them.
public struct MalformedMessage: Error, Hashable, Sendable, CustomStringConvertible {
    /// Whose protocol the bytes broke.
    public var brand: CameraBrand
    public var reason: String

    public init(_ brand: CameraBrand, _ reason: String) {
        self.brand = brand
        self.reason = reason
    }

    /// A message of the wrong length.
    public static func length(_ brand: CameraBrand, of name: String, expected: Int, got: Int) -> MalformedMessage {
        MalformedMessage(brand, "a \(name) has \(expected) bytes, not \(got)")
    }

    /// Bytes that are no known `name`.
    public static func unknown(_ brand: CameraBrand, of name: String, _ bytes: [UInt8]) -> MalformedMessage {
        MalformedMessage(brand, "unknown \(name): " + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " "))
    }

    public var description: String { "malformed \(brand.displayName) message: \(reason)" }
}
