import CameraKit
import Testing
import UnleashedKit

@Suite("Words in messages: counts and articles")
struct EnglishTextTests {
    @Test("a count takes the singular for one and the plural otherwise")
    func counting() {
        #expect(English.counting(1, "frame") == "1 frame")
        #expect(English.counting(0, "frame") == "0 frames")
        #expect(English.counting(UInt32(2140), "shot") == "2140 shots")
        #expect(English.counting(2, "body", plural: "bodies") == "2 bodies")
    }

    @Test("the article is the one the phrase is read with", arguments: [
        ("ISO value", "an ISO value"), ("shutter speed value", "a shutter speed value"), ("aperture value", "an aperture value"),
        ("exposure compensation value", "an exposure compensation value"), ("8ms exposure", "an 8ms exposure"),
        ("11s exposure", "an 11s exposure"), ("18ms gap", "an 18ms gap"), ("80ms gap", "an 80ms gap"), ("800ms gap", "an 800ms gap"),
        ("8000 pictures", "an 8000 pictures"), ("1m30s clip", "a 1m30s clip"), ("1s exposure", "a 1s exposure"),
        ("110ms gap", "a 110ms gap"), ("1/250 exposure", "a 1/250 exposure"), ("2s bulb exposure", "a 2s bulb exposure"),
        ("f/8 aperture", "an f/8 aperture"), ("SD card", "an SD card"), ("USB camera", "a USB camera"), ("unit", "a unit"),
        ("unknown body", "an unknown body"), ("hour", "an hour"), ("clip", "a clip"), ("bulb exposure", "a bulb exposure"),
    ])
    func article(phrase: String, expected: String) {
        #expect(English.withArticle(phrase) == expected)
    }
}
