/// What a time-lapse run is asked to do. Stored with the run, so that a run resumed after a
/// crash continues on the same schedule with the same settings.
public struct RunPlan: Codable, Hashable, Sendable {
    /// Start-to-start time between slots, in milliseconds.
    public var intervalMs: Int64
    /// When the run ends.
    public var stop: StopCondition
    /// What each slot takes.
    public var exposure: ExposurePlan
    /// What happens to slots whose time has passed before the camera was ready.
    public var overrun: OverrunPolicy
    /// The least time left between the end of one slot's work and the next command, for the
    /// camera to recover (milliseconds).
    public var minimumGapMs: Int64
    /// A program called at init, start, every frame and stop (gphoto2 style); nil for none.
    public var hook: String?
    /// How long one call of the hook may run before it is killed (milliseconds); nil for
    /// ``HookRunner/defaultTimeout``.
    public var hookTimeoutMs: Int64?

    public init(intervalMs: Int64, stop: StopCondition, exposure: ExposurePlan = .camera,
                overrun: OverrunPolicy = .skip, minimumGapMs: Int64 = 0, hook: String? = nil, hookTimeoutMs: Int64? = nil) {
        self.intervalMs = intervalMs
        self.stop = stop
        self.exposure = exposure
        self.overrun = overrun
        self.minimumGapMs = minimumGapMs
        self.hook = hook
        self.hookTimeoutMs = hookTimeoutMs
    }

    /// The plan's hook with its time limit, or nil without a hook.
    public var hookRunner: HookRunner? {
        hook.map { HookRunner(program: $0, timeout: hookTimeoutMs.map { .milliseconds($0) } ?? HookRunner.defaultTimeout) }
    }
}

/// When a run ends (besides being told to).
public enum StopCondition: Codable, Hashable, Sendable {
    /// After this many slots (frames numbered 1...count).
    case frames(Int)
    /// No slot is scheduled at or after `t0 + milliseconds`.
    case duration(milliseconds: Int64)
    /// No slot is scheduled at or after this wall-clock time (Unix milliseconds).
    case until(unixMilliseconds: Int64)
    /// Only when told.
    case never
}

/// What one slot of a run shoots.
public enum ExposurePlan: Codable, Hashable, Sendable {
    /// One picture at the camera's shutter speed.
    case camera
    /// One bulb exposure of this many milliseconds.
    case bulb(milliseconds: Int64)
    /// `count` pictures, exposure compensation stepped by `stepThirds` thirds of a stop around
    /// the current value (e.g. 3 frames at 3/3: -1, 0, +1 EV).
    case bracket(count: Int, stepThirds: Int)
    /// One video clip of this many milliseconds: recording starts at the slot and is stopped
    /// by the engine, with retries up to a safety deadline.
    case video(milliseconds: Int64)
    /// One picture whose exposure follows the light (``RampEngine``): the shutter speed, ISO
    /// and aperture are set before each slot, and long exposures are timed in bulb.
    case ramp(plan: RampPlan)
}

/// How an automatic exposure ramp runs: its limits and how fast it may move. Stored with the
/// run, so that a resumed run ramps within the same limits.
public struct RampPlan: Codable, Hashable, Sendable {
    /// The lowest and highest ISO the ramp may set.
    public var minISO: UInt32
    public var maxISO: UInt32
    /// The apertures the ramp may use, as the camera names them (`f/2.8`); empty keeps the
    /// aperture the camera has at the start.
    public var apertures: [String]
    /// Exposures at least this long are timed in bulb, when the camera offers bulb; nil never.
    public var bulbFromMs: Int64?
    /// The time the camera needs after an exposure before the next slot: the shutter stays open
    /// at most the interval less this.
    public var gapMs: Int64
    /// The fastest the exposure may change, in stops per hour.
    public var maxRate: Double
    /// How much darker than mid-grey the night is rendered, in stops (negative is darker).
    public var nightBrightness: Double
    /// Keyframes that hold fixed exposures or shift the brightness over the run; nil follows
    /// the light throughout.
    public var program: RampProgram?
    /// The interval by night, for a run whose interval follows the light from the plan's
    /// interval by day (scene EV 8 and above) to this by night (EV −2 and below); nil keeps the
    /// plan's interval.
    public var nightIntervalMs: Int64?

    public init(minISO: UInt32 = 100, maxISO: UInt32 = 6400, apertures: [String] = [], bulbFromMs: Int64? = 1000,
                gapMs: Int64 = 2000, maxRate: Double = 30, nightBrightness: Double = -1.3, program: RampProgram? = nil) {
        self.minISO = minISO
        self.maxISO = maxISO
        self.apertures = apertures
        self.bulbFromMs = bulbFromMs
        self.gapMs = gapMs
        self.maxRate = maxRate
        self.nightBrightness = nightBrightness
        self.program = program
    }

    /// The engine's settings for a run of slots `intervalMs` apart by day.
    public func settings(intervalMs: Int64) -> RampSettings {
        var settings = RampSettings()
        settings.maxRate = maxRate
        settings.nightBrightness = nightBrightness
        if let nightIntervalMs {
            settings.intervals = RampSettings.IntervalRamp(day: .milliseconds(intervalMs), night: .milliseconds(nightIntervalMs))
        }
        return settings
    }
}

/// What the exposure ramp decided for one picture, kept with its frame for deflicker tools.
public struct RampRecord: Codable, Hashable, Sendable {
    /// The exposure the ramp wanted (EV at ISO 100), before rounding to settings.
    public var targetEV: Double
    /// The scene's light as the ramp saw it, smoothed (EV at ISO 100).
    public var sceneEV: Double
    /// The exposure set less the one wanted, in stops: what deflicker can still correct.
    public var residualEV: Double
    /// How fast the exposure was moving, in stops per hour.
    public var rate: Double
    /// The time to the next slot.
    public var intervalMs: Int64

    public init(targetEV: Double, sceneEV: Double, residualEV: Double, rate: Double, intervalMs: Int64) {
        self.targetEV = targetEV
        self.sceneEV = sceneEV
        self.residualEV = residualEV
        self.rate = rate
        self.intervalMs = intervalMs
    }
}

/// What a run does with slots that could not be shot on time.
public enum OverrunPolicy: String, Codable, Hashable, Sendable, CaseIterable {
    /// Shoot at the next slot still in the future; the slots passed over are recorded as
    /// skipped, so frame numbers stay aligned with time.
    case skip
    /// Shoot as soon as the camera is ready and re-anchor the schedule there.
    case `defer`
    /// Shoot every passed slot, one after another, until caught up.
    case burst
}

/// What became of one slot.
public enum FrameOutcome: String, Codable, Hashable, Sendable {
    /// The camera reported the picture.
    case taken
    /// The command failed; ``FrameRecord/error`` says why.
    case failed
    /// The slot passed without a command (overrun, or while the module was unreachable or the
    /// run was paused or not running).
    case skipped
}

/// One line of a run's journal: one slot (one picture of a bracket is one record).
public struct FrameRecord: Codable, Hashable, Sendable {
    /// The slot number, from 1: slot n is due at `t0 + (n - 1) * interval`.
    public var frame: Int
    /// For brackets, the picture within the slot, from 1; 1 otherwise.
    public var part: Int
    /// When the slot was due, milliseconds after the run's `t0`.
    public var scheduledMs: Int64
    /// When the command went out, milliseconds after `t0` (nil for skipped slots).
    public var sentMs: Int64?
    /// When the picture was reported, milliseconds after `t0`.
    public var completedMs: Int64?
    /// `sent - scheduled`, in microseconds (how late the command went out); for the first
    /// picture of a slot only, since the others of a bracket have no deadline of their own.
    public var latenessMicros: Int64?
    public var outcome: FrameOutcome
    /// Why the slot failed or was skipped; for a slot that was taken, what went wrong on the
    /// way (a clip that took retries to stop).
    public var error: String?
    /// The exposure used: `1/125`, `bulb 2000ms`, `-1`.
    public var exposure: String?
    /// The metered EV at the shot, as text (`+12`), when the camera meters.
    public var meteredEV: String?
    /// The camera's shot counter for the picture.
    public var shotCounter: Int?
    /// The camera of a rig this record is for; nil in a run of one camera.
    public var camera: String?
    /// In a rig, how far apart the slot's first and last commands went out (microseconds), on
    /// every record of the slot; nil for one camera.
    public var commandSpreadMicros: Int64?
    /// In a rig, how far apart the slot's first and last pictures were reported.
    public var completionSpreadMicros: Int64?
    /// In a ramped run, what the ramp decided for this picture.
    public var ramp: RampRecord?

    public init(frame: Int, part: Int = 1, scheduledMs: Int64, sentMs: Int64? = nil, completedMs: Int64? = nil,
                latenessMicros: Int64? = nil, outcome: FrameOutcome, error: String? = nil, exposure: String? = nil,
                meteredEV: String? = nil, shotCounter: Int? = nil, camera: String? = nil,
                commandSpreadMicros: Int64? = nil, completionSpreadMicros: Int64? = nil, ramp: RampRecord? = nil) {
        self.frame = frame
        self.part = part
        self.scheduledMs = scheduledMs
        self.sentMs = sentMs
        self.completedMs = completedMs
        self.latenessMicros = latenessMicros
        self.outcome = outcome
        self.error = error
        self.exposure = exposure
        self.meteredEV = meteredEV
        self.shotCounter = shotCounter
        self.camera = camera
        self.commandSpreadMicros = commandSpreadMicros
        self.completionSpreadMicros = completionSpreadMicros
        self.ramp = ramp
    }
}

/// Where a run stands in the journal.
public enum RunState: String, Codable, Hashable, Sendable {
    /// Running, or interrupted without a clean stop (a crash, a power cut): resumable.
    case running
    /// Ended: all slots done, or stopped on request.
    case finished
    /// Ended by an error that stopped the run.
    case failed
}

/// A run as the journal keeps it.
public struct RunRecord: Hashable, Sendable {
    public var id: Int64
    public var plan: RunPlan
    /// The wall-clock time of slot 1 (Unix milliseconds): what a resumed run re-anchors to.
    public var t0UnixMs: Int64
    /// The run's cameras, as the backends name them, in the order the rig fires them: one for
    /// a run of one camera. A list, so that a name with a comma in it reads back whole.
    public var cameras: [String]
    public var state: RunState
    /// Why it ended, when it has.
    public var endReason: String?

    /// The cameras' names joined by commas, for display.
    public var camera: String { cameras.joined(separator: ",") }

    public init(id: Int64, plan: RunPlan, t0UnixMs: Int64, cameras: [String], state: RunState, endReason: String? = nil) {
        self.id = id
        self.plan = plan
        self.t0UnixMs = t0UnixMs
        self.cameras = cameras
        self.state = state
        self.endReason = endReason
    }

    /// A run of the one camera `camera`.
    public init(id: Int64, plan: RunPlan, t0UnixMs: Int64, camera: String, state: RunState, endReason: String? = nil) {
        self.init(id: id, plan: plan, t0UnixMs: t0UnixMs, cameras: [camera], state: state, endReason: endReason)
    }
}

/// Encoded with both the list (`cameras`) and the joined names (`camera`) that documents from
/// before the list carried; a document with only `camera` reads as a run of that one camera.
extension RunRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, plan, t0UnixMs, camera, cameras, state, endReason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let cameras = try container.decodeIfPresent([String].self, forKey: .cameras)
        self.init(id: try container.decode(Int64.self, forKey: .id), plan: try container.decode(RunPlan.self, forKey: .plan),
                  t0UnixMs: try container.decode(Int64.self, forKey: .t0UnixMs),
                  cameras: try cameras ?? [container.decode(String.self, forKey: .camera)],
                  state: try container.decode(RunState.self, forKey: .state),
                  endReason: try container.decodeIfPresent(String.self, forKey: .endReason))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(plan, forKey: .plan)
        try container.encode(t0UnixMs, forKey: .t0UnixMs)
        try container.encode(camera, forKey: .camera)
        try container.encode(cameras, forKey: .cameras)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(endReason, forKey: .endReason)
    }
}

/// Durable storage for runs and their frames. ``append(_:to:)`` returns only once the record
/// is on disk: the engine schedules the next slot after that, so a crash loses no frame that
/// was reported.
public protocol RunJournal: Sendable {
    /// Records a new run on `cameras` (in the order the rig fires them) and returns it with its id.
    func begin(plan: RunPlan, t0UnixMs: Int64, cameras: [String]) throws -> RunRecord
    /// Appends one frame record, durably.
    func append(_ frame: FrameRecord, to run: Int64) throws
    /// Marks a run ended.
    func finish(run: Int64, state: RunState, reason: String) throws
    /// One run, or nil.
    func run(_ id: Int64) throws -> RunRecord?
    /// Every run, newest first.
    func runs() throws -> [RunRecord]
    /// A run's frames in the order they were recorded.
    func frames(of run: Int64) throws -> [FrameRecord]
    /// Up to `limit` of a run's frames in the order they were recorded, after `position` (the
    /// ``FramePage/next`` of the page before; nil for the first page): a run of days read a page
    /// at a time, without all of its frames in memory at once.
    func framePage(of run: Int64, after position: Int64?, limit: Int) throws -> FramePage
    /// Makes this process the run's one owner (``RunOwner/current``); throws when a process
    /// that is still alive owns it, so that no run is shot by two processes at once.
    func claim(run: Int64) throws
    /// Gives up this process's ownership of the run (when it ends or is suspended).
    func release(run: Int64)
    /// The process that runs the run now, when one that is still alive does: a run it shoots is
    /// not interrupted, whatever its state in the journal.
    func liveOwner(of run: Int64) throws -> RunOwner?
    /// Where records this journal could not take (a full disk) are kept for the run, most
    /// preferred first: a resumed run adds them to the journal. Empty for a journal that keeps
    /// no files.
    func recoveryFiles(of run: Int64) -> [String]
}

/// One page of a run's frames (``RunJournal/framePage(of:after:limit:)``).
public struct FramePage: Hashable, Sendable {
    /// The frames, in the order they were recorded.
    public var frames: [FrameRecord]
    /// Where the next page starts; nil when this page is the last (a full page may be followed
    /// by an empty one).
    public var next: Int64?

    public init(frames: [FrameRecord], next: Int64?) {
        self.frames = frames
        self.next = next
    }
}

extension RunJournal {
    /// Records a new run of the one camera `camera`.
    public func begin(plan: RunPlan, t0UnixMs: Int64, camera: String) throws -> RunRecord {
        try begin(plan: plan, t0UnixMs: t0UnixMs, cameras: [camera])
    }

    /// Appends `frame` unless the run already has it (a write that reported failure after its
    /// commit, a recovery file read twice): what matters is that the journal holds it once.
    func appendUnlessRecorded(_ frame: FrameRecord, to run: Int64) throws {
        do {
            try append(frame, to: run)
        } catch JournalError.duplicateFrame {
        } catch MemoryJournalError.duplicateFrame {
        }
    }
}
