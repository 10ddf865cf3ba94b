import Testing

@testable import UnleashedProtocol

/// The message tables drive both the encoder's field order and the decoder's error order, and
/// PROTOCOL.md §5 says a sender writes fields in ascending tag order.
@Suite("Message tables")
struct SchemaTests {
    @Test("every message table lists its fields in ascending tag order")
    func tablesAreInTagOrder() {
        var tables: [(String, [FieldRule])] = [
            ("failed response", Schema.failedResponse),
            ("hello version mismatch", Schema.helloVersionMismatch),
            ("descriptor", Schema.descriptor),
            ("info", Schema.info),
        ]
        tables += Schema.requests.map { ("\($0.key) request", $0.value) }
        tables += Schema.okResponses.map { ("\($0.key) response", $0.value) }
        tables += Schema.events.map { ("\($0.key) event", $0.value) }
        for (name, rules) in tables {
            let tags = rules.map(\.tag.rawValue)
            #expect(tags == tags.sorted(), "\(name): \(tags)")
        }
    }
}
