/// One field as it sits in a message: its tag and where its value bytes are.
struct RawField {
    let tag: UInt8
    let value: Range<Int>
}

/// Splits a field list into fields (PROTOCOL.md §5) without looking at their values.
///
/// Every length is checked against the bytes that are actually there before it is used.
func scanFields(_ bytes: [UInt8], in range: Range<Int>) throws(MessageDecodingError) -> [RawField] {
    var fields: [RawField] = []
    var offset = range.lowerBound
    while offset < range.upperBound {
        let tag = bytes[offset]
        let lengthOffset = offset + 1
        guard lengthOffset < range.upperBound else { throw .truncatedField(offset: offset) }
        var length = Int(bytes[lengthOffset])
        var valueStart = lengthOffset + 1
        if length >= 0x80 {
            guard valueStart < range.upperBound else { throw .truncatedField(offset: offset) }
            let high = bytes[valueStart]
            guard high != 0, high < 0x80 else { throw .invalidVarint(offset: lengthOffset) }
            length = (length & 0x7F) | Int(high) << 7
            valueStart += 1
        }
        guard length <= range.upperBound - valueStart else { throw .truncatedField(offset: offset) }
        fields.append(RawField(tag: tag, value: valueStart..<(valueStart + length)))
        offset = valueStart + length
    }
    return fields
}

/// Builds a field list in the wire format of PROTOCOL.md §5.
struct FieldWriter {
    var bytes: [UInt8] = []

    mutating func append(tag: UInt8, _ value: some Collection<UInt8>) {
        bytes.append(tag)
        appendLength(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func append<T: FixedWidthInteger>(tag: UInt8, integer value: T) {
        bytes.append(tag)
        bytes.append(UInt8(T.bitWidth / 8))
        appendBigEndian(value)
    }

    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        var shift = T.bitWidth - 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }

    private mutating func appendLength(_ length: Int) {
        if length < 0x80 {
            bytes.append(UInt8(length))
        } else {
            bytes.append(UInt8(length & 0x7F) | 0x80)
            bytes.append(UInt8(length >> 7))
        }
    }
}

/// Reads a big-endian integer from exactly `T.bitWidth / 8` bytes.
func readBigEndian<T: FixedWidthInteger>(_ bytes: [UInt8], _ range: Range<Int>, as: T.Type = T.self) -> T {
    var value: T = 0
    for index in range { value = value << 8 | T(truncatingIfNeeded: bytes[index]) }
    return value
}
