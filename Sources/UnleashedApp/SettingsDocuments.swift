public import CameraKit
public import CommandCore
public import GPhoto2
public import JSON
public import UnleashedKit

extension SettingDescriptor {
    /// The setting as `settings list --json` shows it.
    public var json: JSONValue {
        ["setting": .string(setting.userName), "value": .string(value.text),
         "choices": .array(choices.map { .string($0.text) }), "readOnly": .bool(readOnly)]
    }
}

extension Widget {
    /// A libgphoto2 setting as `settings --json` shows it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "setting": .string(path), "label": .string(label),
            "choices": .array(choices.map(JSONValue.string)), "readOnly": .bool(readOnly),
        ]
        members["value"] = value.map(JSONValue.string)
        return .object(members)
    }
}

/// A change of one setting on every camera of a rig: the setting named and its value read
/// before any camera is asked, then all cameras changed or none.
public struct SettingsRigChange: Sendable {
    public var setting: SettingID
    /// Each camera's name and the value in effect after the change.
    public var applied: [(name: String, inEffect: SettingValue)]

    public static func apply(_ name: String, _ text: String, on rig: Rig) async throws(CameraFailure) -> SettingsRigChange {
        guard let setting = SettingID(userName: name) else {
            throw CameraFailure(code: "unknownSetting",
                                "a rig's settings are the module settings (\(SettingID.userNames.joined(separator: ", "))), not '\(name)'",
                                status: .usage)
        }
        guard let wanted = SettingValue(setting: setting, text: text) else { throw CameraFailure(CameraError.unreadableValue(setting, text)) }
        do throws(RigError) {
            return SettingsRigChange(setting: setting, applied: try await rig.set(wanted))
        } catch {
            throw CameraFailure(error)
        }
    }

    /// The `--json` document: the setting and each camera's value.
    public var json: JSONValue {
        ["setting": .string(setting.userName),
         "cameras": .array(applied.map { ["camera": .string($0.name), "value": .string($0.inEffect.text)] })]
    }
}

/// One setting of one camera, read or changed: a module setting by its name, or, on a camera
/// tethered through libgphoto2, any other setting by its path or name.
public enum SettingsAnswer: Sendable {
    /// A setting every backend has, and its value in effect.
    case setting(SettingID, SettingValue)
    /// A libgphoto2 setting.
    case widget(Widget)

    /// Reads the setting `name` from `camera`.
    public static func read(_ name: String, on camera: any Camera) async throws(CameraError) -> SettingsAnswer {
        guard let setting = SettingID(userName: name) else { return .widget(try await tethered(camera, name).widget(name)) }
        return .setting(setting, try await camera.value(of: setting))
    }

    /// Changes the setting `name` of `camera` to the value `text`, written as the camera shows it.
    public static func change(_ name: String, to text: String, on camera: any Camera) async throws(CameraError) -> SettingsAnswer {
        guard let setting = SettingID(userName: name) else { return .widget(try await tethered(camera, name).setWidget(name, to: text)) }
        return .setting(setting, try await camera.set(try camera.parse(text, for: setting)))
    }

    /// A name that is not a module setting is a libgphoto2 setting, which only a tethered camera has.
    private static func tethered(_ camera: any Camera, _ name: String) throws(CameraError) -> GPhoto2Camera {
        guard let tethered = camera as? GPhoto2Camera else { throw .unknownSetting(name) }
        return tethered
    }

    /// The `--json` document.
    public var json: JSONValue {
        switch self {
        case .setting(let setting, let value): ["setting": .string(setting.userName), "value": .string(value.text)]
        case .widget(let widget): widget.json
        }
    }
}
