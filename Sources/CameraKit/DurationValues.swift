extension Duration {
    /// The duration in whole microseconds, rounded down.
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in whole milliseconds, rounded down.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// `250 ms`, `3 s`: for messages.
    public var shortDescription: String {
        let milliseconds = wholeMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
