import Foundation
import CameraKit
@testable import GPhoto2
import Testing

@Suite struct FilenameTemplateTests {
    let time = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func defaultKeepsTheCameraNameWithALowercaseSuffix() {
        #expect(FilenameTemplate.default.fileName(frame: nil, counter: 3, time: time, cameraFileName: "DSC_0042.JPG") == "DSC_0042.jpg")
    }

    @Test func codesAreReplaced() throws {
        let template = try FilenameTemplate(parsing: "run-%F-%n-%f.%C")
        #expect(template.fileName(frame: 7, counter: 12, time: time, cameraFileName: "IMG_1.CR2") == "run-0007-0012-IMG_1.cr2")
    }

    @Test func frameFallsBackToTheCounterOutsideARun() throws {
        let template = try FilenameTemplate(parsing: "%F.%C")
        #expect(template.fileName(frame: nil, counter: 5, time: time, cameraFileName: "a.jpg") == "0005.jpg")
    }

    @Test func timeIsLocalAndPercentIsLiteral() throws {
        let template = try FilenameTemplate(parsing: "%t_100%%")
        let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        let expected = String(format: "%04d%02d%02d-%02d%02d%02d_100%%", parts.year!, parts.month!, parts.day!,
                              parts.hour!, parts.minute!, parts.second!)
        #expect(template.fileName(frame: nil, counter: 1, time: time, cameraFileName: "x.jpg") == expected)
    }

    @Test func largeNumbersAreNotCut() throws {
        #expect(try FilenameTemplate(parsing: "%F").fileName(frame: 123_456, counter: 1, time: time, cameraFileName: "x") == "123456")
    }

    @Test func aCameraFileWithoutSuffixLeavesNoTrailingDot() {
        #expect(FilenameTemplate.default.fileName(frame: nil, counter: 1, time: time, cameraFileName: "capture") == "capture")
    }

    @Test(arguments: [
        ("%x.jpg", FilenameTemplateError.unknownCode("x", in: "%x.jpg")),
        ("frame%", .trailingPercent("frame%")),
        ("", .empty),
        ("a/%f", .containsSlash("a/%f")),
    ])
    func badTemplatesAreRefusedWithTheReason(text: String, error: FilenameTemplateError) {
        #expect(throws: error) { try FilenameTemplate(parsing: text) }
    }

    @Test func unknownCodeMessageListsTheCodes() {
        let message = FilenameTemplateError.unknownCode("x", in: "%x").description
        #expect(message.contains("%F") && message.contains("%C") && message.contains("'%x'"))
    }
}

@Suite struct PictureWriterTests {
    @Test func neverOverwritesAndCreatesTheFolder() throws {
        let folder = temporaryFolder() + "/nested"
        let first = try PictureWriter.write(Data([1]), folder: folder, name: "0001.jpg")
        let second = try PictureWriter.write(Data([2]), folder: folder, name: "0001.jpg")
        let third = try PictureWriter.write(Data([3]), folder: folder, name: "0001.jpg")
        #expect([first, second, third].map { ($0 as NSString).lastPathComponent } == ["0001.jpg", "0001-2.jpg", "0001-3.jpg"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == Data([1]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: third)) == Data([3]))
        // No temporary files are left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["0001-2.jpg", "0001-3.jpg", "0001.jpg"])
    }
}
