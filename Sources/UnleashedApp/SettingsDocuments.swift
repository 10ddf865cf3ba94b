public import CameraKit
public import GPhoto2
public import UnleashedKit
public import UnleashedProtocol

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
