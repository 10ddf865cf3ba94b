import CameraKit
import Synchronization
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// What became of one trigger.
enum ShotOutcome: Sendable {
    case taken(Shot)
    case failed(CameraError)
}

@Suite("Camera API over the connection, on a test clock", .timeLimit(.minutes(3)))
struct ModuleCameraTests {
    @Test("status, settings and a shot on a clean link")
    func basics() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera()
        #expect(camera.identity.cameraModel == CameraProfile.nikonLike.model)
        let status = try await drive(rig) { try await camera.status() }
        #expect(status.connection == .ready)
        #expect(status.cameraPower == .on)
        let shot = try await drive(rig) { try await camera.shoot() }
        #expect(shot.counter == status.shotCounter + 1)
        #expect(!shot.confirmedByCounter)
        #expect(shot.latency >= CameraProfile.nikonLike.shutterLag)
        let iso = try await drive(rig) { try await camera.set(SettingValue(setting: .iso, text: "800")!) }
        #expect(iso.text == "800")
        await #expect(throws: CameraError.self) {
            try await drive(rig) { try await camera.set(SettingValue(setting: .iso, text: "12345")!) }
        }
        await camera.close()
    }

    @Test("a value the camera does not offer is refused with the nearest offered values, and nothing changes")
    func valueNotOffered() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera()
        let wanted = try camera.parse("12345", for: .iso)
        await #expect {
            try await drive(rig) { try await camera.set(wanted) }
        } throws: { error in
            guard case .valueNotOffered(_, let nearest, _) = error as? CameraError else { return false }
            return nearest.map(\.text) == ["12800", "10000"]
                && String(describing: error) == "ISO 12345 is not offered by this camera; nearest: 12800, 10000"
        }
        #expect(await rig.module.camera.settings[.iso] == .iso(ISOSpeed(100)!))
        await camera.close()
    }

    @Test("a shot at the bulb setting is refused, saying why")
    func refusedShot() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera()
        _ = try await drive(rig) { try await camera.set(.shutterSpeed(.bulb)) }
        await #expect {
            try await drive(rig) { try await camera.shoot() }
        } throws: { error in
            guard case .refused("shoot", .invalidArgument, let message) = error as? CameraError else { return false }
            return message?.contains("bulb") == true
        }
        await camera.close()
    }

    @Test("every subscriber sees the link state and module events")
    func eventStreams() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera()
        let collectors = [await camera.events(), await camera.events()].map { stream in
            Task {
                var events: [CameraEvent] = []
                for await event in stream { events.append(event) }
                return events
            }
        }
        _ = try await drive(rig) { try await camera.shoot() }
        rig.radio.loseLink(for: .seconds(1))
        #expect(await rig.advance(until: { await rig.state().phase == .reconnecting }, limit: .seconds(1)))
        #expect(await rig.advance(until: { await rig.state() == .ready }, limit: .seconds(30)))
        await rig.advance(by: .milliseconds(100))
        await camera.close()
        for collector in collectors {
            let events = await collector.value
            #expect(events.contains { if case .shotCompleted = $0 { true } else { false } })
            #expect(events.contains { if case .connection(.reconnecting) = $0 { true } else { false } })
            #expect(events.contains(.connection(.ready)))
        }
    }

    @Test("500 shots under 5% drop, 1% corruption, reordering and a 10 s link loss: each one accounted for once")
    func shotsUnderFaults() async throws {
        let faults = LinkFaults(drop: 0.05, corrupt: 0.01, reorder: 0.02)
        let rig = ConnectionRig(faults: faults, seed: 7, recordsStates: false)
        let camera = try await rig.camera()
        let events = await camera.events()
        let sawReconnect = Task {
            for await event in events {
                if case .connection(.reconnecting) = event { return true }
            }
            return false
        }
        let startCounter = await rig.module.camera.shotCounter
        let (radio, clock) = (rig.radio, rig.clock)
        let outcomes = try await drive(rig, limit: .seconds(3600), step: .milliseconds(50)) {
            var outcomes: [ShotOutcome] = []
            for index in 0..<500 {
                if index == 250 {
                    // The link drops while this shot's shutter is open.
                    Task {
                        try await clock.sleep(for: .milliseconds(30))
                        radio.loseLink(for: .seconds(10))
                    }
                }
                do throws(CameraError) {
                    outcomes.append(.taken(try await camera.shoot()))
                } catch {
                    outcomes.append(.failed(error))
                }
            }
            return outcomes
        }
        #expect(outcomes.count == 500)
        let shots: [Shot] = outcomes.compactMap { if case .taken(let shot) = $0 { shot } else { nil } }
        let failures: [CameraError] = outcomes.compactMap { if case .failed(let error) = $0 { error } else { nil } }
        let counters = shots.map(\.counter)
        #expect(Set(counters).count == counters.count, "no picture reported twice")
        #expect(counters == counters.sorted(), "pictures reported in the order taken")
        let taken = Int(await rig.module.camera.shotCounter - startCounter)
        // Every picture the camera took was reported, except where the trigger's fate could not
        // be learned, and those failures say so.
        let outcomeUnknown = failures.filter { (error: CameraError) in
            switch error {
            case .timedOut, .notConnected, .shotNotReported: true
            default: false
            }
        }
        #expect(taken >= shots.count)
        #expect(taken - shots.count <= outcomeUnknown.count, "taken \(taken), reported \(shots.count), failures \(failures)")
        #expect(shots.count >= 450, "most shots succeed despite the faults: \(shots.count); failures \(failures)")
        #expect(shots.contains { $0.confirmedByCounter }, "lost reports were recovered from the counter")
        await camera.close()
        #expect(await sawReconnect.value)
    }

    @Test("the link drops while the shutter is open: the picture is confirmed from the counter after reconnecting")
    func linkLossDuringExposure() async throws {
        var body = VirtualCamera(profile: .nikonLike)
        try body.apply(SettingValue(setting: .shutterSpeed, text: "2s")!)
        let rig = ConnectionRig(camera: body, recordsStates: false)
        let camera = try await rig.camera()
        let (radio, clock) = (rig.radio, rig.clock)
        Task {
            try await clock.sleep(for: .milliseconds(500))
            radio.loseLink(for: .seconds(5))
        }
        let shot = try await drive(rig) { try await camera.shoot() }
        #expect(shot.counter == 1)
        #expect(shot.confirmedByCounter)
        await camera.close()
    }

    @Test("a series through a 5 s outage on a lossy link loses no shot, whatever the seed", arguments: Array(UInt64(1)...UInt64(12)))
    func seriesThroughOutage(seed: UInt64) async throws {
        let rig = ConnectionRig(faults: LinkFaults(drop: 0.05), seed: seed, recordsStates: false)
        let camera = try await rig.camera()
        let (radio, clock) = (rig.radio, rig.clock)
        Task {
            try await clock.sleep(for: .milliseconds(300))
            radio.loseLink(for: .seconds(5))
        }
        let counters = try await drive(rig) {
            var counters: [Int] = []
            for _ in 0..<20 { counters.append(try await camera.shoot().counter) }
            return counters
        }
        #expect(counters == Array(1...20))
        #expect(await rig.module.camera.shotCounter == 20, "no picture taken twice")
        await camera.close()
    }

    @Test("a trigger refused as busy is sent again once the camera is ready: a small buffer and random refusals lose no shot")
    func busyRetried() async throws {
        var profile = CameraProfile.canonLike
        profile.bufferDepth = 1
        let rig = ConnectionRig(camera: VirtualCamera(profile: profile), recordsStates: false)
        await rig.module.setBusyRefusals(0.2)
        let camera = try await rig.camera()
        let counters = try await drive(rig) {
            var counters: [Int] = []
            for _ in 0..<30 { counters.append(try await camera.shoot().counter) }
            return counters
        }
        #expect(counters == Array(1...30))
        await camera.close()
    }

    @Test("an operation while the module is out of reach fails with notConnected after the wait")
    func notConnected() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera(timing: ModuleCameraTiming(reconnectWait: .seconds(5)))
        rig.radio.loseLink(for: .seconds(600))
        await #expect {
            try await drive(rig) { try await camera.shoot() }
        } throws: { error in
            if case CameraError.notConnected = error { true } else { false }
        }
        await camera.close()
    }

    // MARK: - Bulb: the shutter is closed on every path

    /// A rig whose camera is set to bulb.
    static func bulbRig(seed: UInt64 = 1) async throws -> (ConnectionRig, ModuleCamera) {
        var body = VirtualCamera(profile: .nikonLike)
        try body.apply(.shutterSpeed(.bulb))
        let rig = ConnectionRig(camera: body, seed: seed, recordsStates: false)
        return (rig, try await rig.camera(timing: ModuleCameraTiming(reconnectWait: .seconds(5), shotReportGrace: .seconds(5))))
    }

    @Test("bulb, normal end: the module closes the shutter at the deadline and the picture is reported")
    func bulbDeadline() async throws {
        let (rig, camera) = try await Self.bulbRig()
        let exposure = try await drive(rig) { try await camera.bulb(.seconds(2)) }
        #expect(exposure.ending == .deadline)
        #expect(exposure.exposed == .seconds(2))
        #expect(exposure.shot.counter == 1 && !exposure.shot.confirmedByCounter)
        #expect(await !rig.module.bulbOpen)
        await camera.close()
    }

    @Test("bulb, cancelled (Ctrl-C): bulbEnd closes the shutter early and the picture is still reported")
    func bulbCancelled() async throws {
        let (rig, camera) = try await Self.bulbRig()
        let exposure = Task { try await camera.bulb(.seconds(30)) }
        // The task may start late on a loaded machine: time the second from the shutter opening.
        #expect(await rig.advance(until: { await rig.module.bulbOpen }, step: .milliseconds(5), limit: .seconds(1)))
        await rig.advance(by: .seconds(1))
        #expect(await rig.module.bulbOpen)
        exposure.cancel()
        #expect(await rig.advance(until: { await !rig.module.bulbOpen }, limit: .seconds(1)))
        let result = try await drive(rig) { try await exposure.value }
        #expect(result.ending == .stoppedEarly)
        #expect(result.exposed.map { $0 >= .seconds(1) && $0 < .seconds(2) } == true, "\(String(describing: result.exposed))")
        #expect(result.shot.counter == 1)
        await camera.close()
    }

    @Test("bulb, link lost: the module closes the shutter itself; the picture is confirmed after reconnecting")
    func bulbLinkLoss() async throws {
        let (rig, camera) = try await Self.bulbRig()
        let exposure = Task { try await camera.bulb(.seconds(10)) }
        await rig.advance(by: .seconds(1))
        #expect(await rig.module.bulbOpen)
        rig.radio.loseLink(for: .seconds(2))
        #expect(await rig.advance(until: { await !rig.module.bulbOpen }, limit: .milliseconds(200)))
        let result = try await drive(rig) { try await exposure.value }
        #expect(result.shot.counter == 1)
        #expect(result.shot.confirmedByCounter)
        #expect(await rig.module.camera.shotCounter == 1)
        await camera.close()
    }

    @Test("bulb, error: the module goes silent mid-exposure; its deadline closes the shutter and the call fails with a reason")
    func bulbError() async throws {
        let (rig, camera) = try await Self.bulbRig()
        let exposure = Task { try await camera.bulb(.seconds(3)) }
        #expect(await rig.advance(until: { await rig.module.bulbOpen }, limit: .seconds(1)))
        rig.radio.setFaults(LinkFaults(drop: 1))
        #expect(await rig.advance(until: { await !rig.module.bulbOpen }, limit: .seconds(4)), "closed by its deadline")
        await #expect {
            try await drive(rig) { try await exposure.value }
        } throws: { error in
            switch error as? CameraError {
            case .notConnected?, .shotNotReported?, .timedOut?: true
            default: false
            }
        }
        #expect(await !rig.module.bulbOpen)
        await camera.close()
    }

    @Test("bulb refused before anything opens: wrong shutter speed, or a duration out of range")
    func bulbRefused() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera()
        await #expect(throws: CameraError.notInBulbMode(current: SettingValue(setting: .shutterSpeed, text: "1/125"))) {
            try await drive(rig) { try await camera.bulb(.seconds(1)) }
        }
        await #expect(throws: CameraError.invalidArgument("a bulb exposure lasts from 1 ms to 24 h")) {
            try await drive(rig) { try await camera.bulb(.seconds(86_401)) }
        }
        #expect(await !rig.module.bulbOpen)
        await camera.close()
    }
}
