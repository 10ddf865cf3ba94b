import JSON
import Testing

@Suite struct StrictJSONDecoderTests {
    struct Plan: Codable, Equatable {
        enum Kind: String, Codable { case single, bulb }
        var intervalMs: Int
        var frames: Int?
        var kind: Kind
        var cameras: [Camera]
    }

    struct Camera: Codable, Equatable {
        var name: String
        var iso: UInt16?
    }

    /// A union decoded through two containers on one object, as a tagged enum's custom
    /// `init(from:)` does: the tag, then the case's own members.
    enum Step: Decodable, Equatable {
        case pause(ms: Int)
        case shoot

        private enum Tag: String, CodingKey { case kind }
        private enum PauseKeys: String, CodingKey { case ms }

        init(from decoder: any Decoder) throws {
            let tag = try decoder.container(keyedBy: Tag.self)
            switch try tag.decode(String.self, forKey: .kind) {
            case "pause": self = .pause(ms: try decoder.container(keyedBy: PauseKeys.self).decode(Int.self, forKey: .ms))
            case "shoot": self = .shoot
            default: throw DecodingError.dataCorruptedError(forKey: .kind, in: tag, debugDescription: "expected pause or shoot")
            }
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String, root: String = "") throws(JSONShapeError) -> T {
        try StrictJSONDecoder(root: root).decode(type, from: Array(text.utf8))
    }

    private func failure<T: Decodable>(_ type: T.Type, _ text: String, root: String = "") -> JSONShapeError? {
        do {
            _ = try decode(type, text, root: root)
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesWhatItsEncoderWrites() throws {
        let plan = Plan(intervalMs: 2000, frames: nil, kind: .bulb, cameras: [Camera(name: "left", iso: 400), Camera(name: "right", iso: nil)])
        #expect(try StrictJSONDecoder().decode(Plan.self, from: JSONValue(encoding: plan)) == plan)
        // null is absent.
        #expect(try decode(Plan.self, #"{"intervalMs": 5, "frames": null, "kind": "single", "cameras": []}"#).frames == nil)
    }

    @Test func namesThePathOfAWrongMember() {
        #expect(failure(Plan.self, #"{"intervalMs": "2s", "kind": "single", "cameras": []}"#)
            == JSONShapeError(path: "intervalMs", problem: "expected a whole number from \(Int.min) to \(Int.max)"))
        #expect(failure(Plan.self, #"{"intervalMs": 5, "kind": "single", "cameras": [{"name": "a"}, {"name": 7}]}"#)
            == JSONShapeError(path: "cameras[1].name", problem: "expected a string"))
        #expect(failure(Plan.self, #"{"intervalMs": 5, "kind": "single", "cameras": [{"name": "a", "iso": 70000}]}"#, root: "plan")
            == JSONShapeError(path: "plan.cameras[0].iso", problem: "expected a whole number from 0 to 65535"))
        #expect(failure(Plan.self, #"{"intervalMs": 2.5, "kind": "single", "cameras": []}"#)?.path == "intervalMs")
        #expect(failure(Plan.self, #"{"intervalMs": 5, "kind": "video", "cameras": []}"#)?.path == "kind")
        #expect(failure(Plan.self, #"{"intervalMs": 5, "kind": "single"}"#) == JSONShapeError(path: "cameras", problem: "missing"))
        #expect(failure(Plan.self, #"{"intervalMs": null, "kind": "single", "cameras": []}"#)?.path == "intervalMs")
        #expect(failure(Plan.self, #"[1, 2]"#) == JSONShapeError(path: "", problem: "expected an object"))
    }

    @Test func refusesMembersTheTypeDoesNotName() {
        #expect(failure(Plan.self, #"{"intervalMs": 5, "kind": "single", "cameras": [{"name": "a", "ISO": 100}]}"#)
            == JSONShapeError(path: "cameras[0].ISO", problem: "unknown member; known members: iso, name"))
        // A misspelt required member is reported as what it is, not as the member it leaves missing.
        #expect(failure(Plan.self, #"{"interval": 5, "kind": "single", "cameras": []}"#)
            == JSONShapeError(path: "interval", problem: "unknown member; did you mean intervalMs?"))
        // Nothing close: the missing member is the error.
        #expect(failure(Plan.self, #"{"count": 5, "kind": "single", "cameras": []}"#) == JSONShapeError(path: "intervalMs", problem: "missing"))
    }

    @Test func readsLenientlyWhenAsked() throws {
        let lenient = StrictJSONDecoder(refusesUnknownMembers: false)
        #expect(try lenient.decode(Camera.self, from: ["name": "a", "addedLater": true]) == Camera(name: "a", iso: nil))
        #expect(throws: JSONShapeError(path: "name", problem: "missing")) { try lenient.decode(Camera.self, from: ["nam": "a"]) }
    }

    @Test func acceptsAnObjectReadThroughTwoContainers() throws {
        #expect(try decode([Step].self, #"[{"kind": "pause", "ms": 20}, {"kind": "shoot"}]"#) == [.pause(ms: 20), .shoot])
        #expect(failure([Step].self, #"[{"kind": "shoot", "ms": 20}]"#)
            == JSONShapeError(path: "[0].ms", problem: "unknown member; known members: kind"))
        #expect(failure([Step].self, #"[{"kind": "jump"}]"#) == JSONShapeError(path: "[0].kind", problem: "expected pause or shoot"))
    }

    @Test func dictionariesTakeAnyMember() throws {
        #expect(try decode([String: Int].self, #"{"a": 1, "b": 2}"#) == ["a": 1, "b": 2])
        #expect(try decode(JSONValue.self, #"{"a": [1, 2.5, null]}"#) == ["a": [1, .number(2.5), nil]])
    }

    /// The failure as data: the steps to the value and the kind of problem, for a reader that
    /// words it itself (the configuration), worded as ``JSONShapeError`` for the API.
    @Test func locatesAFailureByStepsAndKind() {
        func located<T: Decodable>(_ type: T.Type, _ text: String) -> JSONDecodingFailure? {
            do {
                _ = try StrictJSONDecoder().decodeLocatingFailure(type, from: try JSONValue(parsing: Array(text.utf8)))
                return nil
            } catch let failure as JSONDecodingFailure {
                return failure
            } catch {
                return nil
            }
        }
        let wrongType = located(Plan.self, #"{"intervalMs": 5, "kind": "single", "cameras": [{"name": "a"}, {"name": 7}]}"#)
        #expect(wrongType == JSONDecodingFailure(path: [.member("cameras"), .element(1), .member("name")], problem: .wrongType(expected: "a string")))
        #expect(wrongType?.shapeError(root: "plan") == JSONShapeError(path: "plan.cameras[1].name", problem: "expected a string"))
        #expect(located(Plan.self, #"{"intervalMs": 5, "kind": "single"}"#) == JSONDecodingFailure(path: [.member("cameras")], problem: .missing))
        #expect(located([Step].self, #"[{"kind": "jump"}]"#)
            == JSONDecodingFailure(path: [.element(0), .member("kind")], problem: .invalidValue("expected pause or shoot")))
        // The members the type knows come in the order it asked for them, which is the order it declares them.
        #expect(located(Camera.self, #"{"name": "a", "ISO": 100}"#)
            == JSONDecodingFailure(path: [.member("ISO")], problem: .unknownMember(known: ["name", "iso"], meant: nil)))
        #expect(located(Plan.self, #"{"interval": 5, "kind": "single", "cameras": []}"#)?.problem
            == .unknownMember(known: ["intervalMs"], meant: "intervalMs"))
        // A member whose name holds a dot is one step, not two.
        #expect(located([String: Camera].self, #"{"a.b": {"name": 1}}"#)
            == JSONDecodingFailure(path: [.member("a.b"), .member("name")], problem: .wrongType(expected: "a string")))
        #expect(JSONPathStep.text([.element(0), .member("ms")]) == "[0].ms")
    }

    /// Member `a.b` and member `b` of member `a` are two objects, each held to its own members.
    @Test func aMemberWithADotIsAnObjectOfItsOwn() {
        struct Inner: Decodable { var b: Camera }
        struct Outer: Decodable {
            var a: Inner
            var dotted: Camera
            enum CodingKeys: String, CodingKey { case a, dotted = "a.b" }
        }
        #expect(failure(Outer.self, #"{"a": {"b": {"name": "x"}}, "a.b": {"name": "y", "zoom": 1}}"#)
            == JSONShapeError(path: "a.b.zoom", problem: "unknown member; known members: iso, name"))
    }

    @Test func saysWhenTheBytesAreNotJSON() {
        let error = failure(Plan.self, #"{"intervalMs": "#)
        #expect(error?.path == "")
        #expect(error?.problem.hasPrefix("not JSON") == true)
    }
}
