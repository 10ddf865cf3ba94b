import PropertyBased
import Testing

/// Runs `body` on `count` generated values, like `propertyCheck`, but records an error thrown by
/// `body` as a failure: `propertyCheck` itself discards thrown errors, which would let a failing
/// `try` pass silently.
func forAll<Value, Shrinks: SendableSequenceType>(
    count: Int,
    _ input: Generator<Value, Shrinks>,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (Value) async throws -> Void
) async {
    await propertyCheck(count: count, input: input, perform: { value in
        do {
            try await body(value)
        } catch {
            Issue.record(error, sourceLocation: sourceLocation)
        }
    }, sourceLocation: sourceLocation)
}
