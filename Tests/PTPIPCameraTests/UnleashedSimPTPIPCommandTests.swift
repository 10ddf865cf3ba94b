import Foundation
import Testing
import UnleashedTestSupport

/// `unleashed-sim ptpip`, the executable, as test scripts start it.
@Suite("unleashed-sim ptpip, the executable", .timeLimit(.minutes(1)))
struct UnleashedSimPTPIPCommandTests {
    @Test("prints the bound address first, a JSON line per session, writes captures to --card, and exits 0 on SIGTERM")
    func listensAndReports() async throws {
        let card = FileManager.default.temporaryDirectory.appendingPathComponent("ptpip-card-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: card) }
        let simulator = try SimulatorProcess(["ptpip", "--port", "0", "--time-scale", "0.01", "--card", card.path])
        try await simulator.waitForOutput("}\n")
        let first = try #require(simulator.output.split(separator: "\n").first)
        let port = try #require(Int(first.split(separator: ":").last?.dropLast(2) ?? ""))
        #expect(first == #"{"listening":"127.0.0.1:\#(port)"}"#)

        let client = try await RawPTPIPClient(port: port)
        #expect(try await client.call(0x1002, [1]).code == 0x2001)
        #expect(try await client.call(0x100E).code == 0x2001)
        let handle = try #require(try await client.nextEvent().parameters.first)
        let bytes = try #require(try await client.call(0x1009, [handle]).data)
        client.close()
        try await simulator.waitForOutput(#""event":"download""#)
        #expect(simulator.output.contains(#"{"event":"sessionOpened","sessions":1}"#))
        #expect(simulator.output.contains(#"{"event":"capture","file":"IMG_0001.JPG","bytes":\#(bytes.count),"brightness":0.0}"#),
                "the default settings expose the default scene correctly")
        #expect(try Data(contentsOf: card.appendingPathComponent("IMG_0001.JPG")) == Data(bytes))
        #expect(await simulator.terminate() == 0)
    }

    @Test("an unreadable fault plan is refused with a message naming the item and status 64")
    func badFaults() async throws {
        let simulator = try SimulatorProcess(["ptpip", "--port", "0", "--faults", "busy=0.1,jam=3"])
        #expect(await simulator.exitStatus() == 64)
        #expect(simulator.errors.contains("jam=3"))
        #expect(simulator.output.isEmpty)
    }

    @Test("a sky that is no place, or no time, is refused with status 64 saying what to write")
    func badSky() async throws {
        for (sky, message) in [("95,13.4", "is not a place"), ("52.5,13.4,tonight", "is not a time")] {
            let simulator = try SimulatorProcess(["ptpip", "--port", "0", "--sky", sky])
            #expect(await simulator.exitStatus() == 64)
            #expect(simulator.errors.contains(message), "\(simulator.errors)")
            #expect(simulator.output.isEmpty)
        }
    }
}
