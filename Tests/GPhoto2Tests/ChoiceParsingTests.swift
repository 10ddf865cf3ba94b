@testable import GPhoto2
import CameraKit
import Testing
import UnleashedProtocol

@Suite struct ChoiceParsingTests {
    func parse(_ text: String, _ setting: SettingID) -> String? {
        SettingWidgets.value(fromChoice: text, for: setting)?.text
    }

    @Test func isoChoices() {
        #expect(parse("800", .iso) == "800")
        #expect(parse("Auto", .iso) == "auto")
        #expect(parse("ISO 100", .iso) == "100")
        #expect(parse("Hi 1", .iso) == nil)
    }

    @Test func shutterChoicesInTheFormsDriversPrint() {
        #expect(parse("1/125", .shutterSpeed) == "1/125")
        #expect(parse("30", .shutterSpeed) == "30s")
        #expect(parse("0.3", .shutterSpeed) == "0.3s")
        #expect(parse("2.5\"", .shutterSpeed) == "2.5s")
        #expect(parse("Bulb", .shutterSpeed) == "bulb")
        #expect(parse("Time", .shutterSpeed) == nil)
    }

    @Test func genericPTPDecimalShutterSpeedsSnapToNominalOnes() {
        #expect(parse("0.0080s", .shutterSpeed) == "1/125")
        #expect(parse("0.0001s", .shutterSpeed) == "1/8000")
        #expect(parse("0.0166s", .shutterSpeed) == "1/60")
        #expect(parse("0.3000s", .shutterSpeed) == "0.3s")
        #expect(parse("0.3333s", .shutterSpeed) == "1/3")
        #expect(parse("30.0000s", .shutterSpeed) == "30s")
        #expect(parse("0.0000s", .shutterSpeed) == nil)
    }

    @Test func genericPTPAutoISO() {
        #expect(parse("65535", .iso) == "auto")
    }

    @Test func apertureChoices() {
        #expect(parse("f/5.6", .aperture) == "f/5.6")
        #expect(parse("8", .aperture) == "f/8")
        #expect(parse("implicit auto", .aperture) == nil)
    }

    @Test func compensationAsDecimalsOfTheExactValue() {
        #expect(parse("0.333", .exposureCompensation) == "+1/3")
        #expect(parse("-1.666", .exposureCompensation) == "-1 2/3")
        #expect(parse("0.5", .exposureCompensation) == "+1/2")
        #expect(parse("0", .exposureCompensation) == "0")
        #expect(parse("+1/3", .exposureCompensation) == "+1/3")
        #expect(parse("0.1", .exposureCompensation) == nil)
    }

    @Test func whiteBalanceWords() {
        let cases = ["Automatic": "auto", "Auto": "auto", "Daylight": "daylight", "Tungsten": "tungsten",
                     "Incandescent": "tungsten", "Fluorescent Lamp 1": "fluorescent", "Flash": "flash",
                     "Manual": "custom", "Preset manual 1": "custom", "Cloudy": "cloudy", "Shade": "shade",
                     "Color Temperature": "kelvin"]
        for (word, expected) in cases { #expect(parse(word, .whiteBalance) == expected, "\(word)") }
        #expect(parse("Underwater", .whiteBalance) == nil)
    }

    @Test func imageFormats() {
        let cases = ["JPEG Fine": "jpeg-fine", "JPEG Normal": "jpeg-normal", "JPEG Basic": "jpeg-normal",
                     "RAW": "raw", "NEF (Raw)": "raw", "RAW + JPEG": "raw+jpeg", "NEF+Fine": "raw+jpeg",
                     "RAW + Large Fine JPEG": "raw+jpeg", "Large Fine JPEG": "jpeg-fine", "Extra Fine": "jpeg-fine",
                     "Standard": "jpeg-normal", "JPEG": "jpeg-fine"]
        for (word, expected) in cases { #expect(parse(word, .imageFormat) == expected, "\(word)") }
        #expect(parse("TIFF", .imageFormat) == nil)
    }

    @Test func descriptorLeavesOutChoicesThatDoNotReadAndKeepsEachValueOnce() throws {
        let widget = Widget(path: "/main/imgsettings/whitebalance", label: "WB", kind: .radio, value: "Daylight",
                            choices: ["Automatic", "Daylight", "Fluorescent 1", "Fluorescent 2", "Underwater"])
        let descriptor = try #require(SettingWidgets.descriptor(.whiteBalance, from: widget))
        #expect(descriptor.value == .whiteBalance(.daylight))
        #expect(descriptor.choices == [.whiteBalance(.auto), .whiteBalance(.daylight), .whiteBalance(.fluorescent)])
        #expect(SettingWidgets.choice(for: .whiteBalance(.fluorescent), in: widget) == "Fluorescent 1")
    }

    @Test func firstPresentWidgetNameWins() {
        let widgets = [
            Widget(path: "/main/capturesettings/exposuretime", label: "", kind: .radio, value: "1/60"),
            Widget(path: "/main/capturesettings/shutterspeed2", label: "", kind: .radio, value: "1/60"),
        ]
        #expect(SettingWidgets.widget(for: .shutterSpeed, in: widgets)?.name == "shutterspeed2")
    }

    @Test func widgetsAreFoundByPathOrName() {
        let widget = Widget(path: "/main/imgsettings/iso", label: "ISO Speed", kind: .radio, value: "100")
        #expect(widget.isNamed("iso"))
        #expect(widget.isNamed("/main/imgsettings/iso"))
        #expect(widget.isNamed("/imgsettings/iso"))
        #expect(!widget.isNamed("/main/iso"))
    }

    @Test func batteryPercentages() {
        #expect(GPhoto2Camera.percentage("75%") == 75)
        #expect(GPhoto2Camera.percentage("100") == 100)
        #expect(GPhoto2Camera.percentage("Low") == nil)
    }
}
