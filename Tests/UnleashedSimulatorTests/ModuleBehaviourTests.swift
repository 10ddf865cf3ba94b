import CameraKit
import Testing
import UnleashedKit
import UnleashedProtocol
@testable import UnleashedSimulator

@Suite("The simulated module over time, on a test clock", .timeLimit(.minutes(1)))
struct ModuleBehaviourTests {
    static let nikon = CameraProfile.nikonLike

    @Test("hello offers every operation the simulator runs")
    func capabilities() async throws {
        let client = await RawClient(VirtualModule(camera: VirtualCamera(profile: .sonyLike)))
        let hello = try await client.request(.hello, id: 1, Fields {
            $0.minProtocolVersion = 1
            $0.maxProtocolVersion = 1
        })
        #expect(hello.fields.capabilities == [
            .shoot, .focus, .bulb, .video, .readSettings, .writeSettings, .meteredEV, .geotag, .setTime, .scheduledFire,
        ])
        #expect(hello.fields.cameraModel == CameraProfile.sonyLike.model)
    }

    @Test("a shot completes after shutter lag and exposure, busy in between")
    func shotTiming() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(SettingValue(setting: .shutterSpeed, text: "1/2")!)
        let rig = try await ModuleRig(camera: camera)
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
        await rig.advance(by: Self.nikon.shutterLag + .milliseconds(499))
        #expect(try await rig.events().map(\.kind) == [.event(.busy)])
        #expect(try await rig.request(.getStatus).fields.busy == true)
        await rig.advance(by: .milliseconds(1))
        let events = try await rig.events()
        #expect(events.map(\.kind) == [.event(.shotCompleted), .event(.storage), .event(.busy)])
        #expect(events[0].fields.shotCounter == 1)
        #expect(events[1].fields.shotsRemaining == Self.nikon.cardCapacity - 1)
        #expect(events[2].fields.busy == false)
    }

    @Test("scheduled shots: the module presses when its own drifting timer reaches fireAt, and says when")
    func scheduledShot() async throws {
        // A timer 50 ppm fast: 10 s on the clock read 10.0005 s on the module.
        let rig = try await ModuleRig(timerDriftPPM: 50)
        await rig.advance(by: .seconds(10))
        let alive = try await rig.request(.keepAlive)
        #expect(alive.fields.uptime == 10_000)
        #expect(alive.fields.uptimeMicros == 10_000_500)

        // 500 000 µs on the module's timer is 499 975.001 µs on the clock.
        let fireAt: UInt64 = 10_000_500 + 500_000
        let id = try await rig.send(.shoot, Fields { $0.fireAt = fireAt })
        await rig.advance(by: .microseconds(499_974))
        let before = try await rig.request(.getStatus)
        #expect(before.kind == .response(.getStatus, .ok), "answered before the shot was pressed")
        #expect(before.fields.busy == false)
        await rig.advance(by: .microseconds(2))
        let fired = try await rig.client.response()
        #expect(fired.id == id)
        #expect(fired.kind == .response(.shoot, .ok))
        #expect(fired.fields.uptimeMicros == fireAt)
        #expect(try await rig.request(.getStatus).fields.busy == true)
        await rig.advance(by: .seconds(1))
        #expect(try await rig.events(.shotCompleted).map(\.fields.shotCounter) == [1])

        // Too far ahead: refused, nothing pressed.
        let now = try #require(try await rig.request(.keepAlive).fields.uptimeMicros)
        let far = try await rig.request(.shoot, Fields { $0.fireAt = now + 2_100_000 })
        #expect(far.kind == .response(.shoot, .invalidArgument))
        #expect(far.fields.errorMessage?.contains("ahead") == true)
        // Already passed: pressed at once, and the answer shows how late.
        let late = try await rig.request(.shoot, Fields { $0.fireAt = now - 1000 })
        #expect(late.kind == .response(.shoot, .ok))
        #expect(late.fields.uptimeMicros == now)
        await rig.advance(by: .seconds(1))
        #expect(try await rig.events(.shotCompleted).map(\.fields.shotCounter) == [2])

        // A link that drops before fireAt takes the shot with it.
        let soon = try #require(try await rig.request(.keepAlive).fields.uptimeMicros) + 300_000
        _ = try await rig.send(.shoot, Fields { $0.fireAt = soon })
        rig.client.link.sever()
        await rig.advance(by: .seconds(1))
        #expect(await rig.module.camera.shotCounter == 2)
    }

    @Test("a scheduled shot sent again while it waits for fireAt, and again after its answer, is pressed once and answered once each time")
    func repeatedScheduledShot() async throws {
        let rig = try await ModuleRig()
        let now = try #require(try await rig.request(.keepAlive).fields.uptimeMicros)
        let trigger = Fields { $0.fireAt = now + 300_000 }
        let id = try await rig.send(.shoot, trigger)
        // A client that heard nothing sends copies, 50 ms apart; the module is still waiting.
        for _ in 0..<3 {
            await rig.advance(by: .milliseconds(50))
            try await rig.deliver(Message(.request(.shoot), id: id, fields: trigger))
        }
        await rig.advance(by: .milliseconds(200))
        let answer = try await rig.client.response()
        #expect(answer.id == id)
        #expect(answer.kind == .response(.shoot, .ok))
        // The answer was lost on the way: the copy after it gets the same answer from the cache.
        let again = try await rig.client.request(.shoot, id: id, trigger)
        #expect(again == answer)
        await rig.advance(by: .seconds(1))
        #expect(try await rig.events(.shotCompleted).map(\.fields.shotCounter) == [1])
        #expect(await rig.module.camera.shotCounter == 1)
        #expect(await rig.module.repeatedRequests == 4)
    }

    @Test("pictures fill the buffer, which drains one write at a time; a full buffer is busy")
    func buffer() async throws {
        let camera = ModuleRig.camera { $0.bufferDepth = 2 }
        let rig = try await ModuleRig(camera: camera)
        let shot = Self.nikon.shutterLag + .milliseconds(8)
        for _ in 0..<2 {
            #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
            await rig.advance(by: shot)
        }
        // Pictures taken at 60 and 120 ms; the first is written only at 140 ms, so the buffer
        // of two is full and stays busy after the second shot.
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .busy))
        #expect(try await rig.events(.busy).map(\.fields.busy) == [true, false, true])
        await rig.advance(by: Self.nikon.writeTime)
        #expect(try await rig.events(.busy).last?.fields.busy == false)
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
    }

    @Test("bulb: the module closes the shutter at the deadline and says so; one picture")
    func bulbDeadline() async throws {
        var camera = VirtualCamera(profile: .canonLike)
        try camera.apply(.shutterSpeed(.bulb))
        let rig = try await ModuleRig(camera: camera)
        #expect(try await rig.request(.bulbStart, Fields { $0.duration = 4000 }).kind == .response(.bulbStart, .ok))
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .busy))
        #expect(try await rig.request(.bulbStart, Fields { $0.duration = 10 }).kind == .response(.bulbStart, .busy))
        await rig.advance(by: .milliseconds(3999))
        #expect(await rig.module.bulbOpen)
        await rig.advance(by: .milliseconds(1))
        let events = try await rig.events()
        #expect(events.map(\.kind) == [.event(.busy), .event(.bulbDeadlineFired), .event(.shotCompleted), .event(.storage), .event(.busy)])
        #expect(events[1].fields.duration == 4000)
        #expect(try await rig.request(.bulbEnd).kind == .response(.bulbEnd, .invalidArgument))
        #expect(await rig.module.camera.shotCounter == 1)
    }

    @Test("bulb: bulbEnd before the deadline gives the time open, and the deadline no longer fires")
    func bulbEnd() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(.shutterSpeed(.bulb))
        let rig = try await ModuleRig(camera: camera)
        _ = try await rig.request(.bulbStart, Fields { $0.duration = 60_000 })
        await rig.advance(by: .milliseconds(2500))
        let end = try await rig.request(.bulbEnd)
        #expect(end.kind == .response(.bulbEnd, .ok))
        #expect(end.fields.duration == 2500)
        await rig.advance(by: .seconds(120))
        let events = try await rig.events()
        #expect(!events.contains { $0.kind == .event(.bulbDeadlineFired) })
        #expect(events.filter { $0.kind == .event(.shotCompleted) }.count == 1)
    }

    @Test("bulb: refused without the bulb setting, without a duration of at least 1 ms, and when the card is full")
    func bulbRefusals() async throws {
        let rig = try await ModuleRig()
        #expect(try await rig.request(.bulbStart, Fields { $0.duration = 1000 }).kind == .response(.bulbStart, .invalidArgument))
        _ = try await rig.request(.setSetting, Fields { $0.value = .shutterSpeed(.bulb); $0.setting = .shutterSpeed })
        #expect(try await rig.request(.bulbStart, Fields { $0.duration = 0 }).kind == .response(.bulbStart, .invalidArgument))
        #expect(try await rig.request(.bulbEnd).kind == .response(.bulbEnd, .invalidArgument))

        var full = VirtualCamera(profile: .nikonLike)
        try full.apply(.shutterSpeed(.bulb))
        full.shotsRemaining = 0
        let fullRig = try await ModuleRig(camera: full)
        #expect(try await fullRig.request(.bulbStart, Fields { $0.duration = 1000 }).kind == .response(.bulbStart, .cardFull))
    }

    @Test("a dropped link closes an open bulb exposure (one picture) but leaves a recording running")
    func linkDrop() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(.shutterSpeed(.bulb))
        let rig = try await ModuleRig(camera: camera)
        _ = try await rig.request(.bulbStart, Fields { $0.duration = 60_000 })
        rig.client.link.sever()
        #expect(await Self.eventually { await !rig.module.bulbOpen })
        #expect(await rig.module.camera.shotCounter == 1)

        let video = try await ModuleRig()
        _ = try await video.request(.videoStart)
        video.client.link.sever()
        await video.advance(by: .seconds(10))
        #expect(await video.module.recordingElapsed == .seconds(10))
    }

    @Test("video: busy while recording, shots refused, stop gives the clip's length and drains the battery")
    func video() async throws {
        let camera = ModuleRig.camera { $0.batteryDrain = .init(perShot: 0, perVideoMinute: 2, perIdleHour: 0) }
        let rig = try await ModuleRig(camera: camera)
        #expect(try await rig.request(.videoStop).kind == .response(.videoStop, .invalidArgument))
        #expect(try await rig.request(.videoStart).kind == .response(.videoStart, .ok))
        #expect(try await rig.request(.videoStart).kind == .response(.videoStart, .busy))
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .busy))
        await rig.advance(by: .seconds(90))
        let stop = try await rig.request(.videoStop)
        #expect(stop.fields.duration == 90_000)
        let events = try await rig.events()
        #expect(events.filter { $0.kind == .event(.busy) }.map(\.fields.busy) == [true, false])
        #expect(events.filter { $0.kind == .event(.battery) }.map(\.fields.cameraBattery) == [85, 84, 83])
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
    }

    @Test("the battery runs down per shot and per idle hour, reporting each whole percent; empty switches the camera off")
    func battery() async throws {
        let camera = ModuleRig.camera {
            $0.batteryDrain = .init(perShot: 30, perVideoMinute: 0, perIdleHour: 8)
            $0.autoPowerOff = .seconds(100_000)
        }
        let rig = try await ModuleRig(camera: camera)
        await rig.advance(by: .seconds(7 * 60 + 29))
        #expect(try await rig.events(.battery).isEmpty)
        await rig.advance(by: .seconds(1))
        #expect(try await rig.events(.battery).map(\.fields.cameraBattery) == [85])
        for expected: UInt8 in [55, 25] {
            _ = try await rig.request(.shoot)
            await rig.advance(by: .milliseconds(100))
            #expect(try await rig.events(.battery).map(\.fields.cameraBattery) == [expected])
        }
        _ = try await rig.request(.shoot)
        await rig.advance(by: .milliseconds(100))
        let events = try await rig.events()
        #expect(events.contains { $0.kind == .event(.battery) && $0.fields.cameraBattery == 0 })
        #expect(events.contains { $0.kind == .event(.cameraPower) && $0.fields.cameraPower == .off })
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .cameraOff))
    }

    @Test("the card fills: storage after each shot, full at 0, then cardFull")
    func cardFills() async throws {
        var camera = VirtualCamera(profile: .sonyLike)
        camera.shotsRemaining = 2
        let rig = try await ModuleRig(camera: camera)
        for _ in 0..<2 {
            #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
            await rig.advance(by: .milliseconds(100))
        }
        let storage = try await rig.events(.storage)
        #expect(storage.map(\.fields.shotsRemaining) == [1, 0])
        #expect(storage.map(\.fields.storageState) == [.ok, .full])
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .cardFull))
    }

    @Test("the camera goes to standby after its idle delay; requests keep it awake")
    func autoPowerOff() async throws {
        let rig = try await ModuleRig()
        let delay = Self.nikon.autoPowerOff
        await rig.advance(by: delay - .seconds(5))
        _ = try await rig.request(.getSetting, Fields { $0.setting = .iso })
        await rig.advance(by: delay - .milliseconds(1))
        #expect(await rig.module.camera.power == .on)
        await rig.advance(by: .milliseconds(1))
        #expect(try await rig.events(.cameraPower).map(\.fields.cameraPower) == [.sleeping])
        let status = try await rig.request(.getStatus)
        #expect(status.fields.cameraPower == .sleeping)
        #expect(status.fields.cameraBattery == nil)
    }

    @Test("a half-press wakes a sleeping camera: the answer comes after waking and focusing")
    func halfPressWakes() async throws {
        let rig = try await ModuleRig()
        await rig.module.setCameraPower(.sleeping)
        let id = try await rig.send(.halfPress)
        await rig.advance(by: Self.nikon.wakeTime + Self.nikon.focusTime - .milliseconds(1))
        #expect(try await rig.events(.cameraPower).map(\.fields.cameraPower) == [.sleeping, .on])
        await rig.advance(by: .milliseconds(1))
        let response = try await rig.client.response()
        #expect(response.id == id)
        #expect(response.kind == .response(.halfPress, .ok))
        #expect(response.fields.focusResult == .acquired)
    }

    @Test("any request that needs the camera wakes it; a repeat of a request still running is not run twice")
    func otherRequestsWake() async throws {
        let rig = try await ModuleRig(camera: VirtualCamera(profile: .canonLike))
        await rig.module.setCameraPower(.sleeping)
        let id = try await rig.send(.shoot)
        try await rig.deliver(Message(.request(.shoot), id: id, fields: Fields()))
        await rig.advance(by: CameraProfile.canonLike.wakeTime)
        let response = try await rig.client.response()
        #expect(response.kind == .response(.shoot, .ok))
        await rig.advance(by: .seconds(1))
        #expect(await rig.module.camera.shotCounter == 1)
        #expect(await rig.module.repeatedRequests == 1)
    }

    @Test("a camera switched off answers cameraOff to everything that needs it; getStatus still works")
    func switchedOff() async throws {
        let rig = try await ModuleRig()
        await rig.module.setCameraPower(.off)
        for opcode: Opcode in [.shoot, .halfPress, .listSettings, .videoStart] {
            #expect(try await rig.request(opcode).kind == .response(opcode, .cameraOff))
        }
        #expect(try await rig.request(.getSetting, Fields { $0.setting = .iso }).kind == .response(.getSetting, .cameraOff))
        #expect(try await rig.request(.getStatus).fields.cameraPower == .off)
        await rig.module.setCameraPower(.on)
        #expect(try await rig.events(.cameraPower).map(\.fields.cameraPower) == [.off, .on])
        #expect(try await rig.request(.shoot).kind == .response(.shoot, .ok))
    }

    @Test("the meter reports a changing scene at most four times a second, only while the camera is on")
    func meter() async throws {
        // 12 EV falling to 10 EV over 2 s: a new reading every 1/24 s.
        let sunset = SceneLight.keyframes([(.zero, ExposureStops(twentyFourths: 288)), (.seconds(2), ExposureStops(twentyFourths: 240))])
        let rig = try await ModuleRig(scene: sunset)
        var steps: [Int] = []
        var readings: [Int32] = []
        for step in 1...60 {
            await rig.advance(by: .milliseconds(50))
            for event in try await rig.events(.meteredEV) {
                steps.append(step)
                readings.append(event.fields.meteredEV!.twentyFourths)
            }
        }
        #expect(readings.count >= 8 && readings.count <= 12, "\(readings)")
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $1 - $0 >= 5 }, "at least 250 ms apart: \(steps)")
        #expect(readings == readings.sorted(by: >))
        #expect(readings.last == 240)
        #expect(try await rig.request(.getStatus).fields.meteredEV == ExposureStops(twentyFourths: 240))

        await rig.module.setCameraPower(.sleeping)
        await rig.module.setSceneEV(ExposureStops(twentyFourths: 100))
        await rig.advance(by: .seconds(1))
        #expect(try await rig.events(.meteredEV).isEmpty)
        await rig.module.setCameraPower(.on)
        #expect(try await rig.events(.meteredEV).map(\.fields.meteredEV) == [ExposureStops(twentyFourths: 100)])
    }

    @Test("keyframed light is interpolated and held at the ends")
    func keyframes() {
        let light = SceneLight.keyframes([(.seconds(10), ExposureStops(twentyFourths: 0)), (.seconds(20), ExposureStops(twentyFourths: 240))])
        #expect(light.ev(at: .zero).twentyFourths == 0)
        #expect(light.ev(at: .seconds(15)).twentyFourths == 120)
        #expect(light.ev(at: .seconds(99)).twentyFourths == 240)
        #expect(!light.isConstant && SceneLight.constant(ExposureStops(twentyFourths: 5)).isConstant)
    }

    @Test("setTime moves the camera clock used for cameraTime; geotag is kept for the pictures that follow")
    func timeAndPlace() async throws {
        let rig = try await ModuleRig()
        let cameraTime: UInt64 = 1_800_000_000_000
        _ = try await rig.request(.setTime, Fields {
            $0.utcTime = cameraTime
            $0.utcOffset = 120
        })
        _ = try await rig.request(.geotag, Fields {
            $0.latitude = 473_769_000
            $0.longitude = 85_417_000
            $0.utcTime = ModuleRig.utc
        })
        _ = try await rig.request(.shoot)
        await rig.advance(by: .milliseconds(100))
        #expect(try await rig.events(.shotCompleted).first?.fields.cameraTime == cameraTime)
        let camera = await rig.module.camera
        #expect(camera.utcOffset == 120)
        #expect(camera.geotag == VirtualCamera.Geotag(latitude: 473_769_000, longitude: 85_417_000, utcTime: ModuleRig.utc))
    }

    @Test("refused commands: every camera command is busy at probability 1; at 0.5 the same seed refuses the same ones")
    func busyRefusals() async throws {
        let always = try await ModuleRig()
        await always.module.setBusyRefusals(1)
        #expect(try await always.request(.shoot).kind == .response(.shoot, .busy))
        #expect(try await always.request(.getStatus).kind == .response(.getStatus, .ok))

        func statuses(seed: UInt64) async throws -> [StatusCode] {
            let rig = try await ModuleRig(seed: seed)
            await rig.module.setBusyRefusals(0.5)
            var statuses: [StatusCode] = []
            for _ in 0..<20 {
                guard case .response(_, let status) = try await rig.request(.setSetting, Fields {
                    $0.setting = .iso
                    $0.value = .iso(ISOSpeed(200)!)
                }).kind else { continue }
                statuses.append(status)
            }
            return statuses
        }
        let first = try await statuses(seed: 3)
        #expect(try await statuses(seed: 3) == first)
        #expect(first.contains(.busy) && first.contains(.ok))
    }

    @Test("a reboot drops the link, is unreachable while booting, forgets responses and event numbers, keeps the camera")
    func reboot() async throws {
        let rig = try await ModuleRig()
        _ = try await rig.request(.setSetting, Fields { $0.setting = .iso; $0.value = .iso(ISOSpeed(400)!) })
        #expect(try await rig.client.request(.shoot, id: 7).kind == .response(.shoot, .ok))
        await rig.advance(by: .seconds(1))
        await rig.module.reboot()
        await #expect(throws: (any Error).self) { while true { _ = try await rig.client.next() } }
        #expect(await rig.module.bootRemaining == .milliseconds(1500))

        let early = InMemoryLink()
        await rig.module.serve(early.peripheral)
        var events = early.central.events.makeAsyncIterator()
        guard case .disconnected? = await events.next() else {
            Issue.record("a booting module took a connection")
            return
        }

        await rig.advance(by: .milliseconds(1500))
        let client = await RawClient(rig.module)
        try await client.hello()
        #expect(try await client.request(.keepAlive, id: 2).fields.uptime == 0)
        #expect(try await client.request(.shoot, id: 7).kind == .response(.shoot, .ok), "run again, not from the cache")
        await rig.advance(by: .milliseconds(100))
        let shot = try await client.next()
        #expect(shot.kind == .event(.busy) && shot.id == 0, "events numbered from 0 again")
        #expect(await rig.module.repeatedRequests == 0)
        #expect(await rig.module.camera.shotCounter == 2)
        #expect(await rig.module.camera.settings[.iso] == .iso(ISOSpeed(400)!))
    }

    @Test("a restart with no client connected still lets go of an open bulb exposure")
    func rebootClosesBulb() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(.shutterSpeed(.bulb))
        let rig = try await ModuleRig(camera: camera)
        _ = try await rig.request(.bulbStart, Fields { $0.duration = 60_000 })
        rig.client.link.sever()
        await rig.module.reboot()
        #expect(await !rig.module.bulbOpen)
        #expect(await rig.module.camera.shotCounter == 1)
    }

    @Test("the radio cannot reach a booting module")
    func radioDuringBoot() async throws {
        let rig = try await ModuleRig()
        let radio = SimulatedRadio(module: rig.module, clock: rig.clock)
        await rig.module.reboot()
        let attempt = Task { _ = try await radio.connect() }
        for _ in 0..<30 { await rig.advance(by: .milliseconds(100)) }
        await #expect(throws: GATTError.self) { try await attempt.value }
        let link = try await radio.connect()
        await link.close()
    }

    /// Waits, without moving any clock, for something the module does in its own time.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if await condition() { return true }
            await Task.yield()
        }
        return await condition()
    }
}
