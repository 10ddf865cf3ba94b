public import Foundation
import Synchronization

/// A value that changes, and the tests waiting on it: a test waits for the change it needs, and
/// every change wakes it to look, instead of polling on a timer.
///
/// What fills it in (a stream's consumer, a pipe's handler, a termination handler) calls
/// `update`; a test calls `wait(_:until:)`.
public final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, any Error>
        let guardTask: Task<Void, Never>
    }

    private struct State {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The value now.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes each waiter whose condition now holds. Conditions are tested
    /// outside the lock, so that one may read this value (or anything else) itself.
    public func update(_ change: (inout Value) -> Void) {
        let (value, waiters) = state.withLock { state in
            change(&state.value)
            return (state.value, state.waiters)
        }
        for (id, waiter) in waiters where waiter.condition(value) { finish(id) { $0.resume(returning: value) } }
    }

    /// Waits until `condition` holds on the value, and returns that value. Fails with `what` and
    /// the value as it was if nothing made it hold within `timeout`: a guard against a hang,
    /// never a verdict on speed (a test that is slow but right passes).
    @discardableResult
    public func wait(_ what: String, timeout: Duration = .seconds(60),
                     until condition: @escaping @Sendable (Value) -> Bool) async throws -> Value {
        let id: UInt64 = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                if Task.isCancelled { return continuation.resume(throwing: CancellationError()) }
                // The one real sleep of the event waits: the hang guard. No event can stand in
                // for "nothing happened"; the guard is cancelled as soon as the wait ends.
                let guardTask = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled, let self else { return }
                    let last = self.value
                    self.finish(id) { $0.resume(throwing: FixtureError("never happened within \(timeout): \(what); last value: \(last)")) }
                }
                let value = state.withLock { state in
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation, guardTask: guardTask)
                    return state.value
                }
                // A change made after this read wakes the waiter through `update`.
                if condition(value) { finish(id) { $0.resume(returning: value) } }
            }
        } onCancel: {
            finish(id) { $0.resume(throwing: CancellationError()) }
        }
    }

    /// Ends a wait that is still pending, once: whoever removes the waiter resumes it.
    private func finish(_ id: UInt64, _ resume: (CheckedContinuation<Value, any Error>) -> Void) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.guardTask.cancel()
        resume(waiter.continuation)
    }
}

extension Observed {
    /// Appends to a collection value.
    public func append<Element>(_ element: Element) where Value == [Element] {
        update { $0.append(element) }
    }
}

/// Waits for a condition on state that tells no one when it changes: another process's answers
/// to a command, its files. Fails with `what` if it never held within `timeout` (a guard
/// against a hang, never a verdict on speed).
///
/// Prefer `Observed` wherever something can say that it changed.
public func poll(_ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(20),
                 _ condition: () async throws -> Bool) async throws {
    guard try await eventually(every: interval, giveUpAfter: timeout, condition) else {
        throw FixtureError("never happened within \(timeout): \(what)")
    }
}

/// Whether `condition` comes to hold: asked at once, then again every `step`, until it holds, or
/// `giveUpAfter` has passed, or the task is cancelled. The limit only keeps a test from hanging
/// on an event that never comes: a test asserts the event (`#require(await eventually { ... },
/// "... never happened")`), never how long it took, so a slow machine passes where a fast one
/// does. The one polling loop of the tests: `poll` is this with an error.
public func eventually(every step: Duration = .milliseconds(10), giveUpAfter limit: Duration = .seconds(60),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline, !Task.isCancelled {
        if try await condition() { return true }
        // A real sleep: what is tested is another process's state, or a thread's, which sends
        // no notice of a change.
        try? await Task.sleep(for: step)
    }
    return try await condition()
}

/// A child's output pipe, read as data comes and, once the child has exited, to what is left:
/// all the child wrote before it ended arrives before its end is reported, without waiting for
/// the pipe's end of file (which a grandchild holding the pipe would put off).
public final class PipeCollector: Sendable {
    private let handle: FileHandle
    /// True once the pipe has been drained or has ended: later wake-ups read nothing.
    private let finished = Mutex(false)
    private let deliver: @Sendable (Data) -> Void

    /// Starts reading `pipe`; `deliver` gets each chunk, in order.
    public init(_ pipe: Pipe, _ deliver: @escaping @Sendable (Data) -> Void) {
        handle = pipe.fileHandleForReading
        self.deliver = deliver
        handle.readabilityHandler = { [weak self] handle in self?.readAvailable(handle) }
    }

    private func readAvailable(_ handle: FileHandle) {
        finished.withLock { finished in
            guard !finished else { return }
            let chunk = handle.availableData
            if chunk.isEmpty {
                finished = true
                handle.readabilityHandler = nil
            }
            deliver(chunk)
        }
    }

    /// Reads what is left in the pipe without blocking, and stops reading: for when the child has
    /// exited, so that what it wrote is all there.
    public func drain() {
        finished.withLock { finished in
            guard !finished else { return }
            finished = true
            handle.readabilityHandler = nil
            let descriptor = handle.fileDescriptor
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var rest = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count > 0 {
                    rest.append(contentsOf: buffer[..<count])
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            deliver(rest)
        }
    }
}
