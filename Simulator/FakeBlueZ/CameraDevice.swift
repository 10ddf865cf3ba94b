import CameraProtocols
import DBus
public import SimulatedCameras

/// The simulated cameras: what their links do when the body acts, and what a test or a person
/// changes about them (sleep, pairing mode, the remote setting).
extension FakeBlueZ {
    /// The addresses of the simulated cameras, in order.
    public var cameraAddresses: [String] { cameras.map(\.address) }

    /// The body of the simulated camera with this address (any case), to steer it directly.
    public func camera(address: String) -> (any SimulatedCameraBody)? {
        simulatedCamera(address)?.body
    }

    /// Puts the camera to sleep (its link drops, it stops advertising and takes no connection)
    /// or wakes it; false when no camera has this address.
    public func setCamera(address: String, asleep: Bool) async -> Bool {
        await change(address, asleep ? "falls asleep" : "wakes") { asleep ? await $0.sleep() : await $0.wake() }
    }

    /// Opens or closes the camera's pairing mode, which its advertisement shows; false when no
    /// camera has this address.
    public func setCamera(address: String, pairingOpen: Bool) async -> Bool {
        await change(address, "pairing mode " + (pairingOpen ? "open" : "closed")) { await $0.setPairingMode(pairingOpen) }
    }

    /// Switches the camera's remote-control menu setting; false when no camera has this address.
    public func setCamera(address: String, remoteEnabled: Bool) async -> Bool {
        await change(address, "remote control " + (remoteEnabled ? "on" : "off")) { await $0.setRemoteEnabled(remoteEnabled) }
    }

    /// Does `action` to the camera's body and shows what it advertises afterwards.
    private func change(_ address: String, _ what: String, _ action: (any SimulatedCameraBody) async -> Void) async -> Bool {
        guard let camera = simulatedCamera(address) else { return false }
        log("camera \(camera.address): \(what)")
        await action(camera.body)
        await refreshCamera(camera)
        return true
    }

    /// The pictures the camera took; nil when no camera has this address.
    public func picturesTaken(address: String) async -> Int? {
        guard let camera = simulatedCamera(address) else { return nil }
        return await camera.body.picturesTaken
    }

    func simulatedCamera(_ address: String) -> SimulatedCamera? {
        cameras.first { $0.address.caseInsensitiveCompare(address) == .orderedSame }
    }

    /// Whether `LoseLink` or the `linkloss` fault has the camera out of range now.
    func cameraOutOfRange(_ index: Int) -> Bool {
        guard let until = camerasAway[index] else { return false }
        return ContinuousClock.now < until
    }

    /// The passkey pairing with this peer shows or asks for.
    func passkey(of peer: Device.Peer) -> UInt32 {
        switch peer {
        case .module(let index): modules[index].passkey
        case .camera(let index): cameras[index].passkey
        }
    }

    /// Shows what the camera advertises now on its device objects.
    private func refreshCamera(_ camera: SimulatedCamera) async {
        refreshCamera(camera.index, await sighting(of: camera))
    }

    /// What the camera advertises now, asked of its actor.
    func sighting(of camera: SimulatedCamera) async -> CameraSighting {
        let connectable = await camera.body.isConnectable
        return CameraSighting(advertisement: await camera.body.advertisement(), advertising: connectable && !cameraOutOfRange(camera.index))
    }

    /// The body dropped the link (it fell asleep, was switched off): as a link loss, without
    /// telling the body, which already forgot the connection.
    func cameraDroppedLink(_ path: String, _ attempt: Int, _ reason: String) {
        guard let device = devices[path], device.attempt == attempt, case .up(.camera(_, let signals)) = device.link else { return }
        count("linkLosses")
        log("\(device.name) dropped the link: \(reason)")
        signals.finish()
        devices[path]?.link = .down
        dropLink(path, connectError: BlueZError.connectionAborted, pairError: BlueZError.authenticationFailed)
    }
}
