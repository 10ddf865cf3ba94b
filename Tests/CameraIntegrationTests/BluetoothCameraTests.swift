import BlueZ
import CameraKit
import CameraProtocols
import CameraRemote
import DBus
import FakeBlueZ
import Foundation
import Intervalometer
import SimulatedCameras
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedTestSupport

/// Cameras of each brand behind the fake bluetoothd on a private bus, driven over BlueZ through
/// their own remote protocols by the same code a Raspberry Pi runs: scanned, paired, connected,
/// fired, run on a schedule, lost and found again mid-run.
struct CameraBench {
    let bus: PrivateBus
    let fake: FakeBlueZ
    var busAddress: DBusConnection.Bus { .address(bus.address) }

    /// Retries soon after a loss, so that a test's outage is short.
    ///
    /// Each step waits up to 10 s for the camera's answer, not the 3 s a person gets: under the
    /// whole suite on two cores the fake bluetoothd, in the test process, has stalled for over
    /// 3 s, and a step that timed out "may or may not have run", which these tests cannot count.
    /// A lost answer still fails them, 10 s later.
    static let stepTimeout = Duration.seconds(10)

    static let quickReconnect = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(400), jitter: 0)

    static func start(cameras brands: [CameraBrand], modules: Int = 0) async throws -> CameraBench {
        var configuration = FakeBlueZ.Configuration(modules: modules, timing: .quick)
        configuration.cameras = brands.map(FakeBlueZ.CameraSource.brand)
        let bluez = try await InProcessBlueZ.start(configuration)
        return CameraBench(bus: bluez.bus, fake: bluez.fake)
    }

    /// The address of the `index`th camera configured.
    static func address(_ index: Int) -> String { SimulatedCameraCatalog.address(index: index) }

    func operations() -> ModuleOperations {
        ModuleOperations(adapter: nil, scanTimeout: .seconds(5), bus: busAddress,
                         rememberedFile: FileManager.default.temporaryDirectory.appendingPathComponent("remembered-\(UUID().uuidString).json"))
    }

    /// Pairs the camera (as `unleashed pair` does) and opens it (as `--camera ADDRESS` does).
    func open(_ address: String, name: String? = nil) async throws -> BLECamera {
        // The person opens the camera's pairing mode, as its menu says, before pairing.
        #expect(await fake.setCamera(address: address, pairingOpen: true))
        _ = try await operations().pair(address, answers: PairingAnswers(passkey: nil, confirm: true, ask: nil, note: { _ in }))
        let spec = BluetoothCameraSpec(camera: address, scanTimeout: .seconds(5), reconnect: Self.quickReconnect, stepTimeout: Self.stepTimeout)
        return try await CameraProvider.openBluetoothCamera(spec, name: name, bus: busAddress)
    }

    func pictures(_ address: String) async throws -> Int {
        try #require(await fake.picturesTaken(address: address), "no camera at \(address)")
    }

    func stop() async {
        await fake.stop()
    }
}

/// The operations a brand's remote may lack, in the CLI's words, and how to ask for each.
private let optionalOperations: [(Capabilities, String, @Sendable (any Camera) async throws(CameraError) -> Void)] = [
    (.focus, "focus", { camera throws(CameraError) in _ = try await camera.focus(hold: false) }),
    (.bulb, "bulb", { camera throws(CameraError) in _ = try await camera.bulb(.milliseconds(100)) }),
    (.video, "video", { camera throws(CameraError) in try await camera.startVideo() }),
    (.setTime, "time sync", { camera throws(CameraError) in try await camera.setTime(WallTime(unixMilliseconds: 1_764_000_000_000, utcOffsetMinutes: 60)) }),
    (.geotag, "geotag", { camera throws(CameraError) in try await camera.geotag(GeoPosition(latitude: 52.5, longitude: 13.4, fixTime: 1_764_000_000_000)) }),
]

@Suite struct BluetoothCameraTests {
    /// `unleashed scan` lists the camera with its brand, `unleashed pair` bonds it, `--camera`
    /// connects it, and `shoot` takes a picture the camera counts.
    @Test(arguments: CameraBrand.allCases)
    func scanPairConnectAndShoot(brand: CameraBrand) async throws {
        let bench = try await CameraBench.start(cameras: [brand], modules: 1)
        defer { Task { await bench.stop() } }
        let address = CameraBench.address(0)
        #expect(await bench.fake.setCamera(address: address, pairingOpen: true))
        var seen: [BlueZDevice] = []
        let found = try await bench.operations().scan(for: .seconds(2)) { seen.append($0) }
        #expect(found == 2, "the module and the camera")
        let sighting = try #require(seen.first { $0.address == address })
        #expect(sighting.camera?.brand == brand)
        #expect(sighting.sightingLine.contains(brand.displayName))
        #expect(seen.contains { $0.advertisement != nil }, "the module is listed beside the camera")

        // `unleashed connect` checks the camera (pairing it) and says how to drive it; a camera
        // is not remembered as the default module.
        let operations = bench.operations()
        let connected = try await operations.connect(address, answers: PairingAnswers(passkey: nil, confirm: true, ask: nil, note: { _ in }))
        #expect(connected.brand == brand)
        #expect(connected.text.contains("unleashed --ble-camera \(address)"), "\(connected.text)")
        #expect(!FileManager.default.fileExists(atPath: operations.rememberedFile.path))

        let camera = try await bench.open(address)
        defer { Task { await camera.close() } }
        #expect(camera.identity.capabilities.contains(.shoot))
        let before = try await bench.pictures(address)
        let shot = try await camera.shoot()
        #expect(shot.counter == 1)
        #expect(try await bench.pictures(address) == before + 1)
        // Only a protocol that reports the picture may call the shot confirmed (the simulated
        // Canon speaks the basic remote, which does not).
        let reports: [CameraBrand: Bool] = [.gopro: true, .sony: true, .canon: false, .fujifilm: false, .nikon: false]
        #expect(shot.confirmed == reports[brand], "\(brand)")
    }

    /// A camera that refuses to pair (its pairing window closed) is a refusal, exit 65 with
    /// `pairingRefused`, as for a module: not a permission problem (77).
    @Test func aCameraThatRefusesPairingIsARefusal() async throws {
        let bench = try await CameraBench.start(cameras: [.sony])
        defer { Task { await bench.stop() } }
        let address = CameraBench.address(0)
        #expect(await bench.fake.setCamera(address: address, pairingOpen: false))
        let spec = BluetoothCameraSpec(camera: address, scanTimeout: .seconds(5), pairing: .pair(PairingAgent { _ in .accept }),
                                       reconnect: CameraBench.quickReconnect)
        let error = await #expect(throws: CameraOpenError.self) {
            _ = try await CameraProvider.openBluetoothCamera(spec, bus: bench.busAddress)
        }
        guard case .camera(let refusal)? = error else {
            Issue.record("expected the camera's refusal, got \(String(describing: error))")
            return
        }
        #expect(refusal.code == "pairingRefused" && refusal.exitStatus == 65, "\(refusal.code) \(refusal.exitStatus): \(refusal)")
        #expect(refusal.description.contains("refused pairing"), "\(refusal)")
    }

    /// A brand named against the camera's advertisement is refused at once, naming both, rather
    /// than driven through the wrong protocol ("not paired", again and again).
    @Test func aBrandThatIsNotTheCamerasIsRefusedNamingBoth() async throws {
        let bench = try await CameraBench.start(cameras: [.nikon])
        defer { Task { await bench.stop() } }
        let address = CameraBench.address(0)
        let spec = BluetoothCameraSpec(camera: address, brand: .sony, scanTimeout: .seconds(5), reconnect: CameraBench.quickReconnect)
        let error = await #expect(throws: CameraOpenError.self) {
            _ = try await CameraProvider.openBluetoothCamera(spec, bus: bench.busAddress)
        }
        guard case .camera(let refusal)? = error else {
            Issue.record("expected a usage error, got \(String(describing: error))")
            return
        }
        #expect(refusal.code == "invalidArgument" && refusal.exitStatus == 64)
        #expect(refusal.description.contains("advertises itself as a Nikon, not a Sony"), "\(refusal)")
    }

    /// What the brand's remote lacks is refused before anything is written, naming what it offers.
    @Test(arguments: CameraBrand.allCases)
    func anOperationTheCameraLacksIsRefusedWithWhatItOffers(brand: CameraBrand) async throws {
        let bench = try await CameraBench.start(cameras: [brand])
        defer { Task { await bench.stop() } }
        let camera = try await bench.open(CameraBench.address(0))
        defer { Task { await camera.close() } }
        let offered = camera.identity.capabilities
        let (_, operation, ask) = try #require(optionalOperations.first { !offered.contains($0.0) }, "\(brand) offers everything")
        let writesBefore = await bench.fake.statistics["writeCalls"] ?? 0
        do {
            try await ask(camera)
            Issue.record("\(operation) was accepted by \(brand)")
        } catch {
            #expect(error.description.hasPrefix("\(operation) is not offered by a \(brand.displayName) camera's Bluetooth remote; it offers: shoot"))
            #expect(error.kind == .refused)
        }
        #expect((await bench.fake.statistics["writeCalls"] ?? 0) == writesBefore, "something was written for a refused \(operation)")
        _ = try await camera.settings()
        await #expect(throws: CameraError.settingNotOffered(.iso)) { try await camera.value(of: .iso) }
    }

    /// 30 frames at 400 ms; the camera goes out of range for 1.2 s from frame 6. Every slot has
    /// a record, the outage's slots are missed as not connected, the run goes on after the
    /// camera is back, and every picture taken is one the camera counted. (An attempt made while
    /// it is away fails at the 2 s page timeout; the 8 s after the outage leave a loaded machine
    /// time for the next.)
    @Test(arguments: CameraBrand.allCases)
    func aTimelapseGoesOnAfterTheCameraWasLost(brand: CameraBrand) async throws {
        let bench = try await CameraBench.start(cameras: [brand])
        defer { Task { await bench.stop() } }
        let address = CameraBench.address(0)
        let camera = try await bench.open(address, name: brand.rawValue)
        defer { Task { await camera.close() } }
        let before = try await bench.pictures(address)
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 400, stop: .frames(30)), camera: camera, journal: journal,
                            clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let fake = bench.fake
        let outage = Task {
            for await record in run.records where record.frame == 6 {
                await fake.loseLink(address: address, for: .milliseconds(1200))
                return
            }
        }
        let ending = try await run.start(cameraName: brand.rawValue)
        outage.cancel()
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        let outcomes = frames.map { "\($0.frame) \($0.outcome.rawValue) \($0.error ?? "")" }
        #expect(frames.map(\.frame) == Array(1...30), "every slot has a record")
        let missed = frames.filter { $0.outcome == .skipped && ($0.error ?? "").contains("not connected") }
        #expect(!missed.isEmpty, "the outage was not recorded: \(outcomes)")
        let lastMissed = try #require(missed.map(\.frame).max())
        #expect(frames.contains { $0.frame > lastMissed && $0.outcome == .taken }, "the run did not go on after the camera came back: \(outcomes)")
        // A shot that failed without an answer may have been taken; any other failure was not.
        let taken = frames.filter { $0.outcome == .taken }.count
        let unanswered = frames.filter { $0.outcome == .failed && ($0.error ?? "").contains("may or may not have run") }.count
        let counted = try await bench.pictures(address) - before
        #expect((taken...(taken + unanswered)).contains(counted), "the camera counted \(counted): \(outcomes)")
    }

    /// 20 frames at 400 ms (a Canon remote holds the button 200 ms) with the camera in range
    /// throughout: every slot taken on its absolute deadline, each picture counted by the camera.
    /// Slots a busy machine makes late are shot at once (burst) rather than skipped, so that the
    /// count does not depend on the machine's load; how late they were is for the benchmarks.
    @Test(arguments: CameraBrand.allCases)
    func aTwentyFrameTimelapseRunsOnSchedule(brand: CameraBrand) async throws {
        let bench = try await CameraBench.start(cameras: [brand])
        defer { Task { await bench.stop() } }
        let address = CameraBench.address(0)
        let camera = try await bench.open(address, name: brand.rawValue)
        defer { Task { await camera.close() } }
        let before = try await bench.pictures(address)
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 400, stop: .frames(20), overrun: .burst), camera: camera, journal: journal,
                            clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let ending = try await run.start(cameraName: brand.rawValue)
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...20))
        #expect(frames.allSatisfy { $0.outcome == .taken }, "\(frames.filter { $0.outcome != .taken }.map { "\($0.frame): \($0.error ?? "")" })")
        #expect(frames.allSatisfy { $0.scheduledMs == frames[0].scheduledMs + Int64($0.frame - 1) * 400 }, "slots off the absolute grid")
        #expect(try await bench.pictures(address) - before == 20)
    }

    /// A rig of a GoPro, a Sony, a Canon and a module fires a 10-slot time-lapse: every body has
    /// a record per slot, and each camera counted as many pictures as its records say were taken.
    @Test func aRigMixingBrandsAndAModuleFiresEverySlot() async throws {
        let bench = try await CameraBench.start(cameras: [.gopro, .sony, .canon], modules: 1)
        defer { Task { await bench.stop() } }
        let module = "F0:5E:D0:00:00:01"
        _ = try await bench.operations().pair(module, answers: PairingAnswers(passkey: nil, confirm: true, ask: nil, note: { _ in }))
        var members: [RigCamera] = []
        for (index, brand) in [CameraBrand.gopro, .sony, .canon].enumerated() {
            members.append(RigCamera(name: brand.rawValue, camera: try await bench.open(CameraBench.address(index), name: brand.rawValue)))
        }
        let connection = ModuleConnection(provider: BlueZLinkProvider(bus: bench.busAddress, module: module),
                                          policy: CameraBench.quickReconnect)
        members.append(RigCamera(name: "module", camera: try await ModuleCamera(connection: connection, connectTimeout: .seconds(60), name: "module")))
        let opened = members
        defer { Task { for member in opened { await member.camera.close() } } }
        let rig = try #require(Rig(opened))
        var before: [Int] = []
        for index in 0..<3 { before.append(try await bench.pictures(CameraBench.address(index))) }
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 500, stop: .frames(10), overrun: .burst), rig: rig, journal: journal,
                            clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let ending = try await run.start(cameraName: members.map(\.name).joined(separator: ","))
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        for member in members {
            let own = frames.filter { $0.camera == member.name }
            #expect(own.map(\.frame) == Array(1...10), "\(member.name) lacks slots")
            #expect(own.allSatisfy { $0.outcome == .taken }, "\(member.name): \(own.filter { $0.outcome != .taken }.map { $0.error ?? "" })")
        }
        for index in 0..<3 {
            #expect(try await bench.pictures(CameraBench.address(index)) - before[index] == 10, "\(members[index].name)")
        }
    }
}
