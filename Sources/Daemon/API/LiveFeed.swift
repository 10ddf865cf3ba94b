import CameraKit
import Foundation
import NIOCore
import Synchronization
import UnleashedAPI

/// What every follower of `GET /v1/live` is sent after its snapshot, read and encoded once
/// however many follow (a rig's phones): one subscription per camera, one watch of the jobs and
/// one heartbeat for all of them. Each event is written once as Server-Sent Events text and
/// handed to every follower's bounded buffer without waiting for any: a slow follower costs
/// its buffer, never a run's time, and twenty followers cost little more than one.
///
/// The sources run while anyone follows: the first follower starts them (and ``follow(browser:)``
/// returns once they are subscribed, so nothing after it is missed), the last to leave stops
/// them. When the cameras change, every follower is told to start again (`resync`) and let go,
/// and the sources stop, to start again with the new cameras for the next follower. So too when
/// the daemon's clock jumps (a phone's clock taken, a correction ended): the next snapshot
/// gives the clock, the jobs' times and `nowUnixMs` all read on the clock as it is now.
final class LiveFeed: Sendable {
    /// A piece of the stream: one event's text; `ends` after a `resync`.
    struct Chunk: Sendable {
        let bytes: ByteBuffer
        let ends: Bool
    }

    /// One follower: its buffer, and whether it overflowed.
    final class Follower: Sendable {
        let id = UUID()
        /// The paired browser it is, to let go of when that browser is revoked.
        let browser: String?
        let chunks: AsyncStream<Chunk>
        fileprivate let sink: AsyncStream<Chunk>.Continuation
        private let overflow = Mutex(false)

        fileprivate init(browser: String?, backlog: Int) {
            self.browser = browser
            (chunks, sink) = AsyncStream.makeStream(of: Chunk.self, bufferingPolicy: .bufferingOldest(backlog))
        }

        /// Whether it fell more than the backlog behind, and so was let go.
        var overflowed: Bool { overflow.withLock { $0 } }

        /// Ends its stream: the client left, or the server stops.
        func finish() { sink.finish() }

        fileprivate func hand(_ chunk: Chunk) -> Bool {
            if case .dropped = sink.yield(chunk) {
                overflow.withLock { $0 = true }
                sink.finish()
                return false
            }
            return true
        }
    }

    private struct State {
        var followers: [UUID: Follower] = [:]
        /// The running sources, and a task that ends once they are subscribed.
        var sources: (run: Task<Void, Never>, subscribed: Task<Void, Never>, generation: Int)?
        var generation = 0
    }

    private let cameras: CameraRegistry
    private let jobs: JobManager
    private let browsers: WebClients?
    private let backlog: Int
    private let heartbeat: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - backlog: How many events may wait for a follower before it is told to start again.
    ///   - heartbeat: How often a heartbeat goes out (and revoked browsers are let go).
    init(cameras: CameraRegistry, jobs: JobManager, browsers: WebClients?, backlog: Int = 1024,
         heartbeat: Duration = LiveEvent.heartbeatInterval) {
        self.cameras = cameras
        self.jobs = jobs
        self.browsers = browsers
        self.backlog = backlog
        self.heartbeat = heartbeat
        browsers?.onRevoke { [weak self] _ in self?.letGoOfRevoked() }
        jobs.wallClock.whenMoved { [weak self] in self?.clockMoved() }
    }

    /// A new follower, once the sources are subscribed: every event from now on reaches it, and
    /// anything before it is in what the caller reads next (the snapshot).
    func follow(browser: String?) async -> Follower {
        let follower = Follower(browser: browser, backlog: backlog)
        while true {
            let (subscribed, generation) = state.withLock { state -> (Task<Void, Never>, Int) in
                if let sources = state.sources { return (sources.subscribed, sources.generation) }
                state.generation += 1
                let generation = state.generation
                let (ready, signal) = AsyncStream.makeStream(of: Void.self)
                let run = Task { await self.run(generation: generation, ready: signal) }
                let subscribed = Task { for await _ in ready {} }
                state.sources = (run, subscribed, generation)
                return (subscribed, generation)
            }
            await subscribed.value
            // Sources that stopped while they subscribed (their followers all left, or the
            // cameras changed) are not joined: the next ones are.
            let joined = state.withLock { state -> Bool in
                guard state.sources?.generation == generation else { return false }
                state.followers[follower.id] = follower
                return true
            }
            if joined { return follower }
        }
    }

    /// Lets go of `follower`; the last to leave stops the sources.
    func leave(_ follower: Follower) {
        follower.finish()
        let stopped = state.withLock { state -> Task<Void, Never>? in
            guard state.followers.removeValue(forKey: follower.id) != nil, state.followers.isEmpty,
                  let sources = state.sources else { return nil }
            state.sources = nil
            return sources.run
        }
        stopped?.cancel()
    }

    /// How many follow now.
    var followerCount: Int { state.withLock { $0.followers.count } }

    private func run(generation: Int, ready: AsyncStream<Void>.Continuation) async {
        let changes = await cameras.changes()
        var subscriptions: [(String, AsyncStream<CameraEvent>)] = []
        for entry in await cameras.all { subscriptions.append((entry.name, await entry.camera.events())) }
        let watch = await jobs.watch()
        ready.finish()
        let streams = subscriptions
        await withDiscardingTaskGroup { group in
            for (name, stream) in streams {
                group.addTask { for await event in stream { self.send(.camera(CameraEventMessage(camera: name, event: event))) } }
            }
            group.addTask {
                for await change in watch.changes {
                    switch change {
                    case .job(let job): self.send(.job(job))
                    case .frame(let frame, let id): self.send(.frame(frame, job: id))
                    }
                }
                // The feed itself fell behind the jobs (a starved daemon): everyone starts again.
                if !Task.isCancelled { self.resyncAll(generation: generation, reason: "the daemon fell behind; open the stream again") }
            }
            group.addTask {
                for await _ in changes {
                    self.resyncAll(generation: generation, reason: "the daemon's cameras changed; open the stream again")
                    return
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: self.heartbeat) } catch { return }
                    self.letGoOfRevoked()
                    self.send(.heartbeat(nowUnixMs: self.jobs.nowUnixMs))
                }
            }
            // The sources run until cancelled: by the last follower leaving, or by a resync.
        }
        watch.control.finish()
    }

    /// Hands `event` to every follower, written once.
    private func send(_ event: LiveEvent) {
        let chunk = Chunk(bytes: ByteBuffer(string: event.serverSentEvent), ends: false)
        state.withLock { state in
            for (id, follower) in state.followers where !follower.hand(chunk) { state.followers[id] = nil }
        }
    }

    /// Tells every follower to start again, lets them go, and stops these sources.
    private func resyncAll(generation: Int, reason: String) {
        let chunk = Chunk(bytes: ByteBuffer(string: LiveEvent.resync(reason: reason).serverSentEvent), ends: true)
        let stopped = state.withLock { state -> Task<Void, Never>? in
            guard let sources = state.sources, sources.generation == generation else { return nil }
            for follower in state.followers.values {
                _ = follower.hand(chunk)
                follower.finish()
            }
            state.followers = [:]
            state.sources = nil
            return sources.run
        }
        stopped?.cancel()
    }

    /// Tells every follower to start again: the daemon's clock jumped, and a page that measured
    /// its offset from the phone's on the old clock would place the slots wrongly until the next
    /// heartbeat.
    private func clockMoved() {
        guard let generation = state.withLock({ $0.sources?.generation }) else { return }
        resyncAll(generation: generation, reason: "the daemon's clock changed; open the stream again")
    }

    /// Ends the streams of browsers revoked since they began following: at once when
    /// ``WebClients`` says so, and at each heartbeat in case a change came another way.
    private func letGoOfRevoked() {
        guard let browsers else { return }
        let paired = Set(browsers.all.map(\.id))
        let chunk = Chunk(bytes: ByteBuffer(string: LiveEvent.resync(reason: "this browser is no longer paired").serverSentEvent), ends: true)
        state.withLock { state in
            for (id, follower) in state.followers {
                guard let browser = follower.browser, !paired.contains(browser) else { continue }
                _ = follower.hand(chunk)
                follower.finish()
                state.followers[id] = nil
            }
        }
    }
}
