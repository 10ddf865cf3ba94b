import UnleashedAPI

/// The daemon's wall clock: read it, or offer a client's (the phone's) for a host whose own
/// cannot be trusted (``DaemonClock``). Offering needs `operate`: the clock decides when runs
/// start and stop and what time cameras are set to.
struct ClockRoutes: Sendable {
    let clock: DaemonClock

    func add(to router: APIRoutes) {
        router.on(API.clock, requires: .watch) { _, _ in clock.document }
        router.on(API.offerClock, requires: .operate) { reading, context in clock.offer(reading, from: context.client) }
    }
}
