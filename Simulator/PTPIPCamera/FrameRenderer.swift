import CTurboJPEG
import Foundation

/// Draws the small JPEG a simulated capture stores: a grey scene whose brightness follows the
/// exposure, with a band of blocks spelling the frame number so that every frame differs.
struct FrameRenderer {
    static let width = 160
    static let height = 120

    /// A JPEG (starting FF D8) of frame `number` exposed `exposureStops` away from a correct
    /// exposure (positive is brighter); nil only if libturbojpeg fails.
    static func jpeg(frameNumber number: Int, exposureStops: Double) -> [UInt8]? {
        let pixels = rgbPixels(frameNumber: number, exposureStops: exposureStops)
        guard let compressor = tjInitCompress() else { return nil }
        defer { tjDestroy(compressor) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(compressor, source.baseAddress, Int32(width), Int32(width * 3), Int32(height), Int32(TJPF_RGB.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), 85, 0)
        }
        guard status == 0, let output else { return nil }
        defer { tjFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Mid-grey at a correct exposure, one stop brighter per stop over (a 2.2 gamma curve), a
    /// soft vertical gradient, and 16 blocks along the bottom showing the frame number in binary.
    static func rgbPixels(frameNumber number: Int, exposureStops: Double) -> [UInt8] {
        let linearGrey = 0.18 * pow(2, exposureStops)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let bandTop = height - 16
        for y in 0..<height {
            for x in 0..<width {
                let level: UInt8
                if y >= bandTop {
                    let bit = x / (width / 16)
                    level = (number >> (15 - bit)) & 1 == 1 ? 240 : 16
                } else {
                    let shade = linearGrey * (0.75 + 0.5 * Double(y) / Double(bandTop))
                    level = UInt8(clamping: Int((255 * gammaEncoded(shade)).rounded()))
                }
                let offset = (y * width + x) * 3
                pixels[offset] = level
                pixels[offset + 1] = level
                pixels[offset + 2] = level
            }
        }
        return pixels
    }

    private static func gammaEncoded(_ linear: Double) -> Double {
        linear <= 0 ? 0 : min(1, pow(linear, 1 / 2.2))
    }
}
