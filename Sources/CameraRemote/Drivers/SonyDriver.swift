public import CameraKit
public import CameraProtocols
import Foundation
public import GATT

/// Drives a Sony camera through its Bluetooth remote (``Sony``): shoot, focus, bulb (the full
/// press held), video and geotags. Every picture is confirmed by the camera's shutter-active
/// notification, and every focus by its focus-acquired notification.
///
/// The camera must be bonded with this computer and have MENU → Network → Bluetooth Rmt Ctrl
/// set to On; with it off the camera refuses each press with ATT error `0x90`, which
/// ``explain(_:during:)`` turns into the menu item to change.
public struct SonyDriver: CameraRemoteDriver {
    public var remoteProtocol: any CameraRemoteProtocol.Type { Sony.self }
    public var capabilities: Capabilities { [.shoot, .focus, .bulb, .video, .geotag] }
    /// The camera reports its shutter active.
    public var confirmsShots: Bool { true }
    public var subscriptions: [GATTCharacteristicID] { [Sony.status] }

    /// How long a half-press waits for focus before it counts as failed (a dark or featureless
    /// scene can keep the camera hunting).
    public var focusTimeout: Duration
    /// The local time zone's offsets at a Unix time in milliseconds, sent with each geotag to
    /// cameras that take them.
    public var timeZone: @Sendable (UInt64) -> Sony.TimeZoneOffsets

    /// The ATT error a Sony camera refuses remote writes with while its remote setting is off.
    public static let remoteDisabled = ATTError(0x90)

    public init(focusTimeout: Duration = .seconds(3),
                timeZone: @escaping @Sendable (UInt64) -> Sony.TimeZoneOffsets = SonyDriver.localTimeZone) {
        self.focusTimeout = focusTimeout
        self.timeZone = timeZone
    }

    /// This computer's time zone at `unixMilliseconds`: standard offset and daylight saving apart.
    public static func localTimeZone(at unixMilliseconds: UInt64) -> Sony.TimeZoneOffsets {
        let date = Date(timeIntervalSince1970: Double(unixMilliseconds) / 1000)
        let zone = TimeZone.current
        let daylight = Int(zone.daylightSavingTimeOffset(for: date)) / 60
        let total = zone.secondsFromGMT(for: date) / 60
        return Sony.TimeZoneOffsets(utcOffsetMinutes: Int16(total - daylight), daylightSavingMinutes: Int16(daylight))
    }

    /// Reads the model from the camera's device name, when it offers one.
    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        guard await remote.link.offers(Sony.deviceName) else { return nil }
        do {
            let name = try await remote.read(Sony.deviceName, for: "reading the camera's name")
            let model = String(decoding: name.filter { $0 != 0 }, as: UTF8.self)
            return model.isEmpty ? nil : model
        } catch .device(let failure) where failure.kind != .disconnected {
            return nil
        }
    }

    public func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal] {
        guard characteristic == Sony.status, let status = try? Sony.Status(decoding: message) else { return [] }
        switch status {
        case .focus(let acquired): return [.focus(acquired)]
        case .shutter(let active): return [.shutterActive(active)]
        case .recording(let on): return [.recording(on)]
        }
    }

    public func explain(_ error: ATTError, during operation: String) -> CameraError? {
        guard error == Self.remoteDisabled else { return nil }
        if operation == "geotag" {
            return .device(DeviceFailure(.permissionDenied,
                "the Sony camera refused the geotag: another phone or remote may hold its location link, or its "
                    + "location information link setting is off; unpair the other device or switch the setting on"))
        }
        return .device(DeviceFailure(.permissionDenied,
            "the Sony camera refused \(operation) because its Bluetooth remote is switched off; on the camera set "
                + "MENU → Network → Bluetooth Rmt Ctrl → On (the camera must also be paired with this computer)"))
    }

    /// Half-press, full press, and release once the camera reports its shutter active; a
    /// picture the camera does not report within the step timeout is ``CameraError/shotNotReported(after:)``.
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        try await pressShutter(remote, for: "shoot")
        try await send(Sony.releaseShutter, remote, for: "shoot")
    }

    /// Half-presses and waits for the camera's focus report; without one within ``focusTimeout``
    /// the result is ``FocusResult/failed`` and the button is let go.
    public func focus(_ remote: RemoteContext, hold: Bool) async throws(CameraError) -> FocusResult {
        let acquired = await remote.expect(Sony.status) { Self.status($0) == .focus(acquired: true) }
        do {
            try await send([.press(.halfPress)], remote, for: "focus")
        } catch {
            await acquired.cancel()
            throw error
        }
        var result = FocusResult.acquired
        do {
            _ = try await acquired.wait(for: "focus", timeout: focusTimeout)
        } catch .timedOut {
            result = .failed
        }
        if !hold || result == .failed {
            try await send([.release(.halfPress)], remote, for: "focus")
        }
        return result
    }

    public func release(_ remote: RemoteContext) async throws(CameraError) {
        try await send([.release(.halfPress)], remote, for: "releasing the shutter button")
    }

    /// Holds the full press until ``closeShutter(_:)``: in the camera's bulb mode, the exposure.
    public func openShutter(_ remote: RemoteContext) async throws(CameraError) {
        try await pressShutter(remote, for: "bulb")
    }

    public func closeShutter(_ remote: RemoteContext) async throws(CameraError) {
        try await send(Sony.releaseShutter, remote, for: "bulb")
    }

    /// Record toggles; the camera's recording report confirms the start.
    public func startVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await toggleRecording(remote, expecting: true, for: "starting video")
    }

    public func stopVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await toggleRecording(remote, expecting: false, for: "stopping video")
    }

    /// Takes the location feature, then writes the fix, with the time zone when the camera's
    /// location format asks for one.
    public func geotag(_ remote: RemoteContext, _ position: GeoPosition) async throws(CameraError) {
        guard await remote.link.offers(Sony.locationFix) else {
            throw .device(DeviceFailure(.unsupported, "this Sony camera offers no location service for geotags; "
                + "it may need a firmware update or take locations only from Sony's app"))
        }
        // A camera that does not say takes the time zone, as current bodies do.
        let format = try? await remote.read(Sony.locationFormat, for: "geotag")
        let includesZone = format.flatMap { try? Sony.LocationFormat(decoding: $0) }?.includesTimeZone ?? true
        try await remote.write(Sony.locationOn, to: Sony.locationLock, for: "geotag")
        try await remote.write(Sony.locationOn, to: Sony.locationEnable, for: "geotag")
        let fix = Sony.LocationFix(position, timeZone: includesZone ? timeZone(position.fixTime) : nil)
        try await remote.write(fix.bytes, to: Sony.locationFix, for: "geotag")
    }

    // MARK: -

    private static func status(_ message: [UInt8]) -> Sony.Status? { try? Sony.Status(decoding: message) }

    private func send(_ commands: [Sony.ButtonCommand], _ remote: RemoteContext, for operation: String) async throws(CameraError) {
        for command in commands {
            try await remote.write(command.bytes, to: Sony.command, for: operation)
        }
    }

    /// Presses half and full and waits for the shutter report; the buttons are let go when the
    /// press fails or the report does not come.
    private func pressShutter(_ remote: RemoteContext, for operation: String) async throws(CameraError) {
        let active = await remote.expect(Sony.status) { Self.status($0) == .shutter(active: true) }
        do {
            try await send(Sony.pressShutter, remote, for: operation)
            _ = try await active.wait(for: operation)
        } catch {
            await active.cancel()
            try? await send(Sony.releaseShutter, remote, for: operation)
            if case .timedOut(_, let after) = error { throw .shotNotReported(after: after) }
            throw error
        }
    }

    private func toggleRecording(_ remote: RemoteContext, expecting recording: Bool, for operation: String) async throws(CameraError) {
        let report = await remote.expect(Sony.status) { Self.status($0) == .recording(recording) }
        do {
            try await send([.press(.record), .release(.record)], remote, for: operation)
            _ = try await report.wait(for: operation)
        } catch {
            await report.cancel()
            throw error
        }
    }
}
