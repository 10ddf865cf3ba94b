import CameraKit
import Foundation
import Intervalometer
import JSON
import Logging
import MQTT
import UnleashedAPI
import UnleashedKit

/// The daemon on an MQTT broker (`[mqtt]`, docs/mqtt.md): its cameras' state, their runs and
/// frames out; shots, shots at a UTC time, and time-lapses started and stopped in. Topics in
/// ``MQTTTopics``; Home Assistant's discovery in ``HomeAssistantDiscovery``.
///
/// Who may command: whoever the broker lets publish on the command topics. The bridge takes
/// every command that reaches it, so the broker's ACL (and its logins) is the access control,
/// as Home Assistant's own MQTT entities expect; docs/mqtt.md shows an ACL that keeps the
/// command topics to named users.
///
/// libmosquitto reconnects by itself. On each connection the bridge says `online` and publishes
/// its retained state and discovery again, so a broker that lost everything catches up. The
/// runs themselves never wait on the broker: a broker away costs updates, not slots.
actor MQTTBridge {
    private let client: MQTTClient
    private let topics: MQTTTopics
    private let discovery: HomeAssistantDiscovery?
    private let cameras: CameraRegistry
    private let jobs: JobManager
    private let groups: [DaemonConfiguration.Group]
    private let board: FleetBoard?
    private let logger: Logger
    /// The broker's address, for the log.
    private let broker: String
    /// The cameras announced, by name, with what watches their events.
    private var announced: [String: Task<Void, Never>] = [:]
    /// The interval a camera's next time-lapse started here takes, by camera name.
    private var intervals: [String: Duration] = [:]
    private var connected = false
    /// Whether the broker has answered or refused at least once, with who waits for that
    /// (``firstAttempt()``), and whether the current outage was logged.
    private var hasTried = false
    private var triedWaiters: [CheckedContinuation<Void, Never>] = []
    private var outageLogged = false
    /// This daemon on the broker, against another that takes the same node (``NodeClaim``).
    private let claim = NodeClaim.current()
    /// Set once another daemon took this node: the bridge then leaves the broker to it.
    private var yielded = false

    /// The interval of a time-lapse started by the running switch before one is set.
    static let defaultInterval = Duration.seconds(10)
    /// The soonest a fire time may be after a command arrives, and the latest.
    static let fireWindow = Duration.milliseconds(50)...Duration.seconds(3600)

    /// - Parameter board: Where what the other hosts publish is folded in, for the web app's
    ///   rig view; nil listens to no other host.
    init(settings: DaemonConfiguration.MQTTSettings, version: String, cameras: CameraRegistry, jobs: JobManager,
         groups: [DaemonConfiguration.Group], board: FleetBoard? = nil, logger: Logger) throws(MQTTError) {
        guard let broker = settings.broker else { throw .invalid("[mqtt] has no broker") }
        let node = Self.node(settings)
        self.board = board
        topics = MQTTTopics(prefix: settings.topicPrefix, node: node)
        self.broker = "\(broker)"
        var configuration = settings.session(with: broker, clientID: settings.clientID ?? "unleashed-\(node)")
        configuration.will = MQTTMessage(topic: topics.availability, text: "offline", retain: true)
        client = try MQTTClient(configuration)
        discovery = settings.discovery
            ? HomeAssistantDiscovery(topics: topics, discoveryPrefix: settings.discoveryPrefix, version: version) : nil
        self.cameras = cameras
        self.jobs = jobs
        self.groups = groups
        self.logger = logger
    }

    /// Serves until cancelled, then says goodbye (`offline`, retained) and disconnects.
    func run() async {
        do {
            try client.start()
        } catch {
            logger.error("mqtt: \(error)")
            return
        }
        let cameraChanges = await cameras.changes()
        let jobChanges = await jobs.watch()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [client] in
                // Each command on a task of its own: a shot an hour ahead must not hold up the
                // next command, nor the connection's events.
                await withDiscardingTaskGroup { commands in
                    for await event in client.events {
                        guard case .message(let message) = event else {
                            await self.handle(event)
                            continue
                        }
                        guard await self.admit() else {
                            self.logger.warning("mqtt: \(message.topic): more than \(Self.commandsInFlight) commands under way; this one is dropped")
                            continue
                        }
                        commands.addTask {
                            await self.command(message)
                            await self.finished()
                        }
                    }
                }
            }
            group.addTask {
                for await _ in cameraChanges { await self.camerasChanged() }
            }
            group.addTask {
                for await change in jobChanges.changes { await self.jobChanged(change) }
            }
            group.addTask {
                // Ends the bridge when another daemon has taken this node.
                for await _ in self.yieldings {}
            }
            await withTaskCancellationHandler {
                await group.next()
            } onCancel: {
                jobChanges.control.finish()
            }
            group.cancelAll()
        }
        for task in announced.values { task.cancel() }
        // The node is the other daemon's now: its availability and claim are not this one's.
        if !yielded {
            try? client.publish(MQTTMessage(topic: topics.availability, text: "offline", retain: true))
            // A clean stop leaves no claim behind for a later start to weigh.
            try? client.publish(MQTTMessage(topic: topics.instance, payload: [], retain: true))
        }
        client.stop()
    }

    /// Finishes when the bridge yields its node to another daemon.
    private let (yieldings, yieldSignal) = AsyncStream.makeStream(of: Void.self)

    // MARK: - The connection

    private func handle(_ event: MQTTClient.Event) async {
        switch event {
        case .connected:
            connected = true
            attempted()
            outageLogged = false
            board?.setConnected(true)
            logger.info("mqtt: connected to \(broker) as \(topics.node)")
            await announceAll()
        case .disconnected, .refused:
            let reason = switch event {
            case .refused(let refusal): refusal.description
            case .disconnected(let reason): reason
            default: ""
            }
            attempted()
            // Once an outage: a broker down for an hour is one line, not one a retry.
            if !outageLogged {
                logger.warning("mqtt: \(broker): \(reason); trying again, with back-off up to 30 s")
                outageLogged = true
            }
            connected = false
            board?.setConnected(false)
        case .message(let message):
            await command(message)
        }
    }

    /// Returns once the broker has answered or refused the bridge's first attempt: for a test
    /// of a broker that comes up later, so that it comes up after a refusal.
    func firstAttempt() async {
        guard !hasTried else { return }
        await withCheckedContinuation { triedWaiters.append($0) }
    }

    private func attempted() {
        hasTried = true
        for waiter in triedWaiters { waiter.resume() }
        triedWaiters.removeAll()
    }

    /// Commands under way (shots waiting for their time, fleet shots): a flood of them is
    /// dropped beyond ``commandsInFlight`` rather than held in memory.
    private var underWay = 0
    static let commandsInFlight = 256

    private func admit() -> Bool {
        guard underWay < Self.commandsInFlight else { return false }
        underWay += 1
        return true
    }

    private func finished() {
        underWay -= 1
    }

    /// Everything a new connection (or a broker that lost its retained messages) needs.
    private func announceAll() async {
        guard !yielded else { return }
        // Subscribed first: the broker then hands over the claim another daemon left.
        do { try client.subscribe(topics.instance) } catch { logger.error("mqtt: \(error)") }
        publish(MQTTMessage(topic: topics.instance, text: text(claim.json), retain: true))
        publish(MQTTMessage(topic: topics.availability, text: "online", retain: true))
        publishClock()
        let fleetState = board == nil ? [] : FleetState.filters(prefix: topics.prefix)
        for filter in [topics.shootCommands, topics.runningCommands, topics.intervalCommands, topics.settingCommands, topics.fleetShoot,
                       topics.fleetTimelapse, topics.fleetStop, "homeassistant/status"] + fleetState {
            do { try client.subscribe(filter) } catch { logger.error("mqtt: \(error)") }
        }
        if let discovery { for entity in discovery.daemon() { publish(entity) } }
        for entry in await cameras.all { await announce(entry) }
        for (name, _) in announced where !(await cameras.all.contains { $0.name == name }) { forget(name) }
        // The jobs under way, whose documents a restarted broker lost.
        for job in await jobs.liveJobs {
            publish(MQTTMessage(topic: topics.job(Int(job.id)), text: text(job.json), retain: true))
        }
    }

    private func camerasChanged() async {
        let entries = await cameras.all
        for entry in entries where announced[entry.name] == nil { await announce(entry) }
        for name in announced.keys where !entries.contains(where: { $0.name == name }) { forget(name) }
    }

    /// Announces a camera and publishes its state now and after each of its events.
    ///
    /// A camera forgotten while this awaits is not announced again: it is noted as announced
    /// before anything is published, and what is published after an await checks it still is.
    private func announce(_ entry: CameraRegistry.Entry) async {
        let level = MQTTTopics.level(entry.name)
        if let other = announced.keys.first(where: { $0 != entry.name && MQTTTopics.level($0) == level }) {
            // One topic level, two cameras: the second would overwrite the first's state, take its
            // commands and, once forgotten, remove its entities.
            logger.error("mqtt: camera '\(entry.name)' is not on the broker: its topic level '\(level)' is camera '\(other)'s; rename one")
            return
        }
        if announced[entry.name] == nil {
            let events = await entry.camera.events()
            // Removed while subscribing, or announced meanwhile by another call (this camera, or
            // another of its topic level).
            guard announced[entry.name] == nil, !announced.keys.contains(where: { MQTTTopics.level($0) == level }),
                  await cameras.all.contains(where: { $0.name == entry.name }) else { return }
            announced[entry.name] = Task {
                for await _ in events {
                    await self.publishState(entry)
                }
            }
        }
        if let discovery {
            for entity in discovery.camera(entry.name, model: entry.camera.identity.cameraModel) { publish(entity) }
        }
        await publishState(entry)
        await publishRun(entry.name)
    }

    /// A camera forgotten: its entities removed from Home Assistant, its retained state cleared.
    private func forget(_ name: String) {
        // A camera never announced (its level was another's) has nothing here to remove.
        guard let watching = announced.removeValue(forKey: name) else { return }
        watching.cancel()
        if let discovery {
            for topic in discovery.cameraTopics(name) { publish(MQTTMessage(topic: topic, payload: [], retain: true)) }
        }
        for topic in [topics.cameraState(name), topics.run(name)] { publish(MQTTMessage(topic: topic, payload: [], retain: true)) }
    }

    private func publishState(_ entry: CameraRegistry.Entry) async {
        // A camera out of reach answers late or not at all: its last known state meanwhile.
        guard let status = try? await entry.statusReader.status(waitingAtMost: .seconds(2)) else { return }
        // Forgotten while its status was read: its cleared state stays cleared.
        guard announced[entry.name] != nil else { return }
        publish(MQTTMessage(topic: topics.cameraState(entry.name), text: text(status.json.merging(["name": .string(entry.name)])), retain: true))
    }

    private func publishClock() {
        let clock = jobs.wallClock.discipline
        publish(MQTTMessage(topic: topics.clock, text: text(JSONValue(encoding: HostClock(clock))), retain: true))
    }

    // MARK: - Jobs

    private func jobChanged(_ change: JobChange) async {
        switch change {
        case .job(let snapshot):
            publish(MQTTMessage(topic: topics.job(Int(snapshot.id)), text: text(snapshot.json), retain: true))
            for camera in snapshot.cameras { await publishRun(camera, latest: snapshot) }
        case .frame(let frame, let id):
            publish(MQTTMessage(topic: topics.frames(Int(id)), text: text(JobEvent.frame(frame, job: id).data)))
            // The job's retained document follows its frames, so that a reader of the broker
            // (`fleet status`, another host's rig view) sees the slot it has reached.
            if let snapshot = try? await jobs.job(id) {
                publish(MQTTMessage(topic: topics.job(Int(id)), text: text(snapshot.json), retain: true))
                for camera in snapshot.cameras { await publishRun(camera, latest: snapshot) }
            }
        }
    }

    /// The camera's time-lapse as the switch, the frames and the next-shot sensors read it.
    private func publishRun(_ name: String, latest: JobSnapshot? = nil) async {
        let job: JobSnapshot? = if let latest { latest } else { await runningJob(on: name) }
        // Forgotten meanwhile (or never announced): its cleared state stays cleared.
        guard announced[name] != nil else { return }
        let running = job?.state.isLive ?? false
        var document: [String: JSONValue] = [
            "running": .bool(running),
            "intervalSeconds": .seconds(intervals[name] ?? Self.defaultInterval),
            "frames": .int(job?.summary.taken ?? 0),
            "nextShot": .null,
            "job": job.map { .integer($0.id) } ?? .null,
        ]
        if running, let next = job?.nextSlot {
            document["nextShot"] = .string(FleetTime.text(Date(timeIntervalSince1970: Double(next.dueUnixMs) / 1000)))
        }
        publish(MQTTMessage(topic: topics.run(name), text: text(.object(document)), retain: true))
    }

    private func runningJob(on camera: String) async -> JobSnapshot? {
        await jobs.liveJobs.first { $0.cameras.contains(camera) }
    }

    // MARK: - Commands

    private func command(_ message: MQTTMessage) async {
        if message.topic == topics.instance { return claimed(message) }
        if let board, board.take(message) { return }
        if message.topic == "homeassistant/status" {
            // Home Assistant started again: it forgets entities it was not told about since.
            if message.text == "online", let discovery {
                for entity in discovery.daemon() { publish(entity) }
                for entry in await cameras.all {
                    for entity in discovery.camera(entry.name, model: entry.camera.identity.cameraModel) { publish(entity) }
                }
            }
            return
        }
        // A command the broker kept (published with retain) comes again at every subscription:
        // at each reconnect and each start. A command is an act of the moment, so one delivered
        // from the broker's store is not carried out (docs/mqtt.md).
        if message.retain {
            logger.notice("mqtt: \(message.topic): ignored, a retained message; commands are sent without retain")
            return
        }
        if message.topic == topics.fleetShoot { return await fleetShoot(message) }
        if message.topic == topics.fleetTimelapse { return await fleetTimelapse(message) }
        if message.topic == topics.fleetStop { return await fleetStop(message) }
        guard let (level, action) = topics.cameraCommand(message.topic) else { return }
        guard let entry = await cameras.all.first(where: { announced[$0.name] != nil && MQTTTopics.level($0.name) == level }) else {
            logger.warning("mqtt: \(message.topic): no camera \(level) here")
            return
        }
        switch action {
        case .shoot: await shoot(entry, message)
        case .running: await setRunning(entry, message.text)
        case .interval: await setInterval(entry.name, message.text)
        case .setting(let name): await set(name, to: message.text, on: entry)
        }
    }

    /// Another daemon's claim on this node, retained or live: one that started after this one
    /// took it over (same client id: the broker drops one of them at each connection, so both
    /// would knock each other off forever). The older daemon says so and leaves the broker.
    private func claimed(_ message: MQTTMessage) {
        guard !yielded, let other = NodeClaim(message.payload), claim.yields(to: other, now: Date()) else { return }
        yielded = true
        board?.setConnected(false)
        logger.error("""
            mqtt: another daemon (host \(other.host), pid \(other.pid)) took node '\(topics.node)' on the broker after this one started; \
            this one leaves the broker to it. Give each daemon a node of its own: [mqtt] node = "NAME"
            """)
        yieldSignal.finish()
    }

    /// A picture now, or at the UTC time of `{"at": ...}`; the outcome on the camera's shot topic.
    private func shoot(_ entry: CameraRegistry.Entry, _ message: MQTTMessage) async {
        let request: ShootRequest
        do throws(ShootRequest.Refusal) {
            request = try ShootRequest(payload: message.payload, now: jobs.wallClock.now)
        } catch {
            return publish(MQTTMessage(topic: topics.shot(entry.name), text: text(["ok": false, "error": .string(error.reason)])))
        }
        let outcome = await fire(entry, at: request.at)
        publish(MQTTMessage(topic: topics.shot(entry.name), text: text(JSONValue(encoding: outcome))))
    }

    /// Fires `entry` now or at `at`, and says how it went.
    private func fire(_ entry: CameraRegistry.Entry, at: Date?) async -> FleetAnswer.Shot {
        var outcome = FleetAnswer.Shot(camera: entry.name, ok: false)
        do throws(CameraError) {
            let shot: Shot
            if let at {
                let instant = ContinuousClock.now + (Duration.checked(from: jobs.wallClock.now, to: at) ?? .zero)
                outcome.at = FleetTime.text(at)
                shot = try await entry.camera.shoot(at: instant)
                outcome.answeredAfterAtMs = (ContinuousClock.now - instant) / .microseconds(1) / 1000
            } else {
                shot = try await entry.camera.shoot()
            }
            outcome.ok = true
            outcome.shot = shot.json
        } catch {
            outcome.error = error.description
        }
        return outcome
    }

    /// Every camera here (or a group's) at one UTC instant, for `unleashed fleet shoot`; the
    /// answer, with this host's clock, on ``MQTTTopics/fleetAnswers``.
    private func fleetShoot(_ message: MQTTMessage) async {
        guard case (let request, var answer, let names)? = await admit(message, { payload throws(ShootRequest.Refusal) in
            try FleetShootRequest(payload: payload, now: self.jobs.wallClock.now)
        }) else { return }
        let entries = await cameras.all.filter { names.contains($0.name) }
        guard !entries.isEmpty else { return refuse(&answer, "no camera on this host") }
        answer.accepted = true
        answer.at = FleetTime.text(request.at)
        let shots = await withTaskGroup(of: FleetAnswer.Shot.self) { group in
            for entry in entries { group.addTask { await self.fire(entry, at: request.at) } }
            var shots: [FleetAnswer.Shot] = []
            for await shot in group { shots.append(shot) }
            return shots
        }
        answer.shots = shots.sorted { $0.camera < $1.camera }
        publish(answer)
    }

    /// A time-lapse of every camera here (or a group's) from the fleet's start time, on this
    /// host's engine and journal: one camera as a job, several as a rig job that fires them
    /// together. The answer names the job, whose frames go out on its frames topic.
    private func fleetTimelapse(_ message: MQTTMessage) async {
        guard case (let request, var answer, let names)? = await admit(message, { payload throws(ShootRequest.Refusal) in
            try FleetTimelapseRequest(payload: payload, now: self.jobs.wallClock.now)
        }) else { return }
        guard !names.isEmpty else { return refuse(&answer, "no camera on this host") }
        let plan = RunPlan(intervalMs: request.intervalMs, stop: request.frames.map { .frames($0) } ?? .never)
        // The run starts at the fleet's instant itself, so every host journals the same t0.
        let start = Int64((request.start.timeIntervalSince1970 * 1000).rounded())
        do throws(JobError) {
            let job = names.count == 1
                ? try await jobs.submit(camera: names[0], plan: plan, startingAt: start)
                : try await jobs.submit(rig: names, plan: plan, startingAt: start)
            answer.accepted = true
            answer.job = job.id
            answer.cameras = names
            answer.start = FleetTime.text(request.start)
            logger.info("mqtt: fleet time-lapse \(request.id) as job \(job.id) on \(names.joined(separator: ", "))")
            publish(answer)
        } catch {
            refuse(&answer, "the time-lapse was refused: \(error)")
        }
    }

    /// Stops every time-lapse here (a group's: each on one of its cameras) now, for `unleashed
    /// fleet stop`; the answer lists the jobs stopped, with their frames, and those that would
    /// not stop with why. A host with nothing running answers that, so the sender hears it.
    private func fleetStop(_ message: MQTTMessage) async {
        guard case (let request, var answer, let names)? = await admit(message, { payload throws(ShootRequest.Refusal) in
            try FleetStopRequest(payload: payload)
        }) else { return }
        // Without a group, every job here, including one on a camera since removed.
        let members = request.group == nil ? nil : Set(names)
        let running = await jobs.liveJobs.filter { job in
            members.map { !$0.isDisjoint(with: job.cameras) } ?? true
        }
        var stopped: [FleetAnswer.StoppedJob] = []
        var failures: [FleetAnswer.FailedJob] = []
        for job in running.sorted(by: { $0.id < $1.id }) {
            do throws(JobError) {
                let ended = try await jobs.stop(job.id, afterCurrentFrame: false, reason: "stopped by a fleet command")
                stopped.append(FleetAnswer.StoppedJob(job: ended.id, cameras: ended.cameras, frames: ended.summary.taken,
                                                      lastSlot: ended.lastFrame?.frame ?? 0))
            } catch {
                failures.append(FleetAnswer.FailedJob(job: job.id, error: "\(error)"))
            }
        }
        answer.accepted = true
        answer.stopped = stopped
        if !failures.isEmpty { answer.failed = failures }
        logger.info("mqtt: fleet stop \(request.id): \(stopped.count) job(s) stopped")
        publish(answer)
    }

    /// The start of this host's answer to a fleet command: its name and its clock now.
    /// The first steps of every fleet command: its request read from `message` by `parse`, the
    /// answer begun under its id, and the cameras it is for (a group's, or all here). Nil once
    /// the command has been refused and the refusal published.
    private func admit<Request: FleetRequest>(
        _ message: MQTTMessage, _ parse: ([UInt8]) throws(ShootRequest.Refusal) -> Request
    ) async -> (request: Request, answer: FleetAnswer, names: [String])? {
        var answer = fleetAnswer()
        let request: Request
        do throws(ShootRequest.Refusal) {
            request = try parse(message.payload)
        } catch {
            refuse(&answer, error.reason, id: error.id)
            return nil
        }
        answer.id = request.id
        guard let names = await cameraNames(group: request.group) else {
            refuse(&answer, "no group \(request.group ?? "") on this host")
            return nil
        }
        return (request, answer, names)
    }

    private func fleetAnswer() -> FleetAnswer {
        FleetAnswer(node: topics.node, id: nil, clock: HostClock(jobs.wallClock.discipline))
    }

    /// Answers a fleet command with a refusal and its reason (under the command's id, when it
    /// had one; an id already in the answer stays).
    private func refuse(_ answer: inout FleetAnswer, _ reason: String, id: String? = nil) {
        answer.accepted = false
        answer.reason = reason
        if let id { answer.id = id }
        publish(answer)
    }

    /// Publishes this host's answer to a fleet command.
    private func publish(_ answer: FleetAnswer) {
        publish(MQTTMessage(topic: topics.fleetAnswers, text: text(JSONValue(encoding: answer))))
    }

    /// The cameras a fleet command reaches here: every camera, or the group's that this host
    /// holds; nil when this host has no such group.
    private func cameraNames(group name: String?) async -> [String]? {
        let held = await cameras.all.map(\.name)
        guard let name else { return held }
        guard let members = groups.first(where: { $0.name == name })?.cameras else { return nil }
        return held.filter(members.contains)
    }

    /// `ON` starts a time-lapse at the camera's interval until told to stop; `OFF` stops it.
    private func setRunning(_ entry: CameraRegistry.Entry, _ payload: String) async {
        switch payload.trimmingCharacters(in: .whitespacesAndNewlines).uppercased() {
        case "ON":
            guard await runningJob(on: entry.name) == nil else { return await publishRun(entry.name) }
            let interval = intervals[entry.name] ?? Self.defaultInterval
            let plan = RunPlan(intervalMs: Int64(interval / .milliseconds(1)), stop: .never)
            do throws(JobError) {
                let job = try await jobs.submit(camera: entry.name, plan: plan)
                logger.info("mqtt: time-lapse \(job.id) started on \(entry.name) every \(interval)")
            } catch {
                logger.warning("mqtt: time-lapse on \(entry.name) refused: \(error)")
                await publishRun(entry.name)
            }
        case "OFF":
            guard let job = await runningJob(on: entry.name) else { return await publishRun(entry.name) }
            _ = try? await jobs.stop(job.id, afterCurrentFrame: false, reason: "stopped over MQTT")
        default:
            logger.warning("mqtt: \(topics.runningCommand(entry.name)): '\(payload.prefix(40))' is neither ON nor OFF")
        }
    }

    /// A camera setting by its name, to the value as a person writes it, as `PUT
    /// /v1/cameras/{camera}/settings/{setting}` does; the outcome on the setting's topic.
    private func set(_ name: String, to written: String, on entry: CameraRegistry.Entry) async {
        var outcome: [String: JSONValue] = ["camera": .string(entry.name), "setting": .string(name)]
        do throws(CameraError) {
            guard let setting = SettingID(userName: name) else { throw .unknownSetting(name) }
            let value = try entry.camera.parse(written.trimmingCharacters(in: .whitespacesAndNewlines), for: setting)
            let applied = try await entry.camera.set(value)
            outcome["ok"] = true
            outcome["value"] = .string(applied.text)
        } catch {
            outcome["ok"] = false
            outcome["error"] = .string(error.description)
        }
        publish(MQTTMessage(topic: topics.setting(entry.name, MQTTTopics.level(name)), text: text(.object(outcome))))
    }

    /// The interval, in seconds, of the next time-lapse the switch starts.
    private func setInterval(_ name: String, _ payload: String) async {
        guard let seconds = Double(payload.trimmingCharacters(in: .whitespacesAndNewlines)), seconds.isFinite,
              (0.5...86_400).contains(seconds) else {
            logger.warning("mqtt: \(topics.intervalCommand(name)): '\(payload.prefix(40))' is not an interval of 0.5 to 86400 s")
            return await publishRun(name)
        }
        intervals[name] = .milliseconds(Int64((seconds * 1000).rounded()))
        await publishRun(name)
    }

    // MARK: - Publishing

    private func publish(_ entity: HomeAssistantDiscovery.Entity) {
        publish(MQTTMessage(topic: entity.topic, text: text(entity.document), retain: true))
    }

    /// Publishes, or logs why not: the broker being away is not an error (libmosquitto keeps
    /// QoS 1 messages until it is back).
    /// Publishes while connected. Without a connection nothing is queued: libmosquitto would
    /// keep every message of a long outage in memory (a frame every 200 ms is 18,000 an hour),
    /// and what matters is sent again on reconnecting (``announceAll()``), the frames being in
    /// the journal.
    private func publish(_ message: MQTTMessage) {
        guard connected else { return }
        do { try client.publish(message) } catch { logger.error("mqtt: \(error)") }
    }

    private func text(_ value: JSONValue) -> String { String(decoding: value.data, as: UTF8.self) }

    /// This host's name on the broker: `[mqtt] node`, or the host's name.
    static func node(_ settings: DaemonConfiguration.MQTTSettings) -> String {
        settings.node ?? hostName()
    }

    static func hostName() -> String {
        MQTTTopics.level(WebHostRule.Machine.hostName().split(separator: ".").first.map(String.init) ?? "unleashed")
    }
}

/// One daemon's claim on its node: an id of its own for this process, where it runs and when it
/// started. A claim read back is compared with this daemon's own by `startedAt`: the later one
/// keeps the node.
struct NodeClaim: Sendable, Equatable {
    var instance: String
    var host: String
    var pid: Int
    /// Milliseconds since 1970 on the claimant's clock.
    var startedAt: Int64

    static func current() -> NodeClaim {
        NodeClaim(instance: UUID().uuidString.lowercased(), host: MQTTBridge.hostName(), pid: Int(getpid()),
                  startedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }

    init(instance: String, host: String, pid: Int, startedAt: Int64) {
        (self.instance, self.host, self.pid, self.startedAt) = (instance, host, pid, startedAt)
    }

    /// A claim read from the broker; nil for anything else (an empty, cleared claim included).
    init?(_ payload: [UInt8]) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(payload)), let members = value.objectValue,
              let instance = members["instance"]?.stringValue, let startedAt = members["startedAt"]?.integerValue else { return nil }
        self.instance = instance
        host = members["host"]?.stringValue.map { String($0.prefix(64)) } ?? "?"
        pid = Int(members["pid"]?.integerValue ?? 0)
        self.startedAt = startedAt
    }

    var json: JSONValue {
        ["instance": .string(instance), "host": .string(host), "pid": .integer(Int64(pid)), "startedAt": .integer(startedAt)]
    }

    /// Whether this daemon gives its node up to `other`: another daemon that started after
    /// this one and is not a leftover. A claim dated more than a minute ahead of this host's
    /// clock is refused (a clock gone wrong, or a claim written to push daemons off), and so is
    /// one from this host whose process is gone (a clock set back across a power cut makes the
    /// dead daemon's claim look newer than this one's).
    func yields(to other: NodeClaim, now: Date, isAlive: (Int) -> Bool = { kill(pid_t($0), 0) == 0 || errno == EPERM }) -> Bool {
        guard other.instance != instance, other.startedAt > startedAt else { return false }
        guard Double(other.startedAt) <= (now.timeIntervalSince1970 + 60) * 1000 else { return false }
        if other.host == host, !isAlive(other.pid) { return false }
        return true
    }
}
