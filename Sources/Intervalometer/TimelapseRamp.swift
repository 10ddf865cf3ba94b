import Foundation
import UnleashedKit
import UnleashedProtocol

/// A ramped run's part of the engine: the ramp built from what the camera offers, a reading of
/// the meter ahead of each slot, and the settings changed before the picture.
extension Timelapse {
    /// Builds the ramp at the start of a ramped run, refusing limits the camera cannot meet.
    func startRamp(_ ramp: RampPlan, camera: any Camera) async throws(TimelapseError) {
        guard ramp.minISO <= ramp.maxISO else { throw .invalidPlan("the ramp's lowest ISO is above its highest") }
        guard ramp.gapMs >= 0 else { throw .invalidPlan("the ramp's gap cannot be negative") }
        guard ramp.maxRate > 0 else { throw .invalidPlan("the ramp's largest rate must be above 0 stops an hour") }
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
        guard plan.intervalMs > ramp.gapMs else {
            throw .intervalTooShort(minimumMs: ramp.gapMs + 1, reason: "the \(Duration.milliseconds(ramp.gapMs).compactText) gap the ramp leaves after each exposure")
        }
        if let program = ramp.program {
            try checkFixedKeyframes(program, descriptors: descriptors, bulb: shutterChoices.contains(.shutterSpeed(.bulb)), gapMs: ramp.gapMs)
        }
        if let night = ramp.nightIntervalMs, night <= ramp.gapMs {
            throw .invalidPlan("the night interval must be longer than the \(Duration.milliseconds(ramp.gapMs).compactText) gap")
        }
        if let shortest = ramp.program?.intervalRange?.lowerBound, shortest <= .milliseconds(ramp.gapMs) {
            throw .invalidPlan("the program's \(shortest.compactText) interval must be longer than the "
                + "\(Duration.milliseconds(ramp.gapMs).compactText) gap")
        }
        self.ramp = RampEngine(settings: ramp.settings(intervalMs: plan.intervalMs), limits: limits, interval: .milliseconds(plan.intervalMs))
        rampApplied = nil
        rampMeteringSettings = Self.meteringSettings(iso: descriptor(.iso)?.value, shutter: descriptor(.shutterSpeed)?.value, limits: limits)
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
            let intervalMs = program.at(.milliseconds(keyframe.atMs)).interval?.wholeMilliseconds ?? plan.intervalMs
            if exposure.seconds * 1000 > Double(intervalMs - gapMs) {
                throw .invalidPlan("\(name): \(exposure.text) does not fit the interval less the \(Duration.milliseconds(gapMs).compactText) gap")
            }
        }
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

    /// Reads the meter and asks the ramp for the coming slot's exposure. Without a reading (a
    /// camera metered by its pictures has none before the first), the run's first slot is a
    /// metering frame taken at the camera's settings as they are; later slots fail, saying why.
    func prepareRamp(due: Duration, camera: any Camera) async {
        guard case .ramp(let rampPlan) = plan.exposure else { return }
        rampStep = nil
        rampMeteringFrame = false
        if ramp == nil {
            // A resumed run builds its ramp at its first slot, with the camera as it is then.
            do throws(TimelapseError) {
                try await startRamp(rampPlan, camera: camera)
                if let resumed = rampResumedFrom { ramp?.resume(from: resumed.record, at: resumed.at) }
                rampProblem = nil
            } catch {
                rampProblem = error.description
                return
            }
        }
        var reading = await camera.lastMeteredEV
        if reading == nil { reading = try? await camera.status().meteredEV }
        guard let reading else {
            rampMeteringFrame = !rampMeteringFrameTaken
            rampMeteringFrameTaken = true
            return
        }
        guard let program = rampPlan.program else {
            rampStep = ramp?.next(at: due, sceneEV: reading.stops)
            return
        }
        let (keyframe, offset, interval) = program.at(due)
        // The ramp keeps following the light under a fixed keyframe, so that it is ready when
        // the program hands over.
        guard var step = ramp?.next(at: due, sceneEV: reading.stops, offset: offset, interval: interval) else { return }
        if let fixed = keyframe.fixed?.exposure {
            step.exposure = fixed
            step.targetEV = fixed.ev100
            step.rate = 0
        }
        rampStep = step
    }

    /// The command of a ramped slot: the settings that changed, then the picture or the bulb
    /// exposure.
    func rampCommand() -> (exposure: String?, stoppable: Bool, run: @Sendable (any Camera) async throws(CameraError) -> SlotWork) {
        if rampMeteringFrame {
            let changes = rampMeteringSettings
            let named = changes.map { "\($0.setting.displayName) \($0.text)" }.joined(separator: ", ")
            let text = "a metering frame at the camera's settings" + (changes.isEmpty ? "" : " with " + named)
            return (text, false, { camera throws(CameraError) in
                for change in changes { _ = try await camera.set(change) }
                return SlotWork(try await camera.shoot())
            })
        }
        guard let step = rampStep else {
            let problem = rampProblem ?? "the camera reported no metered EV, which the exposure ramp needs"
            return (nil, false, { _ throws(CameraError) in throw CameraError.invalidArgument(problem) })
        }
        let exposure = step.exposure
        let previous = rampApplied
        var changes: [SettingValue] = []
        if previous?.aperture != exposure.aperture { changes.append(.aperture(exposure.aperture)) }
        if previous?.iso != exposure.iso { changes.append(.iso(exposure.iso)) }
        if previous?.shutter != exposure.shutter { changes.append(.shutterSpeed(exposure.shutter)) }
        let settingChanges = changes
        return (exposure.text, exposure.bulbMilliseconds != nil, { camera throws(CameraError) in
            for change in settingChanges { _ = try await camera.set(change) }
            if let milliseconds = exposure.bulbMilliseconds {
                return try await Self.bulbWork(camera, milliseconds: milliseconds, exposure: exposure.text)
            }
            return SlotWork(try await camera.shoot())
        })
    }

    /// What the ramp decided for the slot being recorded.
    func rampRecord() -> RampRecord? {
        guard let step = rampStep else { return nil }
        return RampRecord(targetEV: step.targetEV, sceneEV: step.sceneEV, residualEV: step.exposure.ev100 - step.targetEV,
                          rate: step.rate, intervalMs: step.interval.wholeMilliseconds)
    }
}
