import CameraKit
import CommandCore
import Testing
import UnleashedAPI
import UnleashedProtocol

/// How a shot is told: a picture the camera reported, one confirmed from its counter, and a
/// trigger sent to a camera whose protocol never reports pictures.
struct ShotReportTests {
    @Test("a reported shot is taken; one over a protocol without feedback is sent, not confirmed, in text and JSON")
    func confirmedOrNot() throws {
        let reported = Shot(counter: 3, latency: .milliseconds(61))
        #expect(ShotReport.text(reported) == "Shot 3 taken, reported 61 ms after the trigger")
        #expect(ShotReport.json(reported).objectValue?["confirmed"] == .bool(true))
        let sent = Shot(counter: 1, latency: .milliseconds(21), confirmed: false)
        #expect(ShotReport.text(sent) == "Shot 1 sent, not confirmed: this camera's remote does not report pictures (the trigger was written in 21 ms)")
        #expect(!ShotReport.text(sent).contains("taken"))
        #expect(ShotReport.json(sent).objectValue?["confirmed"] == .bool(false))
        #expect(try Shot(json: sent.json) == sent)
    }
}
