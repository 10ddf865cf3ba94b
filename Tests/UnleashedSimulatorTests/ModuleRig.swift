import Synchronization
import UnleashedKit
import UnleashedProtocol
@testable import UnleashedSimulator
import UnleashedTestSupport

/// A module on a test clock with a raw client that has said hello: time moves only when a test
/// moves it, and after each move the module has handled everything that was due.
final class ModuleRig: Sendable {
    let clock = RunClock()
    let module: VirtualModule
    let client: RawClient
    private let lastID = Mutex<UInt16>(100)

    /// The host's wall clock, fixed.
    static let utc: UInt64 = 1_700_000_000_000

    init(camera: VirtualCamera = VirtualCamera(profile: .nikonLike), scene: SceneLight? = nil, seed: UInt64 = 0,
         timerDriftPPM: Double = 0) async throws {
        module = VirtualModule(camera: camera, clock: clock, utcNow: { Self.utc }, scene: scene, seed: seed, timerDriftPPM: timerDriftPPM)
        client = await RawClient(module)
        try await client.hello()
    }

    /// A body like `profile` with some figures changed, for tests that need a small buffer or a
    /// hungry battery.
    static func camera(_ profile: CameraProfile = .nikonLike, _ change: (inout CameraProfile) -> Void) -> VirtualCamera {
        var profile = profile
        change(&profile)
        return VirtualCamera(profile: profile)
    }

    func nextID() -> UInt16 {
        lastID.withLock { id in
            id &+= 1
            return id
        }
    }

    /// Sends a request and waits for its response (the module must answer without the clock
    /// moving).
    func request(_ opcode: Opcode, _ fields: Fields = Fields()) async throws -> Message {
        try await client.request(opcode, id: nextID(), fields)
    }

    /// Sends a request without waiting for the response, but until the module has taken it
    /// in: a clock moved on before that would run the request at the later time.
    func send(_ opcode: Opcode, _ fields: Fields = Fields()) async throws -> UInt16 {
        let id = nextID()
        try await deliver(Message(.request(opcode), id: id, fields: fields))
        return id
    }

    /// Sends `message` and waits until the module has taken it in.
    func deliver(_ message: Message) async throws {
        let before = await module.messagesReceived
        try await client.send(message)
        while await module.messagesReceived == before { await Task.yield() }
    }

    /// Moves the clock on and lets the module handle what became due.
    func advance(by duration: Duration) async {
        await clock.advance(by: duration)
        await module.settle()
    }

    /// Every event the module sent so far and not yet taken: a keep-alive's response marks the
    /// end, since the module answers in order.
    func events() async throws -> [Message] {
        await module.settle()
        _ = try await request(.keepAlive)
        return await client.takeEvents()
    }

    /// The events of one kind among ``events()``.
    func events(_ code: EventCode) async throws -> [Message] {
        try await events().filter { $0.kind == .event(code) }
    }
}
