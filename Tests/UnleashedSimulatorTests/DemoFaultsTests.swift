import Testing
import UnleashedKit
import UnleashedProtocol
@testable import UnleashedSimulator
import UnleashedTestSupport

@Suite("Demo fault plans", .timeLimit(.minutes(1)))
struct DemoFaultsTests {
    @Test("the full text form reads into link faults, refusals and a timeline")
    func parsesEverything() throws {
        let plan = try DemoFaults(parsing:
            "drop=0.05,corrupt=0.01,duplicate=0.01,reorder=0.02,delay=0.1:200ms,busy=0.05,linkloss=30s@2m,reboot@5m,poweroff@10m,reboot@1h")
        #expect(plan.link == LinkFaults(drop: 0.05, corrupt: 0.01, duplicate: 0.01, reorder: 0.02,
                                        delayProbability: 0.1, delay: .milliseconds(200)))
        #expect(plan.busy == 0.05)
        #expect(plan.outages.count == 1 && plan.outages[0].at == .seconds(120) && plan.outages[0].length == .seconds(30))
        #expect(plan.reboots == [.seconds(300), .seconds(3600)])
        #expect(plan.powerOff == .seconds(600))
    }

    @Test("a bad item is named with what was expected", arguments: [
        ("drop=2", "drop=2", "probability"),
        ("drop=0.1,corrupt=lots", "corrupt=lots", "probability"),
        ("delay=0.1", "delay=0.1", "delay=PROBABILITY:DURATION"),
        ("linkloss=30s", "linkloss=30s", "linkloss=DURATION@TIME"),
        ("linkloss=0s@1m", "linkloss=0s@1m", "linkloss=DURATION@TIME"),
        ("reboot@soon", "reboot@soon", "reboot@TIME"),
        ("reboot=5m", "reboot=5m", "reboot@TIME"),
        ("poweroff@1m,poweroff@2m", "poweroff@2m", "only once"),
        ("drop=0.1,drop=0.2", "drop=0.2", "only once"),
        ("gremlins=1", "gremlins=1", "one of drop"),
        ("drop", "drop", "name=value"),
        ("", "", "name=value"),
        ("drop=0.1,", "", "name=value"),
    ])
    func refuses(text: String, item: String, expected: String) {
        #expect {
            _ = try DemoFaults(parsing: text)
        } throws: { error in
            guard let error = error as? DemoFaultsError else { return false }
            return error.item == item && error.description.contains("'\(item)'") && error.description.contains(expected)
        }
    }

    @Test("the schedule loses the link, restarts the module and switches the camera off at their times, and stops when cancelled")
    func schedule() async throws {
        let clock = RunClock()
        let module = VirtualModule(camera: VirtualCamera(profile: .nikonLike), clock: clock, utcNow: { 0 })
        let radio = SimulatedRadio(module: module, clock: clock)
        let plan = try DemoFaults(parsing: "busy=1,linkloss=10s@1m,reboot@2m,poweroff@3m,reboot@4m")
        let task = plan.schedule(on: radio, clock: clock)

        func advance(to elapsed: Duration, from start: inout Duration) async {
            // Small steps so the plan's task is always waiting on the clock when it moves.
            while start < elapsed {
                await clock.advance(by: .milliseconds(500))
                start += .milliseconds(500)
            }
            for _ in 0..<100 { await Task.yield() }
        }
        var now = Duration.zero
        await advance(to: .seconds(59), from: &now)
        #expect(radio.timeOutOfRange == .zero)
        await advance(to: .seconds(60), from: &now)
        #expect(radio.timeOutOfRange == .seconds(10))
        await advance(to: .seconds(120), from: &now)
        #expect(await module.bootRemaining == .milliseconds(1500))
        #expect(await module.camera.power == .on)
        await advance(to: .seconds(180), from: &now)
        #expect(await module.camera.power == .off)
        task.cancel()
        await advance(to: .seconds(240), from: &now)
        #expect(await module.bootRemaining == .zero, "no restart after cancelling")
    }

    @Test("the plan's busy probability makes the module refuse camera commands")
    func busyFromPlan() async throws {
        let clock = RunClock()
        let module = VirtualModule(camera: VirtualCamera(profile: .nikonLike), clock: clock)
        let radio = SimulatedRadio(module: module, clock: clock)
        let plan = try DemoFaults(parsing: "busy=1")
        await plan.schedule(on: radio, clock: clock).value
        let client = await RawClient(module)
        try await client.hello()
        #expect(try await client.request(.shoot, id: 2).kind == .response(.shoot, .busy))
    }
}
