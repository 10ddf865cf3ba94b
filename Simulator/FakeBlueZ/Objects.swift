import DBus

/// The exported object tree: what `GetManagedObjects`, `Properties` and `Introspect` answer,
/// and the signals that announce every change to it.
extension FakeBlueZ {
    static let standardInterfaces = [InterfaceSpec.introspectable.name, InterfaceSpec.properties.name]

    /// BlueZ's gdbus lists the two standard interfaces of every object, with no properties.
    func withStandardInterfaces(_ interfaces: [String: [String: DBusValue]]) -> [String: [String: DBusValue]] {
        var all = interfaces
        for name in Self.standardInterfaces { all[name] = [:] }
        return all
    }

    /// Adds an object and announces it with `InterfacesAdded`.
    func export(_ path: String, _ interfaces: [String: [String: DBusValue]]) {
        let all = withStandardInterfaces(interfaces)
        objects[path] = all
        emitInterfacesAdded(path, all)
    }

    func emitInterfacesAdded(_ path: String, _ interfaces: [String: [String: DBusValue]]) {
        emit(path: "/", interface: InterfaceSpec.objectManager.name, member: "InterfacesAdded",
             [.objectPath(path), Self.interfacesValue(interfaces)])
    }

    /// Removes an object and announces it with `InterfacesRemoved`.
    func unexport(_ path: String) {
        guard let interfaces = objects.removeValue(forKey: path) else { return }
        emit(path: "/", interface: InterfaceSpec.objectManager.name, member: "InterfacesRemoved",
             [.objectPath(path), .strings(interfaces.keys.sorted())])
    }

    /// Changes properties and announces those that changed with `PropertiesChanged`; `announceAll`
    /// announces them even when equal, as BlueZ does for every notification.
    func update(_ path: String, _ interface: String, _ changes: [String: DBusValue], invalidating: [String] = [],
                announceAll: Bool = false) {
        guard var properties = objects[path]?[interface] else { return }
        var changed: [String: DBusValue] = [:]
        for (name, value) in changes where announceAll || properties[name] != value {
            properties[name] = value
            changed[name] = value
        }
        let invalidated = invalidating.filter { properties.removeValue(forKey: $0) != nil }
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        objects[path]?[interface] = properties
        emit(path: path, interface: InterfaceSpec.properties.name, member: "PropertiesChanged",
             [.string(interface), .properties(changed), .strings(invalidated)])
    }

    /// Every signal `org.bluez` sends goes out here, counted (`signals`).
    private func emit(path: String, interface: String, member: String, _ body: [DBusValue]) {
        guard let bluez else { return }
        count("signals")
        bluez.emit(path: path, interface: interface, member: member, body)
    }

    static func interfacesValue(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
        .array(element: "{sa{sv}}", interfaces.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .properties($0.value)) })
    }

    // MARK: - Dispatch

    /// Answers one call to `org.bluez`: finds the object, the interface and the method with this
    /// exact signature, or answers as libdbus and gdbus would.
    func handleBlueZ(_ call: DBusIncomingCall) async {
        count("bluezCalls")
        let message = call.message
        let path = message.path ?? ""
        let interfaces: Set<String>? = path == "/"
            ? [InterfaceSpec.objectManager.name, InterfaceSpec.introspectable.name]
            : objects[path].map { Set($0.keys) }
        if interfaces == nil, message.interface == InterfaceSpec.introspectable.name, message.member == "Introspect",
           message.signature.isEmpty, !children(of: path).isEmpty {
            // libdbus answers for the nodes between registered paths.
            return call.reply([.string(introspection(of: path))])
        }
        guard let interfaces else { return call.fail(BlueZError.unhandled(message, objectExists: false)) }
        guard let name = message.interface, interfaces.contains(name), let spec = InterfaceSpec.all[name],
              let method = spec.method(message.member ?? ""), method.arguments == message.signature else {
            return call.fail(BlueZError.unhandled(message, objectExists: true))
        }
        let body = message.body
        switch (name, method.name) {
        case (InterfaceSpec.objectManager.name, _): call.reply([managedObjects()])
        case (InterfaceSpec.introspectable.name, _): call.reply([.string(introspection(of: path))])
        case (InterfaceSpec.properties.name, "Get"): getProperty(call, path, body[0].stringValue ?? "", body[1].stringValue ?? "")
        case (InterfaceSpec.properties.name, "GetAll"): getAllProperties(call, path, body[0].stringValue ?? "")
        case (InterfaceSpec.properties.name, _): setProperty(call, path, body[0].stringValue ?? "", body[1].stringValue ?? "", body[2])
        case (InterfaceSpec.agentManager.name, _): handleAgentManager(call, method.name)
        case (InterfaceSpec.adapter.name, _): handleAdapter(call, path, method.name)
        case (InterfaceSpec.device.name, _): handleDevice(call, path, method.name)
        case (InterfaceSpec.gattCharacteristic.name, _): await handleCharacteristic(call, path, method.name)
        default: call.fail(BlueZError.unhandled(message, objectExists: true))
        }
    }

    func handle(_ incoming: Incoming) async {
        switch incoming {
        case .departure(let name):
            clientLeft(name)
        case .call(let call, from: .control):
            await handleControl(call)
        case .call(let call, from: .bluez(let incarnation)):
            // A call that reached an earlier bluetoothd dies with it.
            guard incarnation == self.incarnation, bluez != nil else {
                return call.fail(DBusError(name: DBusError.noReplyName, message: "bluetoothd restarted"))
            }
            await handleBlueZ(call)
        }
    }

    private func managedObjects() -> DBusValue {
        .array(element: "{oa{sa{sv}}}", objects.sorted { $0.key < $1.key }.map {
            .dictEntry(.objectPath($0.key), Self.interfacesValue($0.value))
        })
    }

    // MARK: - Properties

    private func getProperty(_ call: DBusIncomingCall, _ path: String, _ interface: String, _ name: String) {
        guard let properties = objects[path]?[interface] else { return call.fail(BlueZError.noSuchInterface(interface)) }
        guard let value = properties[name] else { return call.fail(BlueZError.noSuchProperty(name)) }
        call.reply([.variant(value)])
    }

    private func getAllProperties(_ call: DBusIncomingCall, _ path: String, _ interface: String) {
        guard let properties = objects[path]?[interface] else { return call.fail(BlueZError.noSuchInterface(interface)) }
        call.reply([.properties(properties)])
    }

    private func setProperty(_ call: DBusIncomingCall, _ path: String, _ interface: String, _ name: String, _ value: DBusValue) {
        guard let properties = objects[path]?[interface] else { return call.fail(BlueZError.noSuchInterface(interface)) }
        guard properties[name] != nil else { return call.fail(BlueZError.noSuchProperty(name)) }
        guard let type = InterfaceSpec.all[interface]?.writable[name] else { return call.fail(BlueZError.propertyReadOnly) }
        let inner = value.unwrapped
        guard inner.signature == type else { return call.fail(BlueZError.wrongPropertyType(inner.signature)) }
        switch interface {
        case InterfaceSpec.adapter.name: setAdapterProperty(path, name, inner)
        case InterfaceSpec.device.name: setDeviceProperty(path, name, inner)
        default: return call.fail(BlueZError.propertyReadOnly)
        }
        call.reply()
    }

    // MARK: - Introspection

    /// The names of the nodes directly below `path`.
    private func children(of path: String) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names: Set<String> = []
        for object in objects.keys where object.hasPrefix(prefix) {
            if let name = object.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(name)) }
        }
        return names.sorted()
    }

    /// Introspection XML: the object's interfaces with their methods and properties, and its children.
    func introspection(of path: String) -> String {
        var names = objects[path].map { Array($0.keys) } ?? []
        if path == "/" { names = [InterfaceSpec.objectManager.name, InterfaceSpec.introspectable.name] }
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        for name in names.sorted() {
            xml += "  <interface name=\"\(name)\">\n" + Self.methodsXML(InterfaceSpec.all[name])
            for (property, value) in (objects[path]?[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let access = InterfaceSpec.all[name]?.writable[property] == nil ? "read" : "readwrite"
                xml += "    <property name=\"\(property)\" type=\"\(value.signature)\" access=\"\(access)\"/>\n"
            }
            xml += "  </interface>\n"
        }
        for child in children(of: path) { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// The `<method>` elements of an interface.
    static func methodsXML(_ spec: InterfaceSpec?) -> String {
        var xml = ""
        for method in spec?.methods ?? [] {
            xml += "    <method name=\"\(method.name)\">\n"
            for type in completeTypes(method.arguments) { xml += "      <arg type=\"\(type)\" direction=\"in\"/>\n" }
            for type in completeTypes(method.returns) { xml += "      <arg type=\"\(type)\" direction=\"out\"/>\n" }
            xml += "    </method>\n"
        }
        return xml
    }

    /// Splits a signature into its complete types: `aya{sv}` into `ay` and `a{sv}`.
    static func completeTypes(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }
}
