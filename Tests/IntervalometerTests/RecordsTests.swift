import Foundation
import Intervalometer
import Testing

@Suite("Run records")
struct RecordsTests {
    @Test("a plan survives its stored JSON form")
    func planCodable() throws {
        let plan = RunPlan(intervalMs: 5000, stop: .frames(300), exposure: .bracket(count: 3, stepThirds: 3),
                           overrun: .defer, minimumGapMs: 200, hook: "./on-frame.sh")
        let data = try JSONEncoder().encode(plan)
        #expect(try JSONDecoder().decode(RunPlan.self, from: data) == plan)
    }
}
