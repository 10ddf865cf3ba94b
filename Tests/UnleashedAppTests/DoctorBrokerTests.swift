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

    /// A TLS broker's port that takes the connection and never answers: libmosquitto waits in
    /// the handshake and in its thread's join, which the check leaves behind after its limit.
    @Test func aTLSPortThatNeverAnswersIsAProblemAfterTheLimit() async throws {
        let port = try Broker.freePortForTests()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0 && listen(listener, 8) == 0)
        let machine = try SystemInspectionTests.Machine("[mqtt]\nbroker = \"mqtts://127.0.0.1:\(port)\"\n")
        var inspection = machine.inspection()
        inspection.answerLimit = .seconds(1)
        let silent = await SystemInspectionTests.finding(.mqtt, inspection)
        #expect(silent.status == .problem && silent.summary.hasSuffix("cannot be reached: no answer in 1.0 seconds"), "\(silent.summary)")
    }

    @Test func noBrokerConfiguredIsSkipped() async throws {
        let machine = try SystemInspectionTests.Machine()
        #expect(await SystemInspectionTests.finding(.mqtt, machine.inspection()).status == .skipped)
    }
}
