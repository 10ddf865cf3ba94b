/// Whether `condition` comes to hold: asked at once, then again every `step`, until it holds or
/// `giveUpAfter` has passed. The limit only keeps a test from hanging on an event that never
/// comes: a test asserts the event (`#require(await eventually { ... }, "... never happened")`),
/// never how long it took, so a slow machine passes where a fast one does.
public func eventually(every step: Duration = .milliseconds(10), giveUpAfter limit: Duration = .seconds(60),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: limit)
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: step)
    }
    return try await condition()
}
