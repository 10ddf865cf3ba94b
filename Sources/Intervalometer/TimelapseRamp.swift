import CameraKit
import Foundation
import UnleashedKit

/// One camera's exposure ramp in a ramped run: its engine, what it decided for the coming slot,
/// and what it has set on the camera.
struct CameraRamp {
    var engine: RampEngine?
    var step: RampEngine.Step?
    /// The exposure the camera was last set to by the ramp, so only changes are sent.
    var applied: RampExposure?
    /// Why the ramp could not be built at a resumed run's slot, for that slot's record.
    var problem: String?
    /// Whether the coming slot is taken at the camera's settings to get a first reading.
    var meteringFrame = false
    /// The settings a metering frame changes first, so that its exposure is known.
    var meteringSettings: [SettingValue] = []
    /// What the ramp decided at the last frame before an interruption, for a resumed run.
    var resumedFrom: (record: RampRecord, at: Duration)?
}

/// A ramped run's part of the engine: a ramp per camera built from what that camera offers, a
/// reading of its meter ahead of each slot, and the settings changed before the picture. In a
/// rig each camera follows its own meter; the slot's interval is the longest any ramp asks for,
/// so every camera's exposure fits it.
extension Timelapse {
    /// Builds a camera's ramp at the start of a ramped run, refusing limits it cannot meet.
    func startRamp(_ ramp: RampPlan, member: RigCamera) async throws(TimelapseError) {
        do throws(TimelapseError) {
            try await buildRamp(ramp, member: member)
        } catch .invalidPlan(let problem) {
            guard let name = label(of: member) else { throw .invalidPlan(problem) }
            throw .invalidPlan("\(name): \(problem)")
        }
    }

    private func buildRamp(_ ramp: RampPlan, member: RigCamera) async throws(TimelapseError) {
        let camera = member.camera
        guard camera.identity.capabilities.contains(.meteredEV) else {
            throw .invalidPlan("the exposure ramp follows the camera's light readings, and this camera gives none")
        }
        let descriptors: [SettingDescriptor]
        do {
            descriptors = try await camera.settings()
        } catch {
            throw .camera(error)
        }
        func descriptor(_ setting: SettingID) -> SettingDescriptor? { descriptors.first { $0.setting == setting } }
        let shutterChoices = descriptor(.shutterSpeed)?.choices ?? []
        let apertures = try rampApertures(ramp, offered: descriptor(.aperture))
        let limits = RampLimits(offeredShutterSpeeds: shutterChoices, offeredISOs: descriptor(.iso)?.choices ?? [],
                                isoRange: ramp.minISO...ramp.maxISO, apertures: apertures, gap: .milliseconds(ramp.gapMs),
                                bulbAllowed: ramp.bulbFromMs != nil && camera.identity.capabilities.contains(.bulb),
                                bulbFrom: .milliseconds(ramp.bulbFromMs ?? 1000))
        if let problem = limits.problem {
            throw .invalidPlan("the exposure ramp cannot run on this camera: \(problem)")
        }
        if let program = ramp.program {
            try checkFixedKeyframes(program, descriptors: descriptors, bulb: shutterChoices.contains(.shutterSpeed(.bulb)), gapMs: ramp.gapMs)
        }
        var state = ramps[member.name] ?? CameraRamp()
        state.engine = RampEngine(settings: ramp.settings(intervalMs: plan.intervalMs), limits: limits, interval: .milliseconds(plan.intervalMs))
        state.applied = nil
        state.meteringSettings = Self.meteringSettings(iso: descriptor(.iso)?.value, shutter: descriptor(.shutterSpeed)?.value, limits: limits)
        if let resumed = state.resumedFrom { state.engine?.resume(from: resumed.record, at: resumed.at) }
        ramps[member.name] = state
    }

    /// Takes up each camera's ramp where an interrupted run left it: its last recorded frame.
    /// Returns the interval that frame asked for when it was the run's last: the next slot is due
    /// that long after it.
    func resumeRamps(from recorded: [FrameRecord], last: FrameRecord?) -> Duration? {
        var intervalAfterLast: Int64?
        for member in cameras {
            guard let ramped = recorded.last(where: { $0.ramp != nil && $0.camera == label(of: member) }), let ramp = ramped.ramp else { continue }
            ramps[member.name, default: CameraRamp()].resumedFrom = (ramp, .milliseconds(ramped.scheduledMs))
            if ramped.frame == last?.frame { intervalAfterLast = max(intervalAfterLast ?? 0, ramp.intervalMs) }
        }
        return intervalAfterLast.map(Duration.milliseconds)
    }

    /// What a metering frame changes so that the exposure of its picture is known: auto ISO
    /// becomes the lowest the ramp may use, bulb the offered speed nearest 1/60 s.
    private static func meteringSettings(iso: SettingValue?, shutter: SettingValue?, limits: RampLimits) -> [SettingValue] {
        var changes: [SettingValue] = []
        if case .iso(let current)? = iso, current.isAuto, let lowest = limits.isoSpeeds.min(by: { $0.rawValue < $1.rawValue }) {
            changes.append(.iso(lowest))
        }
        let sixtieth = log2(1.0 / 60)
        if case .shutterSpeed(let current)? = shutter, current.isBulb,
           let nearest = limits.shutterSpeeds.min(by: { abs(($0.timeStops ?? 0) - sixtieth) < abs(($1.timeStops ?? 0) - sixtieth) }) {
            changes.append(.shutterSpeed(nearest))
        }
        return changes
    }

    /// Every fixed keyframe's settings are the camera's and fit the interval.
    private func checkFixedKeyframes(_ program: RampProgram, descriptors: [SettingDescriptor], bulb: Bool, gapMs: Int64) throws(TimelapseError) {
        for (index, keyframe) in program.keyframes.enumerated() {
            guard let fixed = keyframe.fixed else { continue }
            let name = "program keyframe at \(Duration.milliseconds(keyframe.atMs).compactText)"
            guard let exposure = fixed.exposure else { throw .invalidPlan("\(name): its settings cannot be read") }
            var wanted: [SettingValue] = [.iso(exposure.iso), .aperture(exposure.aperture)]
            wanted.append(.shutterSpeed(exposure.shutter))
            if exposure.bulbMilliseconds != nil, !bulb { throw .invalidPlan("\(name): the camera offers no bulb") }
            for value in wanted {
                let offered = descriptors.first { $0.setting == value.setting }?.choices ?? []
                guard offered.contains(value) else {
                    throw .invalidPlan("\(name): the camera does not offer \(value.text) (keyframe \(index + 1))")
                }
            }
            if exposure.seconds * 1000 > Double(shortestInterval(of: program, from: keyframe.atMs) - gapMs) {
                throw .invalidPlan("\(name): \(exposure.text) does not fit the interval less the \(Duration.milliseconds(gapMs).compactText) gap")
            }
        }
    }

    /// The shortest interval the program gives while the keyframe at `start` is in force: the
    /// interval moves in straight lines between interval keyframes, so it is shortest at one of
    /// them or at an end of the span.
    private func shortestInterval(of program: RampProgram, from start: Int64) -> Int64 {
        let end = program.keyframes.first { $0.atMs > start }?.atMs
        let inside = program.keyframes.filter { $0.intervalMs != nil && $0.atMs > start && $0.atMs < (end ?? .max) }.map(\.atMs)
        let times = [start] + inside + (end.map { [$0 - 1] } ?? [])
        return times.map { program.at(.milliseconds($0)).interval?.wholeMilliseconds ?? plan.intervalMs }.min() ?? plan.intervalMs
    }

    /// The apertures the ramp may use: those the plan names, each offered by the camera, or the
    /// camera's current one.
    private func rampApertures(_ ramp: RampPlan, offered: SettingDescriptor?) throws(TimelapseError) -> [Aperture] {
        guard let offered else { throw .invalidPlan("the camera reports no aperture; the exposure ramp needs one") }
        guard !ramp.apertures.isEmpty else {
            guard case .aperture(let current) = offered.value else { throw .invalidPlan("the camera reports no aperture; the exposure ramp needs one") }
            return [current]
        }
        return try ramp.apertures.map { text throws(TimelapseError) in
            guard let aperture = Aperture(text: text), offered.choices.contains(.aperture(aperture)) else {
                throw .invalidPlan("the camera does not offer the aperture '\(text)' (it offers \(offered.choices.map(\.text).joined(separator: " ")))")
            }
            return aperture
        }
    }

    /// Reads each ready camera's meter and asks its ramp for the coming slot's exposure.
    func prepareRamps(due: Duration, cameras: [RigCamera]) async {
        guard case .ramp = plan.exposure else { return }
        for member in self.cameras {
            ramps[member.name, default: CameraRamp()].step = nil
            ramps[member.name]?.meteringFrame = false
            ramps[member.name]?.problem = nil
        }
        for member in cameras { await prepareRamp(due: due, member: member) }
    }

    /// Reads the meter and asks the camera's ramp for the coming slot's exposure. Without a
    /// reading the ramp holds its exposure, so that the run goes on and the picture can give
    /// the next reading; with nothing to hold yet (a camera metered by its pictures has no
    /// reading before the first), the slot is a metering frame at the camera's settings.
    private func prepareRamp(due: Duration, member: RigCamera) async {
        guard case .ramp(let rampPlan) = plan.exposure else { return }
        let camera = member.camera
        if ramps[member.name]?.engine == nil {
            // A resumed run builds its ramp at its first slot, with the camera as it is then.
            do throws(TimelapseError) {
                try await startRamp(rampPlan, member: member)
            } catch {
                ramps[member.name, default: CameraRamp()].problem = error.description
                return
            }
        }
        guard var state = ramps[member.name], var engine = state.engine else { return }
        defer { ramps[member.name] = state }
        var reading = await camera.lastMeteredEV
        if reading == nil { reading = try? await camera.status().meteredEV }
        defer { state.engine = engine }
        let (keyframe, offset, interval) = rampPlan.program?.at(due) ?? (nil, 0, nil)
        // The ramp keeps following the light under a fixed keyframe, so that it is ready when
        // the program hands over.
        let next = reading.map { engine.next(at: due, sceneEV: $0.stops, offset: offset, interval: interval) }
            ?? engine.hold(at: due, offset: offset, interval: interval)
        guard var step = next else {
            state.meteringFrame = reading == nil
            if reading != nil { state.problem = "the exposure ramp found no settings within its limits for this light" }
            return
        }
        if let fixed = keyframe?.fixed?.exposure {
            step.exposure = fixed
            step.targetEV = fixed.ev100
            step.rate = 0
        }
        state.step = step
    }

    /// The command of a ramped slot, for whichever camera it is sent to: that camera's changed
    /// settings, then its picture or bulb exposure.
    func rampCommand() -> (exposure: String?, stoppable: Bool, run: @Sendable (any Camera) async throws(CameraError) -> SlotWork) {
        var commands: [ObjectIdentifier: @Sendable (any Camera) async throws(CameraError) -> SlotWork] = [:]
        var stoppable = false
        for member in cameras {
            let (bulb, run) = rampCommand(of: member.name)
            commands[ObjectIdentifier(member.camera)] = run
            stoppable = stoppable || bulb
        }
        let byCamera = commands
        return (nil, stoppable, { camera throws(CameraError) in
            guard let run = byCamera[ObjectIdentifier(camera)] else { throw CameraError.invalidArgument("the camera is not one of the run's") }
            return try await run(camera)
        })
    }

    /// One camera's command, and whether it is a bulb exposure (which a stop ends early).
    private func rampCommand(of name: String) -> (bulb: Bool, run: @Sendable (any Camera) async throws(CameraError) -> SlotWork) {
        let state = ramps[name] ?? CameraRamp()
        if state.meteringFrame {
            let changes = state.meteringSettings
            return (false, { camera throws(CameraError) in
                for change in changes { _ = try await camera.set(change) }
                return SlotWork(try await camera.shoot())
            })
        }
        guard let step = state.step else {
            let problem = state.problem ?? "the camera reported no metered EV, which the exposure ramp needs"
            return (false, { _ throws(CameraError) in throw CameraError.invalidArgument(problem) })
        }
        let exposure = step.exposure
        let previous = state.applied
        var changes: [SettingValue] = []
        if previous?.aperture != exposure.aperture { changes.append(.aperture(exposure.aperture)) }
        if previous?.iso != exposure.iso { changes.append(.iso(exposure.iso)) }
        if previous?.shutter != exposure.shutter { changes.append(.shutterSpeed(exposure.shutter)) }
        let settingChanges = changes
        return (exposure.bulbMilliseconds != nil, { camera throws(CameraError) in
            for change in settingChanges { _ = try await camera.set(change) }
            if let milliseconds = exposure.bulbMilliseconds {
                return try await Self.bulbWork(camera, milliseconds: milliseconds, exposure: exposure.text)
            }
            return SlotWork(try await camera.shoot())
        })
    }

    /// The exposure a camera's ramp set for the slot being recorded, as the journal shows it.
    func rampExposureText(of name: String) -> String? {
        guard let state = ramps[name] else { return nil }
        if state.meteringFrame {
            let named = state.meteringSettings.map { "\($0.setting.displayName) \($0.text)" }.joined(separator: ", ")
            return "a metering frame at the camera's settings" + (named.isEmpty ? "" : " with " + named)
        }
        return state.step?.exposure.text
    }

    /// What a camera's ramp decided for the slot being recorded.
    func rampRecord(of name: String) -> RampRecord? {
        guard let step = ramps[name]?.step else { return nil }
        return RampRecord(targetEV: step.targetEV, sceneEV: step.sceneEV, residualEV: step.exposure.ev100 - step.targetEV,
                          rate: step.rate, intervalMs: step.interval.wholeMilliseconds)
    }

    /// Notes that a camera took the slot's picture at its ramp's settings.
    func rampApplied(by name: String) {
        guard let step = ramps[name]?.step else { return }
        ramps[name]?.applied = step.exposure
    }

    /// The time to the next slot a ramped slot asks for: the longest of its cameras' ramps.
    func rampInterval() -> Duration? {
        ramps.values.compactMap(\.step?.interval).max()
    }
}
