/// The fuzz targets: each takes any bytes and traps on a finding (a parser that crashes, or a
/// value that does not survive encoding). libFuzzer drives them in `scripts/fuzz`, built with
/// sanitizers; `FuzzCorpusTests` replays each one's committed corpus in the ordinary test build.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case `protocol`, gopro, sony, canon, fujifilm, nikon

    /// Runs the target on one input; returns only if nothing was found.
    public func run(_ input: [UInt8]) {
        switch self {
        case .protocol: fuzzProtocol(input)
        case .gopro: fuzzGoPro(input)
        case .sony: fuzzSony(input)
        case .canon: fuzzCanon(input)
        case .fujifilm: fuzzFujifilm(input)
        case .nikon: fuzzNikon(input)
        }
    }
}
