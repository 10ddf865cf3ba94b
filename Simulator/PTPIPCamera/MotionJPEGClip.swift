import NIOCore

/// Wraps JPEG frames in an AVI file (RIFF, one Motion JPEG video stream, with an index), the
/// smallest container common players open; it stands for the clip a movie recording stores.
enum MotionJPEGClip {
    static func avi(frames: [[UInt8]], width: Int, height: Int, framesPerSecond: Int) -> [UInt8] {
        let largestFrame = UInt32(frames.map(\.count).max() ?? 0)
        var header = ByteBuffer()
        chunk("avih", in: &header) { avih in
            for value in [UInt32(1_000_000 / max(1, framesPerSecond)), largestFrame * UInt32(framesPerSecond), 0, 0x10,
                          UInt32(frames.count), 0, 1, largestFrame, UInt32(width), UInt32(height), 0, 0, 0, 0] {
                avih.writeLE(value)
            }
        }
        list("strl", in: &header) { strl in
            chunk("strh", in: &strl) { strh in
                strh.writeString("vids")
                strh.writeString("MJPG")
                for value: UInt32 in [0, 0, 0, 1, UInt32(framesPerSecond), 0, UInt32(frames.count), largestFrame, 0xFFFF_FFFF, 0] {
                    strh.writeLE(value)
                }
                for value in [0, 0, Int16(width), Int16(height)] { strh.writeLE(value) }
            }
            chunk("strf", in: &strl) { strf in
                strf.writeLE(UInt32(40))
                strf.writeLE(Int32(width))
                strf.writeLE(Int32(height))
                strf.writeLE(UInt16(1))
                strf.writeLE(UInt16(24))
                strf.writeString("MJPG")
                strf.writeLE(UInt32(width * height * 3))
                for _ in 0..<4 { strf.writeLE(UInt32(0)) }
            }
        }
        var index = ByteBuffer()
        var file = ByteBuffer()
        file.writeString("RIFF")
        let sizeAt = file.writerIndex
        file.writeLE(UInt32(0))
        file.writeString("AVI ")
        list("hdrl", in: &file) { $0.writeImmutableBuffer(header) }
        list("movi", in: &file) { movi in
            for frame in frames {
                index.writeString("00dc")
                index.writeLE(UInt32(0x10))  // a key frame
                index.writeLE(UInt32(movi.writerIndex + 4))  // from the "movi" tag
                index.writeLE(UInt32(frame.count))
                chunk("00dc", in: &movi) { $0.writeBytes(frame) }
            }
        }
        chunk("idx1", in: &file) { $0.writeImmutableBuffer(index) }
        file.setInteger(UInt32(file.writerIndex - 8), at: sizeAt, endianness: .little)
        return Array(file.readableBytesView)
    }

    /// A RIFF chunk: tag, length, contents, padded to an even length.
    private static func chunk(_ tag: String, in buffer: inout ByteBuffer, _ fill: (inout ByteBuffer) -> Void) {
        var contents = ByteBuffer()
        fill(&contents)
        buffer.writeString(tag)
        buffer.writeLE(UInt32(contents.readableBytes))
        buffer.writeImmutableBuffer(contents)
        if contents.readableBytes % 2 == 1 { buffer.writeInteger(UInt8(0)) }
    }

    /// A RIFF list: "LIST", length, its type, then its chunks.
    private static func list(_ type: String, in buffer: inout ByteBuffer, _ fill: (inout ByteBuffer) -> Void) {
        chunk("LIST", in: &buffer) { list in
            list.writeString(type)
            var contents = ByteBuffer()
            fill(&contents)
            list.writeImmutableBuffer(contents)
        }
    }
}
