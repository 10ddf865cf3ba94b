public import CameraKit
public import GPhoto2
public import JSON

/// `settings list`: the camera's settings with the values it offers, or with `all` on a camera
/// through libgphoto2, every setting it has by its libgphoto2 path.
public enum SettingsListing: Sendable {
    case settings([SettingDescriptor])
    case widgets([Widget])

    public static func read(all: Bool, on camera: any Camera) async throws(CameraError) -> SettingsListing {
        if all, let tethered = camera as? GPhoto2Camera { return .widgets(try await tethered.widgets()) }
        return .settings(try await camera.settings())
    }

    public var json: JSONValue {
        switch self {
        case .settings(let settings): .array(settings.map(\.json))
        case .widgets(let widgets): .array(widgets.map(\.json))
        }
    }

    /// One line a setting: its name, its value and what is offered (a long list shortened).
    public var lines: [String] {
        switch self {
        case .settings(let settings):
            settings.map { descriptor in
                Self.columns(descriptor.setting.userName, 22, descriptor.value.text, 10,
                             descriptor.readOnly ? "read-only" : Self.offered(descriptor.choices.map(\.text), keepingLast: 2))
            }
        case .widgets(let widgets):
            widgets.map { widget in
                Self.columns(widget.path, 44, widget.value ?? "", 16,
                             widget.readOnly ? "read-only" : Self.offered(widget.choices, keepingLast: 0))
            }
        }
    }

    private static func columns(_ name: String, _ nameWidth: Int, _ value: String, _ valueWidth: Int, _ rest: String) -> String {
        name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + value.padding(toLength: valueWidth, withPad: " ", startingAt: 0)
            + rest
    }

    /// Every choice, or for more than eight the first three, the last `keepingLast` and the count.
    private static func offered(_ choices: [String], keepingLast: Int) -> String {
        guard choices.count > 8 else { return choices.joined(separator: ", ") }
        let last = keepingLast > 0 ? " \(choices.suffix(keepingLast).joined(separator: ", "))" : ""
        return "\(choices.prefix(3).joined(separator: ", ")) ...\(last) (\(choices.count) values)"
    }
}
