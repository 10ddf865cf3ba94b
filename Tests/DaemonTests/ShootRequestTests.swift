@testable import Daemon
import Foundation
import Testing
import UnleashedAPI

/// What a shoot or fleet command may say, read without a broker.
struct ShootRequestTests {
    private let now = FleetTime.parse("2026-11-17T08:26:40Z")!

    private func at(_ seconds: Double) -> String { FleetTime.text(now.addingTimeInterval(seconds)) }

    @Test("empty, {} and Home Assistant's PRESS fire now; an 'at' in the window fires then")
    func accepted() throws {
        for payload in ["", "  ", "{}", "PRESS"] {
            #expect(try ShootRequest(payload: Array(payload.utf8), now: now).at == nil, "\(payload)")
        }
        let request = try ShootRequest(payload: Array(#"{"at": "\#(at(2))"}"#.utf8), now: now)
        #expect(request.at == now.addingTimeInterval(2))
        // An offset is a zone like another.
        let offset = try ShootRequest(payload: Array(#"{"at": "2026-11-17T09:26:42+01:00"}"#.utf8), now: now)
        #expect(offset.at == FleetTime.parse("2026-11-17T08:26:42Z"))
    }

    @Test("a time past, too soon, too far, not a time, or a payload not JSON is refused with the reason")
    func refused() throws {
        func reason(_ payload: String) -> String? {
            do { _ = try ShootRequest(payload: Array(payload.utf8), now: now); return nil } catch { return error.reason }
        }
        #expect(reason(#"{"at": "\#(at(-1.5))"}"#)?.contains("that was 1.500 s ago when the command arrived") == true)
        #expect(reason(#"{"at": "\#(at(0.02))"}"#)?.contains("only 20 ms ahead") == true)
        #expect(reason(#"{"at": "\#(at(3601))"}"#)?.contains("more than an hour ahead") == true)
        #expect(reason(#"{"at": "21:00"}"#) == "'at' must be a UTC time like 2026-11-27T21:00:00.000Z")
        #expect(reason(#"{"at": 1795000002}"#) == "'at' must be a UTC time like 2026-11-27T21:00:00.000Z")
        // Times far outside this host's clock are refused, not converted to nanoseconds (which
        // trapped: Int64 nanoseconds span only 292 years).
        for far in ["2999-01-01T00:00:00Z", "1700-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            #expect(reason(#"{"at": "\#(far)"}"#)?.contains("is not a time near this host's clock") == true, "\(far)")
            #expect(throws: ShootRequest.Refusal.self) {
                _ = try FleetShootRequest(payload: Array(#"{"id": "f", "at": "\#(far)"}"#.utf8), now: now)
            }
            #expect(throws: ShootRequest.Refusal.self) {
                _ = try FleetTimelapseRequest(payload: Array(#"{"id": "f", "start": "\#(far)", "intervalMs": 1000}"#.utf8), now: now)
            }
        }
        #expect(Duration.checked(from: now, to: FleetTime.parse("2999-01-01T00:00:00Z")!) == nil)
        #expect(Duration.checked(from: now, to: now.addingTimeInterval(-2)) == .seconds(-2))
        #expect(reason("shoot!")?.hasPrefix("the command is not a JSON object") == true)
        #expect(reason("[1]")?.hasPrefix("the command is not a JSON object") == true)
    }

    @Test("a fleet command needs an id to answer under, and its time; a group is optional")
    func fleet() throws {
        let request = try FleetShootRequest(payload: Array(#"{"id": "f1", "at": "\#(at(1))", "group": "north"}"#.utf8), now: now)
        #expect(request.id == "f1" && request.group == "north" && request.at == now.addingTimeInterval(1))
        #expect(throws: ShootRequest.Refusal(reason: "a fleet command needs an 'id' (1 to 64 characters) to answer under")) {
            _ = try FleetShootRequest(payload: Array(#"{"at": "\#(at(1))"}"#.utf8), now: now)
        }
        #expect(throws: ShootRequest.Refusal(reason: "a fleet shot needs its 'at' time", id: "f2")) {
            _ = try FleetShootRequest(payload: Array(#"{"id": "f2"}"#.utf8), now: now)
        }
        #expect(throws: ShootRequest.Refusal(reason: "'group' must be a group's name", id: "f3")) {
            _ = try FleetShootRequest(payload: Array(#"{"id": "f3", "at": "\#(at(1))", "group": 7}"#.utf8), now: now)
        }
    }

    @Test("topics: a camera's name is one level; command topics are read back, others are not")
    func topics() {
        let topics = MQTTTopics(prefix: "studio/cams", node: "north")
        #expect(MQTTTopics.level("right wing/2") == "right_wing_2" && MQTTTopics.level("ö") == "_" && MQTTTopics.level("") == "_")
        #expect(topics.shoot("right wing") == "studio/cams/north/cameras/right_wing/shoot")
        #expect(topics.cameraCommand("studio/cams/north/cameras/left/shoot")! == ("left", .shoot))
        #expect(topics.cameraCommand("studio/cams/north/cameras/left/running/set")! == ("left", .running))
        #expect(topics.cameraCommand("studio/cams/north/cameras/left/interval/set")! == ("left", .interval))
        #expect(topics.cameraCommand("studio/cams/north/cameras/left/settings/iso/set")! == ("left", .setting("iso")))
        for other in ["studio/cams/north/cameras//shoot", "studio/cams/north/cameras/left/state", "studio/cams/south/cameras/left/shoot",
                      "studio/cams/north/cameras/left/shoot/x", "studio/cams/north/cameras/left/settings//set"] {
            #expect(topics.cameraCommand(other) == nil, "\(other)")
        }
    }

    @Test("a node claim gives way only to a daemon that started later and is not a leftover or a claim from the future")
    func nodeClaims() {
        let me = NodeClaim(instance: "me", host: "tripod", pid: 10, startedAt: 1_000_000)
        let now = Date(timeIntervalSince1970: 1_100)
        // Another host's later daemon: its pid is not this host's to check.
        #expect(me.yields(to: NodeClaim(instance: "b", host: "pier", pid: 20, startedAt: 1_050_000), now: now, isAlive: { _ in false }))
        #expect(!me.yields(to: NodeClaim(instance: "b", host: "pier", pid: 20, startedAt: 900_000), now: now), "an older one")
        #expect(!me.yields(to: me, now: now), "its own")
        #expect(!me.yields(to: NodeClaim(instance: "b", host: "pier", pid: 20, startedAt: 1_100_000 + 3_600_000), now: now, isAlive: { _ in true }),
                "dated an hour ahead")
        // This host's: given way to only while that process lives.
        let sameHost = NodeClaim(instance: "b", host: "tripod", pid: 30, startedAt: 1_050_000)
        #expect(!me.yields(to: sameHost, now: now, isAlive: { _ in false }))
        #expect(me.yields(to: sameHost, now: now, isAlive: { _ in true }))
    }
}
