@testable import Daemon
import Testing
import UnleashedAPI
import UnleashedTestSupport

/// The routes the daemon serves, as its listeners add them, against docs/api/openapi.yaml: a
/// route added to the server and not to the YAML (or the other way round) fails here, and each
/// is answered 405 for a method it does not take.
@Suite struct ServedRoutesTests {
    private static let api = ControlAPI(cameras: CameraRegistry(), jobs: JobManager(), access: AccessPolicy(), version: "0")

    private static func check(_ routes: [Route]) throws -> (status: Int32, report: String) {
        try APIContract.check(samples: [], routes: routes.map { ($0.method.rawValue, $0.template) })
    }

    @Test("every route served is an operation of the YAML, and every operation is served", .timeLimit(.minutes(1)))
    func servedIsDeclared() throws {
        let served = Self.api.servedRoutes
        #expect(Set(served).count == served.count, "a route added twice")
        let (status, report) = try Self.check(served)
        #expect(status == 0, "\(report)")
    }

    @Test("a route the server stops serving, or one the YAML lacks, is reported", .timeLimit(.minutes(1)))
    func driftIsReported() throws {
        let missing = try Self.check(Self.api.servedRoutes.filter { $0 != API.jobEvents.route })
        #expect(missing.status == 1)
        #expect(missing.report.contains("GET /v1/jobs/{id}/events: in the YAML but not served by the daemon"), "\(missing.report)")
        let extra = try Self.check(Self.api.servedRoutes + [Route(method: .get, template: "/v1/undeclared")])
        #expect(extra.status == 1)
        #expect(extra.report.contains("GET /v1/undeclared: served but not in the YAML"), "\(extra.report)")
    }
}
