import Hummingbird

/// The routes that submit, list, follow and stop jobs.
struct JobRoutes: Sendable {
    let jobs: JobManager
    let cameras: CameraRegistry

    func add(to v1: RouterGroup<ControlRequestContext>) {}
}
