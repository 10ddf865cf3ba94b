import CGPhoto2
import CameraKit
import Foundation
import UnleashedKit

/// One control in a camera's libgphoto2 configuration tree, as read at one moment.
///
/// Which controls exist, their names and their choices depend on the camera model and the
/// libgphoto2 version, so they are always read from the camera, never assumed.
public struct Widget: Hashable, Sendable {
    /// What kind of value the control holds.
    public enum Kind: String, Hashable, Sendable {
        case text, range, toggle, radio, menu, button, date
    }

    /// The full path, e.g. `/main/imgsettings/iso`.
    public var path: String
    /// The camera's description, e.g. "ISO Speed".
    public var label: String
    public var kind: Kind
    /// The value as text: the choice for radio and menu controls, `0`/`1` for toggles, seconds
    /// since 1970 for dates; nil for buttons.
    public var value: String?
    /// The values a radio or menu control offers now (empty for other kinds).
    public var choices: [String]
    /// The bounds of a range control.
    public var range: Range?
    /// The camera reports the control but will not change it.
    public var readOnly: Bool

    /// The values a range control accepts.
    public struct Range: Hashable, Sendable {
        public var lowest: Double
        public var highest: Double
        public var step: Double

        public init(lowest: Double, highest: Double, step: Double) {
            self.lowest = lowest
            self.highest = highest
            self.step = step
        }
    }

    /// The last component of the path, the name libgphoto2 addresses the control by.
    public var name: String { String(path.split(separator: "/").last ?? Substring(path)) }

    public init(path: String, label: String, kind: Kind, value: String?, choices: [String] = [],
                range: Range? = nil, readOnly: Bool = false) {
        self.path = path
        self.label = label
        self.kind = kind
        self.value = value
        self.choices = choices
        self.readOnly = readOnly
        self.range = range
    }

    /// Whether `pathOrName` names this control: its full path (with or without the root
    /// `/main`) or its name.
    func isNamed(_ pathOrName: String) -> Bool {
        guard pathOrName.hasPrefix("/") else { return name == pathOrName }
        return path == pathOrName || path.split(separator: "/").dropFirst().joined(separator: "/")
            == pathOrName.split(separator: "/").joined(separator: "/")
    }
}

/// Reading and writing libgphoto2 widgets (`CameraWidget *`). Owner thread only.
enum WidgetAccess {
    /// Every control below `root`, depth first, with the pointer to write it through.
    static func leaves(of root: OpaquePointer) -> [(widget: Widget, handle: OpaquePointer)] {
        var found: [(Widget, OpaquePointer)] = []
        func walk(_ node: OpaquePointer, parentPath: String) {
            let path = parentPath + "/" + name(of: node)
            var type = GP_WIDGET_WINDOW
            gp_widget_get_type(node, &type)
            if type == GP_WIDGET_WINDOW || type == GP_WIDGET_SECTION {
                for index in 0..<max(0, gp_widget_count_children(node)) {
                    var child: OpaquePointer?
                    if gp_widget_get_child(node, index, &child) == GP_OK, let child { walk(child, parentPath: path) }
                }
            } else {
                found.append((describe(node, path: path), node))
            }
        }
        walk(root, parentPath: "")
        return found
    }

    static func name(of node: OpaquePointer) -> String {
        var name: UnsafePointer<CChar>?
        gp_widget_get_name(node, &name)
        return name.map { String(cString: $0) } ?? ""
    }

    /// The control's state; `path` is where it sits in the tree.
    static func describe(_ node: OpaquePointer, path: String) -> Widget {
        var type = GP_WIDGET_TEXT
        gp_widget_get_type(node, &type)
        var label: UnsafePointer<CChar>?
        gp_widget_get_label(node, &label)
        var readOnly: Int32 = 0
        gp_widget_get_readonly(node, &readOnly)
        let kind = Self.kind(type)
        var widget = Widget(path: path, label: label.map { String(cString: $0) } ?? "", kind: kind,
                            value: value(of: node, kind: kind), readOnly: readOnly != 0)
        switch kind {
        case .radio, .menu:
            widget.choices = (0..<max(0, gp_widget_count_choices(node))).compactMap { index in
                var choice: UnsafePointer<CChar>?
                guard gp_widget_get_choice(node, index, &choice) == GP_OK, let choice else { return nil }
                return String(cString: choice)
            }
        case .range:
            var low: Float = 0, high: Float = 0, step: Float = 0
            if gp_widget_get_range(node, &low, &high, &step) == GP_OK, low <= high {
                widget.range = Widget.Range(lowest: Double(low), highest: Double(high), step: Double(step))
            }
        default:
            break
        }
        return widget
    }

    private static func kind(_ type: CameraWidgetType) -> Widget.Kind {
        switch type {
        case GP_WIDGET_RANGE: .range
        case GP_WIDGET_TOGGLE: .toggle
        case GP_WIDGET_RADIO: .radio
        case GP_WIDGET_MENU: .menu
        case GP_WIDGET_BUTTON: .button
        case GP_WIDGET_DATE: .date
        default: .text
        }
    }

    private static func value(of node: OpaquePointer, kind: Widget.Kind) -> String? {
        switch kind {
        case .text, .radio, .menu:
            var text: UnsafeMutablePointer<CChar>?
            guard gp_widget_get_value(node, &text) == GP_OK, let text else { return nil }
            return String(cString: text)
        case .toggle, .date:
            var number: Int32 = 0
            guard gp_widget_get_value(node, &number) == GP_OK else { return nil }
            return String(number)
        case .range:
            var number: Float = 0
            guard gp_widget_get_value(node, &number) == GP_OK else { return nil }
            return number.rounded() == number ? String(Int(number)) : String(number)
        case .button:
            return nil
        }
    }

    /// A value ready to hand to `gp_widget_set_value`, already checked against the control.
    enum Value: Hashable, Sendable {
        case text(String), integer(Int32), number(Float)
    }

    /// Reads `text` as a value for the control, refusing what it cannot take; nothing is sent.
    static func encode(_ text: String, for widget: Widget) throws(CameraError) -> Value {
        switch widget.kind {
        case .text:
            return .text(text)
        case .radio, .menu:
            guard let choice = widget.choices.first(where: { $0 == text })
                ?? widget.choices.first(where: { $0.caseInsensitiveCompare(text) == .orderedSame }) else {
                throw .invalidArgument("'\(text)' is not offered for \(widget.path); choices: \(widget.choices.joined(separator: ", "))")
            }
            return .text(choice)
        case .toggle:
            switch text.lowercased() {
            case "1", "on", "true", "yes": return .integer(1)
            case "0", "off", "false", "no": return .integer(0)
            default: throw .invalidArgument("\(widget.path) is a switch: write 1 or 0")
            }
        case .range:
            guard let number = Float(text), number.isFinite else {
                throw .invalidArgument("\(widget.path) takes a number")
            }
            if let range = widget.range, !(range.lowest...range.highest).contains(Double(number)) {
                throw .invalidArgument("\(widget.path) takes a number from \(range.lowest) to \(range.highest)")
            }
            return .number(number)
        case .date:
            if text.lowercased() == "now" { return .integer(Int32(clamping: Int(Date().timeIntervalSince1970))) }
            guard let seconds = Int32(text) else {
                throw .invalidArgument("\(widget.path) is a date: write seconds since 1970 or 'now'")
            }
            return .integer(seconds)
        case .button:
            throw .invalidArgument("\(widget.path) is a button; buttons cannot be pressed through this interface")
        }
    }

    /// Puts `value` into the control (not yet sent to the camera); the libgphoto2 result.
    static func assign(_ value: Value, to node: OpaquePointer) -> Int32 {
        let result = switch value {
        case .text(let text): text.withCString { gp_widget_set_value(node, $0) }
        case .integer(let integer): withUnsafePointer(to: integer) { gp_widget_set_value(node, $0) }
        case .number(let number): withUnsafePointer(to: number) { gp_widget_set_value(node, $0) }
        }
        if result == GP_OK { gp_widget_set_changed(node, 1) }
        return result
    }
}
