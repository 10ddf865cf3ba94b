import CTurboJPEG
import Foundation

/// A small JPEG of a large one, through libturbojpeg: decoded at the smallest of its scales
/// (1/2, 1/4, 1/8) that is still at least the width asked for, so a 24-megapixel picture is
/// never decoded whole, and encoded again at quality 75.
enum JPEGThumbnail {
    /// The thumbnail of `jpeg`, or nil when it cannot be decoded.
    static func make(from jpeg: Data, atLeast width: Int) -> Data? {
        guard let decompressor = tjInitDecompress() else { return nil }
        defer { tjDestroy(decompressor) }
        return jpeg.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Data? in
            guard let source = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var fullWidth: Int32 = 0, fullHeight: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            guard tjDecompressHeader3(decompressor, source, UInt(raw.count), &fullWidth, &fullHeight, &subsampling, &colorspace) == 0,
                  fullWidth > 0, fullHeight > 0 else { return nil }
            var denominator: Int32 = 1
            while denominator < 8, Int(fullWidth / (denominator * 2)) >= width { denominator *= 2 }
            let scaledWidth = (fullWidth + denominator - 1) / denominator
            let scaledHeight = (fullHeight + denominator - 1) / denominator
            var pixels = [UInt8](repeating: 0, count: Int(scaledWidth) * Int(scaledHeight) * 3)
            let decoded = pixels.withUnsafeMutableBufferPointer { target in
                tjDecompress2(decompressor, source, UInt(raw.count), target.baseAddress, scaledWidth, 0, scaledHeight,
                              Int32(TJPF_RGB.rawValue), Int32(TJFLAG_FASTDCT))
            }
            guard decoded == 0 else { return nil }
            return encode(pixels, width: scaledWidth, height: scaledHeight)
        }
    }

    /// RGB pixels, three bytes each, row by row, as a JPEG of quality 75.
    static func encode(_ pixels: [UInt8], width: Int32, height: Int32) -> Data? {
        guard let compressor = tjInitCompress() else { return nil }
        defer { tjDestroy(compressor) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(compressor, source.baseAddress, width, 0, height, Int32(TJPF_RGB.rawValue), &output, &size,
                        Int32(TJSAMP_420.rawValue), 75, Int32(TJFLAG_FASTDCT))
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else { return nil }
        return Data(bytes: output, count: Int(size))
    }
}
