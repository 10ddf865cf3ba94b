import CTurboJPEG
import Foundation

/// How bright a picture came out, read from its JPEG (the camera's thumbnail, or the picture
/// itself). libgphoto2 gives no light reading that works across cameras, so the exposure ramp
/// meters on this backend by the pictures it takes, as deflicker tools do.
enum PictureMeter {
    /// The picture's brightness in stops from mid-grey: its median pixel, taken back through a
    /// 2.2 gamma to linear light, against 18 % grey. The median ignores small bright or dark
    /// areas (a lamp, a caption band) that would pull an average. A blown-out picture reads
    /// +2.5 stops at most and a black one about −17: such a reading only says which way to go.
    ///
    /// Nil when libturbojpeg cannot decode `jpeg`.
    static func brightness(jpeg: Data) -> Double? {
        guard let histogram = histogram(jpeg: jpeg) else { return nil }
        let total = histogram.reduce(0, +)
        guard total > 0 else { return nil }
        var seen = 0
        var median = 0
        for (level, count) in histogram.enumerated() {
            seen += count
            if seen * 2 >= total {
                median = level
                break
            }
        }
        let linear = pow(max(Double(median), 0.5) / 255, 2.2)
        return log2(linear / 0.18)
    }

    /// How many pixels have each grey level, decoded at the smallest scale no narrower than
    /// 160 pixels (a thumbnail decodes whole; a full-size JPEG at an eighth).
    private static func histogram(jpeg: Data) -> [Int]? {
        guard let decompressor = tjInitDecompress() else { return nil }
        defer { tjDestroy(decompressor) }
        return jpeg.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [Int]? in
            guard let source = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            guard tjDecompressHeader3(decompressor, source, UInt(raw.count), &width, &height, &subsampling, &colorspace) == 0,
                  width > 0, height > 0 else { return nil }
            var denominator: Int32 = 1
            while denominator < 8, width / (denominator * 2) >= 160 { denominator *= 2 }
            let scaledWidth = (width + denominator - 1) / denominator
            let scaledHeight = (height + denominator - 1) / denominator
            var pixels = [UInt8](repeating: 0, count: Int(scaledWidth) * Int(scaledHeight))
            let status = pixels.withUnsafeMutableBufferPointer { target in
                tjDecompress2(decompressor, source, UInt(raw.count), target.baseAddress, scaledWidth, 0, scaledHeight,
                              Int32(TJPF_GRAY.rawValue), Int32(TJFLAG_FASTDCT))
            }
            guard status == 0 else { return nil }
            var histogram = [Int](repeating: 0, count: 256)
            for pixel in pixels { histogram[Int(pixel)] += 1 }
            return histogram
        }
    }
}
