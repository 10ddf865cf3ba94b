public import CameraKit
import UnleashedProtocol

/// Several cameras driven as one: a stereo pair, a bullet-time row, a multi-angle time-lapse.
/// Every action goes to all of them at once (a ``Volley``), and a setting change is checked on
/// every body before any body is changed, so that a rig never ends up half changed.
public struct Rig: Sendable {
    /// The cameras, in the order they were named; names are unique.
    public let members: [RigCamera]

    /// A rig of `members`; nil when there are none or two share a name.
    public init?(_ members: [RigCamera]) {
        guard !members.isEmpty, Set(members.map(\.name)).count == members.count else { return nil }
        self.members = members
    }

    /// Runs `command` on every camera at once: all are prepared, then released together.
    public func fire<Value: Sendable>(_ command: @escaping @Sendable (any Camera) async throws(CameraError) -> Value) async
        -> (outcomes: [Volley<Value>.Outcome], spread: VolleySpread) {
        let volley = await Volley.prepare(members, command: command)
        volley.release()
        let outcomes = await volley.outcomes()
        return (outcomes, VolleySpread(outcomes))
    }

    /// Takes a picture on every camera at one instant. When every camera can press on its own
    /// clock (``Camera/schedulesShots``) each is told the same instant ``scheduleLead`` ahead and
    /// presses on its timer, so the radio's delays do not spread the shots; otherwise the
    /// triggers are released together.
    public func shoot() async -> (outcomes: [Volley<Shot>.Outcome], spread: VolleySpread) {
        _ = await prepareShot()
        guard let instant = await Self.commonFiringInstant(members) else {
            return await fire { camera throws(CameraError) in try await camera.shoot() }
        }
        return await fire { camera throws(CameraError) in try await camera.shoot(at: instant) }
    }

    /// How far ahead a shot on the cameras' own clocks is set: room for every command to cross
    /// the radio before it, at a time-lapse slot too (PROTOCOL.md §9.6).
    public static let scheduleLead: Duration = .milliseconds(100)

    /// The instant `lead` from now, when every one of `members` presses on its own clock; nil
    /// when one cannot, so that all are triggered alike.
    public static func commonFiringInstant(_ members: [RigCamera], lead: Duration = scheduleLead) async -> ContinuousClock.Instant? {
        await allScheduleShots(members) ? .now + lead : nil
    }

    /// Whether every one of `members` (at least one) presses on its own clock.
    public static func allScheduleShots(_ members: [RigCamera]) async -> Bool {
        guard !members.isEmpty else { return false }
        for member in members where await !member.camera.schedulesShots { return false }
        return true
    }

    /// Gets every camera ready for a shot (``Camera/prepareShot()``), all at once; returns the
    /// ones that are ready and the ones that are not.
    public func prepareShot() async -> (ready: [RigCamera], down: [RigCamera]) {
        await Self.prepareShot(members)
    }

    /// ``prepareShot()`` for any list of cameras (one camera's run uses it too).
    public static func prepareShot(_ members: [RigCamera]) async -> (ready: [RigCamera], down: [RigCamera]) {
        let readiness = await withTaskGroup(of: (Int, Bool).self) { group in
            for (index, member) in members.enumerated() {
                group.addTask { (index, await member.camera.prepareShot()) }
            }
            var readiness = Array(repeating: false, count: members.count)
            for await (index, ready) in group { readiness[index] = ready }
            return readiness
        }
        let ready = members.indices.filter { readiness[$0] }.map { members[$0] }
        let down = members.indices.filter { !readiness[$0] }.map { members[$0] }
        return (ready, down)
    }

    /// Sets `value` on every camera, or on none: each body's offer is read first, and if one
    /// lacks the setting, has it read-only or does not offer the value, nothing is changed and
    /// ``RigError/refused(_:)`` names every body that refused and why. The check and the change
    /// are not one atomic step: a body that fails during the change is reported by
    /// ``RigError/partlyApplied(applied:failed:)``.
    public func set(_ value: SettingValue) async throws(RigError) -> [(name: String, inEffect: SettingValue)] {
        let checks = await fire { camera throws(CameraError) in try await Self.check(value, on: camera) }
        let refusals = checks.outcomes.compactMap { outcome -> RigError.BodyFailure? in
            switch outcome.result {
            case .failure(let error)?: RigError.BodyFailure(name: outcome.name, error: error)
            default: nil
            }
        }
        guard refusals.isEmpty else { throw .refused(refusals) }
        let changes = await fire { camera throws(CameraError) in try await camera.set(value) }
        var applied: [(name: String, inEffect: SettingValue)] = []
        var failed: [RigError.BodyFailure] = []
        for outcome in changes.outcomes {
            switch outcome.result {
            case .success(let inEffect)?: applied.append((outcome.name, inEffect))
            case .failure(let error)?: failed.append(RigError.BodyFailure(name: outcome.name, error: error))
            case nil: break
            }
        }
        guard failed.isEmpty else { throw .partlyApplied(applied: applied.map(\.name), failed: failed) }
        return applied
    }

    /// Throws what `camera.set(value)` would refuse without sending anything.
    private static func check(_ value: SettingValue, on camera: any Camera) async throws(CameraError) {
        let setting = value.setting
        guard let descriptor = try await camera.settings().first(where: { $0.setting == setting }) else {
            throw .settingNotOffered(setting)
        }
        guard !descriptor.readOnly else { throw .readOnly(setting) }
        guard descriptor.choices.contains(value) else {
            throw .valueNotOffered(value, nearest: value.nearest(among: descriptor.choices), offered: descriptor.choices)
        }
    }
}

/// Why a rig did not do what it was asked, body by body.
public enum RigError: Error, Sendable, CustomStringConvertible {
    /// One body's failure.
    public struct BodyFailure: Sendable {
        public let name: String
        public let error: CameraError

        public init(name: String, error: CameraError) {
            self.name = name
            self.error = error
        }
    }

    /// Refused before anything was changed.
    case refused([BodyFailure])
    /// The check passed, then these bodies failed while the others changed.
    case partlyApplied(applied: [String], failed: [BodyFailure])

    public var description: String {
        switch self {
        case .refused(let failures):
            "no camera was changed: " + failures.map { "\($0.name): \($0.error)" }.joined(separator: "; ")
        case .partlyApplied(let applied, let failures):
            "changed on \(applied.isEmpty ? "no camera" : applied.joined(separator: ", ")) but not on "
                + failures.map { "\($0.name) (\($0.error))" }.joined(separator: ", ")
        }
    }
}
