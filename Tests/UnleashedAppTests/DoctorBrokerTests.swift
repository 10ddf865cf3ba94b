import Doctor
import Foundation
import Testing
import UnleashedApp
import UnleashedTestSupport

/// `unleashed doctor`'s broker check against a real mosquitto that the test starts and stops.
/// Apart from SystemInspectionTests because it opens libmosquitto in the test process, which
/// the Makefile runs in a process of its own (select() and descriptors past 1023).
@Suite("unleashed doctor's broker check (mosquitto)", .timeLimit(.minutes(1)))
struct DoctorBrokerTests {
    @Test func aBrokerThatRunsIsReachedAndOneThatIsDownIsAProblem() async throws {
        let broker = try await Broker()
        let machine = try SystemInspectionTests.Machine("[mqtt]\nbroker = \"\(broker.url)\"\n")
        let reached = await SystemInspectionTests.finding(.mqtt, machine.inspection())
        #expect(reached == Finding(.mqtt, .ok, "the broker \(broker.url) accepts the daemon's session"))
        broker.stop()
        let down = await SystemInspectionTests.finding(.mqtt, machine.inspection())
        #expect(down.status == .problem)
        #expect(down.summary.hasPrefix("the broker \(broker.url) cannot be reached"), "\(down.summary)")
    }

    @Test func noBrokerConfiguredIsSkipped() async throws {
        let machine = try SystemInspectionTests.Machine()
        #expect(await SystemInspectionTests.finding(.mqtt, machine.inspection()).status == .skipped)
    }
}
