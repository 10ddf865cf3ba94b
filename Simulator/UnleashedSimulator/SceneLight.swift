public import CameraKit
import UnleashedProtocol

/// The light in front of the simulated camera over time, as EV at ISO 100: constant for a studio,
/// keyframes for a sunset, any function for anything else. Time counts from when the module was
/// given the scene, on the module's clock, so a run on a test clock meters the same every time.
public struct SceneLight: Sendable {
    private let reading: @Sendable (Duration) -> ExposureStops
    /// Whether the light never changes, so nobody needs to look again.
    public let isConstant: Bool

    /// Light given by `reading` at each moment since the scene was set.
    public init(_ reading: @escaping @Sendable (Duration) -> ExposureStops) {
        self.reading = reading
        isConstant = false
    }

    private init(constant ev: ExposureStops) {
        reading = { _ in ev }
        isConstant = true
    }

    /// The same light all the time.
    public static func constant(_ ev: ExposureStops) -> SceneLight { SceneLight(constant: ev) }

    /// Light that moves in a straight line from each keyframe to the next, holding the first
    /// value before the first keyframe and the last one after the last.
    public static func keyframes(_ frames: [(at: Duration, ev: ExposureStops)]) -> SceneLight {
        let frames = frames.sorted { $0.at < $1.at }
        guard let first = frames.first else { return .constant(ExposureStops(twentyFourths: 0)) }
        if frames.count == 1 { return .constant(first.ev) }
        return SceneLight { elapsed in
            guard let next = frames.firstIndex(where: { $0.at > elapsed }) else { return frames[frames.count - 1].ev }
            guard next > 0 else { return first.ev }
            let (from, to) = (frames[next - 1], frames[next])
            let fraction = (elapsed - from.at) / (to.at - from.at)
            let change = Double(to.ev.twentyFourths - from.ev.twentyFourths) * fraction
            return ExposureStops(twentyFourths: from.ev.twentyFourths + Int32(change.rounded(.towardZero)))
        }
    }

    /// The meter reading `elapsed` after the scene was set.
    public func ev(at elapsed: Duration) -> ExposureStops { reading(elapsed) }
}
